// Conventions of the OpenCL C and CUDA C generators for the new types that the golden files
// show only in passing: renamed record, member and case names, the f16 forms, Match as an
// if-chain, layout checks, shaped arrays, narrow literals, helpers only where used.
#include "host_types.hpp"
#include "ir_build.hpp"
#include "kernels.hpp"

#include "plexus/codegen.hpp"

#include <doctest/doctest.h>

#include <cstddef>

namespace {

using namespace codegen_test::build;
using ir::Access;
using ir::Space;
using ir::TypeDecl;

std::string ocl(const ir::Kernel& k) {
    return plexus::codegen::make_opencl_codegen()->generate(k, {"opencl", {}, ""});
}
std::string cuda(const ir::Kernel& k) {
    return plexus::codegen::make_cuda_c_codegen()->generate(k, {"cuda", {}, ""});
}
bool has(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

} // namespace

TEST_CASE("record, member and case names that a language reserves are renamed, and types named "
          "like variables") {
    // A record named like an OpenCL vector type, with members named like keywords and one
    // with the implementation's prefix; a variant with a case named `switch`; a record named
    // like a variable of the kernel.
    const Type rec = Type::aggregate(
        TypeDecl::make_record("float4", {{"int", Scalar::I32}, {"__x", Scalar::F32}}));
    const Type var_named = Type::aggregate(TypeDecl::make_record("p", {{"a", Scalar::I32}}));
    const Type kind =
        Type::aggregate(TypeDecl::make_variant("K", {{"switch", Scalar::I32}, {"none", {}}}));
    auto k =
        make("names",
             {buffer("out", rec, Access::Write), buffer("ks", kind, Access::Write),
              buffer("ps", var_named, Access::Write)},
             {},
             {let("p", construct(var_named, {i32(3)})),
              gstore("out", i32(0), construct(rec, {field(var("p", var_named), 0), f32(1.0f)})),
              gstore("ks", i32(0), make_variant(kind, 0, i32(5))),
              gstore("ps", i32(0), var("p", var_named))});
    const std::string cl = ocl(k), cu = cuda(k);
    CHECK(has(cl, "typedef struct plx_t_float4 {\n    int plx_u_int;\n    float plx_u___x;\n} "
                  "plx_t_float4;"));
    CHECK(has(cl, "typedef struct plx_t_p {"));
    CHECK(has(cl, "plx_t_p p = (plx_t_p){3};"));
    CHECK(has(cl, "out[0] = (plx_t_float4){p.a, 1.0f};"));
    CHECK(has(cl, "        int plx_u_switch;\n"));
    CHECK(has(cl, "ks[0] = (K){0u, {.plx_u_switch = 5}};"));
    CHECK(has(cu, "struct plx_t_float4 {\n    int plx_u_int;"));
    CHECK(has(cu, "static __device__ K plx_make_switch(int p) {"));
    CHECK(has(cu, "ks[0] = K::plx_make_switch(5);"));
}

TEST_CASE(
    "f16 and bf16: bits in memory and parameters, floats in registers, every result rounded") {
    auto k = make(
        "halves",
        {buffer("o", Scalar::F16, Access::Write), scalar("h", Scalar::F16),
         scalar("b", Scalar::BF16)},
        {},
        {gstore("o", i32(0),
                bin(B::Add, var("h", Scalar::F16), cast(Scalar::F16, var("b", Scalar::BF16))))});
    const std::string cl = ocl(k), cu = cuda(k);
    INFO(cl << cu);
    CHECK(has(cl,
              "__kernel void halves(__global ushort* o, ushort plx_arg_h, ushort plx_arg_b) {\n"
              "    float h = plx_from_f16(plx_arg_h);\n    float b = plx_from_bf16(plx_arg_b);\n"));
    // The store converts the unrounded sum: its bits are those of the rounded one.
    CHECK(has(cl, "o[0] = plx_to_f16(h + plx_round_f16(b));"));
    CHECK(has(cu, "    unsigned short plx_arg_h,\n    unsigned short plx_arg_b) {\n"));
    CHECK(!has(cl, "cl_khr_fp16"));
    CHECK(!has(cu, "#include"));
}

TEST_CASE("match is an if / else-if chain on the tag, its value evaluated once") {
    const Type kind = codegen_test::kind_type();
    auto k = make("matches",
                  {buffer("ks", kind, Access::Read), buffer("o", Scalar::I32, Access::Write)}, {},
                  {for_("i", i32(0), i32(4),
                        {ir::Match::make(gload("ks", kind, var("i", Scalar::I32)),
                                         {{0, "", block({ir::Break::make()})},
                                          {1, "q", block({gstore("o", i32(0), i32(1))})}},
                                         block({ir::Continue::make()}))})});
    for (const std::string& text : {ocl(k), cuda(k)}) {
        INFO(text);
        CHECK(!has(text, "switch"));
        CHECK(has(text, "plx_match_0 = ks[i];\n"));
        CHECK(has(text, "if (plx_match_0.tag == 0u) {\n            break;\n        } else if "
                        "(plx_match_0.tag == 1u) {"));
        CHECK(has(text, " q = plx_from_f16(plx_match_0.u.charged);\n"));
        CHECK(has(text, "} else {\n            continue;\n        }"));
    }
}

TEST_CASE("CUDA C records and variants carry static_asserts of the IR's layout") {
    const std::string cu = cuda(codegen_test::records());
    CHECK(has(cu, "static_assert(sizeof(Particle) == 48 && alignof(Particle) == 16, \"Particle: "
                  "the IR's size and alignment\");"));
    CHECK(
        has(cu, "#ifndef __CUDACC_RTC__\nstatic_assert(__builtin_offsetof(Particle, pos) == 0 &&"));
    CHECK(has(
        cu,
        "__builtin_offsetof(Particle, charge) == 36, \"Particle: the IR's offsets\");\n#endif\n"));
    const std::string variants = cuda(codegen_test::variants());
    CHECK(has(variants, "static_assert(sizeof(Kind) == 32 && alignof(Kind) == 16"));
    CHECK(has(variants, "__builtin_offsetof(Kind, u) == 16"));
    CHECK(!has(ocl(codegen_test::records()), "static_assert")); // OpenCL C 1.2 has none
}

TEST_CASE(
    "arrays: private arrays in the kernel, a shaped shared array with its shape as a comment") {
    const std::string cl = ocl(codegen_test::arrays()), cu = cuda(codegen_test::arrays());
    CHECK(has(cl, "    __local float tile[72]; // [8][8] pad 1\n    __private int vals[6];\n"
                  "    __private ushort hs[4];\n    __private float4 acc[2];\n"));
    CHECK(has(cu, "    __shared__ float tile[72]; // [8][8] pad 1\n    int vals[6];\n"
                  "    unsigned short hs[4];\n    plx_float4 acc[2];\n"));
    CHECK(has(cl, "acc[1].z = tin[gid] * 2.0f;"));
    CHECK(has(cu, "acc[1].v[2] = __fmul_rn(tin[gid], 2.0f);"));
}

TEST_CASE("narrow integer literals are casts of int literals of exactly the type") {
    auto k =
        make("narrow",
             {buffer("o", Scalar::I8, Access::Write), buffer("u", Scalar::U16, Access::Write)}, {},
             {gstore("o", i32(0), int_const(Scalar::I8, -128)),
              gstore("u", i32(0), int_const(Scalar::U16, 65535))});
    CHECK(has(ocl(k), "o[0] = (char)(-128);\n    u[0] = (ushort)65535;"));
    CHECK(has(cuda(k), "o[0] = (signed char)(-128);\n    u[0] = (unsigned short)65535;"));
}

TEST_CASE("a float product is never contracted with an addition into an fma") {
    // docs/kernel-language.md: fma is explicit, every other operation rounds on its own.
    const std::string cl = ocl(codegen_test::matmul_tiled()),
                      cu = cuda(codegen_test::matmul_tiled());
    CHECK(cl.rfind("#pragma OPENCL FP_CONTRACT OFF\n", cl.find("__kernel")) != std::string::npos);
    CHECK(has(
        cu, "acc = acc + __fmul_rn(ta[(ty * 16u) + (unsigned)k], tb[((unsigned)k * 16u) + tx]);"));
    CHECK(has(cuda(codegen_test::math_f64()), "__dmul_rn("));
    CHECK(has(cuda(codegen_test::vectors()), "PLX_VEC_LANES(operator*, plx_lane_mul(x, y))"));
    CHECK(!has(ocl(codegen_test::histogram()), "FP_CONTRACT")); // no float product there
}

TEST_CASE("helper types and functions appear only in kernels that use them") {
    for (auto& k : {codegen_test::vector_add(), codegen_test::int_ops()}) {
        const std::string cu = cuda(k), cl = ocl(k);
        CHECK(!has(cu, "plx_vec"));
        CHECK(!has(cu, "plx_to_f16"));
        CHECK(!has(cl, "plx_to_f16"));
    }
    const std::string cu = cuda(codegen_test::half_ops());
    CHECK(has(cu, "plx_to_bf16"));
    CHECK(!has(cu, "plx_vec")); // no vector in that kernel
}

// What the run tests' buffers exchange depends on the host structs having the IR's layout.
TEST_CASE("the run tests' host structs have the layout of the IR's records and variant") {
    using namespace codegen_test;
    auto check = [](const Type& t, size_t size, size_t align, std::vector<uint64_t> offsets) {
        const TypeDecl& d = *t.decl();
        INFO(d.name);
        CHECK(d.size == size);
        CHECK(d.align == align);
        if (d.kind == TypeDecl::Kind::Record)
            CHECK(d.offsets == offsets);
        else
            CHECK(d.payload_offset == offsets.at(0));
    };
    check(particle_type(), sizeof(Particle), alignof(Particle),
          {offsetof(Particle, pos), offsetof(Particle, vel), offsetof(Particle, mass),
           offsetof(Particle, charge)});
    check(cell_type(), sizeof(Cell), alignof(Cell),
          {offsetof(Cell, p), offsetof(Cell, id), offsetof(Cell, h), offsetof(Cell, flag)});
    check(pair_type(), sizeof(Pair), alignof(Pair), {offsetof(Pair, a), offsetof(Pair, s)});
    check(kind_type(), sizeof(Kind), alignof(Kind), {offsetof(Kind, payload)});
}

TEST_CASE("a declared work-group size reaches the C-like languages") {
    ir::Kernel k = codegen_test::vector_add();
    CHECK(has(ocl(k), "__kernel void vector_add("));
    CHECK(has(cuda(k), "extern \"C\" __global__ void vector_add("));

    k.work_group.required = {16, 4, 1};
    CHECK(has(ocl(k), "__kernel __attribute__((reqd_work_group_size(16, 4, 1))) void vector_add("));
    // CUDA: a bound only above 256 work-items, where it decides whether a launch fits.
    CHECK(has(cuda(k), "extern \"C\" __global__ void vector_add("));
    k.work_group.required = {32, 16, 1};
    CHECK(has(cuda(k), "__global__ void __launch_bounds__(512) vector_add("));

    k.work_group = {};
    k.work_group.max = 1024;
    // OpenCL C has no attribute that bounds the size; the runtime enforces it.
    CHECK(has(ocl(k), "__kernel void vector_add("));
    CHECK(has(cuda(k), "__global__ void __launch_bounds__(1024) vector_add("));
}
