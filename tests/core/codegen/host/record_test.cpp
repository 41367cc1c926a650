// Records and private arrays in host code: whole and by path in variables, buffers, shared
// memory and private arrays, the padding of buffer elements never written, fields of buffer
// elements read alone, and private arrays that live across a barrier.
#include "host_test.hpp"
#include "type_kernels.hpp"

#include "plexus/half.hpp"

#include <algorithm>
#include <cstring>

using namespace host_test;
using typek::Cell;
using typek::Particle;

namespace {

namespace px = plexus;

Particle random_particle() {
    auto f = [] { return float(int(rng()() % 20001) - 10000) * 0.01f; };
    Particle p;
    p.pos = {{f(), f(), f()}};
    p.vel = {{f(), f(), f()}};
    p.mass = f();
    p.charge = px::bf16(f());
    return p;
}

// The bytes of [from, to) of each element equal the pattern byte.
template <class T>
bool untouched(const std::vector<T>& v, size_t from, size_t to, unsigned char pattern) {
    for (const T& e : v)
        for (size_t b = from; b < to; ++b)
            if (reinterpret_cast<const unsigned char*>(&e)[b] != pattern) return false;
    return true;
}

} // namespace

TEST_CASE(
    "records: paths into variables, buffers, shared memory and a private array across a barrier") {
    const ir::Kernel& k = typek::records();
    auto layout = plexus::codegen::host::analyze(k);
    REQUIRE(layout.privates.size() == 1);
    CHECK(layout.privates[0] ==
          plexus::codegen::host::Storage::PerItem); // written before the barrier, read after
    CHECK(layout.per_item_bytes >= 2 * sizeof(Particle));
    auto hk = compile(k);
    const int n = 150, group = 32, items = (n + group - 1) / group * group;
    std::vector<Particle> in(n);
    for (auto& p : in)
        p = random_particle();
    float dt = 0.125f;
    // What each work-item computes before the barrier.
    std::vector<Particle> moved(items);
    for (int i = 0; i < items; ++i) {
        Particle p = in[std::min(i, n - 1)];
        for (int l = 0; l < 3; ++l)
            p.pos[l] = p.pos[l] + p.vel[l] * dt;
        p.vel[1] = p.vel[1] - 9.75f * dt;
        p.charge = px::bf16(p.mass * 0.5f);
        moved[i] = p;
    }
    for (LocalMem mem : {LocalMem::AsTheRuleSays, LocalMem::None}) {
        std::vector<Particle> parts = in;
        std::vector<Cell> cells(n);
        std::memset(static_cast<void*>(cells.data()), 0x77, cells.size() * sizeof(Cell));
        std::vector<float> probe(n);
        int32_t nn = n;
        run(*hk, k, {parts.data(), cells.data(), probe.data(), &dt, &nn}, grid1(n, group), mem);
        for (int i = 0; i < n; ++i) {
            INFO("element " << i);
            const int l = i % group;
            const Particle& q = moved[i - l + (l + 1) % group];
            Particle want = q;
            want.vel[2] = moved[i].mass + 1.0f;
            const Particle& got = parts[i];
            REQUIRE(got.pos == want.pos);
            REQUIRE(got.vel == want.vel);
            REQUIRE(got.mass == want.mass);
            REQUIRE(got.charge.bits == want.charge.bits);
            const Cell& c = cells[i];
            REQUIRE(c.flag == int8_t(l - 64));
            REQUIRE(c.h.bits == px::half(q.mass).bits);
            REQUIRE(c.p.pos == px::Vec<float, 3>{{0.5f, q.pos[1], q.pos[2]}});
            REQUIRE(c.p.vel == q.vel);
            REQUIRE(c.p.mass == q.mass);
            REQUIRE(c.p.charge.bits == q.charge.bits);
            REQUIRE(c.count == uint16_t(i));
            REQUIRE(probe[i] == float(want.charge) + want.vel[2]);
        }
        // Stores go field by field: padding keeps what was there.
        CHECK(untouched(cells, 1, 2, 0x77));                                     // after flag
        CHECK(untouched(cells, offsetof(Cell, h) + 2, offsetof(Cell, p), 0x77)); // before p
        CHECK(untouched(cells, offsetof(Cell, count) + 2, sizeof(Cell), 0x77));  // the tail
        // Particle's tail, whatever copying `in` left there.
        bool tails_kept = true;
        for (int i = 0; i < n; ++i)
            tails_kept =
                tails_kept &&
                std::memcmp(reinterpret_cast<const char*>(&parts[i]) + offsetof(Particle, charge) +
                                2,
                            reinterpret_cast<const char*>(&in[i]) + offsetof(Particle, charge) + 2,
                            sizeof(Particle) - offsetof(Particle, charge) - 2) == 0;
        CHECK(tails_kept);
    }
}

TEST_CASE("record fields of buffer elements, read alone") {
    const ir::Kernel& k = typek::record_fields();
    auto hk = compile(k);
    const int n = 300;
    std::vector<Particle> parts(n);
    for (auto& p : parts)
        p = random_particle();
    std::vector<float> out(n);
    int32_t nn = n;
    run(*hk, k, {parts.data(), out.data(), &nn}, grid1(n, 64));
    for (int i = 0; i < n; ++i)
        REQUIRE(out[i] == parts[i].mass + parts[i].vel[1]);
}

TEST_CASE("private arrays: one live across a barrier gets a copy per work-item, one within a "
          "region a stack array") {
    const ir::Kernel& k = typek::private_barrier();
    auto layout = plexus::codegen::host::analyze(k);
    using plexus::codegen::host::Storage;
    CHECK(layout.privates == std::vector<Storage>{Storage::PerItem, Storage::Private});
    // The float[4] copies follow the per-item variables: 64 work-items need at least 64 * 16 bytes.
    CHECK(plexus::codegen::host_local_bytes(k, 64) >= 64 * 4 + 64 * 16);
    auto hk = compile(k);
    const int group = 64, n = group * 5;
    auto x = random_vec<float>(n, -10.f, 10.f);
    for (LocalMem mem : {LocalMem::AsTheRuleSays, LocalMem::None}) {
        std::vector<float> y(n);
        run(*hk, k, {x.data(), y.data()}, grid1(n, group), mem);
        for (int i = 0; i < n; ++i) {
            const int l = i % group, next = i - l + (l + 1) % group;
            float want = x[next] * 4.0f + float(2 * ((l + 1) % group));
            for (int j = 0; j < 4; ++j)
                want += x[i] * float(j + 1);
            INFO("work-item " << i);
            REQUIRE(y[i] == want);
        }
    }
}
