// The loader's expressions: each JSON expression becomes a Val, one scalar node per leaf of its
// type, checked as the core's make() factories check it; errors name the JSON path.
#include "loader.hpp"
#include "ops.hpp"

#include <algorithm>
#include <limits>

namespace plx_interp {
namespace {

constexpr const char* kUnaryNames[] = {"neg", "not", "bitnot"};
constexpr const char* kBinaryNames[] = {"add",    "sub",   "mul",    "div", "rem", "min", "max",
                                        "bitand", "bitor", "bitxor", "shl", "shr", "and", "or",
                                        "eq",     "ne",    "lt",     "le",  "gt",  "ge"};
constexpr const char* kAtomicNames[] = {"add", "sub", "min",  "max",    "and",
                                        "or",  "xor", "xchg", "cmpxchg"};

template <size_t N> int find_name(const char* const (&names)[N], const std::string& s) {
    for (size_t i = 0; i < N; ++i)
        if (s == names[i]) return static_cast<int>(i);
    return -1;
}

bool is_integer(Ty t) {
    return ty_integer(t);
}
bool is_bool(Ty t) {
    return t == Ty::Bool;
}

int member_named(const TypeInfo& t, const std::string& name) {
    for (size_t i = 0; i < t.members.size(); ++i)
        if (t.members[i].name == name) return static_cast<int>(i);
    return -1;
}

} // namespace

uint32_t Loader::push(ExprNode n) {
    n.stmt = stmt_;
    p_.exprs.push_back(n);
    return static_cast<uint32_t>(p_.exprs.size() - 1);
}

// Constants and variable reads are shared by every node that needs them.
uint32_t Loader::constant_node(Ty t, uint64_t bits) {
    auto [it, added] = consts_.try_emplace({t, bits}, 0);
    if (added) it->second = push(ExprNode{.kind = ExprKind::Const, .type = t, .bits = bits});
    return it->second;
}

uint32_t Loader::var_node(uint32_t slot, Ty t) {
    if (var_nodes_.size() <= slot) var_nodes_.resize(slot + 1, kNone);
    if (var_nodes_[slot] == kNone) {
        ExprNode n{.kind = ExprKind::Var, .type = t};
        n.ref = slot;
        var_nodes_[slot] = push(n);
    }
    return var_nodes_[slot];
}

uint32_t Loader::scalar(const json& j, const std::string& path, const char* key, bool (*ok)(Ty),
                        const char* what) {
    const Val v = expr(field(j, path, key), path + "." + key);
    const Ty t = types_.scalar(v.type);
    if (t == Ty::Void || !ok(t))
        fail(path + "." + key, std::string("must be ") + what + ", not " + name_of(v.type));
    return v.leaves[0];
}

// The array an access names, by name and space, as an index into p_.arrays.
uint32_t Loader::array(const json& j, const std::string& path, bool store) const {
    const std::string name = str(j, path, "array");
    const std::string space = str(j, path, "space");
    Space s;
    if (space == "global")
        s = Space::Global;
    else if (space == "local")
        s = Space::Local;
    else if (space == "private" && v2_)
        s = Space::Private;
    else
        fail(path + ".space",
             "unknown space \"" + space + "\" (expected global, local or private)");
    const Array* a = array_named(name);
    if (!a || a->space != s)
        fail(path + ".array", "\"" + name + "\" is not " +
                                  (s == Space::Global  ? "a buffer parameter"
                                   : s == Space::Local ? "a declared shared array"
                                                       : "a declared private array"));
    if (store && s == Space::Global && !a->writable)
        fail(path + ".array", "\"" + name + "\" is a read-only buffer (access read)");
    return static_cast<uint32_t>(a - p_.arrays.data());
}

// The part of a value of type `root` that the optional "path" of j names: each step a field
// of a record or a lane of a vector.
Loader::Part Loader::part(TypeId root, const json& j, const std::string& path,
                          const std::string& target) {
    Part r{.type = root};
    if (!j.contains("path")) return r;
    const json& steps = list(j, path, "path");
    for (size_t i = 0; i < steps.size(); ++i) {
        const std::string sp = at(path + ".path", i);
        const uint32_t step = count(steps[i], sp);
        const TypeInfo& t = types_[r.type];
        if (t.kind == TypeInfo::Kind::Record && step < t.members.size()) {
            r.leaf += t.members[step].first;
            r.offset += t.members[step].offset;
            r.type = t.members[step].type;
        } else if (t.kind == TypeInfo::Kind::Vector && step < t.lanes) {
            r.leaf += step;
            r.offset += uint64_t(step) * ty_size(t.scalar);
            r.type = Types::of(t.scalar);
        } else {
            fail(sp, "step " + std::to_string(step) + " of the path into " + target +
                         " does not fit its part of type " + t.name +
                         (t.kind == TypeInfo::Kind::Record
                              ? " (" + std::to_string(t.members.size()) + " fields)"
                          : t.kind == TypeInfo::Kind::Vector
                              ? " (" + std::to_string(t.lanes) + " lanes)"
                              : " (only records and vectors have parts)"));
        }
    }
    return r;
}

Val Loader::constant(const json& j, const std::string& path, TypeId declared) {
    keys(j, path, {"expr", "type", "value"});
    const json& v = field(j, path, "value");
    const Ty t = types_.scalar(declared);
    if (t == Ty::Void)
        fail(path + ".type", "a constant of " + name_of(declared) + " (constants are scalars)");
    uint64_t bits = 0;
    if (ty_float(t)) {
        double d = 0;
        if (v.is_number())
            d = v.get<double>();
        else if (v == "nan")
            d = std::numeric_limits<double>::quiet_NaN();
        else if (v == "inf")
            d = std::numeric_limits<double>::infinity();
        else if (v == "-inf")
            d = -std::numeric_limits<double>::infinity();
        else
            fail(path + ".value", "expected a number, \"nan\", \"inf\" or \"-inf\"");
        // Into f16 and bf16 through f32, as every conversion into them.
        const float f = static_cast<float>(d);
        bits = t == Ty::F64 ? put(d) : t == Ty::F32 ? put(f) : round_to(t, put(f));
    } else if (t == Ty::Bool) {
        if (!v.is_boolean()) fail(path + ".value", "expected true or false");
        bits = v.get<bool>() ? 1 : 0;
    } else {
        if (!v.is_number_integer())
            fail(path + ".value", std::string("expected an integer, found ") + v.type_name());
        const uint64_t raw =
            v.is_number_unsigned() ? v.get<uint64_t>() : static_cast<uint64_t>(v.get<int64_t>());
        // Narrower types keep the low bits, as the core's Const::make_int does.
        const uint32_t size = ty_size(t);
        bits = size == 8 ? raw : raw & ((uint64_t(1) << (8 * size)) - 1);
    }
    return Val{declared, {constant_node(t, bits)}};
}

Val Loader::expr(const json& j, const std::string& path) {
    Depth depth(*this, path);
    const std::string kind = str(j, path, "expr");
    const TypeId declared = type(j, path);
    Val v;
    if (kind == "Const") {
        v = constant(j, path, declared);
    } else if (kind == "Var") {
        keys(j, path, {"expr", "type", "name"});
        const std::string name = str(j, path, "name");
        const Scope* s = lookup(name);
        if (!s) fail(path + ".name", "\"" + name + "\" is not declared here");
        v.type = s->type;
        const std::vector<Leaf>& leaves = types_[s->type].leaves;
        for (uint32_t i = 0; i < leaves.size(); ++i)
            v.leaves.push_back(var_node(s->slot + i, leaves[i].type));
    } else if (kind == "Unary" || kind == "Binary" || kind == "Select" || kind == "Cast") {
        v = arithmetic(kind, j, path);
        if (kind == "Cast") {
            const TypeInfo &to = types_[declared], &from = types_[v.type];
            const bool scalars =
                to.kind == TypeInfo::Kind::Scalar && from.kind == TypeInfo::Kind::Scalar;
            const bool vectors = to.kind == TypeInfo::Kind::Vector &&
                                 from.kind == TypeInfo::Kind::Vector && to.lanes == from.lanes;
            if (!scalars && !vectors)
                fail(path,
                     "cast from " + from.name + " to " + to.name +
                         " (casts convert scalars, or vectors of one lane count lane by lane)");
            for (uint32_t& leaf : v.leaves) {
                ExprNode n{.kind = ExprKind::Cast, .type = to.scalar, .operand = from.scalar};
                n.a = leaf;
                leaf = push(n);
            }
            v.type = declared;
        }
    } else if (kind == "Load") {
        v = load(j, path);
    } else if (kind == "Call") {
        v = call(j, path);
    } else if (kind == "Atomic") {
        v = atomic(j, path);
    } else if (v2_ && (kind == "Field" || kind == "Swizzle" || kind == "Broadcast" ||
                       kind == "Construct")) {
        v = aggregate(kind, j, path, declared);
    } else if (v2_ && kind == "MakeVariant") {
        v = make_variant(j, path, declared);
    } else {
        fail(path + ".expr", "unknown expression kind \"" + kind + "\"");
    }
    if (v.type != declared)
        fail(path + ".type",
             "declared " + name_of(declared) + " but the " + kind + " has type " + name_of(v.type));
    return v;
}

// Unary, Binary and Select lane by lane; for Cast only its operand (expr() converts it).
Val Loader::arithmetic(const std::string& kind, const json& j, const std::string& path) {
    if (kind == "Cast") {
        keys(j, path, {"expr", "type", "a"});
        return expr(field(j, path, "a"), path + ".a");
    }
    if (kind == "Select") {
        keys(j, path, {"expr", "type", "cond", "a", "b"});
        const uint32_t c = scalar(j, path, "cond", is_bool, "bool");
        Val a = expr(field(j, path, "a"), path + ".a");
        const Val b = expr(field(j, path, "b"), path + ".b");
        if (a.type != b.type)
            fail(path, "select arms have different types: " + name_of(a.type) + " and " +
                           name_of(b.type));
        for (size_t i = 0; i < a.leaves.size(); ++i) {
            ExprNode n{.kind = ExprKind::Select, .type = types_[a.type].leaves[i].type};
            n.c = c, n.a = a.leaves[i], n.b = b.leaves[i];
            a.leaves[i] = push(n);
        }
        return a;
    }
    const bool unary = kind == "Unary";
    keys(j, path,
         unary ? std::initializer_list<const char*>{"expr", "type", "op", "a"}
               : std::initializer_list<const char*>{"expr", "type", "op", "a", "b"});
    const std::string op = str(j, path, "op");
    const int o = unary ? find_name(kUnaryNames, op) : find_name(kBinaryNames, op);
    if (o < 0)
        fail(path + ".op", unary ? "unknown unary op \"" + op + "\" (expected neg, not or bitnot)"
                                 : "unknown binary op \"" + op + "\"");
    Val a = expr(field(j, path, "a"), path + ".a");
    const TypeInfo& t = types_[a.type];
    const Ty e = t.scalar; // the element of a vector; Void for records and variants
    const bool is_scalar = t.kind == TypeInfo::Kind::Scalar;
    ExprNode n{.kind = unary ? ExprKind::Unary : ExprKind::Binary,
               .type = e,
               .operand = e,
               .op = static_cast<uint8_t>(o)};
    Val b;
    if (unary) {
        const auto u = static_cast<UnaryOp>(o);
        if ((u == UnaryOp::Not && e != Ty::Bool) || (u == UnaryOp::Neg && !ty_arithmetic(e)) ||
            (u == UnaryOp::BitNot && !ty_integer(e)))
            fail(path, "operand of " + op + " cannot be " + t.name);
    } else {
        b = expr(field(j, path, "b"), path + ".b");
        if (b.type != a.type)
            fail(path, "operands of " + op + " have different types: " + t.name + " and " +
                           name_of(b.type) + " (cast one of them)");
        bool ok = true;
        switch (static_cast<BinaryOp>(o)) {
        case BinaryOp::Add:
        case BinaryOp::Sub:
        case BinaryOp::Mul:
        case BinaryOp::Div:
        case BinaryOp::Min:
        case BinaryOp::Max: ok = ty_arithmetic(e); break;
        case BinaryOp::Rem:
        case BinaryOp::BitAnd:
        case BinaryOp::BitOr:
        case BinaryOp::BitXor:
        case BinaryOp::Shl:
        case BinaryOp::Shr: ok = ty_integer(e); break;
        case BinaryOp::And:
        case BinaryOp::Or: ok = is_scalar && e == Ty::Bool; break;
        case BinaryOp::Eq:
        case BinaryOp::Ne:
            ok = is_scalar;
            n.type = Ty::Bool;
            break;
        case BinaryOp::Lt:
        case BinaryOp::Le:
        case BinaryOp::Gt:
        case BinaryOp::Ge:
            ok = is_scalar && ty_arithmetic(e);
            n.type = Ty::Bool;
            break;
        }
        if (!ok) fail(path, op + " of " + t.name);
        if (n.type == Ty::Bool) a.type = Types::of(Ty::Bool);
    }
    const auto bop = static_cast<BinaryOp>(o);
    for (size_t i = 0; i < a.leaves.size(); ++i) {
        n.a = a.leaves[i];
        if (!unary) n.b = b.leaves[i];
        if (!unary && (bop == BinaryOp::And || bop == BinaryOp::Or)) n.mask = p_.num_masks++;
        a.leaves[i] = push(n);
    }
    return a;
}

Val Loader::load(const json& j, const std::string& path) {
    keys(j, path, {"expr", "type", "array", "space", "index"});
    const uint32_t arr = array(j, path, false);
    const uint32_t index = scalar(j, path, "index", is_integer, "an integer");
    const TypeId t = array_types_[arr];
    Val v{t, {}};
    for (const Leaf& leaf : types_[t].leaves) {
        ExprNode n{.kind = ExprKind::Load, .type = leaf.type, .operand = p_.exprs[index].type};
        n.ref = arr, n.a = index, n.offset = static_cast<uint32_t>(leaf.offset);
        // A payload's leaves read only where their tag, loaded before them, names their case.
        if (leaf.guard != kNone) n.guard = v.leaves[leaf.guard], n.guard_case = leaf.guard_case;
        if (leaf.cases) {
            n.cases = leaf.cases;
            const std::string& name = types_[leaf.variant].name;
            n.variant = 0;
            while (n.variant < p_.names.size() && p_.names[n.variant] != name)
                ++n.variant;
            if (n.variant == p_.names.size()) p_.names.push_back(name);
        }
        v.leaves.push_back(push(n));
    }
    return v;
}

Val Loader::call(const json& j, const std::string& path) {
    keys(j, path, {"expr", "type", "name", "args"});
    const std::string name = str(j, path, "name");
    std::string why;
    const CallInfo* info = find_call(name, why);
    if (!info) fail(path + ".name", why);
    const json& args = list(j, path, "args");
    if (args.size() != info->args.size())
        fail(path + ".args", "intrinsic \"" + name + "\" takes " +
                                 std::to_string(info->args.size()) + " arguments, got " +
                                 std::to_string(args.size()));
    ExprNode n{.kind = ExprKind::Call,
               .type = info->result,
               .operand = info->args.empty() ? Ty::Void : info->args[0],
               .op = static_cast<uint8_t>(info->fn),
               .dim = info->dim};
    uint32_t* slots[] = {&n.a, &n.b, &n.c};
    for (size_t i = 0; i < args.size(); ++i) {
        const Val arg = expr(args[i], at(path + ".args", i));
        if (arg.type != Types::of(info->args[i]))
            fail(at(path + ".args", i), "argument " + std::to_string(i) + " of \"" + name +
                                            "\" must be " + ty_name(info->args[i]) + ", not " +
                                            name_of(arg.type));
        *slots[i] = arg.leaves[0];
    }
    return Val{Types::of(info->result), {push(n)}};
}

Val Loader::atomic(const json& j, const std::string& path) {
    keys(j, path, {"expr", "type", "op", "array", "space", "index", "value", "compare"});
    const std::string op = str(j, path, "op");
    const int o = find_name(kAtomicNames, op);
    if (o < 0) fail(path + ".op", "unknown atomic op \"" + op + "\"");
    const uint32_t arr = array(j, path, true);
    const Array& a = p_.arrays[arr];
    if (a.space == Space::Private)
        fail(path + ".space",
             "an atomic on the private array \"" + a.name + "\" (only one work-item sees it)");
    if (!catalog_has("atomic_" + op + "_" + a.type_name + "_" +
                     (a.space == Space::Global ? "global" : "local")))
        fail(path, "atomic " + op + " on " + a.type_name + " is not in the catalog");
    ExprNode n{.kind = ExprKind::Atomic, .type = a.scalar, .op = static_cast<uint8_t>(o)};
    n.ref = arr;
    n.a = scalar(j, path, "index", is_integer, "an integer");
    n.operand = p_.exprs[n.a].type;
    auto operand = [&](const char* key, const char* what) {
        const Val v = expr(field(j, path, key), path + "." + key);
        if (v.type != Types::of(a.scalar))
            fail(path + "." + key, std::string(what) + " of type " + name_of(v.type) + " on \"" +
                                       a.name + "\" of " + a.type_name);
        return v.leaves[0];
    };
    n.b = operand("value", "atomic operand");
    const bool cmpxchg = static_cast<AtomicOp>(o) == AtomicOp::CmpXchg;
    if (cmpxchg != j.contains("compare"))
        fail(path, cmpxchg ? "compare-exchange needs a compare value"
                           : "only compare-exchange takes a compare value");
    if (cmpxchg) n.c = operand("compare", "compare value");
    return Val{Types::of(a.scalar), {push(n)}};
}

// Field, Swizzle, Broadcast and Construct pick and order leaves; they add no node.
Val Loader::aggregate(const std::string& kind, const json& j, const std::string& path,
                      TypeId declared) {
    const TypeInfo& dt = types_[declared];
    if (kind == "Field" || kind == "Swizzle") {
        const bool field_of = kind == "Field";
        keys(j, path, {"expr", "type", "base", field_of ? "field" : "lanes"});
        const Val base = expr(field(j, path, "base"), path + ".base");
        const TypeInfo& bt = types_[base.type];
        if (field_of) {
            if (bt.kind != TypeInfo::Kind::Record)
                fail(path + ".base", "a field of " + bt.name + ", which is not a record");
            const std::string name = str(j, path, "field");
            const int i = member_named(bt, name);
            if (i < 0)
                fail(path + ".field", "'" + bt.name + "' has no field named \"" + name + "\"");
            const auto first = base.leaves.begin() + bt.members[i].first;
            return Val{bt.members[i].type,
                       std::vector<uint32_t>(first, first + bt.member_leaves(i))};
        }
        if (bt.kind != TypeInfo::Kind::Vector)
            fail(path + ".base", "lanes of " + bt.name + ", which is not a vector");
        const json& lanes = list(j, path, "lanes");
        const size_t n = lanes.size();
        if (n != 1 && n != 2 && n != 3 && n != 4 && n != 8)
            fail(path + ".lanes", "a swizzle of " + std::to_string(n) + " lanes (1, 2, 3, 4 or 8)");
        Val v{n == 1 ? Types::of(bt.scalar) : types_.vector(bt.scalar, uint32_t(n)), {}};
        for (size_t i = 0; i < n; ++i) {
            const uint32_t lane = count(lanes[i], at(path + ".lanes", i));
            if (lane >= bt.lanes)
                fail(at(path + ".lanes", i), "lane " + std::to_string(lane) + " of " + bt.name +
                                                 ", which has " + std::to_string(bt.lanes));
            v.leaves.push_back(base.leaves[lane]);
        }
        return v;
    }
    if (kind == "Broadcast") {
        keys(j, path, {"expr", "type", "value"});
        if (dt.kind != TypeInfo::Kind::Vector)
            fail(path + ".type", "a broadcast to " + dt.name + ", which is not a vector");
        const Val value = expr(field(j, path, "value"), path + ".value");
        if (value.type != Types::of(dt.scalar))
            fail(path + ".value", "a broadcast of " + name_of(value.type) + " to " + dt.name);
        return Val{declared, std::vector<uint32_t>(dt.lanes, value.leaves[0])};
    }
    keys(j, path, {"expr", "type", "args"});
    const bool vector = dt.kind == TypeInfo::Kind::Vector;
    if (!vector && dt.kind != TypeInfo::Kind::Record)
        fail(path + ".type",
             "a constructor of " + dt.name + " (vectors and records are constructed)");
    const json& args = list(j, path, "args");
    const size_t want = vector ? dt.lanes : dt.members.size();
    if (args.size() != want)
        fail(path + ".args", dt.name + " built from " + std::to_string(args.size()) +
                                 " values, it has " + std::to_string(want) +
                                 (vector ? " lanes" : " fields"));
    Val v{declared, {}};
    for (size_t i = 0; i < args.size(); ++i) {
        const Val arg = expr(args[i], at(path + ".args", i));
        const TypeId member = vector ? Types::of(dt.scalar) : dt.members[i].type;
        if (arg.type != member)
            fail(at(path + ".args", i),
                 (vector ? "lane " + std::to_string(i) : "field \"" + dt.members[i].name + "\"") +
                     " of " + dt.name + " is " + name_of(member) + ", given a " +
                     name_of(arg.type));
        v.leaves.insert(v.leaves.end(), arg.leaves.begin(), arg.leaves.end());
    }
    return v;
}

// A variant value: the tag, the payload's leaves in its case's place, and every other case's
// leaves 0 (kNoTag for their tags, so that nothing inside them counts as active).
Val Loader::make_variant(const json& j, const std::string& path, TypeId declared) {
    keys(j, path, {"expr", "type", "case", "payload"});
    const TypeInfo& vt = types_[declared];
    if (vt.kind != TypeInfo::Kind::Variant) fail(path + ".type", vt.name + " is not a variant");
    const std::string name = str(j, path, "case");
    const int c = member_named(vt, name);
    if (c < 0) fail(path + ".case", "'" + vt.name + "' has no case named \"" + name + "\"");
    const TypeInfo::Member& m = vt.members[c];
    if ((m.type == kNone) == j.contains("payload"))
        fail(path,
             "case '" + name + "' of '" + vt.name + "' " +
                 (m.type == kNone ? "has no payload" : "needs a payload of " + name_of(m.type)));
    Val v{declared, {}};
    for (const Leaf& leaf : vt.leaves)
        v.leaves.push_back(leaf.cases ? constant_node(Ty::U32, kNoTag)
                                      : constant_node(leaf.type, 0));
    v.leaves[0] = constant_node(Ty::U32, uint32_t(c));
    if (m.type != kNone) {
        const Val payload = expr(j["payload"], path + ".payload");
        if (payload.type != m.type)
            fail(path + ".payload", "case '" + name + "' of '" + vt.name + "' holds " +
                                        name_of(m.type) + ", given a " + name_of(payload.type));
        std::copy(payload.leaves.begin(), payload.leaves.end(), v.leaves.begin() + m.first);
    }
    return v;
}

} // namespace plx_interp
