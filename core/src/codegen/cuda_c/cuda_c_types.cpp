// CUDA C's scalars and conversions, and the vectors it lacks: a template with the IR's layout
// and lane-wise operators, in which integers wrap at their width and shift amounts are taken
// modulo it, as in the IR (docs/ir.md) and OpenCL C.
#include "cuda_c_types.hpp"

#include "plexus/error.hpp"

#include <iterator>

namespace plexus::codegen::cuda_c {
namespace {

using clike::cat;
using ir::Scalar;

// Written once per translation unit that uses a vector. The operators are templates, so a
// kernel instantiates only those it uses; "%" and the shifts are never instantiated on floats
// (the IR has them on integers only).
const char* const vector_support =
    R"(// Vectors of the IR, which CUDA C lacks: N lanes, as big and as aligned as the IR lays them
// out (3 lanes take the room of 4), with lane-wise operators.
template <class T, int N> struct alignas(sizeof(T) * (N == 3 ? 4 : N)) plx_vec {
    T v[N];
};
// The type in which + - * << of T wrap: C++ computes the narrow types in int, where they can
// overflow, and signed overflow is undefined.
template <class T> struct plx_wrap { typedef T type; };
template <> struct plx_wrap<signed char> { typedef unsigned type; };
template <> struct plx_wrap<unsigned char> { typedef unsigned type; };
template <> struct plx_wrap<short> { typedef unsigned type; };
template <> struct plx_wrap<unsigned short> { typedef unsigned type; };
template <> struct plx_wrap<int> { typedef unsigned type; };
template <> struct plx_wrap<long long> { typedef unsigned long long type; };
// min / max of a lane: integers compare with their signedness, floats follow fmin / fmax (a
// NaN yields the other operand).
template <class T> __device__ __forceinline__ T plx_lane_min(T a, T b) { return b < a ? b : a; }
template <class T> __device__ __forceinline__ T plx_lane_max(T a, T b) { return a < b ? b : a; }
__device__ __forceinline__ float plx_lane_min(float a, float b) { return fminf(a, b); }
__device__ __forceinline__ float plx_lane_max(float a, float b) { return fmaxf(a, b); }
__device__ __forceinline__ double plx_lane_min(double a, double b) { return fmin(a, b); }
__device__ __forceinline__ double plx_lane_max(double a, double b) { return fmax(a, b); }
// The product of two lanes: floats through __fmul_rn / __dmul_rn, which nvcc never fuses with
// an addition into an fma (the IR rounds each operation on its own).
template <class T> __device__ __forceinline__ T plx_lane_mul(T a, T b) {
    return T(typename plx_wrap<T>::type(a) * typename plx_wrap<T>::type(b));
}
__device__ __forceinline__ float plx_lane_mul(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ double plx_lane_mul(double a, double b) { return __dmul_rn(a, b); }
// A lane-wise function of two vectors: each lane of the result is `lane` of x and y.
#define PLX_VEC_LANES(function, lane)                                                           \
    template <class T, int N>                                                                    \
    __device__ __forceinline__ plx_vec<T, N> function(plx_vec<T, N> a, plx_vec<T, N> b) {        \
        typedef typename plx_wrap<T>::type W;                                                    \
        for (int i = 0; i < N; ++i) {                                                            \
            const T x = a.v[i], y = b.v[i];                                                      \
            a.v[i] = T(lane);                                                                    \
        }                                                                                        \
        return a;                                                                                \
    }
PLX_VEC_LANES(operator+, W(x) + W(y))
PLX_VEC_LANES(operator-, W(x) - W(y))
PLX_VEC_LANES(operator*, plx_lane_mul(x, y))
PLX_VEC_LANES(operator/, x / y)
PLX_VEC_LANES(operator%, x % y)
PLX_VEC_LANES(operator&, x & y)
PLX_VEC_LANES(operator|, x | y)
PLX_VEC_LANES(operator^, x ^ y)
PLX_VEC_LANES(operator<<, W(x) << (y & int(sizeof(T) * 8 - 1)))
PLX_VEC_LANES(operator>>, x >> (y & int(sizeof(T) * 8 - 1)))
PLX_VEC_LANES(plx_min, plx_lane_min(x, y))
PLX_VEC_LANES(plx_max, plx_lane_max(x, y))
#undef PLX_VEC_LANES
template <class T, int N> __device__ __forceinline__ plx_vec<T, N> operator-(plx_vec<T, N> a) {
    for (int i = 0; i < N; ++i) a.v[i] = T(-typename plx_wrap<T>::type(a.v[i]));
    return a;
}
template <class T, int N> __device__ __forceinline__ plx_vec<T, N> operator~(plx_vec<T, N> a) {
    for (int i = 0; i < N; ++i) a.v[i] = T(~a.v[i]);
    return a;
}
// Lanes of a vector in the order given (constants, so the indexing folds away), and a vector
// of copies of a scalar.
template <class T, int N, class... L>
__device__ __forceinline__ plx_vec<T, int(sizeof...(L))> plx_swizzle(plx_vec<T, N> a, L... lanes) {
    plx_vec<T, int(sizeof...(L))> r = {{a.v[lanes]...}};
    return r;
}
template <int N, class T> __device__ __forceinline__ plx_vec<T, N> plx_splat(T x) {
    plx_vec<T, N> r;
    for (int i = 0; i < N; ++i) r.v[i] = x;
    return r;
}
)";

// By ir::Scalar: the C++ type, and the name of vectors of it (plx_ and OpenCL C's name).
constexpr const char* scalar_types[] = {
    "void",           "bool",  "signed char", "unsigned char", "short",
    "unsigned short", "int",   "unsigned",    "long long",     "unsigned long long",
    nullptr,          nullptr, "float",       "double"};
constexpr const char* vector_names[] = {nullptr,  nullptr, "char",  "uchar", "short",
                                        "ushort", "int",   "uint",  "long",  "ulong",
                                        nullptr,  nullptr, "float", "double"};
static_assert(std::size(scalar_types) == size_t(Scalar::F64) + 1 &&
              std::size(vector_names) == std::size(scalar_types));

} // namespace

const char* scalar_type(Scalar t) {
    if (const char* name = scalar_types[size_t(t)]) return name;
    throw Error(ErrorCode::Internal,
                std::string("CUDA C has no name for ") + ir::to_string(t) +
                    " here: the emitter maps it to float or unsigned short (a bug in plexus)");
}

std::string vector_type(Scalar t, uint32_t lanes, clike::Prelude& prelude) {
    if (!vector_names[size_t(t)])
        throw Error(ErrorCode::Internal,
                    std::string("a CUDA C vector of ") + ir::to_string(t) + " (a bug in plexus)");
    const std::string name = cat("plx_", vector_names[size_t(t)], std::to_string(lanes));
    if (prelude.first("plx_vec")) prelude.add_type(vector_support);
    if (prelude.first(name))
        prelude.add_type(cat("typedef plx_vec<", scalar_type(t), ", ", std::to_string(lanes), "> ",
                             name, ";\n"));
    return name;
}

// cvt.rzi (which __float2int_rz and its kin are) clamps out-of-range values, and gives 0 for
// NaN only from f32 to a 32-bit integer (docs/architecture.md): those stay inline; every other
// conversion is a helper that clamps to a narrow type and guards NaN where cvt does not.
std::string scalar_convert(Scalar from, Scalar to, const std::string& code,
                           clike::Prelude& prelude) {
    if (!ir::is_float(from) || !ir::is_integer(to)) return "";
    const std::string arg = clike::full_expression(code);
    const bool f32 = from == Scalar::F32;
    const std::string source = f32 ? "__float2" : "__double2";
    const bool wide = to == Scalar::I64 || to == Scalar::U64;
    const char* kind = to == Scalar::I64   ? "ll"
                       : to == Scalar::U64 ? "ull"
                       : ir::is_signed(to) ? "int"
                                           : "uint";
    const std::string cvt = cat(source, kind, "_rz(x)");
    if (f32 && !wide && ir::size_of(to) == 4) return cat(source, kind, "_rz(", arg, ")");
    const std::string name = cat("plx_", ir::to_string(from), "_to_", ir::to_string(to));
    if (prelude.first(name)) {
        std::string value = cvt;
        if (to == Scalar::I8 || to == Scalar::I16) {
            const bool i8 = to == Scalar::I8;
            value = cat("max(", i8 ? "-128" : "-32768", ", min(", i8 ? "127" : "32767", ", ", cvt,
                        "))");
        } else if (to == Scalar::U8 || to == Scalar::U16) {
            value = cat("min(", to == Scalar::U8 ? "255u" : "65535u", ", ", cvt, ")");
        }
        const std::string type = scalar_type(to);
        value = cat("(", type, ")", value);
        if (!f32 || wide) value = cat("x == x ? ", value, " : (", type, ")0"); // NaN: 0
        prelude.add_function(cat("__device__ __forceinline__ ", type, " ", name, "(",
                                 scalar_type(from), " x) { return ", value, "; }\n"));
    }
    return cat(name, "(", arg, ")");
}

std::string vector_convert(const ir::Type& from, const ir::Type& to, const std::string& code,
                           clike::Prelude& prelude) {
    const std::string name = cat("plx_convert_", from.name(), "_to_", to.name());
    if (prelude.first(name)) {
        const uint32_t n = to.lanes();
        const std::string in = vector_type(from.scalar(), n, prelude),
                          out = vector_type(to.scalar(), n, prelude);
        std::vector<std::string> lanes;
        for (uint32_t i = 0; i < n; ++i) {
            std::string lane = cat("v.v[", std::to_string(i), "]");
            std::string c = scalar_convert(from.scalar(), to.scalar(), lane, prelude);
            lanes.push_back(c.empty() ? cat("(", scalar_type(to.scalar()), ")", lane) : c);
        }
        prelude.add_function(cat("__device__ __forceinline__ ", out, " ", name, "(", in,
                                 " v) {\n    return ", out, "{", clike::join_args(lanes),
                                 "};\n}\n"));
    }
    return cat(name, "(", clike::full_expression(code), ")");
}

} // namespace plexus::codegen::cuda_c
