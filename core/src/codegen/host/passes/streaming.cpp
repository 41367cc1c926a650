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
// runtime calls it for a launch whose buffers take at least what the cache holds
// (configuration key `streaming_stores`, docs/configuration.md).
//
// A store streams when it is a vector store (plain, or masked: a vectorized `if (i < n)`) of
// at least 16 bytes, a power of two, into a buffer (a pointer the function loads from its
// HostArgs table), at an address that advances by a constant step in its loop, and the loop's
// stores into that buffer with that step whose starts are a constant apart cover the step
// exactly (one contiguous run, however LLVM unrolled or interleaved it; stores may overlap,
// as a full chunk's vector and a partial chunk's work-items do on paths that exclude each
// other, which changes only how they are written; each of vector_add's four outputs a group
// apart is a run of its own). Partial lines would cost a read at the
// memory controller instead; scattered stores keep the cache. Not f16 or bf16 vectors, whose
// hint LLVM 19's x86 lowering drops.
//
// Ordering: non-temporal stores are weakly ordered, so the twin ends with sfence before each
// return: the pool reports the group finished after it, and the stores are visible to whoever
// sees that. Within the function a work-item's own later loads see them (program order on one
// core), and the work-items of a group run on one core. A function with an atomic operation or
// a fence (work-groups that talk to each other during the launch) gets no twin: a locked
// instruction is not guaranteed to order non-temporal stores.
#include "codegen/host/passes/streaming.hpp"
#include "codegen/host/passes/buffers.hpp"

#include <llvm/Analysis/LoopInfo.h>
#include <llvm/Analysis/ScalarEvolution.h>
#include <llvm/Analysis/ScalarEvolutionExpressions.h>
#include <llvm/Analysis/ValueTracking.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/IntrinsicsX86.h>
#include <llvm/IR/Module.h>
#include <llvm/Transforms/Utils/BasicBlockUtils.h>
#include <llvm/Transforms/Utils/Cloning.h>

#include <algorithm>
#include <map>
#include <optional>
#include <tuple>
#include <vector>

namespace plexus::codegen::host {
namespace {

// An address with each index's sign or zero extension taken inside its sums and recurrences:
// sext(a + b) as sext a + sext b, sext({a,+,s}) as {sext a,+,sext s}. Work-item indices are
// wrapping i32, which SCEV cannot widen; taking them as not wrapping only decides how a store
// is written, never what it writes. An index LoopVectorize took from a lane of a vector it
// built from a scalar (`extractelement (splat(x) + <0, 1, ...>), 0`, where the vector has
// other users) is that lane's sum.
struct Widen : llvm::SCEVRewriteVisitor<Widen> {
    using SCEVRewriteVisitor::SCEVRewriteVisitor;
    const llvm::SCEV* visitSignExtendExpr(const llvm::SCEVSignExtendExpr* e) {
        return widen(e, true);
    }
    const llvm::SCEV* visitZeroExtendExpr(const llvm::SCEVZeroExtendExpr* e) {
        return widen(e, false);
    }
    const llvm::SCEV* visitUnknown(const llvm::SCEVUnknown* e) {
        auto* extract = llvm::dyn_cast<llvm::ExtractElementInst>(e->getValue());
        auto* index =
            extract ? llvm::dyn_cast<llvm::ConstantInt>(extract->getIndexOperand()) : nullptr;
        const llvm::SCEV* x =
            index ? lane(extract->getVectorOperand(), unsigned(index->getZExtValue()), 0) : nullptr;
        return x ? x : e;
    }
    // Lane i of an integer vector built of splats, constants and sums; nullptr: something else.
    const llvm::SCEV* lane(llvm::Value* v, unsigned i, unsigned depth) {
        if (depth > 8) return nullptr;
        if (auto* c = llvm::dyn_cast<llvm::Constant>(v)) {
            auto* x = llvm::dyn_cast_or_null<llvm::ConstantInt>(c->getAggregateElement(i));
            return x ? SE.getConstant(x) : nullptr;
        }
        if (auto* insert = llvm::dyn_cast<llvm::InsertElementInst>(v)) {
            auto* at = llvm::dyn_cast<llvm::ConstantInt>(insert->getOperand(2));
            if (!at) return nullptr;
            return at->getZExtValue() == i ? SE.getSCEV(insert->getOperand(1))
                                           : lane(insert->getOperand(0), i, depth + 1);
        }
        if (auto* shuffle = llvm::dyn_cast<llvm::ShuffleVectorInst>(v)) {
            const int m = shuffle->getMaskValue(i);
            const int n = int(llvm::cast<llvm::FixedVectorType>(shuffle->getOperand(0)->getType())
                                  ->getNumElements());
            if (m < 0) return nullptr;
            return lane(shuffle->getOperand(m < n ? 0 : 1), unsigned(m % n), depth + 1);
        }
        auto* op = llvm::dyn_cast<llvm::BinaryOperator>(v);
        const bool sum = op && (op->getOpcode() == llvm::Instruction::Add ||
                                (op->getOpcode() == llvm::Instruction::Or &&
                                 llvm::cast<llvm::PossiblyDisjointInst>(op)->isDisjoint()));
        if (!sum) return nullptr;
        const llvm::SCEV* a = lane(op->getOperand(0), i, depth + 1);
        const llvm::SCEV* b = a ? lane(op->getOperand(1), i, depth + 1) : nullptr;
        return b ? SE.getAddExpr(a, b) : nullptr;
    }
    const llvm::SCEV* widen(const llvm::SCEVIntegralCastExpr* e, bool sign) {
        llvm::Type* type = e->getType();
        auto extend = [&](const llvm::SCEV* x) {
            return visit(sign ? SE.getSignExtendExpr(x, type) : SE.getZeroExtendExpr(x, type));
        };
        const llvm::SCEV* x = e->getOperand();
        if (llvm::isa<llvm::SCEVUnknown>(x)) x = visit(x);
        if (auto* sum = llvm::dyn_cast<llvm::SCEVAddExpr>(x)) {
            llvm::SmallVector<const llvm::SCEV*, 4> terms;
            for (const llvm::SCEV* t : sum->operands())
                terms.push_back(extend(t));
            return SE.getAddExpr(terms);
        }
        if (auto* rec = llvm::dyn_cast<llvm::SCEVAddRecExpr>(x); rec && rec->isAffine())
            return SE.getAddRecExpr(extend(rec->getStart()), extend(rec->getStepRecurrence(SE)),
                                    rec->getLoop(), llvm::SCEV::FlagAnyWrap);
        return sign ? SE.getSignExtendExpr(x, type) : SE.getZeroExtendExpr(x, type);
    }
};

// A store the twin may make non-temporal: a simple store or a masked store (llvm.masked.store,
// a vectorized `if (i < n) out[i] = ...`) of a vector.
struct Access {
    llvm::Instruction* store;
    llvm::Value* pointer;
    llvm::Value* value;
    llvm::Align align;
    llvm::Value* mask = nullptr; // masked stores
};
std::optional<Access> access_of(llvm::Instruction& i) {
    if (auto* store = llvm::dyn_cast<llvm::StoreInst>(&i); store && store->isSimple())
        return Access{store, store->getPointerOperand(), store->getValueOperand(),
                      store->getAlign()};
    auto* call = llvm::dyn_cast<llvm::IntrinsicInst>(&i);
    if (!call || call->getIntrinsicID() != llvm::Intrinsic::masked_store) return std::nullopt;
    auto* align = llvm::cast<llvm::ConstantInt>(call->getArgOperand(2));
    return Access{call, call->getArgOperand(1), call->getArgOperand(0),
                  llvm::Align(align->getZExtValue()), call->getArgOperand(3)};
}

// The stores of f that stream, or none where f has an atomic operation or a fence. Stores into
// one buffer with one step in one loop form runs (their starts a constant apart: an unrolled
// or interleaved loop's stores, or one store alone); a run streams when its stores cover the
// step exactly.
std::vector<Access> streaming_stores(llvm::Function& f, llvm::LoopInfo& loops,
                                     llvm::ScalarEvolution& se) {
    const llvm::DataLayout& dl = f.getParent()->getDataLayout();
    struct Store {
        Access access;
        const llvm::SCEV* start;
        uint64_t bytes;
    };
    std::map<std::tuple<const llvm::Value*, const llvm::Loop*, int64_t>, std::vector<Store>> groups;
    for (llvm::BasicBlock& block : f)
        for (llvm::Instruction& i : block) {
            if (i.isAtomic() || llvm::isa<llvm::FenceInst>(i)) return {};
            std::optional<Access> a = access_of(i);
            if (!a) continue;
            llvm::Type* type = a->value->getType();
            const uint64_t bytes = dl.getTypeStoreSize(type);
            if (!type->isVectorTy() || bytes < 16 || !llvm::isPowerOf2_64(bytes)) continue;
            // LLVM 19's x86 lowering drops the hint on a store of converted f16 or bf16 lanes
            // (vcvtps2ph then a plain vmovaps, checked with llc-19): no branch for nothing.
            if (type->getScalarType()->isHalfTy() || type->getScalarType()->isBFloatTy()) continue;
            llvm::Loop* loop = loops.getLoopFor(&block);
            if (!loop) continue;
            Widen widen(se);
            auto* at = llvm::dyn_cast<llvm::SCEVAddRecExpr>(widen.visit(se.getSCEV(a->pointer)));
            if (!at || at->getLoop() != loop || !at->isAffine()) continue;
            auto* step = llvm::dyn_cast<llvm::SCEVConstant>(at->getStepRecurrence(se));
            auto* base = llvm::dyn_cast<llvm::SCEVUnknown>(se.getPointerBase(at));
            if (!step || step->getAPInt().getSExtValue() <= 0 || !base ||
                !is_buffer(base->getValue(), f))
                continue;
            groups[{base->getValue(), loop, step->getAPInt().getSExtValue()}].push_back(
                {*a, at->getStart(), bytes});
        }
    std::vector<Access> stores;
    for (auto& [key, group] : groups) {
        std::vector<bool> taken(group.size());
        for (size_t r = 0; r < group.size(); ++r) {
            if (taken[r]) continue;
            // The run's stores as byte ranges from the first one's start; they may overlap (a
            // full chunk's vector and a partial chunk's work-items, on exclusive paths).
            std::vector<std::pair<int64_t, int64_t>> ranges;
            std::vector<size_t> run;
            for (size_t j = r; j < group.size(); ++j)
                if (auto* d = llvm::dyn_cast<llvm::SCEVConstant>(
                        se.getMinusSCEV(group[j].start, group[r].start));
                    !taken[j] && d) {
                    taken[j] = true;
                    run.push_back(j);
                    const int64_t at = d->getAPInt().getSExtValue();
                    ranges.emplace_back(at, at + int64_t(group[j].bytes));
                }
            std::sort(ranges.begin(), ranges.end());
            int64_t end = ranges.front().first;
            bool gap = false;
            for (auto [from, to] : ranges) {
                gap = gap || from > end;
                end = std::max(end, to);
            }
            if (!gap && end - ranges.front().first == std::get<2>(key))
                for (size_t j : run)
                    stores.push_back(group[j].access);
        }
    }
    return stores;
}

// In the twin: `store` made non-temporal. A vector store needs its own size of alignment, up
// to the 64 bytes of the widest register, to be movntps (LLVM writes an under-aligned one in
// 8 or 16-byte pieces, and one wider than a register in register-wide pieces); buffers are
// 64-byte aligned, so where LLVM only knows less the store branches on the address. A masked
// store streams where every lane is on (the full chunks), else stays masked.
void make_streaming(const Access& a, llvm::MDNode* nontemporal) {
    const uint64_t bytes = std::min<uint64_t>(
        a.store->getModule()->getDataLayout().getTypeStoreSize(a.value->getType()), 64);
    if (!a.mask && a.align.value() >= bytes) {
        a.store->setMetadata(llvm::LLVMContext::MD_nontemporal, nontemporal);
        return;
    }
    llvm::IRBuilder<> b(a.store);
    llvm::Value* go = a.mask ? b.CreateAndReduce(a.mask) : nullptr;
    if (a.align.value() < bytes) {
        llvm::Value* low =
            b.CreateAnd(b.CreatePtrToInt(a.pointer, b.getInt64Ty()), b.getInt64(bytes - 1));
        llvm::Value* aligned = b.CreateICmpEQ(low, b.getInt64(0));
        go = go ? b.CreateAnd(go, aligned) : aligned;
    }
    // A branch on poison would be undefined where the store itself was not.
    go = b.CreateFreeze(go);
    llvm::Instruction *then_end = nullptr, *else_end = nullptr;
    llvm::SplitBlockAndInsertIfThenElse(go, a.store->getIterator(), &then_end, &else_end);
    a.store->moveBefore(else_end);
    b.SetInsertPoint(then_end);
    llvm::StoreInst* whole = b.CreateAlignedStore(a.value, a.pointer, llvm::Align(bytes));
    whole->copyMetadata(*a.store);
    whole->setMetadata(llvm::LLVMContext::MD_nontemporal, nontemporal);
}

} // namespace

llvm::PreservedAnalyses StreamingStores::run(llvm::Module& m, llvm::ModuleAnalysisManager& mam) {
    auto& fam = mam.getResult<llvm::FunctionAnalysisManagerModuleProxy>(m).getManager();
    std::vector<std::pair<llvm::Function*, std::vector<Access>>> twins;
    for (llvm::Function& f : m) {
        if (f.isDeclaration() || !f.getName().starts_with("plx_wg_") || f.arg_size() != 2) continue;
        auto stores = streaming_stores(f, fam.getResult<llvm::LoopAnalysis>(f),
                                       fam.getResult<llvm::ScalarEvolutionAnalysis>(f));
        if (!stores.empty()) twins.emplace_back(&f, std::move(stores));
    }
    if (twins.empty()) return llvm::PreservedAnalyses::all();
    llvm::LLVMContext& context = m.getContext();
    llvm::MDNode* nontemporal = llvm::MDNode::get(
        context,
        llvm::ConstantAsMetadata::get(llvm::ConstantInt::get(llvm::Type::getInt32Ty(context), 1)));
    llvm::Function* sfence = llvm::Intrinsic::getDeclaration(&m, llvm::Intrinsic::x86_sse_sfence);
    for (auto& [f, stores] : twins) {
        llvm::ValueToValueMapTy map;
        llvm::Function* twin = llvm::CloneFunction(f, map);
        twin->setName(streaming_name(f->getName().str()));
        for (const Access& a : stores) {
            auto* store = llvm::cast<llvm::Instruction>(map[a.store]);
            make_streaming(*access_of(*store), nontemporal);
        }
        for (llvm::BasicBlock& block : *twin)
            if (auto* ret = llvm::dyn_cast<llvm::ReturnInst>(block.getTerminator()))
                llvm::CallInst::Create(sfence, {}, "", ret->getIterator());
    }
    return llvm::PreservedAnalyses::none();
}

} // namespace plexus::codegen::host
