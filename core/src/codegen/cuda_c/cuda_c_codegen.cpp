// The CUDA C generator (for nvcc or NVRTC): the shared C-like emitter with CUDA's types (its
// own vectors, f16 / bf16 as unsigned short in memory), qualifiers, the pointer casts its
// 64-bit atomics need and the float atomic min / max it lacks. The output includes no header.
//
// Signed +, -, * and << are computed in the unsigned type and converted back (see
// clike/emit_expr.cpp): C++ leaves signed overflow undefined, compilers exploit that, and the IR
// wraps.
#include "cuda_c_types.hpp"

#include "plexus/error.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

namespace plexus::codegen {
namespace {

using ir::Scalar;

// Subgroups are warps: 32 threads in linear thread order, of which a group's last warp may have
// fewer. Each warp intrinsic names the lanes that exist; a shuffle from a lane outside the
// subgroup is never used. Integers add in unsigned arithmetic, which wraps as the IR says.
const char* const subgroup_helpers =
    R"(// subgroups: warps of 32 threads in linear thread order, the group's last one maybe partial
__device__ __forceinline__ unsigned plx_linear_id() {
    return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}
__device__ __forceinline__ unsigned plx_subgroup_size() {
    const unsigned left = blockDim.x * blockDim.y * blockDim.z - (plx_linear_id() & ~31u);
    return left < 32u ? left : 32u;
}
__device__ __forceinline__ unsigned plx_subgroup_id() { return plx_linear_id() / 32u; }
__device__ __forceinline__ unsigned plx_lane_id() { return plx_linear_id() & 31u; }
__device__ __forceinline__ unsigned plx_member_mask() { return 0xffffffffu >> (32u - plx_subgroup_size()); }
__device__ __forceinline__ unsigned long long plx_ballot(bool p) { return __ballot_sync(plx_member_mask(), p); }
__device__ __forceinline__ bool plx_any(bool p) { return __any_sync(plx_member_mask(), p) != 0; }
__device__ __forceinline__ bool plx_all(bool p) { return __all_sync(plx_member_mask(), p) != 0; }
template <class T> __device__ __forceinline__ T plx_shuffle(T v, unsigned lane) {
    return __shfl_sync(plx_member_mask(), v, int(lane));
}
template <class T> __device__ __forceinline__ T plx_shuffle_xor(T v, unsigned mask) {
    return __shfl_xor_sync(plx_member_mask(), v, int(mask));
}
template <class T> __device__ __forceinline__ T plx_shuffle_up(T v, unsigned d) {
    const T r = __shfl_up_sync(plx_member_mask(), v, d);
    return plx_lane_id() < d ? v : r;
}
template <class T> __device__ __forceinline__ T plx_shuffle_down(T v, unsigned d) {
    const T r = __shfl_down_sync(plx_member_mask(), v, d);
    return d >= plx_subgroup_size() - plx_lane_id() ? v : r;
}
__device__ __forceinline__ int plx_sg_add(int a, int b) { return int(unsigned(a) + unsigned(b)); }
__device__ __forceinline__ long long plx_sg_add(long long a, long long b) {
    return (long long)((unsigned long long)a + (unsigned long long)b);
}
template <class T> __device__ __forceinline__ T plx_sg_add(T a, T b) { return a + b; }
__device__ __forceinline__ float plx_sg_min(float a, float b) { return fminf(a, b); }
__device__ __forceinline__ double plx_sg_min(double a, double b) { return fmin(a, b); }
template <class T> __device__ __forceinline__ T plx_sg_min(T a, T b) { return b < a ? b : a; }
__device__ __forceinline__ float plx_sg_max(float a, float b) { return fmaxf(a, b); }
__device__ __forceinline__ double plx_sg_max(double a, double b) { return fmax(a, b); }
template <class T> __device__ __forceinline__ T plx_sg_max(T a, T b) { return b > a ? b : a; }
// A shuffle-down tree whose every step adds only lanes that exist; lane 0 ends with the whole.
#define PLX_SG_REDUCE(name, combine)                                                            \
    template <class T> __device__ __forceinline__ T name(T v) {                                 \
        const unsigned lane = plx_lane_id(), lanes = plx_subgroup_size(), mask = plx_member_mask(); \
        for (unsigned d = 16; d >= 1; d /= 2) {                                                 \
            const T o = __shfl_down_sync(mask, v, d);                                           \
            if (lane + d < lanes) v = combine(v, o);                                            \
        }                                                                                       \
        return __shfl_sync(mask, v, 0);                                                         \
    }
PLX_SG_REDUCE(plx_reduce_add, plx_sg_add)
PLX_SG_REDUCE(plx_reduce_min, plx_sg_min)
PLX_SG_REDUCE(plx_reduce_max, plx_sg_max)
#undef PLX_SG_REDUCE
#if __CUDA_ARCH__ >= 800
__device__ __forceinline__ int plx_reduce_add(int v) { return __reduce_add_sync(plx_member_mask(), v); }
__device__ __forceinline__ unsigned plx_reduce_add(unsigned v) { return __reduce_add_sync(plx_member_mask(), v); }
__device__ __forceinline__ int plx_reduce_min(int v) { return __reduce_min_sync(plx_member_mask(), v); }
__device__ __forceinline__ unsigned plx_reduce_min(unsigned v) { return __reduce_min_sync(plx_member_mask(), v); }
__device__ __forceinline__ int plx_reduce_max(int v) { return __reduce_max_sync(plx_member_mask(), v); }
__device__ __forceinline__ unsigned plx_reduce_max(unsigned v) { return __reduce_max_sync(plx_member_mask(), v); }
#endif
template <class T> __device__ __forceinline__ T plx_scan_inclusive_add(T v) {
    const unsigned lane = plx_lane_id(), mask = plx_member_mask();
    for (unsigned d = 1; d < 32; d *= 2) {
        const T o = __shfl_up_sync(mask, v, d);
        if (lane >= d) v = plx_sg_add(v, o);
    }
    return v;
}
template <class T> __device__ __forceinline__ T plx_scan_exclusive_add(T v) {
    const T inclusive = plx_scan_inclusive_add(v);
    const T previous = __shfl_up_sync(plx_member_mask(), inclusive, 1);
    return plx_lane_id() == 0 ? T(0) : previous;
}
)";

// CUDA's hypot (libdevice's __nv_hypot) overflows to inf at (4.9e-324, 1.8e308), whose
// result is 1.8e308 (tests/core/kernel/math, on the H100); the PTX generator computes it the same
// way.
const char* const hypot_helper =
    R"(// hypot(x, y) = max * sqrt(1 + (min / max)^2), with C's special values
__device__ __forceinline__ double plx_hypot(double x, double y) {
    const double a = fabs(x), b = fabs(y), hi = fmax(a, b), lo = fmin(a, b);
    if (isinf(a) || isinf(b)) return __longlong_as_double(0x7ff0000000000000LL); // NVRTC has no
    if (isnan(x) || isnan(y)) return __longlong_as_double(0x7ff8000000000000LL); // INFINITY, NAN
    if (hi == 0.0) return 0.0;
    const double r = lo / hi;
    return hi * sqrt(fma(r, r, 1.0));
}
)";

// PTX's wmma register forms: an f32 accumulator has one f32 register per element it holds (8
// per lane); f16 and bf16 go two to a .b32 register; tf32 one per .b32.
bool wmma_f32_registers(const ir::FragmentDecl& f) {
    return f.use == ir::MatrixUse::Acc && f.type == Scalar::F32;
}
unsigned wmma_registers(const ir::FragmentDecl& f) {
    if (f.use == ir::MatrixUse::Acc) return f.type == Scalar::F32 ? 8 : 4;
    return f.type == Scalar::F16 ? 8 : 4;
}
const char* wmma_type(const ir::FragmentDecl& f) {
    return f.use != ir::MatrixUse::Acc && f.type == Scalar::F32 ? "tf32" : ir::to_string(f.type);
}
// "{%first, ..., %(first + count - 1)}"
std::string operand_list(unsigned first, unsigned count) {
    std::string s = "{";
    for (unsigned i = 0; i < count; ++i)
        s += (i ? ", %" : "%") + std::to_string(first + i);
    return s + "}";
}
// The asm operands binding each register of a fragment: "=f"(acc[0]), ... or "r"(a[0]), ...
std::string register_operands(const ir::FragmentDecl& f, const std::string& name, bool output) {
    std::string s;
    for (unsigned i = 0; i < wmma_registers(f); ++i)
        s += clike::cat(i ? ", " : "", "\"", output ? "=" : "", wmma_f32_registers(f) ? "f" : "r",
                        "\"(", name, "[", std::to_string(i), "])");
    return s;
}

class CudaDialect final : public clike::Dialect {
public:
    const char* language_name() const override { return "CUDA C"; }

    // ---- types: vectors are plx_vec (cuda_c_types.cpp); records and variants are structs
    // whose layout static_asserts check against the IR's.
    std::string scalar_name(Scalar t) const override { return cuda_c::scalar_type(t); }
    std::string vector_name(Scalar t, uint32_t lanes, clike::Prelude& prelude) const override {
        return cuda_c::vector_type(t, lanes, prelude);
    }
    // A union member other than the first has no initializer in C++17 (designated ones are
    // C++20): each case gets a function that makes a value of it, its payload in memory form.
    std::string variant_functions(const ir::TypeDecl& d,
                                  const clike::DeclNames& names) const override {
        std::string out;
        for (size_t i = 0; i < d.members.size(); ++i) {
            const bool payload = !d.members[i].type.is_void();
            out +=
                clike::cat("    static __device__ ", names.type, " plx_make_", d.members[i].name,
                           "(", payload ? names.member_types[i] + " p" : "", ") {\n        ",
                           names.type, " v = {};\n        v.tag = ", std::to_string(i), "u;\n",
                           payload ? clike::cat("        v.u.", names.members[i], " = p;\n") : "",
                           "        return v;\n    }\n");
        }
        return out;
    }
    std::string layout_checks(const ir::TypeDecl& d, const clike::DeclNames& names) const override {
        const std::string& t = names.type;
        std::string out = clike::cat("static_assert(sizeof(", t, ") == ", std::to_string(d.size),
                                     " && alignof(", t, ") == ", std::to_string(d.align), ", \"",
                                     d.name, ": the IR's size and alignment\");\n");
        std::string offsets;
        auto offset = [&](const std::string& member, uint64_t at) {
            offsets +=
                clike::cat(offsets.empty() ? "" : " &&\n              ", "__builtin_offsetof(", t,
                           ", ", member, ") == ", std::to_string(at));
        };
        if (d.kind == ir::TypeDecl::Kind::Record) {
            for (size_t i = 0; i < d.members.size(); ++i)
                offset(names.members[i], d.offsets[i]);
        } else {
            for (size_t i = 0; i < d.members.size(); ++i)
                if (!d.members[i].type.is_void()) {
                    offset("u", d.payload_offset);
                    break;
                }
        }
        // NVRTC has no offsetof (nor __builtin_offsetof, nor <cstddef>): nvcc checks the offsets,
        // which the codegen suite compiles every test kernel with; NVRTC checks size and alignment.
        if (!offsets.empty())
            out += clike::cat("#ifndef __CUDACC_RTC__\nstatic_assert(", offsets, ", \"", d.name,
                              ": the IR's offsets\");\n#endif\n");
        return out;
    }

    // ---- literals
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
    std::string vector_literal(const std::string& type,
                               const std::vector<std::string>& lanes) const override {
        return clike::cat(type, "{", clike::join_args(lanes), "}");
    }
    std::string broadcast(const std::string&, uint32_t lanes, const std::string& value,
                          clike::Prelude&) const override {
        return clike::cat("plx_splat<", std::to_string(lanes), ">(", clike::full_expression(value),
                          ")");
    }
    std::string record_literal(const std::string& type,
                               const std::vector<std::string>& fields) const override {
        return clike::cat(type, "{", clike::join_args(fields), "}");
    }
    std::string variant_literal(const ir::TypeDecl& d, const clike::DeclNames& names,
                                uint32_t index, const std::string& payload) const override {
        return clike::cat(names.type, "::plx_make_", d.members[index].name, "(",
                          payload.empty() ? "" : clike::full_expression(payload), ")");
    }

    // ---- vectors (the operators are plx_vec's)
    std::string lane(const std::string& vec, uint32_t lane, uint32_t) const override {
        return clike::cat(clike::postfix_operand(vec), ".v[", std::to_string(lane), "]");
    }
    std::string swizzle(const std::string& vec, const std::vector<uint8_t>& lanes, uint32_t,
                        clike::Prelude&) const override {
        std::string out = clike::cat("plx_swizzle(", clike::full_expression(vec));
        for (uint8_t l : lanes)
            out += ", " + std::to_string(l);
        return out + ")";
    }
    std::string vector_binary(ir::BinaryOp op, const ir::Type&, const std::string& a,
                              const std::string& b) const override {
        return clike::cat("(", clike::operand(a), " ", ir::c_symbol(op), " ", clike::operand(b),
                          ")");
    }
    std::string vector_unary(ir::UnaryOp op, const ir::Type&, const std::string& a) const override {
        return clike::cat(op == ir::UnaryOp::Neg ? "(-" : "(~", clike::operand(a), ")");
    }

    // nvcc and NVRTC fuse a * b + c into an fma by default (--fmad=true), which the IR's
    // separately rounded operations forbid; __fmul_rn and __dmul_rn are never fused.
    std::string float_product(Scalar t, const std::string& a, const std::string& b) const override {
        return clike::cat(t == Scalar::F64 ? "__dmul_rn(" : "__fmul_rn(", clike::full_expression(a),
                          ", ", clike::full_expression(b), ")");
    }

    // ---- conversions
    std::string convert(const ir::Type& from, const ir::Type& to, const std::string& code,
                        clike::Prelude& prelude) const override {
        if (to.is_vector()) return cuda_c::vector_convert(from, to, code, prelude);
        return cuda_c::scalar_convert(from.scalar(), to.scalar(), code, prelude);
    }
    const char* float_bits_function() const override { return "__float_as_uint"; }
    const char* bits_float_function() const override { return "__uint_as_float"; }
    const char* helper_prefix() const override { return "__device__ __forceinline__ "; }
    // cvt, as the PTX generator converts: one instruction instead of the shared integer
    // code's dozen (f16) or four (bf16), which left matmul_f16's copy of a slice ALU-bound.
    // Both round to nearest, ties to even; a NaN becomes the hardware's canonical NaN, as on
    // the PTX path. bf16 rounds by cvt from sm_80 on and widens by a shift everywhere.
    std::string half_conversions(ir::Scalar format, const std::string& portable) const override {
        if (format == ir::Scalar::F16)
            return "// f16 is a 16-bit pattern in memory and a float in registers; cvt rounds to "
                   "nearest, ties to\n"
                   "// even, as plexus/half.hpp does.\n"
                   "__device__ __forceinline__ unsigned short plx_to_f16(float f) {\n"
                   "    unsigned short h;\n"
                   "    asm(\"cvt.rn.f16.f32 %0, %1;\" : \"=h\"(h) : \"f\"(f));\n"
                   "    return h;\n"
                   "}\n"
                   "__device__ __forceinline__ float plx_from_f16(unsigned short h) {\n"
                   "    float f;\n"
                   "    asm(\"cvt.f32.f16 %0, %1;\" : \"=f\"(f) : \"h\"(h));\n"
                   "    return f;\n"
                   "}\n"
                   "__device__ __forceinline__ float plx_round_f16(float f) { return "
                   "plx_from_f16(plx_to_f16(f)); }\n";
        return "#if __CUDA_ARCH__ >= 800\n"
               "// bf16 is the upper half of a float; cvt rounds to nearest, ties to even.\n"
               "__device__ __forceinline__ unsigned short plx_to_bf16(float f) {\n"
               "    unsigned short h;\n"
               "    asm(\"cvt.rn.bf16.f32 %0, %1;\" : \"=h\"(h) : \"f\"(f));\n"
               "    return h;\n"
               "}\n"
               "__device__ __forceinline__ float plx_from_bf16(unsigned short b) { return "
               "__uint_as_float((unsigned)b << 16); }\n"
               "__device__ __forceinline__ float plx_round_bf16(float f) { return "
               "plx_from_bf16(plx_to_bf16(f)); }\n"
               "#else\n" +
               portable + "#endif\n";
    }

    const std::string& standard_spelling(const IntrinsicInfo& info) const override {
        return info.cuda_c;
    }
    bool cast_integer_calls() const override { return false; } // spellings have exact types
    std::string min_max_function(bool is_min, const ir::Type& t) const override {
        if (t.is_vector()) return is_min ? "plx_min" : "plx_max";
        if (t == Scalar::F64) return is_min ? "fmin" : "fmax";
        if (ir::is_float(t)) return is_min ? "fminf" : "fmaxf"; // f32, and f16 / bf16 held as float
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

    std::string discarded_atomic(const std::string&) const override { return ""; }

    std::string prologue(const ir::Kernel&, const clike::Usage& usage) const override {
        std::string out;
        for (const std::string& name : usage.standard_spelled)
            if (name.rfind("subgroup_", 0) == 0) {
                out = subgroup_helpers;
                break;
            }
        const std::string atomics = float_atomic_helpers(usage);
        out += (out.empty() || atomics.empty() ? "" : "\n") + atomics;
        if (std::find(usage.standard_spelled.begin(), usage.standard_spelled.end(), "hypot_f64") !=
            usage.standard_spelled.end())
            out += hypot_helper;
        return out;
    }

    // CUDA C bounds the work-items per block (a required shape by its product), only where it
    // can matter for launching, as in PTX (codegen::unbounded_group_items), or where the kernel
    // asks for several groups per multiprocessor (__launch_bounds__'s second argument).
    std::string entry_prefix(const ir::WorkGroupBound& bound) const override {
        if (bound.items() <= codegen::unbounded_group_items && !bound.min_groups)
            return "extern \"C\" __global__ void";
        const std::string groups = bound.min_groups ? ", " + std::to_string(bound.min_groups) : "";
        return "extern \"C\" __global__ void __launch_bounds__(" + std::to_string(bound.items()) +
               groups + ")";
    }
    std::string param_decl(const ir::Param& p, const std::string& type,
                           const std::string& name) const override {
        if (p.kind == ir::Param::Kind::Scalar) return type + " " + name;
        // No __restrict__: the same buffer may be passed for two parameters.
        return (p.access == ir::Access::Read ? "const " : "") + type + "* " + name;
    }
    std::string array_decl(ir::Space space, const std::string& type, const std::string& name,
                           uint32_t count, uint32_t align) const override {
        return clike::cat(space == ir::Space::Local ? "__shared__ " : "",
                          align ? "__align__(" + std::to_string(align) + ") " : "", type, " ", name,
                          "[", std::to_string(count), "];");
    }

    CudaDynamicShared dynamic_shared(const ir::Kernel& k) const override {
        return cuda_dynamic_shared(k);
    }
    std::string dynamic_shared_base() const override {
        return "extern __shared__ __align__(128) unsigned char plx_dynamic_shared[];";
    }
    std::string dynamic_shared_array(const std::string& type, const std::string& name,
                                     uint64_t offset) const override {
        return clike::cat(type, "* const ", name, " = reinterpret_cast<", type,
                          "*>(plx_dynamic_shared + ", std::to_string(offset), ");");
    }

    // ---- matrix fragments: PTX's wmma in inline assembly (no header: mma.h needs the
    // toolkit's include directory), on registers declared as arrays. A fragment's registers
    // are .b32 pairs of f16 / bf16, tf32 values, or f32 accumulators.
    bool matrix_units() const override { return true; }
    std::string fragment_decl(const ir::FragmentDecl& f, const std::string& name) const override {
        return clike::cat(wmma_f32_registers(f) ? "float " : "unsigned ", name, "[",
                          std::to_string(wmma_registers(f)), "]; // ", f.intrinsic());
    }
    std::vector<std::string> matrix_statement(const ir::Kernel& k, const ir::Matrix& n,
                                              const clike::MatrixCode& code) const override {
        const ir::FragmentDecl& f = *k.fragment(n.frag);
        const unsigned regs = wmma_registers(f);
        const std::string count = std::to_string(regs);
        switch (n.op) {
        case ir::MatrixOp::Fill: {
            std::string v =
                wmma_f32_registers(f) ? "const float plx_v = " + code.value
                : f.type == Scalar::F32
                    ? "const unsigned plx_v = __float_as_uint(" + code.value + ")"
                    : "const unsigned plx_v = 0x10001u * (unsigned)(" + code.value + ")";
            return {"{", "    " + v + ";",
                    "    for (int plx_i = 0; plx_i < " + count + "; ++plx_i) " + code.frag +
                        "[plx_i] = plx_v;",
                    "}"};
        }
        case ir::MatrixOp::Load:
        case ir::MatrixOp::Store: {
            const bool load = n.op == ir::MatrixOp::Load;
            const ir::MatrixLayout layout = f.use == ir::MatrixUse::Acc ? n.layout : f.layout;
            const char* which = !load                       ? "d"
                                : f.use == ir::MatrixUse::A ? "a"
                                : f.use == ir::MatrixUse::B ? "b"
                                                            : "c";
            // Shared memory by its 32-bit shared address and the .shared form, as the PTX
            // generator's intrinsics say it: ptxas then knows the state space of the tile.
            const bool shared = n.space == ir::Space::Local;
            std::string ptx = clike::cat("wmma.", load ? "load." : "store.", which,
                                         ".sync.aligned.", ir::to_string(layout), ".", f.shape(),
                                         shared ? ".shared." : ".", wmma_type(f));
            const std::string regs_list = operand_list(load ? 0 : 1, regs);
            ptx += load ? " " + regs_list + ", [%" + count + "], %" + std::to_string(regs + 1) + ";"
                        : " [%0], " + regs_list + ", %" + std::to_string(regs + 1) + ";";
            const std::string bind = register_operands(f, code.frag, load);
            const std::string address =
                shared ? clike::cat("\"r\"((unsigned)__cvta_generic_to_shared(", code.address, "))")
                       : clike::cat("\"l\"(", code.address, ")");
            const std::string stride = clike::cat("\"r\"((unsigned)(", code.stride, "))");
            if (load)
                return {clike::cat("asm volatile(\"", ptx, "\"\n    : ", bind, "\n    : ", address,
                                   ", ", stride, " : \"memory\");")};
            return {clike::cat("asm volatile(\"", ptx, "\"\n    :\n    : ", address, ", ", bind,
                               ", ", stride, " : \"memory\");")};
        }
        case ir::MatrixOp::Mma: {
            const ir::FragmentDecl &a = *k.fragment(n.a), &b = *k.fragment(n.b),
                                   &c = *k.fragment(n.c);
            const unsigned ra = wmma_registers(a), rb = wmma_registers(b), rc = wmma_registers(c);
            std::string types = a.type == Scalar::F16
                                    ? clike::cat(ir::to_string(f.type), ".", ir::to_string(c.type))
                                    : clike::cat("f32.", wmma_type(a), ".", wmma_type(b), ".f32");
            std::string ptx = clike::cat("wmma.mma.sync.aligned.", ir::to_string(a.layout), ".",
                                         ir::to_string(b.layout), ".", f.shape(), ".", types, " ",
                                         operand_list(0, regs), ", ", operand_list(regs, ra), ", ",
                                         operand_list(regs + ra, rb), ", ",
                                         operand_list(regs + ra + rb, rc), ";");
            return {clike::cat("asm volatile(\"", ptx,
                               "\"\n    : ", register_operands(f, code.frag, true),
                               "\n    : ", register_operands(a, code.a, false), ",\n      ",
                               register_operands(b, code.b, false), ",\n      ",
                               register_operands(c, code.c, false), ");")};
        }
        case ir::MatrixOp::MmaShared:
            break; // emit_kernel lowered warpgroup accumulators to plain code
        }
        throw Error(ErrorCode::Internal, "kernel '" + k.name +
                                             "': a warpgroup matrix operation reached the CUDA C "
                                             "emitter unlowered (a bug in plexus)");
    }

    // ---- asynchronous copies: PTX's cp.async from sm_80 (its src-size operand zero-fills what
    // is past `valid`), the same copy done at once below it. With nothing to read the copy still
    // names an address: the buffer's start stands in for one that may lie outside the buffer.
    bool async_copies() const override { return true; }
    std::vector<std::string> async_copy_statement(const ir::AsyncCopy& n,
                                                  const clike::AsyncCopyCode& code) const override {
        if (n.op != ir::AsyncCopyOp::Copy) {
            const std::string ptx = n.op == ir::AsyncCopyOp::Commit
                                        ? "cp.async.commit_group;"
                                        : "cp.async.wait_group " + std::to_string(n.pending) + ";";
            return {"#if __CUDA_ARCH__ >= 800",
                    clike::cat("asm volatile(\"", ptx, "\" ::: \"memory\");"), "#endif"};
        }
        const uint32_t bytes = n.count * code.size;
        const std::string ptx =
            clike::cat("cp.async.", bytes == 16 ? "cg" : "ca", ".shared.global [%0], [%1], ",
                       std::to_string(bytes), ", %2;");
        return {"{",
                clike::cat("    ", code.type, "* plx_dst = ", code.dst, ";"),
                clike::cat("    const ", code.type, "* plx_src = ", code.src, ";"),
                clike::cat("    const long long plx_valid = (long long)(", code.valid, ");"),
                "#if __CUDA_ARCH__ >= 800",
                clike::cat(
                    "    asm volatile(\"", ptx,
                    "\"\n        :\n        : \"r\"((unsigned)__cvta_generic_to_shared(plx_dst)), ",
                    "\"l\"(plx_valid > 0 ? plx_src : ", code.buffer,
                    "), \"r\"((unsigned)plx_valid * ", std::to_string(code.size),
                    "u)\n        : \"memory\");"),
                "#else",
                clike::cat("    for (int plx_i = 0; plx_i < ", std::to_string(n.count),
                           "; ++plx_i) plx_dst[plx_i] = plx_i < plx_valid ? plx_src[plx_i] : (",
                           code.type, ")0;"),
                "#endif",
                "}"};
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
            "INFINITY", "NULL", "plx_dynamic_shared"};
        if (words.count(w)) return true;
        // Vector types: int2, float4, ulonglong3 ...
        for (const char* base : {"char", "uchar", "short", "ushort", "int", "uint", "long", "ulong",
                                 "longlong", "ulonglong", "float", "double"})
            for (const char* n : {"1", "2", "3", "4"})
                if (w == std::string(base) + n) return true;
        return false;
    }

private:
    // CUDA has atomicAdd on float and double (sm_60+) but no float atomic min / max: those are
    // helpers, one per operation and type, whose generic pointer serves both address spaces.
    std::string float_atomic_helpers(const clike::Usage& usage) const {
        std::map<std::string, clike::FloatAtomic> helpers;
        for (auto& name : usage.standard_spelled)
            if (auto a = clike::float_atomic(name); a && a->op != ir::AtomicOp::Add)
                helpers.emplace(
                    clike::cat("plx_atomic_", ir::to_string(a->op), "_", ir::to_string(a->type)),
                    *a);
        std::string out;
        for (auto& [name, a] : helpers) {
            const bool wide = a.type == Scalar::F64;
            const std::string type = wide ? "double" : "float";
            const std::string bits = wide ? "unsigned long long" : "unsigned int";
            const clike::CasWords words{bits, clike::cat("*(volatile ", bits, "*)p"),
                                        clike::cat("atomicCAS((", bits, "*)p, "),
                                        wide ? "__double_as_longlong" : "__float_as_uint",
                                        wide ? "__longlong_as_double" : "__uint_as_float"};
            out += clike::cat(out.empty() ? "// No float atomic min / max in CUDA: a "
                                            "compare-exchange loop on the bits.\n"
                                          : "\n",
                              helper_prefix(), type, " ", name, "(", type, "* p, ", type, " v) {\n",
                              clike::cas_loop(*this, a, words), "    return ", words.to_float,
                              "(old);\n}\n");
        }
        return out;
    }
};

class CudaCGenerator final : public SourceGenerator {
public:
    plx_language language() const override { return PLX_LANG_CUDA_C; }
    uint32_t dynamic_local_bytes(const ir::Kernel& k) const override {
        return uint32_t(cuda_dynamic_shared(k).bytes);
    }
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
