// The statements of a work-item: scopes, variables, assignments and stores (whole or along a
// path), and control flow as plain branches (the optimizer sees ordinary loops), the match a
// switch on the tag. What ends a work-item, barriers and fences are hooks.
#include "codegen/llvm/lowering.hpp"

namespace plexus::codegen {

using namespace ir;
using llvm::BasicBlock;
using llvm::Value;

void LlvmLowering::stmt(const Stmt& s) {
    if (s) StmtVisitor::dispatch(s);
}

void LlvmLowering::nested(const Stmt& s) {
    size_t mark = scope_.size();
    stmt(s);
    scope_.resize(mark);
}

void LlvmLowering::visit(const Block& n) {
    size_t mark = scope_.size();
    for (auto& s : n.body)
        stmt(s);
    scope_.resize(mark);
}

void LlvmLowering::visit(const Let& n) {
    Value* init = expr(n.init); // before the name is declared: it may shadow one it reads
    declare(n.name, n.type, init);
}

// A part of a variable: the whole value with that part replaced (insertvalue, insertelement).
void LlvmLowering::visit(const Assign& n) {
    Value* v = expr(n.value);
    const size_t id = lookup(n.name);
    if (!n.path.empty()) v = insert_path(read_variable(id), variables_[id].type, n.path, 0, v);
    write_variable(id, v);
}

// A part of an element: only that part's bytes are written.
void LlvmLowering::visit(const Store& n) {
    Type t = array_type(n.array, n.space);
    Value* address = element_address(n.array, n.space, n.index);
    for (uint32_t step : n.path) {
        address = part_address(address, t, step);
        t = t.is_vector() ? Type(t.scalar()) : t.decl()->members.at(step).type;
    }
    store(address, t, expr(n.value));
}

void LlvmLowering::visit(const Eval& n) {
    expr(n.value);
}
void LlvmLowering::visit(const If& n) {
    if_stmt(n, [&](const Stmt& s) { nested(s); });
}
void LlvmLowering::visit(const For& n) {
    for_stmt(n, [&](const Stmt& s) { nested(s); });
}
void LlvmLowering::visit(const While& n) {
    while_stmt(n, [&](const Stmt& s) { nested(s); });
}
void LlvmLowering::visit(const Break&) {
    leave_loop(true);
}
void LlvmLowering::visit(const Continue&) {
    leave_loop(false);
}
void LlvmLowering::visit(const Return&) {
    return_from_item();
}
void LlvmLowering::visit(const Barrier&) {
    barrier();
}
void LlvmLowering::visit(const Fence& n) {
    fence(n);
}
void LlvmLowering::matrix(const Matrix& n) {
    internal("the matrix fragment '" + n.frag + "' reached " + generator_ + " unlowered");
}

void LlvmLowering::async_copy(const AsyncCopy& n) {
    internal("an async copy (" + std::string(to_string(n.op)) + ") reached " + generator_ +
             " unlowered");
}

void LlvmLowering::visit(const Match& n) {
    match_stmt(n, [&](const Stmt& s) { nested(s); });
}

void LlvmLowering::visit(const Native& n) {
    check_native(n);
    nested(n.fallback);
}

void LlvmLowering::check_native(const Native& n) {
    if (!n.fallback)
        invalid("a native block has no code for backend '" + options_.backend +
                "' and no portable fallback");
}

void LlvmLowering::if_stmt(const If& n, const Body& arm) {
    Value* c = expr(n.cond);
    BasicBlock* then_bb = new_block("then");
    BasicBlock* else_bb = n.else_body ? new_block("else") : nullptr;
    BasicBlock* merge = new_block("endif");
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

// A variant in memory (an array element, or a field of one) gives its tag alone, and each case
// loads only its own payload; any other value is computed once and taken apart.
void LlvmLowering::match_stmt(const Match& n, const Body& arm) {
    const Type& type = n.value->type;
    const TypeDecl& d = *type.decl();
    Value* address = address_of(n.value);
    Value* whole = address ? nullptr : expr(n.value);
    Value* tag = address ? b_.CreateAlignedLoad(b_.getInt32Ty(), address, llvm::Align(4), "tag")
                         : b_.CreateExtractValue(whole, 0, "tag");
    BasicBlock* end = new_block("match.end");
    // A tag no case names (memory C++ left unset) runs otherwise, or nothing.
    BasicBlock* rest = n.otherwise ? new_block("match.otherwise") : end;
    llvm::SwitchInst* on_tag = b_.CreateSwitch(tag, rest, unsigned(n.cases.size()));
    for (const MatchCase& c : n.cases) {
        const Member& m = d.members.at(c.index);
        BasicBlock* body = new_block("match." + m.name);
        on_tag->addCase(b_.getInt32(c.index), body);
        b_.SetInsertPoint(body);
        const size_t mark = scope_.size();
        if (!c.var.empty()) {
            Value* payload = address ? load(byte_address(address, d.payload_offset), m.type, c.var)
                                     : b_.CreateExtractValue(whole, payload_slot(d, c.index));
            declare(c.var, m.type, payload);
        }
        arm(c.body);
        scope_.resize(mark);
        if (!terminated()) b_.CreateBr(end);
    }
    if (n.otherwise) {
        b_.SetInsertPoint(rest);
        arm(n.otherwise);
        if (!terminated()) b_.CreateBr(end);
    }
    b_.SetInsertPoint(end);
}

void LlvmLowering::for_stmt(const For& n, const Body& body) {
    // begin, end and step are evaluated once, before the loop.
    Value* begin = expr(n.begin);
    Value* end = expr(n.end);
    Value* step = expr(n.step);
    size_t mark = scope_.size();
    declare(n.var, n.type, begin);
    const size_t var = scope_.back().second;
    BasicBlock* header = new_block("for.head");
    BasicBlock* inside = new_block("for.body");
    BasicBlock* latch = new_block("for.next");
    BasicBlock* exit = new_block("for.end");
    b_.CreateBr(header);
    b_.SetInsertPoint(header);
    b_.CreateCondBr(compare(BinaryOp::Lt, read_variable(var), end, n.type), inside, exit);
    b_.SetInsertPoint(inside);
    loop_body(body, n.body, exit, latch);
    b_.SetInsertPoint(latch);
    write_variable(var, b_.CreateAdd(read_variable(var), step)); // wraps, as IR integers do
    mark_unroll(b_.CreateBr(header), n.unroll);
    b_.SetInsertPoint(exit);
    scope_.resize(mark);
}

// A distinct loop ID whose first operand is itself (LLVM's LoopID convention), holding the hint.
void LlvmLowering::mark_unroll(llvm::Instruction* backedge, uint32_t unroll) {
    if (!unroll) return;
    llvm::Metadata* hint = nullptr;
    if (unroll == For::unroll_full)
        hint = llvm::MDNode::get(c_, {llvm::MDString::get(c_, "llvm.loop.unroll.full")});
    else if (unroll == 1)
        hint = llvm::MDNode::get(c_, {llvm::MDString::get(c_, "llvm.loop.unroll.disable")});
    else
        hint = llvm::MDNode::get(c_, {llvm::MDString::get(c_, "llvm.loop.unroll.count"),
                                      llvm::ConstantAsMetadata::get(b_.getInt32(unroll))});
    llvm::MDNode* loop = llvm::MDNode::getDistinct(c_, {nullptr, hint});
    loop->replaceOperandWith(0, loop);
    backedge->setMetadata(llvm::LLVMContext::MD_loop, loop);
}

void LlvmLowering::while_stmt(const While& n, const Body& body) {
    BasicBlock* header = new_block("while.head");
    BasicBlock* inside = new_block("while.body");
    BasicBlock* exit = new_block("while.end");
    b_.CreateBr(header);
    b_.SetInsertPoint(header);
    b_.CreateCondBr(expr(n.cond), inside, exit);
    b_.SetInsertPoint(inside);
    loop_body(body, n.body, exit, header);
    b_.SetInsertPoint(exit);
}

// A loop's body: a break in it goes to `exit`, a continue and its end to `next`.
void LlvmLowering::loop_body(const Body& body, const Stmt& s, BasicBlock* exit, BasicBlock* next) {
    loops_.push_back({exit, next});
    body(s);
    loops_.pop_back();
    if (!terminated()) b_.CreateBr(next);
}

void LlvmLowering::leave_loop(bool is_break) {
    if (loops_.empty() || !loops_.back().exit) internal("break or continue outside a loop");
    jump(is_break ? loops_.back().exit : loops_.back().next);
}

} // namespace plexus::codegen
