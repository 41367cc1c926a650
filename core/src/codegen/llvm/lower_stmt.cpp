// The statements of a work-item: scopes, variables, stores, and control flow as plain branches
// (the optimizer sees ordinary loops). What ends a work-item, barriers and fences are hooks.
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
    for (auto& s : n.body) stmt(s);
    scope_.resize(mark);
}

void LlvmLowering::visit(const Let& n) {
    Value* init = expr(n.init); // before the name is declared: it may shadow one it reads
    declare(n.name, n.type, init);
}

void LlvmLowering::visit(const Assign& n) {
    if (!n.path.empty()) not_yet("assignments to a part of a value");
    Value* v = expr(n.value);
    write_variable(lookup(n.name), v);
}

void LlvmLowering::visit(const Store& n) {
    if (!n.path.empty()) not_yet("stores to a part of an element");
    Type t = n.value->type;
    Value* address = element_address(n.array, n.space, t, n.index);
    store(address, t, expr(n.value));
}

void LlvmLowering::visit(const Eval& n) { expr(n.value); }
void LlvmLowering::visit(const If& n) { if_stmt(n, [&](const Stmt& s) { nested(s); }); }
void LlvmLowering::visit(const For& n) { for_stmt(n, [&](const Stmt& s) { nested(s); }); }
void LlvmLowering::visit(const While& n) { while_stmt(n, [&](const Stmt& s) { nested(s); }); }
void LlvmLowering::visit(const Break&) { leave_loop(true); }
void LlvmLowering::visit(const Continue&) { leave_loop(false); }
void LlvmLowering::visit(const Return&) { return_from_item(); }
void LlvmLowering::visit(const Barrier&) { barrier(); }
void LlvmLowering::visit(const Fence& n) { fence(n); }

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
    b_.CreateBr(header);
    b_.SetInsertPoint(exit);
    scope_.resize(mark);
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
