// Records in kernel-language kernels: whole and by path in buffers, shared and private arrays and
// variables, nested with padding, select; every field checked against the host's struct.
#include "fixture.hpp"

#include <plexus/kernel.hpp>

namespace interp_test::records {

namespace px = plexus;

struct Particle {
    px::Vec<float, 3> pos, vel;
    float mass;
    px::bf16 charge;
};
PLEXUS_RECORD(Particle, pos, vel, mass, charge);

// Padding everywhere: after flag (to 16), inside Particle, after id.
struct Packed {
    int8_t flag;
    Particle p;
    uint16_t id;
    px::Vec<px::half, 2> uv;
};
PLEXUS_RECORD(Packed, flag, p, id, uv);

static_assert(sizeof(Particle) == 48 && sizeof(Packed) == 80);

Particle random_particle() {
    auto f = random_vector<float>(8, -100.f, 100.f);
    Particle p{};
    for (int l = 0; l < 3; ++l)
        p.pos[l] = f[l], p.vel[l] = f[3 + l];
    p.mass = f[6];
    p.charge = px::bf16(f[7]);
    return p;
}

void require_equal(const Particle& got, const Particle& want) {
    for (int l = 0; l < 3; ++l) {
        REQUIRE(got.pos[l] == want.pos[l]);
        REQUIRE(got.vel[l] == want.vel[l]);
    }
    REQUIRE(got.mass == want.mass);
    REQUIRE(got.charge.bits == want.charge.bits);
}

TEST_CASE("records in buffers and variables: whole values, and parts along paths") {
    auto k = px::kernel(
        "records", {"in", "out", "n"}, [](px::In<Packed> in, px::InOut<Packed> out, px::Int n) {
            px::Int i = px::global_id(0);
            px::If(i < n, [&] {
                px::Var<Packed> v = in[i];
                v[&Packed::p][&Particle::pos].y() = v[&Packed::p][&Particle::mass] * 2.0f;
                v[&Packed::id] = v[&Packed::id] + uint16_t(1);
                out[i] = v;
                out[i][&Packed::p][&Particle::charge] =
                    in[i][&Packed::p][&Particle::charge] * px::bf16(3.0f);
                out[i][&Packed::uv].x() = in[i][&Packed::uv].y();
                out[i][&Packed::flag] = px::cast<int8_t>(out[i][&Packed::flag] * int8_t(3));
            });
        });
    const int n = 150;
    std::vector<Packed> in(n);
    for (auto& e : in) {
        e.flag = int8_t(random_vector<int32_t>(1, -128, 127)[0]);
        e.p = random_particle();
        e.id = uint16_t(random_vector<uint32_t>(1, 0, 65535)[0]);
        e.uv[0] = px::half(random_vector<float>(1, -9.f, 9.f)[0]);
        e.uv[1] = px::half(random_vector<float>(1, -9.f, 9.f)[0]);
    }
    in[0].id = 65535; // wraps to 0
    Buffer bin(in), bout{std::vector<Packed>(n)};
    Module m(k.ir());
    REQUIRE(m.status() == PLX_OK);
    REQUIRE(launch(m.kernel(), dims1(n, 32), {bin, bout, n}) == PLX_OK);
    const auto out = bout.read<Packed>();
    for (int i = 0; i < n; ++i) {
        CAPTURE(i);
        Packed want = in[i];
        want.p.pos[1] = want.p.mass * 2.0f;
        want.id = uint16_t(want.id + 1);
        want.p.charge = px::bf16(float(in[i].p.charge) * 3.0f);
        want.uv[0] = in[i].uv[1];
        want.flag = int8_t(in[i].flag * 3);
        REQUIRE(out[i].flag == want.flag);
        require_equal(out[i].p, want.p);
        REQUIRE(out[i].id == want.id);
        REQUIRE(out[i].uv[0].bits == want.uv[0].bits);
        REQUIRE(out[i].uv[1].bits == want.uv[1].bits);
    }
}

constexpr int group = 32;

TEST_CASE("records in shared memory and private arrays, and select of records") {
    auto k =
        px::kernel("records_mem", {"in", "out"}, [](px::In<Particle> in, px::Out<Particle> out) {
            auto sh = px::shared<Particle>(group);
            auto pr = px::private_array<Particle>(3);
            px::Int lid = px::local_id(0), i = px::global_id(0);
            sh[lid] = in[i];
            px::barrier();
            px::For(0, 3, [&](px::Int j) { pr[j] = sh[(lid + j) % group]; });
            px::Var<Particle> best = pr[0];
            px::For(1, 3, [&](px::Int j) {
                best = px::select(pr[j][&Particle::mass] > best[&Particle::mass], pr[j], best);
            });
            pr[2][&Particle::vel].z() = best[&Particle::mass];
            best[&Particle::vel] = pr[2][&Particle::vel];
            out[i] = best;
        });
    const int n = 4 * group;
    std::vector<Particle> in(n);
    for (auto& p : in)
        p = random_particle();
    Buffer bin(in), bout{std::vector<Particle>(n)};
    Module m(k.ir());
    REQUIRE(m.status() == PLX_OK);
    REQUIRE(launch(m.kernel(), dims1(n, group), {bin, bout}) == PLX_OK);
    const auto out = bout.read<Particle>();
    for (int i = 0; i < n; ++i) {
        CAPTURE(i);
        const int base = i / group * group, lid = i % group;
        Particle pr[3];
        for (int j = 0; j < 3; ++j)
            pr[j] = in[base + (lid + j) % group];
        Particle best = pr[0];
        for (int j = 1; j < 3; ++j)
            if (pr[j].mass > best.mass) best = pr[j];
        pr[2].vel[2] = best.mass;
        best.vel = pr[2].vel;
        require_equal(out[i], best);
    }
}

} // namespace interp_test::records
