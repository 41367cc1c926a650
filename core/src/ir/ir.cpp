// Node factories: construction is the first validator, so every make() checks its operands.
#include "plexus/catalog.hpp"
#include "plexus/error.hpp"
#include "plexus/ir.hpp"

#include <algorithm>
#include <set>

namespace plexus::ir {
namespace {

[[noreturn]] void fail(const std::string& what) { throw Error(ErrorCode::InvalidKernel, what); }

void require(const Expr& e, const char* role) {
    if (!e) fail(std::string("missing ") + role + " expression");
}
void require(const Stmt& s, const char* role) {
    if (!s) fail(std::string("missing ") + role + " statement");
}
void require_name(const std::string& name, const char* role) {
    if (name.empty()) fail(std::string("empty ") + role + " name");
}
void require_integer(const Expr& e, const char* role) {
    require(e, role);
    if (!is_integer(e->type))
        fail(std::string(role) + " must be an integer, not " + to_string(e->type));
}
void require_bool(const Expr& e, const char* role) {
    require(e, role);
    if (e->type != Scalar::Bool)
        fail(std::string(role) + " must be bool, not " + to_string(e->type));
}

} // namespace

const char* to_string(Scalar t) {
    switch (t) {
    case Scalar::Void: return "void";
    case Scalar::Bool: return "bool";
    case Scalar::I32: return "i32";
    case Scalar::U32: return "u32";
    case Scalar::I64: return "i64";
    case Scalar::U64: return "u64";
    case Scalar::F32: return "f32";
    case Scalar::F64: return "f64";
    }
    return "?";
}

std::optional<Scalar> scalar_from_string(std::string_view s) {
    for (Scalar t : {Scalar::Bool, Scalar::I32, Scalar::U32, Scalar::I64, Scalar::U64, Scalar::F32,
                     Scalar::F64})
        if (s == to_string(t)) return t;
    return std::nullopt;
}

size_t size_of(Scalar t) {
    switch (t) {
    case Scalar::Void: return 0;
    case Scalar::Bool: return 1;
    case Scalar::I32: case Scalar::U32: case Scalar::F32: return 4;
    case Scalar::I64: case Scalar::U64: case Scalar::F64: return 8;
    }
    return 0;
}

const char* to_string(Space s) { return s == Space::Global ? "global" : "local"; }
const char* to_string(Access a) {
    return a == Access::Read ? "read" : a == Access::Write ? "write" : "readwrite";
}
const char* to_string(ExprKind k) {
    switch (k) {
#define PLEXUS_X(name) case ExprKind::name: return #name;
        PLEXUS_IR_EXPRS(PLEXUS_X)
#undef PLEXUS_X
    }
    return "?";
}
const char* to_string(StmtKind k) {
    switch (k) {
#define PLEXUS_X(name) case StmtKind::name: return #name;
        PLEXUS_IR_STMTS(PLEXUS_X)
#undef PLEXUS_X
    }
    return "?";
}
const char* to_string(UnaryOp op) {
    switch (op) {
    case UnaryOp::Neg: return "neg";
    case UnaryOp::Not: return "not";
    case UnaryOp::BitNot: return "bitnot";
    }
    return "?";
}
static constexpr const char* binary_names[] = {
    "add", "sub", "mul", "div", "rem", "min", "max", "bitand", "bitor", "bitxor", "shl", "shr",
    "and", "or", "eq", "ne", "lt", "le", "gt", "ge"};
const char* to_string(BinaryOp op) { return binary_names[static_cast<int>(op)]; }
std::optional<BinaryOp> binary_op_from_string(std::string_view s) {
    for (int i = 0; i < int(std::size(binary_names)); ++i)
        if (s == binary_names[i]) return static_cast<BinaryOp>(i);
    return std::nullopt;
}
const char* c_symbol(BinaryOp op) {
    switch (op) {
    case BinaryOp::Add: return "+";
    case BinaryOp::Sub: return "-";
    case BinaryOp::Mul: return "*";
    case BinaryOp::Div: return "/";
    case BinaryOp::Rem: return "%";
    case BinaryOp::BitAnd: return "&";
    case BinaryOp::BitOr: return "|";
    case BinaryOp::BitXor: return "^";
    case BinaryOp::Shl: return "<<";
    case BinaryOp::Shr: return ">>";
    case BinaryOp::LogicalAnd: return "&&";
    case BinaryOp::LogicalOr: return "||";
    case BinaryOp::Eq: return "==";
    case BinaryOp::Ne: return "!=";
    case BinaryOp::Lt: return "<";
    case BinaryOp::Le: return "<=";
    case BinaryOp::Gt: return ">";
    case BinaryOp::Ge: return ">=";
    case BinaryOp::Min: case BinaryOp::Max: return nullptr;
    }
    return nullptr;
}

const char* to_string(AtomicOp op) {
    static constexpr const char* names[] = {"add", "sub", "min", "max", "and",
                                            "or",  "xor", "xchg", "cmpxchg"};
    return names[static_cast<int>(op)];
}
const char* to_string(FenceScope s) { return s == FenceScope::WorkGroup ? "workgroup" : "device"; }

// ---- expressions ---------------------------------------------------------------------------

Expr Const::make_int(Scalar t, int64_t v) {
    if (!is_integer(t) && t != Scalar::Bool)
        fail(std::string("integer constant of type ") + to_string(t));
    auto c = std::make_shared<Const>(t);
    c->i = t == Scalar::Bool ? (v != 0) : v;
    if (t == Scalar::I32) c->i = static_cast<int32_t>(v);
    if (t == Scalar::U32) c->i = static_cast<uint32_t>(v);
    return c;
}
Expr Const::make_float(Scalar t, double v) {
    if (!is_float(t)) fail(std::string("float constant of type ") + to_string(t));
    auto c = std::make_shared<Const>(t);
    c->f = t == Scalar::F32 ? static_cast<double>(static_cast<float>(v)) : v;
    return c;
}
Expr Const::make_bool(bool v) { return make_int(Scalar::Bool, v); }

Expr Var::make(std::string name, Scalar t) {
    require_name(name, "variable");
    if (t == Scalar::Void) fail("variable '" + name + "' of type void");
    auto v = std::make_shared<Var>(t);
    v->name = std::move(name);
    return v;
}

Expr Unary::make(UnaryOp op, Expr a) {
    require(a, "operand");
    if (op == UnaryOp::Not) require_bool(a, "operand of !");
    if (op == UnaryOp::Neg && !is_arithmetic(a->type))
        fail(std::string("negation of ") + to_string(a->type));
    if (op == UnaryOp::BitNot && !is_integer(a->type))
        fail(std::string("~ of ") + to_string(a->type));
    auto u = std::make_shared<Unary>(a->type);
    u->op = op;
    u->a = std::move(a);
    return u;
}

Expr Binary::make(BinaryOp op, Expr a, Expr b) {
    require(a, "left operand");
    require(b, "right operand");
    const char* name = to_string(op);
    if (a->type != b->type)
        fail(std::string("operands of ") + name + " have different types: " + to_string(a->type) +
             " and " + to_string(b->type) + " (cast one of them)");
    Scalar t = a->type;
    Scalar result = t;
    switch (op) {
    case BinaryOp::Add: case BinaryOp::Sub: case BinaryOp::Mul: case BinaryOp::Div:
    case BinaryOp::Min: case BinaryOp::Max:
        if (!is_arithmetic(t)) fail(std::string(name) + " of " + to_string(t));
        break;
    case BinaryOp::Rem: case BinaryOp::BitAnd: case BinaryOp::BitOr: case BinaryOp::BitXor:
    case BinaryOp::Shl: case BinaryOp::Shr:
        if (!is_integer(t)) fail(std::string(name) + " needs integers, not " + to_string(t));
        break;
    case BinaryOp::LogicalAnd: case BinaryOp::LogicalOr:
        if (t != Scalar::Bool) fail(std::string(name) + " needs bool, not " + to_string(t));
        break;
    case BinaryOp::Eq: case BinaryOp::Ne:
        result = Scalar::Bool;
        break;
    case BinaryOp::Lt: case BinaryOp::Le: case BinaryOp::Gt: case BinaryOp::Ge:
        if (!is_arithmetic(t)) fail(std::string(name) + " of " + to_string(t));
        result = Scalar::Bool;
        break;
    }
    auto n = std::make_shared<Binary>(result);
    n->op = op;
    n->a = std::move(a);
    n->b = std::move(b);
    return n;
}

Expr Select::make(Expr cond, Expr a, Expr b) {
    require_bool(cond, "select condition");
    require(a, "select arm");
    require(b, "select arm");
    if (a->type != b->type)
        fail(std::string("select arms have different types: ") + to_string(a->type) + " and " +
             to_string(b->type));
    auto n = std::make_shared<Select>(a->type);
    n->cond = std::move(cond);
    n->a = std::move(a);
    n->b = std::move(b);
    return n;
}

Expr Cast::make(Scalar to, Expr a) {
    require(a, "cast operand");
    if (to == Scalar::Void) fail("cast to void");
    auto n = std::make_shared<Cast>(to);
    n->a = std::move(a);
    return n;
}

Expr Load::make(std::string array, Space space, Scalar elem, Expr index) {
    require_name(array, "array");
    require_integer(index, ("index into " + array).c_str());
    if (elem == Scalar::Void || elem == Scalar::Bool)
        fail("array '" + array + "' of " + to_string(elem) + " elements");
    auto n = std::make_shared<Load>(elem);
    n->array = std::move(array);
    n->space = space;
    n->index = std::move(index);
    return n;
}

Expr Call::make(std::string name, std::vector<Expr> args) {
    const IntrinsicInfo* info = find_intrinsic(name);
    if (!info) fail("unknown intrinsic '" + name + "'");
    if (info->convergence == Convergence::Barrier || name.rfind("atomic_", 0) == 0 ||
        name.rfind("fence_", 0) == 0)
        fail("intrinsic '" + name + "' is a statement (Barrier, Fence or Atomic), not a call");
    if (args.size() != info->args.size())
        fail("intrinsic '" + name + "' takes " + std::to_string(info->args.size()) +
             " arguments, got " + std::to_string(args.size()));
    for (size_t i = 0; i < args.size(); ++i) {
        require(args[i], "argument");
        if (args[i]->type != info->args[i])
            fail("argument " + std::to_string(i) + " of '" + name + "' must be " +
                 to_string(info->args[i]) + ", not " + to_string(args[i]->type));
    }
    auto n = std::make_shared<Call>(info->result);
    n->name = std::move(name);
    n->args = std::move(args);
    return n;
}

std::string Atomic::intrinsic() const {
    return std::string("atomic_") + to_string(op) + "_" + to_string(type) + "_" + to_string(space);
}

Expr Atomic::make(AtomicOp op, std::string array, Space space, Scalar elem, Expr index, Expr value,
                  Expr compare) {
    require_name(array, "array");
    require_integer(index, ("index into " + array).c_str());
    require(value, "atomic operand");
    if (value->type != elem)
        fail("atomic operand of type " + std::string(to_string(value->type)) + " on '" + array +
             "' of " + to_string(elem));
    if ((op == AtomicOp::CmpXchg) != bool(compare))
        fail(op == AtomicOp::CmpXchg ? "compare-exchange needs a compare value"
                                     : "only compare-exchange takes a compare value");
    if (compare && compare->type != elem) fail("compare value of another type than the array");
    auto n = std::make_shared<Atomic>(elem);
    n->op = op;
    n->array = std::move(array);
    n->space = space;
    n->index = std::move(index);
    n->value = std::move(value);
    n->compare = std::move(compare);
    if (!find_intrinsic(n->intrinsic()))
        fail("atomic " + std::string(to_string(op)) + " on " + to_string(elem) +
             " is not in the catalog");
    return n;
}

// ---- statements --------------------------------------------------------------------------

Stmt Block::make(std::vector<Stmt> body) {
    for (auto& s : body) require(s, "block element");
    auto n = std::make_shared<Block>();
    n->body = std::move(body);
    return n;
}
Stmt Let::make(std::string name, Expr init) {
    require_name(name, "variable");
    require(init, ("initializer of " + name).c_str());
    if (init->type == Scalar::Void) fail("variable '" + name + "' of type void");
    auto n = std::make_shared<Let>();
    n->name = std::move(name);
    n->type = init->type;
    n->init = std::move(init);
    return n;
}
Stmt Assign::make(std::string name, Expr value) {
    require_name(name, "variable");
    require(value, ("value assigned to " + name).c_str());
    auto n = std::make_shared<Assign>();
    n->name = std::move(name);
    n->value = std::move(value);
    return n;
}
Stmt Store::make(std::string array, Space space, Expr index, Expr value) {
    require_name(array, "array");
    require_integer(index, ("index into " + array).c_str());
    require(value, ("value stored to " + array).c_str());
    auto n = std::make_shared<Store>();
    n->array = std::move(array);
    n->space = space;
    n->index = std::move(index);
    n->value = std::move(value);
    return n;
}
Stmt If::make(Expr cond, Stmt then_body, Stmt else_body) {
    require_bool(cond, "if condition");
    require(then_body, "then");
    auto n = std::make_shared<If>();
    n->cond = std::move(cond);
    n->then_body = std::move(then_body);
    n->else_body = std::move(else_body);
    return n;
}
Stmt For::make(std::string var, Expr begin, Expr end, Expr step, Stmt body) {
    require_name(var, "loop variable");
    require_integer(begin, "loop begin");
    require_integer(end, "loop end");
    require_integer(step, "loop step");
    require(body, "loop body");
    if (begin->type != end->type || begin->type != step->type)
        fail("loop '" + var + "': begin, end and step must have one type");
    auto n = std::make_shared<For>();
    n->var = std::move(var);
    n->type = begin->type;
    n->begin = std::move(begin);
    n->end = std::move(end);
    n->step = std::move(step);
    n->body = std::move(body);
    return n;
}
Stmt While::make(Expr cond, Stmt body) {
    require_bool(cond, "while condition");
    require(body, "loop body");
    auto n = std::make_shared<While>();
    n->cond = std::move(cond);
    n->body = std::move(body);
    return n;
}
Stmt Break::make() { return std::make_shared<Break>(); }
Stmt Continue::make() { return std::make_shared<Continue>(); }
Stmt Return::make() { return std::make_shared<Return>(); }
Stmt Barrier::make() { return std::make_shared<Barrier>(); }
Stmt Fence::make(FenceScope scope) {
    auto n = std::make_shared<Fence>();
    n->scope = scope;
    return n;
}
std::string Fence::intrinsic() const {
    return scope == FenceScope::WorkGroup ? "fence_workgroup" : "fence_device";
}
Stmt Eval::make(Expr value) {
    require(value, "evaluated");
    auto n = std::make_shared<Eval>();
    n->value = std::move(value);
    return n;
}
Stmt Native::make(std::map<std::string, std::string> code, Stmt fallback) {
    if (code.empty()) fail("native block without any backend code");
    for (auto& [backend, text] : code) require_name(backend, "native block backend");
    auto n = std::make_shared<Native>();
    n->code = std::move(code);
    n->fallback = std::move(fallback);
    return n;
}

// ---- the kernel ----------------------------------------------------------------------------

const Param* Kernel::param(std::string_view n) const {
    for (auto& p : params)
        if (p.name == n) return &p;
    return nullptr;
}
const SharedArray* Kernel::shared_array(std::string_view n) const {
    for (auto& s : shared)
        if (s.name == n) return &s;
    return nullptr;
}
uint64_t Kernel::shared_bytes() const {
    uint64_t total = 0;
    for (auto& s : shared) total += uint64_t(s.count) * size_of(s.type);
    return total;
}
uint64_t Kernel::hash() const {
    uint64_t h = 0xcbf29ce484222325ull;
    for (unsigned char c : canonical_json(*this)) h = (h ^ c) * 0x100000001b3ull;
    return h;
}

namespace {
struct UsesCollector : ExprVisitor<UsesCollector>, StmtVisitor<UsesCollector> {
    std::set<std::string> intrinsics;
    std::set<std::string> natives;
    KernelUses uses;
    using ExprVisitor::dispatch;
    using StmtVisitor::dispatch;

    void type(Scalar t) { uses.fp64 |= t == Scalar::F64; }
    void expr(const Expr& e) {
        if (!e) return;
        type(e->type);
        ExprVisitor::dispatch(e);
    }
    void stmt(const Stmt& s) {
        if (s) StmtVisitor::dispatch(s);
    }
    void visit(const Const&) {}
    void visit(const Var&) {}
    void visit(const Unary& n) { expr(n.a); }
    void visit(const Binary& n) { expr(n.a), expr(n.b); }
    void visit(const Select& n) { expr(n.cond), expr(n.a), expr(n.b); }
    void visit(const Cast& n) { expr(n.a); }
    void visit(const Load& n) { expr(n.index); }
    void visit(const Call& n) {
        intrinsics.insert(n.name);
        for (auto& a : n.args) expr(a);
    }
    void visit(const Atomic& n) {
        intrinsics.insert(n.intrinsic());
        expr(n.index), expr(n.value), expr(n.compare);
    }
    void visit(const Block& n) {
        for (auto& s : n.body) stmt(s);
    }
    void visit(const Let& n) { expr(n.init); }
    void visit(const Assign& n) { expr(n.value); }
    void visit(const Store& n) { expr(n.index), expr(n.value); }
    void visit(const If& n) { expr(n.cond), stmt(n.then_body), stmt(n.else_body); }
    void visit(const For& n) { expr(n.begin), expr(n.end), expr(n.step), stmt(n.body); }
    void visit(const While& n) { expr(n.cond), stmt(n.body); }
    void visit(const Break&) {}
    void visit(const Continue&) {}
    void visit(const Return&) {}
    void visit(const Barrier&) {
        intrinsics.insert("barrier");
        uses.barrier = true;
    }
    void visit(const Fence& n) { intrinsics.insert(n.intrinsic()); }
    void visit(const Eval& n) { expr(n.value); }
    void visit(const Native& n) {
        uses.native_blocks = true;
        if (!n.fallback) uses.native_fallback = false;
        for (auto& [backend, code] : n.code) natives.insert(backend);
        stmt(n.fallback);
    }
};
} // namespace

KernelUses collect_uses(const Kernel& k) {
    UsesCollector c;
    for (auto& p : k.params) c.type(p.type);
    for (auto& s : k.shared) c.type(s.type);
    c.stmt(k.body);
    c.uses.intrinsics.assign(c.intrinsics.begin(), c.intrinsics.end());
    c.uses.native_backends.assign(c.natives.begin(), c.natives.end());
    return c.uses;
}

} // namespace plexus::ir
