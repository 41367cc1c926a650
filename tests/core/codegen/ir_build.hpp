// Terse builders of IR for the codegen suite's test kernels: constants, variables, operators,
// loads and stores with paths, and the kernel itself (validated), over the IR's make().
#pragma once

#include "plexus/ir.hpp"

#include <string>
#include <vector>

namespace codegen_test::build {

namespace ir = plexus::ir;
using ir::Expr;
using ir::Scalar;
using ir::Stmt;
using ir::Type;
using B = ir::BinaryOp;

inline Expr int_const(Scalar t, int64_t v) {
    return ir::Const::make_int(t, v);
}
inline Expr float_const(Scalar t, double v) {
    return ir::Const::make_float(t, v);
}
inline Expr i32(int32_t v) {
    return int_const(Scalar::I32, v);
}
inline Expr u32(uint32_t v) {
    return int_const(Scalar::U32, v);
}
inline Expr i64(int64_t v) {
    return int_const(Scalar::I64, v);
}
inline Expr u64(uint64_t v) {
    return int_const(Scalar::U64, static_cast<int64_t>(v));
}
inline Expr f32(float v) {
    return float_const(Scalar::F32, v);
}
inline Expr f64(double v) {
    return float_const(Scalar::F64, v);
}
inline Expr var(const std::string& n, const Type& t) {
    return ir::Var::make(n, t);
}
inline Expr bin(B op, Expr a, Expr b) {
    return ir::Binary::make(op, std::move(a), std::move(b));
}
inline Expr neg(Expr a) {
    return ir::Unary::make(ir::UnaryOp::Neg, std::move(a));
}
inline Expr bitnot(Expr a) {
    return ir::Unary::make(ir::UnaryOp::BitNot, std::move(a));
}
inline Expr cast(const Type& t, Expr a) {
    return ir::Cast::make(t, std::move(a));
}
inline Expr call(const std::string& n, std::vector<Expr> args = {}) {
    return ir::Call::make(n, std::move(args));
}
inline Expr load(const std::string& a, ir::Space s, const Type& t, Expr i) {
    return ir::Load::make(a, s, t, std::move(i));
}
inline Expr gload(const std::string& a, const Type& t, Expr i) {
    return load(a, ir::Space::Global, t, std::move(i));
}
inline Expr lload(const std::string& a, const Type& t, Expr i) {
    return load(a, ir::Space::Local, t, std::move(i));
}
inline Expr select(Expr c, Expr a, Expr b) {
    return ir::Select::make(std::move(c), std::move(a), std::move(b));
}
inline Expr atomic(ir::AtomicOp op, const std::string& a, ir::Space s, Scalar t, Expr i, Expr v,
                   Expr cmp = nullptr) {
    return ir::Atomic::make(op, a, s, t, std::move(i), std::move(v), std::move(cmp));
}
inline Expr field(Expr base, uint32_t i) {
    return ir::Field::make(std::move(base), i);
}
inline Expr lanes(Expr base, std::vector<uint8_t> l) {
    return ir::Swizzle::make(std::move(base), std::move(l));
}
inline Expr splat(Expr v, uint32_t n) {
    return ir::Broadcast::make(std::move(v), n);
}
inline Expr construct(const Type& t, std::vector<Expr> args) {
    return ir::Construct::make(t, std::move(args));
}
inline Expr make_variant(const Type& t, uint32_t c, Expr payload = nullptr) {
    return ir::MakeVariant::make(t, c, std::move(payload));
}

inline Stmt let(const std::string& n, Expr e) {
    return ir::Let::make(n, std::move(e));
}
inline Stmt assign(const std::string& n, Expr e, ir::Path path = {}) {
    return ir::Assign::make(n, std::move(e), std::move(path));
}
inline Stmt store(const std::string& a, ir::Space s, Expr i, Expr v, ir::Path path = {}) {
    return ir::Store::make(a, s, std::move(i), std::move(v), std::move(path));
}
inline Stmt gstore(const std::string& a, Expr i, Expr v, ir::Path path = {}) {
    return store(a, ir::Space::Global, std::move(i), std::move(v), std::move(path));
}
inline Stmt lstore(const std::string& a, Expr i, Expr v) {
    return store(a, ir::Space::Local, std::move(i), std::move(v));
}
inline Stmt block(std::vector<Stmt> s) {
    return ir::Block::make(std::move(s));
}
inline Stmt if_(Expr c, std::vector<Stmt> t, std::vector<Stmt> e = {}) {
    return ir::If::make(std::move(c), block(std::move(t)),
                        e.empty() ? nullptr : block(std::move(e)));
}
inline Stmt for_(const std::string& v, Expr begin, Expr end, std::vector<Stmt> body) {
    Expr step = ir::Const::make_int(begin->type.scalar(), 1);
    return ir::For::make(v, std::move(begin), std::move(end), std::move(step),
                         block(std::move(body)));
}
inline Stmt eval(Expr e) {
    return ir::Eval::make(std::move(e));
}

inline ir::Param buffer(const std::string& n, const Type& t, ir::Access a) {
    return {n, ir::Param::Kind::Buffer, t, a};
}
inline ir::Param scalar(const std::string& n, Scalar t) {
    return {n, ir::Param::Kind::Scalar, t, ir::Access::Read};
}

// The kernel with its records and variants collected, validated.
inline ir::Kernel make(const std::string& name, std::vector<ir::Param> params,
                       std::vector<ir::ArrayDecl> shared, std::vector<Stmt> body,
                       std::vector<ir::ArrayDecl> privates = {}) {
    ir::Kernel k;
    k.name = name;
    k.params = std::move(params);
    k.shared = std::move(shared);
    k.privates = std::move(privates);
    k.body = block(std::move(body));
    ir::collect_types(k);
    ir::validate(k);
    return k;
}

// gid = i32(global_id_x), the usual first line, and the names it and the size n go by.
inline Stmt gid_i32() {
    return let("gid", cast(Scalar::I32, call("global_id_x")));
}
inline Expr gid() {
    return var("gid", Scalar::I32);
}
inline Expr n_i32() {
    return var("n", Scalar::I32);
}

} // namespace codegen_test::build
