// Runs the generated code of the kernels that pin down semantics (math in f32 and f64,
// integer operations, atomics in both address spaces) and checks every element on the host.
#include "kernels.hpp"
#include "run_host.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <set>

using namespace codegen_test;

namespace {

// The host reference of the math kernels: the same sum of terms in double, with the kernel's
// constants rounded to its precision; `mag` is the sum of the terms' magnitudes.
template <class F> double math_reference(F x, double& mag) {
    auto k = [](double c) { return double(F(c)); };
    double v = x, a = std::fabs(v);
    double terms[] = {std::sin(v) * std::cos(v) + std::sqrt(a),
                      std::exp2(std::floor(v)) * 0.25,
                      -std::log2(a + 1.0),
                      std::pow(a, 1.5),
                      -std::tan(double(F(x * F(k(0.3))))),
                      std::exp(-v) * 0.125,
                      std::log(a + 0.5),
                      1.0 / std::sqrt(a + 1.0),
                      std::fmin(v, 0.5),
                      v, // fmax(v, NaN)
                      std::clamp(v, -1.0, 1.0),
                      std::ceil(v),
                      std::fmin(v, k(0.1)),
                      std::fmax(v, k(-0.1))};
    double sum = 0;
    mag = 0;
    for (double t : terms)
        sum += t, mag += std::fabs(t);
    return v < -3.5 ? -0.0 : sum;
}

template <class F> void run_math(const std::string& kernel, double tolerance) {
    const int n = 999;
    std::mt19937 rng(11);
    std::uniform_real_distribution<F> dist(F(-4), F(4));
    std::vector<F> x(n);
    for (auto& v : x)
        v = dist(rng);
    x[0] = F(-3.75); // the select's -0.0 arm
    Program k(kernel);
    Buffer<F> dx(x), dy(std::vector<F>(n, F(0)));
    launch(k, {n}, {64}, dx, dy, n);
    auto y = dy.read();
    Mismatches bad;
    for (int i = 0; i < n; ++i) {
        double mag = 0, want = math_reference(x[i], mag);
        bool ok = std::fabs(double(y[i]) - want) <= tolerance * mag;
        if (want == 0.0 && std::signbit(want)) ok = y[i] == F(0) && std::signbit(y[i]);
        if (!ok) bad.add(i, y[i], want, "y");
    }
    CHECK(bad.count == 0);
}

} // namespace

TEST_CASE("math_f32: catalog math, float min / max with NaN, select, -0.0") {
    // Tolerance: 1e-5 of the sum of the terms' magnitudes (a few ulp per OpenCL function).
    run_math<float>("math_f32", 1e-5);
}

TEST_CASE("math_f64") {
    if (!g_device->has("fp64")) {
        MESSAGE("skipped: the device has no f64");
        return;
    }
    run_math<double>("math_f64", 1e-12);
}

TEST_CASE("int_ops: shifts, signedness, wrapping, division, casts, 64-bit") {
    const int n = 1001;
    std::mt19937 rng(12);
    std::vector<int32_t> a(n), b(n);
    const int32_t edges[] = {0,
                             1,
                             -1,
                             31,
                             32,
                             33,
                             63,
                             64,
                             std::numeric_limits<int32_t>::min(),
                             std::numeric_limits<int32_t>::max()};
    for (int i = 0; i < n; ++i) {
        a[i] = i < 100 ? edges[i % 10] : int32_t(rng());
        b[i] = i < 100 ? edges[i / 10] : i % 3 ? int32_t(rng() % 80) - 8 : int32_t(rng());
    }
    Program k("int_ops");
    Buffer<int32_t> da(a), db(b), dout(std::vector<int32_t>(size_t(n) * 8, 0));
    Buffer<int64_t> dol(std::vector<int64_t>(size_t(n) * 2, 0));
    launch(k, {n}, {64}, da, db, dout, dol, n);
    auto o = dout.read();
    auto ol = dol.read();
    Mismatches bad;
    for (int i = 0; i < n; ++i) {
        const int32_t x = a[i], y = b[i];
        const uint32_t ux = uint32_t(x), uy = uint32_t(y);
        int32_t want[8] = {int32_t(ux << (uy & 31)),
                           x >> (y & 31),
                           int32_t(ux >> (uy & 31)),
                           std::min(x, y),
                           int32_t(std::max(ux, uy)),
                           int32_t(ux * uy + 0x80000000u),
                           y != 0 && y != -1 ? int32_t(uint32_t(x / y) + uint32_t(x % y)) : ~x,
                           (x > y ? int32_t(float(x) * 0.5f) : int32_t(ux & 255)) +
                               (x & 1 ? 1 : 0)};
        for (int j = 0; j < 8; ++j)
            if (o[i * 8 + j] != want[j]) bad.add(size_t(i) * 8 + j, o[i * 8 + j], want[j], "o");
        const int64_t xl = x, yl = y;
        int64_t want_l[2] = {((xl * yl) >> (yl & 63)) ^ std::numeric_limits<int64_t>::min(),
                             int64_t(((uint64_t(xl) * 0x9E3779B97F4A7C15ull) ^ ~uint64_t(yl)) +
                                     std::max<uint64_t>(uint64_t(xl), 0xFFFFFFFF00000000ull))};
        for (int j = 0; j < 2; ++j)
            if (ol[i * 2 + j] != want_l[j])
                bad.add(size_t(i) * 2 + j, ol[i * 2 + j], want_l[j], "ol");
    }
    CHECK(bad.count == 0);
}

TEST_CASE("atomics32: float atomics in both spaces, an atomic select arm, min / max, cmpxchg") {
    const int n = 1000;
    std::mt19937 rng(13);
    std::uniform_real_distribution<float> dist(-1, 1);
    std::vector<float> x(n);
    std::vector<int32_t> kv(n);
    for (int i = 0; i < n; ++i)
        x[i] = dist(rng), kv[i] = int32_t(rng() % 2001) - 1000;
    Program k("atomics32");
    Buffer<float> dx(x), dsum(std::vector<float>{0.0f});
    Buffer<int32_t> dk(kv), dimin(std::vector<int32_t>{std::numeric_limits<int32_t>::max()});
    Buffer<uint32_t> dcnt(std::vector<uint32_t>{0}), dtickets(std::vector<uint32_t>(n, 7)),
        dumax(std::vector<uint32_t>{0}), dflag(std::vector<uint32_t>{0});
    launch(k, {n}, {64}, dx, dk, dsum, dcnt, dtickets, dimin, dumax, dflag, n);

    double sum = 0, mag = 0;
    for (float v : x)
        sum += v, mag += std::fabs(v);
    float got = dsum.read()[0];
    INFO("sum " << got << ", want " << sum << " (tolerance: 1e-4 of the sum of |x|)");
    CHECK(std::fabs(got - sum) <= 1e-4 * mag);
    // Both arms of the select ran for every work-item, whatever k says.
    CHECK(dcnt.read()[0] == uint32_t(n));
    auto tickets = dtickets.read();
    std::set<uint32_t> seen;
    int positive = 0;
    for (int i = 0; i < n; ++i) {
        if (kv[i] > 0) {
            ++positive;
            CHECK(tickets[i] < uint32_t(n));
            seen.insert(tickets[i]);
        } else {
            CHECK(tickets[i] == 0xFFFFFFFFu);
        }
    }
    CHECK(seen.size() == size_t(positive)); // no ticket handed out twice
    CHECK(dimin.read()[0] == *std::min_element(kv.begin(), kv.end()));
    uint32_t umax = 0;
    for (auto v : kv)
        umax = std::max(umax, uint32_t(v)); // negative values are large unsigned
    CHECK(dumax.read()[0] == umax);
    uint32_t flag = dflag.read()[0];
    CHECK(flag >= 1);
    CHECK(flag <= uint32_t(n));
}

TEST_CASE("atomics64") {
    if (!g_device->has("int64_atomics")) {
        MESSAGE("skipped: the device lacks 64-bit atomics");
        return;
    }
    const int n = 997;
    std::mt19937_64 rng(14);
    std::vector<int64_t> v(n);
    for (auto& x : v) {
        x = int64_t(rng() % (1ull << 41)) - (1ll << 40);
        if (x == 0) x = 1; // the compare-exchange counts on nonzero values
    }
    Program k("atomics64");
    Buffer<int64_t> dv(v), dsum(std::vector<int64_t>{0, 0}),
        dmn(std::vector<int64_t>{std::numeric_limits<int64_t>::max(), 0});
    Buffer<uint64_t> dmx(std::vector<uint64_t>{0}), dbits(std::vector<uint64_t>{0, 0});
    launch(k, {n}, {64}, dv, dsum, dmn, dmx, dbits, n);
    int64_t sum = 0, mn = std::numeric_limits<int64_t>::max();
    uint64_t mx = 0, bits = 0;
    for (auto x : v)
        sum += x, mn = std::min(mn, x), mx = std::max(mx, uint64_t(x)), bits ^= uint64_t(x);
    auto s = dsum.read(), m = dmn.read();
    auto b = dbits.read();
    CHECK(s[0] == sum);
    CHECK(s[1] == -sum);
    CHECK(m[0] == mn);
    CHECK(std::find(v.begin(), v.end(), m[1]) != v.end());
    CHECK(dmx.read()[0] == mx);
    CHECK(b[0] == bits);
    CHECK(b[1] == 1u); // exactly one work-item saw the old value 0
}

TEST_CASE("atomics_float: f64 add (tickets from its old value), f32 / f64 min / max with NaN") {
    if (!g_device->has("fp64") || !g_device->has("int64_atomics")) {
        MESSAGE("skipped: the device lacks f64 or 64-bit atomics");
        return;
    }
    // Exact: y is k / 16 with |k| <= 8192, so every partial sum, in any order, is exact in
    // f64 and in f32 (|sum| <= 512000 < 2^20); min / max are exact by nature. Every 37th x is
    // NaN, which fmin / fmax ignore.
    const int n = 1000, group = 64, groups = (n + group - 1) / group;
    std::mt19937 rng(15);
    std::vector<float> x(n);
    std::vector<double> y(n);
    for (int i = 0; i < n; ++i) {
        x[i] = i % 37 == 5 ? std::numeric_limits<float>::quiet_NaN()
                           : float(int(rng() % 20001) - 10000) * 0.01f;
        y[i] = double(int(rng() % 16385) - 8192) / 16;
    }
    const float inf = std::numeric_limits<float>::infinity();
    Program k("atomics_float");
    Buffer<float> dx(x), dfsum(std::vector<float>{0.0f}), dfmm(std::vector<float>{inf, -inf});
    Buffer<double> dy(y), ddmm(std::vector<double>{inf, -inf}), ddsum(std::vector<double>{0, 0}),
        dtickets(std::vector<double>(n, -1)), dgroups(std::vector<double>(size_t(groups) * 5, 0));
    launch(k, {n}, {group}, dx, dy, dfsum, dfmm, ddmm, ddsum, dtickets, dgroups, n);

    float fsum = 0;
    double dsum = 0;
    for (double v : y)
        fsum += float(v), dsum += v;
    auto fmm = dfmm.read();
    auto dmm = ddmm.read();
    auto s = ddsum.read();
    CHECK(dfsum.read()[0] == fsum);
    CHECK(s[0] == dsum);
    CHECK(s[1] == double(n));
    auto tickets = dtickets.read();
    std::sort(tickets.begin(), tickets.end());
    Mismatches bad;
    for (int i = 0; i < n; ++i) // the old values of dsum[1] += 1: each of 0 ... n - 1 once
        if (tickets[i] != double(i)) bad.add(i, tickets[i], double(i), "sorted tickets");
    auto got = dgroups.read();
    std::vector<double> want(size_t(groups) * 5), all = { inf, -inf, inf, -inf };
    for (int g = 0; g < groups; ++g) {
        double r[5] = {inf, -inf, inf, -inf, 0};
        for (int i = g * group; i < std::min(n, (g + 1) * group); ++i) {
            r[0] = std::fmin(r[0], x[i]), r[1] = std::fmax(r[1], x[i]);
            r[2] = std::fmin(r[2], y[i]), r[3] = std::fmax(r[3], y[i]), r[4] += y[i];
        }
        for (int j = 0; j < 5; ++j)
            if (got[g * 5 + j] != r[j]) bad.add(size_t(g) * 5 + j, got[g * 5 + j], r[j], "groups");
        for (int j = 0; j < 4; ++j)
            all[j] = j % 2 ? std::fmax(all[j], r[j]) : std::fmin(all[j], r[j]);
    }
    CHECK(bad.count == 0);
    CHECK(fmm[0] == all[0]);
    CHECK(fmm[1] == all[1]);
    CHECK(dmm[0] == all[2]);
    CHECK(dmm[1] == all[3]);
}
