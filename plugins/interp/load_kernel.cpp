// The loader's outer layer: JSON access with path-naming errors, the kernel's declarations (types
// with their layout checked, parameters, arrays) and the pass that gives nodes registers.
#include "loader.hpp"

#include <algorithm>

namespace plx_interp {
namespace {

bool identifier(const std::string& s) {
    if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
    return std::all_of(s.begin(), s.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
    });
}

uint64_t align_up(uint64_t x, uint64_t a) {
    return (x + a - 1) / a * a;
}

} // namespace

// ---- JSON access ---------------------------------------------------------------------------

void Loader::fail(const std::string& path, const std::string& what) const {
    throw CompileError{path.empty() ? what : path + ": " + what};
}

const json& Loader::field(const json& obj, const std::string& path, const char* key) const {
    if (!obj.is_object()) fail(path, std::string("expected an object, found ") + obj.type_name());
    auto it = obj.find(key);
    if (it == obj.end()) fail(path, std::string("missing key \"") + key + "\"");
    return *it;
}

std::string Loader::str(const json& obj, const std::string& path, const char* key) const {
    const json& v = field(obj, path, key);
    if (!v.is_string())
        fail(path + "." + key, std::string("expected a string, found ") + v.type_name());
    return v.get<std::string>();
}

const json& Loader::list(const json& obj, const std::string& path, const char* key) const {
    const json& v = field(obj, path, key);
    if (!v.is_array())
        fail(path + "." + key, std::string("expected an array, found ") + v.type_name());
    return v;
}

uint32_t Loader::count(const json& v, const std::string& path) const {
    if (!v.is_number_unsigned() || v.get<uint64_t>() > UINT32_MAX)
        fail(path, "expected an integer from 0 to 2^32 - 1, found " + v.dump());
    return v.get<uint32_t>();
}

void Loader::keys(const json& obj, const std::string& path,
                  std::initializer_list<const char*> allowed) const {
    for (auto& [k, v] : obj.items()) {
        bool known = false;
        for (auto* a : allowed)
            known |= k == a;
        if (!known) fail(path.empty() ? k : path + "." + k, "unknown key \"" + k + "\"");
    }
}

TypeId Loader::type(const json& obj, const std::string& path, const char* key) {
    const std::string s = str(obj, path, key);
    const auto t = types_.find(s);
    // Schema plexus-ir/1 has scalars only.
    if (!t || (!v2_ && types_[*t].kind != TypeInfo::Kind::Scalar))
        fail(path + "." + key,
             "unknown type \"" + s +
                 "\" (expected a scalar such as f32, i8 or bf16, a vector such "
                 "as f32x4, or a record or variant declared earlier in \"types\")");
    return *t;
}

// ---- names ---------------------------------------------------------------------------------

const Loader::Scope* Loader::lookup(const std::string& name) const {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it)
        if (it->name == name) return &*it;
    return nullptr;
}

const Array* Loader::array_named(const std::string& name) const {
    for (auto& a : p_.arrays)
        if (a.name == name) return &a;
    return nullptr;
}

const Fragment* Loader::fragment_named(const std::string& name) const {
    for (auto& f : p_.fragments)
        if (f.name == name) return &f;
    return nullptr;
}

void Loader::bind(const std::string& name, TypeId t, uint32_t slot, bool read_only,
                  const std::string& path) {
    if (name.empty()) fail(path, "empty variable name");
    if (lookup(name) || array_named(name) || fragment_named(name))
        fail(path, "\"" + name + "\" is declared again while an earlier one is visible");
    scopes_.push_back({name, t, slot, read_only});
}

void Loader::declare(const std::string& name, TypeId t, bool read_only, const std::string& path) {
    bind(name, t, p_.num_slots, read_only, path);
    p_.num_slots += uint32_t(types_[t].leaves.size());
}

// ---- declarations --------------------------------------------------------------------------

// A record or variant of `types`: members of types declared before it; the layout the
// document carries must be the one docs/ir.md gives.
void Loader::type_decl(const json& j, const std::string& path) {
    const std::string kind = str(j, path, "kind");
    const bool record = kind == "record";
    if (!record && kind != "variant")
        fail(path + ".kind", "unknown kind \"" + kind + "\" (expected record or variant)");
    const char* key = record ? "fields" : "cases";
    keys(j, path, {"name", "kind", key, "size", "align", record ? "offsets" : "payload_offset"});
    const std::string name = str(j, path, "name");
    if (!identifier(name)) fail(path + ".name", "\"" + name + "\" is not an identifier");
    if (auto t = types_.find(name))
        fail(path + ".name", "the type \"" + name + "\" is " +
                                 (types_[*t].aggregate() ? "declared twice" : "built in"));
    const json& ms = list(j, path, key);
    if (ms.empty())
        fail(path + "." + key,
             std::string(record ? "a record" : "a variant") + " needs at least one member");
    std::vector<TypeInfo::Member> members;
    for (size_t i = 0; i < ms.size(); ++i) {
        const std::string mp = at(path + "." + key, i);
        keys(ms[i], mp, {"name", "type"});
        TypeInfo::Member m{str(ms[i], mp, "name"), kNone, 0, 0};
        if (!identifier(m.name)) fail(mp + ".name", "\"" + m.name + "\" is not an identifier");
        for (auto& other : members)
            if (other.name == m.name) fail(mp + ".name", "\"" + m.name + "\" is declared twice");
        if (record || ms[i].contains("type")) {
            m.type = type(ms[i], mp);
            if (m.type == Types::of(Ty::Bool))
                fail(mp + ".type", "bool cannot live in memory (use u8 for a flag)");
        }
        members.push_back(std::move(m));
    }
    TypeId id;
    const std::string why = types_.declare(
        record ? TypeInfo::Kind::Record : TypeInfo::Kind::Variant, name, std::move(members), id);
    if (!why.empty()) fail(path, why);
    const TypeInfo& d = types_[id];
    auto expect = [&](const json& v, const std::string& vp, uint64_t computed,
                      const std::string& what) {
        if (!v.is_number_unsigned() || v.get<uint64_t>() != computed)
            fail(vp, "layout mismatch: docs/ir.md puts " + what + " of \"" + name + "\" at " +
                         std::to_string(computed) + ", the document says " + v.dump());
    };
    if (j.contains("size")) expect(j["size"], path + ".size", d.size, "the size");
    if (j.contains("align")) expect(j["align"], path + ".align", d.align, "the alignment");
    if (!record && j.contains("payload_offset"))
        expect(j["payload_offset"], path + ".payload_offset", d.payload_offset, "the payload");
    if (record && j.contains("offsets")) {
        const json& offsets = list(j, path, "offsets");
        if (offsets.size() != d.members.size())
            fail(path + ".offsets",
                 "expected one offset per field (" + std::to_string(d.members.size()) + ")");
        for (size_t i = 0; i < offsets.size(); ++i)
            expect(offsets[i], at(path + ".offsets", i), d.members[i].offset,
                   "field \"" + d.members[i].name + "\"");
    }
}

void Loader::params(const json& j) {
    const json& params = list(j, "", "params");
    for (size_t i = 0; i < params.size(); ++i) {
        const std::string path = at("params", i);
        const json& jp = params[i];
        const TypeId t = type(jp, path);
        Param param{str(jp, path, "name"), false, types_.scalar(t), name_of(t), 0};
        const std::string kind = str(jp, path, "kind");
        if (param.name.empty()) fail(path + ".name", "empty parameter name");
        if (array_named(param.name) || lookup(param.name))
            fail(path + ".name", "two parameters named \"" + param.name + "\"");
        if (t == Types::of(Ty::Bool))
            fail(path + ".type", "a parameter may not be bool (OpenCL forbids bool arguments)");
        if (kind == "buffer") {
            keys(jp, path, {"name", "kind", "type", "access"});
            const std::string access = str(jp, path, "access");
            if (access != "read" && access != "write" && access != "readwrite")
                fail(path + ".access",
                     "unknown access \"" + access + "\" (expected read, write or readwrite)");
            param.buffer = true;
            param.ref = static_cast<uint32_t>(p_.arrays.size());
            p_.arrays.push_back(Array{.name = param.name,
                                      .type_name = name_of(t),
                                      .scalar = param.type,
                                      .space = Space::Global,
                                      .writable = access != "read",
                                      .param = static_cast<uint32_t>(i),
                                      .stride = types_[t].size});
            array_types_.push_back(t);
        } else if (kind == "scalar") {
            keys(jp, path, {"name", "kind", "type"});
            if (param.type == Ty::Void)
                fail(path + ".type", "a scalar parameter of type " + name_of(t) +
                                         " (pass vectors and records in a buffer)");
            // Scalar parameters are per-work-item variables that start with the argument.
            declare(param.name, t, false, path + ".name");
            param.ref = scopes_.back().slot;
        } else {
            fail(path + ".kind",
                 "unknown parameter kind \"" + kind + "\" (expected buffer or scalar)");
        }
        p_.params.push_back(param);
    }
}

// Shared arrays (one per group; a shape of 2 or 3 dims with row padding is allowed) and private
// arrays (one per work-item), each starting at its element's alignment, at least 8 bytes.
void Loader::arrays(const json& j, const char* key, Space space) {
    const bool shared = space == Space::Local;
    const json& arrays = list(j, "", key);
    for (size_t i = 0; i < arrays.size(); ++i) {
        const std::string path = at(key, i);
        const json& ja = arrays[i];
        if (v2_)
            keys(ja, path, {"name", "type", "count", "dims", "pad"});
        else
            keys(ja, path, {"name", "type", "count"});
        const std::string name = str(ja, path, "name");
        const TypeId t = type(ja, path);
        const uint32_t n = count(field(ja, path, "count"), path + ".count");
        if (n == 0) fail(path + ".count", "expected a positive integer below 2^32");
        if (t == Types::of(Ty::Bool)) fail(path + ".type", "an array holds numbers, not bool");
        if (name.empty()) fail(path + ".name", "empty array name");
        if (array_named(name) || lookup(name))
            fail(path + ".name", "the name \"" + name + "\" is declared twice");
        if (ja.contains("pad") && !ja.contains("dims"))
            fail(path + ".pad", "row padding without dims");
        if (ja.contains("dims")) {
            if (!shared)
                fail(path + ".dims",
                     "a private array has no shape (only shared arrays carry dims)");
            const json& dims = list(ja, path, "dims");
            if (dims.size() != 2 && dims.size() != 3)
                fail(path + ".dims",
                     "a shape has 2 or 3 extents, not " + std::to_string(dims.size()));
            const uint64_t pad = ja.contains("pad") ? count(ja["pad"], path + ".pad") : 0;
            // rows * ... * (innermost + pad), which may not fit 64 bits from three 32-bit extents.
            unsigned __int128 shape =
                count(dims[dims.size() - 1], at(path + ".dims", dims.size() - 1)) + pad;
            for (size_t d = 0; d + 1 < dims.size(); ++d)
                shape *= count(dims[d], at(path + ".dims", d));
            for (size_t d = 0; d < dims.size(); ++d)
                if (dims[d] == 0) fail(at(path + ".dims", d), "an extent must be positive");
            if (shape != n)
                fail(path + ".count", "the array holds " + std::to_string(n) +
                                          " elements, its shape " + dims.dump() + " with pad " +
                                          std::to_string(pad) + " " +
                                          std::to_string(static_cast<uint64_t>(shape)));
        }
        const TypeInfo& ti = types_[t];
        uint64_t& bytes = shared ? p_.shared_bytes : p_.private_bytes;
        const uint64_t offset = align_up(bytes, std::max<uint64_t>(8, ti.align));
        bytes = offset + uint64_t(n) * ti.size;
        if (!shared && bytes > kPrivateBytes)
            fail(path, "private arrays of " + std::to_string(bytes) +
                           " bytes per work-item, above the interpreter's limit of " +
                           std::to_string(kPrivateBytes) + " (CUDA's local memory per thread)");
        p_.arrays.push_back(Array{.name = name,
                                  .type_name = ti.name,
                                  .scalar = types_.scalar(t),
                                  .space = space,
                                  .writable = true,
                                  .count = n,
                                  .stride = ti.size,
                                  .offset = offset});
        array_types_.push_back(t);
    }
}

// The declared work-group size: launch refuses a shape that breaks it.
void Loader::work_group(const json& j) {
    keys(j, "work_group", {"required", "max"});
    if (j.contains("required")) {
        const json& r = list(j, "work_group", "required");
        if (r.size() != 3) fail("work_group.required", "expected three sizes [x, y, z]");
        for (size_t d = 0; d < 3; ++d) {
            if (!r[d].is_number_unsigned() || r[d].get<uint64_t>() == 0 ||
                r[d].get<uint64_t>() > UINT32_MAX)
                fail(at("work_group.required", d),
                     "expected a positive size, found " + r[d].dump());
            p_.required_local[d] = r[d].get<uint32_t>();
        }
    }
    if (j.contains("max")) {
        const json& m = j["max"];
        if (!m.is_number_unsigned() || m.get<uint64_t>() == 0 || m.get<uint64_t>() > UINT32_MAX)
            fail("work_group.max", "expected a positive size, found " + m.dump());
        p_.max_local = m.get<uint32_t>();
    }
}

void Loader::kernel(const json& j) {
    if (!j.is_object()) fail("", std::string("expected a JSON object, found ") + j.type_name());
    const std::string schema = str(j, "", "schema");
    // The core never hands it /2.1 (it drops loop hints for Custom plugins), but a document
    // written by plexus reads as it is.
    if (schema != "plexus-ir/1" && schema != "plexus-ir/2" && schema != "plexus-ir/2.1")
        fail("schema", "unsupported schema \"" + schema +
                           "\" (the interpreter reads plexus-ir/1, /2 and /2.1)");
    v2_1_ = schema == "plexus-ir/2.1";
    v2_ = v2_1_ || schema == "plexus-ir/2";
    p_.name = str(j, "", "name"); // first, so that every later message names the kernel
    if (p_.name.empty()) fail("name", "empty kernel name");
    if (v2_)
        keys(j, "",
             {"schema", "name", "types", "params", "shared", "private", "work_group", "fragments",
              "body"});
    else
        keys(j, "", {"schema", "name", "params", "shared", "body"});
    if (v2_ && j.contains("types")) {
        const json& types = list(j, "", "types");
        for (size_t i = 0; i < types.size(); ++i)
            type_decl(types[i], at("types", i));
    }
    if (v2_ && j.contains("work_group")) work_group(j["work_group"]);
    params(j);
    arrays(j, "shared", Space::Local);
    // Shared arrays could otherwise add up past 64 bits; launch refuses anything above 64 KiB.
    p_.shared_bytes = std::min<uint64_t>(p_.shared_bytes, uint64_t(1) << 62);
    if (v2_ && j.contains("private")) arrays(j, "private", Space::Private);
    if (v2_ && j.contains("fragments")) fragments(j);
    const json& body = field(j, "", "body");
    if (!body.is_object() || !body.contains("stmt") || body["stmt"] != "Block")
        fail("body", "the kernel body must be a Block");
    p_.root = stmt(body, "body", "body");
    finish();
}

// Gives a register to every node that a statement reaches (scalarization leaves the unused
// leaves of a loaded record unreached: they cost nothing at run time), and marks the nodes
// reached from several parents, which exec evaluates once per statement.
void Loader::finish() {
    std::vector<uint32_t> uses(p_.exprs.size(), 0), stack;
    auto use = [&](uint32_t e) {
        if (e != kNone && uses[e]++ == 0) stack.push_back(e);
    };
    for (const StmtNode& s : p_.stmts) {
        use(s.e0), use(s.e1), use(s.e2);
        for (uint32_t i = 0; i < s.leaf_count; ++i)
            use(s.kind == StmtKind::Store ? p_.stores[s.leaf_first + i].value
                                          : p_.values[s.leaf_first + i]);
    }
    while (!stack.empty()) {
        const ExprNode& e = p_.exprs[stack.back()];
        stack.pop_back();
        use(e.a), use(e.b), use(e.c), use(e.guard);
    }
    for (size_t i = 0; i < p_.exprs.size(); ++i) {
        ExprNode& e = p_.exprs[i];
        if (!uses[i] || e.kind == ExprKind::Var) continue;
        e.memo = uses[i] > 1 && e.kind != ExprKind::Const;
        e.reg = p_.num_regs++;
    }
    for (StmtNode& s : p_.stmts)
        if (s.kind == StmtKind::For) s.r0 = p_.num_regs++, s.r1 = p_.num_regs++;
}

} // namespace plx_interp
