// Runs the generated code of the record, variant and array kernels on random inputs and
// checks every field of every output element against the host reference, exactly. The host
// types are those of host_types.hpp.
#include "host_reference.hpp"
#include "host_types.hpp"
#include "kernels.hpp"
#include "run_host.hpp"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <vector>

using namespace codegen_test;

namespace {

using F4 = plexus::Vec<float, 4>;

bool same_f3(const F3& got, const F3& want) {
    return same32(got[0], want[0]) && same32(got[1], want[1]) && same32(got[2], want[2]);
}
bool same_particle(const Particle& got, const Particle& want) {
    return same_f3(got.pos, want.pos) && same_f3(got.vel, want.vel) &&
           same32(got.mass, want.mass) && got.charge.bits == want.charge.bits;
}

} // namespace

TEST_CASE("records: fields, paths into fields and lanes, construction, shared memory, select") {
    const size_t n = 300; // the last group of 64 is partly outside
    const float dt = 0.375f;
    Random r(41);
    std::vector<Particle> parts(n);
    for (auto& p : parts) {
        for (int l = 0; l < 3; ++l)
            p.pos[l] = r.uniform(-10, 10), p.vel[l] = r.uniform(-10, 10);
        p.mass = r.uniform(0, 4);
        p.charge = bf16(r.uniform(-2, 2));
    }
    Program k("records");
    Buffer<Particle> dparts(parts), dpick{std::vector<Particle>(n)};
    Buffer<Cell> dcells{std::vector<Cell>(n)};
    launch(k, {n}, {size_t(records_group)}, dparts, dcells, dpick, int32_t(n), dt);
    auto got_parts = dparts.read(), got_pick = dpick.read();
    auto got_cells = dcells.read();
    Mismatches bad;
    for (size_t i = 0; i < n; ++i) {
        const size_t lid = i % records_group, next = i - lid + (lid + 1) % records_group;
        const Particle q = parts[std::min(next, n - 1)];
        Particle p = parts[i];
        p.vel[1] = p.vel[1] - dt;
        for (int l = 0; l < 3; ++l)
            p.pos[l] = p.pos[l] + p.vel[l] * 0.5f;
        p.charge = bf16(q.mass);
        Particle stored = p;
        stored.mass = p.mass * 2.0f;
        if (!same_particle(got_parts[i], stored))
            bad.add(i, got_parts[i].mass, stored.mass, "parts");
        Cell cell{q, uint16_t(i), half(p.mass), uint8_t(lid & 1)};
        cell.p.pos[2] = 1.5f;
        cell.p.charge = bf16(p.mass * 3.0f);
        const Cell& g = got_cells[i];
        if (!same_particle(g.p, cell.p) || g.id != cell.id || g.h.bits != cell.h.bits ||
            g.flag != cell.flag)
            bad.add(i, g.id, cell.id, "cells");
        const Particle& pick = p.mass > q.mass ? p : q;
        if (!same_particle(got_pick[i], pick)) bad.add(i, got_pick[i].mass, pick.mass, "pick");
    }
    CHECK(bad.count == 0);
}

TEST_CASE("variants: match in a loop with break and continue, otherwise, make_variant") {
    const size_t n = 500;
    Random r(42);
    std::vector<Kind> kinds(n);
    std::vector<int32_t> counts(n);
    for (size_t i = 0; i < n; ++i) {
        switch (r.bits() % 4) {
        case 0: kinds[i] = Kind::make<"free">(); break;
        case 1: kinds[i] = Kind::make<"charged">(half(r.uniform(-8, 8))); break;
        case 2:
            kinds[i] =
                Kind::make<"anchored">(F3{{r.uniform(-5, 5), r.uniform(-5, 5), r.uniform(-5, 5)}});
            break;
        default:
            kinds[i] = Kind::make<"boxed">(Pair{r.range(-10, 10), int16_t(r.range(-1000, 1000))});
            break;
        }
        counts[i] = r.range(0, 6);
    }
    Program k("variants");
    Buffer<Kind> dkinds(kinds), dout{std::vector<Kind>(n)};
    Buffer<int32_t> dcounts(counts);
    Buffer<float> dres{std::vector<float>(2 * n)};
    launch(k, {n}, {64}, dkinds, dcounts, dout, dres, int32_t(n));
    auto out = dout.read();
    auto res = dres.read();
    Mismatches bad;
    for (size_t i = 0; i < n; ++i) {
        float acc = 0;
        for (int32_t j = 0; j < counts[i]; ++j) {
            const Kind& item = kinds[(i + size_t(j)) % n];
            if (item.holds<"free">()) acc = acc + 1.0f;
            if (item.holds<"charged">()) {
                const half q(float(payload<"charged">(item)) * 2.0f);
                if (float(q) < 0) break;
                acc = acc + float(q);
            }
            if (item.holds<"anchored">())
                acc = acc + payload<"anchored">(item)[0], acc = acc + payload<"anchored">(item)[1];
            if (item.holds<"boxed">()) {
                if (payload<"boxed">(item).a > 0) continue;
                acc = acc + float(payload<"boxed">(item).s);
            }
        }
        if (!same32(res[2 * i], acc)) bad.add(2 * i, res[2 * i], acc, "res");
        const float z = kinds[i].holds<"anchored">() ? payload<"anchored">(kinds[i])[2] : -1.0f;
        if (!same32(res[2 * i + 1], z)) bad.add(2 * i + 1, res[2 * i + 1], z, "res");
        const Kind want = acc > 10   ? Kind::make<"charged">(half(acc))
                          : acc < 0  ? Kind::make<"anchored">(F3{{acc, float(i), 0.5f}})
                          : acc == 0 ? Kind::make<"boxed">(Pair{int32_t(i), int16_t(counts[i])})
                                     : Kind::make<"free">();
        const Kind& got = out[i];
        bool same = got.tag == want.tag;
        if (same && want.holds<"charged">())
            same = payload<"charged">(got).bits == payload<"charged">(want).bits;
        if (same && want.holds<"anchored">())
            same = same_f3(payload<"anchored">(got), payload<"anchored">(want));
        if (same && want.holds<"boxed">())
            same = payload<"boxed">(got).a == payload<"boxed">(want).a &&
                   payload<"boxed">(got).s == payload<"boxed">(want).s;
        if (!same) bad.add(i, got.tag, want.tag, "out");
    }
    CHECK(bad.count == 0);
}

TEST_CASE(
    "arrays: private arrays of i32, f16 and f32x4 (a lane stored alone), a shaped shared tile") {
    const size_t n = 300;
    Random r(43);
    std::vector<int32_t> vin(n * arrays_sorted);
    for (auto& v : vin)
        v = r.range(-1000, 1000);
    std::vector<float> tin(n);
    for (auto& t : tin)
        t = r.uniform(-100, 100);
    Program k("arrays");
    Buffer<int32_t> dvin(vin), dvout{std::vector<int32_t>(n * arrays_sorted)};
    Buffer<float> dtin(tin), dtout{std::vector<float>(n)};
    Buffer<half> dhsum{std::vector<half>(n)};
    Buffer<F4> dacc{std::vector<F4>(n)};
    launch(k, {n}, {size_t(arrays_group)}, dvin, dvout, dtin, dtout, dhsum, dacc, int32_t(n));
    auto vout = dvout.read();
    auto tout = dtout.read();
    auto hsum = dhsum.read();
    auto acc = dacc.read();
    Mismatches bad;
    for (size_t i = 0; i < n; ++i) {
        // tile[r][c] holds work-item r * 8 + c's value; work-item r * 8 + c reads tile[c][r].
        const size_t lid = i % arrays_group, base = i - lid, from = base + (lid % 8) * 8 + lid / 8;
        const float t = tin[std::min(from, n - 1)];
        if (!same32(tout[i], t)) bad.add(i, tout[i], t, "tout");
        std::vector<int32_t> sorted(vin.begin() + long(i * arrays_sorted),
                                    vin.begin() + long((i + 1) * arrays_sorted));
        std::sort(sorted.begin(), sorted.end());
        for (int s = 0; s < arrays_sorted; ++s)
            if (vout[i * arrays_sorted + s] != sorted[s])
                bad.add(i * arrays_sorted + s, vout[i * arrays_sorted + s], sorted[s], "vout");
        half h[4];
        for (int s = 0; s < 4; ++s)
            h[s] = half(float(sorted[s]) + tin[i]);
        const half sum(float(half(float(half(float(h[0]) + float(h[1]))) + float(h[2]))) +
                       float(h[3]));
        if (hsum[i].bits != sum.bits) bad.add(i, float(hsum[i]), float(sum), "hsum");
        const F4 want{{tin[i] + 1.0f, tin[i] + 2.0f, tin[i] + tin[i] * 2.0f, tin[i] + 4.0f}};
        for (int l = 0; l < 4; ++l)
            if (!same32(acc[i][l], want[l])) bad.add(i, acc[i][l], want[l], "acc4");
    }
    CHECK(bad.count == 0);
}
