// i8, u8, i16 and u16 kernels of the kernel language in host code: wrapping arithmetic, shifts
// modulo the width, division, and casts to and from i32 and f32 (saturating from floats).
#include "host_test.hpp"
#include "type_kernels.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace host_test;

namespace {

template <class T> void check_small_ints(Scalar t) {
    using U = std::make_unsigned_t<T>;
    constexpr unsigned bits = sizeof(T) * 8;
    const ir::Kernel& k = typek::small_ints(t);
    auto hk = compile(k);
    const int n = 5000;
    auto a = random_vec<T>(n, std::numeric_limits<T>::min(), std::numeric_limits<T>::max());
    auto b = random_vec<T>(n, std::numeric_limits<T>::min(), std::numeric_limits<T>::max());
    auto big = random_vec<float>(n, -70000.f, 70000.f);
    for (int i = 0; i < n; ++i) {
        if (i % 3 == 0) b[i] = T(i % 40); // shift amounts below, at and above the width
        if (b[i] == 0 || (std::is_signed_v<T> && b[i] == T(-1))) b[i] = 5;
        if (i % 5 == 0) big[i] = float(i % 300) - 150.f; // inside the narrow type's range
    }
    big[1] = NAN; // the host saturates NaN to 0
    std::vector<T> o(size_t(n) * 8);
    std::vector<int32_t> w(size_t(n) * 2);
    std::vector<float> f(size_t(n) * 2);
    int32_t nn = n;
    run(*hk, k, {a.data(), b.data(), big.data(), o.data(), w.data(), f.data(), &nn}, grid1(n, 128));
    // float to T: truncation toward zero, clamped to the range, NaN to 0.
    auto saturate = [](float x) -> T {
        if (std::isnan(x)) return T(0);
        const float lo = float(std::numeric_limits<T>::min()),
                    hi = float(std::numeric_limits<T>::max());
        return T(std::trunc(std::clamp(x, lo, hi)));
    };
    for (int i = 0; i < n; ++i) {
        const T x = a[i], y = b[i];
        const T want[8] = {T(U(x) + U(y)),
                           T(U(x) * U(y)),
                           T(x / y),
                           T(x % y),
                           T(U(U(x) << (U(y) % bits))),
                           T(x >> (U(y) % bits)),
                           T(U(0) - U(x)),
                           std::max(x, y)};
        INFO(k.name << " at " << i << ": a=" << +x << " b=" << +y << " big=" << big[i]);
        for (int j = 0; j < 8; ++j)
            REQUIRE(+o[size_t(i) * 8 + j] == +want[j]);
        REQUIRE(w[size_t(i) * 2] == int32_t(x) + int32_t(y));
        REQUIRE(w[size_t(i) * 2 + 1] == int32_t(T(std::isnan(big[i]) ? 0 : int32_t(big[i]))));
        REQUIRE(f[size_t(i) * 2] == float(x));
        REQUIRE(f[size_t(i) * 2 + 1] == float(saturate(big[i])));
    }
}

} // namespace

TEST_CASE("small integers in the kernel language: wrapping, shifts, division, casts") {
    check_small_ints<int8_t>(Scalar::I8);
    check_small_ints<uint8_t>(Scalar::U8);
    check_small_ints<int16_t>(Scalar::I16);
    check_small_ints<uint16_t>(Scalar::U16);
}
