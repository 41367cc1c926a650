// Vectors in kernel-language kernels: lane-wise ops with broadcasts, swizzles, constructors,
// casts, one-lane writes, self-overwriting values and the 3-lane layout, checked lane by lane.
#include "fixture.hpp"

#include <plexus/kernel.hpp>

#include <algorithm>
#include <bit>
#include <cmath>

namespace interp_test {
namespace {

namespace px = plexus;
using F4 = px::Vec<float, 4>;
using F3 = px::Vec<float, 3>;
using I4 = px::Vec<int32_t, 4>;
using U8x4 = px::Vec<uint8_t, 4>;
using S2 = px::Vec<int16_t, 2>;
using H8 = px::Vec<px::half, 8>;

template <class V> std::vector<V> random_vecs(size_t n, float lo, float hi) {
    std::vector<V> v(n);
    for (auto& x : v)
        for (int l = 0; l < V::lanes; ++l)
            x[l] = typename V::element(random_vector<float>(1, lo, hi)[0]);
    return v;
}

} // namespace

TEST_CASE("float vectors: lane-wise ops, broadcast, swizzles, constructors, casts, lane writes") {
    auto k = px::kernel("vec_f32", {"a", "b", "sum", "shuf", "xyz", "lanes", "ints", "n"},
                        [](px::In<F4> a, px::In<F4> b, px::Out<F4> sum, px::Out<F4> shuf,
                           px::Out<F3> xyz, px::InOut<F4> lanes, px::Out<I4> ints, px::Int n) {
                            px::Int i = px::global_id(0);
                            px::If(i < n, [&] {
                                px::Var<F4> x = a[i], y = b[i];
                                sum[i] = x * y + 2.0f - px::min(x, y) / -y;
                                shuf[i] = x.swizzle<3, 3, 0, 1>() +
                                          px::make<F4>(y.y(), y.x(), 1.0f, x.w() * y.w());
                                xyz[i] = x.zyx();
                                // A value that reads the lanes it replaces, in a variable and in
                                // memory.
                                x = x.swizzle<1, 0, 3, 2>();
                                lanes[i] = lanes[i].wzyx();
                                lanes[i].y() = x.x();
                                ints[i] = px::cast<I4>(x * 3.0f);
                            });
                        });
    const int n = 300;
    auto a = random_vecs<F4>(n, -50.f, 50.f), b = random_vecs<F4>(n, -50.f, 50.f);
    auto l0 = random_vecs<F4>(n, -1.f, 1.f);
    // xyz's fourth lane (bytes 12..15 of each 16) holds a sentinel that no store may touch.
    std::vector<uint32_t> xyz_init(size_t(n) * 4, 0xabababab);
    Buffer ba(a), bb(b), bsum(n * sizeof(F4)), bshuf(n * sizeof(F4)), bxyz(xyz_init), blanes(l0),
        bints(n * sizeof(I4));
    Module m(k.ir());
    REQUIRE(m.status() == PLX_OK);
    REQUIRE(launch(m.kernel(), dims1(n, 32), {ba, bb, bsum, bshuf, bxyz, blanes, bints, n}) ==
            PLX_OK);
    const auto sum = bsum.read<F4>(), shuf = bshuf.read<F4>(), lanes = blanes.read<F4>();
    const auto xyz = bxyz.read<uint32_t>();
    const auto ints = bints.read<I4>();
    for (int i = 0; i < n; ++i) {
        CAPTURE(i);
        const F4 x = a[i], y = b[i];
        for (int l = 0; l < 4; ++l) {
            CAPTURE(l);
            const float mn = std::fmin(x[l], y[l]);
            REQUIRE(sum[i][l] == x[l] * y[l] + 2.0f - mn / -y[l]);
        }
        const F4 made{{y[1], y[0], 1.0f, x[3] * y[3]}};
        const int pick[4] = {3, 3, 0, 1};
        for (int l = 0; l < 4; ++l)
            REQUIRE(shuf[i][l] == x[pick[l]] + made[l]);
        for (int l = 0; l < 3; ++l)
            REQUIRE(std::bit_cast<float>(xyz[size_t(i) * 4 + l]) == x[2 - l]);
        REQUIRE(xyz[size_t(i) * 4 + 3] == 0xabababab);
        const F4 swapped{{x[1], x[0], x[3], x[2]}};
        const F4 reversed{{l0[i][3], l0[i][2], l0[i][1], l0[i][0]}};
        for (int l = 0; l < 4; ++l) {
            REQUIRE(lanes[i][l] == (l == 1 ? swapped[0] : reversed[l]));
            REQUIRE(ints[i][l] == int32_t(swapped[l] * 3.0f));
        }
    }
}

TEST_CASE("integer and f16 vectors: u8 lanes wrap, i16 neg and bitnot, f16 lanes round; narrow "
          "scalar arguments") {
    auto k = px::kernel("vec_narrow", {"u", "v", "uo", "s", "so", "h", "ho", "n", "bias", "scale"},
                        [](px::In<U8x4> u, px::In<U8x4> v, px::Out<U8x4> uo, px::In<S2> s,
                           px::Out<S2> so, px::In<H8> h, px::Out<H8> ho, px::Int n,
                           px::Var<uint8_t> bias, px::Var<px::half> scale) {
                            px::Int i = px::global_id(0);
                            px::If(i < n, [&] {
                                uo[i] = u[i] * v[i] + (u[i] >> v[i]) + bias;
                                px::Var<S2> t = -s[i];
                                t.y() = ~s[i].y();
                                so[i] = t;
                                ho[i] =
                                    h[i] * h[i].swizzle<7, 6, 5, 4, 3, 2, 1, 0>() + h[i] * scale;
                            });
                        });
    const int n = 200;
    auto u = random_vector<uint32_t>(n, 0, UINT32_MAX),
         v = random_vector<uint32_t>(n, 0, UINT32_MAX);
    auto s = random_vector<uint32_t>(n, 0, UINT32_MAX);
    auto h = random_vecs<H8>(n, -300.f, 300.f);
    Buffer bu(u), bv(v), buo(n * 4), bs(s), bso(n * 4), bh(h), bho(n * sizeof(H8));
    Module m(k.ir());
    REQUIRE(m.status() == PLX_OK);
    // Scalar arguments of 1 and 2 bytes: the f16 one arrives as its bits.
    const uint8_t bias = 200;
    const px::half scale(0.3f);
    REQUIRE(launch(m.kernel(), dims1(n, 64), {bu, bv, buo, bs, bso, bh, bho, n, bias, scale}) ==
            PLX_OK);
    const auto uo = buo.read<U8x4>();
    const auto so = bso.read<S2>();
    const auto ho = bho.read<H8>();
    for (int i = 0; i < n; ++i) {
        CAPTURE(i);
        for (int l = 0; l < 4; ++l) {
            const uint8_t x = uint8_t(u[i] >> (8 * l)), y = uint8_t(v[i] >> (8 * l));
            REQUIRE(uo[i][l] == uint8_t(x * y + (x >> (y & 7)) + bias));
        }
        const int16_t s0 = int16_t(s[i]), s1 = int16_t(s[i] >> 16);
        REQUIRE(so[i][0] == int16_t(-s0));
        REQUIRE(so[i][1] == int16_t(~s1));
        for (int l = 0; l < 8; ++l) {
            const float x = h[i][l], r = h[i][7 - l];
            const float product = px::half(x * r), scaled = px::half(x * float(scale));
            REQUIRE(ho[i][l].bits == px::half(product + scaled).bits);
        }
    }
}

// A vector's lanes are one node each; a node under several of them (the index of a vector
// load, the value of a broadcast) runs once per work-item, as an atomic there shows.
TEST_CASE("an expression shared by the lanes of a vector is evaluated once per work-item") {
    using B = ir::BinaryOp;
    const ir::Type f4 = ir::Type::vector(Scalar::F32, 4), u4 = ir::Type::vector(Scalar::U32, 4);
    auto next = [](const char* counter) {
        return ir::Atomic::make(ir::AtomicOp::Add, counter, Space::Global, Scalar::U32, u32(0),
                                u32(1));
    };
    auto gid = var("gid", Scalar::I32);
    const ir::Kernel k = kernel(
        "vec_shared_nodes",
        {buffer("in", Scalar::F32),
         buffer("counters", Scalar::U32, ir::Access::ReadWrite),
         {"vin", ir::Param::Kind::Buffer, f4, ir::Access::Read},
         {"out", ir::Param::Kind::Buffer, f4, ir::Access::Write},
         {"ticket", ir::Param::Kind::Buffer, u4, ir::Access::Write},
         scalar("n", Scalar::I32)},
        {let_gid(), if_(bin(B::Lt, gid, var("n", Scalar::I32)),
                        {store("out", gid,
                               ir::Load::make("vin", Space::Global, f4,
                                              bin(B::Rem, next("counters"),
                                                  cast(Scalar::U32, var("n", Scalar::I32))))),
                         store("ticket", gid, ir::Broadcast::make(next("counters"), 4))})});
    ir::validate(k);
    const int n = 100;
    auto vin = random_vecs<F4>(n, -5.f, 5.f);
    Buffer bin(std::vector<float>(1)), counters(std::vector<uint32_t>(1, 0)), bvin(vin),
        bout(n * sizeof(F4)), bticket(n * sizeof(px::Vec<uint32_t, 4>));
    Module m(k);
    REQUIRE(m.status() == PLX_OK);
    REQUIRE(launch(m.kernel(), dims1(n, 32), {bin, counters, bvin, bout, bticket, n}) == PLX_OK);
    // Two atomics per work-item, whatever the lane count.
    CHECK(counters.read<uint32_t>()[0] == 2 * n);
    const auto out = bout.read<F4>();
    const auto ticket = bticket.read<px::Vec<uint32_t, 4>>();
    std::vector<int> seen(2 * n, 0);
    for (int i = 0; i < n; ++i) {
        CAPTURE(i);
        // All four lanes come from the one element the index named.
        REQUIRE(std::find(vin.begin(), vin.end(), out[i]) != vin.end());
        for (int l = 1; l < 4; ++l)
            REQUIRE(ticket[i][l] == ticket[i][0]);
        REQUIRE(ticket[i][0] < uint32_t(2 * n));
        REQUIRE(++seen[ticket[i][0]] == 1);
    }
}

} // namespace interp_test
