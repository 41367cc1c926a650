// streaming_stores: after the O3 pipeline, a twin of each work-group function whose loops write
// buffers as contiguous runs of vectors, with those stores non-temporal.
//
// A normal store to a line that is not in the cache first reads the line (read for ownership),
// then writes it back when it is evicted: a kernel that writes an output much larger than the
// cache moves each output byte over the memory bus twice. A non-temporal store (movntps) writes
// whole lines without reading them: vector_add reads two arrays and writes one (4 line
// transfers with normal stores, 3 streaming), dequant_int8 reads one byte and writes four per
// element (9 transfers, 5). The price: the output is not in the cache afterwards, so a consumer
// that would have found it there reads it from memory. Whether that pays depends on the sizes
// of the launch, which the code does not know; so each such function gets a twin, and the
// runtime calls it for a launch that writes more than the cache holds (configuration key
// `streaming_stores`, docs/configuration.md).
//
// A store streams when it is a simple vector store of at least 16 bytes in an innermost loop,
// into a buffer (a pointer the function loads from its HostArgs table), at an address that
// advances by a constant step, and the loop's stores into that buffer with that step cover the
// step exactly (one contiguous run, however LLVM unrolled or interleaved it). Partial lines
// would cost a read at the memory controller instead; scattered stores keep the cache.
//
// Ordering: non-temporal stores are weakly ordered, so the twin ends with sfence before each
// return: the pool reports the group finished after it, and the stores are visible to whoever
// sees that. Within the function a work-item's own later loads see them (program order on one
// core), and the work-items of a group run on one core. A function with an atomic operation or
// a fence (work-groups that talk to each other during the launch) gets no twin: a locked
// instruction is not guaranteed to order non-temporal stores.
#include "codegen/host/streaming.hpp"

#include <llvm/Analysis/LoopInfo.h>
#include <llvm/Analysis/ScalarEvolution.h>
#include <llvm/Analysis/ScalarEvolutionExpressions.h>
#include <llvm/Analysis/ValueTracking.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicsX86.h>
#include <llvm/IR/Module.h>
#include <llvm/Transforms/Utils/Cloning.h>

#include <map>
#include <tuple>
#include <vector>

namespace plexus::codegen::host {
namespace {

// A buffer's elements: a pointer loaded from the HostArgs table, which the function loads
// from its `user` argument.
bool is_buffer(const llvm::Value* base, const llvm::Function& f) {
    auto* elements = llvm::dyn_cast<llvm::LoadInst>(base);
    if (!elements) return false;
    auto* table = llvm::dyn_cast<llvm::LoadInst>(llvm::getUnderlyingObject(elements->getPointerOperand()));
    return table && table->getPointerOperand() == f.getArg(1);
}

// An address with each index's sign or zero extension taken inside its recurrence: sext({a,+,s})
// as {sext a,+,sext s}. Work-item indices are wrapping i32, which SCEV cannot widen; taking
// them as not wrapping only decides how a store is written, never what it writes.
struct Widen : llvm::SCEVRewriteVisitor<Widen> {
    using SCEVRewriteVisitor::SCEVRewriteVisitor;
    const llvm::SCEV* visitSignExtendExpr(const llvm::SCEVSignExtendExpr* e) { return widen(e, true); }
    const llvm::SCEV* visitZeroExtendExpr(const llvm::SCEVZeroExtendExpr* e) { return widen(e, false); }
    const llvm::SCEV* widen(const llvm::SCEVIntegralCastExpr* e, bool sign) {
        llvm::Type* type = e->getType();
        auto extend = [&](const llvm::SCEV* x) {
            return sign ? SE.getSignExtendExpr(x, type) : SE.getZeroExtendExpr(x, type);
        };
        const llvm::SCEV* x = visit(e->getOperand());
        auto* rec = llvm::dyn_cast<llvm::SCEVAddRecExpr>(x);
        if (!rec || !rec->isAffine()) return extend(x);
        return SE.getAddRecExpr(extend(rec->getStart()), extend(rec->getStepRecurrence(SE)), rec->getLoop(),
                                llvm::SCEV::FlagAnyWrap);
    }
};

// The stores of f that stream, or none where f has an atomic operation or a fence.
std::vector<llvm::StoreInst*> streaming_stores(llvm::Function& f, llvm::LoopInfo& loops, llvm::ScalarEvolution& se) {
    const llvm::DataLayout& dl = f.getParent()->getDataLayout();
    // (buffer, loop, step) -> the bytes stored per trip, and the stores.
    std::map<std::tuple<const llvm::Value*, const llvm::Loop*, int64_t>, std::pair<uint64_t, std::vector<llvm::StoreInst*>>> runs;
    for (llvm::BasicBlock& block : f)
        for (llvm::Instruction& i : block) {
            if (i.isAtomic() || llvm::isa<llvm::FenceInst>(i)) return {};
            auto* store = llvm::dyn_cast<llvm::StoreInst>(&i);
            if (!store || !store->isSimple()) continue;
            llvm::Type* type = store->getValueOperand()->getType();
            const uint64_t bytes = dl.getTypeStoreSize(type);
            if (!type->isVectorTy() || bytes < 16) continue;
            llvm::Loop* loop = loops.getLoopFor(&block);
            if (!loop || !loop->isInnermost()) continue;
            Widen widen(se);
            auto* at = llvm::dyn_cast<llvm::SCEVAddRecExpr>(widen.visit(se.getSCEV(store->getPointerOperand())));
            if (!at || at->getLoop() != loop || !at->isAffine()) continue;
            auto* step = llvm::dyn_cast<llvm::SCEVConstant>(at->getStepRecurrence(se));
            auto* base = llvm::dyn_cast<llvm::SCEVUnknown>(se.getPointerBase(at));
            if (!step || step->getAPInt().getSExtValue() <= 0 || !base || !is_buffer(base->getValue(), f)) continue;
            auto& run = runs[{base->getValue(), loop, step->getAPInt().getSExtValue()}];
            run.first += bytes;
            run.second.push_back(store);
        }
    std::vector<llvm::StoreInst*> stores;
    for (auto& [key, run] : runs)
        if (run.first == uint64_t(std::get<2>(key))) stores.insert(stores.end(), run.second.begin(), run.second.end());
    return stores;
}

} // namespace

llvm::PreservedAnalyses StreamingStores::run(llvm::Module& m, llvm::ModuleAnalysisManager& mam) {
    auto& fam = mam.getResult<llvm::FunctionAnalysisManagerModuleProxy>(m).getManager();
    std::vector<std::pair<llvm::Function*, std::vector<llvm::StoreInst*>>> twins;
    for (llvm::Function& f : m) {
        if (f.isDeclaration() || !f.getName().starts_with("plx_wg_") || f.arg_size() != 2) continue;
        auto stores = streaming_stores(f, fam.getResult<llvm::LoopAnalysis>(f), fam.getResult<llvm::ScalarEvolutionAnalysis>(f));
        if (!stores.empty()) twins.emplace_back(&f, std::move(stores));
    }
    if (twins.empty()) return llvm::PreservedAnalyses::all();
    llvm::LLVMContext& context = m.getContext();
    llvm::MDNode* nontemporal = llvm::MDNode::get(
        context, llvm::ConstantAsMetadata::get(llvm::ConstantInt::get(llvm::Type::getInt32Ty(context), 1)));
    llvm::Function* sfence = llvm::Intrinsic::getDeclaration(&m, llvm::Intrinsic::x86_sse_sfence);
    for (auto& [f, stores] : twins) {
        llvm::ValueToValueMapTy map;
        llvm::Function* twin = llvm::CloneFunction(f, map);
        twin->setName(streaming_name(f->getName().str()));
        for (llvm::StoreInst* store : stores)
            llvm::cast<llvm::StoreInst>(map[store])->setMetadata(llvm::LLVMContext::MD_nontemporal, nontemporal);
        for (llvm::BasicBlock& block : *twin)
            if (auto* ret = llvm::dyn_cast<llvm::ReturnInst>(block.getTerminator()))
                llvm::CallInst::Create(sfence, {}, "", ret->getIterator());
    }
    return llvm::PreservedAnalyses::none();
}

} // namespace plexus::codegen::host
