// The OpenCL C 1.2 generator: the shared C-like emitter with OpenCL's types (its own vectors,
// f16 / bf16 as ushort in memory), address spaces, extension pragmas, the float atomic helpers
// 1.2 lacks (opencl_atomics.cpp) and subgroups through cl_khr_subgroups and its extensions.
//
// Signed +, -, * and << are computed in the unsigned type and converted back (see
// clike/emit_expr.cpp): OpenCL C leaves signed overflow undefined, compilers exploit that, and the
// IR wraps.
#include "opencl_atomics.hpp"

#include "plexus/error.hpp"
#include "plexus/plugin.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <iterator>
#include <set>

namespace plexus::codegen {
namespace {

using ir::Scalar;

// OpenCL C's name of each scalar ("uchar", "ulong"), by ir::Scalar.
constexpr const char* cl_names[] = {"void", "bool", "char",  "uchar", "short", "ushort", "int",
                                    "uint", "long", "ulong", nullptr, nullptr, "float",  "double"};
static_assert(std::size(cl_names) == size_t(Scalar::F64) + 1);

std::string cl_name(Scalar t) {
    if (const char* name = cl_names[size_t(t)]) return name;
    throw Error(ErrorCode::Internal,
                std::string("OpenCL C has no name for ") + ir::to_string(t) +
                    " here: the emitter maps it to float or ushort (a bug in plexus)");
}

bool signed_integer(const ir::Type& t) {
    return ir::elem_integer(t) && ir::is_signed(t.scalar());
}

// The extensions a kernel's subgroup operations need, and the helpers of shuffle_up / _down
// (a lane with no lane `delta` below or above keeps its own value, which OpenCL leaves
// undefined) and of ballot (cl_khr_subgroup_ballot's uint4 as the IR's u64).
std::string subgroup_prologue(const std::set<std::string>& spelled) {
    std::string pragmas, helpers;
    std::set<uint32_t> features;
    for (const std::string& name : spelled) {
        const uint32_t f = subgroup_feature(name);
        if (!f) continue;
        features.insert(f);
        const size_t cut = name.rfind('_');
        const auto t = ir::scalar_from_string(name.substr(cut + 1));
        const bool up = name.rfind("subgroup_shuffle_up_", 0) == 0;
        if (!up && name.rfind("subgroup_shuffle_down_", 0) != 0) continue;
        const std::string c = cl_name(*t), fn = name.substr(9); // "shuffle_up_f32"
        helpers += c + " plx_" + fn + "(" + c + " v, uint d) {\n    const " + c +
                   " r = sub_group_" + (up ? "shuffle_up" : "shuffle_down") +
                   "(v, d);\n    return " +
                   (up ? "get_sub_group_local_id() < d"
                       : "d >= get_sub_group_size() - get_sub_group_local_id()") +
                   " ? v : r;\n}\n";
    }
    if (spelled.count("subgroup_ballot"))
        helpers += "ulong plx_ballot(int p) {\n    const uint4 b = sub_group_ballot(p);\n"
                   "    return ((ulong)b.y << 32) | b.x;\n}\n";
    static const std::pair<uint32_t, const char*> extensions[] = {
        {PLX_SUBGROUP_BASIC, "cl_khr_subgroups"},
        {PLX_SUBGROUP_SHUFFLE, "cl_khr_subgroup_shuffle"},
        {PLX_SUBGROUP_SHUFFLE_RELATIVE, "cl_khr_subgroup_shuffle_relative"},
        {PLX_SUBGROUP_BALLOT, "cl_khr_subgroup_ballot"}};
    if (!features.empty()) features.insert(PLX_SUBGROUP_BASIC);
    for (auto& [f, ext] : extensions)
        if (features.count(f))
            pragmas += std::string("#pragma OPENCL EXTENSION ") + ext + " : enable\n";
    return pragmas + helpers;
}

class OpenClDialect final : public clike::Dialect {
public:
    const char* language_name() const override { return "OpenCL C 1.2"; }

    // ---- types: OpenCL C has every vector type the IR has, with the IR's layout (a float3
    // takes 16 bytes); records and variants need nothing beyond their structs.
    std::string scalar_name(Scalar t) const override { return cl_name(t); }
    std::string vector_name(Scalar t, uint32_t lanes, clike::Prelude&) const override {
        return cl_name(t) + std::to_string(lanes);
    }
    std::string variant_functions(const ir::TypeDecl&, const clike::DeclNames&) const override {
        return "";
    }
    std::string layout_checks(const ir::TypeDecl&, const clike::DeclNames&) const override {
        return "";
    }

    // ---- literals
    const char* int_suffix(Scalar t) const override {
        return t == Scalar::U32 ? "u" : t == Scalar::I64 ? "L" : t == Scalar::U64 ? "UL" : "";
    }
    std::string float_from_bits(Scalar t, uint64_t bits) const override {
        char buf[48];
        if (t == Scalar::F32)
            std::snprintf(buf, sizeof buf, "as_float(0x%08xu)", unsigned(bits));
        else
            std::snprintf(buf, sizeof buf, "as_double(0x%016llxUL)", (unsigned long long)bits);
        return buf;
    }
    std::string vector_literal(const std::string& type,
                               const std::vector<std::string>& lanes) const override {
        return clike::cat("(", type, ")(", clike::join_args(lanes), ")");
    }
    std::string broadcast(const std::string& type, uint32_t, const std::string& value,
                          clike::Prelude&) const override {
        return clike::cat("(", type, ")(", clike::full_expression(value), ")");
    }
    // C99 compound literals; a variant's payload by the designated union member.
    std::string record_literal(const std::string& type,
                               const std::vector<std::string>& fields) const override {
        return clike::cat("(", type, "){", clike::join_args(fields), "}");
    }
    std::string variant_literal(const ir::TypeDecl&, const clike::DeclNames& names, uint32_t index,
                                const std::string& payload) const override {
        std::string tag = std::to_string(index) + "u";
        if (payload.empty()) return clike::cat("(", names.type, "){", tag, "}");
        return clike::cat("(", names.type, "){", tag, ", {.", names.members[index], " = ",
                          clike::full_expression(payload), "}}");
    }

    // ---- vectors: .xyzw names lanes of vectors of up to 4, .s0 ... .s7 those of 8
    std::string lane(const std::string& vec, uint32_t lane, uint32_t lanes) const override {
        const std::string name =
            lanes <= 4 ? std::string(1, "xyzw"[lane]) : clike::cat("s", std::to_string(lane));
        return clike::cat(clike::postfix_operand(vec), ".", name);
    }
    std::string swizzle(const std::string& vec, const std::vector<uint8_t>& lanes,
                        uint32_t from_lanes, clike::Prelude&) const override {
        std::string names = from_lanes <= 4 ? "" : "s";
        for (uint8_t l : lanes)
            names += from_lanes <= 4 ? "xyzw"[l] : char('0' + l);
        return clike::cat(clike::postfix_operand(vec), ".", names);
    }
    // OpenCL C takes a shift amount modulo the lane width itself. Signed +, -, *, << wrap
    // through the unsigned vector of the same width (as_uint4: the same bits).
    std::string vector_binary(ir::BinaryOp op, const ir::Type& t, const std::string& a,
                              const std::string& b) const override {
        using ir::BinaryOp;
        bool wrap = signed_integer(t) && (op == BinaryOp::Add || op == BinaryOp::Sub ||
                                          op == BinaryOp::Mul || op == BinaryOp::Shl);
        if (!wrap)
            return clike::cat("(", clike::operand(a), " ", ir::c_symbol(op), " ", clike::operand(b),
                              ")");
        return clike::cat(reinterpret(t, false), "(", reinterpret(t, true), "(",
                          clike::full_expression(a), ") ", ir::c_symbol(op), " ",
                          reinterpret(t, true), "(", clike::full_expression(b), "))");
    }
    std::string vector_unary(ir::UnaryOp op, const ir::Type& t,
                             const std::string& a) const override {
        if (op == ir::UnaryOp::Neg && signed_integer(t))
            return clike::cat(reinterpret(t, false), "(-", reinterpret(t, true), "(",
                              clike::full_expression(a), "))");
        return clike::cat(op == ir::UnaryOp::Neg ? "(-" : "(~", clike::operand(a), ")");
    }

    // ---- conversions: the convert_ builtins, saturating from float to integer (there the
    // plain ones are implementation-defined out of range); between integers they keep the
    // low bits, into float they round to nearest even.
    std::string convert(const ir::Type& from, const ir::Type& to, const std::string& code,
                        clike::Prelude&) const override {
        const bool saturate = ir::elem_float(from) && ir::elem_integer(to);
        if (!to.is_vector() && !saturate) return ""; // a C cast
        std::string lanes = to.is_vector() ? std::to_string(to.lanes()) : "";
        return clike::cat("convert_", cl_name(to.scalar()), lanes, saturate ? "_sat(" : "(",
                          clike::full_expression(code), ")");
    }
    std::string float_product(Scalar, const std::string& a, const std::string& b) const override {
        return clike::cat("(", a, " * ", b, ")"); // FP_CONTRACT OFF in the prologue
    }
    const char* float_bits_function() const override { return "as_uint"; }
    const char* bits_float_function() const override { return "as_float"; }
    const char* helper_prefix() const override { return ""; }

    const std::string& standard_spelling(const IntrinsicInfo& info) const override {
        return info.opencl_c;
    }
    // get_local_id() and friends return size_t: cast to the catalog's type so that, say,
    // lid - 1u wraps at 32 bits as the IR says.
    bool cast_integer_calls() const override { return true; }
    std::string min_max_function(bool is_min, const ir::Type& t) const override {
        if (ir::elem_float(t)) return is_min ? "fmin" : "fmax";
        return is_min ? "min" : "max"; // overloaded on the signedness of the operands
    }
    void atomic_operands(const ir::Atomic&, clike::AtomicCode&) const override {}
    std::string discarded_atomic(const std::string& intrinsic) const override {
        return opencl::discarded_atomic(intrinsic);
    }

    std::string prologue(const ir::Kernel&, const clike::Usage& usage) const override {
        std::string out;
        // OpenCL C lets a compiler fuse a * b + c into an fma (FP_CONTRACT is on by default);
        // the IR rounds the product and the sum each on its own.
        if (usage.float_multiply) out += "#pragma OPENCL FP_CONTRACT OFF\n";
        if (usage.uses.fp64) out += "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n";
        out += opencl::atomic_pragmas(usage);
        out += subgroup_prologue({usage.standard_spelled.begin(), usage.standard_spelled.end()});
        if (std::string helpers = opencl::atomic_helpers(*this, usage); !helpers.empty())
            out += (out.empty() ? "" : "\n") + helpers;
        return out;
    }

    // OpenCL C states only an exact shape; a most-items bound has no attribute (the hint
    // attribute promises nothing), so the runtime alone enforces it.
    std::string entry_prefix(const ir::WorkGroupBound& bound) const override {
        if (!bound.required[0]) return "__kernel void";
        const auto& r = bound.required;
        return "__kernel __attribute__((reqd_work_group_size(" + std::to_string(r[0]) + ", " +
               std::to_string(r[1]) + ", " + std::to_string(r[2]) + "))) void";
    }
    std::string param_decl(const ir::Param& p, const std::string& type,
                           const std::string& name) const override {
        if (p.kind == ir::Param::Kind::Scalar) return type + " " + name;
        // No restrict: the same buffer may be passed for two parameters.
        return std::string("__global ") + (p.access == ir::Access::Read ? "const " : "") + type +
               "* " + name;
    }
    std::string array_decl(ir::Space space, const std::string& type, const std::string& name,
                           uint32_t count, uint32_t align) const override {
        return clike::cat(space == ir::Space::Local ? "__local " : "__private ", type, " ", name,
                          "[", std::to_string(count), "]",
                          align ? " __attribute__((aligned(" + std::to_string(align) + ")))" : "",
                          ";");
    }

    bool is_reserved(const std::string& w) const override {
        static const std::set<std::string> words = {
            // C99 and OpenCL C keywords, qualifiers and types
            "auto", "break", "case", "char", "const", "continue", "default", "do", "else", "enum",
            "extern", "for", "goto", "if", "inline", "int", "long", "register", "restrict",
            "return", "short", "signed", "sizeof", "static", "struct", "switch", "typedef", "union",
            "unsigned", "void", "volatile", "while", "_Bool", "_Complex", "_Imaginary", "bool",
            "true", "false", "uchar", "ushort", "uint", "ulong", "half", "float", "double",
            "size_t", "ptrdiff_t", "intptr_t", "uintptr_t", "complex", "imaginary", "global",
            "local", "constant", "private", "kernel", "read_only", "write_only", "read_write",
            "image1d_t", "image1d_array_t", "image1d_buffer_t", "image2d_t", "image2d_array_t",
            "image3d_t", "sampler_t", "event_t", "quad", "vec_step",
            // builtins and macros the generator itself writes
            "min", "max", "fmin", "fmax", "as_float", "as_double", "as_uint", "atomic_cmpxchg",
            "atom_cmpxchg", "atomic_fetch_add_explicit", "atomic_fetch_min_explicit",
            "atomic_fetch_max_explicit", "memory_order_relaxed", "memory_scope_device",
            "memory_scope_work_group", "NAN", "INFINITY", "MAXFLOAT", "HUGE_VAL", "HUGE_VALF",
            "NULL"};
        if (words.count(w)) return true;
        // Conversion and reinterpretation builtins (convert_char4_sat, as_uint4)
        if (w.rfind("convert_", 0) == 0 || w.rfind("as_", 0) == 0) return true;
        // Vector types (float4, uint16 ...) and macros (M_PI, FLT_MAX, CLK_..., INT_MAX)
        for (const char* base : {"char", "uchar", "short", "ushort", "int", "uint", "long", "ulong",
                                 "float", "double", "half", "bool"})
            for (const char* n : {"2", "3", "4", "8", "16"})
                if (w == std::string(base) + n) return true;
        for (const char* prefix : {"M_", "FLT_", "DBL_", "CL_", "CLK_"})
            if (w.rfind(prefix, 0) == 0) return true;
        auto ends = [&](const char* s) {
            std::string e(s);
            return w.size() > e.size() && w.compare(w.size() - e.size(), e.size(), e) == 0;
        };
        bool upper = std::none_of(
            w.begin(), w.end(), [](char c) { return std::islower(static_cast<unsigned char>(c)); });
        return upper && (ends("_MAX") || ends("_MIN") || ends("_BIT"));
    }

private:
    // "as_int4" (to_unsigned: "as_uint4"): the same bits as another vector type.
    static std::string reinterpret(const ir::Type& t, bool to_unsigned) {
        Scalar s = t.scalar();
        if (to_unsigned)
            s = s == Scalar::I8    ? Scalar::U8
                : s == Scalar::I16 ? Scalar::U16
                : s == Scalar::I32 ? Scalar::U32
                                   : Scalar::U64;
        return clike::cat("as_", cl_name(s), std::to_string(t.lanes()));
    }
};

class OpenClGenerator final : public SourceGenerator {
public:
    plx_language language() const override { return PLX_LANG_OPENCL_C; }
    std::string generate(const ir::Kernel& kernel, const Options& options) const override {
        return clike::emit_kernel(kernel, options, dialect_);
    }

private:
    OpenClDialect dialect_;
};

} // namespace

std::unique_ptr<SourceGenerator> make_opencl_codegen() {
    return std::make_unique<OpenClGenerator>();
}

} // namespace plexus::codegen
