// Node factories: construction is the first validator, so every make() checks its operands.
#include "plexus/ir.hpp"
#include "plexus/catalog.hpp"
#include "plexus/error.hpp"
#include "plexus/half.hpp"

#include <algorithm>
#include <set>

namespace plexus::ir {
namespace {

[[noreturn]] void fail(const std::string& what) {
    throw Error(ErrorCode::InvalidKernel, what);
}

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
    if (!(e->type == Scalar::Bool))
        fail(std::string(role) + " must be bool, not " + to_string(e->type));
}

} // namespace

const char* to_string(Space s) {
    return s == Space::Global ? "global" : s == Space::Local ? "local" : "private";
}
const char* to_string(Access a) {
    return a == Access::Read ? "read" : a == Access::Write ? "write" : "readwrite";
}
const char* to_string(ExprKind k) {
    switch (k) {
#define PLEXUS_X(name)                                                                             \
    case ExprKind::name: return #name;
        PLEXUS_IR_EXPRS(PLEXUS_X)
#undef PLEXUS_X
    }
    return "?";
}
const char* to_string(StmtKind k) {
    switch (k) {
#define PLEXUS_X(name)                                                                             \
    case StmtKind::name: return #name;
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
    "add", "sub", "mul", "div", "rem", "min", "max", "bitand", "bitor", "bitxor",
    "shl", "shr", "and", "or",  "eq",  "ne",  "lt",  "le",     "gt",    "ge"};
const char* to_string(BinaryOp op) {
    return binary_names[static_cast<int>(op)];
}
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
    case BinaryOp::Min:
    case BinaryOp::Max: return nullptr;
    }
    return nullptr;
}

const char* to_string(AtomicOp op) {
    static constexpr const char* names[] = {"add", "sub", "min",  "max",    "and",
                                            "or",  "xor", "xchg", "cmpxchg"};
    return names[static_cast<int>(op)];
}
const char* to_string(FenceScope s) {
    return s == FenceScope::WorkGroup ? "workgroup" : "device";
}

// ---- expressions ---------------------------------------------------------------------------

Expr Const::make_int(Scalar t, int64_t v) {
    if (!is_integer(t) && t != Scalar::Bool)
        fail(std::string("integer constant of type ") + to_string(t));
    auto c = std::make_shared<Const>(t);
    // The value as the type holds it: narrower types keep the low bits, with their sign.
    switch (t) {
    case Scalar::Bool: c->i = v != 0; break;
    case Scalar::I8: c->i = static_cast<int8_t>(v); break;
    case Scalar::U8: c->i = static_cast<uint8_t>(v); break;
    case Scalar::I16: c->i = static_cast<int16_t>(v); break;
    case Scalar::U16: c->i = static_cast<uint16_t>(v); break;
    case Scalar::I32: c->i = static_cast<int32_t>(v); break;
    case Scalar::U32: c->i = static_cast<uint32_t>(v); break;
    default: c->i = v; break;
    }
    return c;
}
Expr Const::make_float(Scalar t, double v) {
    if (!is_float(t)) fail(std::string("float constant of type ") + to_string(t));
    auto c = std::make_shared<Const>(t);
    const float single = static_cast<float>(v);
    switch (t) {
    case Scalar::F16: c->f = round_to_f16(single); break;
    case Scalar::BF16: c->f = round_to_bf16(single); break;
    case Scalar::F32: c->f = single; break;
    default: c->f = v; break;
    }
    return c;
}
Expr Const::make_bool(bool v) {
    return make_int(Scalar::Bool, v);
}

Expr Var::make(std::string name, Type t) {
    require_name(name, "variable");
    if (t.is_void()) fail("variable '" + name + "' of type void");
    auto v = std::make_shared<Var>(t);
    v->name = std::move(name);
    return v;
}

Expr Unary::make(UnaryOp op, Expr a) {
    require(a, "operand");
    if (op == UnaryOp::Not) require_bool(a, "operand of !");
    if (op == UnaryOp::Neg && !elem_arithmetic(a->type))
        fail(std::string("negation of ") + to_string(a->type));
    if (op == UnaryOp::BitNot && !elem_integer(a->type))
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
    if (!(a->type == b->type))
        fail(std::string("operands of ") + name + " have different types: " + to_string(a->type) +
             " and " + to_string(b->type) + " (cast one of them)");
    const Type t = a->type;
    Type result = t;
    switch (op) {
    case BinaryOp::Add:
    case BinaryOp::Sub:
    case BinaryOp::Mul:
    case BinaryOp::Div:
    case BinaryOp::Min:
    case BinaryOp::Max:
        if (!elem_arithmetic(t)) fail(std::string(name) + " of " + to_string(t));
        break;
    case BinaryOp::Rem:
    case BinaryOp::BitAnd:
    case BinaryOp::BitOr:
    case BinaryOp::BitXor:
    case BinaryOp::Shl:
    case BinaryOp::Shr:
        if (!elem_integer(t)) fail(std::string(name) + " needs integers, not " + to_string(t));
        break;
    case BinaryOp::LogicalAnd:
    case BinaryOp::LogicalOr:
        if (!(t == Scalar::Bool)) fail(std::string(name) + " needs bool, not " + to_string(t));
        break;
    case BinaryOp::Eq:
    case BinaryOp::Ne:
        if (!t.is_scalar())
            fail(std::string(name) + " of " + to_string(t) +
                 " (compare scalars, e.g. lane by lane)");
        result = Scalar::Bool;
        break;
    case BinaryOp::Lt:
    case BinaryOp::Le:
    case BinaryOp::Gt:
    case BinaryOp::Ge:
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
    if (!(a->type == b->type))
        fail(std::string("select arms have different types: ") + to_string(a->type) + " and " +
             to_string(b->type));
    auto n = std::make_shared<Select>(a->type);
    n->cond = std::move(cond);
    n->a = std::move(a);
    n->b = std::move(b);
    return n;
}

Expr Cast::make(Type to, Expr a) {
    require(a, "cast operand");
    if (to.is_void()) fail("cast to void");
    const Type& from = a->type;
    const bool scalars = to.is_scalar() && from.is_scalar();
    const bool vectors = to.is_vector() && from.is_vector() && to.lanes() == from.lanes();
    if (!scalars && !vectors)
        fail("cast from " + to_string(from) + " to " + to_string(to) +
             " (casts convert scalars, or vectors of one lane count lane by lane)");
    auto n = std::make_shared<Cast>(to);
    n->a = std::move(a);
    return n;
}

Expr Load::make(std::string array, Space space, Type elem, Expr index) {
    require_name(array, "array");
    require_integer(index, ("index into " + array).c_str());
    if (!is_storable(elem)) fail("array '" + array + "' of " + to_string(elem) + " elements");
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
        name.rfind("fence_", 0) == 0 || name.rfind("matrix_", 0) == 0)
        fail("intrinsic '" + name +
             "' is a statement (Barrier, Fence, Atomic or Matrix), not a call");
    if (args.size() != info->args.size())
        fail("intrinsic '" + name + "' takes " + std::to_string(info->args.size()) +
             " arguments, got " + std::to_string(args.size()));
    for (size_t i = 0; i < args.size(); ++i) {
        require(args[i], "argument");
        if (!(args[i]->type == info->args[i]))
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
    if (space == Space::Private)
        fail("atomic on the private array '" + array + "' (only one work-item sees it)");
    if (!(value->type == elem))
        fail("atomic operand of type " + to_string(value->type) + " on '" + array + "' of " +
             to_string(elem));
    if ((op == AtomicOp::CmpXchg) != bool(compare))
        fail(op == AtomicOp::CmpXchg ? "compare-exchange needs a compare value"
                                     : "only compare-exchange takes a compare value");
    if (compare && !(compare->type == elem)) fail("compare value of another type than the array");
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

Expr Field::make(Expr base, uint32_t index) {
    require(base, "record");
    if (!base->type.is_record())
        fail("field " + std::to_string(index) + " of " + to_string(base->type) +
             ", which is not a record");
    const TypeDecl& d = *base->type.decl();
    if (index >= d.members.size())
        fail("record '" + d.name + "' has " + std::to_string(d.members.size()) +
             " fields, not field " + std::to_string(index));
    auto n = std::make_shared<Field>(d.members[index].type);
    n->base = std::move(base);
    n->index = index;
    return n;
}

Expr Swizzle::make(Expr base, std::vector<uint8_t> lanes) {
    require(base, "vector");
    if (!base->type.is_vector())
        fail("lanes of " + to_string(base->type) + ", which is not a vector");
    if (lanes.size() != 1 && !valid_lanes(uint32_t(lanes.size())))
        fail("a swizzle of " + std::to_string(lanes.size()) + " lanes (1, 2, 3, 4 or 8)");
    for (uint8_t l : lanes)
        if (l >= base->type.lanes())
            fail("lane " + std::to_string(l) + " of " + to_string(base->type) + ", which has " +
                 std::to_string(base->type.lanes()));
    Type t = lanes.size() == 1 ? Type(base->type.scalar())
                               : Type::vector(base->type.scalar(), uint32_t(lanes.size()));
    auto n = std::make_shared<Swizzle>(t);
    n->base = std::move(base);
    n->lanes = std::move(lanes);
    return n;
}

Expr Broadcast::make(Expr value, uint32_t lanes) {
    require(value, "broadcast value");
    if (!value->type.is_scalar())
        fail("broadcast of " + to_string(value->type) + ", which is not a scalar");
    auto n = std::make_shared<Broadcast>(Type::vector(value->type.scalar(), lanes));
    n->value = std::move(value);
    return n;
}

Expr Construct::make(Type t, std::vector<Expr> args) {
    for (auto& a : args)
        require(a, "constructor argument");
    if (t.is_vector()) {
        if (args.size() != t.lanes())
            fail(to_string(t) + " built from " + std::to_string(args.size()) + " values, not " +
                 std::to_string(t.lanes()));
        for (size_t i = 0; i < args.size(); ++i)
            if (!(args[i]->type == t.scalar()))
                fail("lane " + std::to_string(i) + " of " + to_string(t) + " given a " +
                     to_string(args[i]->type));
    } else if (t.is_record()) {
        const TypeDecl& d = *t.decl();
        if (args.size() != d.members.size())
            fail("record '" + d.name + "' built from " + std::to_string(args.size()) +
                 " values, it has " + std::to_string(d.members.size()) + " fields");
        for (size_t i = 0; i < args.size(); ++i)
            if (!(args[i]->type == d.members[i].type))
                fail("field '" + d.members[i].name + "' of '" + d.name + "' is " +
                     to_string(d.members[i].type) + ", given a " + to_string(args[i]->type));
    } else {
        fail("a constructor of " + to_string(t) + " (vectors and records are constructed)");
    }
    auto n = std::make_shared<Construct>(t);
    n->args = std::move(args);
    return n;
}

Expr MakeVariant::make(Type t, uint32_t index, Expr payload) {
    if (!t.is_variant()) fail("a variant value of " + to_string(t) + ", which is not a variant");
    const TypeDecl& d = *t.decl();
    if (index >= d.members.size())
        fail("variant '" + d.name + "' has " + std::to_string(d.members.size()) +
             " cases, not case " + std::to_string(index));
    const Member& c = d.members[index];
    if (c.type.is_void() != !payload)
        fail("case '" + c.name + "' of '" + d.name + "' " +
             (payload ? "has no payload" : "needs a payload of " + to_string(c.type)));
    if (payload && !(payload->type == c.type))
        fail("case '" + c.name + "' of '" + d.name + "' holds " + to_string(c.type) + ", given a " +
             to_string(payload->type));
    auto n = std::make_shared<MakeVariant>(t);
    n->index = index;
    n->payload = std::move(payload);
    return n;
}

// ---- statements --------------------------------------------------------------------------

Stmt Block::make(std::vector<Stmt> body) {
    for (auto& s : body)
        require(s, "block element");
    auto n = std::make_shared<Block>();
    n->body = std::move(body);
    return n;
}
Stmt Let::make(std::string name, Expr init) {
    require_name(name, "variable");
    require(init, ("initializer of " + name).c_str());
    if (init->type.is_void()) fail("variable '" + name + "' of type void");
    auto n = std::make_shared<Let>();
    n->name = std::move(name);
    n->type = init->type;
    n->init = std::move(init);
    return n;
}
std::optional<Type> path_type(const Type& root, const Path& path) {
    Type t = root;
    for (uint32_t step : path) {
        if (t.is_record() && step < t.decl()->members.size())
            t = t.decl()->members[step].type;
        else if (t.is_vector() && step < t.lanes())
            t = t.scalar();
        else
            return std::nullopt;
    }
    return t;
}

Stmt Assign::make(std::string name, Expr value, Path path) {
    require_name(name, "variable");
    require(value, ("value assigned to " + name).c_str());
    auto n = std::make_shared<Assign>();
    n->name = std::move(name);
    n->value = std::move(value);
    n->path = std::move(path);
    return n;
}
Stmt Store::make(std::string array, Space space, Expr index, Expr value, Path path) {
    require_name(array, "array");
    require_integer(index, ("index into " + array).c_str());
    require(value, ("value stored to " + array).c_str());
    auto n = std::make_shared<Store>();
    n->array = std::move(array);
    n->space = space;
    n->index = std::move(index);
    n->value = std::move(value);
    n->path = std::move(path);
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
Stmt For::make(std::string var, Expr begin, Expr end, Expr step, Stmt body, uint32_t unroll) {
    require_name(var, "loop variable");
    require_integer(begin, "loop begin");
    require_integer(end, "loop end");
    require_integer(step, "loop step");
    require(body, "loop body");
    if (begin->type != end->type || begin->type != step->type)
        fail("loop '" + var + "': begin, end and step must have one type");
    auto n = std::make_shared<For>();
    n->var = std::move(var);
    n->type = begin->type.scalar();
    n->begin = std::move(begin);
    n->end = std::move(end);
    n->step = std::move(step);
    n->body = std::move(body);
    n->unroll = unroll;
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
Stmt Break::make() {
    return std::make_shared<Break>();
}
Stmt Continue::make() {
    return std::make_shared<Continue>();
}
Stmt Return::make() {
    return std::make_shared<Return>();
}
Stmt Barrier::make() {
    return std::make_shared<Barrier>();
}
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
    for (auto& [backend, text] : code)
        require_name(backend, "native block backend");
    auto n = std::make_shared<Native>();
    n->code = std::move(code);
    n->fallback = std::move(fallback);
    return n;
}

Stmt Match::make(Expr value, std::vector<MatchCase> cases, Stmt otherwise) {
    require(value, "matched value");
    if (!value->type.is_variant())
        fail("match on " + to_string(value->type) + ", which is not a variant");
    const TypeDecl& d = *value->type.decl();
    for (auto& c : cases) {
        require(c.body, "match case");
        if (c.index >= d.members.size())
            fail("variant '" + d.name + "' has " + std::to_string(d.members.size()) +
                 " cases, not case " + std::to_string(c.index));
        if (!c.var.empty() && d.members[c.index].type.is_void())
            fail("case '" + d.members[c.index].name + "' of '" + d.name +
                 "' has no payload to bind to '" + c.var + "'");
    }
    auto n = std::make_shared<Match>();
    n->value = std::move(value);
    n->cases = std::move(cases);
    n->otherwise = std::move(otherwise);
    return n;
}

// ---- matrix fragments ----------------------------------------------------------------------

const char* to_string(MatrixUse u) {
    return u == MatrixUse::A ? "a" : u == MatrixUse::B ? "b" : "acc";
}
const char* to_string(MatrixLayout l) {
    return l == MatrixLayout::Row ? "row" : "col";
}
const char* to_string(MatrixOp op) {
    switch (op) {
    case MatrixOp::Fill: return "fill";
    case MatrixOp::Load: return "load";
    case MatrixOp::Store: return "store";
    case MatrixOp::Mma: return "mma";
    case MatrixOp::MmaShared: return "mma_shared";
    }
    return "?";
}

// ---- the default mutators (map_children, map_parts) ----------------------------------------

void parts_impl::check_replacement(const Expr& was, const Expr& now) {
    if (!now)
        throw Error(ErrorCode::Internal, "a rewrite replaced the " + to_string(was->type) + " " +
                                             to_string(was->kind) +
                                             " operand of a node with nothing");
    if (!(now->type == was->type))
        throw Error(ErrorCode::Internal,
                    "a rewrite replaced a " + to_string(was->type) + " operand with a " +
                        to_string(now->type) + " " + to_string(now->kind) +
                        " (the node keeps its type: rebuild it through make())");
}
void parts_impl::check_replacement(const Stmt& was, const Stmt& now) {
    if (!now)
        throw Error(ErrorCode::Internal,
                    std::string("a rewrite replaced the ") + to_string(was->kind) +
                        " statement held by a node with nothing (an empty Block stands for none)");
}

uint64_t swizzled_index(uint32_t rows, uint32_t elem_size, uint64_t row, uint64_t col) {
    const uint64_t e = 128 / elem_size, v = 16 / elem_size;
    return col / e * rows * e + row * e + ((col % e / v) ^ (row % 8)) * v + col % v;
}
Expr swizzled_index(uint32_t rows, uint32_t elem_size, const Expr& row, const Expr& col) {
    // In u32: the divisions and remainders by powers of two become shifts and masks, and
    // (r + 8 j) % 8 is seen to be r % 8 (indices are not negative).
    const int64_t e = 128 / elem_size, v = 16 / elem_size;
    auto u32 = [](const Expr& x) {
        return x->type == Scalar::U32 ? x : Cast::make(Scalar::U32, x);
    };
    auto k = [](int64_t c) { return Const::make_int(Scalar::U32, c); };
    auto op = [](BinaryOp o, Expr a, Expr b) {
        return Binary::make(o, std::move(a), std::move(b));
    };
    const Expr r = u32(row), c = u32(col);
    Expr panel = op(BinaryOp::Mul, op(BinaryOp::Div, c, k(e)), k(int64_t(rows) * e));
    Expr chunk = op(BinaryOp::BitXor, op(BinaryOp::Div, op(BinaryOp::Rem, c, k(e)), k(v)),
                    op(BinaryOp::Rem, r, k(8)));
    return op(BinaryOp::Add, op(BinaryOp::Add, panel, op(BinaryOp::Mul, r, k(e))),
              op(BinaryOp::Add, op(BinaryOp::Mul, chunk, k(v)), op(BinaryOp::Rem, c, k(v))));
}

std::string FragmentDecl::shape() const {
    // Appended piece by piece: GCC 12's -Wrestrict misreads `"m" + std::to_string(m)` here.
    std::string s = "m";
    s += std::to_string(m);
    s += 'n';
    s += std::to_string(n);
    s += 'k';
    s += std::to_string(k);
    return s;
}
std::string FragmentDecl::intrinsic() const {
    const char* t = use != MatrixUse::Acc && type == Scalar::F32 ? "tf32" : ir::to_string(type);
    return std::string("matrix_") + to_string(use) + "_" + shape() + "_" + t;
}
std::string FragmentDecl::check() const {
    const bool k16 = m == 16 && n == 16 && k == 16, k8 = m == 16 && n == 16 && k == 8;
    if (warpgroup()) {
        if (k != 16 || n == 0 || n % 64 != 0 || n > 256)
            return "shape " + shape() +
                   " (warpgroup accumulators are m64nNk16 with N 64, 128, 192 or 256)";
        if (use != MatrixUse::Acc || type != Scalar::F32)
            return std::string(use == MatrixUse::Acc ? "an accumulator" : "an A or B fragment") +
                   " of " + ir::to_string(type) + " at " + shape() +
                   " (m64 shapes are f32 accumulators; their A and B are swizzled shared arrays)";
        return {};
    }
    if (!k16 && !k8)
        return "shape " + shape() +
               " (fragments are m16n16k16 or m16n16k8, or m64nNk16 accumulators)";
    const std::string what =
        std::string(use == MatrixUse::Acc ? "an accumulator" : "an A or B fragment") + " of " +
        ir::to_string(type) + " at " + shape();
    if (use == MatrixUse::Acc) {
        if (type == Scalar::F32 || (type == Scalar::F16 && k16)) return {};
        return what + " (accumulators are f32, or f16 at m16n16k16)";
    }
    if (k16 && (type == Scalar::F16 || type == Scalar::BF16)) return {};
    if (k8 && type == Scalar::F32) return {};
    return what + " (A and B are f16 or bf16 at m16n16k16, tf32 as f32 at m16n16k8)";
}

Stmt Matrix::fill(std::string frag, Expr value) {
    require_name(frag, "fragment");
    require(value, "fill value");
    if (!is_arithmetic(value->type))
        fail("a fragment is filled with a number, not " + to_string(value->type));
    auto n = std::make_shared<Matrix>();
    n->op = MatrixOp::Fill;
    n->frag = std::move(frag);
    n->value = std::move(value);
    return n;
}
namespace {
Stmt matrix_memory(MatrixOp op, std::string frag, std::string array, Space space, Expr index,
                   Expr stride, MatrixLayout layout) {
    require_name(frag, "fragment");
    require_name(array, "array");
    require_integer(index, "fragment index");
    require_integer(stride, "fragment stride");
    if (space == Space::Private)
        fail("fragment " + frag +
             ": a fragment loads from and stores to a buffer or a shared array, not the private "
             "array '" +
             array + "'");
    auto n = std::make_shared<Matrix>();
    n->op = op;
    n->frag = std::move(frag);
    n->array = std::move(array);
    n->space = space;
    n->index = std::move(index);
    n->stride = std::move(stride);
    n->layout = layout;
    return n;
}
} // namespace
Stmt Matrix::load(std::string frag, std::string array, Space space, Expr index, Expr stride,
                  MatrixLayout layout) {
    return matrix_memory(MatrixOp::Load, std::move(frag), std::move(array), space, std::move(index),
                         std::move(stride), layout);
}
Stmt Matrix::store(std::string frag, std::string array, Space space, Expr index, Expr stride,
                   MatrixLayout layout) {
    return matrix_memory(MatrixOp::Store, std::move(frag), std::move(array), space,
                         std::move(index), std::move(stride), layout);
}
Stmt Matrix::store_bounded(std::string frag, std::string array, Space space, Expr index,
                           Expr stride, Expr rows, Expr cols) {
    require_integer(rows, "fragment store row bound");
    require_integer(cols, "fragment store column bound");
    auto n = std::make_shared<Matrix>(static_cast<const Matrix&>(
        *matrix_memory(MatrixOp::Store, std::move(frag), std::move(array), space, std::move(index),
                       std::move(stride), MatrixLayout::Row)));
    n->rows = std::move(rows);
    n->cols = std::move(cols);
    return n;
}
Stmt Matrix::mma_shared(std::string d, std::string a, Expr row_a, Expr col_a, std::string b,
                        Expr row_b, Expr col_b, uint32_t steps, uint32_t in_flight) {
    require_name(d, "mma_shared accumulator");
    require_name(a, "mma_shared A array");
    require_name(b, "mma_shared B array");
    require_integer(row_a, "mma_shared A row");
    require_integer(col_a, "mma_shared A column");
    require_integer(row_b, "mma_shared B row");
    require_integer(col_b, "mma_shared B column");
    if (steps == 0 || steps > 64)
        fail("mma_shared of " + std::to_string(steps) + " steps of k = 16 (1 to 64)");
    if (in_flight > 7)
        fail("mma_shared leaving " + std::to_string(in_flight) + " in flight (0 to 7)");
    auto n = std::make_shared<Matrix>();
    n->op = MatrixOp::MmaShared;
    n->frag = std::move(d);
    n->array = std::move(a);
    n->space = Space::Local;
    n->array_b = std::move(b);
    n->row_a = std::move(row_a), n->col_a = std::move(col_a);
    n->row_b = std::move(row_b), n->col_b = std::move(col_b);
    n->steps = steps;
    n->in_flight = in_flight;
    return n;
}
Stmt Matrix::mma(std::string d, std::string a, std::string b, std::string c) {
    require_name(d, "mma result fragment");
    require_name(a, "mma A fragment");
    require_name(b, "mma B fragment");
    require_name(c, "mma C fragment");
    auto n = std::make_shared<Matrix>();
    n->op = MatrixOp::Mma;
    n->frag = std::move(d);
    n->a = std::move(a);
    n->b = std::move(b);
    n->c = std::move(c);
    return n;
}

// ---- asynchronous copies ---------------------------------------------------------------------

const char* to_string(AsyncCopyOp op) {
    switch (op) {
    case AsyncCopyOp::Copy: return "copy";
    case AsyncCopyOp::Commit: return "commit";
    case AsyncCopyOp::Wait: return "wait";
    }
    return "?";
}

Stmt AsyncCopy::copy(std::string array, Expr index, std::string buffer, Expr src_index,
                     uint32_t count, Expr valid) {
    require_name(array, "async copy destination array");
    require_name(buffer, "async copy source buffer");
    require_integer(index, "async copy destination index");
    require_integer(src_index, "async copy source index");
    require_integer(valid, "async copy valid count");
    if (count == 0) fail("an async copy of 0 elements into '" + array + "'");
    auto n = std::make_shared<AsyncCopy>();
    n->op = AsyncCopyOp::Copy;
    n->array = std::move(array);
    n->index = std::move(index);
    n->buffer = std::move(buffer);
    n->src_index = std::move(src_index);
    n->count = count;
    n->valid = std::move(valid);
    return n;
}
Stmt AsyncCopy::commit() {
    auto n = std::make_shared<AsyncCopy>();
    n->op = AsyncCopyOp::Commit;
    return n;
}
Stmt AsyncCopy::wait(uint32_t pending) {
    auto n = std::make_shared<AsyncCopy>();
    n->op = AsyncCopyOp::Wait;
    n->pending = pending;
    return n;
}

// ---- the kernel ----------------------------------------------------------------------------

namespace {
template <class V> auto find_named(V& v, std::string_view n) -> decltype(&v[0]) {
    for (auto& x : v)
        if (x.name == n) return &x;
    return nullptr;
}
} // namespace

const Param* Kernel::param(std::string_view n) const {
    return find_named(params, n);
}
const ArrayDecl* Kernel::shared_array(std::string_view n) const {
    return find_named(shared, n);
}
const ArrayDecl* Kernel::private_array(std::string_view n) const {
    return find_named(privates, n);
}
const FragmentDecl* Kernel::fragment(std::string_view n) const {
    return find_named(fragments, n);
}
bool Kernel::has_warpgroup() const {
    return std::any_of(fragments.begin(), fragments.end(),
                       [](const FragmentDecl& f) { return f.warpgroup(); });
}
const TypeDecl* Kernel::type_decl(std::string_view n) const {
    for (auto& d : types)
        if (d->name == n) return d.get();
    return nullptr;
}
uint64_t Kernel::shared_bytes() const {
    uint64_t total = 0;
    for (auto& s : shared)
        total += uint64_t(s.count) * size_of(s.type);
    return total;
}
uint64_t Kernel::hash() const {
    uint64_t h = 0xcbf29ce484222325ull;
    for (unsigned char c : canonical_json(*this))
        h = (h ^ c) * 0x100000001b3ull;
    return h;
}

namespace {

// Walks every expression and statement of a kernel body, calling on_expr for each expression
// (depth first) and on_stmt for each statement.
template <class FE, class FS> void walk(const Stmt& s, FE& on_expr, FS& on_stmt) {
    on_stmt(*s);
    auto expr = [&](const Expr& e, auto& self) -> void {
        on_expr(*e);
        for_each_child(*e, [&](const Expr& c) { self(c, self); });
    };
    for_each_part(
        *s, [&](const Expr& e) { expr(e, expr); },
        [&](const Stmt& c) { walk(c, on_expr, on_stmt); });
}

} // namespace

void collect_types(Kernel& k) {
    std::vector<std::shared_ptr<const TypeDecl>> found;
    auto add = [&](const Type& t, auto& self) -> void {
        if (!t.is_aggregate()) return;
        for (auto& d : found) {
            if (d->name != t.decl()->name) continue;
            if (!(*d == *t.decl()))
                throw Error(ErrorCode::InvalidKernel, "kernel '" + k.name +
                                                          "': two different types are named '" +
                                                          d->name + "'");
            return;
        }
        for (auto& m : t.decl()->members)
            self(m.type, self); // contained types first
        found.push_back(t.decl_ptr());
    };
    auto type = [&](const Type& t) { add(t, add); };
    for (auto& p : k.params)
        type(p.type);
    for (auto& a : k.shared)
        type(a.type);
    for (auto& a : k.privates)
        type(a.type);
    auto on_expr = [&](const ExprNode& e) { type(e.type); };
    auto on_stmt = [&](const StmtNode& s) {
        if (s.kind == StmtKind::Let) type(static_cast<const Let&>(s).type);
    };
    if (k.body) walk(k.body, on_expr, on_stmt);
    k.types = std::move(found);
}

bool needs_ir_v2(const Kernel& k) {
    auto v1_type = [](const Type& t) {
        static constexpr Scalar v1[] = {Scalar::Void, Scalar::Bool, Scalar::I32, Scalar::U32,
                                        Scalar::I64,  Scalar::U64,  Scalar::F32, Scalar::F64};
        return !t.is_aggregate() && !t.is_vector() &&
               std::find(std::begin(v1), std::end(v1), t.scalar()) != std::end(v1);
    };
    bool v2 =
        !k.types.empty() || !k.privates.empty() || k.work_group.declared() || !k.fragments.empty();
    for (auto& p : k.params)
        v2 = v2 || !v1_type(p.type);
    for (auto& a : k.shared)
        v2 = v2 || !v1_type(a.type) || !a.dims.empty() || a.pad;
    auto on_expr = [&](const ExprNode& e) {
        const bool added = e.kind == ExprKind::Field || e.kind == ExprKind::Swizzle ||
                           e.kind == ExprKind::Broadcast || e.kind == ExprKind::Construct ||
                           e.kind == ExprKind::MakeVariant;
        v2 = v2 || added || !v1_type(e.type);
    };
    auto on_stmt = [&](const StmtNode& s) {
        switch (s.kind) {
        case StmtKind::Assign: v2 = v2 || !static_cast<const Assign&>(s).path.empty(); break;
        case StmtKind::Store: v2 = v2 || !static_cast<const Store&>(s).path.empty(); break;
        case StmtKind::Let: v2 = v2 || !v1_type(static_cast<const Let&>(s).type); break;
        case StmtKind::Match:
        case StmtKind::AsyncCopy: v2 = true; break;
        default: break;
        }
    };
    if (k.body) walk(k.body, on_expr, on_stmt);
    return v2;
}

bool has_loop_hints(const Kernel& k) {
    bool found = false;
    auto on_stmt = [&](const StmtNode& s) {
        found = found || (s.kind == StmtKind::For && static_cast<const For&>(s).unroll != 0);
    };
    auto on_expr = [](const ExprNode&) {};
    if (k.body) walk(k.body, on_expr, on_stmt);
    return found;
}

Kernel without_loop_hints(const Kernel& k) {
    auto keep = [](const Expr& e) { return e; };
    auto strip = [&](const Stmt& s, auto& self) -> Stmt {
        Stmt now = map_parts(s, keep, [&](const Stmt& c) { return self(c, self); });
        auto loop = as<For>(now);
        if (!loop || loop->unroll == 0) return now;
        auto copy = std::make_shared<For>(*loop);
        copy->unroll = 0;
        return copy;
    };
    Kernel out = k;
    if (out.body) out.body = strip(out.body, strip);
    return out;
}

KernelUses collect_uses(const Kernel& k) {
    std::set<std::string> intrinsics, natives;
    KernelUses uses;
    auto type = [&](const Type& t) { uses.fp64 |= t.scalar() == Scalar::F64; };
    for (auto& p : k.params)
        type(p.type);
    for (auto& s : k.shared)
        type(s.type);
    for (auto& s : k.privates)
        type(s.type);
    for (auto& d : k.types)
        for (auto& m : d->members)
            type(m.type);
    for (auto& f : k.fragments) {
        intrinsics.insert(f.intrinsic());
        // Where it runs as plain arithmetic, each subgroup works on its rows by subgroup_id.
        if (f.warpgroup()) intrinsics.insert("subgroup_id"), uses.subgroup = true;
    }
    auto on_expr = [&](const ExprNode& e) {
        type(e.type);
        if (e.kind == ExprKind::Call) {
            const std::string& name = static_cast<const Call&>(e).name;
            intrinsics.insert(name);
            const IntrinsicInfo* info = find_intrinsic(name);
            uses.subgroup |= info && info->convergence == Convergence::Subgroup;
        }
        if (e.kind == ExprKind::Atomic)
            intrinsics.insert(static_cast<const Atomic&>(e).intrinsic());
    };
    auto on_stmt = [&](const StmtNode& s) {
        if (s.kind == StmtKind::Barrier) {
            intrinsics.insert("barrier");
            uses.barrier = true;
        } else if (s.kind == StmtKind::Fence) {
            intrinsics.insert(static_cast<const Fence&>(s).intrinsic());
        } else if (s.kind == StmtKind::Native) {
            auto& n = static_cast<const Native&>(s);
            uses.native_blocks = true;
            if (!n.fallback) uses.native_fallback = false;
            for (auto& [backend, code] : n.code)
                natives.insert(backend);
        } else if (s.kind == StmtKind::Matrix) {
            uses.matrix = true;
        } else if (s.kind == StmtKind::AsyncCopy) {
            uses.async_copy = true;
        }
    };
    if (k.body) walk(k.body, on_expr, on_stmt);
    uses.intrinsics.assign(intrinsics.begin(), intrinsics.end());
    uses.native_backends.assign(natives.begin(), natives.end());
    return uses;
}

} // namespace plexus::ir
