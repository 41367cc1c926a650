// The CUDA C generator (for nvcc or NVRTC): the shared C-like emitter with CUDA's types,
// qualifiers and the pointer casts its 64-bit atomics need. The output includes no header.
//
// Signed +, -, * and << are computed in the unsigned type and converted back (see clike.cpp):
// C++ leaves signed overflow undefined, compilers exploit that, and the IR wraps.
#include "../clike/clike.hpp"

#include "plexus/error.hpp"

#include <cstdio>
#include <set>

namespace plexus::codegen {
namespace {

using ir::Scalar;

class CudaDialect final : public clike::Dialect {
public:
    const char* language_name() const override { return "CUDA C"; }

    std::string type_name(const ir::Type& type) const override {
        if (!type.is_scalar() && !type.is_void())
            throw Error(ErrorCode::Unsupported, "CUDA C generation of " + type.name() + " is not built yet");
        switch (type.scalar()) {
        case Scalar::Bool: return "bool";
        case Scalar::I32: return "int";
        case Scalar::U32: return "unsigned";
        case Scalar::I64: return "long long";
        case Scalar::U64: return "unsigned long long";
        case Scalar::F32: return "float";
        case Scalar::F64: return "double";
        case Scalar::Void: break;
        default:
            throw Error(ErrorCode::Unsupported, std::string(language_name()) + " generation of " + type.name() + " is not built yet");
        }
        return "void";
    }
    const char* int_suffix(Scalar t) const override {
        return t == Scalar::U32 ? "u" : t == Scalar::I64 ? "LL" : t == Scalar::U64 ? "ULL" : "";
    }
    std::string float_from_bits(Scalar t, uint64_t bits) const override {
        char buf[64];
        if (t == Scalar::F32)
            std::snprintf(buf, sizeof buf, "__uint_as_float(0x%08xu)", unsigned(bits));
        else
            std::snprintf(buf, sizeof buf, "__longlong_as_double((long long)0x%016llxULL)",
                          (unsigned long long)bits);
        return buf;
    }
    const std::string& standard_spelling(const IntrinsicInfo& info) const override {
        return info.cuda_c;
    }
    bool cast_integer_calls() const override { return false; } // spellings have exact types
    std::string min_max_function(bool is_min, const ir::Type& t) const override {
        if (t == Scalar::F32) return is_min ? "fminf" : "fmaxf";
        if (t == Scalar::F64) return is_min ? "fmin" : "fmax";
        // CUDA overloads min / max for int, unsigned, long long and unsigned long long.
        return is_min ? "min" : "max";
    }
    // CUDA has atomicAdd, atomicExch, atomicCAS, atomicAnd/Or/Xor only on unsigned long long
    // for 64 bits; atomicMin / atomicMax exist on long long (sm_35+), where the sign matters.
    void atomic_operands(const ir::Atomic& a, clike::AtomicCode& code) const override {
        if (a.type != Scalar::I64 || a.op == ir::AtomicOp::Min || a.op == ir::AtomicOp::Max) return;
        code.args[0] = "(unsigned long long*)" + code.args[0];
        for (size_t i = 1; i < code.args.size(); ++i)
            code.args[i] = "((unsigned long long)" + clike::operand(code.args[i]) + ")";
        code.result_cast = "(long long)";
    }

    std::string prologue(const ir::Kernel&, const clike::Usage&) const override { return ""; }

    std::string entry_prefix() const override { return "extern \"C\" __global__ void"; }
    std::string param_decl(const ir::Param& p, const std::string& name) const override {
        if (p.kind == ir::Param::Kind::Scalar) return type_name(p.type) + " " + name;
        // No __restrict__: the same buffer may be passed for two parameters.
        return (p.access == ir::Access::Read ? "const " : "") + type_name(p.type) + "* " + name;
    }
    std::string shared_decl(const ir::SharedArray& s, const std::string& name) const override {
        return "__shared__ " + type_name(s.type) + " " + name + "[" + std::to_string(s.count) +
               "];";
    }

    bool is_reserved(const std::string& w) const override {
        static const std::set<std::string> words = {
            // C++ keywords (the alternative tokens `and`, `or`, `not` ... included)
            "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool",
            "break", "case", "catch", "char", "char8_t", "char16_t", "char32_t", "class", "compl",
            "concept", "const", "consteval", "constexpr", "constinit", "const_cast", "continue",
            "co_await", "co_return", "co_yield", "decltype", "default", "delete", "do", "double",
            "dynamic_cast", "else", "enum", "explicit", "export", "extern", "false", "float", "for",
            "friend", "goto", "if", "inline", "int", "long", "mutable", "namespace", "new",
            "noexcept", "not", "not_eq", "nullptr", "operator", "or", "or_eq", "private",
            "protected", "public", "register", "reinterpret_cast", "requires", "return", "short",
            "signed", "sizeof", "static", "static_assert", "static_cast", "struct", "switch",
            "template", "this", "thread_local", "throw", "true", "try", "typedef", "typeid",
            "typename", "union", "unsigned", "using", "virtual", "void", "volatile", "wchar_t",
            "while", "xor", "xor_eq", "restrict",
            // CUDA built-in variables and types, and what the generator itself writes
            "threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize", "dim3", "uint", "ushort",
            "ulong", "uchar", "size_t", "min", "max", "fminf", "fmaxf", "fmin", "fmax", "NAN",
            "INFINITY"};
        if (words.count(w)) return true;
        // Vector types: int2, float4, ulonglong3 ...
        for (const char* base : {"char", "uchar", "short", "ushort", "int", "uint", "long", "ulong",
                                 "longlong", "ulonglong", "float", "double"})
            for (const char* n : {"1", "2", "3", "4"})
                if (w == std::string(base) + n) return true;
        return false;
    }
};

class CudaCGenerator final : public SourceGenerator {
public:
    plx_language language() const override { return PLX_LANG_CUDA_C; }
    std::string generate(const ir::Kernel& kernel, const Options& options) const override {
        return clike::emit_kernel(kernel, options, dialect_);
    }

private:
    CudaDialect dialect_;
};

} // namespace

std::unique_ptr<SourceGenerator> make_cuda_c_codegen() {
    return std::make_unique<CudaCGenerator>();
}

} // namespace plexus::codegen
