// The work-group function's structure: the prologue that reads the launch context, the loops
// over work-items, and group control (once per group, around the regions that barriers
// separate); the statements inside a region are the shared lowering's.
#include "codegen/host/lower/host_lowering.hpp"
#include "codegen/host/passes/interleave.hpp"

#include <llvm/Analysis/ValueTracking.h>
#include <llvm/IR/Intrinsics.h>

#include <cstddef>

namespace plexus::codegen::host {

using namespace ir;
using llvm::BasicBlock;
using llvm::Value;

static_assert(sizeof(size_t) == 8, "the host code reads local_mem_bytes as a 64-bit size_t");

namespace {

// Whether evaluating the expression again gives the same value, by the rule the Layout's
// Recompute variables follow: no load (a work-item may store in between), atomic, or call but
// the index ones.
bool pure(const Expr& e) {
    if (e->kind == ExprKind::Load || e->kind == ExprKind::Atomic) return false;
    if (e->kind == ExprKind::Call && !is_index_call(static_cast<const Call&>(*e).name))
        return false;
    bool all = true;
    for_each_child(*e, [&](const Expr& c) { all = all && pure(c); });
    return all;
}

// A region that is a bounds guard, `i = global_id(0); if (i < n) { ... }`: Lets of pure values,
// then one If without an else on a pure condition. Returns the If (nullptr: not one) and puts
// the Lets in `lets`. A region that is a single block is its statements.
const If* bounds_guard(const std::vector<const Stmt*>& stmts, std::vector<const Stmt*>& lets) {
    std::vector<const Stmt*> list = stmts;
    while (list.size() == 1 && *list[0] && (*list[0])->kind == StmtKind::Block) {
        const auto& body = static_cast<const Block&>(**list[0]).body;
        list.clear();
        for (const Stmt& s : body)
            list.push_back(&s);
    }
    if (list.empty() || !*list.back() || (*list.back())->kind != StmtKind::If) return nullptr;
    const auto& guard = static_cast<const If&>(**list.back());
    if (guard.else_body || !pure(guard.cond)) return nullptr;
    lets.clear();
    for (size_t i = 0; i + 1 < list.size(); ++i) {
        if (!*list[i] || (*list[i])->kind != StmtKind::Let ||
            !pure(static_cast<const Let&>(**list[i]).init))
            return nullptr;
        lets.push_back(list[i]);
    }
    return &guard;
}

// Whether a statement list branches per work-item (a mask, once vectorized).
bool branches(const std::vector<const Stmt*>& stmts) {
    for (const Stmt* s : stmts)
        if (any_nested(*s, [](const StmtNode& x) {
                switch (x.kind) {
                case StmtKind::If:
                case StmtKind::For:
                case StmtKind::While:
                case StmtKind::Match:
                case StmtKind::Return:
                case StmtKind::Break:
                case StmtKind::Continue:
                case StmtKind::Native: return true;
                default: return false;
                }
            }))
            return true;
    return false;
}

} // namespace

HostLowering::HostLowering(const Kernel& k, const Options& o, const Layout& l, const HostTarget& t,
                           llvm::Module& m)
    : LlvmLowering(k, o, m, "host code generation"), layout_(l), target_(t) {}

Value* HostLowering::field(Value* base, size_t offset, llvm::Type* t, const char* name) {
    return b_.CreateLoad(t, b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), base, offset), name);
}

void HostLowering::counted_loop(Value* n, const char* name,
                                const std::function<void(Value*, BasicBlock*)>& body, Value* from) {
    BasicBlock* pre = b_.GetInsertBlock();
    BasicBlock* header = new_block(std::string(name) + ".head");
    BasicBlock* inside = new_block(std::string(name) + ".body");
    BasicBlock* latch = new_block(std::string(name) + ".next");
    BasicBlock* exit = new_block(std::string(name) + ".end");
    b_.CreateBr(header);
    b_.SetInsertPoint(header);
    llvm::PHINode* i = b_.CreatePHI(b_.getInt32Ty(), 2, name);
    i->addIncoming(from ? from : b_.getInt32(0), pre);
    b_.CreateCondBr(b_.CreateICmpULT(i, n), inside, exit);
    b_.SetInsertPoint(inside);
    body(i, latch);
    if (!terminated()) b_.CreateBr(latch);
    b_.SetInsertPoint(latch);
    // The counter is ours and stays below the u32 local size: the increment cannot wrap.
    Value* next = b_.CreateAdd(i, b_.getInt32(1), std::string(name) + ".inc", /*HasNUW=*/true);
    b_.CreateBr(header);
    i->addIncoming(next, latch);
    b_.SetInsertPoint(exit);
}

// z, y, x loops over the work-items of the group, x innermost so that consecutive work-items
// touch consecutive elements and the x loop vectorizes. With vectors of W 32-bit lanes, x runs
// in chunks of W work-items, a loop of exactly W iterations each (which LoopVectorize turns
// into one vector iteration), then the remaining x % W one by one. Inside a chunk, x is a
// multiple of W plus a constant lane, so InstCombine sees that `x / 16` is the same in every
// lane (a broadcast instead of a gather) and `x % 16` is the lane: the indexing of tiles by
// `tid / cols` and `tid % cols` that GPU kernels use. The region is emitted twice for that
// (the chunks and the rest), each time with the declarations numbered from the same point.
void HostLowering::item_loops(const std::function<void()>& body,
                              const std::vector<const Stmt*>* stmts, bool per_item) {
    llvm::Type* i64 = b_.getInt64Ty();
    Value* lx = b_.CreateZExt(local_size_[0], i64);
    Value* ly = b_.CreateZExt(local_size_[1], i64);
    const unsigned lanes = target_.lanes();
    // No-wrap flags: an index within a group is below the group size, which devices bound
    // far under 2^31.
    counted_loop(local_size_[2], "wi.z", [&](Value* z, BasicBlock*) {
        counted_loop(local_size_[1], "wi.y", [&](Value* y, BasicBlock*) {
            Value* zy = b_.CreateAdd(b_.CreateMul(b_.CreateZExt(z, i64), ly, "", true, true),
                                     b_.CreateZExt(y, i64), "", true, true);
            Value* row = b_.CreateMul(zy, lx, "wi.row", true, true);
            const size_t decls = next_decl_, scope = scope_.size();
            // One work-item: `what` (the region's statements) with x as the local id.
            auto item = [&](Value* x, BasicBlock* latch, const std::function<void()>& what) {
                Value* linear = b_.CreateAdd(row, b_.CreateZExt(x, i64), "wi", true, true);
                Item it{{x, y, z}, linear, latch};
                const Item* saved = item_;
                item_ = &it;
                rehome_region_locals();
                loops_.push_back({nullptr, nullptr}); // no break leaves a region
                what();
                loops_.pop_back();
                item_ = saved;
            };
            // A parallel x loop from `from` to `n` (nullptr: 0); `kind`: see mark_parallel.
            auto x_loop = [&](const char* name, Value* n, Value* from,
                              const std::function<Value*(Value*)>& id, XLoop kind,
                              const std::function<void()>& what) {
                BasicBlock* before = &f_->back();
                BasicBlock* x_latch = nullptr;
                counted_loop(
                    n, name,
                    [&](Value* x, BasicBlock* latch) {
                        item(id(x), latch, what);
                        x_latch = latch;
                    },
                    from);
                mark_parallel(before, x_latch, kind, lanes);
            };
            auto same = [](Value* x) { return x; };
            const bool vectors = stmts && lockstep_vectors(*stmts);
            if (lanes < 2 || per_item) {
                if (vectors) split_veto_ = true;
                x_loop("wi.x", local_size_[0], nullptr, same, per_item ? XLoop::Item : XLoop::Whole,
                       body);
                return;
            }
            const unsigned shift = llvm::Log2_32(lanes);
            Value* chunks = b_.CreateLShr(local_size_[0], shift, "wi.chunks");
            const bool in_step = stmts && lockstep_fits(*stmts);
            if (in_step && vectors) f_->addFnAttr(split_vectors_attribute);
            std::vector<const Stmt*> lets;
            const If* guard =
                vectors && !in_step && params_init_.empty() ? bounds_guard(*stmts, lets) : nullptr;
            if (guard)
                split_guards_ = true;
            else if (vectors && !in_step && branches(*stmts))
                split_veto_ = true;
            counted_loop(chunks, "wi.xc", [&](Value* c, BasicBlock*) {
                Value* first = b_.CreateShl(c, shift, "wi.first", true, true);
                auto in_chunk = [&](Value* lane) {
                    return b_.CreateAdd(first, lane, "wi.xl", true, true);
                };
                if (guard) {
                    guarded_chunk(
                        *guard, lets, decls, scope,
                        [&](const char* name, const std::function<void()>& what) {
                            x_loop(name, b_.getInt32(lanes), nullptr, in_chunk, XLoop::Chunk, what);
                        },
                        body);
                    return;
                }
                if (in_step) {
                    // A region holding loops: its chunks run in lock step (lockstep.cpp).
                    const Lanes chunk{first, y, z, row, lanes};
                    lanes_ = &chunk;
                    region_ = stmts;
                    rehome_region_locals();
                    for (const Stmt* s : *stmts)
                        lockstep(*s, nullptr);
                    lanes_ = nullptr;
                    region_ = nullptr;
                    return;
                }
                x_loop("wi.x", b_.getInt32(lanes), nullptr, in_chunk, XLoop::Chunk, body);
            });
            next_decl_ = decls;
            scope_.resize(scope);
            x_loop("wi.xr", local_size_[0], b_.CreateShl(chunks, shift, "", true, true), same,
                   XLoop::Rest, body);
        });
    });
}

// A chunk of a bounds-guarded region that computes vectors (vector_add_float4's `if (i < n)
// c[i] = a[i] + b[i]`): LoopVectorize widens a float4 only once it is split into floats (the
// function's split_vectors_attribute), and then each work-item's four floats are a group of
// four interleaved accesses, which x86 vectorizes as plain wide loads and stores, but not
// under a mask (masked interleaved groups are off for x86 in LLVM 19; gathers and scatters
// instead, at a quarter of the speed: docs/benchmarks.md). So the chunk asks first whether the
// guard holds for all its W work-items (a loop of the Lets and the condition, which reads no
// memory), and if so runs the guarded statements without the If, a loop of 64-byte accesses;
// else the region as written. With a bounds check (`i < n`), only the chunks at the end of
// the grid take the second way.
// `loop(name, what)` emits a loop over the chunk's work-items running `what` for each;
// `decls` and `scope` are where the region's declarations start, for each copy.
void HostLowering::guarded_chunk(
    const If& guard, const std::vector<const Stmt*>& lets, size_t decls, size_t scope,
    const std::function<void(const char*, const std::function<void()>&)>& loop,
    const std::function<void()>& body) {
    auto restart = [&] {
        next_decl_ = decls;
        scope_.resize(scope);
    };
    llvm::Type* flag = b_.getInt1Ty();
    llvm::AllocaInst* all = entry_alloca(flag, "wi.all");
    b_.CreateStore(b_.getTrue(), all);
    loop("wi.xg", [&] {
        for (const Stmt* s : lets)
            stmt(*s);
        b_.CreateStore(b_.CreateAnd(b_.CreateLoad(flag, all), expr(guard.cond)), all);
    });
    restart();
    BasicBlock* full = new_block("wi.full");
    BasicBlock* partial = new_block("wi.partial");
    b_.CreateCondBr(b_.CreateLoad(flag, all), full, partial);
    b_.SetInsertPoint(full);
    loop("wi.x", [&] {
        for (const Stmt* s : lets)
            stmt(*s);
        nested(guard.then_body);
    });
    BasicBlock* full_end = b_.GetInsertBlock();
    restart();
    b_.SetInsertPoint(partial);
    loop("wi.x", body);
    BasicBlock* joined = new_block("wi.joined");
    b_.CreateBr(joined);
    b_.SetInsertPoint(full_end);
    b_.CreateBr(joined);
    b_.SetInsertPoint(joined);
}

// The x loop's iterations are work-items between two barriers: nothing orders one work-item's
// memory accesses against another's there (a kernel whose result depended on it would race on
// a GPU), so the loop is marked parallel (llvm.loop.parallel_accesses) and LoopVectorize needs
// no dependence proof and no run-time alias checks between buffers, group-local memory
// included; each vector lane stays in its own program order. Accesses to stack memory (a
// private array the work-items reuse in turn; not a lock-step lane array, whose slots are the
// lanes' own) and atomics and fences stay unmarked: those do
// depend on the order of work-items, and one unmarked access leaves the whole loop to
// LLVM's own dependence analysis. `after`: the last block before the loop's blocks.
// A chunk's loop (W = `lanes` iterations) is not unrolled (fully unrolled before LoopVectorize
// runs, it would be W scalar copies) and is vectorized by W whatever its trip count: below 16
// iterations LoopVectorize otherwise treats a loop as too short to pay for the run-time checks
// that sign-extended i32 indices need, and left the 256-bit chunks scalar. The hint also lets
// it reorder floating-point reductions across iterations, which a loop over work-items does
// not have: no variable carries a value from one work-item to the next. The rest after the
// chunks (fewer than W work-items) stays scalar and rolled: vectorized and unrolled it tripled
// the code of a large region for nothing (matmul_tiled compiled in 3.8 s instead of 0.6).
void HostLowering::mark_parallel(BasicBlock* after, BasicBlock* latch, XLoop kind, unsigned lanes) {
    llvm::MDNode* group = llvm::MDNode::getDistinct(c_, {});
    for (auto it = std::next(after->getIterator()); it != f_->end(); ++it)
        for (llvm::Instruction& inst : *it) {
            Value* address = nullptr;
            if (auto* load = llvm::dyn_cast<llvm::LoadInst>(&inst); load && load->isSimple())
                address = load->getPointerOperand();
            else if (auto* store = llvm::dyn_cast<llvm::StoreInst>(&inst);
                     store && store->isSimple())
                address = store->getPointerOperand();
            const Value* object = address ? llvm::getUnderlyingObject(address, 0) : nullptr;
            if (address && (!llvm::isa<llvm::AllocaInst>(object) || lane_arrays_.count(object)))
                inst.setMetadata(llvm::LLVMContext::MD_access_group, group);
        }
    std::vector<llvm::Metadata*> hints = {
        nullptr,
        llvm::MDNode::get(c_, {llvm::MDString::get(c_, "llvm.loop.parallel_accesses"), group})};
    auto flag = [&](const char* name, llvm::Metadata* value) {
        std::vector<llvm::Metadata*> ops = {llvm::MDString::get(c_, name)};
        if (value) ops.push_back(value);
        hints.push_back(llvm::MDNode::get(c_, ops));
    };
    if (kind != XLoop::Whole) flag("llvm.loop.unroll.disable", nullptr);
    if (kind == XLoop::Chunk) {
        flag("llvm.loop.vectorize.enable", llvm::ConstantAsMetadata::get(b_.getTrue()));
        flag("llvm.loop.vectorize.width", llvm::ConstantAsMetadata::get(b_.getInt32(lanes)));
    } else if (kind == XLoop::Rest || kind == XLoop::Item) {
        flag("llvm.loop.vectorize.enable", llvm::ConstantAsMetadata::get(b_.getFalse()));
    }
    if (kind == XLoop::Item) hints.push_back(item_loop_hint(c_)); // for InterleaveChains
    llvm::MDNode* loop = llvm::MDNode::getDistinct(c_, hints);
    loop->replaceOperandWith(0, loop);
    latch->getTerminator()->setMetadata(llvm::LLVMContext::MD_loop, loop);
}

// A statement list in group control: maximal runs of ordinary statements become one set of
// work-item loops each; group statements run once.
void HostLowering::group_body(const Stmt& s, bool in_barrier_loop) {
    if (!s) return;
    size_t mark = scope_.size();
    std::vector<Stmt> one;
    const std::vector<Stmt>* list = &one;
    if (auto b = as<Block>(s))
        list = &b->body;
    else
        one.push_back(s);
    std::vector<const Stmt*> run;
    auto flush = [&] {
        if (run.empty()) return;
        const size_t region = next_region_++;
        if (region >= layout_.item_region.size()) internal("more regions than the layout found");
        item_loops(
            [&] {
                for (const Stmt* x : run)
                    stmt(*x);
            },
            &run, layout_.item_region[region]);
        run.clear();
    };
    for (auto& x : *list) {
        if (is_group_stmt(x, in_barrier_loop)) {
            flush();
            group_stmt(x, in_barrier_loop);
        } else {
            run.push_back(&x);
        }
    }
    flush();
    scope_.resize(mark);
}

void HostLowering::group_stmt(const Stmt& s, bool in_barrier_loop) {
    switch (s->kind) {
    case StmtKind::Block: group_body(s, in_barrier_loop); return;
    case StmtKind::If:
        if_stmt(static_cast<const If&>(*s), [&](const Stmt& x) { group_body(x, in_barrier_loop); });
        return;
    case StmtKind::For:
        for_stmt(static_cast<const For&>(*s), [&](const Stmt& x) { group_body(x, true); });
        return;
    case StmtKind::While:
        while_stmt(static_cast<const While&>(*s), [&](const Stmt& x) { group_body(x, true); });
        return;
    case StmtKind::Match:
        match_stmt(static_cast<const Match&>(*s),
                   [&](const Stmt& x) { group_body(x, in_barrier_loop); });
        return;
    case StmtKind::Break:
    case StmtKind::Continue: leave_loop(s->kind == StmtKind::Break); return;
    // Each region already ran for every work-item before the next starts, and all of them
    // run on this thread: that is the barrier and its fence.
    case StmtKind::Barrier: return;
    case StmtKind::Native: {
        auto& n = static_cast<const Native&>(*s);
        check_native(n);
        group_body(n.fallback, in_barrier_loop);
        return;
    }
    default: internal(std::string("a ") + to_string(s->kind) + " statement as group control");
    }
}

// ---- the function ----------------------------------------------------------------------------

void HostLowering::prologue() {
    llvm::Type* ptr = b_.getPtrTy();
    llvm::Type* i32 = b_.getInt32Ty();
    llvm::Type* i64 = b_.getInt64Ty();
    llvm::FunctionType* ft = llvm::FunctionType::get(b_.getVoidTy(), {ptr, ptr}, false);
    f_ = llvm::Function::Create(ft, llvm::Function::ExternalLinkage, function_name(k_), m_);
    f_->addFnAttr(llvm::Attribute::NoUnwind);
    f_->addFnAttr("target-cpu", target_.cpu);
    f_->addFnAttr("target-features", target_.features);
    if (target_.vector_bits)
        f_->addFnAttr("prefer-vector-width", std::to_string(target_.vector_bits));
    for (unsigned i = 0; i < 2; ++i) {
        f_->addParamAttr(i, llvm::Attribute::NoCapture);
        f_->addParamAttr(i, llvm::Attribute::ReadOnly);
        f_->addParamAttr(i, llvm::Attribute::NoUndef);
    }
    Value* ctx = f_->getArg(0);
    Value* user = f_->getArg(1);
    ctx->setName("ctx");
    user->setName("user");
    alloca_block_ = new_block("allocas");
    BasicBlock* start = new_block("start");
    b_.SetInsertPoint(alloca_block_);
    b_.CreateBr(start);
    b_.SetInsertPoint(start);

    // The context struct's layout comes from plugin.h itself, never from a guess.
    for (unsigned d = 0; d < 3; ++d) {
        group_id_[d] = field(ctx, offsetof(plx_workgroup_ctx, group_id) + 8 * d, i64, "group_id");
        num_groups_[d] =
            field(ctx, offsetof(plx_workgroup_ctx, num_groups) + 8 * d, i64, "num_groups");
        local_size_[d] =
            field(ctx, offsetof(plx_workgroup_ctx, local_size) + 4 * d, i32, "local_size");
        // Below 2^31 (devices bound a group far under that): local ids are then non-negative
        // as i32, so `tid / 16` on an Int is a shift, as on an unsigned id.
        llvm::cast<llvm::LoadInst>(local_size_[d])
            ->setMetadata(
                llvm::LLVMContext::MD_range,
                llvm::MDNode::get(c_, {llvm::ConstantAsMetadata::get(b_.getInt32(0)),
                                       llvm::ConstantAsMetadata::get(b_.getInt32(1u << 31))}));
    }
    // A kernel that requires a work-group shape gets it at every launch (the Runtime refuses
    // any other), so the shape is a constant here: the work-item loops have constant trip
    // counts and every per-item array sits at a constant offset from the group-local block,
    // which x86 addresses as base + offset + index. With the size a runtime value each array's
    // start was a pointer of its own, and matmul_tiled's 64 accumulators spilled 64 of them.
    // A launch of another shape through the plugin's C ABI alone runs nothing.
    const auto& required = k_.work_group.required;
    Value* shape_ok = b_.getTrue();
    if (required[0]) {
        for (unsigned d = 0; d < 3; ++d) {
            shape_ok =
                b_.CreateAnd(shape_ok, b_.CreateICmpEQ(local_size_[d], b_.getInt32(required[d])));
            local_size_[d] = b_.getInt32(required[d]);
        }
    }
    Value* z = b_.CreateZExt(local_size_[2], i64);
    Value* y = b_.CreateZExt(local_size_[1], i64);
    Value* x = b_.CreateZExt(local_size_[0], i64);
    Value* group_size =
        b_.CreateMul(b_.CreateMul(x, y, "", true, true), z, "group_size", true, true);
    Value* args = field(user, offsetof(HostArgs, args), ptr, "args");

    group_item_ = {{b_.getInt32(0), b_.getInt32(0), b_.getInt32(0)}, b_.getInt64(0), nullptr};
    item_ = &group_item_;
    ret_ = new_block("ret");
    BasicBlock* run_bb = new_block("run");
    // A group without work-items (a zero local size) has nothing to run, group control included.
    b_.CreateCondBr(b_.CreateAnd(shape_ok, b_.CreateICmpNE(group_size, b_.getInt64(0))), run_bb,
                    ret_);
    b_.SetInsertPoint(run_bb);
    if (layout_.shared_bytes || layout_.per_item_bytes || layout_.record_bytes)
        group_size = group_local_memory(ctx, group_size);
    bind_params(args, group_size);
}

// Group-local memory: ctx->local_mem when it is big enough, else the heap for this group.
// Sets local_base_, on_heap_ and shared_; returns the group size padded as the Layout pads it.
Value* HostLowering::group_local_memory(Value* ctx, Value* group_size) {
    llvm::Type* ptr = b_.getPtrTy();
    llvm::Type* i64 = b_.getInt64Ty();
    Value* padded = b_.CreateOr( // Layout::padded_group
        b_.CreateAnd(b_.CreateAdd(group_size, b_.getInt64(Layout::item_padding - 1)),
                     b_.getInt64(~(Layout::item_padding - 1))),
        b_.getInt64(Layout::item_padding));
    padded_ = padded;
    records_ = b_.CreateAdd(b_.getInt64(layout_.shared_bytes),
                            b_.CreateMul(padded, b_.getInt64(layout_.per_item_bytes)),
                            "records"); // Layout::records_offset
    Value* need =
        b_.CreateAdd(records_, b_.CreateMul(group_size, b_.getInt64(layout_.record_bytes)),
                     "local_need"); // Layout::local_bytes
    Value* mem = field(ctx, offsetof(plx_workgroup_ctx, local_mem), ptr, "local_mem");
    Value* have = field(ctx, offsetof(plx_workgroup_ctx, local_mem_bytes), i64, "local_mem_bytes");
    Value* fits = b_.CreateAnd(b_.CreateIsNotNull(mem), b_.CreateICmpUGE(have, need));
    BasicBlock* from = b_.GetInsertBlock();
    BasicBlock* heap = new_block("local.heap");
    BasicBlock* failed = new_block("local.failed");
    BasicBlock* join = new_block("local.ready");
    b_.CreateCondBr(fits, join, heap);
    b_.SetInsertPoint(heap);
    llvm::FunctionCallee aligned_alloc = m_.getOrInsertFunction("aligned_alloc", ptr, i64, i64);
    Value* heap_mem = b_.CreateCall(aligned_alloc, {b_.getInt64(64), need});
    b_.CreateCondBr(b_.CreateIsNull(heap_mem), failed, join);
    b_.SetInsertPoint(failed);
    b_.CreateIntrinsic(llvm::Intrinsic::trap, {}, {});
    b_.CreateUnreachable();
    b_.SetInsertPoint(join);
    llvm::PHINode* base = b_.CreatePHI(ptr, 2, "local");
    base->addIncoming(mem, from);
    base->addIncoming(heap_mem, heap);
    llvm::PHINode* flag = b_.CreatePHI(b_.getInt1Ty(), 2, "local_on_heap");
    flag->addIncoming(b_.getFalse(), from);
    flag->addIncoming(b_.getTrue(), heap);
    local_base_ = base;
    on_heap_ = flag;
    for (size_t i = 0; i < k_.shared.size(); ++i)
        shared_.push_back(b_.CreateConstInBoundsGEP1_64(
            b_.getInt8Ty(), base, layout_.shared_offset[i], k_.shared[i].name));
    return padded;
}

// A variable per Layout declaration (the per-item arrays placed now, so that they dominate
// every region; the allocas come with their declarations), the per-item copies of private
// arrays, then the parameters, which are the first declarations.
void HostLowering::bind_params(Value* args, Value* group_size) {
    if (layout_.decls.size() < k_.params.size())
        internal("the layout has fewer declarations than parameters");
    // The first of the per-work-item copies of a PerItem variable or private array.
    auto copies = [&](uint64_t prefix) {
        Value* array = b_.CreateMul(group_size, b_.getInt64(prefix));
        Value* offset = b_.CreateAdd(b_.getInt64(layout_.shared_bytes), array);
        return b_.CreateInBoundsGEP(b_.getInt8Ty(), local_base_, offset);
    };
    for (size_t d = 0; d < layout_.decls.size(); ++d) {
        Variable v{layout_.decl_types[d], nullptr};
        // A record member's home is its place in work-item 0's record.
        if (layout_.decls[d] == Storage::PerItem)
            v.home = layout_.in_record[d]
                         ? b_.CreateInBoundsGEP(
                               b_.getInt8Ty(), local_base_,
                               b_.CreateAdd(records_, b_.getInt64(layout_.per_item_prefix[d])))
                         : copies(layout_.per_item_prefix[d]);
        variables_.push_back(v);
        storage_.push_back(layout_.decls[d]);
    }
    for (size_t i = 0; i < k_.privates.size(); ++i) {
        const bool per_item = layout_.privates.at(i) == Storage::PerItem;
        private_copies_.push_back(per_item ? copies(layout_.private_prefix[i]) : nullptr);
    }
    for (size_t i = 0; i < k_.params.size(); ++i) {
        auto& p = k_.params[i];
        Value* addr = b_.CreateLoad(
            b_.getPtrTy(), b_.CreateConstInBoundsGEP1_64(b_.getPtrTy(), args, i), p.name + ".addr");
        if (p.kind == Param::Kind::Buffer) {
            buffers_.push_back(addr);
        } else {
            Value* v = load(addr, p.type, p.name);
            buffers_.push_back(nullptr);
            if (storage_[i] == Storage::Value) {
                variables_[i].home = v;
            } else {
                if (storage_[i] == Storage::Private)
                    variables_[i].home = entry_alloca(reg_type(p.type), p.name);
                params_init_.push_back({i, v});
            }
        }
        scope_.emplace_back(p.name, i);
    }
    next_decl_ = k_.params.size();
}

void HostLowering::run() {
    prologue();
    // An assigned parameter is a variable each work-item starts with the argument's value.
    auto init_params = [&] {
        for (auto& [i, v] : params_init_)
            write_variable(i, v);
    };
    if (!layout_.barrier) {
        const std::vector<const Stmt*> body = {&k_.body};
        next_region_ = 1;
        item_loops(
            [&] {
                init_params();
                nested(k_.body);
            },
            &body, layout_.item_region.at(0));
    } else {
        if (!params_init_.empty()) item_loops(init_params);
        group_body(k_.body, false);
    }
    // Guarded chunks widen only with their vectors split; split, a region that computes
    // vectors under a mask of its own (or one run per work-item) would gather instead.
    if (split_guards_ && !split_veto_) f_->addFnAttr(split_vectors_attribute);
    if (next_region_ != layout_.item_region.size())
        internal("lowering met " + std::to_string(next_region_) + " regions, the layout " +
                 std::to_string(layout_.item_region.size()));
    if (next_decl_ != variables_.size())
        internal("lowering met " + std::to_string(next_decl_) + " declarations, the layout " +
                 std::to_string(variables_.size()));
    if (on_heap_) {
        BasicBlock* release = new_block("local.free");
        b_.CreateCondBr(on_heap_, release, ret_);
        b_.SetInsertPoint(release);
        b_.CreateCall(m_.getOrInsertFunction("free", b_.getVoidTy(), b_.getPtrTy()), {local_base_});
    }
    b_.CreateBr(ret_);
    b_.SetInsertPoint(ret_);
    b_.CreateRetVoid();
}

std::unique_ptr<llvm::Module> lower(const Kernel& kernel, const Options& options,
                                    const Layout& layout, const HostTarget& target,
                                    llvm::LLVMContext& context) {
    auto module = std::make_unique<llvm::Module>("plexus." + kernel.name, context);
    module->setTargetTriple(target.triple);
    module->setDataLayout(target.data_layout);
    HostLowering(kernel, options, layout, target, *module).run();
    return module;
}

} // namespace plexus::codegen::host
