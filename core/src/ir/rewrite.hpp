// What the IR-to-IR lowerings share (lower_matrix, lower_async_copy, unroll_full_loops): names
// that collide with nothing in the kernel, and a walk that replaces the statements of one kind.
#pragma once

#include "plexus/ir.hpp"

#include <functional>
#include <set>
#include <string>

namespace plexus::ir {

// Small builders of plain IR.
namespace build {
inline Expr i32(int64_t v) {
    return Const::make_int(Scalar::I32, v);
}
inline Expr i64(const Expr& e) {
    return e->type == Scalar::I64 ? e : Cast::make(Scalar::I64, e);
}
inline Expr add(Expr a, Expr b) {
    return Binary::make(BinaryOp::Add, std::move(a), std::move(b));
}
inline Expr mul(Expr a, Expr b) {
    return Binary::make(BinaryOp::Mul, std::move(a), std::move(b));
}
inline Expr var(const std::string& n, Scalar t = Scalar::I32) {
    return Var::make(n, t);
}
} // namespace build

// Fresh names "<prefix><n>_<what>" that no parameter, array, fragment or variable of the
// kernel uses.
class FreshNames {
public:
    FreshNames(const Kernel& k, std::string prefix);
    std::string operator()(const char* what);

private:
    std::string prefix_;
    std::set<std::string> names_;
    int next_ = 0;
};

// Whether s is, or holds, a statement of `kind`.
bool contains_stmt(const Stmt& s, StmtKind kind);

// s rebuilt with each statement directly inside it (an If's arms, a loop's body, a Native's
// fallback, a Match's cases and otherwise, a Block's statements) replaced by sub(child), null ones
// left null: map_parts, expressions kept. s itself when sub changes nothing.
Stmt with_children(const Stmt& s, const std::function<Stmt(const Stmt&)>& sub);

// s with every statement of `kind` inside it (s included) replaced by replace(node); a null
// result drops it from its block (an empty block where it stood alone), and a Block's
// statements go into the enclosing block (the names are fresh): the host's lock-stepped
// regions lose a Let of the enclosing block that a nested block's Let reads.
Stmt replace_stmts(const Stmt& s, StmtKind kind,
                   const std::function<Stmt(const StmtNode&)>& replace);

// Writes out every loop hinted unroll_full (For::unroll_full) whose begin, end and step are
// constants, up to For::max_unroll trips: one copy of the body per trip, the loop's variable
// replaced by the trip's constant and each variable the body declares renamed, so that the
// kernel computes the same. The host backend runs it first: its passes (which regions run per
// work-item, blocks of outputs sized for the registers, interleaved FMA chains) read straight-
// line IR, which a loop that LLVM unrolls later would hide from them. A loop whose body holds
// Native code, whose text names variables, stays a loop.
Kernel unroll_full_loops(const Kernel& k);

// Every loop hinted unroll_full whose body holds a matrix statement, with its hint taken away
// (0: the backend decides). Where matrix operations are emulated (the host), each is a loop
// over a tile already: written out, matmul_tf32's four k-steps of 14 such operations cost
// the host's compile about a second and the run nothing measurable.
Kernel matrix_loops_unhinted(const Kernel& k);

} // namespace plexus::ir
