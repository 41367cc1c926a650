// The work-group function's structure: the prologue that reads the launch context, the loops
// over work-items, and statements, either per work-item (inside a region's loops) or as group
// control (once per group, around the regions that barriers separate).
#include "codegen/host/lowering.hpp"

#include <llvm/IR/Intrinsics.h>

#include <cstddef>

namespace plexus::codegen::host {

using namespace ir;
using llvm::BasicBlock;
using llvm::Value;

static_assert(sizeof(size_t) == 8, "the host code reads local_mem_bytes as a 64-bit size_t");

Lowering::Lowering(const Kernel& k, const Options& o, const Layout& l, const Target& t, llvm::LLVMContext& c)
    : k_(k), options_(o), layout_(l), target_(t), c_(c),
      m_(std::make_unique<llvm::Module>("plexus." + k.name, c)), b_(c) {
    i1_ = b_.getInt1Ty();
    i8_ = b_.getInt8Ty();
    i32_ = b_.getInt32Ty();
    i64_ = b_.getInt64Ty();
    f32_ = b_.getFloatTy();
    f64_ = b_.getDoubleTy();
    ptr_ = b_.getPtrTy();
}

void Lowering::internal(const std::string& what) const {
    ErrorContext ctx;
    ctx.kernel = k_.name;
    throw Error(ErrorCode::Internal, "host codegen of kernel '" + k_.name + "': " + what, ctx);
}
void Lowering::invalid(const std::string& what) const {
    ErrorContext ctx;
    ctx.kernel = k_.name;
    throw Error(ErrorCode::InvalidKernel, "kernel '" + k_.name + "': " + what, ctx);
}

Value* Lowering::ctx_field(Value* ctx, size_t offset, llvm::Type* t, const char* name) {
    return b_.CreateLoad(t, b_.CreateConstInBoundsGEP1_64(i8_, ctx, offset), name);
}

bool Lowering::terminated() const { return b_.GetInsertBlock()->getTerminator() != nullptr; }

// Code after a jump is unreachable; it still needs a block to go into.
void Lowering::jump(BasicBlock* to) {
    b_.CreateBr(to);
    b_.SetInsertPoint(BasicBlock::Create(c_, "dead", f_));
}

void Lowering::counted_loop(Value* n, const char* name,
                            const std::function<void(Value*, BasicBlock*)>& body) {
    BasicBlock* pre = b_.GetInsertBlock();
    BasicBlock* header = BasicBlock::Create(c_, std::string(name) + ".head", f_);
    BasicBlock* inside = BasicBlock::Create(c_, std::string(name) + ".body", f_);
    BasicBlock* latch = BasicBlock::Create(c_, std::string(name) + ".next", f_);
    BasicBlock* exit = BasicBlock::Create(c_, std::string(name) + ".end", f_);
    b_.CreateBr(header);
    b_.SetInsertPoint(header);
    llvm::PHINode* i = b_.CreatePHI(i32_, 2, name);
    i->addIncoming(b_.getInt32(0), pre);
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
// touch consecutive elements and the x loop vectorizes.
void Lowering::item_loops(const std::function<void()>& body) {
    Value* lx = b_.CreateZExt(local_size_[0], i64_);
    Value* ly = b_.CreateZExt(local_size_[1], i64_);
    // No-wrap flags: an index within a group is below the group size, which devices bound
    // far under 2^63.
    counted_loop(local_size_[2], "wi.z", [&](Value* z, BasicBlock*) {
        counted_loop(local_size_[1], "wi.y", [&](Value* y, BasicBlock*) {
            Value* zy = b_.CreateAdd(b_.CreateMul(b_.CreateZExt(z, i64_), ly, "", true, true),
                                     b_.CreateZExt(y, i64_), "", true, true);
            Value* row = b_.CreateMul(zy, lx, "wi.row", true, true);
            counted_loop(local_size_[0], "wi.x", [&](Value* x, BasicBlock* latch) {
                Item it{{x, y, z}, b_.CreateAdd(row, b_.CreateZExt(x, i64_), "wi", true, true), latch};
                const Item* saved = item_;
                item_ = &it;
                loops_.push_back({nullptr, nullptr}); // no break leaves a region
                body();
                loops_.pop_back();
                item_ = saved;
            });
        });
    });
}

void Lowering::check_native(const Native& n) const {
    if (!options_.backend.empty() && n.code.count(options_.backend))
        invalid("a native block has code for backend '" + options_.backend +
                "', which has no source language to compile it; give a portable fallback instead");
    if (!n.fallback)
        invalid("a native block has no code for backend '" + options_.backend +
                "' and no portable fallback");
}

// ---- statements ------------------------------------------------------------------------------

void Lowering::if_stmt(const If& n, const std::function<void(const Stmt&)>& arm) {
    Value* c = expr(n.cond);
    BasicBlock* then_bb = BasicBlock::Create(c_, "then", f_);
    BasicBlock* else_bb = n.else_body ? BasicBlock::Create(c_, "else", f_) : nullptr;
    BasicBlock* merge = BasicBlock::Create(c_, "endif", f_);
    b_.CreateCondBr(c, then_bb, else_bb ? else_bb : merge);
    b_.SetInsertPoint(then_bb);
    arm(n.then_body);
    if (!terminated()) b_.CreateBr(merge);
    if (else_bb) {
        b_.SetInsertPoint(else_bb);
        arm(n.else_body);
        if (!terminated()) b_.CreateBr(merge);
    }
    b_.SetInsertPoint(merge);
}

void Lowering::for_stmt(const For& n, const std::function<void(const Stmt&)>& body) {
    Value* begin = expr(n.begin);
    Value* end = expr(n.end);
    Value* step = expr(n.step);
    size_t mark = scope_.size();
    declare(n.var, begin);
    const Slot& var = slots_[scope_.back().second];
    BasicBlock* header = BasicBlock::Create(c_, "for.head", f_);
    BasicBlock* inside = BasicBlock::Create(c_, "for.body", f_);
    BasicBlock* latch = BasicBlock::Create(c_, "for.next", f_);
    BasicBlock* exit = BasicBlock::Create(c_, "for.end", f_);
    b_.CreateBr(header);
    b_.SetInsertPoint(header);
    b_.CreateCondBr(compare(BinaryOp::Lt, read(var), end, n.type), inside, exit);
    b_.SetInsertPoint(inside);
    loops_.push_back({exit, latch});
    body(n.body);
    loops_.pop_back();
    if (!terminated()) b_.CreateBr(latch);
    b_.SetInsertPoint(latch);
    write(var, b_.CreateAdd(read(var), step)); // wraps, as IR integer arithmetic does
    b_.CreateBr(header);
    b_.SetInsertPoint(exit);
    scope_.resize(mark);
}

void Lowering::while_stmt(const While& n, const std::function<void(const Stmt&)>& body) {
    BasicBlock* header = BasicBlock::Create(c_, "while.head", f_);
    BasicBlock* inside = BasicBlock::Create(c_, "while.body", f_);
    BasicBlock* exit = BasicBlock::Create(c_, "while.end", f_);
    b_.CreateBr(header);
    b_.SetInsertPoint(header);
    b_.CreateCondBr(expr(n.cond), inside, exit);
    b_.SetInsertPoint(inside);
    loops_.push_back({exit, header});
    body(n.body);
    loops_.pop_back();
    if (!terminated()) b_.CreateBr(header);
    b_.SetInsertPoint(exit);
}

void Lowering::item_stmt(const Stmt& s) {
    if (!s) return;
    size_t mark = scope_.size();
    switch (s->kind) {
    case StmtKind::Block:
        for (auto& x : static_cast<const Block&>(*s).body) item_stmt_in_block(x);
        break;
    case StmtKind::If: if_stmt(static_cast<const If&>(*s), [&](const Stmt& x) { item_stmt(x); }); break;
    case StmtKind::For: for_stmt(static_cast<const For&>(*s), [&](const Stmt& x) { item_stmt(x); }); break;
    case StmtKind::While: while_stmt(static_cast<const While&>(*s), [&](const Stmt& x) { item_stmt(x); }); break;
    case StmtKind::Native: {
        auto& n = static_cast<const Native&>(*s);
        check_native(n);
        item_stmt(n.fallback);
        break;
    }
    case StmtKind::Match: unsupported("variants");
    default: item_stmt_in_block(s); break;
    }
    scope_.resize(mark);
}

void Lowering::item_stmt_in_block(const Stmt& s) {
    switch (s->kind) {
    case StmtKind::Let: {
        auto& n = static_cast<const Let&>(*s);
        declare(n.name, expr(n.init));
        return;
    }
    case StmtKind::Assign: {
        auto& n = static_cast<const Assign&>(*s);
        if (!n.path.empty()) unsupported("assignments to a part of a value");
        Value* v = expr(n.value);
        write(lookup(n.name), v);
        return;
    }
    case StmtKind::Store: {
        auto& n = static_cast<const Store&>(*s);
        if (!n.path.empty()) unsupported("stores to a part of an element");
        Value* p = element_ptr(n.array, n.space, n.value->type, n.index);
        Value* v = expr(n.value);
        b_.CreateAlignedStore(v, p, llvm::Align(size_of(n.value->type)));
        return;
    }
    case StmtKind::Eval: expr(static_cast<const Eval&>(*s).value); return;
    case StmtKind::Break: case StmtKind::Continue: {
        if (loops_.empty() || !loops_.back().exit) internal("break or continue outside a loop of its region");
        jump(s->kind == StmtKind::Break ? loops_.back().exit : loops_.back().next);
        return;
    }
    case StmtKind::Return:
        if (!item_ || !item_->next) internal("return outside the work-item loops");
        jump(item_->next);
        return;
    case StmtKind::Barrier: internal("a barrier inside a work-item region");
    case StmtKind::Fence:
        // Every work-item of a group runs on this one thread, so ordering against the group
        // needs only a compiler fence; device scope orders against other threads too.
        b_.CreateFence(llvm::AtomicOrdering::SequentiallyConsistent,
                       static_cast<const Fence&>(*s).scope == FenceScope::WorkGroup
                           ? llvm::SyncScope::SingleThread
                           : llvm::SyncScope::System);
        return;
    default: item_stmt(s); return;
    }
}

// A statement list in group control: maximal runs of ordinary statements become one set of
// work-item loops each; group statements run once.
void Lowering::group_body(const Stmt& s, bool in_barrier_loop) {
    if (!s) return;
    size_t mark = scope_.size();
    std::vector<Stmt> one;
    const std::vector<Stmt>* list = &one;
    if (auto b = as<Block>(s)) list = &b->body;
    else one.push_back(s);
    std::vector<const Stmt*> run;
    auto flush = [&] {
        if (run.empty()) return;
        item_loops([&] {
            for (const Stmt* x : run) item_stmt_in_block(*x);
        });
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

void Lowering::group_stmt(const Stmt& s, bool in_barrier_loop) {
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
    case StmtKind::Break: case StmtKind::Continue:
        if (loops_.empty() || !loops_.back().exit) internal("group break or continue outside a loop");
        jump(s->kind == StmtKind::Break ? loops_.back().exit : loops_.back().next);
        return;
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

void Lowering::prologue() {
    llvm::FunctionType* ft = llvm::FunctionType::get(b_.getVoidTy(), {ptr_, ptr_}, false);
    f_ = llvm::Function::Create(ft, llvm::Function::ExternalLinkage, function_name(k_), m_.get());
    f_->addFnAttr(llvm::Attribute::NoUnwind);
    f_->addFnAttr("target-cpu", target_.cpu);
    f_->addFnAttr("target-features", target_.features);
    for (unsigned i = 0; i < 2; ++i) {
        f_->addParamAttr(i, llvm::Attribute::NoCapture);
        f_->addParamAttr(i, llvm::Attribute::ReadOnly);
        f_->addParamAttr(i, llvm::Attribute::NoUndef);
    }
    Value* ctx = f_->getArg(0);
    Value* user = f_->getArg(1);
    ctx->setName("ctx");
    user->setName("user");
    alloca_block_ = BasicBlock::Create(c_, "allocas", f_);
    BasicBlock* start = BasicBlock::Create(c_, "start", f_);
    b_.SetInsertPoint(alloca_block_);
    b_.CreateBr(start);
    b_.SetInsertPoint(start);

    // The context struct's layout comes from plugin.h itself, never from a guess.
    for (unsigned d = 0; d < 3; ++d) {
        group_id_[d] = ctx_field(ctx, offsetof(plx_workgroup_ctx, group_id) + 8 * d, i64_, "group_id");
        num_groups_[d] = ctx_field(ctx, offsetof(plx_workgroup_ctx, num_groups) + 8 * d, i64_, "num_groups");
        local_size_[d] = ctx_field(ctx, offsetof(plx_workgroup_ctx, local_size) + 4 * d, i32_, "local_size");
    }
    Value* group_size = b_.CreateMul(
        b_.CreateMul(b_.CreateZExt(local_size_[0], i64_), b_.CreateZExt(local_size_[1], i64_), "", true, true),
        b_.CreateZExt(local_size_[2], i64_), "group_size", true, true);
    Value* args = b_.CreateLoad(ptr_, b_.CreateConstInBoundsGEP1_64(i8_, user, offsetof(HostArgs, args)), "args");

    group_item_ = {{b_.getInt32(0), b_.getInt32(0), b_.getInt32(0)}, b_.getInt64(0), nullptr};
    item_ = &group_item_;
    ret_ = BasicBlock::Create(c_, "ret", f_);
    BasicBlock* run_bb = BasicBlock::Create(c_, "run", f_);
    // A group without work-items (a zero local size) has nothing to run, group control included.
    b_.CreateCondBr(b_.CreateICmpEQ(group_size, b_.getInt64(0)), ret_, run_bb);
    b_.SetInsertPoint(run_bb);

    // Group-local memory: ctx->local_mem when it is big enough, else the heap for this group.
    Value* base = nullptr;
    Value* on_heap = nullptr;
    if (layout_.shared_bytes || layout_.per_item_bytes) {
        Value* padded = b_.CreateAnd(b_.CreateAdd(group_size, b_.getInt64(63)), b_.getInt64(~uint64_t(63)));
        Value* need = b_.CreateAdd(b_.getInt64(layout_.shared_bytes),
                                   b_.CreateMul(padded, b_.getInt64(layout_.per_item_bytes)), "local_need");
        Value* mem = ctx_field(ctx, offsetof(plx_workgroup_ctx, local_mem), ptr_, "local_mem");
        Value* have = ctx_field(ctx, offsetof(plx_workgroup_ctx, local_mem_bytes), i64_, "local_mem_bytes");
        Value* fits = b_.CreateAnd(b_.CreateIsNotNull(mem), b_.CreateICmpUGE(have, need));
        BasicBlock* from = b_.GetInsertBlock();
        BasicBlock* heap = BasicBlock::Create(c_, "local.heap", f_);
        BasicBlock* failed = BasicBlock::Create(c_, "local.failed", f_);
        BasicBlock* join = BasicBlock::Create(c_, "local.ready", f_);
        b_.CreateCondBr(fits, join, heap);
        b_.SetInsertPoint(heap);
        llvm::FunctionCallee aligned_alloc =
            m_->getOrInsertFunction("aligned_alloc", ptr_, i64_, i64_);
        Value* heap_mem = b_.CreateCall(aligned_alloc, {b_.getInt64(64), need});
        b_.CreateCondBr(b_.CreateIsNull(heap_mem), failed, join);
        b_.SetInsertPoint(failed);
        b_.CreateIntrinsic(llvm::Intrinsic::trap, {}, {});
        b_.CreateUnreachable();
        b_.SetInsertPoint(join);
        llvm::PHINode* phi = b_.CreatePHI(ptr_, 2, "local");
        phi->addIncoming(mem, from);
        phi->addIncoming(heap_mem, heap);
        llvm::PHINode* flag = b_.CreatePHI(i1_, 2, "local_on_heap");
        flag->addIncoming(b_.getFalse(), from);
        flag->addIncoming(b_.getTrue(), heap);
        base = phi;
        on_heap = flag;
        for (size_t i = 0; i < k_.shared.size(); ++i)
            shared_.push_back(b_.CreateConstInBoundsGEP1_64(i8_, base, layout_.shared_offset[i], k_.shared[i].name));
        group_size = padded;
    }

    if (layout_.decls.size() < k_.params.size()) internal("the layout has fewer declarations than parameters");
    for (size_t d = 0; d < layout_.decls.size(); ++d) {
        Slot s{layout_.decls[d], layout_.decl_types[d], nullptr};
        switch (s.storage) {
        case Storage::Value: break;
        case Storage::Private: case Storage::Group: {
            llvm::IRBuilder<> ab(alloca_block_, alloca_block_->begin());
            s.ptr = ab.CreateAlloca(mem_type(s.type));
            break;
        }
        case Storage::PerItem:
            s.ptr = b_.CreateInBoundsGEP(i8_, base, b_.CreateAdd(b_.getInt64(layout_.shared_bytes),
                                                                  b_.CreateMul(group_size, b_.getInt64(layout_.per_item_prefix[d]))));
            break;
        }
        slots_.push_back(s);
    }
    for (size_t i = 0; i < k_.params.size(); ++i) {
        auto& p = k_.params[i];
        Value* addr = b_.CreateLoad(ptr_, b_.CreateConstInBoundsGEP1_64(ptr_, args, i), p.name + ".addr");
        if (p.kind == Param::Kind::Buffer) {
            slots_[i].ptr = addr;
            buffers_.push_back(addr);
        } else {
            Value* v = b_.CreateAlignedLoad(reg_type(p.type), addr, llvm::Align(size_of(p.type)), p.name);
            buffers_.push_back(nullptr);
            if (slots_[i].storage == Storage::Value) slots_[i].ptr = v;
            else params_init_.push_back({i, v});
        }
        scope_.emplace_back(p.name, i);
    }
    next_decl_ = k_.params.size();
    on_heap_ = on_heap;
    local_base_ = base;
}

std::unique_ptr<llvm::Module> Lowering::run() {
    if (!k_.privates.empty()) unsupported("private arrays");
    m_->setTargetTriple(target_.triple);
    m_->setDataLayout(target_.data_layout);
    prologue();
    // An assigned parameter is a variable each work-item starts with the argument's value.
    auto init_params = [&] {
        for (auto& [i, v] : params_init_) write(slots_[i], v);
    };
    if (!layout_.barrier) {
        item_loops([&] {
            init_params();
            item_stmt(k_.body);
        });
    } else {
        if (!params_init_.empty()) item_loops(init_params);
        group_body(k_.body, false);
    }
    if (next_decl_ != slots_.size())
        internal("lowering met " + std::to_string(next_decl_) + " declarations, the layout " +
                 std::to_string(slots_.size()));
    if (on_heap_) {
        BasicBlock* release = BasicBlock::Create(c_, "local.free", f_);
        b_.CreateCondBr(on_heap_, release, ret_);
        b_.SetInsertPoint(release);
        b_.CreateCall(m_->getOrInsertFunction("free", b_.getVoidTy(), ptr_), {local_base_});
    }
    b_.CreateBr(ret_);
    b_.SetInsertPoint(ret_);
    b_.CreateRetVoid();
    return std::move(m_);
}

std::unique_ptr<llvm::Module> lower(const Kernel& kernel, const Options& options, const Layout& layout,
                                    const Target& target, llvm::LLVMContext& context) {
    return Lowering(kernel, options, layout, target, context).run();
}

} // namespace plexus::codegen::host
