// Scalar semantics of the IR on the interpreter's 8-byte registers: how each type sits in a
// register, conversions with C semantics but no undefined behaviour, and typed dispatch.
#pragma once

#include "program.hpp"

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <type_traits>

namespace plx_interp {

// A register holds one value as 64 bits: 32-bit types in the low half (the high half is
// ignored), bool as 0 or 1, floats by their bit pattern.
template <class C> inline C get(uint64_t v) {
    if constexpr (std::is_same_v<C, bool>) return (v & 1) != 0;
    else if constexpr (std::is_same_v<C, float>) return std::bit_cast<float>(static_cast<uint32_t>(v));
    else if constexpr (std::is_same_v<C, double>) return std::bit_cast<double>(v);
    else return static_cast<C>(v); // modular since C++20, so i32 takes the low half
}
template <class C> inline uint64_t put(C x) {
    if constexpr (std::is_same_v<C, bool>) return x ? 1 : 0;
    else if constexpr (std::is_same_v<C, float>) return std::bit_cast<uint32_t>(x);
    else if constexpr (std::is_same_v<C, double>) return std::bit_cast<uint64_t>(x);
    else if constexpr (sizeof(C) == 4) return static_cast<uint32_t>(x);
    else return static_cast<uint64_t>(x);
}

// Integer arithmetic is done in the unsigned type of the same width, which wraps.
template <class C> struct Wrap { using type = C; };
template <class C>
    requires std::is_integral_v<C> && (!std::is_same_v<C, bool>)
struct Wrap<C> { using type = std::make_unsigned_t<C>; };
template <class C> using wrap_t = typename Wrap<C>::type;

template <class C> inline C add_wrap(C x, C y) {
    using U = wrap_t<C>;
    return static_cast<C>(static_cast<U>(x) + static_cast<U>(y));
}

// C conversion; a float out of the integer's range saturates and NaN gives 0 (the IR leaves
// both undefined; this is what PTX's cvt.rzi.sat does, and it is never undefined here).
template <class D, class S> inline D convert(S x) {
    if constexpr (std::is_same_v<D, bool>) {
        return x != S(0);
    } else if constexpr (std::is_floating_point_v<S> && std::is_integral_v<D>) {
        if (std::isnan(x)) return D(0);
        const S t = std::trunc(x);
        const S hi = std::ldexp(S(1), std::numeric_limits<D>::digits); // 2^31, 2^32, 2^63, 2^64
        const S lo = std::is_signed_v<D> ? -hi : S(0);
        if (t >= hi) return std::numeric_limits<D>::max();
        if (t < lo) return std::numeric_limits<D>::min();
        return static_cast<D>(t);
    } else {
        return static_cast<D>(x);
    }
}

template <class T> struct Tag { using type = T; };

// Calls f(Tag<C>{}) with the C++ type of an arithmetic IR type.
template <class F> inline void with_arithmetic(Ty t, F&& f) {
    switch (t) {
    case Ty::I32: f(Tag<int32_t>{}); return;
    case Ty::U32: f(Tag<uint32_t>{}); return;
    case Ty::I64: f(Tag<int64_t>{}); return;
    case Ty::U64: f(Tag<uint64_t>{}); return;
    case Ty::F32: f(Tag<float>{}); return;
    case Ty::F64: f(Tag<double>{}); return;
    case Ty::Void: case Ty::Bool: break;
    }
    // The loader admits only arithmetic types here; reaching this is a bug of the plugin.
    throw std::logic_error("interp: a non-arithmetic type reached an arithmetic operation");
}
template <class F> inline void with_integer(Ty t, F&& f) {
    switch (t) {
    case Ty::I32: f(Tag<int32_t>{}); return;
    case Ty::U32: f(Tag<uint32_t>{}); return;
    case Ty::I64: f(Tag<int64_t>{}); return;
    case Ty::U64: f(Tag<uint64_t>{}); return;
    default: break;
    }
    throw std::logic_error("interp: a non-integer type reached an integer operation");
}
template <class F> inline void with_any(Ty t, F&& f) {
    if (t == Ty::Bool) f(Tag<bool>{});
    else with_arithmetic(t, f);
}

} // namespace plx_interp
