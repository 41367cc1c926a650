// f16 and bf16 conversions written here from the IEEE rules, not taken from the core, so the
// interpreter stays an independent implementation; tests/plugins/interp checks them against
// half.hpp.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

namespace plx_interp {

// Keeps the top `keep` bits of a 32-bit significand `m` (below it, `drop` = 32 - keep bits
// are cut), rounded to nearest, ties to even. The result may carry into one more bit.
constexpr uint32_t round_significand(uint32_t m, uint32_t drop) {
    if (drop == 0) return m;
    if (drop > 31) return 0; // all of m lies below half of the last kept bit
    const uint32_t kept = m >> drop;
    const uint32_t rest = m & ((1u << drop) - 1);
    const uint32_t half = 1u << (drop - 1);
    return kept + (rest > half || (rest == half && (kept & 1u)) ? 1u : 0u);
}

// binary16: 1 sign, 5 exponent bits (bias 15), 10 fraction bits.
constexpr uint16_t f32_to_f16(float f) {
    const uint32_t x = std::bit_cast<uint32_t>(f);
    const uint16_t sign = uint16_t((x >> 16) & 0x8000u);
    const uint32_t magnitude = x & 0x7fffffffu;
    if (magnitude > 0x7f800000u) return sign | 0x7e00u; // NaN stays NaN (a quiet one)
    const int exponent = int(magnitude >> 23) - 127;    // f32 subnormals: -127, far below f16
    if (exponent > 15) return sign | 0x7c00u;           // infinity, or beyond 65504's range
    // The value is significand * 2^(exponent - 23), with the implicit bit when normal.
    const uint32_t significand = (magnitude & 0x7fffffu) | (exponent > -127 ? 0x800000u : 0u);
    if (exponent >= -14) {
        // Normal in f16: keep 11 of the 24 significand bits. A carry out of them moves the
        // result to the next exponent, which the addition below does by itself (up to 0x7c00,
        // infinity).
        const uint32_t kept = round_significand(significand, 13); // includes the 0x400 bit
        return uint16_t(sign | ((uint32_t(exponent + 14) << 10) + kept));
    }
    // Subnormal in f16: units of 2^-24, so 13 bits plus one per exponent step below -14 go.
    return uint16_t(sign | round_significand(significand, uint32_t(13 + (-14 - exponent))));
}

constexpr float f16_to_f32(uint16_t h) {
    const bool negative = (h & 0x8000u) != 0;
    const int exponent = (h >> 10) & 0x1f;
    const uint32_t fraction = h & 0x3ffu;
    float magnitude;
    if (exponent == 0x1f)
        magnitude = fraction ? std::bit_cast<float>(0x7fc00000u | (fraction << 13))
                             : std::bit_cast<float>(0x7f800000u);
    else if (exponent == 0)
        magnitude = float(fraction) / 16777216.0f; // fraction * 2^-24, exact
    else
        magnitude = std::bit_cast<float>((uint32_t(exponent - 15 + 127) << 23) | (fraction << 13));
    return negative ? -magnitude : magnitude;
}

// bfloat16: the top 16 bits of an f32, rounded to nearest, ties to even; a carry into the
// exponent (up to infinity) is what the rounding of the whole pattern gives.
constexpr uint16_t f32_to_bf16(float f) {
    const uint32_t x = std::bit_cast<uint32_t>(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return uint16_t((x >> 16) | 0x0040u); // quiet NaN
    return uint16_t(round_significand(x, 16));
}

constexpr float bf16_to_f32(uint16_t b) {
    return std::bit_cast<float>(uint32_t(b) << 16);
}

// What every f16 / bf16 result becomes: the nearest value of the type, held as an f32.
inline float round_f16(float f) {
    return f16_to_f32(f32_to_f16(f));
}
inline float round_bf16(float f) {
    return bf16_to_f32(f32_to_bf16(f));
}

} // namespace plx_interp
