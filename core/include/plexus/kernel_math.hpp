// The math functions of the kernel language (kernel.hpp includes this header): the C99 /
// OpenCL C library on float and double (half and bf16 computed in f32; vectors lane by lane),
// through the catalog's math intrinsics.
#pragma once

#include "plexus/kernel.hpp"

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
            for (auto& x : args) a.push_back(ir::Swizzle::make(x, {l}));
            lanes.push_back(math_call<typename T::element>(name, std::move(a)));
        }
        return ir::Construct::make(type_of<T>(), std::move(lanes));
    } else if constexpr (FloatLike<T> && !std::is_floating_point_v<T>) {
        for (auto& x : args) x = ir::Cast::make(ir::Scalar::F32, x);
        return ir::Cast::make(scalar_v<T>, math_call<float>(name, std::move(args)));
    } else {
        static_assert(std::is_floating_point_v<T>, "math functions take float, double, half, bf16 or vectors of them");
        return ir::Call::make(std::string(name) + (std::same_as<T, float> ? "_f32" : "_f64"), std::move(args));
    }
}
} // namespace detail
#define PLEXUS_MATH1(fn)                                                                       \
    template <IsValue X> Value<detail::vt<X>> fn(const X& x) {                                 \
        return Value<detail::vt<X>>(detail::math_call<detail::vt<X>>(#fn, {x.expr()}));         \
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
#define PLX_LIBM2(fn)                                                                          \
    template <class A, class B> requires Operands<A, B> auto fn(const A& x, const B& y) {      \
        using T = detail::common_t<A, B>;                                                      \
        return Value<T>(detail::math_call<T>(#fn, {detail::lift<T>(x).expr(), detail::lift<T>(y).expr()})); \
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
template <IsValue X> requires std::is_floating_point_v<detail::vt<X>> Value<bool> isnan(const X& x) {
    return x != x;
}
template <IsValue X> requires std::is_floating_point_v<detail::vt<X>> Value<bool> isinf(const X& x) {
    return fabs(x) == std::numeric_limits<detail::vt<X>>::infinity();
}
template <IsValue X> requires std::is_floating_point_v<detail::vt<X>> Value<bool> signbit(const X& x) {
    using T = detail::vt<X>;
    return copysign(T(1), x) < T(0);
}
template <class A, class B> requires Operands<A, B> auto pow(const A& x, const B& y) {
    using T = detail::common_t<A, B>;
    return Value<T>(detail::math_call<T>("pow", {detail::lift<T>(x).expr(), detail::lift<T>(y).expr()}));
}
template <IsValue A, class B, class C> auto fma(const A& a, const B& b, const C& c) {
    using T = detail::vt<A>;
    return Value<T>(detail::math_call<T>("fma", {a.expr(), detail::lift<T>(b).expr(), detail::lift<T>(c).expr()}));
}
template <IsValue X, class L, class H> auto clamp(const X& x, const L& lo, const H& hi) {
    using T = detail::vt<X>;
    if constexpr (detail::FloatLike<detail::element_t<T>>)
        return Value<T>(detail::math_call<T>("clamp", {x.expr(), detail::lift<T>(lo).expr(), detail::lift<T>(hi).expr()}));
    else
        return min(max(x, detail::lift<T>(lo)), detail::lift<T>(hi));
}

} // namespace plexus
