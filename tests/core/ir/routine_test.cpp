// Routine kernels (ir::Kernel::routine, px::routine): what a trace records, the JSON schema
// plexus-ir/2.2 (written only for a routine kernel and read back with it; `routine` in an older
// document refused with its path), print(), the validator's rules (the routine's parameters,
// no code of its own, a known name) and every code generator's refusal.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include "plexus/codegen.hpp"
#include "plexus/error.hpp"
#include "plexus/ir.hpp"
#include "plexus/kernel.hpp"

#include <nlohmann/json.hpp>
#include <string>

namespace px = plexus;
namespace ir = plexus::ir;
using json = nlohmann::json;

namespace {

const ir::Kernel& gemm_f16_routine() {
    static const auto k =
        px::kernel("vendor_gemm", {"a", "b", "c", "m", "n", "k", "ta", "tb"},
                   [](px::In<px::half>, px::In<px::half>, px::Out<float>, px::Int, px::Int, px::Int,
                      px::Int, px::Int) { px::routine("gemm_f16"); });
    return k.ir();
}

// The error message of f(), which must throw a plexus::Error of `code`.
template <class F> std::string error_of(px::ErrorCode code, F f) {
    try {
        f();
    } catch (const px::Error& e) {
        CHECK(e.code() == code);
        return e.what();
    }
    FAIL("no error");
    return "";
}

} // namespace

TEST_CASE("a routine kernel traces, round-trips through plexus-ir/2.2 and prints its routine") {
    const ir::Kernel& k = gemm_f16_routine();
    CHECK(k.routine == "gemm_f16");
    CHECK(ir::as<ir::Block>(k.body)->body.empty());
    const json doc = json::parse(ir::to_json(k));
    CHECK(doc["schema"] == "plexus-ir/2.2");
    CHECK(doc["routine"] == "gemm_f16");
    const ir::Kernel back = ir::from_json(ir::to_json(k));
    CHECK(back.routine == "gemm_f16");
    CHECK(back.hash() == k.hash());
    CHECK(ir::print(k).find("routine gemm_f16;") != std::string::npos);
    // A kernel that is no routine keeps its older schema, and `routine` needs /2.2.
    json old = doc;
    old["schema"] = "plexus-ir/2.1";
    CHECK(error_of(px::ErrorCode::InvalidIR, [&] { ir::from_json(old.dump()); }).find("routine") !=
          std::string::npos);
    old.erase("routine");
    CHECK(ir::from_json(old.dump()).routine.empty());
}

TEST_CASE("the validator holds a routine kernel to its routine's parameters and no code") {
    ir::Kernel k = gemm_f16_routine();
    ir::validate(k);
    ir::Kernel unknown = k;
    unknown.routine = "gemm_f64";
    CHECK(error_of(px::ErrorCode::InvalidKernel, [&] { ir::validate(unknown); })
              .find("unknown library routine 'gemm_f64' (plexus knows gemm_f32, gemm_tf32, "
                    "gemm_f16, gemm_bf16)") != std::string::npos);
    ir::Kernel wrong_type = k;
    wrong_type.params[1].type = ir::Type(ir::Scalar::BF16);
    CHECK(error_of(px::ErrorCode::InvalidKernel, [&] { ir::validate(wrong_type); })
              .find("parameter 'b' of routine gemm_f16 must be read buffer of f16") !=
          std::string::npos);
    ir::Kernel fewer = k;
    fewer.params.pop_back();
    CHECK(error_of(px::ErrorCode::InvalidKernel, [&] {
              ir::validate(fewer);
          }).find("takes 8 parameters, the kernel has 7") != std::string::npos);
    // Code beside px::routine is refused while tracing (the validator runs then).
    CHECK(error_of(px::ErrorCode::InvalidKernel, [&] {
              px::kernel("busy_gemm", {"a", "b", "c", "m", "n", "k", "ta", "tb"},
                         [](px::In<float>, px::In<float>, px::Out<float> c, px::Int, px::Int,
                            px::Int, px::Int, px::Int) {
                             px::routine("gemm_f32");
                             c[0] = 1.0f;
                         });
          }).find("has code of its own") != std::string::npos);
}

TEST_CASE("no code generator writes a routine kernel") {
    for (const px::codegen::Language& l : px::codegen::languages()) {
        if (!l.make) continue;
        CAPTURE(l.name);
        px::codegen::Options options;
        CHECK(error_of(px::ErrorCode::Unsupported, [&] {
                  l.make()->generate(gemm_f16_routine(), options);
              }).find("is the library routine gemm_f16") != std::string::npos);
    }
}
