// Tests of make_ptx_codegen(): the PTX of each test kernel has the expected entry, shared
// memory, barriers and atomics, and NVIDIA's ptxas assembles it for sm_80 and sm_90.
// Run with PLEXUS_LIBDEVICE=none the math checks expect the path without libdevice.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include "kernels.hpp"
#include "ptx_check.hpp"

#include "codegen/cuda_shared.hpp" // what the CUDA generators do with large shared arrays
#include "plexus/catalog.hpp"
#include "plexus/codegen.hpp"
#include "plexus/error.hpp"

#include <chrono>
#include <cstdlib>
#include <regex>
#include <thread>

using namespace plexus;
using ptxtest::Kernel;

namespace {

using ptxtest::check_assembles;
using ptxtest::count;
using ptxtest::generate;
using ptxtest::has;
using ptxtest::ptxas;
using ptxtest::without_libdevice;

template <class F> ErrorCode error_of(F&& f, std::string& message) {
    try {
        f();
    } catch (const Error& e) {
        message = e.what();
        return e.code();
    }
    FAIL("no plexus::Error was thrown");
    return ErrorCode::Internal;
}

} // namespace

#if PLEXUS_TEST_HAVE_LLVM

TEST_CASE("every test kernel assembles with ptxas for sm_80 and sm_90") {
    if (ptxas.empty()) MESSAGE("ptxas not found at configure time: checking PTX text only");
    for (const auto& [name, kernel] : ptxtest::all_kernels()) {
        if (without_libdevice() && (name == "math_f64" || name == "math_each_f64"))
            continue; // needs libdevice: see below
        for (const char* arch : {"sm_80", "sm_90"}) {
            const std::string ptx = generate(kernel, arch);
            INFO(name, " ", arch);
            CHECK(has(ptx, ".visible .entry " + name + "("));
            CHECK(has(ptx, std::string(".target ") + arch));
            CHECK(has(ptx, ".address_size 64"));
            CHECK_FALSE(has(ptx, ".extern")); // libdevice linked, nothing left unresolved
            check_assembles(name, ptx, arch);
        }
    }
}

TEST_CASE("PTX ISA version and target follow the architecture") {
    const Kernel k = ptxtest::vector_add();
    CHECK(has(generate(k, ""), ".version 7.0\n.target sm_80"));
    CHECK(has(generate(k, "sm_90"), ".version 7.8\n.target sm_90\n"));
    CHECK(has(generate(k, "sm_90a"), ".version 8.0\n.target sm_90a"));
    CHECK(has(generate(k, "sm_75"), ".version 6.3\n.target sm_75"));
    CHECK(has(generate(k, "sm_86"), ".version 7.1\n.target sm_86"));
    // Newer than LLVM 19 knows: sm_90 PTX, which the driver compiles for the newer GPU.
    CHECK(has(generate(k, "sm_120"), ".target sm_90\n"));
    std::string message;
    CHECK(error_of([&] { generate(k, "gfx90a"); }, message) == ErrorCode::InvalidArgument);
    CHECK(has(message, "'gfx90a'"));
    CHECK(error_of([&] { generate(k, "sm_35"); }, message) == ErrorCode::InvalidArgument);
    CHECK(has(message, "older"));
    if (!ptxas.empty()) check_assembles("vector_add", generate(k, "sm_75"), "sm_75");
}

TEST_CASE("vector_add: parameters in IR order, IEEE arithmetic") {
    const std::string ptx = generate(ptxtest::vector_add());
    // Buffers are 64-bit global pointers, scalars by value, in the kernel's order.
    const std::regex params(R"(\.param \.(u64|u32) vector_add_param_(\d))");
    std::vector<std::string> kinds;
    for (auto it = std::sregex_iterator(ptx.begin(), ptx.end(), params);
         it != std::sregex_iterator(); ++it)
        kinds.push_back((*it)[1].str() + (*it)[2].str());
    CHECK(kinds == std::vector<std::string>{"u640", "u641", "u642", "u323"});
    CHECK(has(ptx, "add.rn.f32")); // .rn: ptxas may not fuse it with anything
    CHECK(has(ptx, "%ctaid.x"));
    CHECK(has(ptx, "%ntid.x"));
    CHECK(has(ptx, "%tid.x"));
    CHECK(has(ptx, "st.global.f32"));
}

TEST_CASE(
    "a declared work-group size above 256 becomes .reqntid or .maxntid, and ptxas accepts it") {
    Kernel required = ptxtest::vector_add();
    required.work_group.required = {32, 16, 1};
    const std::string req = generate(required);
    CHECK(has(req, ".reqntid 32, 16, 1"));
    CHECK_FALSE(has(req, ".maxntid"));
    check_assembles("vector_add_reqntid", req, "sm_90");

    Kernel bounded = ptxtest::vector_add();
    bounded.work_group.max = 1024;
    const std::string max = generate(bounded);
    CHECK(has(max, ".maxntid 1024, 1, 1"));
    CHECK_FALSE(has(max, ".reqntid"));
    check_assembles("vector_add_maxntid", max, "sm_90");

    // Up to 256 work-items every group launches whatever ptxas does: no hint (it slowed
    // matmul_tiled), nor without a declared size.
    Kernel small = ptxtest::vector_add();
    small.work_group.required = {256, 1, 1};
    CHECK_FALSE(has(generate(small), "ntid "));
    small.work_group = {};
    small.work_group.max = 256;
    CHECK_FALSE(has(generate(small), "ntid "));
    CHECK_FALSE(has(generate(ptxtest::vector_add()), "ntid "));

    // Groups per multiprocessor asked for: the bound at any size, with .minnctapersm.
    small.work_group.min_groups = 2;
    const std::string two = generate(small);
    CHECK(has(two, ".maxntid 256, 1, 1"));
    CHECK(has(two, ".minnctapersm 2"));
    check_assembles("vector_add_minnctapersm", two, "sm_90");
}

TEST_CASE("reduction: static shared array, barriers, f32 atomic add") {
    const std::string ptx = generate(ptxtest::reduce_sum());
    CHECK(has(ptx, ".shared .align 16 .b8 partial[1024];"));
    CHECK(count(ptx, std::regex(R"(bar\.sync\s+0;)")) >= 2);
    CHECK(has(ptx, "atom.global.add.f32"));
    CHECK(has(ptx, "ld.shared.f32"));
    CHECK(has(ptx, "st.shared.f32"));
}

TEST_CASE("shared arrays past 48 KiB: parts of one dynamic shared array, which ptxas assembles") {
    // CUDA caps static shared memory at 48 KiB: up to it the arrays stay static, past it they
    // are carved out of the extern array the launch sizes (codegen::cuda_dynamic_shared).
    Kernel k = ptxtest::reduce_sum(); // partial: 256 floats, of which more are declared below
    REQUIRE(k.shared.size() == 1);
    k.shared[0].count = uint32_t(codegen::cuda_static_shared_limit / 4);
    CHECK(codegen::cuda_dynamic_shared(k).bytes == 0);
    CHECK(has(generate(k), ".shared .align 16 .b8 partial[49152];"));
    k.shared[0].count += 1;
    k.shared.push_back({"second", ir::Scalar::F64, 3});
    const codegen::CudaDynamicShared dynamic = codegen::cuda_dynamic_shared(k);
    CHECK(dynamic.offsets == std::vector<uint64_t>{0, 49280}); // 49156 bytes, then 128-byte aligned
    CHECK(dynamic.bytes == 49280 + 24);
    for (const char* arch : {"sm_80", "sm_90"}) {
        const std::string ptx = generate(k, arch);
        INFO(arch, "\n", ptx);
        CHECK(has(ptx, ".extern .shared .align 128 .b8 plx_dynamic_shared[];"));
        CHECK_FALSE(has(ptx, "partial["));
        CHECK(has(ptx, "ld.shared.f32"));
        CHECK(has(ptx, "st.shared.f32"));
        check_assembles("reduce_sum_dynamic_shared", ptx, arch);
    }
}

TEST_CASE("tiled matmul: two shared tiles and barriers in the tile loop") {
    const std::string ptx = generate(ptxtest::matmul_tiled());
    CHECK(has(ptx, ".shared .align 16 .b8 ta[1024];"));
    CHECK(has(ptx, ".shared .align 16 .b8 tb[1024];"));
    CHECK(count(ptx, std::regex(R"(bar\.sync\s+0;)")) >= 2);
    CHECK(has(ptx, "%tid.y"));
    CHECK(has(ptx, "%ctaid.y"));
    CHECK_FALSE(has(ptx, "fma.rn.f32")); // a*b+c is not contracted
}

TEST_CASE("histogram: u32 atomics on global memory") {
    const std::string ptx = generate(ptxtest::histogram());
    CHECK(has(ptx, "atom.global.add.u32"));
    CHECK(has(ptx, "rem.u32"));
}

TEST_CASE("64-bit atomics: i64 min/max, u64 add/xor, cmpxchg, exchange, shared add") {
    const std::string ptx = generate(ptxtest::atomics64());
    for (const char* op : {"atom.global.min.s64", "atom.global.max.s64", "atom.global.add.u64",
                           "atom.global.xor.b64", "atom.global.cas.b64", "atom.global.exch.b64",
                           "atom.shared.add.u64"})
        CHECK_MESSAGE(has(ptx, op), std::string(op));
}

TEST_CASE("every catalog atomic becomes one atom instruction") {
    size_t atomics = 0;
    for (const auto& info : intrinsic_catalog())
        atomics += info.name.rfind("atomic_", 0) == 0;
    const std::string ptx = generate(ptxtest::atomics_all());
    CHECK(count(ptx, std::regex(R"(\batom\.(global|shared)\.)")) == atomics);
    CHECK(has(ptx, "atom.shared.add.f32"));
    CHECK(has(ptx, "atom.global.min.u32"));
    CHECK(has(ptx, "atom.shared.min.s32"));
    CHECK(has(ptx, "atom.shared.cas.b64"));
}

TEST_CASE("float atomics: f64 add is one atom.add.f64, min / max compare-exchange loops") {
    const std::string ptx = generate(ptxtest::float_atomics());
    for (const char* op : {"atom.global.add.f64", "atom.shared.add.f64", "atom.global.cas.b32",
                           "atom.global.cas.b64", "atom.shared.cas.b32", "atom.shared.cas.b64",
                           "min.f32", "max.f32", "min.f64", "max.f64"})
        CHECK_MESSAGE(has(ptx, op), std::string(op));
    // PTX has no float atomic min / max on sm_80: each is a loop around one compare-exchange.
    CHECK(count(ptx, std::regex(R"(\batom\.(global|shared)\.cas\.b(32|64))")) == 8);
    CHECK(count(ptx, std::regex(R"(\batom\.(global|shared)\.add\.f64)")) == 3);
}

TEST_CASE("math intrinsics: libdevice, or the approximations without it") {
    const std::string f32 = generate(ptxtest::math(ir::Scalar::F32));
    CHECK(has(f32, "sqrt.rn.f32"));
    CHECK(has(f32, "abs.f32"));
    CHECK(has(f32, "cvt.rmi.f32.f32")); // floor
    CHECK(has(f32, "cvt.rpi.f32.f32")); // ceil
    CHECK(has(f32, "fma.rn.f32"));
    CHECK(has(f32, "min.f32"));
    CHECK(has(f32, "max.f32"));
    std::string message;
    if (without_libdevice()) {
        for (const char* op : {"sin.approx.f32", "cos.approx.f32", "ex2.approx.f32",
                               "lg2.approx.f32", "rsqrt.approx.f32"})
            CHECK_MESSAGE(has(f32, op), std::string(op));
        CHECK(error_of([] { generate(ptxtest::math(ir::Scalar::F64)); }, message) ==
              ErrorCode::Unsupported);
        CHECK(std::regex_search(message, std::regex(R"('\w+_f64' needs libdevice)")));
        // The rest of the library (libm.def) has no approximation: refused by name.
        CHECK(error_of([] { generate(ptxtest::one_call_f32("erf_f32")); }, message) ==
              ErrorCode::Unsupported);
        CHECK(std::regex_search(message, std::regex(R"('erf_f32' needs libdevice)")));
    } else {
        // libdevice's sinf is accurate over the whole range: no special-function-unit sine.
        CHECK_FALSE(has(f32, "sin.approx.f32"));
        const std::string f64 = generate(ptxtest::math(ir::Scalar::F64));
        CHECK(has(f64, "sqrt.rn.f64"));
        CHECK(has(f64, "fma.rn.f64"));
        CHECK_FALSE(has(f64, "__nv_")); // every libdevice function was inlined or internal
    }
}

TEST_CASE("fast math: the special-function unit's approximations, with or without libdevice") {
    const std::string ptx = generate(ptxtest::fast_math());
    for (const char* op : {"ex2.approx.f32", "lg2.approx.f32", "sin.approx.f32", "cos.approx.f32",
                           "sqrt.approx.f32", "rsqrt.approx.f32", "div.approx.f32"})
        CHECK_MESSAGE(has(ptx, op), std::string(op));
    CHECK_FALSE(has(ptx, ".ftz")); // denormals kept, as everywhere else
    CHECK_FALSE(has(ptx, "__nv_"));
}

TEST_CASE("ilogb reads the exponent from the bits: no libdevice call") {
    const std::string ptx = generate(ptxtest::ilogb());
    CHECK(has(ptx, "clz.b32"));
    CHECK(has(ptx, "clz.b64"));
    CHECK_FALSE(has(ptx, "__nv_"));
}

TEST_CASE("integer ops wrap, shifts mask their amount, casts have C semantics") {
    const std::string ptx = generate(ptxtest::int_ops());
    CHECK(std::regex_search(ptx, std::regex(R"(and\.b32\s+%r\d+, %r\d+, 31;)")));
    CHECK(std::regex_search(ptx, std::regex(R"(and\.b32\s+%r\d+, %r\d+, 63;)")));
    // The optimizer folds many casts of casts; these survive and show the lowering's choices.
    for (const std::string op :
         {"div.s32", "div.u32", "div.s64", "div.u64", "min.s32", "max.s64", "max.u64", "shr.s32",
          "shr.u32", "shr.s64", "shr.u64", "cvt.rzi.s32.f32", "cvt.rzi.u32.f32", "cvt.rzi.u64.f64",
          "cvt.rn.f32.u64", "cvt.rn.f32.f64", "setp.neu.f32", "setp.neu.f64"})
        CHECK_MESSAGE(has(ptx, op), op);
}

TEST_CASE("2-D and 3-D indices read every special register") {
    const std::string ptx = generate(ptxtest::indices_2d());
    for (const char* reg : {"tid", "ctaid", "ntid", "nctaid"})
        for (const char* dim : {"x", "y", "z"})
            CHECK_MESSAGE(has(ptx, std::string("%") + reg + "." + dim),
                          std::string(reg + std::string(".") + dim));
    CHECK(has(ptx, "mul.wide.u32")); // global ids and sizes are computed in 64 bits
}

TEST_CASE("control flow and fences") {
    const std::string ptx = generate(ptxtest::control_flow());
    CHECK(has(ptx, "membar.cta"));
    CHECK(has(ptx, "membar.gl"));
    CHECK(has(ptx, "ret;"));
}

TEST_CASE("native blocks: the fallback is used, CUDA code alone is refused") {
    const std::string ptx = generate(ptxtest::native_with_fallback());
    CHECK_FALSE(has(ptx, "popc"));
    CHECK(std::regex_search(ptx, std::regex(R"(mov\.b32\s+%r\d+, 7;)")));
    std::string message;
    CHECK(error_of([] { generate(ptxtest::native_without_fallback()); }, message) ==
          ErrorCode::InvalidKernel);
    CHECK(has(message, "native CUDA code needs the CUDA C path (cuda.compiler = nvrtc)"));
    CHECK(has(message, "native_only"));
}

TEST_CASE("a kernel the validator rejects is an InvalidKernel error") {
    Kernel k = ptxtest::vector_add();
    // A barrier under `if (gid < n)`: work-items of one group would disagree.
    k.body = ir::Block::make({ir::If::make(
        ir::Binary::make(ir::BinaryOp::Lt,
                         ir::Cast::make(ir::Scalar::I32, ir::Call::make("global_id_x", {})),
                         ir::Var::make("n", ir::Scalar::I32)),
        ir::Barrier::make())});
    std::string message;
    CHECK(error_of([&] { generate(k); }, message) == ErrorCode::InvalidKernel);
}

TEST_CASE("generation is deterministic and safe from several threads") {
    const auto kernels = ptxtest::all_kernels();
    std::vector<std::string> expected;
    for (const auto& [name, kernel] : kernels)
        expected.push_back(without_libdevice() && name.rfind("math_", 0) == 0 &&
                                   name.find("f64") != std::string::npos
                               ? ""
                               : generate(kernel));
    std::vector<int> mismatches(3, 0);
    std::vector<std::thread> threads;
    for (int t = 0; t < 3; ++t)
        threads.emplace_back([&, t] {
            for (size_t i = 0; i < kernels.size(); ++i) {
                if (expected[i].empty()) continue;
                mismatches[t] += generate(kernels[i].kernel) != expected[i];
            }
        });
    for (auto& thread : threads)
        thread.join();
    CHECK(mismatches == std::vector<int>{0, 0, 0});
    CHECK(codegen::make_ptx_codegen()->language() == PLX_LANG_PTX);
}

TEST_CASE("time to generate vector_add (reported, not asserted)") {
    using clock = std::chrono::steady_clock;
    const Kernel k = ptxtest::vector_add();
    const auto start = clock::now();
    generate(k, "sm_87"); // a target machine no other test made: includes its creation
    const auto cold = clock::now() - start;
    const int rounds = 20;
    const auto warm_start = clock::now();
    for (int i = 0; i < rounds; ++i)
        generate(k, "sm_87");
    const auto warm = (clock::now() - warm_start) / rounds;
    using ms = std::chrono::duration<double, std::milli>;
    MESSAGE("vector_add PTX: first " << ms(cold).count() << " ms (with target setup), then "
                                     << ms(warm).count() << " ms per kernel");
}

// d = a x b + c through wmma, in shared (a) and global (b, c, d) memory.
Kernel matrix_kernel(ir::Scalar in, ir::Scalar acc, uint32_t k) {
    using namespace ir;
    Kernel kernel;
    kernel.name = std::string("mma_") + to_string(in) + "_" + to_string(acc);
    kernel.params = {{"a", Param::Kind::Buffer, in, Access::Read},
                     {"b", Param::Kind::Buffer, in, Access::Read},
                     {"d", Param::Kind::Buffer, acc, Access::Write}};
    kernel.shared = {{"tile", in, 1024, {}, 0}};
    kernel.fragments = {{"fa", MatrixUse::A, 16, 16, k, in, MatrixLayout::Row},
                        {"fb", MatrixUse::B, 16, 16, k, in, MatrixLayout::Col},
                        {"fc", MatrixUse::Acc, 16, 16, k, acc, MatrixLayout::Row}};
    auto i32 = [](int v) { return Const::make_int(Scalar::I32, v); };
    kernel.body =
        Block::make({Matrix::fill("fc", Const::make_float(Scalar::F32, 0.0)),
                     Matrix::load("fa", "tile", Space::Local, i32(0), i32(32)),
                     Matrix::load("fb", "b", Space::Global, i32(16), i32(32), MatrixLayout::Col),
                     Matrix::mma("fc", "fa", "fb", "fc"),
                     Matrix::store("fc", "d", Space::Global, i32(0), i32(16), MatrixLayout::Col)});
    return kernel;
}

TEST_CASE("matrix fragments: wmma PTX that ptxas assembles for sm_80 and sm_90a, refused below its "
          "architecture") {
    const std::tuple<ir::Scalar, ir::Scalar, uint32_t, const char*> cases[] = {
        {ir::Scalar::F16, ir::Scalar::F32, 16, "wmma.mma.sync.aligned.row.col.m16n16k16.f32.f32"},
        {ir::Scalar::F16, ir::Scalar::F16, 16, "wmma.mma.sync.aligned.row.col.m16n16k16.f16.f16"},
        {ir::Scalar::BF16, ir::Scalar::F32, 16,
         "wmma.mma.sync.aligned.row.col.m16n16k16.f32.bf16.bf16.f32"},
        {ir::Scalar::F32, ir::Scalar::F32, 8,
         "wmma.mma.sync.aligned.row.col.m16n16k8.f32.tf32.tf32.f32"}};
    for (auto [in, acc, k, mma] : cases) {
        const Kernel kernel = matrix_kernel(in, acc, k);
        for (const char* arch : {"sm_80", "sm_90a"}) {
            const std::string ptx = generate(kernel, arch);
            INFO(kernel.name, " ", arch);
            CHECK(has(ptx, mma));
            CHECK(has(ptx, "wmma.load.a.sync.aligned.row"));
            CHECK(has(ptx, "wmma.load.b.sync.aligned.col"));
            CHECK(has(ptx, "wmma.store.d.sync.aligned.col"));
            check_assembles(kernel.name, ptx, arch);
        }
        std::string message;
        if (in != ir::Scalar::F16) {
            CHECK(error_of([&] { generate(kernel, "sm_75"); }, message) == ErrorCode::Unsupported);
            CHECK(has(message, "need sm_80"));
        } else {
            CHECK(has(generate(kernel, "sm_75"), mma));
        }
    }
}

// A warpgroup accumulator (m64n128k16) from two swizzled shared arrays: two mma_shared, the
// first left in flight, and a bounded store.
Kernel warpgroup_kernel(ir::Scalar t) {
    using namespace ir;
    Kernel k;
    k.name = std::string("warpgroup_") + to_string(t);
    k.params = {{"c", Param::Kind::Buffer, Scalar::F32, Access::Write}};
    k.fragments = {{"acc", MatrixUse::Acc, 64, 128, 16, Scalar::F32, MatrixLayout::Row}};
    ArrayDecl as{"as", t, 64 * 64, {64, 64}, 0}, bs{"bs", t, 64 * 128, {64, 128}, 0};
    as.swizzle = bs.swizzle = true;
    k.shared = {as, bs};
    auto i = [](int64_t v) { return Const::make_int(Scalar::I32, v); };
    k.body = Block::make(
        {Barrier::make(), Matrix::fill("acc", Const::make_float(Scalar::F32, 0.0)),
         Matrix::mma_shared("acc", "as", i(0), i(0), "bs", i(0), i(0), 2, 1),
         Matrix::mma_shared("acc", "as", i(0), i(32), "bs", i(32), i(0), 2),
         Matrix::store_bounded("acc", "c", Space::Global, i(0), i(128), i(60), i(100))});
    validate(k);
    return k;
}

TEST_CASE("warpgroup accumulators: wgmma on sm_90a, ldmatrix and mma.sync on sm_80, which ptxas "
          "assembles") {
    for (ir::Scalar t : {ir::Scalar::F16, ir::Scalar::BF16}) {
        const Kernel kernel = warpgroup_kernel(t);
        const std::string ts = ir::to_string(t);
        INFO(kernel.name);
        const std::string wg = generate(kernel, "sm_90"); // an sm_90 GPU gets sm_90a PTX
        CHECK(has(wg, ".target sm_90a"));
        CHECK(count(wg, std::regex("wgmma\\.mma_async\\.sync\\.aligned\\.m64n128k16\\.f32\\." + ts +
                                   "\\." + ts)) == 4);
        CHECK(has(wg, "wgmma.wait_group.sync.aligned 1;"));
        CHECK(has(wg, "fence.proxy.async.shared::cta")); // before the barrier
        CHECK(has(wg, ".align 1024"));
        check_assembles(kernel.name, wg, "sm_90a");
        const std::string mma = generate(kernel, "sm_80");
        CHECK_FALSE(has(mma, "wgmma"));
        CHECK(has(mma, "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16"));
        CHECK(has(mma, "mma.sync.aligned.m16n8k16.row.col.f32." + ts + "." + ts + ".f32"));
        check_assembles(kernel.name, mma, "sm_80");
        std::string message;
        CHECK(error_of([&] { generate(kernel, "sm_75"); }, message) == ErrorCode::Unsupported);
        CHECK(has(message, "need sm_80"));
    }
}

#else

TEST_CASE("without LLVM the PTX generator says how to get one") {
    std::string message;
    CHECK(error_of([] { generate(ptxtest::vector_add()); }, message) == ErrorCode::Unsupported);
    CHECK(has(message, "reconfigure with -Dllvm=enabled"));
}

#endif
