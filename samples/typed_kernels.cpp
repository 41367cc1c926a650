// The samples of the IR's types: vectors, half and bfloat16, small integers, records and
// variants (see kernels.hpp for what each computes and how it is launched).
#include "kernels.hpp"

#include <cmath>
#include <limits>

namespace plexus::samples {

namespace px = plexus;

const Kernel<In<Vec4>, In<Vec4>, Out<Vec4>, Int>& vector_add_float4() {
    static const auto k =
        px::kernel("vector_add_float4", {"a", "b", "c", "n4"},
                   [](px::In<Vec4> a, px::In<Vec4> b, px::Out<Vec4> c, px::Int n4) {
                       px::Int i = px::global_id(0);
                       px::If(i < n4, [&] { c[i] = a[i] + b[i]; });
                   });
    return k;
}

const Kernel<In<half>, InOut<half>, Float, Int>& saxpy_f16() {
    static const auto k =
        px::kernel("saxpy_f16", {"x", "y", "a", "n"},
                   [](px::In<px::half> x, px::InOut<px::half> y, px::Float a, px::Int n) {
                       px::Int i = px::global_id(0);
                       px::If(i < n, [&] {
                           px::Half ah = px::cast<px::half>(a);
                           y[i] = ah * x[i] + y[i];
                       });
                   });
    return k;
}

const Kernel<In<float>, Out<float>, Int>& gelu_f32() {
    static const auto k =
        px::kernel("gelu_f32", {"x", "y", "n"}, [](px::In<float> x, px::Out<float> y, px::Int n) {
            px::Int i = px::global_id(0);
            px::If(i < n, [&] {
                px::Float v = x[i];
                px::Float u = 0.7978845608f * (v + 0.044715f * v * v * v);
                y[i] = 0.5f * v * (1.0f + px::tanh(u));
            });
        });
    return k;
}

const Kernel<In<Vec<int8_t, 4>>, In<float>, Out<Vec4>, Int, Int>& dequant_int8() {
    static const auto k = px::kernel(
        "dequant_int8", {"w", "scale", "out", "rows", "cols4"},
        [](px::In<px::Vec<int8_t, 4>> w, px::In<float> scale, px::Out<Vec4> out, px::Int rows,
           px::Int cols4) {
            px::Int i = px::global_id(0);
            px::If(i < rows * cols4, [&] { out[i] = px::cast<Vec4>(w[i]) * scale[i / cols4]; });
        });
    return k;
}

const Kernel<In<Particle>, Out<Particle>, Int, Float>& particles() {
    static const auto k =
        px::kernel("particles", {"in", "out", "n", "dt"},
                   [](px::In<Particle> in, px::Out<Particle> out, px::Int n, px::Float dt) {
                       px::require_work_group_size(particles_tile);
                       auto tile = px::shared<Particle>(particles_tile);
                       px::Int i = px::global_id(0);
                       px::Int lid = px::local_id(0);
                       px::Int size = px::local_size(0);
                       // A work-item past the end still loads tiles for the others and reaches
                       // every barrier; it works on the last particle and writes nothing.
                       px::Var<Particle> p = in[px::min(i, n - 1)];
                       px::Var<Vec3> pos = p[&Particle::pos];
                       px::Var<Vec3> force = 0.0f;
                       px::For(0, n, size, [&](px::Int start) {
                           px::Int j = start + lid;
                           px::If(j < n, [&] { tile[lid] = in[j]; });
                           px::barrier();
                           px::For(0, px::min(size, n - start), [&](px::Int k) {
                               px::Var<Vec3> d = tile[k][&Particle::pos] - pos;
                               px::Float r2 = d.x() * d.x() + d.y() * d.y() + d.z() * d.z() +
                                              particles_softening;
                               force += d * (tile[k][&Particle::mass] / (r2 * px::sqrt(r2)));
                           });
                           px::barrier();
                       });
                       px::Var<Vec3> vel = p[&Particle::vel];
                       px::Match(p[&Particle::kind], px::on<"free">([&] { vel += force * dt; }),
                                 px::on<"charged">([&](px::Var<float> strength) {
                                     px::Float q = p[&Particle::charge] * strength;
                                     vel += (force + px::Value<Vec3>(particles_field) * q) * dt;
                                 }),
                                 px::on<"anchored">([&](px::Var<Vec3> anchor) {
                                     vel = (anchor - pos) * particles_spring;
                                 }));
                       p[&Particle::vel] = vel;
                       p[&Particle::pos] = pos + vel * dt;
                       px::If(i < n, [&] { out[i] = p; });
                   });
    return k;
}

} // namespace plexus::samples
