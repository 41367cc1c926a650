// InterleaveChains (core/src/codegen/host/passes/interleave.cpp): the order it gives the blocks of
// a loop run one work-item at a time, on small hand-written functions, and what it does to
// matmul_tiled's step on AVX2 (the case it was written for).
#include "host_test.hpp"
#include "kernels.hpp"

#include "codegen/host/passes/interleave.hpp"

#include <llvm/ADT/StringExtras.h>
#include <llvm/Analysis/LoopInfo.h>
#include <llvm/AsmParser/Parser.h>
#include <llvm/IR/Dominators.h>
#include <llvm/IR/Module.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/SourceMgr.h>

#include <algorithm>
#include <regex>
#include <sstream>

namespace {

// Two chains of three FMAs each, written one chain after the other as SLP emits them, in a
// loop over work-items; `marked`: the loop carries the hint the lowering gives a loop run one
// work-item at a time. `middle` goes between the chains.
std::string chains(bool marked, const std::string& middle) {
    std::string loop_hint = marked ? ", !llvm.loop !0" : "";
    return R"(
declare float @llvm.fma.f32(float, float, float)
declare void @opaque()
define void @f(ptr noalias %x, ptr noalias %y, ptr noalias %out) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i.next, %loop ]
  %xa = getelementptr float, ptr %x, i64 %i
  %xa1 = load float, ptr %xa
  %a1 = call float @llvm.fma.f32(float %xa1, float %xa1, float 0.0)
  %xa2 = load float, ptr %xa
  %a2 = call float @llvm.fma.f32(float %xa2, float %xa2, float %a1)
  %xa3 = load float, ptr %xa
  %a3 = call float @llvm.fma.f32(float %xa3, float %xa3, float %a2)
  store float %a3, ptr %out
)" + middle +
           R"(
  %yb = getelementptr float, ptr %y, i64 %i
  %yb1 = load float, ptr %yb
  %b1 = call float @llvm.fma.f32(float %yb1, float %yb1, float 0.0)
  %yb2 = load float, ptr %yb
  %b2 = call float @llvm.fma.f32(float %yb2, float %yb2, float %b1)
  %back = load float, ptr %out
  %b3 = call float @llvm.fma.f32(float %back, float %back, float %b2)
  %outb = getelementptr float, ptr %out, i64 1
  store float %b3, ptr %outb
  %i.next = add i64 %i, 1
  %done = icmp eq i64 %i.next, 16
  br i1 %done, label %exit, label %loop)" +
           loop_hint + R"(
exit:
  ret void
}
!0 = distinct !{!0, !1}
!1 = !{!"plexus.item_loop"}
)";
}

// The names of the loop block's instructions, in order, after the pass.
std::vector<std::string> after_pass(const std::string& text) {
    llvm::LLVMContext context;
    llvm::SMDiagnostic error;
    std::unique_ptr<llvm::Module> m = llvm::parseAssemblyString(text, error, context);
    REQUIRE_MESSAGE(m, "test IR does not parse: " << error.getMessage().str());
    llvm::LoopAnalysisManager lam;
    llvm::FunctionAnalysisManager fam;
    llvm::CGSCCAnalysisManager cgam;
    llvm::ModuleAnalysisManager mam;
    llvm::PassBuilder pb;
    pb.registerModuleAnalyses(mam);
    pb.registerCGSCCAnalyses(cgam);
    pb.registerFunctionAnalyses(fam);
    pb.registerLoopAnalyses(lam);
    pb.crossRegisterProxies(lam, fam, cgam, mam);
    llvm::Function& f = *m->getFunction("f");
    llvm::FunctionPassManager fpm;
    fpm.addPass(plexus::codegen::host::InterleaveChains());
    fpm.run(f, fam);
    std::vector<std::string> names;
    for (llvm::BasicBlock& b : f)
        if (b.getName() == "loop")
            for (llvm::Instruction& i : b) {
                if (i.hasName())
                    names.push_back(i.getName().str());
                else if (llvm::isa<llvm::StoreInst>(i))
                    names.push_back("store " + i.getOperand(1)->getName().str());
                else if (llvm::isa<llvm::CallInst>(i))
                    names.push_back("call");
                else
                    names.push_back("br");
            }
    return names;
}

size_t position(const std::vector<std::string>& order, const std::string& name) {
    auto it = std::find(order.begin(), order.end(), name);
    REQUIRE_MESSAGE(it != order.end(), name << " is missing");
    return size_t(it - order.begin());
}

} // namespace

TEST_CASE("InterleaveChains: chains advance level by level, every other instruction just before "
          "its user") {
    const std::vector<std::string> order = after_pass(chains(true, ""));
    CAPTURE(llvm::join(order, " "));
    // Levels: a1, b1 | a2, b2 | a3 | b3 (b3 reads %back, which waits for the store of a3).
    CHECK(position(order, "a1") < position(order, "b1"));
    CHECK(position(order, "b1") < position(order, "a2"));
    CHECK(position(order, "a2") < position(order, "b2"));
    CHECK(position(order, "b2") < position(order, "a3"));
    // A load sits just before the FMA that reads it.
    for (const char* pair : {"xa1 a1", "yb1 b1", "xa2 a2", "yb2 b2", "xa3 a3"}) {
        const std::string load = std::string(pair).substr(0, std::string(pair).find(' '));
        const std::string user = std::string(pair).substr(load.size() + 1);
        CHECK_MESSAGE(position(order, load) + 1 == position(order, user), pair);
    }
    // Memory order: %back reads what the first store wrote, so it stays after it, and the
    // store of b3 after b3; the loads of x and y (no alias with out) were free to move.
    CHECK(position(order, "store out") < position(order, "back"));
    CHECK(position(order, "b3") < position(order, "store outb"));
    CHECK(order.back() == "br");
    CHECK(order.front() == "i");
}

TEST_CASE("InterleaveChains: a call keeps its place, and a loop without the hint keeps its order") {
    // Nothing crosses the call: chain a stays before it, chain b after it.
    const std::vector<std::string> with_call = after_pass(chains(true, "  call void @opaque()"));
    CAPTURE(llvm::join(with_call, " "));
    const size_t call = position(with_call, "call");
    for (const char* before : {"xa1", "a1", "a2", "a3", "store out"})
        CHECK_MESSAGE(position(with_call, before) < call, before);
    for (const char* after : {"yb1", "b1", "b2", "back", "b3", "store outb"})
        CHECK_MESSAGE(position(with_call, after) > call, after);

    // Unmarked: the order as written.
    const std::vector<std::string> unmarked = after_pass(chains(false, ""));
    const std::vector<std::string> written = {
        "i",  "xa",  "xa1", "a1",   "xa2", "a2",   "xa3",        "a3",     "store out", "yb", "yb1",
        "b1", "yb2", "b2",  "back", "b3",  "outb", "store outb", "i.next", "done",      "br"};
    CHECK(unmarked == written);
}

TEST_CASE(
    "matmul_tiled per work-item on AVX2: the step's chains interleave and its registers hold") {
    plexus::codegen::Options o;
    o.backend = "native";
    o.host_features = "-avx512f";
    if (plexus::codegen::host::vector_bits(o) != 256) {
        MESSAGE("skipped: the host has no AVX2");
        return;
    }
    // The step region runs per work-item (item_mode_test.cpp): 64 FMAs of 8 lanes, one chain
    // of 8 per row of the work-item's 8 x 8 tile. Interleaved, each FMA comes 8 after the one
    // that feeds it (all rows take step p before any takes p + 1).
    const std::string ir =
        plexus::codegen::host_llvm_ir(plexus::samples::matmul_tiled().ir(), o, true);
    const std::regex fma(
        R"((%[\w.]+) = tail call <8 x float> @llvm\.fma\.v8f32\(.*, <8 x float> (%[\w.]+)\))");
    std::vector<std::string> defined;
    size_t fmas = 0, chained = 0, interleaved = 0;
    std::istringstream lines(ir);
    for (std::string line; std::getline(lines, line);) {
        std::smatch m;
        if (!std::regex_search(line, m, fma)) continue;
        ++fmas;
        auto it = std::find(defined.begin(), defined.end(), m[2].str());
        if (it != defined.end()) {
            ++chained;
            interleaved += size_t(defined.end() - it) >= 8;
        }
        defined.push_back(m[1].str());
    }
    CHECK(fmas == 64);
    CHECK(chained == 56);
    CHECK(interleaved == chained);

    // In the machine code, the block with the FMAs reads and writes the stack a few times at
    // most (52 times in SLP's order, where 21 broadcasts were spilled).
    const std::string assembly =
        plexus::codegen::host_assembly(plexus::samples::matmul_tiled().ir(), o);
    size_t best_fmas = 0, stack = 0;
    size_t block_fmas = 0, block_stack = 0;
    std::istringstream asm_lines(assembly);
    for (std::string line; std::getline(asm_lines, line);) {
        if (!line.empty() && line[0] != '\t' && line[0] != ' ' && line.back() == ':') {
            if (block_fmas > best_fmas) best_fmas = block_fmas, stack = block_stack;
            block_fmas = block_stack = 0;
            continue;
        }
        block_fmas += line.find("vfmadd") != std::string::npos;
        block_stack += line.find("(%rsp)") != std::string::npos;
    }
    if (block_fmas > best_fmas) best_fmas = block_fmas, stack = block_stack;
    CHECK(best_fmas == 64);
    CHECK(stack <= 16);
}

TEST_CASE("InterleaveChains: a value only copied is loaded early, its store after what it may "
          "overwrite") {
    // Between the chains, a copy from y to x at an index alias analysis cannot separate from
    // the x the chain a loads: nothing of it feeds arithmetic, so its load goes with level 0
    // (its latency behind the chains), its store as soon as the loads of x it may overwrite
    // are done.
    const std::vector<std::string> order = after_pass(chains(true, R"(
  %cps = getelementptr float, ptr %y, i64 100
  %cp = load float, ptr %cps
  %cpi = mul i64 %i, 3
  %cpd = getelementptr float, ptr %x, i64 %cpi
  store float %cp, ptr %cpd)"));
    CAPTURE(llvm::join(order, " "));
    CHECK(position(order, "cp") < position(order, "a2"));
    CHECK(position(order, "cp") < position(order, "b1"));
    CHECK(position(order, "xa3") < position(order, "store cpd"));
    CHECK(position(order, "store cpd") < position(order, "a3"));
}
