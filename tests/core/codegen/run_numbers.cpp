// Runs the generated code of the narrow-integer and f16 / bf16 kernels on random inputs
// and checks every output element against the host reference, exactly: integers wrap and
// saturate as docs/ir.md says, f16 and bf16 round bit for bit as plexus/half.hpp does.
#include "host_reference.hpp"
#include "kernels.hpp"
#include "run_host.hpp"

#include <algorithm>
#include <array>
#include <vector>

using namespace codegen_test;

namespace {

template <class T> std::vector<T> random_ints(Random& r, size_t n) {
    std::vector<T> v(n);
    for (auto& x : v)
        x = T(r.bits());
    return v;
}

// The twelve slots of narrow_slots (kernels_types.cpp) for one element of type T.
template <class T>
std::array<T, small_per> narrow_reference(T a, T b, T max_with, T extra, float x) {
    using W = int64_t; // holds every result before it wraps to T
    constexpr int mask = int(sizeof(T) * 8 - 1);
    const bool positive = b > T(0);
    return {T(W(a) + W(b)),
            T(W(a) - W(b)),
            T(W(a) * W(b)),
            positive ? T(W(a) / W(b)) : T(a ^ b),
            positive ? T(W(a) % W(b)) : T(~a),
            T(W(a) << (b & mask)),
            T(W(a) >> (b & mask)),
            std::min(a, b),
            std::max(a, max_with),
            T(-W(a)),
            extra,
            saturate<T>(x)};
}

template <class T>
void check_slots(const char* what, const std::vector<T>& got, size_t i,
                 const std::array<T, small_per>& want, Mismatches& bad) {
    for (int s = 0; s < small_per; ++s)
        if (got[i * small_per + s] != want[s])
            bad.add(i * small_per + s, int64_t(got[i * small_per + s]), int64_t(want[s]), what);
}

// The half_per slots of half_ops (kernels_types.cpp) in the format H (half or bf16): each
// operation rounded to the type once, as the kernel rounds it.
template <class H>
std::array<uint16_t, half_per> half_slots(float a, float b, float s, float x, float slot9) {
    return {H(a + b).bits,
            H(a - b).bits,
            H(a * b).bits,
            H(a / b).bits,
            H(ir_min(a, b)).bits,
            H(ir_max(a, b)).bits,
            H(-a).bits,
            H(float(H(a * s)) + b).bits,
            H(x).bits,
            H(slot9).bits};
}

} // namespace

TEST_CASE("small_ints: i8 / u8 / i16 / u16 wrap, shift modulo the width, saturate from float") {
    const size_t n = 1000;
    Random r(21);
    auto a = random_ints<int8_t>(r, n), b = random_ints<int8_t>(r, n);
    auto c = random_ints<uint8_t>(r, n), d = random_ints<uint8_t>(r, n);
    auto e = random_ints<int16_t>(r, n), f = random_ints<int16_t>(r, n);
    auto g = random_ints<uint16_t>(r, n), h = random_ints<uint16_t>(r, n);
    std::vector<float> x(n);
    for (size_t i = 0; i < n; ++i)
        x[i] = i % 3 ? r.uniform(-70000.0f, 70000.0f) : r.for_f16(int(i / 3));
    const int8_t s8 = -7;
    const uint16_t s16 = 40000;
    Program k("small_ints");
    Buffer<int8_t> da(a), db(b), o8{std::vector<int8_t>(n * small_per)};
    Buffer<uint8_t> dc(c), dd(d), ou8{std::vector<uint8_t>(n * small_per)};
    Buffer<int16_t> de(e), df(f), o16{std::vector<int16_t>(n * small_per)};
    Buffer<uint16_t> dg(g), dh(h), ou16{std::vector<uint16_t>(n * small_per)};
    Buffer<float> dx(x);
    Buffer<int32_t> oi{std::vector<int32_t>(n * small_per)};
    launch(k, {n}, {64}, da, db, dc, dd, de, df, dg, dh, dx, o8, ou8, o16, ou16, oi, int32_t(n), s8,
           s16);
    auto g8 = o8.read();
    auto gu8 = ou8.read();
    auto g16 = o16.read();
    auto gu16 = ou16.read();
    auto gi = oi.read();
    Mismatches bad;
    for (size_t i = 0; i < n; ++i) {
        const int8_t A = a[i], B = b[i];
        const uint8_t C = c[i], D = d[i];
        const int16_t E = e[i], F = f[i];
        const uint16_t G = g[i], H = h[i];
        check_slots("o8", g8, i,
                    narrow_reference<int8_t>(A, B, s8, int8_t((A & B) | (A ^ -128)), x[i]), bad);
        check_slots("ou8", gu8, i,
                    narrow_reference<uint8_t>(C, D, 200, uint8_t((C | D) ^ 255), x[i]), bad);
        check_slots("o16", g16, i, narrow_reference<int16_t>(E, F, -1000, A, x[i]), bad);
        check_slots("ou16", gu16, i, narrow_reference<uint16_t>(G, H, s16, uint16_t(A), x[i]), bad);
        int8_t acc = 0;
        for (int j = 0; j < 5; ++j)
            acc = int8_t(acc + A);
        const std::array<int32_t, small_per> want = {
            A,   C,         E,          G,          A<B, G> H, saturate<int32_t>(float(G) * 0.5f),
            acc, int8_t(E), int16_t(G), uint8_t(E), B != 0};
        check_slots("oi", gi, i, want, bad);
    }
    CHECK(bad.count == 0);
}

TEST_CASE("half_ops: f16 and bf16 arithmetic, conversions and comparisons, bit for bit") {
    const size_t n = 2000;
    Random r(22);
    std::vector<uint16_t> xa(n), xb(n), ya(n), yb(n);
    std::vector<float> x(n);
    std::vector<int32_t> kv(n);
    for (size_t i = 0; i < n; ++i) {
        xa[i] = uint16_t(r.bits()), xb[i] = uint16_t(r.bits()), ya[i] = uint16_t(r.bits()),
        yb[i] = uint16_t(r.bits());
        x[i] = r.for_f16(int(i));
        kv[i] = i % 2 ? int32_t(r.bits()) : r.range(-70000, 70000);
    }
    const half hs(0.1f);
    const bf16 bs(0.3f);
    Program k("half_ops");
    Buffer<uint16_t> dxa(xa), dxb(xb), dya(ya), dyb(yb), oh{std::vector<uint16_t>(n * half_per)},
        ob{std::vector<uint16_t>(n * half_per)};
    Buffer<float> dx(x), of{std::vector<float>(n * half_f32_per)};
    Buffer<int32_t> dk(kv), oi{std::vector<int32_t>(n * half_i32_per)};
    launch(k, {n}, {64}, dxa, dxb, dya, dyb, dx, dk, oh, ob, of, oi, int32_t(n), hs.bits, bs.bits);
    auto goh = oh.read(), gob = ob.read();
    auto gof = of.read();
    auto goi = oi.read();
    Mismatches bad;
    for (size_t i = 0; i < n; ++i) {
        const float ha = half::from_bits(xa[i]), hb = half::from_bits(xb[i]);
        const float ba = bf16::from_bits(ya[i]), bb = bf16::from_bits(yb[i]);
        const auto want_h =
            half_slots<half>(ha, hb, hs, x[i], float(half(float(kv[i]))) + float(half(0.1f)));
        const auto want_b = half_slots<bf16>(ba, bb, bs, x[i], ha);
        for (int s = 0; s < half_per; ++s) {
            const size_t at = i * half_per + s;
            const bool by_value = s == 4 || s == 5;
            if (!same16(goh[at], want_h[s], false, by_value)) bad.add(at, goh[at], want_h[s], "oh");
            if (!same16(gob[at], want_b[s], true, by_value)) bad.add(at, gob[at], want_b[s], "ob");
        }
        const std::array<float, half_f32_per> want_f = {ha, ba, ha * ba, float(half(ba))};
        for (int s = 0; s < half_f32_per; ++s)
            if (!same32(gof[i * half_f32_per + s], want_f[s]))
                bad.add(i * half_f32_per + s, gof[i * half_f32_per + s], want_f[s], "of");
        const std::array<int32_t, half_i32_per> want_i = {
            saturate<int32_t>(ha), saturate<int32_t>(ba), ha < hb, ba == bb,
            saturate<uint8_t>(ha), saturate<int16_t>(ba)};
        for (int s = 0; s < half_i32_per; ++s)
            if (goi[i * half_i32_per + s] != want_i[s])
                bad.add(i * half_i32_per + s, goi[i * half_i32_per + s], want_i[s], "oi");
    }
    CHECK(bad.count == 0);
}

TEST_CASE("conversions: f32 and f64 to every integer saturate (NaN gives 0); into f16 / bf16 "
          "through f32") {
    if (!g_device->has("fp64")) {
        MESSAGE("skipped: the device has no f64");
        return;
    }
    const size_t n = 1500;
    Random r(23);
    std::vector<float> x(n);
    std::vector<double> y(n);
    std::vector<int64_t> kv(n);
    for (size_t i = 0; i < n; ++i) {
        x[i] = i % 2 ? r.for_f16(int(i / 2)) : std::bit_cast<float>(r.bits()) * 1e-20f;
        const double m = r.for_f16(3); // a midpoint between two halves, exact in f32
        switch (i % 4) {
        case 0: y[i] = std::bit_cast<double>((uint64_t(r.bits()) << 32) | r.bits()); break;
        case 1: y[i] = double(r.uniform(-1e20f, 1e20f)) * (1 + 1e-12); break;
        case 2: y[i] = double(r.uniform(-70000.0f, 70000.0f)) + 1e-9; break;
        // Just above a midpoint: rounded to f32 first it is the midpoint, which then rounds
        // to even, where rounding f64 to f16 at once would round away from it.
        default: y[i] = m * (1 + 0x1p-30); break;
        }
        kv[i] = i % 2 ? int64_t((uint64_t(r.bits()) << 32) | r.bits()) : r.range(-70000, 70000);
    }
    Program k("conversions");
    Buffer<float> dx(x);
    Buffer<double> dy(y);
    Buffer<int64_t> dk(kv), oi{std::vector<int64_t>(n * 16)};
    Buffer<half> oh{std::vector<half>(n * 2)};
    Buffer<bf16> ob{std::vector<bf16>(n * 2)};
    launch(k, {n}, {64}, dx, dy, dk, oi, oh, ob, int32_t(n));
    auto gi = oi.read();
    auto gh = oh.read();
    auto gb = ob.read();
    Mismatches bad;
    for (size_t i = 0; i < n; ++i) {
        for (int from = 0; from < 2; ++from) {
            const double v = from ? y[i] : double(x[i]);
            const int64_t want[8] = {saturate<int8_t>(v),  saturate<uint8_t>(v),
                                     saturate<int16_t>(v), saturate<uint16_t>(v),
                                     saturate<int32_t>(v), saturate<uint32_t>(v),
                                     saturate<int64_t>(v), int64_t(saturate<uint64_t>(v))};
            for (int t = 0; t < 8; ++t)
                if (gi[i * 16 + from * 8 + t] != want[t])
                    bad.add(i * 16 + from * 8 + t, gi[i * 16 + from * 8 + t], want[t], "oi");
        }
        const half wh[2] = {half(float(y[i])), half(float(kv[i]))};
        const bf16 wb[2] = {bf16(float(y[i])), bf16(float(kv[i]))};
        for (int s = 0; s < 2; ++s) {
            if (!same16(gh[i * 2 + s].bits, wh[s].bits, false))
                bad.add(i * 2 + s, float(gh[i * 2 + s]), float(wh[s]), "oh");
            if (!same16(gb[i * 2 + s].bits, wb[s].bits, true))
                bad.add(i * 2 + s, float(gb[i * 2 + s]), float(wb[s]), "ob");
        }
    }
    CHECK(bad.count == 0);
}
