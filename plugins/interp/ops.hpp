// Scalar semantics of the IR on the interpreter's 8-byte registers: how each type sits in a
// register and in memory, conversions with C semantics but no undefined behaviour, f16 / bf16
// rounding, and typed dispatch.
#pragma once

#include "half.hpp"
#include "program.hpp"

#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace plx_interp {

// A register holds one value as 64 bits: integers in their low bits (the bits above the type's
// width are ignored), bool as 0 or 1, floats by their bit pattern; f16 and bf16 as the f32 of
// their value (docs/ir.md: held as f32 in registers).
template <class C> inline C get(uint64_t v) {
    if constexpr (std::is_same_v<C, bool>)
        return (v & 1) != 0;
    else if constexpr (std::is_same_v<C, float>)
        return std::bit_cast<float>(static_cast<uint32_t>(v));
    else if constexpr (std::is_same_v<C, double>)
        return std::bit_cast<double>(v);
    else
        return static_cast<C>(v); // modular since C++20, so i8 takes the low byte
}
template <class C> inline uint64_t put(C x) {
    if constexpr (std::is_same_v<C, bool>)
        return x ? 1 : 0;
    else if constexpr (std::is_same_v<C, float>)
        return std::bit_cast<uint32_t>(x);
    else if constexpr (std::is_same_v<C, double>)
        return std::bit_cast<uint64_t>(x);
    else
        return static_cast<std::make_unsigned_t<C>>(x);
}

// A register of an f16 or bf16 value after an f32 operation: the f32 rounded to the type.
inline uint64_t round_to(Ty t, uint64_t f32_bits) {
    const float f = get<float>(f32_bits);
    return put(t == Ty::F16 ? round_f16(f) : round_bf16(f));
}
inline void round_lanes(Ty t, uint64_t* out, uint32_t n) {
    if (!ty_half(t)) return;
    for (uint32_t l = 0; l < n; ++l)
        out[l] = round_to(t, out[l]);
}

// One scalar in memory (little-endian, as every plexus backend) to a register and back; f16
// and bf16 convert exactly, since a register only ever holds values of its type.
inline uint64_t read_scalar(const std::byte* p, Ty t) {
    switch (ty_size(t)) {
    case 1: return static_cast<uint64_t>(*reinterpret_cast<const uint8_t*>(p));
    case 2: {
        uint16_t v;
        std::memcpy(&v, p, 2);
        if (t == Ty::F16) return put(f16_to_f32(v));
        if (t == Ty::BF16) return put(bf16_to_f32(v));
        return v;
    }
    case 4: {
        uint32_t v;
        std::memcpy(&v, p, 4);
        return v;
    }
    default: {
        uint64_t v;
        std::memcpy(&v, p, 8);
        return v;
    }
    }
}
inline void write_scalar(std::byte* p, Ty t, uint64_t reg) {
    switch (ty_size(t)) {
    case 1: *reinterpret_cast<uint8_t*>(p) = static_cast<uint8_t>(reg); return;
    case 2: {
        const uint16_t v = t == Ty::F16    ? f32_to_f16(get<float>(reg))
                           : t == Ty::BF16 ? f32_to_bf16(get<float>(reg))
                                           : static_cast<uint16_t>(reg);
        std::memcpy(p, &v, 2);
        return;
    }
    case 4: {
        const uint32_t v = static_cast<uint32_t>(reg);
        std::memcpy(p, &v, 4);
        return;
    }
    default: std::memcpy(p, &reg, 8); return;
    }
}

// Integer arithmetic is done in an unsigned type of at least the width of unsigned int, which
// wraps; narrower types would be promoted to (signed) int, where u16 * u16 can overflow.
template <class C> struct Wrap {
    using type = C;
};
template <class C>
    requires std::is_integral_v<C> && (!std::is_same_v<C, bool>)
struct Wrap<C> {
    using type =
        std::conditional_t<(sizeof(C) < sizeof(unsigned)), unsigned, std::make_unsigned_t<C>>;
};
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
        const S hi = std::ldexp(S(1), std::numeric_limits<D>::digits); // 2^7 ... 2^64
        const S lo = std::is_signed_v<D> ? -hi : S(0);
        if (t >= hi) return std::numeric_limits<D>::max();
        if (t < lo) return std::numeric_limits<D>::min();
        return static_cast<D>(t);
    } else {
        return static_cast<D>(x);
    }
}

template <class T> struct Tag {
    using type = T;
};

// Calls f(Tag<C>{}) with the C++ type of an integer IR type.
template <class F> inline void with_integer(Ty t, F&& f) {
    switch (t) {
    case Ty::I8: f(Tag<int8_t>{}); return;
    case Ty::U8: f(Tag<uint8_t>{}); return;
    case Ty::I16: f(Tag<int16_t>{}); return;
    case Ty::U16: f(Tag<uint16_t>{}); return;
    case Ty::I32: f(Tag<int32_t>{}); return;
    case Ty::U32: f(Tag<uint32_t>{}); return;
    case Ty::I64: f(Tag<int64_t>{}); return;
    case Ty::U64: f(Tag<uint64_t>{}); return;
    default: break;
    }
    // The loader admits only integer types here; reaching this is a bug of the plugin.
    throw std::logic_error("interp: a non-integer type reached an integer operation");
}
// The same for an arithmetic IR type: f16 and bf16 compute in float (the caller rounds the
// result, see round_lanes).
template <class F> inline void with_arithmetic(Ty t, F&& f) {
    switch (t) {
    case Ty::F16:
    case Ty::BF16:
    case Ty::F32: f(Tag<float>{}); return;
    case Ty::F64: f(Tag<double>{}); return;
    case Ty::Void:
    case Ty::Bool:
        throw std::logic_error("interp: a non-arithmetic type reached an arithmetic operation");
    default: with_integer(t, f); return;
    }
}
template <class F> inline void with_any(Ty t, F&& f) {
    if (t == Ty::Bool)
        f(Tag<bool>{});
    else
        with_arithmetic(t, f);
}

// A register's value as text, for messages: an integer with its type's signedness, a float
// in the shortest form that reads back.
inline std::string scalar_text(Ty t, uint64_t raw) {
    std::string s;
    with_any(t, [&]<class C>(Tag<C>) {
        if constexpr (std::is_floating_point_v<C>) {
            char buf[32];
            s.assign(buf, std::to_chars(buf, buf + sizeof buf, get<C>(raw)).ptr);
        } else {
            s = std::to_string(get<C>(raw));
        }
    });
    return s;
}

// An integer register as a number (a u64 above 2^63 stays positive), for checks that must
// not wrap (an index plus an offset, times a size).
inline __int128 wide_integer(Ty t, uint64_t raw) {
    __int128 v = 0;
    with_integer(t, [&]<class C>(Tag<C>) { v = get<C>(raw); });
    return v;
}
inline std::string wide_text(__int128 v) {
    if (v >= INT64_MIN && v <= INT64_MAX) return std::to_string(int64_t(v));
    return v < 0 ? "below -2^63" : "above 2^63";
}

} // namespace plx_interp
