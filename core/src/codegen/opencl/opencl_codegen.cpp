// The OpenCL C 1.2 generator: the shared C-like emitter with OpenCL's types, address spaces,
// extension pragmas and a float atomic add helper (1.2 has none).
//
// Signed +, -, * and << are computed in the unsigned type and converted back (see clike.cpp):
// OpenCL C leaves signed overflow undefined, compilers exploit that, and the IR wraps.
#include "../clike/clike.hpp"

#include "plexus/error.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <set>

namespace plexus::codegen {
namespace {

using ir::Scalar;

class OpenClDialect final : public clike::Dialect {
public:
    const char* language_name() const override { return "OpenCL C 1.2"; }

    std::string type_name(const ir::Type& type) const override {
        if (!type.is_scalar() && !type.is_void())
            throw Error(ErrorCode::Unsupported, "OpenCL C generation of " + type.name() + " is not built yet");
        switch (type.scalar()) {
        case Scalar::Bool: return "bool";
        case Scalar::I32: return "int";
        case Scalar::U32: return "uint";
        case Scalar::I64: return "long";
        case Scalar::U64: return "ulong";
        case Scalar::F32: return "float";
        case Scalar::F64: return "double";
        case Scalar::Void: break;
        default:
            throw Error(ErrorCode::Unsupported, std::string(language_name()) + " generation of " + type.name() + " is not built yet");
        }
        return "void";
    }
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
    const std::string& standard_spelling(const IntrinsicInfo& info) const override {
        return info.opencl_c;
    }
    // get_local_id() and friends return size_t: cast to the catalog's type so that, say,
    // lid - 1u wraps at 32 bits as the IR says.
    bool cast_integer_calls() const override { return true; }
    std::string min_max_function(bool is_min, const ir::Type& t) const override {
        if (ir::is_float(t)) return is_min ? "fmin" : "fmax";
        return is_min ? "min" : "max"; // overloaded on the signedness of the operands
    }
    void atomic_operands(const ir::Atomic&, clike::AtomicCode&) const override {}

    std::string prologue(const ir::Kernel&, const clike::Usage& usage) const override {
        std::string out;
        if (usage.uses.fp64) out += "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n";
        bool base = false, extended = false;
        for (auto& name : usage.uses.intrinsics) {
            if (name.rfind("atomic_", 0) != 0) continue;
            if (name.find("_i64_") == std::string::npos && name.find("_u64_") == std::string::npos)
                continue;
            base = true;
            for (const char* op :
                 {"atomic_min_", "atomic_max_", "atomic_and_", "atomic_or_", "atomic_xor_"})
                extended |= name.rfind(op, 0) == 0;
        }
        if (base) out += "#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable\n";
        if (extended) out += "#pragma OPENCL EXTENSION cl_khr_int64_extended_atomics : enable\n";

        std::set<std::string> spelled(usage.standard_spelled.begin(), usage.standard_spelled.end());
        bool global = spelled.count("atomic_add_f32_global") > 0;
        bool local = spelled.count("atomic_add_f32_local") > 0;
        if (global || local) {
            if (!out.empty()) out += '\n';
            out += "// OpenCL C 1.2 has no float atomic add: compare-exchange the bits until no\n"
                   "// other work-item wrote between the read and the exchange.\n";
            // One name for both address spaces needs overloading, which OpenCL C 1.2 has only
            // as Clang's attribute; a kernel that uses one space gets a plain function.
            const char* attr = global && local ? "__attribute__((overloadable)) " : "";
            if (global) out += atomic_add_helper(attr, "__global");
            if (global && local) out += '\n';
            if (local) out += atomic_add_helper(attr, "__local");
        }
        return out;
    }

    std::string entry_prefix() const override { return "__kernel void"; }
    std::string param_decl(const ir::Param& p, const std::string& name) const override {
        if (p.kind == ir::Param::Kind::Scalar) return type_name(p.type) + " " + name;
        // No restrict: the same buffer may be passed for two parameters.
        return std::string("__global ") + (p.access == ir::Access::Read ? "const " : "") +
               type_name(p.type) + "* " + name;
    }
    std::string shared_decl(const ir::SharedArray& s, const std::string& name) const override {
        return "__local " + type_name(s.type) + " " + name + "[" + std::to_string(s.count) + "];";
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
            "NAN", "INFINITY", "MAXFLOAT", "HUGE_VAL", "HUGE_VALF"};
        if (words.count(w)) return true;
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
    static std::string atomic_add_helper(const char* attr, const char* space) {
        std::string s = space;
        return std::string(attr) + "float plx_atomic_add_f32(volatile " + s +
               " float* p, float v) {\n" +
               "    uint seen, old = as_uint(*p);\n"
               "    do {\n"
               "        seen = old;\n"
               "        old = atomic_cmpxchg((volatile " +
               s +
               " uint*)p, seen, as_uint(as_float(seen) + v));\n"
               "    } while (old != seen);\n"
               "    return as_float(old);\n"
               "}\n";
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
