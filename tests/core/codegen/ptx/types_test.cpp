// PTX of the newer types (the kernels of tests/core/codegen/host/type_kernels.hpp, which the host
// tests run): ptxas accepts every one for sm_80 and sm_90, vectors move as one wide access, f16 and
// bf16 convert with cvt where the GPU has it and with integer code below, a scalar f16 argument is
// its 2 bytes.
#include "core/codegen/host/type_kernels.hpp"
#include "ptx_check.hpp"

#include <regex>

#if PLEXUS_TEST_HAVE_LLVM

using namespace ptxtest;

TEST_CASE("every kernel of the newer types assembles for sm_80 and sm_90") {
    for (const auto& [name, kernel] : typek::all()) {
        for (const char* arch : {"sm_80", "sm_90"}) {
            INFO(name, " ", arch);
            const std::string ptx = generate(*kernel, arch);
            CHECK(has(ptx, ".visible .entry " + name + "("));
            check_assembles(name, ptx, arch);
        }
    }
}

TEST_CASE("Vec<float, 4>: one ld.global.v4.f32 per operand and one st.global.v4.f32") {
    for (const char* arch : {"sm_80", "sm_90"}) {
        const std::string ptx = generate(typek::vector_add4(), arch);
        INFO(arch, "\n", ptx);
        CHECK(count(ptx, std::regex(R"(ld\.global\.v4\.f32\s)")) == 2);
        CHECK(count(ptx, std::regex(R"(st\.global\.v4\.f32\s)")) == 1);
        CHECK(count(ptx, std::regex(R"(\bld\.global\.f32\s)")) == 0);
        CHECK(count(ptx, std::regex(R"(\badd\.rn\.f32\s)")) == 4);
    }
}

TEST_CASE("3-lane vectors load and store as 4 lanes, 8-lane vectors in 16-byte pieces") {
    const std::string ptx = generate(typek::vector_ops());
    CHECK(has(ptx, "ld.global.v4.f32"));  // f32x3 operands
    CHECK(has(ptx, "ld.global.v4.u32"));  // i32x4 operands
    CHECK(!has(ptx, "ld.global.v2.f32")); // never a 3-lane vector split into 2 + 1
}

TEST_CASE("f16: cvt.rn.f16.f32 rounds, cvt.f32.f16 widens; a scalar f16 parameter is 2 bytes") {
    // (Arithmetic may not show them: LLVM narrows an f32 operation rounded to f16 into the
    // GPU's own add.rn.f16, which is the same correctly rounded result.)
    for (const char* arch : {"sm_80", "sm_90"}) {
        const std::string convert = generate(typek::half_convert(plexus::ir::Scalar::F16), arch);
        INFO(arch, "\n", convert);
        CHECK(has(convert, "cvt.rn.f16.f32"));
        CHECK(has(convert, "cvt.f32.f16"));
        const std::string arith = generate(typek::half_arith(plexus::ir::Scalar::F16), arch);
        CHECK(std::regex_search(arith, std::regex(R"(\.param \.u16 half_arith_f16_param_3)")));
    }
}

TEST_CASE(
    "bf16: cvt.rn.bf16.f32 from sm_80 on, integer code below (sm_75), both accepted by ptxas") {
    const auto& k = typek::half_convert(plexus::ir::Scalar::BF16);
    for (const char* arch : {"sm_80", "sm_90"}) {
        const std::string ptx = generate(k, arch);
        INFO(arch);
        CHECK(has(ptx, "cvt.rn.bf16.f32"));
    }
    const std::string old = generate(k, "sm_75");
    CHECK_FALSE(has(old, ".bf16"));
    CHECK(has(old, "cvt.rn.f16.f32")); // bf16 to f16 still converts with cvt
    check_assembles(k.name, old, "sm_75");
    const std::string arith = generate(typek::half_arith(plexus::ir::Scalar::BF16), "sm_75");
    CHECK_FALSE(has(arith, ".bf16"));
    check_assembles("half_arith_bf16", arith, "sm_75");
}

TEST_CASE("a field of a buffer element loads that field alone") {
    const std::string ptx = generate(typek::record_fields());
    INFO(ptx);
    // mass and vel.y: two 4-byte loads, none of the rest of the 48-byte Particle.
    CHECK(count(ptx, std::regex(R"(\bld\.global\.[a-z0-9.]+\s)")) == 2);
    CHECK(count(ptx, std::regex(R"(\bld\.global\.f32\s)")) == 2);
}

#endif
