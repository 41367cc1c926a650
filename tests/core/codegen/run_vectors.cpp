// Runs the generated code of the vector kernel on random inputs and checks every lane of
// every output element against the host reference, exactly. Host buffers use plexus::Vec,
// whose layout is the IR's (a 3-lane vector takes 16 bytes).
#include "host_reference.hpp"
#include "kernels.hpp"
#include "run_host.hpp"

#include <algorithm>
#include <vector>

using namespace codegen_test;
using plexus::Vec;

namespace {

using F4 = Vec<float, 4>;
using F3 = Vec<float, 3>;
using I4 = Vec<int32_t, 4>;
using C8 = Vec<uint8_t, 8>;
using H4 = Vec<half, 4>;
using S4 = Vec<int8_t, 4>;
using B8 = Vec<bf16, 8>;

template <class V> std::vector<V> random_vectors(Random& r, size_t n, float lo, float hi) {
    std::vector<V> out(n);
    for (auto& v : out)
        for (int l = 0; l < V::lanes; ++l) {
            using E = typename V::element;
            if constexpr (std::is_floating_point_v<E>)
                v[l] = r.uniform(lo, hi);
            else if constexpr (std::is_integral_v<E>)
                v[l] = E(r.bits());
            else
                v[l] = E::from_bits(uint16_t(r.bits())); // half, bf16: any bit pattern
        }
    return out;
}

// Lane l of every element of `got` against want(i, l); `same` compares one lane.
template <class V, class Want, class Same>
void check_lanes(const char* what, const std::vector<V>& got, int lanes, Want want, Same same,
                 Mismatches& bad) {
    for (size_t i = 0; i < got.size(); ++i)
        for (int l = 0; l < lanes; ++l) {
            auto w = want(i, l);
            if (!same(got[i][l], w)) bad.add(i * 8 + l, +got[i][l], +w, what);
        }
}
auto exact = [](auto got, auto want) { return got == want; };
auto f32_bits = [](float got, float want) { return same32(got, want); };
auto f16_bits = [](half got, half want) { return same16(got.bits, want.bits, false); };
auto bf16_bits = [](bf16 got, bf16 want) { return same16(got.bits, want.bits, true); };

template <class T> T wrap(int64_t v) {
    return static_cast<T>(v);
}

} // namespace

TEST_CASE("vectors: lane-wise arithmetic, swizzles, broadcasts, lane stores, casts") {
    const size_t n = 700;
    Random r(31);
    auto va = random_vectors<F4>(r, n, -100, 100), vb = random_vectors<F4>(r, n, -100, 100);
    auto v3 = random_vectors<F3>(r, n, -100, 100);
    auto ia = random_vectors<I4>(r, n, 0, 0), ib = random_vectors<I4>(r, n, 0, 0);
    auto ca = random_vectors<C8>(r, n, 0, 0), cb = random_vectors<C8>(r, n, 0, 0);
    auto ha = random_vectors<H4>(r, n, 0, 0), hb = random_vectors<H4>(r, n, 0, 0);
    auto bh = random_vectors<B8>(r, n, 0, 0);
    Program k("vectors");
    Buffer<F4> dva(va), dvb(vb), of{std::vector<F4>(n * 4)};
    Buffer<F3> dv3(v3), o3{std::vector<F3>(n * 2)};
    Buffer<I4> dia(ia), dib(ib), oi{std::vector<I4>(n * 4)};
    Buffer<C8> dca(ca), dcb(cb), oc{std::vector<C8>(n * 2)};
    Buffer<H4> dha(ha), dhb(hb), oh{std::vector<H4>(n * 2)};
    Buffer<B8> dbh(bh), ob{std::vector<B8>(n)};
    Buffer<S4> os{std::vector<S4>(n * 2)};
    launch(k, {n}, {64}, dva, dvb, dv3, dia, dib, dca, dcb, dha, dhb, dbh, of, o3, oi, oc, oh, os,
           ob, int32_t(n));
    Mismatches bad;
    auto of_want = [&](size_t i, int l) {
        const size_t e = i / 4;
        const F4 &A = va[e], &Bv = vb[e];
        switch (i % 4) {
        case 0: return A[l] * Bv[l] + 2.0f; // not contracted: the product is rounded first
        case 1: return A[0] < Bv[0] ? ir_min(A[l], Bv[l]) : ir_max(A[l], Bv[l]);
        case 2: return ir_max(A[l], Bv[3 - l]);
        default: return l == 0 ? A[0] : l == 1 ? Bv[1] : l == 2 ? v3[e][2] : A[3] / Bv[3];
        }
    };
    check_lanes("of", of.read(), 4, of_want, f32_bits, bad);
    auto o3_want = [&](size_t i, int l) {
        const F3& V = v3[i / 2];
        if (i % 2 == 0) return V[2 - l] + V[l];
        return l == 0 ? va[i / 2][3] : l == 1 ? 5.0f : V[2];
    };
    check_lanes("o3", o3.read(), 3, o3_want, f32_bits, bad);
    auto oi_want = [&](size_t i, int l) {
        const int64_t A = ia[i / 4][l], Bv = ib[i / 4][l];
        switch (i % 4) {
        case 0: return wrap<int32_t>(A + Bv);
        case 1: return wrap<int32_t>(A * Bv) ^ (wrap<int32_t>(-A) ^ int32_t(~Bv));
        case 2: {
            int32_t shifts = wrap<int32_t>(A << (Bv & 31)) ^ int32_t(A >> (Bv & 31));
            return wrap<int32_t>(int64_t(shifts) +
                                 wrap<int32_t>(std::min(A, Bv) + A / ((Bv & 255) | 1)));
        }
        default: return l == 3 ? 7 : saturate<int32_t>(va[i / 4][l] * 1e9f);
        }
    };
    check_lanes("oi", oi.read(), 4, oi_want, exact, bad);
    auto oc_want = [&](size_t i, int l) {
        const C8 &A = ca[i / 2], &Bv = cb[i / 2];
        if (i % 2 == 0) return uint8_t(uint8_t(A[l] + Bv[l]) ^ uint8_t(A[l] * Bv[l]));
        return uint8_t((A[7 - l] >> (Bv[7 - l] & 7)) - std::max<uint8_t>(A[l], 100));
    };
    check_lanes("oc", oc.read(), 8, oc_want, exact, bad);
    auto oh_want = [&](size_t i, int l) {
        const float a = ha[i / 2][l], b = hb[i / 2][l];
        if (i % 2 == 0) return half(float(half(a * b)) + a);
        const float swizzled = hb[i / 2][l / 2]; // lanes 0, 0, 1, 1
        return half(float(half(va[i / 2][l])) - float(half(swizzled * float(half(0.1f)))));
    };
    check_lanes("oh", oh.read(), 4, oh_want, f16_bits, bad);
    auto os_want = [&](size_t i, int l) {
        return i % 2 == 0 ? saturate<int8_t>(va[i / 2][l]) : int8_t(ia[i / 2][l]);
    };
    check_lanes("os", os.read(), 4, os_want, exact, bad);
    auto ob_want = [&](size_t i, int l) {
        const float b = bh[i][l];
        return bf16(ir_max(b, -1.0f) * b);
    };
    check_lanes("ob", ob.read(), 8, ob_want, bf16_bits, bad);
    CHECK(bad.count == 0);
}
