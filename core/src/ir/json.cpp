// The IR as JSON, schema "plexus-ir/2" (docs/ir.md): writing, and reading (also "plexus-ir/1",
// a subset, and "plexus-ir/2.1", /2 with loop hints) with errors that name the JSON path of the
// offending value.
#include "plexus/error.hpp"
#include "plexus/ir.hpp"

#include <cmath>
#include <nlohmann/json.hpp>

namespace plexus::ir {

using json = nlohmann::json;
static constexpr const char* schema_name = "plexus-ir/2";
static constexpr const char* schema_v1 = "plexus-ir/1";
static constexpr const char* schema_v2_1 = "plexus-ir/2.1"; // /2 and For.unroll
static constexpr const char* schema_v2_2 = "plexus-ir/2.2"; // /2.1 and Kernel.routine

// ---- writing -----------------------------------------------------------------------------

namespace {

json float_value(double v) {
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    return v;
}

json path_json(const Path& p) {
    json j = json::array();
    for (uint32_t step : p)
        j.push_back(step);
    return j;
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
    json visit(const Call& n) { return {{"name", n.name}, {"args", exprs(n.args)}}; }
    json visit(const Atomic& n) {
        json j = {{"op", to_string(n.op)},
                  {"array", n.array},
                  {"space", to_string(n.space)},
                  {"index", expr(n.index)},
                  {"value", expr(n.value)}};
        if (n.compare) j["compare"] = expr(n.compare);
        return j;
    }
    json visit(const Field& n) {
        return {{"base", expr(n.base)}, {"field", n.base->type.decl()->members[n.index].name}};
    }
    json visit(const Swizzle& n) {
        json lanes = json::array();
        for (uint8_t l : n.lanes)
            lanes.push_back(l);
        return {{"base", expr(n.base)}, {"lanes", lanes}};
    }
    json visit(const Broadcast& n) { return {{"value", expr(n.value)}}; }
    json visit(const Construct& n) { return {{"args", exprs(n.args)}}; }
    json visit(const MakeVariant& n) {
        json j = {{"case", n.type.decl()->members[n.index].name}};
        if (n.payload) j["payload"] = expr(n.payload);
        return j;
    }
    json exprs(const std::vector<Expr>& v) {
        json a = json::array();
        for (auto& e : v)
            a.push_back(expr(e));
        return a;
    }

    json visit(const Block& n) {
        json body = json::array();
        for (auto& s : n.body)
            body.push_back(stmt(s));
        return {{"body", body}};
    }
    json visit(const Let& n) {
        return {{"name", n.name}, {"type", to_string(n.type)}, {"init", expr(n.init)}};
    }
    json visit(const Assign& n) {
        json j = {{"name", n.name}, {"value", expr(n.value)}};
        if (!n.path.empty()) j["path"] = path_json(n.path);
        return j;
    }
    json visit(const Store& n) {
        json j = {{"array", n.array},
                  {"space", to_string(n.space)},
                  {"index", expr(n.index)},
                  {"value", expr(n.value)}};
        if (!n.path.empty()) j["path"] = path_json(n.path);
        return j;
    }
    json visit(const If& n) {
        json j = {{"cond", expr(n.cond)}, {"then", stmt(n.then_body)}};
        if (n.else_body) j["else"] = stmt(n.else_body);
        return j;
    }
    json visit(const For& n) {
        json j = {{"var", n.var},       {"type", to_string(n.type)}, {"begin", expr(n.begin)},
                  {"end", expr(n.end)}, {"step", expr(n.step)},      {"body", stmt(n.body)}};
        if (n.unroll == For::unroll_full)
            j["unroll"] = "full";
        else if (n.unroll)
            j["unroll"] = n.unroll;
        return j;
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
    json visit(const Matrix& n) {
        json j = {{"op", to_string(n.op)}, {"fragment", n.frag}};
        switch (n.op) {
        case MatrixOp::Fill: j["value"] = expr(n.value); break;
        case MatrixOp::Load:
        case MatrixOp::Store:
            j["array"] = n.array;
            j["space"] = to_string(n.space);
            j["index"] = expr(n.index);
            j["stride"] = expr(n.stride);
            j["layout"] = to_string(n.layout);
            if (n.rows) j["rows"] = expr(n.rows), j["cols"] = expr(n.cols);
            break;
        case MatrixOp::Mma: j["a"] = n.a, j["b"] = n.b, j["c"] = n.c; break;
        case MatrixOp::MmaShared:
            j["a"] = n.array, j["row_a"] = expr(n.row_a), j["col_a"] = expr(n.col_a);
            j["b"] = n.array_b, j["row_b"] = expr(n.row_b), j["col_b"] = expr(n.col_b);
            j["steps"] = n.steps;
            if (n.in_flight) j["in_flight"] = n.in_flight;
            break;
        }
        return j;
    }
    json visit(const AsyncCopy& n) {
        json j = {{"op", to_string(n.op)}};
        switch (n.op) {
        case AsyncCopyOp::Copy:
            j["array"] = n.array, j["index"] = expr(n.index), j["buffer"] = n.buffer;
            j["src_index"] = expr(n.src_index), j["count"] = n.count, j["valid"] = expr(n.valid);
            break;
        case AsyncCopyOp::Commit: break;
        case AsyncCopyOp::Wait: j["pending"] = n.pending; break;
        }
        return j;
    }
    json visit(const Match& n) {
        const TypeDecl& d = *n.value->type.decl();
        json cases = json::array();
        for (auto& c : n.cases) {
            json jc = {{"case", d.members[c.index].name}, {"body", stmt(c.body)}};
            if (!c.var.empty()) jc["var"] = c.var;
            cases.push_back(jc);
        }
        json j = {{"value", expr(n.value)}, {"cases", cases}};
        if (n.otherwise) j["otherwise"] = stmt(n.otherwise);
        return j;
    }
};

json type_decl_json(const TypeDecl& d) {
    const bool record = d.kind == TypeDecl::Kind::Record;
    json members = json::array();
    for (auto& m : d.members) {
        json jm = {{"name", m.name}};
        if (!m.type.is_void()) jm["type"] = to_string(m.type);
        members.push_back(jm);
    }
    json j = {{"name", d.name},
              {"kind", record ? "record" : "variant"},
              {record ? "fields" : "cases", members},
              {"size", d.size},
              {"align", d.align}};
    if (record)
        j["offsets"] = d.offsets;
    else
        j["payload_offset"] = d.payload_offset;
    return j;
}

json arrays_json(const std::vector<ArrayDecl>& arrays) {
    json out = json::array();
    for (auto& a : arrays) {
        json j = {{"name", a.name}, {"type", to_string(a.type)}, {"count", a.count}};
        if (!a.dims.empty()) j["dims"] = a.dims;
        if (a.pad) j["pad"] = a.pad;
        if (a.swizzle) j["swizzle"] = true;
        out.push_back(j);
    }
    return out;
}

json kernel_json(const Kernel& k) {
    json params = json::array();
    for (auto& p : k.params) {
        json jp = {{"name", p.name},
                   {"kind", p.kind == Param::Kind::Buffer ? "buffer" : "scalar"},
                   {"type", to_string(p.type)}};
        if (p.kind == Param::Kind::Buffer) jp["access"] = to_string(p.access);
        params.push_back(jp);
    }
    json types = json::array();
    for (auto& d : k.types)
        types.push_back(type_decl_json(*d));
    Writer w;
    json j = {{"schema", schema_v1},
              {"name", k.name},
              {"params", params},
              {"shared", arrays_json(k.shared)},
              {"body", k.body ? w.stmt(k.body) : json(nullptr)}};
    const bool hints = has_loop_hints(k);
    if (!hints && k.routine.empty() && !needs_ir_v2(k)) return j;
    j["schema"] = !k.routine.empty() ? schema_v2_2 : hints ? schema_v2_1 : schema_name;
    if (!k.routine.empty()) j["routine"] = k.routine;
    j["types"] = types;
    j["private"] = arrays_json(k.privates);
    if (!k.fragments.empty()) {
        json frags = json::array();
        for (auto& f : k.fragments) {
            json jf = {{"name", f.name}, {"use", to_string(f.use)},  {"m", f.m}, {"n", f.n},
                       {"k", f.k},       {"type", to_string(f.type)}};
            if (f.use != MatrixUse::Acc) jf["layout"] = to_string(f.layout);
            frags.push_back(jf);
        }
        j["fragments"] = frags;
    }
    if (k.work_group.declared()) {
        json wg = json::object();
        if (k.work_group.required[0]) wg["required"] = k.work_group.required;
        if (k.work_group.max) wg["max"] = k.work_group.max;
        if (k.work_group.min_groups) wg["min_groups"] = k.work_group.min_groups;
        j["work_group"] = wg;
    }
    return j;
}

} // namespace

std::string to_json(const Kernel& k) {
    return kernel_json(k).dump(1);
}

// ---- reading -----------------------------------------------------------------------------

namespace {

// Deeper nesting is refused: the reader recurses once per level, and a document is input.
constexpr int kMaxDepth = 256;

struct Reader {
    std::string origin;
    std::string kernel;
    std::string schema;
    bool v2 = true;
    bool v2_1 = true; // loop hints
    std::vector<std::shared_ptr<const TypeDecl>> decls;
    int depth = 0;

    [[noreturn]] void fail(const std::string& path, const std::string& what) const {
        ErrorContext ctx;
        ctx.file = origin;
        ctx.json_path = path;
        ctx.kernel = kernel;
        throw Error(ErrorCode::InvalidIR, what, ctx);
    }
    static std::string kind_of(const json& j) { return j.type_name(); }
    struct Nesting {
        Reader& r;
        Nesting(Reader& reader, const std::string& path) : r(reader) {
            if (++r.depth > kMaxDepth)
                r.fail(path, "nested deeper than " + std::to_string(kMaxDepth) + " levels");
        }
        ~Nesting() { --r.depth; }
    };

    const json& field(const json& obj, const std::string& path, const char* key) const {
        if (!obj.is_object()) fail(path, "expected an object, found " + kind_of(obj));
        auto it = obj.find(key);
        if (it == obj.end()) fail(path, std::string("missing key \"") + key + "\"");
        return *it;
    }
    std::string str(const json& obj, const std::string& path, const char* key) const {
        const json& v = field(obj, path, key);
        if (!v.is_string()) fail(path + "." + key, "expected a string, found " + kind_of(v));
        return v.get<std::string>();
    }
    uint64_t count(const json& obj, const std::string& path, const char* key, uint64_t max) const {
        const json& v = field(obj, path, key);
        if (!v.is_number_unsigned() || v.get<uint64_t>() > max)
            fail(path + "." + key,
                 "expected an integer from 0 to " + std::to_string(max) + ", found " + v.dump());
        return v.get<uint64_t>();
    }
    Type type(const json& obj, const std::string& path, const char* key = "type") const {
        std::string s = str(obj, path, key);
        auto t = type_from_string(s, decls);
        if (!t || (!v2 && !t->is_scalar() && !t->is_void()))
            fail(path + "." + key,
                 "unknown type \"" + s +
                     "\" (expected a scalar such as f32, i8, bf16, "
                     "a vector such as f32x4, or a record or variant of \"types\")");
        return *t;
    }
    Space space(const json& obj, const std::string& path) const {
        std::string s = str(obj, path, "space");
        if (s == "global") return Space::Global;
        if (s == "local") return Space::Local;
        if (s == "private" && v2) return Space::Private;
        fail(path + ".space", "unknown space \"" + s + "\" (expected global, local or private)");
    }
    void keys(const json& obj, const std::string& path,
              std::initializer_list<const char*> allowed) const {
        for (auto& [k, v] : obj.items()) {
            bool known = false;
            for (auto* a : allowed)
                known |= k == a;
            if (!known) fail(path + "." + k, "unknown key \"" + k + "\"");
        }
    }
    const json& array(const json& obj, const std::string& path, const char* key) const {
        const json& v = field(obj, path, key);
        if (!v.is_array()) fail(path + "." + key, "expected an array, found " + kind_of(v));
        return v;
    }
    // A member (field, case) of an aggregate type, by name.
    uint32_t member(const Type& t, const json& obj, const std::string& path,
                    const char* key) const {
        std::string name = str(obj, path, key);
        int i = t.decl()->index_of(name);
        if (i < 0)
            fail(path + "." + key, "'" + t.decl()->name + "' has no " +
                                       (t.is_record() ? "field" : "case") + " named \"" + name +
                                       "\"");
        return uint32_t(i);
    }
    Path path_of(const json& j, const std::string& path) const {
        Path p;
        if (!j.contains("path")) return p;
        const json& a = array(j, path, "path");
        for (size_t i = 0; i < a.size(); ++i) {
            if (!a[i].is_number_unsigned() || a[i].get<uint64_t>() > 255)
                fail(path + ".path[" + std::to_string(i) + "]",
                     "expected a field or lane index, found " + a[i].dump());
            p.push_back(a[i].get<uint32_t>());
        }
        return p;
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

    Expr expr(const json& j, const std::string& path) {
        Nesting n(*this, path);
        std::string kind = str(j, path, "expr");
        Type t = type(j, path);
        Expr e = expr_of_kind(kind, t, j, path);
        if (!(e->type == t))
            fail(path + ".type", "declared " + to_string(t) + " but the " + kind + " has type " +
                                     to_string(e->type));
        return e;
    }
    Expr opt_expr(const json& j, const std::string& path, const char* key) {
        return j.contains(key) ? expr(j[key], path + "." + key) : nullptr;
    }
    std::vector<Expr> exprs(const json& j, const std::string& path, const char* key) {
        const json& a = array(j, path, key);
        std::vector<Expr> v;
        for (size_t i = 0; i < a.size(); ++i)
            v.push_back(expr(a[i], path + "." + key + "[" + std::to_string(i) + "]"));
        return v;
    }

    Expr constant(const Type& type, const json& j, const std::string& path) const {
        keys(j, path, {"expr", "type", "value"});
        const json& v = field(j, path, "value");
        if (!type.is_scalar())
            fail(path + ".type", "a constant of " + to_string(type) + " (constants are scalars)");
        const Scalar t = type.scalar();
        return checked(path, [&] {
            if (is_float(t)) {
                if (v.is_number()) return Const::make_float(t, v.get<double>());
                if (v == "nan") return Const::make_float(t, NAN);
                if (v == "inf") return Const::make_float(t, INFINITY);
                if (v == "-inf") return Const::make_float(t, -INFINITY);
                fail(path + ".value", "expected a number, \"nan\", \"inf\" or \"-inf\"");
            }
            if (t == Scalar::Bool) {
                if (!v.is_boolean()) fail(path + ".value", "expected true or false");
                return Const::make_bool(v.get<bool>());
            }
            if (!v.is_number_integer())
                fail(path + ".value", "expected an integer, found " + kind_of(v));
            if (t == Scalar::U64)
                return Const::make_int(t, static_cast<int64_t>(v.get<uint64_t>()));
            return Const::make_int(t, v.get<int64_t>());
        });
    }

    Expr expr_of_kind(const std::string& kind, const Type& type, const json& j,
                      const std::string& path) {
        auto sub = [&](const char* key) { return expr(field(j, path, key), path + "." + key); };
        if (kind == "Const") return constant(type, j, path);
        if (kind == "Var") {
            keys(j, path, {"expr", "type", "name"});
            return checked(path, [&] { return Var::make(str(j, path, "name"), type); });
        }
        if (kind == "Unary") {
            keys(j, path, {"expr", "type", "op", "a"});
            std::string op = str(j, path, "op");
            for (auto o : {UnaryOp::Neg, UnaryOp::Not, UnaryOp::BitNot})
                if (op == to_string(o))
                    return checked(path, [&] { return Unary::make(o, sub("a")); });
            fail(path + ".op", "unknown unary op \"" + op + "\"");
        }
        if (kind == "Binary") {
            keys(j, path, {"expr", "type", "op", "a", "b"});
            std::string op = str(j, path, "op");
            auto o = binary_op_from_string(op);
            if (!o) fail(path + ".op", "unknown binary op \"" + op + "\"");
            Expr a = sub("a"), b = sub("b");
            return checked(path, [&] { return Binary::make(*o, a, b); });
        }
        if (kind == "Select") {
            keys(j, path, {"expr", "type", "cond", "a", "b"});
            Expr c = sub("cond"), a = sub("a"), b = sub("b");
            return checked(path, [&] { return Select::make(c, a, b); });
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
            std::vector<Expr> a = exprs(j, path, "args");
            return checked(path, [&] { return Call::make(str(j, path, "name"), std::move(a)); });
        }
        if (kind == "Atomic") {
            keys(j, path, {"expr", "type", "op", "array", "space", "index", "value", "compare"});
            std::string op = str(j, path, "op");
            if (!type.is_scalar()) fail(path + ".type", "an atomic on " + to_string(type));
            for (int i = 0; i <= int(AtomicOp::CmpXchg); ++i) {
                auto o = static_cast<AtomicOp>(i);
                if (op != to_string(o)) continue;
                Expr index = sub("index"), value = sub("value"),
                     compare = opt_expr(j, path, "compare");
                return checked(path, [&] {
                    return Atomic::make(o, str(j, path, "array"), space(j, path), type.scalar(),
                                        index, value, compare);
                });
            }
            fail(path + ".op", "unknown atomic op \"" + op + "\"");
        }
        if (!v2)
            fail(path + ".expr",
                 "unknown expression kind \"" + kind + "\" (in schema " + schema_v1 + ")");
        if (kind == "Field") {
            keys(j, path, {"expr", "type", "base", "field"});
            Expr base = sub("base");
            if (!base->type.is_record())
                fail(path + ".base",
                     "a field of " + to_string(base->type) + ", which is not a record");
            return checked(path,
                           [&] { return Field::make(base, member(base->type, j, path, "field")); });
        }
        if (kind == "Swizzle") {
            keys(j, path, {"expr", "type", "base", "lanes"});
            Expr base = sub("base");
            std::vector<uint8_t> lanes;
            const json& a = array(j, path, "lanes");
            for (size_t i = 0; i < a.size(); ++i) {
                if (!a[i].is_number_unsigned() || a[i].get<uint64_t>() > 7)
                    fail(path + ".lanes[" + std::to_string(i) + "]",
                         "expected a lane from 0 to 7, found " + a[i].dump());
                lanes.push_back(a[i].get<uint8_t>());
            }
            return checked(path, [&] { return Swizzle::make(base, lanes); });
        }
        if (kind == "Broadcast") {
            keys(j, path, {"expr", "type", "value"});
            if (!type.is_vector())
                fail(path + ".type",
                     "a broadcast to " + to_string(type) + ", which is not a vector");
            return checked(path, [&] { return Broadcast::make(sub("value"), type.lanes()); });
        }
        if (kind == "Construct") {
            keys(j, path, {"expr", "type", "args"});
            std::vector<Expr> a = exprs(j, path, "args");
            return checked(path, [&] { return Construct::make(type, std::move(a)); });
        }
        if (kind == "MakeVariant") {
            keys(j, path, {"expr", "type", "case", "payload"});
            if (!type.is_variant()) fail(path + ".type", to_string(type) + " is not a variant");
            uint32_t c = member(type, j, path, "case");
            Expr payload = opt_expr(j, path, "payload");
            return checked(path, [&] { return MakeVariant::make(type, c, payload); });
        }
        fail(path + ".expr", "unknown expression kind \"" + kind + "\"");
    }

    Stmt stmt(const json& j, const std::string& path) {
        Nesting nesting(*this, path);
        std::string kind = str(j, path, "stmt");
        auto sub = [&](const char* key) { return expr(field(j, path, key), path + "." + key); };
        auto body = [&](const char* key) { return stmt(field(j, path, key), path + "." + key); };
        auto opt_body = [&](const char* key) {
            return j.contains(key) ? stmt(j[key], path + "." + key) : nullptr;
        };
        if (kind == "Block") {
            keys(j, path, {"stmt", "body"});
            const json& b = array(j, path, "body");
            std::vector<Stmt> v;
            for (size_t i = 0; i < b.size(); ++i)
                v.push_back(stmt(b[i], path + ".body[" + std::to_string(i) + "]"));
            return Block::make(std::move(v));
        }
        if (kind == "Let") {
            keys(j, path, {"stmt", "name", "type", "init"});
            Type t = type(j, path);
            Expr init = sub("init");
            if (!(init->type == t))
                fail(path + ".type", "declared " + to_string(t) + " but the initializer has type " +
                                         to_string(init->type));
            return checked(path, [&] { return Let::make(str(j, path, "name"), init); });
        }
        if (kind == "Assign") {
            keys(j, path,
                 v2 ? std::initializer_list<const char*>{"stmt", "name", "value", "path"}
                    : std::initializer_list<const char*>{"stmt", "name", "value"});
            Expr value = sub("value");
            return checked(
                path, [&] { return Assign::make(str(j, path, "name"), value, path_of(j, path)); });
        }
        if (kind == "Store") {
            keys(j, path,
                 v2 ? std::initializer_list<const char*>{"stmt", "array", "space", "index", "value",
                                                         "path"}
                    : std::initializer_list<const char*>{"stmt", "array", "space", "index",
                                                         "value"});
            Expr index = sub("index"), value = sub("value");
            return checked(path, [&] {
                return Store::make(str(j, path, "array"), space(j, path), index, value,
                                   path_of(j, path));
            });
        }
        if (kind == "If") {
            keys(j, path, {"stmt", "cond", "then", "else"});
            Expr c = sub("cond");
            Stmt t = body("then"), e = opt_body("else");
            return checked(path, [&] { return If::make(c, t, e); });
        }
        if (kind == "For") {
            if (j.contains("unroll") && !v2_1)
                fail(path + ".unroll", std::string("a loop hint needs schema ") + schema_v2_1 +
                                           " (this document is " + schema + ")");
            keys(j, path, {"stmt", "var", "type", "begin", "end", "step", "body", "unroll"});
            Type t = type(j, path);
            Expr begin = sub("begin"), end = sub("end"), step = sub("step");
            const uint32_t unroll = j.contains("unroll") ? unroll_hint(j["unroll"], path) : 0;
            Stmt b = body("body");
            Stmt s = checked(
                path, [&] { return For::make(str(j, path, "var"), begin, end, step, b, unroll); });
            if (!(Type(as<For>(s)->type) == t))
                fail(path + ".type", "does not match the loop bounds' type");
            return s;
        }
        if (kind == "While") {
            keys(j, path, {"stmt", "cond", "body"});
            Expr c = sub("cond");
            return checked(path, [&] { return While::make(c, body("body")); });
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
            fail(path + ".scope",
                 "unknown fence scope \"" + s + "\" (expected workgroup or device)");
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
            Stmt f = opt_body("fallback");
            return checked(path, [&] { return Native::make(std::move(m), f); });
        }
        if (kind == "Match" && v2) return match(j, path);
        if (kind == "Matrix" && v2) return matrix(j, path);
        if (kind == "AsyncCopy" && v2) return async_copy(j, path);
        fail(path + ".stmt", "unknown statement kind \"" + kind + "\"");
    }

    MatrixLayout layout(const json& j, const std::string& path) const {
        std::string s = str(j, path, "layout");
        if (s == "row") return MatrixLayout::Row;
        if (s == "col") return MatrixLayout::Col;
        fail(path + ".layout", "unknown layout \"" + s + "\" (expected row or col)");
    }
    Stmt matrix(const json& j, const std::string& path) {
        const std::string op = str(j, path, "op");
        const std::string frag = str(j, path, "fragment");
        if (op == "fill") {
            keys(j, path, {"stmt", "op", "fragment", "value"});
            Expr v = expr(field(j, path, "value"), path + ".value");
            return checked(path, [&] { return Matrix::fill(frag, v); });
        }
        if (op == "load" || op == "store") {
            keys(j, path,
                 {"stmt", "op", "fragment", "array", "space", "index", "stride", "layout", "rows",
                  "cols"});
            Expr index = expr(field(j, path, "index"), path + ".index");
            Expr stride = expr(field(j, path, "stride"), path + ".stride");
            const MatrixLayout l = layout(j, path);
            if (j.contains("rows") || j.contains("cols")) {
                if (op == "load")
                    fail(path + ".rows",
                         "a fragment load has no bounds (only a warpgroup store does)");
                if (l != MatrixLayout::Row) fail(path + ".layout", "a bounded store is row-major");
                Expr rows = expr(field(j, path, "rows"), path + ".rows");
                Expr cols = expr(field(j, path, "cols"), path + ".cols");
                return checked(path, [&] {
                    return Matrix::store_bounded(frag, str(j, path, "array"), space(j, path), index,
                                                 stride, rows, cols);
                });
            }
            return checked(path, [&] {
                return op == "load" ? Matrix::load(frag, str(j, path, "array"), space(j, path),
                                                   index, stride, l)
                                    : Matrix::store(frag, str(j, path, "array"), space(j, path),
                                                    index, stride, l);
            });
        }
        if (op == "mma") {
            keys(j, path, {"stmt", "op", "fragment", "a", "b", "c"});
            return checked(path, [&] {
                return Matrix::mma(frag, str(j, path, "a"), str(j, path, "b"), str(j, path, "c"));
            });
        }
        if (op == "mma_shared") {
            keys(j, path,
                 {"stmt", "op", "fragment", "a", "row_a", "col_a", "b", "row_b", "col_b", "steps",
                  "in_flight"});
            Expr ra = expr(field(j, path, "row_a"), path + ".row_a"),
                 ca = expr(field(j, path, "col_a"), path + ".col_a");
            Expr rb = expr(field(j, path, "row_b"), path + ".row_b"),
                 cb = expr(field(j, path, "col_b"), path + ".col_b");
            const auto steps = uint32_t(count(j, path, "steps", 64));
            const auto in_flight =
                j.contains("in_flight") ? uint32_t(count(j, path, "in_flight", 7)) : 0u;
            return checked(path, [&] {
                return Matrix::mma_shared(frag, str(j, path, "a"), ra, ca, str(j, path, "b"), rb,
                                          cb, steps, in_flight);
            });
        }
        fail(path + ".op",
             "unknown matrix op \"" + op + "\" (expected fill, load, store, mma or mma_shared)");
    }

    // For.unroll: a count from 1 to For::max_unroll, or "full".
    uint32_t unroll_hint(const json& v, const std::string& path) const {
        if (v.is_string() && v.get<std::string>() == "full") return For::unroll_full;
        if (!v.is_number_unsigned() || v.get<uint64_t>() == 0 ||
            v.get<uint64_t>() > For::max_unroll)
            fail(path + ".unroll", "expected an unroll count from 1 to " +
                                       std::to_string(For::max_unroll) + " or \"full\", found " +
                                       v.dump());
        return v.get<uint32_t>();
    }

    Stmt async_copy(const json& j, const std::string& path) {
        const std::string op = str(j, path, "op");
        if (op == "copy") {
            keys(j, path,
                 {"stmt", "op", "array", "index", "buffer", "src_index", "count", "valid"});
            Expr index = expr(field(j, path, "index"), path + ".index");
            Expr src = expr(field(j, path, "src_index"), path + ".src_index");
            Expr valid = expr(field(j, path, "valid"), path + ".valid");
            const auto n = uint32_t(count(j, path, "count", 16));
            return checked(path, [&] {
                return AsyncCopy::copy(str(j, path, "array"), index, str(j, path, "buffer"), src, n,
                                       valid);
            });
        }
        if (op == "commit") {
            keys(j, path, {"stmt", "op"});
            return AsyncCopy::commit();
        }
        if (op == "wait") {
            keys(j, path, {"stmt", "op", "pending"});
            return AsyncCopy::wait(uint32_t(count(j, path, "pending", UINT32_MAX)));
        }
        fail(path + ".op", "unknown async copy op \"" + op + "\" (expected copy, commit or wait)");
    }

    std::vector<FragmentDecl> fragments(const json& j) {
        std::vector<FragmentDecl> out;
        if (!j.contains("fragments")) return out;
        const json& a = array(j, "", "fragments");
        for (size_t i = 0; i < a.size(); ++i) {
            const std::string p = "fragments[" + std::to_string(i) + "]";
            keys(a[i], p, {"name", "use", "m", "n", "k", "type", "layout"});
            FragmentDecl f;
            f.name = str(a[i], p, "name");
            const std::string use = str(a[i], p, "use");
            if (use == "a")
                f.use = MatrixUse::A;
            else if (use == "b")
                f.use = MatrixUse::B;
            else if (use == "acc")
                f.use = MatrixUse::Acc;
            else
                fail(p + ".use", "unknown fragment use \"" + use + "\" (expected a, b or acc)");
            f.m = uint32_t(count(a[i], p, "m", 64));
            f.n = uint32_t(count(a[i], p, "n", 256));
            f.k = uint32_t(count(a[i], p, "k", 64));
            Type t = type(a[i], p);
            if (!t.is_scalar())
                fail(p + ".type", "a fragment of " + to_string(t) + " (fragments hold numbers)");
            f.type = t.scalar();
            if (f.use != MatrixUse::Acc)
                f.layout = layout(a[i], p);
            else if (a[i].contains("layout"))
                fail(p + ".layout",
                     "an accumulator has no declared layout (its loads and stores name one)");
            out.push_back(std::move(f));
        }
        return out;
    }

    Stmt match(const json& j, const std::string& path) {
        keys(j, path, {"stmt", "value", "cases", "otherwise"});
        Expr value = expr(field(j, path, "value"), path + ".value");
        if (!value->type.is_variant())
            fail(path + ".value",
                 "a match on " + to_string(value->type) + ", which is not a variant");
        const json& cases = array(j, path, "cases");
        std::vector<MatchCase> out;
        for (size_t i = 0; i < cases.size(); ++i) {
            const std::string at = path + ".cases[" + std::to_string(i) + "]";
            keys(cases[i], at, {"case", "var", "body"});
            MatchCase c;
            c.index = member(value->type, cases[i], at, "case");
            if (cases[i].contains("var")) c.var = str(cases[i], at, "var");
            c.body = stmt(field(cases[i], at, "body"), at + ".body");
            out.push_back(std::move(c));
        }
        Stmt otherwise =
            j.contains("otherwise") ? stmt(j["otherwise"], path + ".otherwise") : nullptr;
        return checked(path, [&] { return Match::make(value, std::move(out), otherwise); });
    }

    // A declared record or variant; the layout, when given, must be the one plexus computes.
    void type_decl(const json& j, const std::string& path) {
        std::string kind = str(j, path, "kind");
        const bool record = kind == "record";
        if (!record && kind != "variant")
            fail(path + ".kind", "unknown kind \"" + kind + "\" (expected record or variant)");
        const char* list = record ? "fields" : "cases";
        keys(j, path,
             {"name", "kind", list, "size", "align", record ? "offsets" : "payload_offset"});
        const json& members = array(j, path, list);
        std::vector<Member> ms;
        for (size_t i = 0; i < members.size(); ++i) {
            const std::string at = path + "." + list + "[" + std::to_string(i) + "]";
            keys(members[i], at, {"name", "type"});
            Member m{str(members[i], at, "name"), Type()};
            if (record || members[i].contains("type")) m.type = type(members[i], at);
            ms.push_back(std::move(m));
        }
        std::string name = str(j, path, "name");
        for (auto& d : decls)
            if (d->name == name)
                fail(path + ".name", "the type \"" + name + "\" is declared twice");
        auto d = checked(path, [&] {
            return record ? TypeDecl::make_record(name, std::move(ms))
                          : TypeDecl::make_variant(name, std::move(ms));
        });
        auto expect = [&](const char* key, uint64_t computed) {
            if (j.contains(key) && count(j, path, key, UINT64_MAX) != computed)
                fail(path + "." + key, "layout mismatch: plexus computes " + std::string(key) +
                                           " " + std::to_string(computed) + " for \"" + name +
                                           "\" (docs/ir.md, Memory layout)");
        };
        expect("size", d->size);
        expect("align", d->align);
        if (!record) expect("payload_offset", d->payload_offset);
        if (record && j.contains("offsets")) {
            const json& offsets = array(j, path, "offsets");
            if (offsets.size() != d->offsets.size())
                fail(path + ".offsets", "expected one offset per field");
            for (size_t i = 0; i < offsets.size(); ++i)
                if (!offsets[i].is_number_unsigned() || offsets[i].get<uint64_t>() != d->offsets[i])
                    fail(path + ".offsets[" + std::to_string(i) + "]",
                         "layout mismatch: plexus puts field \"" + d->members[i].name +
                             "\" at byte " + std::to_string(d->offsets[i]) + ", found " +
                             offsets[i].dump());
        }
        decls.push_back(std::move(d));
    }

    std::vector<ArrayDecl> arrays(const json& j, const char* key) {
        std::vector<ArrayDecl> out;
        if (!j.contains(key)) return out;
        const json& a = array(j, "", key);
        for (size_t i = 0; i < a.size(); ++i) {
            std::string p = std::string(key) + "[" + std::to_string(i) + "]";
            keys(a[i], p,
                 v2 ? std::initializer_list<const char*>{"name", "type", "count", "dims", "pad",
                                                         "swizzle"}
                    : std::initializer_list<const char*>{"name", "type", "count"});
            ArrayDecl d{str(a[i], p, "name"),
                        type(a[i], p),
                        uint32_t(count(a[i], p, "count", UINT32_MAX)),
                        {},
                        0};
            if (d.count == 0) fail(p + ".count", "expected a positive integer below 2^32");
            if (a[i].contains("dims"))
                for (auto& x : array(a[i], p, "dims")) {
                    if (!x.is_number_unsigned() || x.get<uint64_t>() > UINT32_MAX)
                        fail(p + ".dims", "expected integers below 2^32");
                    d.dims.push_back(x.get<uint32_t>());
                }
            if (a[i].contains("pad")) d.pad = uint32_t(count(a[i], p, "pad", UINT32_MAX));
            if (a[i].contains("swizzle")) {
                if (!a[i]["swizzle"].is_boolean()) fail(p + ".swizzle", "expected true or false");
                d.swizzle = a[i]["swizzle"].get<bool>();
            }
            out.push_back(std::move(d));
        }
        return out;
    }

    Kernel kernel_of(const json& j) {
        if (!j.is_object()) fail("", "expected a JSON object, found " + kind_of(j));
        schema = str(j, "", "schema");
        if (schema != schema_v2_2 && schema != schema_v2_1 && schema != schema_name &&
            schema != schema_v1)
            fail("schema", "unsupported schema \"" + schema + "\" (this plexus reads " +
                               schema_v2_2 + ", " + schema_v2_1 + ", " + schema_name + " and " +
                               schema_v1 + ")");
        const bool v2_2 = schema == schema_v2_2;
        v2_1 = v2_2 || schema == schema_v2_1;
        v2 = v2_1 || schema == schema_name;
        if (v2_2)
            keys(j, "",
                 {"schema", "name", "types", "params", "shared", "private", "work_group",
                  "fragments", "routine", "body"});
        else if (v2)
            keys(j, "",
                 {"schema", "name", "types", "params", "shared", "private", "work_group",
                  "fragments", "body"});
        else
            keys(j, "", {"schema", "name", "params", "shared", "body"});
        Kernel k;
        k.name = str(j, "", "name");
        kernel = k.name;
        if (v2 && j.contains("types")) {
            const json& types = array(j, "", "types");
            for (size_t i = 0; i < types.size(); ++i)
                type_decl(types[i], "types[" + std::to_string(i) + "]");
            k.types = decls;
        }
        const json& params = array(j, "", "params");
        for (size_t i = 0; i < params.size(); ++i) {
            std::string p = "params[" + std::to_string(i) + "]";
            const json& jp = params[i];
            Param param;
            param.name = str(jp, p, "name");
            std::string kind = str(jp, p, "kind");
            param.type = type(jp, p);
            if (kind == "buffer") {
                keys(jp, p, {"name", "kind", "type", "access"});
                param.kind = Param::Kind::Buffer;
                std::string a = str(jp, p, "access");
                if (a == "read")
                    param.access = Access::Read;
                else if (a == "write")
                    param.access = Access::Write;
                else if (a == "readwrite")
                    param.access = Access::ReadWrite;
                else
                    fail(p + ".access",
                         "unknown access \"" + a + "\" (expected read, write or readwrite)");
            } else if (kind == "scalar") {
                keys(jp, p, {"name", "kind", "type"});
            } else {
                fail(p + ".kind",
                     "unknown parameter kind \"" + kind + "\" (expected buffer or scalar)");
            }
            k.params.push_back(param);
        }
        if (v2 && j.contains("work_group")) {
            const json& wg = j["work_group"];
            keys(wg, "work_group", {"required", "max", "min_groups"});
            if (wg.contains("required")) {
                const json& r = array(wg, "work_group", "required");
                if (r.size() != 3) fail("work_group.required", "expected three sizes [x, y, z]");
                for (size_t d = 0; d < 3; ++d) {
                    if (!r[d].is_number_unsigned() || r[d].get<uint64_t>() > UINT32_MAX)
                        fail("work_group.required[" + std::to_string(d) + "]",
                             "expected a size, found " + r[d].dump());
                    k.work_group.required[d] = r[d].get<uint32_t>();
                }
            }
            if (wg.contains("max"))
                k.work_group.max = uint32_t(count(wg, "work_group", "max", UINT32_MAX));
            if (wg.contains("min_groups"))
                k.work_group.min_groups =
                    uint32_t(count(wg, "work_group", "min_groups", UINT32_MAX));
        }
        field(j, "", "shared");
        k.shared = arrays(j, "shared");
        k.privates = arrays(j, "private");
        if (v2) k.fragments = fragments(j);
        if (v2_2 && j.contains("routine")) k.routine = str(j, "", "routine");
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
    } catch (const json::exception& e) {
        // parse_error, and out_of_range for a number no double holds ("1e999").
        ErrorContext ctx;
        ctx.file = origin;
        throw Error(ErrorCode::InvalidIR, std::string("not valid JSON: ") + e.what(), ctx);
    }
    Reader r;
    r.origin = origin;
    return r.kernel_of(j);
}

// The hash covers the compact canonical form, so formatting never changes it.
std::string canonical_json(const Kernel& k) {
    return kernel_json(k).dump();
}

} // namespace plexus::ir
