// WidenIndices: 64-bit inductions for the buffer indices of a work-item's own loops.
//
// Integers wrap in the IR (docs/ir.md), so a loop `while (i + step < end) { acc0 += in[i];
// acc1 += in[i + step]; i += 2 * step; }` keeps i as a wrapping i32 and addresses in[i] as
// in + 16 * sext(i): on each trip an add, a sign extension and a shift per access (warp_reduce's
// loop on a CPU: 12 instructions per 32 bytes). SCEV cannot widen i, since i may wrap. But an
// access outside a buffer or array, a negative index included, is undefined, and that decides
// it: let D be a load or store whose address is exactly x[sext(V)], x a buffer's first
// element, V an affine recurrence {S, +, X} of loop L (i32, X invariant), D on every trip (its
// block dominates the latch).
// If V first wraps at trip m, then either X > 0 and V_m is negative, and D reads x[V_m] on trip
// m if trip m gets that far; or X < 0 and V_{m-1} was already negative (it is below
// -2^31 - X <= -1), and trip m - 1, which completed, read x[V_{m-1}]. So wherever D has run in
// the current trip, either V has not wrapped and sext(V) equals the 64-bit recurrence
// {sext S, +, sext X}, or the program read outside the buffer: every use of sext(V) that D
// dominates may take the 64-bit recurrence instead (loop strength reduction then keeps a
// pointer per access). Uses D does not dominate keep sext(V): on the trip where V wraps they
// may run without D (x[V + 2] with V = -2 is element 0). The base must be the buffer's own
// start: LLVM moves constant offsets into it (x[V + 1] as (x + 1)[V]) and splits an i64 index
// into base and sext (x[i64(V) + b] as (x + b)[sext V]), and there a negative V is no
// evidence of anything: an i64 index may be in bounds however V wrapped.
#include "codegen/host/passes/widen.hpp"
#include "codegen/host/passes/buffers.hpp"

#include <llvm/Analysis/LoopInfo.h>
#include <llvm/Analysis/ScalarEvolution.h>
#include <llvm/Analysis/ScalarEvolutionExpressions.h>
#include <llvm/IR/Dominators.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Module.h>
#include <llvm/Transforms/Utils/Local.h>
#include <llvm/Transforms/Utils/LoopUtils.h>
#include <llvm/Transforms/Utils/ScalarEvolutionExpander.h>

#include <vector>

namespace plexus::codegen::host {
namespace {

// The sign extension D's address indexes with, where D is a simple load or store at x[sext(V)]
// (a GEP of one index), V an i32 affine recurrence of `loop` with an invariant step.
llvm::SExtInst* direct_index(llvm::Instruction& d, const llvm::Loop& loop,
                             llvm::ScalarEvolution& se) {
    llvm::Value* address = nullptr;
    if (auto* load = llvm::dyn_cast<llvm::LoadInst>(&d); load && load->isSimple())
        address = load->getPointerOperand();
    else if (auto* store = llvm::dyn_cast<llvm::StoreInst>(&d); store && store->isSimple())
        address = store->getPointerOperand();
    auto* gep = llvm::dyn_cast_or_null<llvm::GetElementPtrInst>(address);
    if (!gep || gep->getNumIndices() != 1 || !is_buffer(gep->getPointerOperand(), *d.getFunction()))
        return nullptr;
    auto* index = llvm::dyn_cast<llvm::SExtInst>(gep->getOperand(1));
    if (!index || !index->getSrcTy()->isIntegerTy(32) || !index->getDestTy()->isIntegerTy(64))
        return nullptr;
    auto* rec = llvm::dyn_cast<llvm::SCEVAddRecExpr>(se.getSCEV(index->getOperand(0)));
    if (!rec || rec->getLoop() != &loop || !rec->isAffine() ||
        !se.isLoopInvariant(rec->getStepRecurrence(se), &loop))
        return nullptr;
    return index;
}

} // namespace

llvm::PreservedAnalyses WidenIndices::run(llvm::Function& f, llvm::FunctionAnalysisManager& fam) {
    if (!f.getName().starts_with("plx_wg_")) return llvm::PreservedAnalyses::all();
    auto& loops = fam.getResult<llvm::LoopAnalysis>(f);
    auto& dt = fam.getResult<llvm::DominatorTreeAnalysis>(f);
    auto& se = fam.getResult<llvm::ScalarEvolutionAnalysis>(f);
    struct Widening {
        llvm::Instruction* d;
        llvm::SExtInst* index;
        llvm::Loop* loop;
    };
    std::vector<Widening> found;
    for (llvm::Loop* loop : loops.getLoopsInPreorder()) {
        llvm::BasicBlock* latch = loop->getLoopLatch();
        if (!latch) continue;
        for (llvm::BasicBlock* block : loop->blocks()) {
            if (loops.getLoopFor(block) != loop || !dt.dominates(block, latch)) continue;
            for (llvm::Instruction& d : *block)
                if (llvm::SExtInst* index = direct_index(d, *loop, se))
                    found.push_back({&d, index, loop});
        }
    }
    if (found.empty()) return llvm::PreservedAnalyses::all();
    llvm::SCEVExpander expander(se, f.getParent()->getDataLayout(), "widened");
    std::vector<llvm::WeakTrackingVH> replaced;
    bool changed = false;
    for (const Widening& w : found) {
        // The 64-bit recurrence starts in the preheader (after O3, the block before a loop may
        // branch elsewhere too).
        if (!w.loop->getLoopPreheader()) {
            if (!llvm::InsertPreheaderForLoop(w.loop, &dt, &loops, nullptr, false)) continue;
            se.forgetLoop(w.loop);
        }
        auto* rec = llvm::dyn_cast<llvm::SCEVAddRecExpr>(se.getSCEV(w.index->getOperand(0)));
        if (!rec || rec->getLoop() != w.loop) continue;
        llvm::Type* i64 = w.index->getType();
        const llvm::SCEV* wide = se.getAddRecExpr(
            se.getSignExtendExpr(rec->getStart(), i64),
            se.getSignExtendExpr(rec->getStepRecurrence(se), i64), w.loop, llvm::SCEV::FlagAnyWrap);
        llvm::Value* value =
            expander.expandCodeFor(wide, i64, w.loop->getHeader()->getFirstNonPHIIt());
        // Uses of `from` in the loop that D has run before on the same trip take `to`.
        auto replace = [&](llvm::Value* from, llvm::Value* to) {
            std::vector<llvm::Use*> uses;
            for (llvm::Use& u : from->uses())
                if (w.loop->contains(llvm::cast<llvm::Instruction>(u.getUser())) &&
                    dt.dominates(w.d, u))
                    uses.push_back(&u);
            for (llvm::Use* u : uses)
                u->set(to);
        };
        replace(w.index, value);
        // D's own address, which comes before D (and may be shared with other accesses, such
        // as x[i + 1] addressed as &x[i] + 1): a new one for D, which the later uses take.
        const unsigned at = llvm::isa<llvm::LoadInst>(w.d) ? 0 : 1;
        auto* gep = llvm::cast<llvm::GetElementPtrInst>(w.d->getOperand(at));
        auto* own =
            llvm::GetElementPtrInst::Create(gep->getSourceElementType(), gep->getPointerOperand(),
                                            {value}, gep->getName() + ".wide", w.d->getIterator());
        own->setIsInBounds(gep->isInBounds());
        w.d->setOperand(at, own);
        replace(gep, own);
        replaced.emplace_back(gep);
        replaced.emplace_back(w.index);
        changed = true;
    }
    expander.clear();
    // What nothing reads now (no pass after this one would remove it).
    for (llvm::WeakTrackingVH& v : replaced)
        if (v) llvm::RecursivelyDeleteTriviallyDeadInstructions(v);
    return changed ? llvm::PreservedAnalyses::none() : llvm::PreservedAnalyses::all();
}

} // namespace plexus::codegen::host
