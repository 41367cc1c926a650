// Variants in kernel-language kernels: made, stored (tag and active payload only), loaded and
// matched, nested, in every kind of memory and variable; inactive payload bytes may be garbage.
#include "fixture.hpp"

#include <plexus/kernel.hpp>

#include <array>
#include <bit>
#include <cstring>

namespace interp_test::variants {

namespace px = plexus;
using F2 = px::Vec<float, 2>;

struct Dot {
    int16_t x, y;
    px::half w;
};
PLEXUS_RECORD(Dot, x, y, w);

using Shape = px::Variant<"Shape", px::Case<"none">, px::Case<"circle", float>,
                          px::Case<"rect", F2>, px::Case<"dot", Dot>>;

struct Item {
    uint8_t id;
    Shape s;
};
PLEXUS_RECORD(Item, id, s);

using Wrapped = px::Variant<"Wrapped", px::Case<"empty">, px::Case<"item", Item>>;

// A variant whose first case has a payload, inside another: Outer's "small" covers byte 4,
// "opt" bytes 4 to 11 (Opt's tag, then its float).
using Opt = px::Variant<"Opt", px::Case<"some", float>, px::Case<"nothing">>;
using Outer = px::Variant<"Outer", px::Case<"small", uint8_t>, px::Case<"opt", Opt>>;

// { u32 tag; pad; union { f32, f32x2, Dot } at 8 }: 16 bytes; Item puts its Shape at 8.
static_assert(sizeof(Shape) == 16 && sizeof(Item) == 24 && sizeof(Wrapped) == 32);
static_assert(sizeof(Opt) == 8 && sizeof(Outer) == 12);

Shape random_shape(int tag) {
    const float f = random_vector<float>(1, -50.f, 50.f)[0];
    switch (tag) {
    case 0: return Shape::make<"none">();
    case 1: return Shape::make<"circle">(f);
    case 2: return Shape::make<"rect">(F2{{f, f * 0.5f}});
    default: return Shape::make<"dot">(Dot{int16_t(f * 100), int16_t(-f), px::half(f / 3)});
    }
}

// A variant's payload as case C. Not V::get: its memcpy into a px::Vec or a record holding one
// (types with default member initializers) warns under -Wclass-memaccess.
template <px::FixedString C, class V> auto payload(const V& v) {
    using P = typename V::template payload_of<C>;
    std::array<unsigned char, sizeof(P)> bytes;
    std::memcpy(bytes.data(), &v.payload, sizeof(P));
    return std::bit_cast<P>(bytes);
}

void require_equal(const Shape& got, const Shape& want) {
    REQUIRE(got.tag == want.tag);
    if (want.holds<"circle">()) REQUIRE(payload<"circle">(got) == payload<"circle">(want));
    if (want.holds<"rect">()) REQUIRE(payload<"rect">(got) == payload<"rect">(want));
    if (want.holds<"dot">()) {
        REQUIRE(payload<"dot">(got).x == payload<"dot">(want).x);
        REQUIRE(payload<"dot">(got).y == payload<"dot">(want).y);
        REQUIRE(payload<"dot">(got).w.bits == payload<"dot">(want).w.bits);
    }
}

TEST_CASE("variants made in a kernel and stored: the tag and only the active payload's bytes") {
    auto k = px::kernel(
        "variant_make", {"r", "out", "n"}, [](px::In<float> r, px::Out<Shape> out, px::Int n) {
            px::Int i = px::global_id(0);
            px::If(i < n, [&] {
                px::Var<Shape> s = px::make_variant<Shape, "none">();
                px::If(i % 4 == 1, [&] { s = px::make_variant<Shape, "circle">(r[i]); })
                    .ElseIf(i % 4 == 2,
                            [&] {
                                s = px::make_variant<Shape, "rect">(
                                    px::make<F2>(r[i], r[i] * 2.0f));
                            })
                    .ElseIf(i % 4 == 3, [&] {
                        s = px::make_variant<Shape, "dot">(px::make<Dot>(
                            px::cast<int16_t>(r[i]), int16_t(-3), px::cast<px::half>(r[i])));
                    });
                out[i] = s;
            });
        });
    const int n = 203;
    auto r = random_vector<float>(n, -1000.f, 1000.f);
    Buffer br(r), bout(std::vector<uint8_t>(n * sizeof(Shape), 0xab));
    Module m(k.ir());
    REQUIRE(m.status() == PLX_OK);
    REQUIRE(launch(m.kernel(), dims1(n, 64), {br, bout, n}) == PLX_OK);
    const auto bytes = bout.read<uint8_t>();
    for (int i = 0; i < n; ++i) {
        CAPTURE(i);
        const uint8_t* e = bytes.data() + size_t(i) * sizeof(Shape);
        Shape got;
        std::memcpy(&got, e, sizeof got);
        const Shape want = i % 4 == 0   ? Shape::make<"none">()
                           : i % 4 == 1 ? Shape::make<"circle">(r[i])
                           : i % 4 == 2
                               ? Shape::make<"rect">(F2{{r[i], r[i] * 2.0f}})
                               : Shape::make<"dot">(Dot{int16_t(r[i]), -3, px::half(r[i])});
        require_equal(got, want);
        // Bytes no leaf of the active case covers keep the buffer's 0xab: the padding after
        // the tag, and the payload's bytes beyond the case's own.
        const size_t written = i % 4 == 0 ? 0 : i % 4 == 1 ? 4 : i % 4 == 2 ? 8 : 6;
        for (size_t b = 4; b < sizeof(Shape); ++b) {
            CAPTURE(b);
            if (b < 8 || b >= 8 + written) REQUIRE(e[b] == 0xab);
        }
    }
}

TEST_CASE("a store of a variant writes nothing of the variants inside its inactive cases") {
    auto k = px::kernel("variant_outer", {"out", "n"}, [](px::Out<Outer> out, px::Int n) {
        px::Int i = px::global_id(0);
        px::If(i < n, [&] {
            px::If(i % 2 == 0, [&] {
                out[i] = px::make_variant<Outer, "small">(px::cast<uint8_t>(i));
            }).Else([&] {
                out[i] = px::make_variant<Outer, "opt">(
                    px::make_variant<Opt, "some">(px::cast<float>(i)));
            });
        });
    });
    const int n = 40;
    Buffer bout(std::vector<uint8_t>(n * sizeof(Outer), 0xab));
    Module m(k.ir());
    REQUIRE(m.status() == PLX_OK);
    REQUIRE(launch(m.kernel(), dims1(n, 16), {bout, n}) == PLX_OK);
    const auto bytes = bout.read<uint8_t>();
    for (int i = 0; i < n; ++i) {
        CAPTURE(i);
        const uint8_t* e = bytes.data() + size_t(i) * sizeof(Outer);
        uint32_t tag, inner;
        std::memcpy(&tag, e, 4);
        REQUIRE(tag == uint32_t(i % 2));
        if (i % 2 == 0) {
            REQUIRE(e[4] == uint8_t(i));
            for (int b = 5; b < 12; ++b)
                REQUIRE(e[b] == 0xab); // not Opt's float, not its tag
        } else {
            std::memcpy(&inner, e + 4, 4);
            float f;
            std::memcpy(&f, e + 8, 4);
            REQUIRE(inner == 0);
            REQUIRE(f == float(i));
        }
    }
}

TEST_CASE("match on loaded variants: payload variables, otherwise, break and continue in a loop") {
    auto area = px::kernel(
        "variant_match", {"in", "out", "n"}, [](px::In<Shape> in, px::Out<float> out, px::Int n) {
            px::Int i = px::global_id(0);
            px::If(i < n, [&] {
                px::Var<float> a = -1.0f;
                px::Match(in[i], px::on<"circle">([&](px::Var<float> radius) {
                              radius = radius * radius; // the case's variable is mutable
                              a = radius * 3.0f;
                          }),
                          px::on<"rect">([&](px::Var<F2> wh) { a = wh.x() * wh.y(); }),
                          px::otherwise([&] { a = 0.5f; }));
                out[i] = a;
            });
        });
    // Each work-item walks its row of m shapes: circles add their radius, rects skip the rest
    // of the iteration (continue), the first none ends the walk (break), dots add 100 + w.
    auto walk = px::kernel(
        "variant_walk", {"in", "out", "m", "n"},
        [](px::In<Shape> in, px::Out<float> out, px::Int m, px::Int n) {
            px::Int i = px::global_id(0);
            px::If(i < n, [&] {
                px::Var<float> acc = 0.0f;
                px::Int steps = 0;
                px::For(0, m, [&](px::Int k) {
                    steps += 1;
                    px::Match(in[i * m + k], px::on<"none">([&] { px::Break(); }),
                              px::on<"circle">([&](px::Var<float> radius) { acc += radius; }),
                              px::on<"rect">([&](px::Var<F2>) { px::Continue(); }),
                              px::on<"dot">([&](px::Var<Dot> d) {
                                  acc += 100.0f + px::cast<float>(d[&Dot::w]);
                              }));
                    acc += 0.25f;
                });
                out[i * 2] = acc;
                out[i * 2 + 1] = px::cast<float>(steps);
            });
        });
    const int n = 150, m = 12;
    std::vector<Shape> shapes(size_t(n) * m);
    auto tags = random_vector<int32_t>(shapes.size(), 0, 3);
    for (size_t i = 0; i < shapes.size(); ++i)
        shapes[i] = random_shape(tags[i] == 0 && i % 3 ? 1 : tags[i]);
    Buffer bin(shapes), bout(size_t(n) * m * 2 * sizeof(float));
    Module ma(area.ir()), mw(walk.ir());
    REQUIRE(ma.status() == PLX_OK);
    REQUIRE(mw.status() == PLX_OK);
    REQUIRE(launch(ma.kernel(), dims1(n * m, 64), {bin, bout, n * m}) == PLX_OK);
    auto out = bout.read<float>();
    for (int i = 0; i < n * m; ++i) {
        CAPTURE(i);
        const Shape& s = shapes[i];
        const float r = s.holds<"circle">() ? payload<"circle">(s) : 0;
        const float want = s.holds<"circle">() ? (r * r) * 3.0f
                           : s.holds<"rect">() ? payload<"rect">(s)[0] * payload<"rect">(s)[1]
                                               : 0.5f;
        REQUIRE(out[i] == want);
    }
    REQUIRE(launch(mw.kernel(), dims1(n, 32), {bin, bout, m, n}) == PLX_OK);
    out = bout.read<float>();
    for (int i = 0; i < n; ++i) {
        CAPTURE(i);
        float acc = 0;
        int steps = 0;
        for (int k = 0; k < m; ++k) {
            ++steps;
            const Shape& s = shapes[size_t(i) * m + k];
            if (s.holds<"none">()) break;
            if (s.holds<"rect">()) continue;
            if (s.holds<"circle">())
                acc += payload<"circle">(s);
            else
                acc += 100.0f + float(payload<"dot">(s).w);
            acc += 0.25f;
        }
        REQUIRE(out[size_t(i) * 2] == acc);
        REQUIRE(out[size_t(i) * 2 + 1] == float(steps));
    }
}

TEST_CASE("nested variants through shared memory, private arrays, variables and select") {
    constexpr int group = 16;
    auto k =
        px::kernel("variant_nested", {"in", "out"}, [](px::In<Wrapped> in, px::Out<Wrapped> out) {
            auto sh = px::shared<Wrapped>(group);
            auto pr = px::private_array<Shape>(2);
            px::Int lid = px::local_id(0), i = px::global_id(0);
            sh[lid] = in[i];
            px::barrier();
            px::Var<Wrapped> w = sh[group - 1 - lid];
            pr[0] = px::make_variant<Shape, "none">();
            pr[1] = px::make_variant<Shape, "circle">(px::cast<float>(lid));
            px::Match(w, px::on<"item">([&](px::Var<Item> it) {
                          pr[0] = it[&Item::s];
                          it[&Item::id] = it[&Item::id] + uint8_t(1);
                          w = px::make_variant<Wrapped, "item">(
                              px::make<Item>(it[&Item::id], pr[lid % 2]));
                      }),
                      px::on<"empty">([&] {
                          w = px::select(
                              lid % 2 == 0, w,
                              px::make_variant<Wrapped, "item">(px::make<Item>(uint8_t(9), pr[1])));
                      }));
            out[i] = w;
        });
    const int n = 4 * group;
    std::vector<Wrapped> in(n);
    for (int i = 0; i < n; ++i) {
        if (i % 3) {
            in[i] = Wrapped::make<"item">(Item{uint8_t(i == 1 ? 255 : i * 7), random_shape(i % 4)});
        } else {
            // An empty value's payload bytes are garbage, an invalid inner tag included:
            // nothing may read them.
            auto* bytes = reinterpret_cast<unsigned char*>(&in[i]);
            std::memset(bytes + 4, 0xf7, sizeof(Wrapped) - 4);
        }
    }
    Buffer bin(in), bout{std::vector<Wrapped>(n)};
    Module m(k.ir());
    REQUIRE(m.status() == PLX_OK);
    REQUIRE(launch(m.kernel(), dims1(n, group), {bin, bout}) == PLX_OK);
    const auto out = bout.read<Wrapped>();
    for (int i = 0; i < n; ++i) {
        CAPTURE(i);
        const int lid = i % group;
        const Wrapped& src = in[i - lid + group - 1 - lid];
        const Shape circle = Shape::make<"circle">(float(lid));
        Item want{};
        bool item = true;
        if (src.holds<"item">()) {
            const Item it = payload<"item">(src);
            want = Item{uint8_t(it.id + 1), lid % 2 ? circle : it.s};
        } else if (lid % 2) {
            want = Item{9, circle};
        } else {
            item = false;
        }
        REQUIRE(out[i].holds<"item">() == item);
        if (!item) continue;
        REQUIRE(payload<"item">(out[i]).id == want.id);
        require_equal(payload<"item">(out[i]).s, want.s);
    }
}

} // namespace interp_test::variants
