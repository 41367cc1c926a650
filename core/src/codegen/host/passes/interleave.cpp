// interleave_chains: after the O3 pipeline, reorders the blocks of the loops that run one
// work-item at a time so that their chains of floating-point arithmetic advance together.
//
// In such a loop SLP makes vectors of one work-item's straight-line code, and it emits each
// vectorized tree in one piece: for matmul_tiled's 8 x 8 micro-tile on AVX2 that is one row's
// chain of 8 FMAs (one per k) after the other, with the 64 broadcasts of a hoisted ahead of
// the FMAs that read them. Neither the DAG builder (X86 keeps IR order there) nor the machine
// scheduler undoes it: the broadcasts took 21 of the 16 vector registers' places and were
// spilled (52 stack accesses per work-item). LLVM's list-ilp DAG scheduler finds the good
// order (6 stack accesses, 20% faster), but it is chosen by a process-wide cl::opt a library
// must not set. This pass puts the order in the IR instead, which instruction selection keeps.
//
// The order is a list schedule over the block's dependences, data and memory: an instruction
// stays after every earlier one whose memory it may touch (alias analysis decides; at least
// one of the two writes), and calls, fences, atomics and volatile accesses stay where they
// are relative to everything else. So the new order computes the same values, bit for bit.
// Priority: each floating-point arithmetic instruction gets its level (the longest chain of
// such instructions that feeds it), and is scheduled level by level, in program order within
// a level; an instruction that feeds arithmetic goes just before its first user (loads next
// to the FMA that reads them); one that feeds none (a copy from global to shared memory, a
// store) as early as its dependences allow.
#include "codegen/host/passes/interleave.hpp"

#include <llvm/Analysis/AliasAnalysis.h>
#include <llvm/Analysis/LoopInfo.h>
#include <llvm/Analysis/MemoryLocation.h>
#include <llvm/Analysis/ValueTracking.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>

#include <algorithm>
#include <climits>
#include <queue>
#include <unordered_map>
#include <vector>

namespace plexus::codegen::host {
namespace {

using llvm::Instruction;

const char* const item_loop_marker = "plexus.item_loop";

// Floating-point arithmetic: the instructions whose chains decide the order.
bool arithmetic(const Instruction& i) {
    if (!i.getType()->isFPOrFPVectorTy()) return false;
    if (llvm::isa<llvm::BinaryOperator>(i) || llvm::isa<llvm::UnaryOperator>(i)) return true;
    if (const auto* call = llvm::dyn_cast<llvm::IntrinsicInst>(&i))
        return call->getIntrinsicID() == llvm::Intrinsic::fma ||
               call->getIntrinsicID() == llvm::Intrinsic::fmuladd;
    return false;
}

// A plain load or store, which only alias analysis orders.
bool plain_access(const Instruction& i) {
    if (const auto* load = llvm::dyn_cast<llvm::LoadInst>(&i)) return load->isSimple();
    if (const auto* store = llvm::dyn_cast<llvm::StoreInst>(&i)) return store->isSimple();
    return false;
}

// Anything else that touches memory or may not fall through: it keeps its place.
bool fixed(const Instruction& i) {
    return !plain_access(i) && (i.mayReadOrWriteMemory() || i.mayHaveSideEffects() ||
                                !llvm::isGuaranteedToTransferExecutionToSuccessor(&i));
}

// A block bigger than this keeps its order: the memory dependences are pairwise.
constexpr size_t max_accesses = 4096;

bool interleave_block(llvm::BasicBlock& bb, llvm::BatchAAResults& aa) {
    std::vector<Instruction*> body;
    size_t chains = 0, accesses = 0;
    for (Instruction& i : bb) {
        if (llvm::isa<llvm::PHINode>(i) || i.isTerminator()) continue;
        body.push_back(&i);
        chains += arithmetic(i);
        accesses += plain_access(i);
    }
    if (chains < 2 || accesses > max_accesses) return false;
    const size_t n = body.size();
    std::unordered_map<const Instruction*, size_t> at;
    for (size_t k = 0; k < n; ++k)
        at.emplace(body[k], k);

    std::vector<std::vector<size_t>> preds(n), succs(n);
    auto edge = [&](size_t from, size_t to) {
        preds[to].push_back(from);
        succs[from].push_back(to);
    };
    std::vector<int> level(n, 0);
    std::vector<size_t> reads, writes, since_fixed;
    long last_fixed = -1;
    for (size_t k = 0; k < n; ++k) {
        Instruction* i = body[k];
        for (llvm::Value* op : i->operands())
            if (auto* def = llvm::dyn_cast<Instruction>(op)) {
                auto it = at.find(def);
                if (it == at.end()) continue;
                edge(it->second, k);
                level[k] = std::max(level[k], level[it->second] + (arithmetic(*def) ? 1 : 0));
            }
        if (fixed(*i)) {
            for (size_t j : since_fixed)
                edge(j, k);
            since_fixed.clear();
            reads.clear();
            writes.clear();
            last_fixed = long(k);
            continue;
        }
        if (last_fixed >= 0) edge(size_t(last_fixed), k);
        since_fixed.push_back(k);
        if (!plain_access(*i)) continue;
        const llvm::MemoryLocation here = llvm::MemoryLocation::get(i);
        const bool store = llvm::isa<llvm::StoreInst>(i);
        auto order_after = [&](const std::vector<size_t>& earlier) {
            for (size_t j : earlier)
                if (aa.alias(here, llvm::MemoryLocation::get(body[j])) !=
                    llvm::AliasResult::NoAlias)
                    edge(j, k);
        };
        order_after(writes);
        if (store) order_after(reads);
        (store ? writes : reads).push_back(k);
    }

    // Priority (level, position). Arithmetic has its own level and place; an instruction that
    // feeds arithmetic takes its earliest user's, so it runs just before that user (a load
    // next to its FMA, not hoisted into a register for the whole block; an address both a
    // copy and an FMA's load use, with the copy). One that feeds none keeps its own level,
    // that of the arithmetic feeding it, 0 for none: a copy (a load stored elsewhere, as a
    // prefetch into shared memory) goes as early as its dependences allow, so its latency
    // hides behind the arithmetic; a store right after the level that computes what it
    // stores.
    using Key = std::pair<int, size_t>;
    std::vector<Key> key(n);
    std::vector<char> feeds(n, 0);
    for (size_t k = n; k-- > 0;) {
        key[k] = {level[k], k};
        feeds[k] = arithmetic(*body[k]);
        Key first{INT_MAX, 0};
        for (llvm::User* u : body[k]->users())
            if (auto it = at.find(llvm::dyn_cast<Instruction>(u)); it != at.end()) {
                feeds[k] = feeds[k] || feeds[it->second];
                first = std::min(first, key[it->second]);
            }
        if (feeds[k] && !arithmetic(*body[k])) key[k] = first;
    }

    std::vector<size_t> waiting(n);
    using Ready = std::pair<Key, size_t>;
    std::priority_queue<Ready, std::vector<Ready>, std::greater<Ready>> ready;
    for (size_t k = 0; k < n; ++k) {
        waiting[k] = preds[k].size(); // with repeats: succs repeats them as often
        if (waiting[k] == 0) ready.push({key[k], k});
    }
    std::vector<size_t> order;
    order.reserve(n);
    while (!ready.empty()) {
        const size_t k = ready.top().second;
        ready.pop();
        order.push_back(k);
        for (size_t s : succs[k])
            if (--waiting[s] == 0) ready.push({key[s], s});
    }
    if (order.size() != n) return false; // cannot happen: every edge goes forward
    if (std::is_sorted(order.begin(), order.end())) return false; // the order it had
    Instruction* end = bb.getTerminator();
    for (size_t k : order)
        body[k]->moveBefore(end);
    return true;
}

} // namespace

llvm::MDNode* item_loop_hint(llvm::LLVMContext& c) {
    return llvm::MDNode::get(c, {llvm::MDString::get(c, item_loop_marker)});
}

llvm::PreservedAnalyses InterleaveChains::run(llvm::Function& f,
                                              llvm::FunctionAnalysisManager& fam) {
    const llvm::LoopInfo& loops = fam.getResult<llvm::LoopAnalysis>(f);
    llvm::BatchAAResults aa(fam.getResult<llvm::AAManager>(f));
    bool changed = false;
    for (const llvm::Loop* top : loops)
        for (const llvm::Loop* loop : top->getLoopsInPreorder())
            if (llvm::findOptionMDForLoop(loop, item_loop_marker))
                for (llvm::BasicBlock* bb : loop->blocks())
                    changed = interleave_block(*bb, aa) || changed;
    if (!changed) return llvm::PreservedAnalyses::all();
    llvm::PreservedAnalyses kept;
    kept.preserveSet<llvm::CFGAnalyses>();
    return kept;
}

} // namespace plexus::codegen::host
