// f16 and bf16 in host code, bit for bit against plexus/half.hpp: arithmetic on every 16-bit
// pattern (subnormals, ties, overflow to infinity, NaN), conversions into them from f32, f64
// and integers and out of them, each with F16C and with the integer code of a CPU without it.
#include "host_test.hpp"
#include "type_kernels.hpp"

#include "plexus/half.hpp"

#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>

using namespace host_test;

namespace {

namespace px = plexus;

// The two CPUs the host code is made for: this one, and one without F16C (the integer code).
const std::vector<std::pair<const char*, std::vector<std::string>>>& cpus() {
    static const std::vector<std::pair<const char*, std::vector<std::string>>> list = {
        {"this CPU", {}}, {"a CPU without F16C", {"-f16c"}}};
    return list;
}

std::unique_ptr<plexus::codegen::HostKernel> compile_for(const ir::Kernel& k,
                                                         const std::vector<std::string>& features) {
    plexus::codegen::Options o;
    o.backend = "native";
    return plexus::codegen::host::compile_with_features(k, o, features);
}

template <class T> float widen(uint16_t bits) {
    return float(T::from_bits(bits));
}
template <class T> uint16_t narrow(float x) {
    return T(x).bits;
}

// Counts the outputs that differ from the reference and keeps the first few for the report.
struct Mismatches {
    size_t count = 0;
    std::ostringstream first;
    void note(const std::string& what) {
        if (count++ < 8) first << what << "\n";
    }
};

// A 16-bit result against the f32 `want` rounded to T: the same bits, or NaN for NaN (whose
// payload the IR leaves open).
template <class T>
void expect_bits(Mismatches& m, uint16_t got, float want, const char* what, size_t i) {
    const bool ok = std::isnan(want) ? std::isnan(widen<T>(got)) : got == narrow<T>(want);
    if (!ok) {
        char line[160];
        std::snprintf(line, sizeof line, "%s at %zu: got 0x%04x, want 0x%04x (%.9g)", what, i,
                      unsigned(got), unsigned(narrow<T>(want)), double(want));
        m.note(line);
    }
}

// The IR of the host code says which conversion it used: LLVM's half type with F16C, none without.
void check_conversion_path(const plexus::codegen::HostKernel& hk, bool f16c, ir::Scalar t) {
    const bool uses_half = hk.llvm_ir().find(" half") != std::string::npos;
    const bool uses_bfloat = hk.llvm_ir().find("bfloat") != std::string::npos;
    CHECK_FALSE(uses_bfloat); // bf16 is integer code everywhere on the host
    CHECK(uses_half == (f16c && t == ir::Scalar::F16));
}

template <class T> void check_arith(ir::Scalar t) {
    const ir::Kernel& k = typek::half_arith(t);
    // a: every pattern four times; b: random patterns; then pairs chosen for ties and overflow.
    std::vector<uint16_t> a, b;
    for (uint32_t r = 0; r < 4; ++r)
        for (uint32_t x = 0; x < 65536; ++x) {
            a.push_back(uint16_t(x));
            b.push_back(uint16_t(rng()()));
        }
    const float one = 1.0f, max = t == ir::Scalar::F16 ? 65504.0f : widen<T>(0x7f7f);
    const float ulp_at_one = t == ir::Scalar::F16 ? 0x1p-10f : 0x1p-7f;
    const std::vector<std::pair<float, float>> chosen = {
        {one, ulp_at_one / 2},              // a tie: rounds to the even 1
        {one + ulp_at_one, ulp_at_one / 2}, // a tie: rounds up to the even neighbour
        {max, max},                         // overflow: infinity
        {max, -max},
        {widen<T>(0x0001), widen<T>(0x0001)}, // the smallest subnormal, doubled
        {widen<T>(0x03ff), widen<T>(0x0001)}, // subnormal to normal (f16), or a subnormal bf16
        {std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity()}};
    for (auto [x, y] : chosen) {
        a.push_back(narrow<T>(x));
        b.push_back(narrow<T>(y));
    }
    int32_t n = int32_t(a.size());
    T s = T(-1.5f);
    for (auto& [cpu, features] : cpus()) {
        INFO(k.name << " on " << std::string(cpu));
        auto hk = compile_for(k, features);
        check_conversion_path(*hk, features.empty(), t);
        std::vector<uint16_t> o(size_t(n) * 8, 0xdead);
        run(*hk, k, {a.data(), b.data(), o.data(), &s, &n}, grid1(n, 256));
        Mismatches m;
        for (size_t i = 0; i < size_t(n); ++i) {
            const float x = widen<T>(a[i]), y = widen<T>(b[i]);
            const uint16_t* g = &o[i * 8];
            expect_bits<T>(m, g[0], x + y, "add", i);
            expect_bits<T>(m, g[1], x - y, "sub", i);
            expect_bits<T>(m, g[2], x * y, "mul", i);
            expect_bits<T>(m, g[3], x / y, "div", i);
            // fmin / fmax return an operand; of +0 and -0 either one.
            for (int j : {4, 5}) {
                const float want = j == 4 ? ir_min(x, y) : ir_max(x, y);
                if (std::isnan(want) ? !std::isnan(widen<T>(g[j])) : widen<T>(g[j]) != want)
                    m.note(std::string(j == 4 ? "min" : "max") + " at " + std::to_string(i));
            }
            expect_bits<T>(m, g[6], -x, "neg", i);
            expect_bits<T>(m, g[7], x * float(s), "mul by a scalar parameter", i);
        }
        INFO(m.first.str());
        CHECK(m.count == 0);
    }
}

template <class T, class Other> void check_convert(ir::Scalar t) {
    const ir::Kernel& k = typek::half_convert(t);
    const size_t n = 65536;
    std::vector<float> f(n);
    std::vector<double> d(n);
    std::vector<int32_t> n32(n);
    std::vector<int64_t> n64(n);
    std::vector<uint16_t> h(n);
    for (size_t i = 0; i < n; ++i) {
        uint32_t r = uint32_t(rng()());
        // Half of f: any pattern (NaN, infinity, f32 subnormals); half: exponents around the
        // 16-bit formats' range, where their rounding and subnormals are.
        if (i % 2) r = (r & 0x807fffffu) | (uint32_t(127 - 28 + (r >> 8) % 46) << 23);
        std::memcpy(&f[i], &r, 4);
        d[i] = std::ldexp(double(int64_t(rng()()) >> 11), int(rng()() % 40) - 70);
        n32[i] = int32_t(rng()()) >> (rng()() % 32);
        n64[i] = int64_t(rng()()) >> (rng()() % 64);
        h[i] = uint16_t(i);
    }
    // Ties and boundaries of f16: 65504, 65519.99 (stays), 65520 (infinity), 2^-25 (a tie to
    // 0), 3 * 2^-25 (a tie to 2 * 2^-24), 2^-14 - 2^-25, and an f32 NaN with a low payload only.
    const float edges[] = {65504.0f,        65519.99f,       65520.0f,
                           0x1p-25f,        0x3p-25f,        0x1p-14f - 0x1p-25f,
                           1.0f + 0x1p-11f, 1.0f + 0x3p-11f, 1.0f + 0x1p-8f,
                           1.0f + 0x3p-8f,  -0.0f,           std::numeric_limits<float>::infinity(),
                           0x1.fffffep127f, 0x1p-149f};
    for (size_t e = 0; e < std::size(edges); ++e)
        f[e] = edges[e];
    const uint32_t quiet_low_nan = 0x7f800001u;
    std::memcpy(&f[std::size(edges)], &quiet_low_nan, 4);
    d[0] = 0x1.0000001p0; // f64 to f32 first: rounds to 1, then exactly 1 in the 16-bit format
    d[1] = 65519.999999999;
    n64[0] = INT64_MAX;
    n32[0] = 2049; // a tie in f16: 2048
    n32[1] = 2051; // a tie in f16: 2052

    std::vector<uint16_t> o(n * 4, 0xdead), other(n, 0xdead);
    std::vector<double> wide(n * 2);
    std::vector<int32_t> whole(n);
    int32_t nn = int32_t(n);
    for (auto& [cpu, features] : cpus()) {
        INFO(k.name << " on " << std::string(cpu));
        auto hk = compile_for(k, features);
        run(*hk, k,
            {f.data(), d.data(), n32.data(), n64.data(), h.data(), o.data(), wide.data(),
             whole.data(), other.data(), &nn},
            grid1(n, 128));
        Mismatches m;
        for (size_t i = 0; i < n; ++i) {
            expect_bits<T>(m, o[i * 4 + 0], f[i], "from f32", i);
            expect_bits<T>(m, o[i * 4 + 1], float(d[i]), "from f64", i);
            expect_bits<T>(m, o[i * 4 + 2], float(n32[i]), "from i32", i);
            expect_bits<T>(m, o[i * 4 + 3], float(n64[i]), "from i64", i);
            const float x = widen<T>(h[i]);
            const double exact = double(x);
            for (int j : {0, 1}) {
                const double w = wide[i * 2 + j];
                if (std::isnan(x) ? !std::isnan(w) : std::memcmp(&w, &exact, 8) != 0)
                    m.note("to f64 at " + std::to_string(i));
            }
            // Truncation toward zero, saturating, NaN to 0: the host's cast.
            const int32_t want_int = std::isnan(x)        ? 0
                                     : x >= 2147483648.0f ? INT32_MAX
                                     : x < -2147483648.0f ? INT32_MIN
                                                          : int32_t(x);
            if (whole[i] != want_int) m.note("to i32 at " + std::to_string(i));
            expect_bits<Other>(m, other[i], x, "to the other 16-bit float", i);
        }
        INFO(m.first.str());
        CHECK(m.count == 0);
    }
}

} // namespace

TEST_CASE("f16 arithmetic bit for bit: every pattern, ties, subnormals, overflow, NaN") {
    check_arith<px::half>(ir::Scalar::F16);
}
TEST_CASE("bf16 arithmetic bit for bit: every pattern, ties, subnormals, overflow, NaN") {
    check_arith<px::bf16>(ir::Scalar::BF16);
}
TEST_CASE("f16 conversions from f32, f64, i32, i64 and to f32, f64, i32, bf16") {
    check_convert<px::half, px::bf16>(ir::Scalar::F16);
}
TEST_CASE("bf16 conversions from f32, f64, i32, i64 and to f32, f64, i32, f16") {
    check_convert<px::bf16, px::half>(ir::Scalar::BF16);
}
