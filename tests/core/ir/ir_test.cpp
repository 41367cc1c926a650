// The IR itself: JSON round trips of every sample kernel, the stability of hash(), print(),
// the checks of the node factories, and JSON reading errors that name the offending path.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include "kernels.hpp"
#include "plexus/error.hpp"
#include "plexus/ir.hpp"

#include <cmath>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

namespace px = plexus;
namespace ir = plexus::ir;
using ir::Scalar;
using json = nlohmann::json;

namespace {

const ir::Kernel& sample(const std::string& name) {
    const ir::Kernel* k = px::samples::find(name);
    REQUIRE_MESSAGE(k != nullptr, "no sample kernel named " << name);
    return *k;
}

// The textbook vector add (one element per work-item), traced each time it is called.
px::Kernel<px::In<float>, px::In<float>, px::Out<float>, px::Int>
add_kernel(const char* out_name = "c", bool minus = false) {
    return px::kernel("add", {"a", "b", out_name, "n"},
                      [minus](px::In<float> a, px::In<float> b, px::Out<float> c, px::Int n) {
                          px::Int i = px::global_id(0);
                          px::If(i < n, [&] { c[i] = minus ? a[i] - b[i] : a[i] + b[i]; });
                      });
}

// FNV-1a written out again, so that hash() is checked against its documented definition.
uint64_t fnv1a(const std::string& s) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (unsigned char c : s)
        h = (h ^ c) * 0x100000001b3ull;
    return h;
}

// Runs f, which must throw plexus::Error with `code`, and returns the error.
template <class F> px::Error expect_error(px::ErrorCode code, F&& f) {
    try {
        f();
    } catch (const px::Error& e) {
        INFO("message: " << e.what());
        CHECK(e.code() == code);
        return e;
    }
    FAIL("no plexus::Error was thrown");
    return px::Error(px::ErrorCode::Internal, "unreachable");
}

px::Error json_error(const json& doc, const std::string& origin = "kernel.json") {
    return expect_error(px::ErrorCode::InvalidIR, [&] { ir::from_json(doc.dump(), origin); });
}

ir::Expr i32(int64_t v) {
    return ir::Const::make_int(Scalar::I32, v);
}
ir::Expr f32(double v) {
    return ir::Const::make_float(Scalar::F32, v);
}

} // namespace

TEST_CASE("every sample kernel round-trips exactly through JSON") {
    REQUIRE(px::samples::names().size() >= 8);
    for (const std::string& name : px::samples::names()) {
        INFO("kernel " << name);
        const ir::Kernel& k = sample(name);
        std::string text = ir::to_json(k);
        ir::Kernel back = ir::from_json(text, name + ".json");
        CHECK(back.name == k.name);
        CHECK(back.params == k.params);
        CHECK(back.shared == k.shared);
        CHECK(ir::to_json(back) == text);
        CHECK(ir::canonical_json(back) == ir::canonical_json(k));
        CHECK(ir::print(back) == ir::print(k));
        CHECK(back.hash() == k.hash());
        // The read kernel is as valid as the traced one.
        CHECK_NOTHROW(ir::validate(back));
    }
}

TEST_CASE("asynchronous copies round-trip through JSON (schema plexus-ir/2)") {
    ir::Kernel k;
    k.name = "copies";
    k.params = {{"a", ir::Param::Kind::Buffer, Scalar::F16, ir::Access::Read}};
    k.shared = {{"t", Scalar::F16, 64}};
    k.body = ir::Block::make({ir::AsyncCopy::copy("t", i32(8), "a", i32(16), 8, i32(5)),
                              ir::AsyncCopy::commit(), ir::AsyncCopy::wait(3)});
    ir::validate(k);
    const std::string text = ir::to_json(k);
    CHECK(json::parse(text)["schema"] == "plexus-ir/2");
    const json copy = json::parse(text)["body"]["body"][0];
    CHECK(copy["op"] == "copy");
    CHECK(copy["count"] == 8);
    CHECK(copy["src_index"]["value"] == 16);
    CHECK(json::parse(text)["body"]["body"][2]["pending"] == 3);
    const ir::Kernel back = ir::from_json(text);
    CHECK(ir::to_json(back) == text);
    CHECK(ir::print(back) == ir::print(k));
    CHECK(ir::print(k).find("copy_async<8>(local t[8], global a[16], valid 5);") !=
          std::string::npos);
    CHECK_NOTHROW(ir::validate(back));
    json bad = json::parse(text);
    bad["body"]["body"][1]["op"] = "flush";
    CHECK(std::string(json_error(bad).what()).find("unknown async copy op \"flush\"") !=
          std::string::npos);
    bad = json::parse(text);
    bad["body"]["body"][0]["count"] = 17;
    CHECK(std::string(json_error(bad).what()).find("count") != std::string::npos);
}

TEST_CASE("special constants survive the round trip") {
    ir::Kernel k;
    k.name = "consts";
    k.params = {{"o", ir::Param::Kind::Buffer, Scalar::F32, ir::Access::Write},
                {"u", ir::Param::Kind::Buffer, Scalar::U64, ir::Access::Write}};
    const double inf = std::numeric_limits<double>::infinity();
    k.body = ir::Block::make({
        ir::Store::make("o", ir::Space::Global, i32(0), f32(NAN)),
        ir::Store::make("o", ir::Space::Global, i32(1), f32(inf)),
        ir::Store::make("o", ir::Space::Global, i32(2), f32(-inf)),
        ir::Store::make("o", ir::Space::Global, i32(3), f32(-0.5)),
        ir::Store::make("u", ir::Space::Global, i32(0),
                        ir::Const::make_int(Scalar::U64, int64_t(UINT64_MAX))),
    });
    std::string text = ir::to_json(k);
    ir::Kernel back = ir::from_json(text);
    CHECK(ir::to_json(back) == text);
    CHECK(back.hash() == k.hash());
    auto value = [&](size_t i) {
        return ir::as<ir::Const>(ir::as<ir::Store>(ir::as<ir::Block>(back.body)->body[i])->value);
    };
    CHECK(std::isnan(value(0)->f));
    CHECK(value(1)->f == inf);
    CHECK(value(2)->f == -inf);
    CHECK(value(3)->f == -0.5);
    CHECK(uint64_t(value(4)->i) == UINT64_MAX);
}

TEST_CASE("hash() is FNV-1a of the canonical JSON, stable, and tells kernels apart") {
    std::set<uint64_t> seen;
    for (const std::string& name : px::samples::names()) {
        INFO("kernel " << name);
        const ir::Kernel& k = sample(name);
        CHECK(k.hash() == k.hash());
        CHECK(k.hash() == fnv1a(ir::canonical_json(k)));
        CHECK(ir::canonical_json(k).find('\n') == std::string::npos);
        seen.insert(k.hash());
    }
    CHECK(seen.size() == px::samples::names().size());

    // A kernel traced again, separately, is the same kernel.
    auto first = add_kernel(), again = add_kernel();
    CHECK(again.ir().hash() == first.ir().hash());
    CHECK(ir::to_json(again.ir()) == ir::to_json(first.ir()));
    // One operator changed: another hash.
    CHECK(add_kernel("c", true).ir().hash() != first.ir().hash());
    // A parameter renamed: another hash.
    CHECK(add_kernel("out").ir().hash() != first.ir().hash());
}

TEST_CASE("print shows the signature, shared arrays and statements") {
    std::string va = ir::print(add_kernel().ir());
    INFO(va);
    CHECK(va.find(
              "kernel add(read global f32* a, read global f32* b, write global f32* c, i32 n) {") ==
          0);
    CHECK(va.find("i32 v0 = i32(global_id_x());") != std::string::npos);
    CHECK(va.find("if (v0 < n) {") != std::string::npos);
    CHECK(va.find("c[v0] = (a[v0] + b[v0]);") != std::string::npos);

    std::string red = ir::print(sample("reduce"));
    INFO(red);
    CHECK(red.find("local f32 shared0[1024];") != std::string::npos);
    CHECK(red.find("barrier();") != std::string::npos);
    CHECK(red.find("while ") != std::string::npos);
    CHECK(red.find(" ? ") != std::string::npos);
    CHECK(red.find("atomic_add_f32_global(&out[0l], ") != std::string::npos);

    CHECK(ir::print(ir::Binary::make(ir::BinaryOp::Max, i32(1), i32(2))) == "max(1, 2)");
    CHECK(ir::print(ir::Const::make_int(Scalar::U64, 7)) == "7ul");
    CHECK(ir::print(f32(2.0)) == "2.0f");
}

TEST_CASE("the node factories reject operands that do not fit") {
    auto invalid = [](auto f) { return expect_error(px::ErrorCode::InvalidKernel, f); };
    px::Error e = invalid([] { ir::Binary::make(ir::BinaryOp::Add, f32(1), i32(1)); });
    CHECK(e.message().find("different types") != std::string::npos);
    CHECK(e.message().find("f32") != std::string::npos);
    CHECK(e.message().find("i32") != std::string::npos);

    e = invalid([] { ir::If::make(i32(1), ir::Block::make({})); });
    CHECK(e.message().find("must be bool") != std::string::npos);

    e = invalid([] { ir::Load::make("a", ir::Space::Global, Scalar::F32, f32(0)); });
    CHECK(e.message().find("index into a") != std::string::npos);

    e = invalid([] { ir::Call::make("no_such_intrinsic", {}); });
    CHECK(e.message().find("unknown intrinsic 'no_such_intrinsic'") != std::string::npos);

    e = invalid([] { ir::Call::make("sqrt_f32", {i32(4)}); });
    CHECK(e.message().find("argument 0 of 'sqrt_f32' must be f32") != std::string::npos);
    e = invalid([] { ir::Call::make("sqrt_f32", {}); });
    CHECK(e.message().find("takes 1 arguments") != std::string::npos);

    e = invalid([] {
        ir::Atomic::make(ir::AtomicOp::CmpXchg, "a", ir::Space::Global, Scalar::I32, i32(0),
                         i32(1));
    });
    CHECK(e.message().find("compare-exchange needs a compare value") != std::string::npos);
    e = invalid([] {
        ir::Atomic::make(ir::AtomicOp::Add, "a", ir::Space::Global, Scalar::I32, i32(0), i32(1),
                         i32(2));
    });
    CHECK(e.message().find("only compare-exchange") != std::string::npos);

    invalid([] { ir::Binary::make(ir::BinaryOp::Shl, f32(1), f32(2)); });
    invalid([] { ir::Binary::make(ir::BinaryOp::LogicalAnd, i32(1), i32(2)); });
    invalid([] { ir::Select::make(ir::Const::make_bool(true), i32(1), f32(1)); });
    invalid([] { ir::Native::make({}, nullptr); });
    // The valid forms of the same nodes are accepted.
    CHECK(ir::Binary::make(ir::BinaryOp::Lt, i32(1), i32(2))->type == Scalar::Bool);
    CHECK(ir::Call::make("sqrt_f32", {f32(4)})->type == Scalar::F32);
    CHECK(ir::Atomic::make(ir::AtomicOp::CmpXchg, "a", ir::Space::Global, Scalar::I32, i32(0),
                           i32(1), i32(2))
              ->type == Scalar::I32);
}

TEST_CASE("every truncation of a kernel's JSON is an InvalidIR error, never a crash") {
    const std::string text = ir::to_json(sample("vector_add"));
    for (size_t n = 0; n < text.size(); ++n) {
        try {
            ir::from_json(std::string_view(text).substr(0, n), "cut.json");
            FAIL("a prefix of " << n << " characters was accepted");
        } catch (const px::Error& e) {
            if (e.code() != px::ErrorCode::InvalidIR || e.context().file != "cut.json")
                FAIL("prefix of " << n << ": " << px::to_string(e.code()) << " in '"
                                  << e.context().file << "': " << e.what());
        }
    }
    CHECK_NOTHROW(ir::from_json(text, "whole.json"));
}

TEST_CASE("JSON errors name the path of the offending value and the file") {
    const json good = json::parse(ir::to_json(add_kernel().ir()));
    // body[0] is `i32 v0 = i32(global_id_x())`, body[1] the `if`.
    REQUIRE(good["body"]["body"][0]["stmt"] == "Let");
    REQUIRE(good["body"]["body"][1]["stmt"] == "If");

    SUBCASE("unknown expression kind") {
        json d = good;
        d["body"]["body"][0]["init"]["expr"] = "Frobnicate";
        px::Error e = json_error(d, "/tmp/va.json");
        CHECK(e.context().json_path == "body.body[0].init.expr");
        CHECK(e.context().file == "/tmp/va.json");
        CHECK(e.context().kernel == "add");
        CHECK(e.message().find("Frobnicate") != std::string::npos);
    }
    SUBCASE("unknown statement kind") {
        json d = good;
        d["body"]["body"][1]["then"]["body"][0]["stmt"] = "Teleport";
        px::Error e = json_error(d);
        CHECK(e.context().json_path == "body.body[1].then.body[0].stmt");
        CHECK(e.context().file == "kernel.json");
        CHECK(e.message().find("Teleport") != std::string::npos);
    }
    SUBCASE("unknown key") {
        json d = good;
        d["body"]["body"][0]["colour"] = "blue";
        px::Error e = json_error(d);
        CHECK(e.context().json_path == "body.body[0].colour");
        CHECK(e.message().find("unknown key \"colour\"") != std::string::npos);
        d = good;
        d["params"][2]["extra"] = 1;
        CHECK(json_error(d).context().json_path == "params[2].extra");
    }
    SUBCASE("a field of the wrong type") {
        json d = good;
        d["params"][0]["name"] = 5;
        px::Error e = json_error(d);
        CHECK(e.context().json_path == "params[0].name");
        CHECK(e.message().find("expected a string") != std::string::npos);
        d = good;
        d["body"]["body"] = "none";
        CHECK(json_error(d).context().json_path == "body.body");
        d = good;
        d["body"]["body"][0]["type"] = "f16";
        CHECK(json_error(d).context().json_path == "body.body[0].type");
    }
    SUBCASE("a factory check becomes an error at the node's path") {
        json d = good;
        // if (v0 < n) with the comparison swapped for an addition: the condition is not bool.
        d["body"]["body"][1]["cond"]["op"] = "add";
        d["body"]["body"][1]["cond"]["type"] = "i32";
        px::Error e = json_error(d);
        CHECK(e.context().json_path == "body.body[1]");
        CHECK(e.message().find("must be bool") != std::string::npos);
    }
    SUBCASE("a declared type that is not the node's") {
        json d = good;
        d["body"]["body"][0]["type"] = "f32";
        px::Error e = json_error(d);
        CHECK(e.context().json_path == "body.body[0].type");
    }
    SUBCASE("schema and missing keys") {
        json d = good;
        d["schema"] = "plexus-ir/0";
        CHECK(json_error(d).context().json_path == "schema");
        d = good;
        d.erase("shared");
        CHECK(json_error(d).message().find("missing key \"shared\"") != std::string::npos);
        px::Error e =
            expect_error(px::ErrorCode::InvalidIR, [] { ir::from_json("[1, 2]", "list.json"); });
        CHECK(e.context().file == "list.json");
    }
}
