// lower_async_copy: asynchronous copies done at once, as plain loads and stores; commits and
// waits have nothing left to wait for.
#include "rewrite.hpp"

namespace plexus::ir {
namespace {
using namespace build;

Expr zero(Scalar t) {
    return is_float(t) ? Const::make_float(t, 0.0) : Const::make_int(t, 0);
}

// { i64 d = index; i64 s = src_index; i64 v = valid;
//   if (0 < v) array[d + 0] = buffer[s + 0]; else array[d + 0] = 0; ... up to count - 1 }
// The operands are evaluated once, as the statement evaluates them; the ifs keep every read
// inside the `valid` elements the semantics allow to be read. Unrolled: count is at most 8, and
// each element's test is then against a constant.
Stmt copy(const Kernel& k, const AsyncCopy& n, FreshNames& fresh) {
    const Scalar t = k.param(n.buffer)->type.scalar();
    const std::string d = fresh("dst"), s = fresh("src"), v = fresh("valid");
    std::vector<Stmt> out{Let::make(d, i64(n.index)), Let::make(s, i64(n.src_index)),
                          Let::make(v, i64(n.valid))};
    for (uint32_t e = 0; e < n.count; ++e) {
        const Expr at = Const::make_int(Scalar::I64, e);
        const Expr dst = add(var(d, Scalar::I64), at);
        out.push_back(If::make(
            Binary::make(BinaryOp::Lt, at, var(v, Scalar::I64)),
            Store::make(n.array, Space::Local, dst,
                        Load::make(n.buffer, Space::Global, t, add(var(s, Scalar::I64), at))),
            Store::make(n.array, Space::Local, dst, zero(t))));
    }
    return Block::make(std::move(out));
}

} // namespace

Kernel lower_async_copy(const Kernel& k) {
    if (!k.body || !contains_stmt(k.body, StmtKind::AsyncCopy)) return k;
    FreshNames fresh(k, "ac");
    Kernel out = k;
    out.body = replace_stmts(k.body, StmtKind::AsyncCopy, [&](const StmtNode& s) -> Stmt {
        auto& n = static_cast<const AsyncCopy&>(s);
        return n.op == AsyncCopyOp::Copy ? copy(k, n, fresh) : nullptr;
    });
    return out;
}

} // namespace plexus::ir
