// The math functions of the kernel language (kernel.hpp includes this header): the C99 /
// OpenCL C library on float and double (half and bf16 computed in f32; vectors lane by lane),
// through the catalog's math intrinsics, and the px::fast:: forms of the f32 ones.
#pragma once

#include "plexus/kernel.hpp"

#include <climits>
#include <cmath>
#include <limits>

namespace plexus {

namespace detail {
// A math intrinsic on float or double; on half and bf16 it is computed in f32 and rounded
// back; on a vector, lane by lane.
template <class T> ir::Expr math_call(const char* name, std::vector<ir::Expr> args) {
    if constexpr (is_vec_v<T>) {
        std::vector<ir::Expr> lanes;
        for (uint8_t l = 0; l < T::lanes; ++l) {
            std::vector<ir::Expr> a;
            for (auto& x : args)
                a.push_back(ir::Swizzle::make(x, {l}));
            lanes.push_back(math_call<typename T::element>(name, std::move(a)));
        }
        return ir::Construct::make(type_of<T>(), std::move(lanes));
    } else if constexpr (FloatLike<T> && !std::is_floating_point_v<T>) {
        for (auto& x : args)
            x = ir::Cast::make(ir::Scalar::F32, x);
        return ir::Cast::make(scalar_v<T>, math_call<float>(name, std::move(args)));
    } else {
        static_assert(std::is_floating_point_v<T>,
                      "math functions take float, double, half, bf16 or vectors of them");
        return ir::Call::make(std::string(name) + (std::same_as<T, float> ? "_f32" : "_f64"),
                              std::move(args));
    }
}
} // namespace detail
#define PLEXUS_MATH1(fn)                                                                           \
    template <IsValue X> Value<detail::vt<X>> fn(const X& x) {                                     \
        return Value<detail::vt<X>>(detail::math_call<detail::vt<X>>(#fn, {x.expr()}));            \
    }
PLEXUS_MATH1(sqrt)
PLEXUS_MATH1(rsqrt)
PLEXUS_MATH1(exp)
PLEXUS_MATH1(exp2)
PLEXUS_MATH1(log)
PLEXUS_MATH1(log2)
PLEXUS_MATH1(sin)
PLEXUS_MATH1(cos)
PLEXUS_MATH1(tan)
PLEXUS_MATH1(fabs)
PLEXUS_MATH1(floor)
PLEXUS_MATH1(ceil)
#define PLX_LIBM1(fn) PLEXUS_MATH1(fn)
#define PLX_LIBM2(fn)                                                                              \
    template <class A, class B>                                                                    \
        requires Operands<A, B>                                                                    \
    auto fn(const A& x, const B& y) {                                                              \
        using T = detail::common_t<A, B>;                                                          \
        return Value<T>(                                                                           \
            detail::math_call<T>(#fn, {detail::lift<T>(x).expr(), detail::lift<T>(y).expr()}));    \
    }
#include <plexus/libm.def>
#undef PLX_LIBM1
#undef PLX_LIBM2
#undef PLEXUS_MATH1
// x * 2^n, exactly where the result is representable.
template <IsValue X, class N> Value<detail::vt<X>> ldexp(const X& x, const N& n) {
    using T = detail::vt<X>;
    static_assert(std::is_floating_point_v<T>, "px::ldexp takes a float or a double");
    return Value<T>(ir::Call::make(std::same_as<T, float> ? "ldexp_f32" : "ldexp_f64",
                                   {x.expr(), detail::lift<int32_t>(n).expr()}));
}
// Classification of a float or double: NaN, an infinity, and the sign bit (set for -0.0 and
// for NaNs with the sign set, as in C).
template <IsValue X>
    requires std::is_floating_point_v<detail::vt<X>>
Value<bool> isnan(const X& x) {
    return x != x;
}
template <IsValue X>
    requires std::is_floating_point_v<detail::vt<X>>
Value<bool> isinf(const X& x) {
    return fabs(x) == std::numeric_limits<detail::vt<X>>::infinity();
}
template <IsValue X>
    requires std::is_floating_point_v<detail::vt<X>>
Value<bool> signbit(const X& x) {
    using T = detail::vt<X>;
    return copysign(T(1), x) < T(0);
}
template <class A, class B>
    requires Operands<A, B>
auto pow(const A& x, const B& y) {
    using T = detail::common_t<A, B>;
    return Value<T>(
        detail::math_call<T>("pow", {detail::lift<T>(x).expr(), detail::lift<T>(y).expr()}));
}
template <IsValue A, class B, class C> auto fma(const A& a, const B& b, const C& c) {
    using T = detail::vt<A>;
    return Value<T>(detail::math_call<T>(
        "fma", {a.expr(), detail::lift<T>(b).expr(), detail::lift<T>(c).expr()}));
}
template <IsValue X, class L, class H> auto clamp(const X& x, const L& lo, const H& hi) {
    using T = detail::vt<X>;
    if constexpr (detail::FloatLike<detail::element_t<T>>)
        return Value<T>(detail::math_call<T>(
            "clamp", {x.expr(), detail::lift<T>(lo).expr(), detail::lift<T>(hi).expr()}));
    else
        return min(max(x, detail::lift<T>(lo)), detail::lift<T>(hi));
}

// sin and cos of one argument: auto [s, c] = px::sincos(x). Two catalog calls, so each is
// exactly what px::sin and px::cos give (docs/kernel-language.md says why no third intrinsic).
template <class T> struct SinCos {
    Value<T> sin, cos;
};
template <IsValue X> SinCos<detail::vt<X>> sincos(const X& x) {
    return {sin(x), cos(x)};
}

namespace detail {
// Finite and nonzero: where the catalog's ilogb is defined.
template <class T> Value<bool> regular(const Value<T>& x) {
    return fabs(x) < std::numeric_limits<T>::infinity() && x != T(0);
}
// The catalog's ilogb of x where x is regular, of 1 elsewhere (so never a backend's special
// value, and never INT_MAX + 1 below).
template <class T> Value<int32_t> ilogb_of_regular(const Value<T>& x) {
    return Value<int32_t>(ir::Call::make(std::same_as<T, float> ? "ilogb_f32" : "ilogb_f64",
                                         {select(regular(x), x, T(1)).expr()}));
}
} // namespace detail

// The binary exponent of x, as C99's ilogb: floor(log2 |x|) for a finite nonzero x (denormals
// included), and for 0, NaN and the infinities what the host's C library returns (FP_ILOGB0,
// FP_ILOGBNAN, INT_MAX), so that every backend agrees with the host.
template <IsValue X>
    requires std::is_floating_point_v<detail::vt<X>>
Value<int32_t> ilogb(const X& x) {
    using T = detail::vt<X>;
    const Value<T> v = x;
    return select(v == T(0), int32_t(FP_ILOGB0),
                  select(isnan(v), int32_t(FP_ILOGBNAN),
                         select(isinf(v), int32_t(INT_MAX), detail::ilogb_of_regular(v))));
}

// x = mantissa * 2^exponent with |mantissa| in [0.5, 1): auto [m, e] = px::frexp(x). As C's
// frexp: denormals are normalized, frexp(+-0) = (+-0, 0); an infinity or NaN is returned as
// the mantissa with exponent 0 (C leaves that exponent unspecified). Exact on every backend:
// ilogb and ldexp are exact operations.
template <class T> struct Frexp {
    Value<T> mantissa;
    Value<int32_t> exponent;
};
template <IsValue X>
    requires std::is_floating_point_v<detail::vt<X>>
Frexp<detail::vt<X>> frexp(const X& x) {
    using T = detail::vt<X>;
    const Value<T> v = x;
    const Value<int32_t> e = select(detail::regular(v), detail::ilogb_of_regular(v) + 1, 0);
    return {ldexp(v, -e), e};
}

// The fast forms of the f32 functions (CUDA's __expf class, OpenCL's native_): on a GPU the
// special-function unit's approximations, elsewhere the precise function. Each has the error
// bound and input range docs/kernel-language.md states; none is defined outside its range.
namespace fast {
#define PLEXUS_FAST_CHECK(fn)                                                                      \
    static_assert(std::same_as<plexus::detail::element_t<T>, float>,                               \
                  "px::fast::" #fn                                                                 \
                  " takes float or a vector of float: the fast functions exist in f32 only")
#define PLEXUS_FAST1(fn)                                                                           \
    template <IsValue X> Value<plexus::detail::vt<X>> fn(const X& x) {                             \
        using T = plexus::detail::vt<X>;                                                           \
        PLEXUS_FAST_CHECK(fn);                                                                     \
        return Value<T>(plexus::detail::math_call<T>("fast_" #fn, {x.expr()}));                    \
    }
#define PLEXUS_FAST2(fn)                                                                           \
    template <class A, class B>                                                                    \
        requires Operands<A, B>                                                                    \
    auto fn(const A& x, const B& y) {                                                              \
        using T = plexus::detail::common_t<A, B>;                                                  \
        PLEXUS_FAST_CHECK(fn);                                                                     \
        return Value<T>(plexus::detail::math_call<T>(                                              \
            "fast_" #fn, {plexus::detail::lift<T>(x).expr(), plexus::detail::lift<T>(y).expr()})); \
    }
PLEXUS_FAST1(exp)
PLEXUS_FAST1(exp2)
PLEXUS_FAST1(exp10)
PLEXUS_FAST1(log)
PLEXUS_FAST1(log2)
PLEXUS_FAST1(log10)
PLEXUS_FAST1(sin)
PLEXUS_FAST1(cos)
PLEXUS_FAST1(tan)
PLEXUS_FAST1(sqrt)
PLEXUS_FAST1(rsqrt)
PLEXUS_FAST1(recip)
PLEXUS_FAST2(pow)    // powr: x > 0
PLEXUS_FAST2(divide) // x / y
#undef PLEXUS_FAST1
#undef PLEXUS_FAST2
#undef PLEXUS_FAST_CHECK
} // namespace fast

} // namespace plexus
