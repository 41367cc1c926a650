// The IR's types on every backend found (through the Runtime, so on each generator family):
// small integers, f16 and bf16, vectors, records, variants with match, private arrays and
// shaped shared arrays, each on random inputs against a host reference. Exact where the IR
// specifies the result bit for bit (integers, f16 / bf16 rounding, f32 + - *).
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include "every_device.hpp"
#include "plexus/plexus.hpp"

#include <cmath>
#include <cstring>
#include <functional>
#include <random>

namespace px = plexus;
using px::Vec;

namespace types_test {
struct Item {
    Vec<float, 3> pos;
    float w;
    int16_t id;
    px::half h;
};
PLEXUS_RECORD(Item, pos, w, id, h);
struct Pair {
    Item a, b;
    uint8_t tag;
};
PLEXUS_RECORD(Pair, a, b, tag);
using Shape = px::Variant<"Shape", px::Case<"none">, px::Case<"circle", float>,
                          px::Case<"box", Vec<float, 2>>, px::Case<"tagged", Item>>;
} // namespace types_test
using namespace types_test;

namespace {

px::Runtime& runtime() {
    return px::test::hermetic_runtime();
}

// Runs `test` once per device; it returns the number of mismatches and describes the first.
void on_every_device(const std::function<size_t(const px::Target&, std::string& first)>& test) {
    for (const px::test::TestDevice& d : px::test::every_device()) {
        std::string first;
        size_t bad = 0;
        try {
            bad = test(d.target, first);
        } catch (const px::Error& e) {
            bad = 1;
            first = std::string("error: ") + e.what();
        }
        INFO(d.label << ": " << first);
        CHECK(bad == 0);
    }
}

// Counts a mismatch (bit patterns for floats: both NaN counts as equal).
template <class T> void expect_equal(size_t& bad, std::string& first, size_t i, T got, T want) {
    bool same;
    if constexpr (std::is_same_v<T, px::half> || std::is_same_v<T, px::bf16>)
        same = got.bits == want.bits || (std::isnan(float(got)) && std::isnan(float(want)));
    else if constexpr (std::is_floating_point_v<T>)
        same = std::memcmp(&got, &want, sizeof got) == 0 || (std::isnan(got) && std::isnan(want));
    else
        same = got == want;
    if (!same && bad++ == 0)
        first = "element " + std::to_string(i) + ": got " + std::to_string(double(got)) +
                ", want " + std::to_string(double(want));
}

template <class T> std::vector<T> random_ints(size_t n, std::mt19937& g, bool nonzero = false) {
    std::uniform_int_distribution<int64_t> d(int64_t(std::numeric_limits<T>::min()),
                                             int64_t(std::numeric_limits<T>::max()));
    std::vector<T> v(n);
    for (auto& x : v) {
        do
            x = T(d(g));
        while (nonzero && (x == 0 || (std::is_signed_v<T> && x == T(-1))));
    }
    return v;
}

constexpr int kOps = 15;

// i8 u8 i16 u16: every operation computed at the type's width, the results widened to i64.
template <class T> const auto& small_int_kernel() {
    static const auto k = px::kernel("small_int_ops", {"a", "b", "r", "n"},
                                     [](px::In<T> a, px::In<T> b, px::Out<int64_t> r, px::Int n) {
                                         px::Int i = px::global_id(0);
                                         px::If(i < n, [&] {
                                             px::Var<T> x = a[i], y = b[i];
                                             px::Var<T> s = y & T(7);
                                             std::vector<px::Value<T>> ops = {
                                                 x + y,
                                                 x - y,
                                                 x * y,
                                                 x / y,
                                                 x % y,
                                                 x << s,
                                                 x >> s,
                                                 px::min(x, y),
                                                 px::max(x, y),
                                                 x & y,
                                                 x | y,
                                                 x ^ y,
                                                 ~x,
                                                 -x,
                                                 px::cast<T>(px::cast<int32_t>(x) * 3 + 1000)};
                                             for (int j = 0; j < kOps; ++j)
                                                 r[i * kOps + j] = ops[size_t(j)];
                                         });
                                     });
    return k;
}

template <class T> void small_ints() {
    std::mt19937 g(11);
    const size_t n = 999;
    auto a = random_ints<T>(n, g), b = random_ints<T>(n, g, true);
    std::vector<int64_t> want(n * kOps);
    for (size_t i = 0; i < n; ++i) {
        const T x = a[i], y = b[i], s = T(y & 7);
        const T ops[kOps] = {
            T(x + y),  T(x - y),  T(x * y),       T(x / y),       T(x % y),
            T(x << s), T(x >> s), std::min(x, y), std::max(x, y), T(x & y),
            T(x | y),  T(x ^ y),  T(~x),          T(-x),          T(int32_t(x) * 3 + 1000)};
        for (int j = 0; j < kOps; ++j)
            want[i * kOps + j] = ops[j];
    }
    on_every_device([&](const px::Target& t, std::string& first) {
        px::Buffer<T> ba(runtime(), a), bb(runtime(), b);
        px::Buffer<int64_t> br(runtime(), want.size());
        runtime().launch(t, small_int_kernel<T>(), px::Grid(n), ba, bb, br, int(n)).wait();
        size_t bad = 0;
        auto got = br.to_vector();
        for (size_t i = 0; i < want.size(); ++i)
            expect_equal(bad, first, i, got[i], want[i]);
        return bad;
    });
}

// f16 / bf16: values that exercise rounding (ties), subnormals, overflow and NaN.
template <class H> std::vector<H> special_halves(size_t n, std::mt19937& g) {
    std::vector<H> v(n);
    std::uniform_int_distribution<uint32_t> bits(0, 0xffff);
    std::uniform_real_distribution<float> d(-4, 4);
    for (size_t i = 0; i < n; ++i) {
        switch (i % 4) {
        case 0: v[i] = H::from_bits(uint16_t(bits(g))); break; // anything, NaN and inf included
        case 1: v[i] = H(d(g)); break;
        case 2:
            v[i] = H(std::ldexp(d(g), std::is_same_v<H, px::half> ? -15 : -120));
            break; // subnormal range
        default:
            v[i] = H(d(g) * (std::is_same_v<H, px::half> ? 16000.0f : 1e37f));
            break; // near overflow
        }
        // No zeros: min and max of +0 and -0 may return either.
        if (float(v[i]) == 0.0f) v[i] = H::from_bits(1);
    }
    return v;
}

constexpr int kHalfOps = 10;

template <class H> const auto& half_kernel() {
    static const auto k =
        px::kernel("half_ops", {"a", "b", "f", "d", "k", "r", "ints", "n"},
                   [](px::In<H> a, px::In<H> b, px::In<float> f, px::In<double> d,
                      px::In<int32_t> k, px::Out<H> r, px::Out<float> wide, px::Int n) {
                       px::Int i = px::global_id(0);
                       px::If(i < n, [&] {
                           px::Var<H> x = a[i], y = b[i];
                           std::vector<px::Value<H>> ops = {x + y,
                                                            x - y,
                                                            x * y,
                                                            x / y,
                                                            px::min(x, y),
                                                            px::max(x, y),
                                                            -x,
                                                            px::cast<H>(f[i]),
                                                            px::cast<H>(d[i]),
                                                            px::cast<H>(k[i])};
                           for (int j = 0; j < kHalfOps; ++j)
                               r[i * kHalfOps + j] = ops[size_t(j)];
                           wide[i] = x; // exact
                       });
                   });
    return k;
}

template <class H> void halves() {
    std::mt19937 g(std::is_same_v<H, px::half> ? 5 : 6);
    const size_t n = 1024;
    auto a = special_halves<H>(n, g), b = special_halves<H>(n, g);
    std::vector<float> f(n);
    std::vector<double> d(n);
    std::vector<int32_t> k(n);
    std::uniform_real_distribution<double> u(-70000, 70000);
    for (size_t i = 0; i < n; ++i)
        f[i] = float(u(g)) * (i % 3 ? 1e-3f : 1.0f), d[i] = u(g) / 7, k[i] = int32_t(u(g) * 3);
    auto round = [](float x) { return H(x); }; // half.hpp: round to nearest even
    std::vector<H> want(n * kHalfOps);
    for (size_t i = 0; i < n; ++i) {
        const float x = a[i], y = b[i];
        const H ops[kHalfOps] = {round(x + y),
                                 round(x - y),
                                 round(x * y),
                                 round(x / y),
                                 round(std::isnan(x)   ? y
                                       : std::isnan(y) ? x
                                                       : std::min(x, y)),
                                 round(std::isnan(x)   ? y
                                       : std::isnan(y) ? x
                                                       : std::max(x, y)),
                                 round(-x),
                                 round(f[i]),
                                 round(float(d[i])),
                                 round(float(k[i]))};
        for (int j = 0; j < kHalfOps; ++j)
            want[i * kHalfOps + j] = ops[j];
    }
    on_every_device([&](const px::Target& t, std::string& first) {
        px::Buffer<H> ba(runtime(), a), bb(runtime(), b), br(runtime(), want.size());
        px::Buffer<float> bf(runtime(), f), bw(runtime(), n);
        px::Buffer<double> bd(runtime(), d);
        px::Buffer<int32_t> bk(runtime(), k);
        runtime()
            .launch(t, half_kernel<H>(), px::Grid(n), ba, bb, bf, bd, bk, br, bw, int(n))
            .wait();
        size_t bad = 0;
        auto got = br.to_vector();
        for (size_t i = 0; i < want.size(); ++i)
            expect_equal(bad, first, i, got[i], want[i]);
        auto wide = bw.to_vector();
        for (size_t i = 0; i < n; ++i)
            expect_equal(bad, first, n * kHalfOps + i, wide[i], float(a[i]));
        return bad;
    });
}

} // namespace

TEST_CASE("i8 arithmetic wraps at 8 bits on every backend") {
    small_ints<int8_t>();
}
TEST_CASE("u8 arithmetic wraps at 8 bits on every backend") {
    small_ints<uint8_t>();
}
TEST_CASE("i16 arithmetic wraps at 16 bits on every backend") {
    small_ints<int16_t>();
}
TEST_CASE("u16 arithmetic wraps at 16 bits on every backend") {
    small_ints<uint16_t>();
}
TEST_CASE("f16 operations round to nearest even on every backend") {
    halves<px::half>();
}
TEST_CASE("bf16 operations round to nearest even on every backend") {
    halves<px::bf16>();
}

TEST_CASE("vectors: lane-wise arithmetic, broadcasts, swizzles, lane writes and casts") {
    using V4 = Vec<float, 4>;
    static const auto k =
        px::kernel("vector_ops", {"a", "b", "p", "u", "h", "r", "q", "uo", "ho", "io", "n"},
                   [](px::In<V4> a, px::In<V4> b, px::In<Vec<float, 3>> p,
                      px::In<Vec<uint8_t, 8>> u, px::In<Vec<px::half, 4>> h, px::Out<V4> r,
                      px::Out<Vec<float, 3>> q, px::Out<Vec<uint8_t, 8>> uo,
                      px::Out<Vec<px::half, 4>> ho, px::Out<Vec<int32_t, 4>> io, px::Int n) {
                       px::Int i = px::global_id(0);
                       px::If(i < n, [&] {
                           px::Var<V4> v = a[i] * b[i] + 2.0f;
                           v.y() = px::min(a[i], b[i]).w();
                           r[i * 3] = v;
                           r[i * 3 + 1] = a[i].wzyx();
                           r[i * 3 + 2] =
                               px::make<V4>(a[i].x(), b[i].xy().y(), 1.0f, px::cast<float>(i));
                           q[i] = p[i].zyx() * p[i].x();
                           uo[i] = u[i] * u[i] + u[i];
                           ho[i] = h[i] * h[i] + h[i];
                           io[i] = px::cast<Vec<int32_t, 4>>(a[i] * 100.0f);
                       });
                   });
    std::mt19937 g(3);
    std::uniform_real_distribution<float> d(-10, 10);
    std::uniform_int_distribution<int> byte(0, 255);
    const size_t n = 513;
    std::vector<V4> a(n), b(n);
    std::vector<Vec<float, 3>> p(n);
    std::vector<Vec<uint8_t, 8>> u(n);
    std::vector<Vec<px::half, 4>> h(n);
    for (size_t i = 0; i < n; ++i)
        for (int l = 0; l < 8; ++l) {
            if (l < 4) a[i][l] = d(g), b[i][l] = d(g), h[i][l] = px::half(d(g));
            if (l < 3) p[i][l] = d(g);
            u[i][l] = uint8_t(byte(g));
        }
    on_every_device([&](const px::Target& t, std::string& first) {
        auto& rt = runtime();
        px::Buffer<V4> ba(rt, a), bb(rt, b), br(rt, 3 * n);
        px::Buffer<Vec<float, 3>> bp(rt, p), bq(rt, n);
        px::Buffer<Vec<uint8_t, 8>> bu(rt, u), buo(rt, n);
        px::Buffer<Vec<px::half, 4>> bh(rt, h), bho(rt, n);
        px::Buffer<Vec<int32_t, 4>> bio(rt, n);
        rt.launch(t, k, px::Grid(n), ba, bb, bp, bu, bh, br, bq, buo, bho, bio, int(n)).wait();
        size_t bad = 0;
        auto r = br.to_vector();
        auto q = bq.to_vector();
        auto uo = buo.to_vector();
        auto ho = bho.to_vector();
        auto io = bio.to_vector();
        for (size_t i = 0; i < n; ++i) {
            for (int l = 0; l < 4; ++l) {
                const float v = l == 1 ? std::fmin(a[i][3], b[i][3]) : a[i][l] * b[i][l] + 2.0f;
                const float c[4] = {a[i][0], b[i][1], 1.0f, float(i)};
                expect_equal(bad, first, i * 12 + l, r[3 * i][l], v);
                expect_equal(bad, first, i * 12 + 4 + l, r[3 * i + 1][l], a[i][3 - l]);
                expect_equal(bad, first, i * 12 + 8 + l, r[3 * i + 2][l], c[l]);
                expect_equal(
                    bad, first, i * 4 + l, ho[i][l],
                    px::half(px::round_to_f16(float(h[i][l]) * float(h[i][l])) + float(h[i][l])));
                expect_equal(bad, first, i * 4 + l, io[i][l], int32_t(a[i][l] * 100.0f));
            }
            for (int l = 0; l < 3; ++l)
                expect_equal(bad, first, i * 3 + l, q[i][l], p[i][2 - l] * p[i][0]);
            for (int l = 0; l < 8; ++l)
                expect_equal(bad, first, i * 8 + l, uo[i][l], uint8_t(u[i][l] * u[i][l] + u[i][l]));
        }
        return bad;
    });
}

TEST_CASE(
    "records: whole and by path, nested, in buffers, shared memory, private arrays and variables") {
    static const auto k =
        px::kernel("record_ops", {"in", "out", "sums", "n"},
                   [](px::In<Pair> in, px::Out<Pair> out, px::Out<float> sums, px::Int n) {
                       auto tile = px::shared<Item>(64);
                       auto keep = px::private_array<Item>(2);
                       px::Int i = px::global_id(0);
                       px::Int lid = px::local_id(0);
                       px::Int j = px::min(i, n - 1);
                       tile[lid] = in[j][&Pair::a];
                       keep[0] = in[j][&Pair::b];
                       keep[1][&Item::w] = in[j][&Pair::a][&Item::w] * 2.0f;
                       px::barrier();
                       px::Var<Pair> p = in[j];
                       p[&Pair::a][&Item::w] += 1.0f;
                       p[&Pair::b][&Item::pos].z() = p[&Pair::a][&Item::pos].x();
                       p[&Pair::tag] = p[&Pair::tag] + uint8_t(1);
                       p[&Pair::b] = tile[(lid + 1) % 64];
                       px::If(i < n, [&] {
                           out[i] = p;
                           out[i][&Pair::a][&Item::id] = px::cast<int16_t>(i);
                           sums[i] = keep[0][&Item::w] + keep[1][&Item::w] + keep[0][&Item::h];
                       });
                   });
    std::mt19937 g(9);
    std::uniform_real_distribution<float> d(-5, 5);
    const size_t n = 200;
    std::vector<Pair> in(n);
    for (size_t i = 0; i < n; ++i)
        for (Item* it : {&in[i].a, &in[i].b}) {
            it->pos = {{d(g), d(g), d(g)}};
            it->w = d(g);
            it->id = int16_t(g());
            it->h = px::half(d(g));
            in[i].tag = uint8_t(g());
        }
    on_every_device([&](const px::Target& t, std::string& first) {
        px::Buffer<Pair> bi(runtime(), in), bo(runtime(), n);
        px::Buffer<float> bs(runtime(), n);
        runtime().launch(t, k, px::Grid(n).local_size(64), bi, bo, bs, int(n)).wait();
        size_t bad = 0;
        auto out = bo.to_vector();
        auto sums = bs.to_vector();
        for (size_t i = 0; i < n; ++i) {
            Pair want = in[i];
            want.a.w += 1.0f;
            want.a.id = int16_t(i);
            want.tag = uint8_t(want.tag + 1);
            const size_t group = i / 64 * 64, next = group + (i - group + 1) % 64;
            want.b = in[std::min(next, n - 1)].a;
            const Pair& got = out[i];
            for (int c = 0; c < 3; ++c) {
                expect_equal(bad, first, i, got.a.pos[c], want.a.pos[c]);
                expect_equal(bad, first, i, got.b.pos[c], want.b.pos[c]);
            }
            expect_equal(bad, first, i, got.a.w, want.a.w);
            expect_equal(bad, first, i, got.b.w, want.b.w);
            expect_equal(bad, first, i, got.a.id, want.a.id);
            expect_equal(bad, first, i, got.b.id, want.b.id);
            expect_equal(bad, first, i, got.a.h, want.a.h);
            expect_equal(bad, first, i, got.tag, want.tag);
            expect_equal(bad, first, i, sums[i], in[i].b.w + in[i].a.w * 2.0f + float(in[i].b.h));
        }
        return bad;
    });
}

TEST_CASE("variants: made, stored, loaded and matched, with otherwise and a break out of a loop") {
    static const auto k = px::kernel(
        "variant_ops", {"in", "area", "out", "steps", "n"},
        [](px::In<Shape> in, px::Out<float> area, px::Out<Shape> out, px::Out<int32_t> steps,
           px::Int n) {
            px::Int i = px::global_id(0);
            px::If(i < n, [&] {
                px::Float a = -1.0f;
                px::Match(in[i], px::on<"none">([&] { a = 0.0f; }),
                          px::on<"circle">([&](px::Var<float> r) { a = 3.0f * r * r; }),
                          px::on<"box">([&](px::Var<Vec<float, 2>> b) { a = b.x() * b.y(); }),
                          px::on<"tagged">([&](px::Var<Item> it) { a = it[&Item::w]; }));
                area[i] = a;
                px::Match(in[i], px::on<"circle">([&](px::Var<float> r) {
                              out[i] =
                                  px::make_variant<Shape, "box">(px::make<Vec<float, 2>>(r, r));
                          }),
                          px::on<"box">([&] { out[i] = px::make_variant<Shape, "none">(); }),
                          px::otherwise([&] { out[i] = in[i]; }));
                px::Int count = 0;
                px::For(0, 20, [&](px::Int s) {
                    px::Match(in[i], px::on<"circle">([&](px::Var<float> r) {
                                  px::If(px::cast<float>(s) > r * 4.0f, [&] { px::Break(); });
                              }),
                              px::otherwise([&] { px::Continue(); }));
                    count += 1;
                });
                steps[i] = count;
            });
        });
    std::mt19937 g(4);
    std::uniform_real_distribution<float> d(0, 4);
    const size_t n = 300;
    std::vector<Shape> in(n);
    for (size_t i = 0; i < n; ++i) {
        switch (i % 4) {
        case 0: in[i] = Shape::make<"none">(); break;
        case 1: in[i] = Shape::make<"circle">(d(g)); break;
        case 2: in[i] = Shape::make<"box">(Vec<float, 2>{{d(g), d(g)}}); break;
        default:
            in[i] =
                Shape::make<"tagged">(Item{{{d(g), d(g), d(g)}}, d(g), int16_t(i), px::half(1.0f)});
            break;
        }
    }
    on_every_device([&](const px::Target& t, std::string& first) {
        px::Buffer<Shape> bi(runtime(), in), bo(runtime(), n);
        px::Buffer<float> ba(runtime(), n);
        px::Buffer<int32_t> bs(runtime(), n);
        runtime().launch(t, k, px::Grid(n), bi, ba, bo, bs, int(n)).wait();
        size_t bad = 0;
        auto area = ba.to_vector();
        auto out = bo.to_vector();
        auto steps = bs.to_vector();
        for (size_t i = 0; i < n; ++i) {
            const Shape& s = in[i];
            float want = 0;
            int32_t count = 0;
            Shape shape = s;
            if (s.holds<"circle">()) {
                const float r = s.get<"circle">();
                want = 3.0f * r * r;
                shape = Shape::make<"box">(Vec<float, 2>{{r, r}});
                while (count < 20 && !(float(count) > r * 4.0f))
                    ++count;
            } else if (s.holds<"box">()) {
                want = s.get<"box">()[0] * s.get<"box">()[1];
                shape = Shape::make<"none">();
            } else if (s.holds<"tagged">()) {
                want = s.get<"tagged">().w;
            }
            expect_equal(bad, first, i, area[i], want);
            expect_equal(bad, first, i, steps[i], count);
            expect_equal(bad, first, i, out[i].tag, shape.tag);
            if (shape.holds<"box">())
                for (int l = 0; l < 2; ++l)
                    expect_equal(bad, first, i, out[i].get<"box">()[l], shape.get<"box">()[l]);
            if (shape.holds<"tagged">())
                expect_equal(bad, first, i, out[i].get<"tagged">().w, shape.get<"tagged">().w);
        }
        return bad;
    });
}

TEST_CASE(
    "private arrays live across a barrier, and shaped shared arrays index by row and column") {
    static const auto k =
        px::kernel("array_ops", {"in", "out", "cube", "n"},
                   [](px::In<int32_t> in, px::Out<int32_t> out, px::Out<int32_t> cube, px::Int n) {
                       auto mine = px::private_array<int32_t>(4);
                       auto tile = px::shared<int32_t>(16, 16, px::Pad{1});
                       auto box = px::shared<int32_t>(2, 4, 8);
                       px::Int x = px::local_id(0), y = px::local_id(1);
                       px::Int lid = y * 16 + x;
                       px::Int i = px::group_id(0) * 256 + lid;
                       px::Int j = px::min(i, n - 1);
                       for (int q = 0; q < 4; ++q)
                           mine[q] = in[j] * (q + 1);
                       tile[y][x] = in[j];
                       box[lid / 32 % 2][lid / 8 % 4][lid % 8] =
                           lid % 64; // work-items 64 apart write one element, alike
                       px::barrier();
                       px::If(i < n, [&] {
                           out[i] = mine[0] + mine[1] + mine[2] + mine[3] + tile[x][y];
                           cube[i] = box[(lid + 1) / 32 % 2][(lid + 1) / 8 % 4][(lid + 1) % 8];
                       });
                   });
    std::mt19937 g(2);
    const size_t n = 700;
    auto in = random_ints<int16_t>(n, g);
    std::vector<int32_t> in32(in.begin(), in.end());
    on_every_device([&](const px::Target& t, std::string& first) {
        px::Buffer<int32_t> bi(runtime(), in32), bo(runtime(), n), bc(runtime(), n);
        runtime()
            .launch(t, k, px::Grid(16 * ((n + 255) / 256), 16).local_size(16, 16), bi, bo, bc,
                    int(n))
            .wait();
        size_t bad = 0;
        auto out = bo.to_vector();
        auto cube = bc.to_vector();
        for (size_t i = 0; i < n; ++i) {
            const size_t lid = i % 256, group = i / 256 * 256;
            const size_t transposed =
                group + (lid % 16) * 16 + lid / 16; // tile[x][y] was written by (y=x, x=y)
            expect_equal(bad, first, i, out[i], in32[i] * 10 + in32[std::min(transposed, n - 1)]);
            expect_equal(bad, first, i, cube[i], int32_t((lid + 1) % 64));
        }
        return bad;
    });
}

TEST_CASE("an Out<T> reads what its buffer holds on every backend: the contents written before "
          "the launch, zeros where nothing was ever written, and the launch's own stores") {
    static const auto k = px::kernel("read_out", {"y", "fresh", "n"},
                                     [](px::Out<float> y, px::Out<float> fresh, px::Int n) {
                                         px::Int i = px::global_id(0);
                                         px::If(i < n, [&] {
                                             y[i] += 1.0f; // reads the element first
                                             fresh[i] = fresh[i] * 2.0f + y[i];
                                         });
                                     });
    std::mt19937 g(3);
    const size_t n = 1000;
    std::vector<float> start(n);
    std::uniform_real_distribution<float> d(-100.0f, 100.0f);
    for (float& v : start)
        v = d(g);
    on_every_device([&](const px::Target& t, std::string& first) {
        px::Buffer<float> y(runtime(), start), fresh(runtime(), n);
        runtime().launch(t, k, px::Grid(n), y, fresh, int(n)).wait();
        size_t bad = 0;
        auto ys = y.to_vector();
        auto fs = fresh.to_vector();
        for (size_t i = 0; i < n; ++i) {
            expect_equal(bad, first, i, ys[i], start[i] + 1.0f);
            expect_equal(bad, first, i, fs[i], 0.0f * 2.0f + (start[i] + 1.0f));
        }
        return bad;
    });
}

namespace {
enum Constants { kScale = 3, kOffset = -7, kLimit = 500 };
}

TEST_CASE("an unscoped enum constant is a number wherever one is: operands, comparisons, "
          "initializers, assignments and scalar arguments") {
    static const auto k = px::kernel(
        "enum_constants", {"x", "y", "n", "scale"},
        [](px::In<int32_t> x, px::Out<int32_t> y, px::Int n, px::Int scale) {
            px::Int i = px::global_id(0);
            px::If(i < n, [&] {
                px::Int v = kOffset;                           // an initializer
                v += x[i] * kScale;                            // an operand
                px::If(x[i] > kLimit, [&] { v = kLimit; });    // a comparison, an assignment
                px::Float f = px::cast<float>(x[i]) + kOffset; // with a float value
                y[i] = v * scale + px::cast<int32_t>(f * 0.0f);
            });
        });
    std::mt19937 g(5);
    const size_t n = 777;
    std::vector<int32_t> in(n);
    std::uniform_int_distribution<int32_t> d(-1000, 1000);
    for (int32_t& v : in)
        v = d(g);
    on_every_device([&](const px::Target& t, std::string& first) {
        px::Buffer<int32_t> bx(runtime(), in), by(runtime(), n);
        runtime().launch(t, k, px::Grid(n), bx, by, int(n), kScale).wait(); // an argument
        size_t bad = 0;
        auto out = by.to_vector();
        for (size_t i = 0; i < n; ++i) {
            const int32_t v = in[i] > kLimit ? int32_t(kLimit) : kOffset + in[i] * kScale;
            expect_equal(bad, first, i, out[i], v * kScale);
        }
        return bad;
    });
}
