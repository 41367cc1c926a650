// The samples of the IR's types: vectors, half and bfloat16, small integers, records and
// variants (see kernels.hpp for what each computes and how it is launched).
#include "kernels.hpp"

#include "plexus/subgroup.hpp"

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

namespace {

// softmax over rows of T, accumulated in f32 (kernels.hpp). A group of width x (256 / width)
// work-items handles 256 / width rows; the work-items of a row stride along it.
constexpr int kSoftmaxGroup = 256;

template <class T> SoftmaxFamily<T> make_softmax(const char* name) {
    auto f = px::family(
        name, {"x", "y", "rows", "cols"},
        [](const px::Tuning& v, px::In<T> x, px::Out<T> y, px::Int rows, px::Int cols) {
            const int W = int(v["width"]), R = kSoftmaxGroup / W, per = int(v["per"]);
            const bool subgroups = v["subgroups"] == 1;
            px::require_work_group_size(W, R);
            px::Int lx = px::local_id(0);
            px::Int ly = px::local_id(1);
            px::Int row = px::group_id(1) * R + ly;
            // Work-items past the last row work on it too (every one must reach the barriers)
            // but write nothing.
            px::Int base = px::min(row, rows - 1) * cols;
            // With subgroups: each subgroup reduces its part, and where a row has several
            // (width 256; the family's check: whole subgroups, 32 at most) their results meet
            // in shared memory. Without: a barrier tree over a row of W in shared memory.
            auto partial = px::shared<float>(R, subgroups ? 32 : W);
            auto reduce = [&](const px::Float& value, auto combine, auto subgroup_combine) {
                px::Float total = value;
                if (subgroups) {
                    total = subgroup_combine(value);
                    if (W == 32) return total; // the check: one subgroup of 32 a row
                    px::Int width = px::subgroup_size();
                    px::If(px::lane_id() == 0, [&] { partial[ly][lx / width] = total; });
                    px::barrier();
                    total = partial[ly][0];
                    px::For(1, W / width,
                            [&](px::Int i) { total = combine(total, partial[ly][i]); });
                    px::barrier(); // everyone has read the total before the array is reused
                    return total;
                }
                partial[ly][lx] = value;
                px::barrier();
                for (int s = W / 2; s > 0; s /= 2) {
                    px::If(lx < s, [&] {
                        partial[ly][lx] = combine(partial[ly][lx], partial[ly][lx + s]);
                    });
                    px::barrier();
                }
                total = partial[ly][0];
                px::barrier();
                return total;
            };
            auto max_of = [](const auto& a, const auto& b) { return px::max(a, b); };
            auto sum_of = [](const auto& a, const auto& b) { return a + b; };
            auto sg_max = [](const px::Float& a) { return px::subgroup_reduce_max(a); };
            auto sg_sum = [](const px::Float& a) { return px::subgroup_reduce_add(a); };
            constexpr float inf = std::numeric_limits<float>::infinity();
            if (per == 0) {
                // Three passes over x: its maximum, the sum of exponentials, the output.
                px::Float m = -inf;
                px::For(lx, cols, W, [&](px::Int c) { m = px::max(m, x[base + c]); });
                px::Float row_max = reduce(m, max_of, sg_max);
                px::Float sum = 0.0f;
                px::For(lx, cols, W, [&](px::Int c) { sum += px::exp(x[base + c] - row_max); });
                px::Float inv = 1.0f / reduce(sum, sum_of, sg_sum);
                px::If(row < rows, [&] {
                    px::For(lx, cols, W, [&](px::Int c) {
                        y[base + c] = px::cast<T>(px::exp(x[base + c] - row_max) * inv);
                    });
                });
                return;
            }
            // The row in registers: `per` values a work-item, read once (an index past the
            // row reads its last value and counts as -inf).
            std::vector<px::Float> values;
            values.reserve(size_t(per));
            px::Float m = -inf;
            for (int j = 0; j < per; ++j) {
                px::Int c = lx + j * W;
                values.emplace_back(px::select(c < cols, px::Float(x[base + px::min(c, cols - 1)]),
                                               px::Float(-inf)));
                m = px::max(m, values.back());
            }
            px::Float row_max = reduce(m, max_of, sg_max);
            px::Float sum = 0.0f;
            for (px::Float& value : values) {
                value = px::exp(value - row_max); // exp(-inf) = 0 past the row
                sum += value;
            }
            px::Float inv = 1.0f / reduce(sum, sum_of, sg_sum);
            px::If(row < rows, [&] {
                for (int j = 0; j < per; ++j) {
                    px::Int c = lx + j * W;
                    px::If(c < cols, [&] { y[base + c] = px::cast<T>(values[size_t(j)] * inv); });
                }
            });
        });
    f.tune("per", {0, 8, 32}).tune("width", {32, 256}).tune("subgroups", {0, 1});
    f.check([](const px::Tuning& v, const px::FamilyContext& c) -> std::string {
        const int64_t cols = c.shape.at(1), W = v["width"], per = v["per"];
        if (per > 0 && cols > per * W)
            return "a row of " + std::to_string(cols) + " does not fit " + std::to_string(per) +
                   " values on each of " + std::to_string(W) + " work-items";
        // Only the width the row needs: a row of 1000 on 256 work-items of 8 is left to 32 x 32.
        if (per > 0 && per * W >= 4 * cols && per > 8)
            return "a row of " + std::to_string(cols) + " needs fewer than " +
                   std::to_string(per * W) + " places";
        if (v["subgroups"] == 1) {
            const uint32_t sg = c.device.subgroup_size;
            if (W == 32 && sg != 32)
                return "subgroups 1 at width 32 needs subgroups of 32 (the device's have " +
                       std::to_string(sg) + " work-items)";
            if (sg == 0 || W % sg != 0 || W / sg > 32)
                return "subgroups 1 needs whole subgroups in a row of " + std::to_string(W) +
                       ", at most 32 of them (the device's subgroups have " + std::to_string(sg) +
                       " work-items)";
        }
        return "";
    });
    f.grid([](const px::Tuning& v, const px::FamilyContext& c) {
        const uint64_t W = uint64_t(v["width"]), R = kSoftmaxGroup / W;
        const uint64_t rows = uint64_t(c.shape.at(0));
        return Grid(W, (rows + R - 1) / R * R).local_size(uint32_t(W), uint32_t(R));
    });
    // A GPU with subgroups of 32: the row in registers, one subgroup a row up to 1024 columns,
    // a group a row up to 8192; beyond, three passes. Elsewhere the portable variant.
    f.heuristic([](const px::FamilyContext& c) {
        const int64_t cols = c.shape.at(1);
        if (c.device.type != DeviceType::GPU || c.device.subgroup_size != 32 ||
            !c.device.subgroup_ops || (*c.device.subgroup_ops & PLX_SUBGROUP_BASIC) == 0)
            return px::Tuning{{"per", 0}, {"width", 32}, {"subgroups", 0}};
        const int64_t width = cols <= 1024 ? 32 : 256;
        const int64_t per = cols <= 8 * width ? 8 : cols <= 32 * width ? 32 : 0;
        return px::Tuning{{"per", per}, {"width", width}, {"subgroups", 1}};
    });
    return f;
}

} // namespace

const SoftmaxFamily<bf16>& softmax_bf16() {
    static const auto f = make_softmax<px::bf16>("softmax_bf16");
    return f;
}

const SoftmaxFamily<float>& softmax_f32() {
    static const auto f = make_softmax<float>("softmax_f32");
    return f;
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
