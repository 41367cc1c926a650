// WidenIndices (core/src/codegen/host/passes/widen.cpp): a work-item's own loops address buffers
// with 64-bit inductions where an access at the index runs on every trip, and compute exactly
// what they did, with steps of either sign or none, offsets before and after the index.
#include "host_test.hpp"
#include "kernels.hpp"

#include <llvm/Analysis/LoopInfo.h>
#include <llvm/AsmParser/Parser.h>
#include <llvm/IR/Dominators.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/SourceMgr.h>

using namespace host_test;

namespace {

// In the optimized IR of k, the loads and the i32 -> i64 sign extensions inside the kernel's
// own While loops (their headers keep the lowering's name "while.").
struct KernelLoops {
    size_t loads = 0;
    size_t sexts = 0;
};
KernelLoops kernel_loops(const ir::Kernel& k) {
    const std::string text = plexus::codegen::host_llvm_ir(k, native_options(), true);
    llvm::LLVMContext context;
    llvm::SMDiagnostic error;
    std::unique_ptr<llvm::Module> m = llvm::parseAssemblyString(text, error, context);
    REQUIRE_MESSAGE(m, "the optimized IR does not parse: " << error.getMessage().str());
    KernelLoops out;
    llvm::Function* f = m->getFunction("plx_wg_" + k.name);
    REQUIRE(f != nullptr);
    llvm::DominatorTree dt(*f);
    llvm::LoopInfo li(dt);
    for (llvm::BasicBlock& b : *f) {
        llvm::Loop* loop = li.getLoopFor(&b);
        if (!loop || !loop->getHeader()->getName().starts_with("while.")) continue;
        for (llvm::Instruction& i : b) {
            out.loads += llvm::isa<llvm::LoadInst>(i);
            if (auto* s = llvm::dyn_cast<llvm::SExtInst>(&i); s && s->getSrcTy()->isIntegerTy(32))
                ++out.sexts;
        }
    }
    return out;
}

// Per work-item g: i = start[g], s = step[g]; `trips` times acc += in[i] * 3 + in[i + 2] -
// in[i - 1], i += s; out[g] = acc (wrapping i32).
ir::Kernel strided_sum() {
    const Scalar I = Scalar::I32;
    auto at = [&](const std::string& a, Expr i) { return load(a, I, std::move(i)); };
    return kernel(
        "strided_sum",
        {buf("in", I), buf("start", I), buf("step", I), buf("trips", I),
         buf("out", I, ir::Access::Write)},
        {let("g", gid()), let("i", at("start", var("g"))), let("s", at("step", var("g"))),
         let("n", at("trips", var("g"))), let("t", ci(0)), let("acc", ci(0)),
         while_(lt(var("t"), var("n")),
                block({assign("acc", sub(add(add(var("acc"), mul(at("in", var("i")), ci(3))),
                                             at("in", add(var("i"), ci(2)))),
                                         at("in", sub(var("i"), ci(1))))),
                       assign("i", add(var("i"), var("s"))), assign("t", add(var("t"), ci(1)))})),
         store("out", var("g"), var("acc"))});
}

// Per work-item: `trips` times acc += in[i64(v) + 1], v += s (v an i32 that may wrap: the
// index is an i64 sum, in bounds whatever v did). LLVM addresses it as (in + 1)[sext v].
ir::Kernel offset_i64() {
    const Scalar I = Scalar::I32;
    return kernel(
        "offset_i64",
        {buf("in", I), buf("out", I, ir::Access::Write), scalar("n", I), scalar("s", I),
         scalar("v0", I)},
        {let("g", gid()), let("v", var("v0")), let("t", ci(0)), let("acc", ci(0)),
         while_(lt(var("t"), var("n")),
                block({assign("acc", add(var("acc"), load("in", I,
                                                          add(cast(Scalar::I64, var("v")),
                                                              ci(1, Scalar::I64))))),
                       assign("v", add(var("v"), var("s"))), assign("t", add(var("t"), ci(1)))})),
         store("out", var("g"), var("acc"))});
}

} // namespace

TEST_CASE("WidenIndices: warp_reduce's and a strided loop's accesses take 64-bit inductions") {
    // warp_reduce's work-item loop, `acc0 += in[i]; acc1 += in[i + step]; i += 2 * step`:
    // before, each trip sign-extended i and i + step for its two loads (12 instructions per
    // 32 bytes on x86); now neither is extended in the loop.
    const KernelLoops warp = kernel_loops(plexus::samples::warp_reduce().ir());
    CHECK(warp.loads >= 2);
    CHECK(warp.sexts == 0);
    const KernelLoops strided = kernel_loops(strided_sum());
    CHECK(strided.loads >= 3);
    CHECK(strided.sexts == 0);
    // No access at exactly in[sext v], only at (in + 1)[sext v]: a negative v says nothing
    // there (with more than 2^31 elements, v wrapping to INT_MAX reads in[2^31]), so v stays
    // an i32 extended on each trip.
    const KernelLoops offset = kernel_loops(offset_i64());
    CHECK(offset.loads >= 1);
    CHECK(offset.sexts >= 1);
}

TEST_CASE(
    "WidenIndices: loops with steps of either sign or none, every result exact at each width") {
    const ir::Kernel k = strided_sum();
    const int n = 5000, items = 512;
    std::vector<int32_t> in = random_vec<int32_t>(n, std::numeric_limits<int32_t>::min(),
                                                  std::numeric_limits<int32_t>::max());
    std::vector<int32_t> start(items), step(items), trips(items);
    for (int g = 0; g < items; ++g) {
        const int s = int(rng()() % 15) - 7;
        const int first = 1 + int(rng()() % uint64_t(n - 3));
        // Every trip's i - 1 .. i + 2 inside the buffer.
        const int most = s > 0 ? (n - 3 - first) / s + 1 : s < 0 ? (first - 1) / -s + 1 : 400;
        start[size_t(g)] = first;
        step[size_t(g)] = s;
        trips[size_t(g)] = int(rng()() % uint64_t(std::min(most, 400) + 1));
    }
    for (const std::string& features : feature_sets()) {
        CAPTURE(features);
        auto hk = compile(k, features);
        std::vector<int32_t> out(items, -1);
        run(*hk, k, {in.data(), start.data(), step.data(), trips.data(), out.data()},
            grid1(items, 64));
        int bad = 0;
        for (int g = 0; g < items; ++g) {
            uint32_t acc = 0;
            int i = start[size_t(g)];
            for (int t = 0; t < trips[size_t(g)]; ++t, i += step[size_t(g)])
                acc = acc + uint32_t(in[size_t(i)]) * 3u + uint32_t(in[size_t(i + 2)]) -
                      uint32_t(in[size_t(i - 1)]);
            bad += out[size_t(g)] != int32_t(acc);
        }
        CHECK(bad == 0);
    }
}
