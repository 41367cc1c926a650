// The structure of the optimized host code, not its speed: the work-item loops of the sample
// kernels come out of LLVM as vector code of the width the target's widest registers give
// (W = vector bits / 32 floats), for the host's own features and, on x86, for 256 and 128 bits.
// Read with LLVM's own parser and LoopInfo, so that "in a loop" is what LLVM means by it.
#include "host_test.hpp"
#include "kernels.hpp"

#include "plexus/kernel.hpp"

#include <dlfcn.h>
#include <optional>

#include <llvm/Analysis/LoopInfo.h>
#include <llvm/AsmParser/Parser.h>
#include <llvm/IR/Dominators.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/raw_ostream.h>

using host_test::feature_sets;

namespace {

using plexus::codegen::Options;

// The instructions of the work-item loops in the optimized IR `text`, each printed on its own
// line: those whose innermost loop is not one of the kernel's own (a While or For of a
// work-item, whose blocks keep the lowering's names "while." and "for."). After
// vectorization a chunk's loop of W work-items is gone, its one vector iteration part of the
// loop around it, whose header LLVM renames; so loops are told apart by what they are not.
// With `kernel_loops_only`, the instructions of those loops of the kernel's own instead.
std::vector<std::string> work_item_loop_code(const std::string& text, bool kernel_loops_too = false,
                                             bool kernel_loops_only = false) {
    llvm::LLVMContext context;
    llvm::SMDiagnostic error;
    std::unique_ptr<llvm::Module> m = llvm::parseAssemblyString(text, error, context);
    REQUIRE_MESSAGE(m, "the optimized IR does not parse: " << error.getMessage().str());
    std::vector<std::string> out;
    for (llvm::Function& f : *m) {
        if (f.isDeclaration()) continue;
        llvm::DominatorTree dt(f);
        llvm::LoopInfo li(dt);
        for (llvm::BasicBlock& b : f) {
            llvm::Loop* loop = li.getLoopFor(&b);
            if (!loop) continue;
            llvm::StringRef header = loop->getHeader()->getName();
            const bool kernels = header.starts_with("while.") || header.starts_with("for.");
            if ((!kernel_loops_too && kernels) || (kernel_loops_only && !kernels)) continue;
            for (llvm::Instruction& i : b) {
                std::string line;
                llvm::raw_string_ostream os(line);
                i.print(os);
                out.push_back(line);
            }
        }
    }
    return out;
}

// How many of `code`'s lines hold every one of `parts`.
size_t count(const std::vector<std::string>& code, std::initializer_list<std::string> parts) {
    size_t n = 0;
    for (const std::string& line : code) {
        bool all = true;
        for (const std::string& p : parts)
            all = all && line.find(p) != std::string::npos;
        n += all;
    }
    return n;
}

// Calls f(options, bits) for the native backend with each of feature_sets(), where the target
// has a known vector width (bits: its vector bits).
template <class F> void for_each_width(F&& f) {
    for (const std::string& features : feature_sets()) {
        const Options o = host_test::native_options(features);
        const unsigned bits = plexus::codegen::host::vector_bits(o);
        if (bits == 0) {
            MESSAGE("LLVM chooses the vector width on this target: nothing to check");
            continue;
        }
        CAPTURE(features);
        f(o, bits);
    }
}

} // namespace

TEST_CASE("vector_add, reduce, matmul_naive and matmul_tiled: the work-item loops are vectors of "
          "the target's width") {
    namespace samples = plexus::samples;
    for_each_width([](const Options& o, unsigned bits) {
        const std::string w = std::to_string(bits / 32);
        const std::string floats = "<" + w + " x float>";
        CAPTURE(floats);

        // vector_add: each chunk loads W floats of a and b, adds and stores them at once.
        auto add =
            work_item_loop_code(plexus::codegen::host_llvm_ir(samples::vector_add().ir(), o, true));
        CHECK(count(add, {"fadd " + floats}) > 0);
        CHECK(count(add, {"load " + floats}) > 0);

        // reduce: after the barrier, each step of the tree adds partial[lid + s] into
        // partial[lid] for W work-items at once, a masked store under `lid < s` (lid is
        // recomputed, so the store is contiguous). Before AVX there are no masked stores and
        // LLVM keeps that loop scalar. The partial sums before the barrier are not checked:
        // each work-item's loop over its own run of the input is a loop of its own, which
        // LoopVectorize does not vectorize across work-items (docs/architecture.md); but its
        // elements in[i], in[i + 1], ... are addressed from one base, so the SLP vectorizer
        // makes its sixteen partial sums one vector, which instruction selection splits into
        // registers of the target's width (with wrapped i32 sums as addresses it loaded each
        // element alone, or pairs of them).
        const std::string reduce_ir =
            plexus::codegen::host_llvm_ir(samples::reduce().ir(), o, true);
        if (bits >= 256) {
            auto red = work_item_loop_code(reduce_ir);
            CHECK(count(red, {"fadd " + floats}) > 0);
            CHECK(count(red, {"@llvm.masked.store.v" + w + "f32"}) > 0);
        }
        CHECK(count(work_item_loop_code(reduce_ir, true, true), {"load <16 x float>"}) > 0);

        // matmul_naive: its k loop is the same for every work-item, so a chunk runs it in lock
        // step (one scalar counter): W products of a broadcast a and a contiguous row of b.
        auto naive = work_item_loop_code(
            plexus::codegen::host_llvm_ir(samples::matmul_naive().ir(), o, true), true);
        CHECK(count(naive, {"fmul " + floats}) > 0);
        CHECK(count(naive, {"load " + floats}) > 0);

        // matmul_tiled: its step region reads a work-item's own quads of `b` (4 apart between
        // neighbouring work-items). With W = 16 (AVX-512 at full rate) it runs in chunks: each
        // of the step's 512 FMAs is one vector FMA of W work-items. With W = 8 (AVX2) a quad
        // fills half a vector and the region runs per work-item: SLP makes each row of the
        // work-item's 8 x 8 tile one vector, 64 vector FMAs per step (host.hpp,
        // per_item_region); on Zen 4 (512 bits at half rate) it runs per work-item too (the
        // next test). Without FMA instructions (the 128-bit set) an fma is a call to fmaf per
        // element either way, and SLP leaves it scalar: nothing to check.
        auto mm = work_item_loop_code(
            plexus::codegen::host_llvm_ir(samples::matmul_tiled().ir(), o, true));
        if (bits == 512 && plexus::codegen::host::full_rate_bits(o) == 512)
            CHECK(count(mm, {"@llvm.fma.v" + w + "f32"}) >= 512);
        if (bits == 256) {
            CHECK(count(mm, {"@llvm.fma.v" + w + "f32"}) == 64);
            CHECK(count(mm, {"@llvm.fma.f32"}) == 0);
        }
    });
}

TEST_CASE("particles: the tile loop's float3 arithmetic is W work-items per vector") {
    // The tile loop runs a chunk of W work-items in lock step; its positions, differences and
    // forces are float3 values, which LoopVectorize cannot widen as they are. Kept one array
    // per lane and split into lanes before it (jit.cpp, SplitVectors), each lane of the loop
    // is W work-items at once: r2 * sqrt(r2) and the division by it are vectors of W, and no
    // work-item is left to a scalar sqrt. Before, the loop kept one work-item per iteration.
    for_each_width([](const Options& o, unsigned bits) {
        const std::string w = std::to_string(bits / 32);
        auto loops = work_item_loop_code(
            plexus::codegen::host_llvm_ir(plexus::samples::particles().ir(), o, true), true);
        CHECK(count(loops, {"@llvm.sqrt.v" + w + "f32"}) > 0);
        CHECK(count(loops, {"fdiv <" + w + " x float>"}) > 0);
        CHECK(count(loops, {"@llvm.sqrt.f32"}) == 0);
    });
}

TEST_CASE(
    "vector_add_float4 and dequant_int8: a full chunk's float4s are one vector of W work-items") {
    // Both guard their work-item with `if (i < n)`. A chunk whose W work-items all pass runs
    // the guarded statements unmasked with its vectors split into floats: W work-items' float4s
    // are then 4 W consecutive floats, loaded, computed and stored as one vector, and
    // dequant_int8's division by its runtime column count is a vector division in doubles
    // (no scalar sdiv left in that loop). Before, every work-item was a loop iteration of its
    // own, 16 bytes at a time.
    for_each_width([](const Options& o, unsigned bits) {
        const std::string wide = "<" + std::to_string(4 * bits / 32) + " x float>";
        CAPTURE(wide);
        auto add = work_item_loop_code(
            plexus::codegen::host_llvm_ir(plexus::samples::vector_add_float4().ir(), o, true));
        CHECK(count(add, {"fadd " + wide}) > 0);
        CHECK(count(add, {"store " + wide}) > 0);
        auto dequant = work_item_loop_code(
            plexus::codegen::host_llvm_ir(plexus::samples::dequant_int8().ir(), o, true));
        CHECK(count(dequant, {"store " + wide}) > 0);
        CHECK(count(dequant, {"fdiv <" + std::to_string(bits / 32) + " x double>"}) +
                  count(dequant, {"fdiv <" + std::to_string(bits / 64) + " x double>"}) >
              0);
    });
}

TEST_CASE("matmul_tiled on AVX-512: chunks of 16 work-items where 512 bits run at full rate, per "
          "work-item on Zen 4") {
#if defined(__x86_64__)
    // Code for a named CPU (the config's `cpu`), built whatever the host is; nothing runs.
    // Sapphire Rapids computes a 512-bit FMA at once: the step is 512 FMAs of 16 work-items
    // each. Zen 4 takes two passes of its 256-bit units per 512-bit FMA, so a chunk's
    // shuffles of the quads of `b` buy nothing and the step runs per work-item: its 8 x 8
    // products are 512 lanes of FMAs in vectors of the work-item's own values, none scalar.
    namespace samples = plexus::samples;
    for (const char* cpu : {"sapphirerapids", "znver4"}) {
        CAPTURE(cpu);
        Options o;
        o.backend = "native";
        o.host_cpu = cpu;
        REQUIRE(plexus::codegen::host::vector_bits(o) == 512);
        const bool zen4 = std::string(cpu) == "znver4";
        CHECK(plexus::codegen::host::full_rate_bits(o) == (zen4 ? 256u : 512u));
        auto mm = work_item_loop_code(
            plexus::codegen::host_llvm_ir(samples::matmul_tiled().ir(), o, true));
        const size_t v16 = count(mm, {"@llvm.fma.v16f32"}), v8 = count(mm, {"@llvm.fma.v8f32"});
        if (!zen4) {
            CHECK(v16 >= 512);
            continue;
        }
        CHECK(v16 * 16 + v8 * 8 == 512);
        CHECK(v16 + v8 <= 64);
        CHECK(count(mm, {"@llvm.fma.f32"}) == 0);
    }
#else
    MESSAGE("skipped: the CPU names are x86-64's");
#endif
}

// The native backend's options for the host limited to AVX2 (256-bit vectors, where libmvec's
// 8-lane forms apply); std::nullopt, with a message, where the host has no AVX2.
std::optional<Options> avx2_options() {
    Options o;
    o.backend = "native";
    o.host_features = "-avx512f";
    if (plexus::codegen::host::vector_bits(o) == 256) return o;
    MESSAGE("skipped: the host has no AVX2");
    return std::nullopt;
}

TEST_CASE("softmax_f32: exp in a vectorized work-item loop calls glibc's vector expf where it is "
          "loaded") {
    namespace samples = plexus::samples;
#if defined(__x86_64__) && defined(__GLIBC__)
    // The 8-lane form exists for AVX2 (LLVM 19 knows no 16-lane one): 256-bit vectors.
    const std::optional<Options> o = avx2_options();
    if (!o) return;
    const std::string ir = plexus::codegen::host_llvm_ir(
        samples::softmax_f32().variant({{"per", 0}, {"width", 32}, {"subgroups", 0}}).ir(), *o,
        true);
    auto loops = work_item_loop_code(ir, true);
    if (!dlopen("libmvec.so.1", RTLD_NOW | RTLD_NOLOAD)) {
        MESSAGE("skipped: libmvec is not loaded (glibc without its vector math library)");
        CHECK(count(loops, {"_ZGVdN8v_expf"}) == 0);
        return;
    }
    CHECK(count(loops, {"@_ZGVdN8v_expf(<8 x float>"}) >= 1);
#else
    MESSAGE("skipped: libmvec is glibc's, on x86-64");
#endif
}

TEST_CASE("tanh, erf, asin, atan2 and hypot: libmvec's vector forms where the process's has them; "
          "log1p, log10 and cbrt (outside their bounds there) one call per work-item") {
#if defined(__x86_64__) && defined(__GLIBC__)
    namespace px = plexus;
    static const auto vector =
        px::kernel("vector_libm", {"x", "y"}, [](px::In<float> x, px::Out<float> y) {
            px::Int i = px::global_id(0);
            px::Float v = x[i];
            y[i] = px::tanh(v) + px::erf(v) + px::asin(v * 0.5f) + px::atan2(v, v + 2.0f) +
                   px::hypot(v, 3.0f);
        });
    static const auto scalar =
        px::kernel("scalar_libm", {"x", "y"}, [](px::In<float> x, px::Out<float> y) {
            px::Int i = px::global_id(0);
            px::Float v = x[i];
            y[i] = px::log1p(v * v) + px::log10(v * v + 1.0f) + px::cbrt(v);
        });
    const std::optional<Options> o = avx2_options();
    if (!o) return;
    auto loops = work_item_loop_code(plexus::codegen::host_llvm_ir(vector.ir(), *o, true), true);
    void* mvec = dlopen("libmvec.so.1", RTLD_NOW | RTLD_NOLOAD);
    for (const char* fn : {"_ZGVdN8v_tanhf", "_ZGVdN8v_erff", "_ZGVdN8v_asinf", "_ZGVdN8vv_atan2f",
                           "_ZGVdN8vv_hypotf"}) {
        CAPTURE(fn);
        const bool there = mvec && dlsym(mvec, fn);
        if (!there) MESSAGE("libmvec has no " << fn << ": one call per work-item");
        const size_t calls = count(loops, {std::string("@") + fn + "(<8 x float>"});
        CHECK((there ? calls >= 1 : calls == 0));
    }
    loops = work_item_loop_code(plexus::codegen::host_llvm_ir(scalar.ir(), *o, true), true);
    for (const char* fn : {"_ZGVdN8v_log1pf", "_ZGVdN8v_log10f", "_ZGVdN8v_cbrtf"})
        CHECK(count(loops, {fn}) == 0);
    CHECK(count(loops, {"@log1pf(float"}) >= 1);
#else
    MESSAGE("skipped: libmvec is glibc's, on x86-64");
#endif
}
