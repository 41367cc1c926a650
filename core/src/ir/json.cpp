// The IR as JSON, schema "plexus-ir/1" (docs/ir-schema.md): writing, and reading with errors
// that name the JSON path of the offending value.
#include "plexus/error.hpp"
#include "plexus/ir.hpp"

#include <cmath>
#include <nlohmann/json.hpp>

namespace plexus::ir {

using json = nlohmann::json;
static constexpr const char* schema_name = "plexus-ir/1";

// ---- writing -----------------------------------------------------------------------------

namespace {

json float_value(double v) {
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    return v;
}

struct Writer : ExprVisitor<Writer, json>, StmtVisitor<Writer, json> {
    json expr(const Expr& e) {
        json j = ExprVisitor::dispatch(e);
        j["expr"] = to_string(e->kind);
        j["type"] = to_string(e->type);
        return j;
    }
    json stmt(const Stmt& s) {
        json j = StmtVisitor::dispatch(s);
        j["stmt"] = to_string(s->kind);
        return j;
    }
    json visit(const Const& n) {
        if (is_float(n.type)) return {{"value", float_value(n.f)}};
        if (n.type == Scalar::Bool) return {{"value", n.i != 0}};
        if (n.type == Scalar::U64) return {{"value", static_cast<uint64_t>(n.i)}};
        return {{"value", n.i}};
    }
    json visit(const Var& n) { return {{"name", n.name}}; }
    json visit(const Unary& n) { return {{"op", to_string(n.op)}, {"a", expr(n.a)}}; }
    json visit(const Binary& n) {
        return {{"op", to_string(n.op)}, {"a", expr(n.a)}, {"b", expr(n.b)}};
    }
    json visit(const Select& n) {
        return {{"cond", expr(n.cond)}, {"a", expr(n.a)}, {"b", expr(n.b)}};
    }
    json visit(const Cast& n) { return {{"a", expr(n.a)}}; }
    json visit(const Load& n) {
        return {{"array", n.array}, {"space", to_string(n.space)}, {"index", expr(n.index)}};
    }
    json visit(const Call& n) {
        json args = json::array();
        for (auto& a : n.args) args.push_back(expr(a));
        return {{"name", n.name}, {"args", args}};
    }
    json visit(const Atomic& n) {
        json j = {{"op", to_string(n.op)}, {"array", n.array}, {"space", to_string(n.space)},
                  {"index", expr(n.index)}, {"value", expr(n.value)}};
        if (n.compare) j["compare"] = expr(n.compare);
        return j;
    }
    json visit(const Block& n) {
        json body = json::array();
        for (auto& s : n.body) body.push_back(stmt(s));
        return {{"body", body}};
    }
    json visit(const Let& n) {
        return {{"name", n.name}, {"type", to_string(n.type)}, {"init", expr(n.init)}};
    }
    json visit(const Assign& n) { return {{"name", n.name}, {"value", expr(n.value)}}; }
    json visit(const Store& n) {
        return {{"array", n.array}, {"space", to_string(n.space)}, {"index", expr(n.index)},
                {"value", expr(n.value)}};
    }
    json visit(const If& n) {
        json j = {{"cond", expr(n.cond)}, {"then", stmt(n.then_body)}};
        if (n.else_body) j["else"] = stmt(n.else_body);
        return j;
    }
    json visit(const For& n) {
        return {{"var", n.var},           {"type", to_string(n.type)}, {"begin", expr(n.begin)},
                {"end", expr(n.end)},     {"step", expr(n.step)},      {"body", stmt(n.body)}};
    }
    json visit(const While& n) { return {{"cond", expr(n.cond)}, {"body", stmt(n.body)}}; }
    json visit(const Break&) { return json::object(); }
    json visit(const Continue&) { return json::object(); }
    json visit(const Return&) { return json::object(); }
    json visit(const Barrier&) { return json::object(); }
    json visit(const Fence& n) { return {{"scope", to_string(n.scope)}}; }
    json visit(const Eval& n) { return {{"value", expr(n.value)}}; }
    json visit(const Native& n) {
        json j = {{"code", n.code}};
        if (n.fallback) j["fallback"] = stmt(n.fallback);
        return j;
    }
};

json kernel_json(const Kernel& k) {
    json params = json::array();
    for (auto& p : k.params) {
        json jp = {{"name", p.name},
                   {"kind", p.kind == Param::Kind::Buffer ? "buffer" : "scalar"},
                   {"type", to_string(p.type)}};
        if (p.kind == Param::Kind::Buffer) jp["access"] = to_string(p.access);
        params.push_back(jp);
    }
    json shared = json::array();
    for (auto& s : k.shared)
        shared.push_back({{"name", s.name}, {"type", to_string(s.type)}, {"count", s.count}});
    Writer w;
    return {{"schema", schema_name}, {"name", k.name}, {"params", params}, {"shared", shared},
            {"body", k.body ? w.stmt(k.body) : json(nullptr)}};
}

} // namespace

std::string to_json(const Kernel& k) { return kernel_json(k).dump(1); }

// ---- reading -----------------------------------------------------------------------------

namespace {

struct Reader {
    std::string origin;
    std::string kernel;

    [[noreturn]] void fail(const std::string& path, const std::string& what) const {
        ErrorContext ctx;
        ctx.file = origin;
        ctx.json_path = path;
        ctx.kernel = kernel;
        throw Error(ErrorCode::InvalidIR, what, ctx);
    }
    static std::string kind_of(const json& j) { return j.type_name(); }

    const json& field(const json& obj, const std::string& path, const char* key) const {
        if (!obj.is_object()) fail(path, "expected an object, found " + kind_of(obj));
        auto it = obj.find(key);
        if (it == obj.end()) fail(path, std::string("missing key \"") + key + "\"");
        return *it;
    }
    std::string str(const json& obj, const std::string& path, const char* key) const {
        const json& v = field(obj, path, key);
        if (!v.is_string())
            fail(path + "." + key, "expected a string, found " + kind_of(v));
        return v.get<std::string>();
    }
    Scalar scalar(const json& obj, const std::string& path, const char* key = "type") const {
        std::string s = str(obj, path, key);
        auto t = s == "void" ? std::optional<Scalar>(Scalar::Void) : scalar_from_string(s);
        if (!t)
            fail(path + "." + key,
                 "unknown type \"" + s + "\" (expected bool, i32, u32, i64, u64, f32 or f64)");
        return *t;
    }
    Space space(const json& obj, const std::string& path) const {
        std::string s = str(obj, path, "space");
        if (s == "global") return Space::Global;
        if (s == "local") return Space::Local;
        fail(path + ".space", "unknown space \"" + s + "\" (expected global or local)");
    }
    void keys(const json& obj, const std::string& path,
              std::initializer_list<const char*> allowed) const {
        for (auto& [k, v] : obj.items()) {
            bool known = false;
            for (auto* a : allowed) known |= k == a;
            if (!known) fail(path + "." + k, "unknown key \"" + k + "\"");
        }
    }
    // Factory errors (type mismatches) become errors at this path.
    template <class F> auto checked(const std::string& path, F&& f) const {
        try {
            return f();
        } catch (const Error& e) {
            if (e.code() != ErrorCode::InvalidKernel) throw;
            fail(path, e.message());
        }
    }

    Expr expr(const json& j, const std::string& path) const {
        std::string kind = str(j, path, "expr");
        Scalar type = scalar(j, path);
        Expr e = expr_of_kind(kind, type, j, path);
        if (e->type != type)
            fail(path + ".type", std::string("declared ") + to_string(type) + " but the " + kind +
                                     " has type " + to_string(e->type));
        return e;
    }
    Expr opt_expr(const json& j, const std::string& path, const char* key) const {
        return j.contains(key) ? expr(j[key], path + "." + key) : nullptr;
    }

    Expr expr_of_kind(const std::string& kind, Scalar type, const json& j,
                      const std::string& path) const {
        auto sub = [&](const char* key) { return expr(field(j, path, key), path + "." + key); };
        if (kind == "Const") {
            keys(j, path, {"expr", "type", "value"});
            const json& v = field(j, path, "value");
            return checked(path, [&] {
                if (is_float(type)) {
                    if (v.is_number()) return Const::make_float(type, v.get<double>());
                    if (v == "nan") return Const::make_float(type, NAN);
                    if (v == "inf") return Const::make_float(type, INFINITY);
                    if (v == "-inf") return Const::make_float(type, -INFINITY);
                    fail(path + ".value", "expected a number, \"nan\", \"inf\" or \"-inf\"");
                }
                if (type == Scalar::Bool) {
                    if (!v.is_boolean()) fail(path + ".value", "expected true or false");
                    return Const::make_bool(v.get<bool>());
                }
                if (!v.is_number_integer())
                    fail(path + ".value", "expected an integer, found " + kind_of(v));
                if (type == Scalar::U64)
                    return Const::make_int(type, static_cast<int64_t>(v.get<uint64_t>()));
                return Const::make_int(type, v.get<int64_t>());
            });
        }
        if (kind == "Var") {
            keys(j, path, {"expr", "type", "name"});
            return checked(path, [&] { return Var::make(str(j, path, "name"), type); });
        }
        if (kind == "Unary") {
            keys(j, path, {"expr", "type", "op", "a"});
            std::string op = str(j, path, "op");
            for (auto o : {UnaryOp::Neg, UnaryOp::Not, UnaryOp::BitNot})
                if (op == to_string(o)) return checked(path, [&] { return Unary::make(o, sub("a")); });
            fail(path + ".op", "unknown unary op \"" + op + "\"");
        }
        if (kind == "Binary") {
            keys(j, path, {"expr", "type", "op", "a", "b"});
            std::string op = str(j, path, "op");
            auto o = binary_op_from_string(op);
            if (!o) fail(path + ".op", "unknown binary op \"" + op + "\"");
            return checked(path, [&] { return Binary::make(*o, sub("a"), sub("b")); });
        }
        if (kind == "Select") {
            keys(j, path, {"expr", "type", "cond", "a", "b"});
            return checked(path, [&] { return Select::make(sub("cond"), sub("a"), sub("b")); });
        }
        if (kind == "Cast") {
            keys(j, path, {"expr", "type", "a"});
            return checked(path, [&] { return Cast::make(type, sub("a")); });
        }
        if (kind == "Load") {
            keys(j, path, {"expr", "type", "array", "space", "index"});
            return checked(path, [&] {
                return Load::make(str(j, path, "array"), space(j, path), type, sub("index"));
            });
        }
        if (kind == "Call") {
            keys(j, path, {"expr", "type", "name", "args"});
            const json& args = field(j, path, "args");
            if (!args.is_array()) fail(path + ".args", "expected an array");
            std::vector<Expr> a;
            for (size_t i = 0; i < args.size(); ++i)
                a.push_back(expr(args[i], path + ".args[" + std::to_string(i) + "]"));
            return checked(path, [&] { return Call::make(str(j, path, "name"), std::move(a)); });
        }
        if (kind == "Atomic") {
            keys(j, path, {"expr", "type", "op", "array", "space", "index", "value", "compare"});
            std::string op = str(j, path, "op");
            for (int i = 0; i <= int(AtomicOp::CmpXchg); ++i) {
                auto o = static_cast<AtomicOp>(i);
                if (op == to_string(o))
                    return checked(path, [&] {
                        return Atomic::make(o, str(j, path, "array"), space(j, path), type,
                                            sub("index"), sub("value"),
                                            opt_expr(j, path, "compare"));
                    });
            }
            fail(path + ".op", "unknown atomic op \"" + op + "\"");
        }
        fail(path + ".expr", "unknown expression kind \"" + kind + "\"");
    }

    Stmt stmt(const json& j, const std::string& path) const {
        std::string kind = str(j, path, "stmt");
        auto sub = [&](const char* key) { return expr(field(j, path, key), path + "." + key); };
        auto body = [&](const char* key) { return stmt(field(j, path, key), path + "." + key); };
        auto opt_body = [&](const char* key) {
            return j.contains(key) ? stmt(j[key], path + "." + key) : nullptr;
        };
        if (kind == "Block") {
            keys(j, path, {"stmt", "body"});
            const json& b = field(j, path, "body");
            if (!b.is_array()) fail(path + ".body", "expected an array, found " + kind_of(b));
            std::vector<Stmt> v;
            for (size_t i = 0; i < b.size(); ++i)
                v.push_back(stmt(b[i], path + ".body[" + std::to_string(i) + "]"));
            return Block::make(std::move(v));
        }
        if (kind == "Let") {
            keys(j, path, {"stmt", "name", "type", "init"});
            Scalar t = scalar(j, path);
            Expr init = sub("init");
            if (init->type != t)
                fail(path + ".type", std::string("declared ") + to_string(t) +
                                         " but the initializer has type " + to_string(init->type));
            return checked(path, [&] { return Let::make(str(j, path, "name"), init); });
        }
        if (kind == "Assign") {
            keys(j, path, {"stmt", "name", "value"});
            return checked(path, [&] { return Assign::make(str(j, path, "name"), sub("value")); });
        }
        if (kind == "Store") {
            keys(j, path, {"stmt", "array", "space", "index", "value"});
            return checked(path, [&] {
                return Store::make(str(j, path, "array"), space(j, path), sub("index"), sub("value"));
            });
        }
        if (kind == "If") {
            keys(j, path, {"stmt", "cond", "then", "else"});
            return checked(path, [&] { return If::make(sub("cond"), body("then"), opt_body("else")); });
        }
        if (kind == "For") {
            keys(j, path, {"stmt", "var", "type", "begin", "end", "step", "body"});
            Scalar t = scalar(j, path);
            Stmt s = checked(path, [&] {
                return For::make(str(j, path, "var"), sub("begin"), sub("end"), sub("step"),
                                 body("body"));
            });
            if (as<For>(s)->type != t) fail(path + ".type", "does not match the loop bounds' type");
            return s;
        }
        if (kind == "While") {
            keys(j, path, {"stmt", "cond", "body"});
            return checked(path, [&] { return While::make(sub("cond"), body("body")); });
        }
        if (kind == "Break" || kind == "Continue" || kind == "Return" || kind == "Barrier") {
            keys(j, path, {"stmt"});
            if (kind == "Break") return Break::make();
            if (kind == "Continue") return Continue::make();
            if (kind == "Return") return Return::make();
            return Barrier::make();
        }
        if (kind == "Fence") {
            keys(j, path, {"stmt", "scope"});
            std::string s = str(j, path, "scope");
            if (s == "workgroup") return Fence::make(FenceScope::WorkGroup);
            if (s == "device") return Fence::make(FenceScope::Device);
            fail(path + ".scope", "unknown fence scope \"" + s + "\" (expected workgroup or device)");
        }
        if (kind == "Eval") {
            keys(j, path, {"stmt", "value"});
            return checked(path, [&] { return Eval::make(sub("value")); });
        }
        if (kind == "Native") {
            keys(j, path, {"stmt", "code", "fallback"});
            const json& code = field(j, path, "code");
            if (!code.is_object()) fail(path + ".code", "expected an object of backend -> code");
            std::map<std::string, std::string> m;
            for (auto& [backend, text] : code.items()) {
                if (!text.is_string()) fail(path + ".code." + backend, "expected a string");
                m[backend] = text.get<std::string>();
            }
            return checked(path, [&] { return Native::make(std::move(m), opt_body("fallback")); });
        }
        fail(path + ".stmt", "unknown statement kind \"" + kind + "\"");
    }

    Kernel kernel_of(const json& j) {
        if (!j.is_object()) fail("", "expected a JSON object, found " + kind_of(j));
        keys(j, "", {"schema", "name", "params", "shared", "body"});
        std::string schema = str(j, "", "schema");
        if (schema != schema_name)
            fail("schema", "unsupported schema \"" + schema + "\" (this plexus reads " +
                               schema_name + ")");
        Kernel k;
        k.name = str(j, "", "name");
        kernel = k.name;
        const json& params = field(j, "", "params");
        if (!params.is_array()) fail("params", "expected an array");
        for (size_t i = 0; i < params.size(); ++i) {
            std::string p = "params[" + std::to_string(i) + "]";
            const json& jp = params[i];
            Param param;
            param.name = str(jp, p, "name");
            std::string kind = str(jp, p, "kind");
            param.type = scalar(jp, p);
            if (kind == "buffer") {
                keys(jp, p, {"name", "kind", "type", "access"});
                param.kind = Param::Kind::Buffer;
                std::string a = str(jp, p, "access");
                if (a == "read") param.access = Access::Read;
                else if (a == "write") param.access = Access::Write;
                else if (a == "readwrite") param.access = Access::ReadWrite;
                else fail(p + ".access", "unknown access \"" + a + "\" (expected read, write or readwrite)");
            } else if (kind == "scalar") {
                keys(jp, p, {"name", "kind", "type"});
            } else {
                fail(p + ".kind", "unknown parameter kind \"" + kind + "\" (expected buffer or scalar)");
            }
            k.params.push_back(param);
        }
        const json& shared = field(j, "", "shared");
        if (!shared.is_array()) fail("shared", "expected an array");
        for (size_t i = 0; i < shared.size(); ++i) {
            std::string p = "shared[" + std::to_string(i) + "]";
            keys(shared[i], p, {"name", "type", "count"});
            const json& count = field(shared[i], p, "count");
            if (!count.is_number_unsigned() || count.get<uint64_t>() == 0 ||
                count.get<uint64_t>() > UINT32_MAX)
                fail(p + ".count", "expected a positive integer below 2^32");
            k.shared.push_back({str(shared[i], p, "name"), scalar(shared[i], p),
                                count.get<uint32_t>()});
        }
        k.body = stmt(field(j, "", "body"), "body");
        if (!as<Block>(k.body)) fail("body", "the kernel body must be a Block");
        return k;
    }
};

} // namespace

Kernel from_json(std::string_view text, const std::string& origin) {
    json j;
    try {
        j = json::parse(text);
    } catch (const json::parse_error& e) {
        ErrorContext ctx;
        ctx.file = origin;
        throw Error(ErrorCode::InvalidIR, std::string("not valid JSON: ") + e.what(), ctx);
    }
    Reader r{origin, ""};
    return r.kernel_of(j);
}

// The hash covers the compact canonical form, so formatting never changes it.
std::string canonical_json(const Kernel& k) { return kernel_json(k).dump(); }

} // namespace plexus::ir
