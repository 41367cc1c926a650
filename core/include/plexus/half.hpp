// IEEE binary16 (half) and bfloat16 on the host: conversions with round-to-nearest-even, and
// the 2-byte types px::half and px::bf16 that buffers and kernel values use. Every backend
// computes f16 / bf16 arithmetic in f32 and rounds each result the way these functions do,
// so they are also the host reference of the tests.
#pragma once

#include <bit>
#include <cstdint>

namespace plexus {

namespace detail {

// Half: 1 sign, 5 exponent (bias 15), 10 mantissa bits.
constexpr uint16_t f32_to_f16_bits(float value) {
    uint32_t x = std::bit_cast<uint32_t>(value);
    const uint32_t sign = (x >> 16) & 0x8000u;
    x &= 0x7fffffffu;
    if (x > 0x7f800000u) return uint16_t(sign | 0x7e00u); // NaN: the quiet NaN
    // At or above 65520 (halfway between 65504 and 2^16), the result is infinity.
    if (x >= 0x477ff000u) return uint16_t(sign | 0x7c00u);
    if (x < 0x38800000u) {
        // Below 2^-14 the result is subnormal: adding 0.5 (2^-1) shifts the value so that the
        // float adder's own round-to-nearest-even rounds it at bit 2^-24, the last bit of a
        // subnormal half; what is left above 0.5 is the half's mantissa.
        const float shifted = std::bit_cast<float>(x) + 0.5f;
        return uint16_t(sign | (std::bit_cast<uint32_t>(shifted) - 0x3f000000u));
    }
    // Normal: rebias the exponent and round the 13 dropped bits to nearest, ties to even.
    const uint32_t odd = (x >> 13) & 1u;
    x += 0xc8000fffu + odd; // (15 - 127) << 23, plus 0xfff, modulo 2^32
    return uint16_t(sign | (x >> 13));
}

constexpr float f16_bits_to_f32(uint16_t h) {
    const uint32_t sign = uint32_t(h & 0x8000u) << 16;
    const uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
    if (exp == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (mant << 13));
    if (exp == 0) {
        // Zero or subnormal: mant * 2^-24, exact in a float.
        const float magnitude = float(mant) * (1.0f / 16777216.0f);
        return sign ? -magnitude : magnitude;
    }
    return std::bit_cast<float>(sign | ((exp + 112u) << 23) | (mant << 13));
}

// bfloat16: the upper half of a float, rounded to nearest, ties to even.
constexpr uint16_t f32_to_bf16_bits(float value) {
    const uint32_t x = std::bit_cast<uint32_t>(value);
    if ((x & 0x7fffffffu) > 0x7f800000u) return uint16_t((x >> 16) | 0x40u); // quiet NaN
    return uint16_t((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

constexpr float bf16_bits_to_f32(uint16_t b) {
    return std::bit_cast<float>(uint32_t(b) << 16);
}

} // namespace detail

// The float nearest to `x` that a half can hold (what every f16 operation's result becomes).
constexpr float round_to_f16(float x) {
    return detail::f16_bits_to_f32(detail::f32_to_f16_bits(x));
}
constexpr float round_to_bf16(float x) {
    return detail::bf16_bits_to_f32(detail::f32_to_bf16_bits(x));
}

// A 2-byte IEEE half on the host: converts to and from float like the kernels do.
struct half {
    uint16_t bits = 0;
    constexpr half() = default;
    constexpr half(float x) : bits(detail::f32_to_f16_bits(x)) {}
    constexpr operator float() const { return detail::f16_bits_to_f32(bits); }
    static constexpr half from_bits(uint16_t b) {
        half h;
        h.bits = b;
        return h;
    }
};

// A 2-byte bfloat16 on the host.
struct bf16 {
    uint16_t bits = 0;
    constexpr bf16() = default;
    constexpr bf16(float x) : bits(detail::f32_to_bf16_bits(x)) {}
    constexpr operator float() const { return detail::bf16_bits_to_f32(bits); }
    static constexpr bf16 from_bits(uint16_t b) {
        bf16 h;
        h.bits = b;
        return h;
    }
};

static_assert(sizeof(half) == 2 && alignof(half) == 2 && sizeof(bf16) == 2 && alignof(bf16) == 2);
static_assert(detail::f32_to_f16_bits(1.0f) == 0x3c00 &&
              detail::f32_to_f16_bits(65504.0f) == 0x7bff);
static_assert(detail::f32_to_f16_bits(65520.0f) == 0x7c00 &&
              detail::f32_to_f16_bits(-2.0f) == 0xc000);
static_assert(detail::f32_to_f16_bits(5.9604645e-8f) == 0x0001); // the smallest subnormal
static_assert(detail::f32_to_bf16_bits(1.0f) == 0x3f80 && detail::bf16_bits_to_f32(0x3f80) == 1.0f);

} // namespace plexus
