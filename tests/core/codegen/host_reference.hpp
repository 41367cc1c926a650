// Host references of the IR's semantics for the run tests of the new types: saturating float
// to integer conversion, f16 / bf16 rounding (plexus/half.hpp) and bit comparisons that take
// any NaN for any other, as docs/ir.md leaves NaN payloads unspecified.
#pragma once

#include "plexus/half.hpp"
#include "plexus/kernel_types.hpp"

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>

namespace codegen_test {

using plexus::bf16;
using plexus::half;

// Float to integer as the backends do it: toward zero, saturating, NaN giving 0.
template <class T> T saturate(double x) {
    if (std::isnan(x)) return 0;
    if (x <= double(std::numeric_limits<T>::min())) return std::numeric_limits<T>::min();
    if (x >= double(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
    return static_cast<T>(std::trunc(x));
}

// min / max on floats as docs/ir.md says: a NaN operand yields the other one, signaling NaNs
// too (where C's fmin may return NaN; an f16 NaN widens to an f32 signaling NaN).
inline float ir_min(float a, float b) {
    return std::isnan(a) ? b : std::isnan(b) ? a : std::fmin(a, b);
}
inline float ir_max(float a, float b) {
    return std::isnan(a) ? b : std::isnan(b) ? a : std::fmax(a, b);
}

inline bool nan16(uint16_t bits, bool brain) {
    return brain ? (bits & 0x7fffu) > 0x7f80u : (bits & 0x7fffu) > 0x7c00u;
}
// f16 (brain: bf16) results: the same bits, or both NaN; by_value also takes +0 for -0
// (min / max, whose choice between zeros C leaves open).
inline bool same16(uint16_t got, uint16_t want, bool brain, bool by_value = false) {
    if (got == want || (nan16(got, brain) && nan16(want, brain))) return true;
    const float g = brain ? float(bf16::from_bits(got)) : float(half::from_bits(got));
    const float w = brain ? float(bf16::from_bits(want)) : float(half::from_bits(want));
    return by_value && g == w;
}
inline bool same32(float got, float want) {
    return std::bit_cast<uint32_t>(got) == std::bit_cast<uint32_t>(want) ||
           (std::isnan(got) && std::isnan(want));
}

// Random inputs of a test, from a fixed seed.
struct Random {
    std::mt19937 rng;
    explicit Random(unsigned seed) : rng(seed) {}
    uint32_t bits() { return rng(); }
    float uniform(float lo, float hi) { return std::uniform_real_distribution<float>(lo, hi)(rng); }
    int32_t range(int32_t lo, int32_t hi) {
        return std::uniform_int_distribution<int32_t>(lo, hi)(rng);
    }
    // A float that exercises every path of a conversion to f16: any bit pattern, the f16
    // range, its subnormals, and the exact midpoints between two halves (ties to even).
    float for_f16(int i) {
        switch (i % 4) {
        case 0: return std::bit_cast<float>(bits());
        case 1: return uniform(-70000.0f, 70000.0f);
        case 2: return uniform(-1e-4f, 1e-4f);
        default: {
            const uint16_t h = uint16_t(bits() % 0x7bffu); // finite and positive, not the largest
            const float mid =
                (float(half::from_bits(h)) + float(half::from_bits(uint16_t(h + 1)))) * 0.5f;
            return bits() & 1 ? -mid : mid;
        }
        }
    }
};

} // namespace codegen_test
