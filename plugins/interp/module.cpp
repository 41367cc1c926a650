// module_load: reads IR JSON (schema "plexus-ir/1", docs/ir.md) into a Program, checking every
// node's shape and types as the core's make() and validator do; errors name the JSON path.
#include "interp.hpp"
#include "ops.hpp"

#include <nlohmann/json.hpp>

#include <new>

namespace plx_interp {

const char* ty_name(Ty t) {
    static constexpr const char* names[] = {"void", "bool", "i32", "u32", "i64", "u64", "f32", "f64"};
    return names[static_cast<int>(t)];
}
uint32_t ty_size(Ty t) {
    static constexpr uint32_t sizes[] = {0, 1, 4, 4, 8, 8, 4, 8};
    return sizes[static_cast<int>(t)];
}
std::optional<Ty> ty_from_string(std::string_view s) {
    for (int i = 1; i <= static_cast<int>(Ty::F64); ++i)
        if (s == ty_name(static_cast<Ty>(i))) return static_cast<Ty>(i);
    return std::nullopt;
}

namespace {

using json = nlohmann::json;

// Statements and expressions nested deeper than this are refused: the loader and the
// interpreter recurse once per level (about 1 KiB of stack each), and a host may call from a
// thread with a small stack. Written kernels nest a few dozen levels at most.
constexpr int kMaxDepth = 256;

constexpr const char* kUnaryNames[] = {"neg", "not", "bitnot"};
constexpr const char* kBinaryNames[] = {"add", "sub", "mul", "div", "rem", "min", "max",
                                        "bitand", "bitor", "bitxor", "shl", "shr", "and", "or",
                                        "eq", "ne", "lt", "le", "gt", "ge"};
constexpr const char* kAtomicNames[] = {"add", "sub", "min", "max", "and",
                                        "or", "xor", "xchg", "cmpxchg"};

template <size_t N> int find_name(const char* const (&names)[N], const std::string& s) {
    for (size_t i = 0; i < N; ++i)
        if (s == names[i]) return static_cast<int>(i);
    return -1;
}

class Loader {
public:
    explicit Loader(Program& p) : p_(p) {}

    void kernel(const json& j);

private:
    struct Scope {
        std::string name;
        Ty type;
        uint32_t slot;
        bool read_only;
    };
    struct Depth {
        Loader& l;
        Depth(Loader& loader, const std::string& path) : l(loader) {
            if (++l.depth_ > kMaxDepth)
                l.fail(path, "nesting is deeper than " + std::to_string(kMaxDepth) + " levels");
        }
        ~Depth() { --l.depth_; }
    };

    Program& p_;
    std::vector<Scope> scopes_;
    std::vector<uint32_t> loops_;
    uint32_t stmt_ = 0; // the statement whose expressions are being read
    int depth_ = 0;

    [[noreturn]] void fail(const std::string& path, const std::string& what) const {
        throw CompileError{path.empty() ? what : path + ": " + what};
    }
    const json& field(const json& obj, const std::string& path, const char* key) const {
        if (!obj.is_object()) fail(path, std::string("expected an object, found ") + obj.type_name());
        auto it = obj.find(key);
        if (it == obj.end()) fail(path, std::string("missing key \"") + key + "\"");
        return *it;
    }
    std::string str(const json& obj, const std::string& path, const char* key) const {
        const json& v = field(obj, path, key);
        if (!v.is_string()) fail(path + "." + key, std::string("expected a string, found ") + v.type_name());
        return v.get<std::string>();
    }
    Ty type(const json& obj, const std::string& path, const char* key = "type") const {
        const std::string s = str(obj, path, key);
        auto t = ty_from_string(s);
        if (!t)
            fail(path + "." + key,
                 "unknown type \"" + s + "\" (expected bool, i32, u32, i64, u64, f32 or f64)");
        return *t;
    }
    void keys(const json& obj, const std::string& path,
              std::initializer_list<const char*> allowed) const {
        for (auto& [k, v] : obj.items()) {
            bool known = false;
            for (auto* a : allowed) known |= k == a;
            if (!known) fail(path + "." + k, "unknown key \"" + k + "\"");
        }
    }
    static std::string at(const std::string& path, size_t i) {
        return path + "[" + std::to_string(i) + "]";
    }

    const Scope* lookup(const std::string& name) const {
        for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it)
            if (it->name == name) return &*it;
        return nullptr;
    }
    const Array* array_named(const std::string& name) const {
        for (auto& a : p_.arrays)
            if (a.name == name) return &a;
        return nullptr;
    }
    void declare(const std::string& name, Ty t, bool read_only, const std::string& path) {
        if (name.empty()) fail(path, "empty variable name");
        if (lookup(name) || array_named(name))
            fail(path, "\"" + name + "\" is declared again while an earlier one is visible");
        scopes_.push_back({name, t, p_.num_slots++, read_only});
    }
    // The array an access names, by name and space, as an index into p_.arrays.
    uint32_t array(const json& j, const std::string& path, bool store) const {
        const std::string name = str(j, path, "array");
        const std::string space = str(j, path, "space");
        if (space != "global" && space != "local")
            fail(path + ".space", "unknown space \"" + space + "\" (expected global or local)");
        const Array* a = array_named(name);
        if (!a || a->global != (space == "global"))
            fail(path + ".array", "\"" + name + "\" is not " +
                                      (space == "global" ? "a buffer parameter" : "a declared shared array"));
        if (store && a->global && !a->writable)
            fail(path + ".array", "\"" + name + "\" is a read-only buffer (access read)");
        return static_cast<uint32_t>(a - p_.arrays.data());
    }
    uint32_t push(ExprNode n) {
        p_.exprs.push_back(n);
        return static_cast<uint32_t>(p_.exprs.size() - 1);
    }
    Ty type_of(uint32_t e) const { return p_.exprs[e].type; }
    uint32_t integer(const json& j, const std::string& path, const char* key) {
        const uint32_t e = expr(field(j, path, key), path + "." + key);
        if (!ty_integer(type_of(e)))
            fail(path + "." + key, std::string("must be an integer, not ") + ty_name(type_of(e)));
        return e;
    }
    uint32_t boolean(const json& j, const std::string& path, const char* key) {
        const uint32_t e = expr(field(j, path, key), path + "." + key);
        if (type_of(e) != Ty::Bool)
            fail(path + "." + key, std::string("must be bool, not ") + ty_name(type_of(e)));
        return e;
    }

    uint32_t expr(const json& j, const std::string& path);
    uint32_t constant(const json& j, const std::string& path, Ty t);
    uint32_t stmt(const json& j, const std::string& jpath, const std::string& spath);
    uint32_t body(const json& j, const std::string& jpath, const std::string& spath) {
        const size_t mark = scopes_.size();
        const uint32_t s = stmt(j, jpath, spath);
        scopes_.resize(mark);
        return s;
    }
};

uint32_t Loader::constant(const json& j, const std::string& path, Ty t) {
    keys(j, path, {"expr", "type", "value"});
    const json& v = field(j, path, "value");
    ExprNode n{.kind = ExprKind::Const, .type = t};
    n.stmt = stmt_;
    if (ty_float(t)) {
        double d = 0;
        if (v.is_number()) d = v.get<double>();
        else if (v == "nan") d = std::numeric_limits<double>::quiet_NaN();
        else if (v == "inf") d = std::numeric_limits<double>::infinity();
        else if (v == "-inf") d = -std::numeric_limits<double>::infinity();
        else fail(path + ".value", "expected a number, \"nan\", \"inf\" or \"-inf\"");
        n.bits = t == Ty::F32 ? put(static_cast<float>(d)) : put(d);
    } else if (t == Ty::Bool) {
        if (!v.is_boolean()) fail(path + ".value", "expected true or false");
        n.bits = v.get<bool>() ? 1 : 0;
    } else {
        if (!v.is_number_integer())
            fail(path + ".value", std::string("expected an integer, found ") + v.type_name());
        const uint64_t raw = v.is_number_unsigned() ? v.get<uint64_t>()
                                                    : static_cast<uint64_t>(v.get<int64_t>());
        // Narrower types keep the low bits, as the core's Const::make_int does.
        n.bits = ty_size(t) == 4 ? static_cast<uint32_t>(raw) : raw;
    }
    return push(n);
}

uint32_t Loader::expr(const json& j, const std::string& path) {
    Depth depth(*this, path);
    const std::string kind = str(j, path, "expr");
    const Ty declared = type(j, path);
    if (kind == "Const") return constant(j, path, declared);

    ExprNode n{.kind = ExprKind::Const, .type = declared};
    n.stmt = stmt_;
    if (kind == "Var") {
        keys(j, path, {"expr", "type", "name"});
        const std::string name = str(j, path, "name");
        const Scope* s = lookup(name);
        if (!s) fail(path + ".name", "\"" + name + "\" is not declared here");
        n.kind = ExprKind::Var;
        n.type = s->type;
        n.ref = s->slot;
    } else if (kind == "Unary") {
        keys(j, path, {"expr", "type", "op", "a"});
        const std::string op = str(j, path, "op");
        const int o = find_name(kUnaryNames, op);
        if (o < 0) fail(path + ".op", "unknown unary op \"" + op + "\" (expected neg, not or bitnot)");
        n.kind = ExprKind::Unary;
        n.op = static_cast<uint8_t>(o);
        n.a = expr(field(j, path, "a"), path + ".a");
        const Ty t = n.type = type_of(n.a);
        const auto u = static_cast<UnaryOp>(o);
        if ((u == UnaryOp::Not && t != Ty::Bool) || (u == UnaryOp::Neg && !ty_arithmetic(t)) ||
            (u == UnaryOp::BitNot && !ty_integer(t)))
            fail(path, "operand of " + op + " cannot be " + ty_name(t));
    } else if (kind == "Binary") {
        keys(j, path, {"expr", "type", "op", "a", "b"});
        const std::string op = str(j, path, "op");
        const int o = find_name(kBinaryNames, op);
        if (o < 0) fail(path + ".op", "unknown binary op \"" + op + "\"");
        n.kind = ExprKind::Binary;
        n.op = static_cast<uint8_t>(o);
        n.a = expr(field(j, path, "a"), path + ".a");
        n.b = expr(field(j, path, "b"), path + ".b");
        const Ty t = n.operand = type_of(n.a);
        if (type_of(n.b) != t)
            fail(path, "operands of " + op + " have different types: " + ty_name(t) + " and " +
                           ty_name(type_of(n.b)) + " (cast one of them)");
        const auto b = static_cast<BinaryOp>(o);
        bool ok = true;
        n.type = t;
        switch (b) {
        case BinaryOp::Add: case BinaryOp::Sub: case BinaryOp::Mul: case BinaryOp::Div:
        case BinaryOp::Min: case BinaryOp::Max: ok = ty_arithmetic(t); break;
        case BinaryOp::Rem: case BinaryOp::BitAnd: case BinaryOp::BitOr: case BinaryOp::BitXor:
        case BinaryOp::Shl: case BinaryOp::Shr: ok = ty_integer(t); break;
        case BinaryOp::And: case BinaryOp::Or:
            ok = t == Ty::Bool;
            n.mask = p_.num_masks++;
            break;
        case BinaryOp::Eq: case BinaryOp::Ne: n.type = Ty::Bool; break;
        case BinaryOp::Lt: case BinaryOp::Le: case BinaryOp::Gt: case BinaryOp::Ge:
            ok = ty_arithmetic(t);
            n.type = Ty::Bool;
            break;
        }
        if (!ok) fail(path, op + " of " + ty_name(t));
    } else if (kind == "Select") {
        keys(j, path, {"expr", "type", "cond", "a", "b"});
        n.kind = ExprKind::Select;
        n.c = boolean(j, path, "cond");
        n.a = expr(field(j, path, "a"), path + ".a");
        n.b = expr(field(j, path, "b"), path + ".b");
        n.type = type_of(n.a);
        if (type_of(n.b) != n.type)
            fail(path, std::string("select arms have different types: ") + ty_name(n.type) +
                           " and " + ty_name(type_of(n.b)));
    } else if (kind == "Cast") {
        keys(j, path, {"expr", "type", "a"});
        n.kind = ExprKind::Cast;
        n.a = expr(field(j, path, "a"), path + ".a");
        n.operand = type_of(n.a);
    } else if (kind == "Load") {
        keys(j, path, {"expr", "type", "array", "space", "index"});
        n.kind = ExprKind::Load;
        n.ref = array(j, path, false);
        n.a = integer(j, path, "index");
        n.operand = type_of(n.a);
        n.type = p_.arrays[n.ref].type;
    } else if (kind == "Call") {
        keys(j, path, {"expr", "type", "name", "args"});
        const std::string name = str(j, path, "name");
        std::string why;
        const CallInfo* info = find_call(name, why);
        if (!info) fail(path + ".name", why);
        const json& args = field(j, path, "args");
        if (!args.is_array()) fail(path + ".args", std::string("expected an array, found ") + args.type_name());
        if (args.size() != info->args.size())
            fail(path + ".args", "intrinsic \"" + name + "\" takes " +
                                     std::to_string(info->args.size()) + " arguments, got " +
                                     std::to_string(args.size()));
        uint32_t* slots[] = {&n.a, &n.b, &n.c};
        for (size_t i = 0; i < args.size(); ++i) {
            *slots[i] = expr(args[i], at(path + ".args", i));
            if (type_of(*slots[i]) != info->args[i])
                fail(at(path + ".args", i), "argument " + std::to_string(i) + " of \"" + name +
                                                "\" must be " + ty_name(info->args[i]) +
                                                ", not " + ty_name(type_of(*slots[i])));
        }
        n.kind = ExprKind::Call;
        n.op = static_cast<uint8_t>(info->fn);
        n.dim = info->dim;
        n.type = info->result;
    } else if (kind == "Atomic") {
        keys(j, path, {"expr", "type", "op", "array", "space", "index", "value", "compare"});
        const std::string op = str(j, path, "op");
        const int o = find_name(kAtomicNames, op);
        if (o < 0) fail(path + ".op", "unknown atomic op \"" + op + "\"");
        n.kind = ExprKind::Atomic;
        n.op = static_cast<uint8_t>(o);
        n.ref = array(j, path, true);
        const Array& arr = p_.arrays[n.ref];
        n.type = arr.type;
        const std::string intrinsic = "atomic_" + op + "_" + ty_name(arr.type) + "_" +
                                      (arr.global ? "global" : "local");
        if (!catalog_has(intrinsic))
            fail(path, "atomic " + op + " on " + ty_name(arr.type) + " is not in the catalog");
        n.a = integer(j, path, "index");
        n.operand = type_of(n.a);
        n.b = expr(field(j, path, "value"), path + ".value");
        if (type_of(n.b) != arr.type)
            fail(path + ".value", std::string("atomic operand of type ") + ty_name(type_of(n.b)) +
                                      " on \"" + arr.name + "\" of " + ty_name(arr.type));
        const bool cmpxchg = static_cast<AtomicOp>(o) == AtomicOp::CmpXchg;
        if (cmpxchg != j.contains("compare"))
            fail(path, cmpxchg ? "compare-exchange needs a compare value"
                               : "only compare-exchange takes a compare value");
        if (cmpxchg) {
            n.c = expr(j["compare"], path + ".compare");
            if (type_of(n.c) != arr.type)
                fail(path + ".compare", std::string("compare value of type ") +
                                            ty_name(type_of(n.c)) + " on an array of " +
                                            ty_name(arr.type));
        }
    } else {
        fail(path + ".expr", "unknown expression kind \"" + kind + "\"");
    }
    if (n.kind != ExprKind::Cast && n.type != declared)
        fail(path + ".type", std::string("declared ") + ty_name(declared) + " but the " + kind +
                                 " has type " + ty_name(n.type));
    return push(n);
}

uint32_t Loader::stmt(const json& j, const std::string& jp, const std::string& sp) {
    Depth depth(*this, jp);
    const std::string kind = str(j, jp, "stmt");
    const uint32_t id = static_cast<uint32_t>(p_.stmts.size());
    p_.stmts.push_back(StmtNode{.kind = StmtKind::Nop});
    p_.paths.push_back(sp);
    const uint32_t outer = stmt_;
    stmt_ = id;
    StmtNode n{.kind = StmtKind::Nop};
    auto new_mask = [&] { return p_.num_masks++; };

    if (kind == "Block") {
        keys(j, jp, {"stmt", "body"});
        const json& b = field(j, jp, "body");
        if (!b.is_array()) fail(jp + ".body", std::string("expected an array, found ") + b.type_name());
        std::vector<uint32_t> children;
        const size_t mark = scopes_.size();
        for (size_t i = 0; i < b.size(); ++i) children.push_back(stmt(b[i], at(jp + ".body", i), at(sp, i)));
        scopes_.resize(mark);
        n.kind = StmtKind::Block;
        n.first = static_cast<uint32_t>(p_.children.size());
        n.count = static_cast<uint32_t>(children.size());
        p_.children.insert(p_.children.end(), children.begin(), children.end());
    } else if (kind == "Let") {
        keys(j, jp, {"stmt", "name", "type", "init"});
        const Ty t = type(j, jp);
        const std::string name = str(j, jp, "name");
        n.kind = StmtKind::Let;
        n.e0 = expr(field(j, jp, "init"), jp + ".init");
        if (type_of(n.e0) != t)
            fail(jp + ".type", std::string("declared ") + ty_name(t) +
                                   " but the initializer has type " + ty_name(type_of(n.e0)));
        declare(name, t, false, jp + ".name");
        n.slot = scopes_.back().slot;
    } else if (kind == "Assign") {
        keys(j, jp, {"stmt", "name", "value"});
        const std::string name = str(j, jp, "name");
        n.kind = StmtKind::Assign;
        n.e0 = expr(field(j, jp, "value"), jp + ".value");
        const Scope* s = lookup(name);
        if (!s) fail(jp + ".name", "assignment to \"" + name + "\", which is not declared here");
        if (s->read_only) fail(jp + ".name", "assignment to the loop variable \"" + name + "\"");
        if (s->type != type_of(n.e0))
            fail(jp + ".value", std::string("assignment of ") + ty_name(type_of(n.e0)) + " to \"" +
                                    name + "\" of " + ty_name(s->type) + " (cast it)");
        n.slot = s->slot;
    } else if (kind == "Store") {
        keys(j, jp, {"stmt", "array", "space", "index", "value"});
        n.kind = StmtKind::Store;
        n.slot = array(j, jp, true);
        n.e0 = integer(j, jp, "index");
        n.e1 = expr(field(j, jp, "value"), jp + ".value");
        const Array& arr = p_.arrays[n.slot];
        if (type_of(n.e1) != arr.type)
            fail(jp + ".value", std::string("store of ") + ty_name(type_of(n.e1)) + " into \"" +
                                    arr.name + "\" of " + ty_name(arr.type));
    } else if (kind == "If") {
        keys(j, jp, {"stmt", "cond", "then", "else"});
        n.kind = StmtKind::If;
        n.e0 = boolean(j, jp, "cond");
        n.s0 = body(field(j, jp, "then"), jp + ".then", sp + ".then");
        if (j.contains("else")) n.s1 = body(j["else"], jp + ".else", sp + ".else");
        n.m0 = new_mask();
        n.m1 = new_mask();
    } else if (kind == "For" || kind == "While") {
        const bool is_for = kind == "For";
        if (is_for) {
            keys(j, jp, {"stmt", "var", "type", "begin", "end", "step", "body"});
            n.kind = StmtKind::For;
            n.type = type(j, jp);
            const std::string var = str(j, jp, "var");
            n.e0 = integer(j, jp, "begin");
            n.e1 = integer(j, jp, "end");
            n.e2 = integer(j, jp, "step");
            if (type_of(n.e0) != n.type || type_of(n.e1) != n.type || type_of(n.e2) != n.type)
                fail(jp, std::string("loop \"") + var + "\" of " + ty_name(n.type) +
                             ": begin, end and step must have that type");
            declare(var, n.type, true, jp + ".var");
            n.slot = scopes_.back().slot;
        } else {
            keys(j, jp, {"stmt", "cond", "body"});
            n.kind = StmtKind::While;
            n.e0 = boolean(j, jp, "cond");
        }
        loops_.push_back(id);
        n.s0 = body(field(j, jp, "body"), jp + ".body", sp + ".body");
        loops_.pop_back();
        if (is_for) scopes_.pop_back();
        n.m0 = new_mask();
        n.m1 = new_mask();
        n.m2 = new_mask();
    } else if (kind == "Break" || kind == "Continue" || kind == "Return" || kind == "Barrier") {
        keys(j, jp, {"stmt"});
        n.kind = kind == "Break" ? StmtKind::Break : kind == "Continue" ? StmtKind::Continue
               : kind == "Return" ? StmtKind::Return : StmtKind::Barrier;
        if (n.kind == StmtKind::Break || n.kind == StmtKind::Continue) {
            if (loops_.empty()) fail(jp, (kind == "Break" ? "break" : "continue") + std::string(" outside a loop"));
            n.loop = loops_.back();
        }
    } else if (kind == "Fence") {
        keys(j, jp, {"stmt", "scope"});
        const std::string scope = str(j, jp, "scope");
        if (scope != "workgroup" && scope != "device")
            fail(jp + ".scope", "unknown fence scope \"" + scope + "\" (expected workgroup or device)");
        // Work-items run in lockstep on one thread: every write is already visible.
        n.kind = StmtKind::Nop;
    } else if (kind == "Eval") {
        keys(j, jp, {"stmt", "value"});
        n.kind = StmtKind::Eval;
        n.e0 = expr(field(j, jp, "value"), jp + ".value");
    } else if (kind == "Native") {
        keys(j, jp, {"stmt", "code", "fallback"});
        const json& code = field(j, jp, "code");
        if (!code.is_object()) fail(jp + ".code", "expected an object of backend -> code");
        for (auto& [backend, text] : code.items())
            if (!text.is_string()) fail(jp + ".code." + backend, "expected a string");
        if (!j.contains("fallback"))
            fail(jp, "native block at " + sp +
                         " has no fallback and the interpreter cannot run backend code");
        // The interpreter cannot run backend text, so the portable fallback always runs.
        n.kind = StmtKind::Block;
        const uint32_t fallback = body(j["fallback"], jp + ".fallback", sp + ".fallback");
        n.first = static_cast<uint32_t>(p_.children.size());
        n.count = 1;
        p_.children.push_back(fallback);
    } else {
        fail(jp + ".stmt", "unknown statement kind \"" + kind + "\"");
    }
    p_.stmts[id] = n;
    stmt_ = outer;
    return id;
}

void Loader::kernel(const json& j) {
    if (!j.is_object()) fail("", std::string("expected a JSON object, found ") + j.type_name());
    keys(j, "", {"schema", "name", "types", "params", "shared", "private", "work_group", "body"});
    const std::string schema = str(j, "", "schema");
    if (schema != "plexus-ir/1" && schema != "plexus-ir/2")
        fail("schema", "unsupported schema \"" + schema + "\" (the interpreter reads plexus-ir/1 and /2)");
    for (const char* key : {"types", "private"})
        if (j.contains(key) && !(j[key].is_array() && j[key].empty()))
            fail(key, "records, variants and private arrays are not interpreted yet");
    p_.name = str(j, "", "name");
    if (p_.name.empty()) fail("name", "empty kernel name");

    const json& params = field(j, "", "params");
    if (!params.is_array()) fail("params", std::string("expected an array, found ") + params.type_name());
    for (size_t i = 0; i < params.size(); ++i) {
        const std::string path = at("params", i);
        const json& jp = params[i];
        Param param{str(jp, path, "name"), false, type(jp, path), 0};
        const std::string kind = str(jp, path, "kind");
        if (param.name.empty()) fail(path + ".name", "empty parameter name");
        if (array_named(param.name) || lookup(param.name))
            fail(path + ".name", "two parameters named \"" + param.name + "\"");
        if (param.type == Ty::Bool)
            fail(path + ".type", "a parameter may not be bool (OpenCL forbids bool arguments)");
        if (kind == "buffer") {
            keys(jp, path, {"name", "kind", "type", "access"});
            const std::string access = str(jp, path, "access");
            if (access != "read" && access != "write" && access != "readwrite")
                fail(path + ".access", "unknown access \"" + access + "\" (expected read, write or readwrite)");
            param.buffer = true;
            param.ref = static_cast<uint32_t>(p_.arrays.size());
            p_.arrays.push_back(Array{.name = param.name, .type = param.type, .global = true,
                                      .writable = access != "read",
                                      .param = static_cast<uint32_t>(i)});
        } else if (kind == "scalar") {
            keys(jp, path, {"name", "kind", "type"});
            // Scalar parameters are per-work-item variables that start with the argument.
            declare(param.name, param.type, false, path + ".name");
            param.ref = scopes_.back().slot;
        } else {
            fail(path + ".kind", "unknown parameter kind \"" + kind + "\" (expected buffer or scalar)");
        }
        p_.params.push_back(param);
    }

    const json& shared = field(j, "", "shared");
    if (!shared.is_array()) fail("shared", std::string("expected an array, found ") + shared.type_name());
    for (size_t i = 0; i < shared.size(); ++i) {
        const std::string path = at("shared", i);
        keys(shared[i], path, {"name", "type", "count"});
        const std::string name = str(shared[i], path, "name");
        const Ty t = type(shared[i], path);
        const json& count = field(shared[i], path, "count");
        if (!count.is_number_integer() || count.get<int64_t>() <= 0 ||
            count.get<uint64_t>() > UINT32_MAX)
            fail(path + ".count", "expected a positive integer below 2^32");
        if (t == Ty::Bool) fail(path + ".type", "a shared array holds numbers, not bool");
        if (name.empty()) fail(path + ".name", "empty shared array name");
        if (array_named(name) || lookup(name))
            fail(path + ".name", "the name \"" + name + "\" is declared twice");
        // Every array starts 8-byte aligned, so each element is naturally aligned.
        p_.shared_bytes = (p_.shared_bytes + 7) & ~uint64_t(7);
        p_.arrays.push_back(Array{.name = name, .type = t, .global = false, .writable = true,
                                  .count = count.get<uint32_t>(), .offset = p_.shared_bytes});
        p_.shared_bytes += uint64_t(count.get<uint32_t>()) * ty_size(t);
    }

    const json& body = field(j, "", "body");
    if (!body.is_object() || !body.contains("stmt") || body["stmt"] != "Block")
        fail("body", "the kernel body must be a Block");
    p_.root = stmt(body, "body", "body");
}

} // namespace

plx_status module_load(plx_device device, plx_language language, const char* source,
                       size_t source_bytes, const char* /*options: none are defined*/,
                       plx_module* module) {
    if (!valid_device(device))
        return fail(PLX_ERROR_INVALID_ARGUMENT, "interp: module_load: not an interp device");
    if (!module) return fail(PLX_ERROR_INVALID_ARGUMENT, "interp: module_load: module is NULL");
    if (language != PLX_LANG_PLEXUS_IR_JSON && language != PLX_LANG_PLEXUS_IR2_JSON)
        return fail(PLX_ERROR_UNSUPPORTED,
                    "interp: module_load: language " + std::to_string(language) +
                        " is neither PLX_LANG_PLEXUS_IR_JSON nor PLX_LANG_PLEXUS_IR2_JSON");
    if (!source && source_bytes)
        return fail(PLX_ERROR_INVALID_ARGUMENT, "interp: module_load: source is NULL");
    json j;
    try {
        j = json::parse(source, source + source_bytes);
    } catch (const json::exception& e) {
        return fail(PLX_ERROR_COMPILE, std::string("interp: module_load: not valid JSON: ") + e.what());
    }
    auto* m = new (std::nothrow) plx_module_s;
    if (!m) return fail(PLX_ERROR_OUT_OF_MEMORY, "interp: module_load: out of host memory");
    try {
        Loader(m->kernel.program).kernel(j);
    } catch (const CompileError& e) {
        std::string message = "interp: module_load: ";
        if (!m->kernel.program.name.empty())
            message += "kernel \"" + m->kernel.program.name + "\": ";
        delete m;
        return fail(PLX_ERROR_COMPILE, message + e.message);
    } catch (...) {
        delete m;
        throw;
    }
    track(m);
    *module = m;
    return PLX_OK;
}

void module_unload(plx_module module) {
    if (!module || module->magic != plx_module_s::kMagic) return;
    module->magic = 0;
    module->kernel.magic = 0;
    untrack(module);
    delete module;
}

plx_status kernel_get(plx_module module, const char* name, plx_kernel* kernel) {
    if (!module || module->magic != plx_module_s::kMagic)
        return fail(PLX_ERROR_INVALID_ARGUMENT, "interp: kernel_get: not an interp module");
    if (!name || !kernel)
        return fail(PLX_ERROR_INVALID_ARGUMENT, "interp: kernel_get: name or kernel is NULL");
    if (module->kernel.program.name != name)
        return fail(PLX_ERROR_NOT_FOUND, std::string("interp: kernel_get: the module has no kernel \"") +
                                             name + "\" (it holds \"" +
                                             module->kernel.program.name + "\")");
    *kernel = &module->kernel;
    return PLX_OK;
}

} // namespace plx_interp
