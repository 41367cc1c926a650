// Vectors in host code: lane-wise arithmetic on f32x3, i32x4, u8x8 and f16x8, swizzles,
// broadcasts, constructors, lane writes into variables and buffers, vector casts, a private
// array of vectors; and a Vec<float, 4> add. Every lane against a host reference.
#include "host_test.hpp"
#include "type_kernels.hpp"

#include "plexus/half.hpp"

#include <algorithm>
#include <cmath>

using namespace host_test;

namespace {

namespace px = plexus;
using F3 = px::Vec<float, 3>;
using F4 = px::Vec<float, 4>;
using I4 = px::Vec<int32_t, 4>;
using U8 = px::Vec<uint8_t, 8>;
using H8 = px::Vec<px::half, 8>;

template <class V, class F> V lanes(F f) {
    V v{};
    for (int l = 0; l < V::lanes; ++l)
        v[l] = f(l);
    return v;
}

// The same value, lane by lane; NaN equals NaN (f16 NaN payloads are open).
template <class V> bool same(const V& got, const V& want) {
    for (int l = 0; l < V::lanes; ++l) {
        const auto g = got[l], w = want[l];
        if constexpr (std::is_same_v<typename V::element, px::half> ||
                      std::is_same_v<typename V::element, px::bf16>) {
            if (std::isnan(float(w)) ? !std::isnan(float(g)) : g.bits != w.bits) return false;
        } else if constexpr (std::is_floating_point_v<typename V::element>) {
            if (std::isnan(w) ? !std::isnan(g) : g != w) return false;
        } else if (g != w) {
            return false;
        }
    }
    return true;
}

px::half h16(float x) {
    return px::half(x);
}

} // namespace

TEST_CASE("Vec<float, 4> add: every element") {
    const ir::Kernel& k = typek::vector_add4();
    auto hk = compile(k);
    const int n = 1001;
    std::vector<F4> a(n), b(n), c(n + 1);
    for (int i = 0; i < n; ++i) {
        a[i] = lanes<F4>([](int) { return float(rng()() % 2001) - 1000.f; });
        b[i] = lanes<F4>([](int) { return float(rng()() % 2001) * 0.25f; });
    }
    c[n] = lanes<F4>([](int) { return -7.f; });
    int32_t nn = n;
    run(*hk, k, {a.data(), b.data(), c.data(), &nn}, grid1(n, 64));
    for (int i = 0; i < n; ++i)
        REQUIRE(same(c[i], lanes<F4>([&](int l) { return a[i][l] + b[i][l]; })));
    CHECK(c[n][0] == -7.f); // nothing past the end
}

TEST_CASE("bf16x3: arithmetic and a vector cast, bit for bit; the fourth 16-bit lane is padding") {
    using B3 = px::Vec<px::bf16, 3>;
    const ir::Kernel& k = typek::bf16_vectors();
    auto hk = compile(k);
    const int n = 2000;
    std::vector<B3> a(n), b(n);
    for (int i = 0; i < n; ++i) {
        a[i] = lanes<B3>([](int) { return px::bf16::from_bits(uint16_t(rng()())); });
        b[i] = lanes<B3>([](int) { return px::bf16::from_bits(uint16_t(rng()())); });
    }
    std::vector<B3> o(size_t(n) * 3);
    int32_t nn = n;
    run(*hk, k, {a.data(), b.data(), o.data(), &nn}, grid1(n, 64));
    auto f = [](px::bf16 v) { return float(v); };
    for (int i = 0; i < n; ++i) {
        const B3 want[3] = {lanes<B3>([&](int l) { return px::bf16(f(a[i][l]) + f(b[i][l])); }),
                            lanes<B3>([&](int l) { return px::bf16(f(a[i][l]) * f(b[i][l])); }),
                            lanes<B3>([&](int l) { return px::bf16(f(a[i][l]) / 3.0f); })};
        for (int j = 0; j < 3; ++j) {
            INFO("element " << i << " output " << j);
            REQUIRE(same(o[size_t(i) * 3 + j], want[j]));
        }
    }
}

TEST_CASE("vector operations, swizzles, constructors, lane writes and casts, lane by lane") {
    const ir::Kernel& k = typek::vector_ops();
    const int n = 777;
    std::vector<F3> a(n), b(n);
    std::vector<I4> ia(n), ib(n);
    std::vector<U8> ua(n), ub(n);
    std::vector<H8> ha(n), hb(n);
    for (int i = 0; i < n; ++i) {
        a[i] = lanes<F3>([](int) { return float(int(rng()() % 20001) - 10000) * 0.001f; });
        b[i] =
            lanes<F3>([](int) { return float(int(rng()() % 20001) - 10000) * 0.001f + 0.0005f; });
        ia[i] = lanes<I4>([](int) { return int32_t(rng()()); });
        ib[i] = lanes<I4>([&](int l) {
            int32_t v =
                l == 0 && i % 2 ? int32_t(rng()() % 40) : int32_t(rng()()); // shift amounts too
            return v == 0 || v == -1 ? 3 : v;
        });
        ua[i] = lanes<U8>([](int) { return uint8_t(rng()()); });
        ub[i] = lanes<U8>([](int) { return uint8_t(rng()()); });
        ha[i] = lanes<H8>([](int) { return px::half::from_bits(uint16_t(rng()())); });
        hb[i] = lanes<H8>([](int) { return px::half::from_bits(uint16_t(rng()())); });
    }
    const int32_t sentinel = 0x5a5a5a5a;
    for (auto& [cpu, features] : std::vector<std::pair<const char*, std::vector<std::string>>>{
             {"this CPU", {}}, {"no F16C", {"-f16c"}}}) {
        INFO("on " << std::string(cpu));
        plexus::codegen::Options o;
        o.backend = "native";
        auto hk = plexus::codegen::host::compile_with_features(k, o, features);
        std::vector<F3> of(size_t(n) * 10);
        std::vector<I4> oi(size_t(n) * 16, lanes<I4>([&](int) { return sentinel; }));
        std::vector<U8> ou(size_t(n) * 5);
        std::vector<H8> oh(size_t(n) * 6);
        std::vector<F4> of4(size_t(n) * 3);
        int32_t nn = n;
        run(*hk, k,
            {a.data(), b.data(), ia.data(), ib.data(), ua.data(), ub.data(), ha.data(), hb.data(),
             of.data(), oi.data(), ou.data(), oh.data(), of4.data(), &nn},
            grid1(n, 64));
        for (int i = 0; i < n; ++i) {
            INFO("element " << i);
            const F3 x = a[i], y = b[i];
            const F3 wf[10] = {lanes<F3>([&](int l) { return x[l] + y[l]; }),
                               lanes<F3>([&](int l) { return x[l] - y[l]; }),
                               lanes<F3>([&](int l) { return x[l] * y[l]; }),
                               lanes<F3>([&](int l) { return x[l] / y[l]; }),
                               lanes<F3>([&](int l) { return std::fmin(x[l], y[l]); }),
                               lanes<F3>([&](int l) { return -x[l]; }),
                               F3{{x[2], x[1], x[0]}},
                               F3{{y[2], x[0], 2.5f}},
                               F3{{x[1], x[1], x[1]}},
                               F3{{x[0], y[0], x[2] + 1.0f}}};
            for (int j = 0; j < 10; ++j) {
                INFO("f32x3 output " << j);
                REQUIRE(same(of[size_t(i) * 10 + j], wf[j]));
            }
            const I4 p = ia[i], q = ib[i];
            auto u = [](int32_t v) { return uint32_t(v); };
            const I4 wi[16] = {lanes<I4>([&](int l) { return int32_t(u(p[l]) + u(q[l])); }),
                               lanes<I4>([&](int l) { return int32_t(u(p[l]) - u(q[l])); }),
                               lanes<I4>([&](int l) { return int32_t(u(p[l]) * u(q[l])); }),
                               lanes<I4>([&](int l) { return p[l] / q[l]; }),
                               lanes<I4>([&](int l) { return p[l] % q[l]; }),
                               lanes<I4>([&](int l) { return p[l] & q[l]; }),
                               lanes<I4>([&](int l) { return p[l] ^ q[l]; }),
                               lanes<I4>([&](int l) { return int32_t(u(p[l]) << (u(q[l]) % 32)); }),
                               lanes<I4>([&](int l) { return p[l] >> (u(q[l]) % 32); }),
                               lanes<I4>([&](int l) { return ~p[l]; }),
                               lanes<I4>([&](int l) { return std::max(p[l], q[l]); }),
                               I4{{p[3], p[2], p[1], p[0]}},
                               I4{{p[0], p[0], p[3], p[1]}},
                               I4{{int32_t(x[0]), int32_t(x[1]), int32_t(x[2]), int32_t(y[0])}},
                               I4{{p[0], p[1], 77, p[3]}},
                               I4{{sentinel, q[0], sentinel, sentinel}}};
            for (int j = 0; j < 16; ++j) {
                INFO("i32x4 output " << j);
                REQUIRE(same(oi[size_t(i) * 16 + j], wi[j]));
            }
            const U8 c = ua[i], d = ub[i];
            const U8 wu[5] = {lanes<U8>([&](int l) { return uint8_t(c[l] + d[l]); }),
                              lanes<U8>([&](int l) { return uint8_t(c[l] * d[l]); }),
                              lanes<U8>([&](int l) { return uint8_t(c[l] >> (d[l] % 8)); }),
                              lanes<U8>([&](int l) { return std::min(c[l], d[l]); }),
                              lanes<U8>([&](int l) { return uint8_t(int8_t(c[l]) >> 1); })};
            for (int j = 0; j < 5; ++j) {
                INFO("u8x8 output " << j);
                REQUIRE(same(ou[size_t(i) * 5 + j], wu[j]));
            }
            const H8 e = ha[i], g = hb[i];
            auto f = [](px::half v) { return float(v); };
            const H8 wh[6] = {lanes<H8>([&](int l) { return h16(f(e[l]) + f(g[l])); }),
                              lanes<H8>([&](int l) { return h16(f(e[l]) * f(g[l])); }),
                              lanes<H8>([&](int l) { return h16(f(e[l]) / f(g[l])); }),
                              lanes<H8>([&](int l) { return h16(-f(e[l])); }),
                              lanes<H8>([&](int l) { return h16(ir_max(f(e[l]), f(g[l]))); }),
                              lanes<H8>([&](int l) { return h16(float(c[l]) * 0.1f); })};
            for (int j = 0; j < 6; ++j) {
                INFO("f16x8 output " << j);
                const H8& got = oh[size_t(i) * 6 + j];
                // fmax of +0 and -0 may give either zero.
                if (j == 4) {
                    for (int l = 0; l < 8; ++l)
                        REQUIRE((std::isnan(f(wh[j][l])) ? std::isnan(f(got[l]))
                                                         : f(got[l]) == f(wh[j][l])));
                } else {
                    REQUIRE(same(got, wh[j]));
                }
            }
            float sum[4];
            for (int l = 0; l < 4; ++l) {
                sum[l] = 0.0f;
                for (int j : {1, 2, 3, 0})
                    sum[l] += float(p[l]) * float(j);
            }
            const F4 w4[3] = {lanes<F4>([&](int l) { return float(p[l]); }),
                              lanes<F4>([&](int l) { return f(e[l]); }),
                              F4{{sum[0], sum[1], sum[2], sum[3]}}};
            for (int j = 0; j < 3; ++j) {
                INFO("f32x4 output " << j);
                REQUIRE(same(of4[size_t(i) * 3 + j], w4[j]));
            }
        }
    }
}

TEST_CASE("vectors in lock step: f16, f32, i32 and u8 vectors in a loop of per-lane trip counts, "
          "across barriers, at every vector width") {
    // The host keeps a vector variable one array per lane (per work-item copies and lock-step
    // lane frames) and splits the vector operations of such a region into lanes before
    // LoopVectorize (jit.cpp, SplitVectors); every lane of every output against the reference,
    // exactly (the same operations in the same order).
    using H3 = px::Vec<px::half, 3>;
    using I2 = px::Vec<int32_t, 2>;
    using U4 = px::Vec<uint8_t, 4>;
    const ir::Kernel& k = typek::vectors_lockstep();
    const int n = 300;
    std::vector<H3> ha(n);
    std::vector<int32_t> trips(n);
    for (int i = 0; i < n; ++i) {
        ha[i] = lanes<H3>([](int) { return h16(float(int(rng()() % 801) - 400) * 0.01f); });
        trips[i] = int32_t(rng()() % 21);
    }
    for (const std::string& features : feature_sets()) {
        const plexus::codegen::Options o = native_options(features);
        auto hk = plexus::codegen::host::compile_with_features(k, o, {});
        if (plexus::codegen::host::vector_bits(o) >= 64) {
            const std::string lowered = plexus::codegen::host_llvm_ir(k, o, false);
            CHECK(lowered.find("lockstep.head") != std::string::npos);
            CHECK(lowered.find("plexus-split-vectors") != std::string::npos);
        }
        for (uint32_t local : {1u, 7u, 16u, 37u, 64u}) {
            CAPTURE(features);
            CAPTURE(local);
            std::vector<H3> oh(n);
            std::vector<F3> of(n);
            std::vector<I2> oc(n);
            std::vector<U4> ou(n);
            int32_t nn = n;
            run(*hk, k, {ha.data(), trips.data(), oh.data(), of.data(), oc.data(), ou.data(), &nn},
                grid1(n, local));
            int bad = 0;
            for (int i = 0; i < n; ++i) {
                const int size = int(local), base = i / size * size, l = i % size;
                auto tile = [&](int at) {
                    return lanes<F3>(
                        [&](int q) { return float(ha[std::min(base + at, n - 1)][q]); });
                };
                H3 h = ha[i];
                I2 c = lanes<I2>([&](int q) { return q == 0 ? i : -i; });
                U4 u = lanes<U4>([&](int q) { return uint8_t(i + q); });
                F3 acc = lanes<F3>([](int) { return 0.0f; });
                F3 s = tile(l);
                const F3 t = tile((l + 1) % size);
                for (int kk = 0; kk < trips[i]; ++kk) {
                    const F3 tk = tile((l + kk) % size);
                    for (int q = 0; q < 3; ++q) {
                        const float d = tk[q] - acc[q] * 0.5f;
                        acc[q] = acc[q] + d * 0.25f;
                        s[q] = s[q] * 0.5f + d;
                    }
                    c[0] += kk;
                    c[1] += 1;
                    for (int q = 0; q < 4; ++q)
                        u[q] = uint8_t(u[q] + (q == 0 ? kk : q));
                    if (kk % 2 == 1)
                        for (int q = 0; q < 3; ++q)
                            h[q] = h16(float(h[q]) + float(h16(acc[2 - q])));
                }
                for (int q = 0; q < 3; ++q)
                    acc[q] = acc[q] + (s[q] * 0.125f + t[q]);
                const F3 want_f = lanes<F3>([&](int q) { return acc[q] * 2.0f - acc[q]; });
                if ((!same(oh[i], h) || !same(of[i], want_f) || !same(oc[i], c) ||
                     !same(ou[i], u)) &&
                    ++bad <= 5)
                    FAIL_CHECK("work-item "
                               << i << ": h " << float(oh[i][0]) << ", " << float(oh[i][1]) << ", "
                               << float(oh[i][2]) << " want " << float(h[0]) << ", " << float(h[1])
                               << ", " << float(h[2]) << "; f.x " << of[i][0] << " want "
                               << want_f[0] << "; c " << oc[i][0] << ", " << oc[i][1] << " want "
                               << c[0] << ", " << c[1] << "; u.w " << int(ou[i][3]) << " want "
                               << int(u[3]));
            }
            CHECK(bad == 0);
        }
    }
}

TEST_CASE("guarded chunks: float4 work-items whose guard holds for all, some or none of a chunk, "
          "at each width") {
    // `j = 2 i + 1; if (j % m != 0 && i < n) c[i] = a[i] * scale[i / cols] + j`: pure Lets and a
    // pure guard, so a chunk of W work-items asks first whether all of them pass and then runs
    // the float4 arithmetic unmasked, W work-items per vector, else masked (work_group.cpp,
    // guarded_chunk). m = 1 fails every work-item, m = 3 one in three (mixed chunks), a large
    // m none; n cuts the last chunks. The division by the runtime `cols` and `m` is in doubles.
    static const auto k = px::kernel(
        "guarded_float4", {"a", "scale", "c", "n", "m", "cols"},
        [](px::In<F4> a, px::In<float> scale, px::Out<F4> c, px::Int n, px::Int m, px::Int cols) {
            px::Int i = px::global_id(0);
            px::Int j = i * 2 + 1;
            px::If(j % m != 0 && i < n,
                   [&] { c[i] = a[i] * scale[i / cols] + px::cast<float>(j); });
        });
    const ir::Kernel& ir = k.ir();
    for (const std::string& features : feature_sets()) {
        CAPTURE(features);
        CHECK(plexus::codegen::host_llvm_ir(ir, native_options(features), false).find("wi.xg") !=
              std::string::npos);
        auto hk = compile(ir, features);
        for (int n : {1, 15, 16, 17, 1000, 4099}) {
            for (int m : {1, 3, 1 << 30}) {
                for (int cols : {1, 7, 64}) {
                    CAPTURE(n);
                    CAPTURE(m);
                    CAPTURE(cols);
                    std::vector<F4> a(static_cast<size_t>(n));
                    std::vector<float> scale(size_t(n / cols + 1));
                    for (F4& v : a)
                        v = lanes<F4>([](int) { return float(rng()() % 2001) - 1000.f; });
                    for (float& s : scale)
                        s = float(rng()() % 17) * 0.125f - 1.f;
                    std::vector<F4> c(size_t(n) + 1, lanes<F4>([](int) { return -7.f; }));
                    int32_t nn = n, mm = m, cc = cols;
                    run(*hk, ir, {a.data(), scale.data(), c.data(), &nn, &mm, &cc},
                        grid1(uint64_t(n + 63) / 64 * 64, 64));
                    int bad = 0;
                    for (int i = 0; i <= n; ++i) {
                        const int j = 2 * i + 1;
                        const F4 want = i < n && j % m != 0 ? lanes<F4>([&](int l) {
                            return a[size_t(i)][l] * scale[size_t(i / cols)] + float(j);
                        })
                                                            : lanes<F4>([](int) { return -7.f; });
                        bad += !same(c[size_t(i)], want);
                    }
                    CHECK(bad == 0);
                }
            }
        }
    }
}
