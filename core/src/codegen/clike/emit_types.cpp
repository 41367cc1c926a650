// Types in the C-like languages: the register and memory forms of every IR type (f16 and
// bf16 are floats in registers and 16-bit patterns in memory), the conversions between the
// two, and the struct declarations of records and variants with exactly the IR's layout.
#include "emitter.hpp"

namespace plexus::codegen::clike {
namespace {

ir::Type with_scalar(const ir::Type& t, ir::Scalar s) {
    return t.is_vector() ? ir::Type::vector(s, t.lanes()) : ir::Type(s);
}

} // namespace

bool Emitter::split(const ir::Type& t) {
    return !t.is_aggregate() && ir::is_half(t.scalar());
}

std::string Emitter::value_type(const ir::Type& t) {
    if (t.is_aggregate()) return decl_names(*t.decl()).type;
    const ir::Scalar s = ir::is_half(t.scalar()) ? ir::Scalar::F32 : t.scalar();
    return t.is_vector() ? d_.vector_name(s, t.lanes(), prelude_) : d_.scalar_name(s);
}

std::string Emitter::storage_type(const ir::Type& t) {
    if (!split(t)) return value_type(t);
    return t.is_vector() ? d_.vector_name(ir::Scalar::U16, t.lanes(), prelude_)
                         : d_.scalar_name(ir::Scalar::U16);
}

std::string Emitter::to_value(const ir::Type& t, const std::string& stored) {
    if (!split(t)) return stored;
    return cat(half_function(d_, prelude_, HalfFn::From, t.scalar(), t.lanes()), "(",
               full_expression(stored), ")");
}

std::string Emitter::to_storage(const ir::Type& t, const std::string& value) {
    if (!split(t)) return value;
    // The bits of a value rounded to the type are the bits of the value before that rounding:
    // plx_to_f16(plx_round_f16(x)) is plx_to_f16(x).
    std::string inner = value;
    const std::string round = cat(half_function_name(HalfFn::Round, t.scalar(), t.lanes()), "(");
    if (inner.compare(0, round.size(), round) == 0 && is_primary(inner) && inner.back() == ')')
        inner = inner.substr(round.size(), inner.size() - round.size() - 1);
    return cat(half_function(d_, prelude_, HalfFn::To, t.scalar(), t.lanes()), "(",
               full_expression(inner), ")");
}

std::string Emitter::round_half(const ir::Type& t, const std::string& value) {
    return cat(half_function(d_, prelude_, HalfFn::Round, t.scalar(), t.lanes()), "(",
               full_expression(value), ")");
}

// Numbers convert in register form; a result of f16 or bf16 is then rounded to the type
// (from f64 or an integer that is the second rounding, after the one to f32, as docs/ir.md
// says).
std::string Emitter::convert(const ir::Type& from, const ir::Type& to, const std::string& code) {
    auto registers = [](const ir::Type& t) {
        return ir::is_half(t.scalar()) ? with_scalar(t, ir::Scalar::F32) : t;
    };
    const ir::Type rf = registers(from), rt = registers(to);
    std::string out = code;
    if (!(rf == rt)) {
        const std::string type = value_type(rt);
        out = d_.convert(rf, rt, code, prelude_);
        if (out.empty()) out = cat("(", type, ")", prefix_operand(code));
    }
    if (ir::is_half(to.scalar()) && to.scalar() != from.scalar()) out = round_half(to, out);
    return out;
}

// A record, variant or member whose name the language reserves, or a type named like one of
// the kernel's variables, is renamed; member names are renamed also when they start with
// "__" (the implementation's) or "plx_" (so a renamed member meets no user's).
const DeclNames& Emitter::decl_names(const ir::TypeDecl& d) {
    auto it = decls_.find(d.name);
    if (it != decls_.end()) return it->second;
    DeclNames names;
    bool clash = d_.is_reserved(d.name) || builtins_.count(d.name) || value_names_.count(d.name);
    names.type = clash ? "plx_t_" + d.name : d.name;
    for (auto& m : d.members) {
        bool rename = d_.is_reserved(m.name) || builtins_.count(m.name) ||
                      m.name.rfind("__", 0) == 0 || m.name.rfind("plx_", 0) == 0;
        names.members.push_back(rename ? "plx_u_" + m.name : m.name);
        names.member_types.push_back(m.type.is_void() ? "" : storage_type(m.type));
    }
    return decls_.emplace(d.name, std::move(names)).first->second;
}

// Every record and variant of the kernel, each after the ones it contains (k.types' order):
// C structs whose fields in declaration order give the IR's layout, since C and the IR align
// each field alike; a variant is { uint tag; union { payloads } u; }.
std::string Emitter::declarations() {
    std::string out;
    for (auto& decl : k_.types) {
        const ir::TypeDecl& d = *decl;
        const DeclNames& names = decl_names(d);
        const bool record = d.kind == ir::TypeDecl::Kind::Record;
        out += cat("// ", record ? "record" : "variant", " ", d.name, ": ", std::to_string(d.size),
                   " bytes, aligned to ", std::to_string(d.align),
                   record ? "" : cat(", payload at ", std::to_string(d.payload_offset)), "\n");
        out += cat("typedef struct ", names.type, " {\n");
        // A member held as 16-bit patterns says which format they are.
        auto member = [&](size_t i, const char* indent) {
            const ir::Type& t = d.members[i].type;
            return cat(indent, names.member_types[i], " ", names.members[i], ";",
                       split(t) ? cat(" // ", t.name()) : "", "\n");
        };
        if (record) {
            for (size_t i = 0; i < d.members.size(); ++i)
                out += member(i, "    ");
        } else {
            out += cat("    ", d_.scalar_name(ir::Scalar::U32), " tag;\n");
            std::string payloads;
            for (size_t i = 0; i < d.members.size(); ++i)
                if (!d.members[i].type.is_void()) payloads += member(i, "        ");
            // C has no empty union: a variant without payloads is its tag alone.
            if (!payloads.empty()) out += cat("    union {\n", payloads, "    } u;\n");
            out += d_.variant_functions(d, names);
        }
        out += cat("} ", names.type, ";\n", d_.layout_checks(d, names));
    }
    return out;
}

} // namespace plexus::codegen::clike
