// Variants in host code: matched from buffers, shared memory and variables, made, stored with
// only the active case's payload, break and continue inside a match inside a loop, and a
// match as group control with barriers inside it.
#include "host_test.hpp"
#include "type_kernels.hpp"

#include <cstring>

using namespace host_test;
using typek::Particle;
using typek::Shape;

namespace {

namespace px = plexus;
using V2 = px::Vec<float, 2>;

float rnd() {
    return float(int(rng()() % 2001) - 1000) * 0.01f;
}

Shape random_shape() {
    Shape s;
    switch (rng()() % 4) {
    case 0: s = Shape::make<"none">(); break;
    case 1: s = Shape::make<"circle">(rnd()); break;
    case 2: s = Shape::make<"rect">(V2{{rnd(), rnd()}}); break;
    default: {
        Particle p{};
        p.pos = {{rnd(), rnd(), rnd()}};
        p.vel = {{rnd(), rnd(), rnd()}};
        p.mass = rnd();
        p.charge = px::bf16(rnd());
        s = Shape::make<"blob">(p);
    }
    }
    return s;
}

const unsigned char kPattern = 0xee;
// The bytes of the variant from `from` on are still the pattern the buffer was filled with.
bool untouched_from(const Shape& s, size_t from) {
    for (size_t b = from; b < sizeof(Shape); ++b)
        if (reinterpret_cast<const unsigned char*>(&s)[b] != kPattern) return false;
    return true;
}

constexpr size_t kPayload = 16; // Shape's payload offset
// The bytes a case's payload owns; a blob's Particle ends in padding after its charge.
size_t payload_end(uint32_t tag) {
    switch (tag) {
    case 0: return kPayload;
    case 1: return kPayload + sizeof(float);
    case 2: return kPayload + sizeof(V2);
    default: return kPayload + offsetof(Particle, charge) + 2;
    }
}

void require_same_shape(const Shape& got, const Shape& want) {
    REQUIRE(got.tag == want.tag);
    switch (want.tag) {
    case 1: REQUIRE(got.get<"circle">() == want.get<"circle">()); break;
    case 2: REQUIRE(got.get<"rect">() == want.get<"rect">()); break;
    case 3: {
        Particle g = got.get<"blob">(), w = want.get<"blob">();
        REQUIRE(g.pos == w.pos);
        REQUIRE(g.vel == w.vel);
        REQUIRE(g.mass == w.mass);
        REQUIRE(g.charge.bits == w.charge.bits);
        break;
    }
    default: break;
    }
    REQUIRE(untouched_from(got, payload_end(want.tag)));
}

} // namespace

TEST_CASE("variants: match on a buffer and a variable, make, store, break and continue in a loop") {
    const ir::Kernel& k = typek::variants();
    auto hk = compile(k);
    const int n = 500;
    std::vector<Shape> in(n);
    for (auto& s : in)
        s = random_shape();
    std::vector<Shape> out(n), marks(n);
    std::memset(static_cast<void*>(out.data()), kPattern, n * sizeof(Shape));
    std::memset(static_cast<void*>(marks.data()), kPattern, n * sizeof(Shape));
    std::vector<float> area(n);
    std::vector<int32_t> count(n);
    int32_t nn = n;
    run(*hk, k, {in.data(), out.data(), marks.data(), area.data(), count.data(), &nn},
        grid1(n, 64));
    for (int i = 0; i < n; ++i) {
        INFO("element " << i << ", case " << in[i].tag);
        const Shape& s = in[i];
        float a = -1.0f;
        Shape t = s;
        if (s.holds<"circle">()) {
            const float r = s.get<"circle">();
            a = r * r * 3.0f;
            t = Shape::make<"rect">(V2{{r, r * 2.0f}});
        } else if (s.holds<"rect">()) {
            const V2 v = s.get<"rect">();
            a = (v[0] + 1.0f) * v[1];
            t = Shape::make<"circle">(v[0] + v[1]);
        } else if (s.holds<"blob">()) {
            a = s.get<"blob">().mass;
        }
        REQUIRE(area[i] == a);
        require_same_shape(out[i], t);
        require_same_shape(marks[i], Shape::make<"circle">(a));
        int32_t c = 0;
        for (int j = 0; j < 8; ++j) {
            const Shape& x = in[(i + j) % n];
            if (x.holds<"none">()) break;
            if (x.holds<"circle">()) continue;
            c += 1 + 100;
        }
        REQUIRE(count[i] == c);
    }
}

TEST_CASE("a match as group control: barriers in a case, a payload per work-item, break in a "
          "barrier loop") {
    const ir::Kernel& k = typek::variant_group();
    auto hk = compile(k);
    const int group = 64, n = group * 3;
    auto x = random_vec<float>(n, -5.f, 5.f);
    struct Mode {
        std::vector<Shape> mode;
        int32_t steps;
    };
    Particle blob{};
    const Mode modes[] = {
        {{Shape::make<"circle">(1.25f), Shape::make<"rect">(V2{{5.7f, 0.f}}),
          Shape::make<"circle">(2.f), Shape::make<"none">(), Shape::make<"rect">(V2{{9.f, 9.f}})},
         5 + 1},
        {{Shape::make<"rect">(V2{{1.f, 1.f}}), Shape::make<"blob">(blob),
          Shape::make<"rect">(V2{{-2.5f, 0.f}}), Shape::make<"rect">(V2{{3.2f, 0.f}}),
          Shape::make<"circle">(0.f)},
         1 - 2 + 3 + 1}};
    for (const Mode& m : modes) {
        INFO("mode[0] case " << m.mode[0].tag);
        for (LocalMem mem : {LocalMem::AsTheRuleSays, LocalMem::None}) {
            std::vector<float> y(n);
            std::vector<int32_t> steps(n);
            run(*hk, k, {const_cast<Shape*>(m.mode.data()), x.data(), y.data(), steps.data()},
                grid1(n, group), mem);
            for (int i = 0; i < n; ++i) {
                const int l = i % group, ln = (l + 1) % group, next = i - l + ln;
                float want = x[i];
                if (m.mode[0].holds<"circle">()) {
                    const float r = m.mode[0].get<"circle">();
                    want = (r + float(ln)) * x[next] + (r + float(l));
                }
                INFO("work-item " << i);
                REQUIRE(y[i] == want);
                REQUIRE(steps[i] == m.steps);
            }
        }
    }
}
