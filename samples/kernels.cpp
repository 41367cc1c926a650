// Definitions of the sample kernels; see kernels.hpp for what each computes.
#include "kernels.hpp"
#include "math_catalog.hpp"
#include "matmul_mma.hpp"

#include "plexus/subgroup.hpp"

#include <algorithm>
#include <map>
#include <vector>

namespace plexus::samples {

namespace px = plexus;

const Kernel<In<float>, In<float>, Out<float>, Int>& vector_add() {
    static const auto k =
        px::kernel("vector_add", {"a", "b", "c", "n"},
                   [](px::In<float> a, px::In<float> b, px::Out<float> c, px::Int n) {
                       // Four elements per work-item, a work-group apart: a group adds one
                       // contiguous block of 4 x its size, so a CPU walks memory in order and
                       // vectorizes across work-items, each GPU load instruction stays coalesced,
                       // and a GPU thread has four loads of each input in flight instead of one
                       // (all loads come before the stores). Whether the block is whole is the same
                       // for the whole group, so the branch is uniform: a GPU does not diverge, and
                       // the host compiler unswitches it out of the work-item loop.
                       constexpr int P = vector_add_per_item;
                       px::Int s = px::local_size(0);
                       px::Int base = px::group_id(0) * s * P;
                       px::Int i = base + px::local_id(0);
                       px::If(n - base >= P * s,
                              [&] { // not base + P * s <= n, which could wrap
                                  std::vector<px::Float> sum;
                                  sum.reserve(P);
                                  for (int q = 0; q < P; ++q)
                                      sum.emplace_back(a[i + q * s] + b[i + q * s]);
                                  for (int q = 0; q < P; ++q)
                                      c[i + q * s] = sum[q];
                              })
                           .Else([&] {
                               // The last block, element by element: the loop keeps the code small,
                               // which the driver's JIT compiles faster, and the branch being
                               // uniform, a CPU still vectorizes the whole blocks.
                               px::For(i, n, s, [&](px::Int j) { c[j] = a[j] + b[j]; });
                           });
                   });
    return k;
}

namespace {
// The sum of `lanes` independent partial sums over elements i, i + step, ... below end: lanes
// loads in flight per GPU thread, and a CPU work-item that does not wait on the latency of one
// chain of additions. Step is px::Int, or int where it is a constant: the elements of one trip
// are then in[i], in[i + 1], ..., addresses the compiler sees are consecutive, and the partial
// sums one vector. They are added up in order at the end: a pairwise tree led LLVM's SLP
// vectorizer to pairs of floats instead of one vector (docs/benchmarks.md, "What the figures
// taught": reduce).
template <class Step>
px::Value<float> partial_sums(px::In<float>& in, px::Int& i, const px::Int& end, const Step& step,
                              int lanes) {
    std::vector<px::Float> acc;
    for (int q = 0; q < lanes; ++q)
        acc.emplace_back(0.0f);
    px::While(i + (lanes - 1) * step < end, [&] {
        for (int q = 0; q < lanes; ++q)
            acc[size_t(q)] += in[i + q * step];
        i += lanes * step;
    });
    px::While(i < end, [&] {
        acc[0] += in[i];
        i += step;
    });
    for (int q = 1; q < lanes; ++q)
        acc[0] = acc[0] + acc[size_t(q)];
    return acc[0];
}

// Work-item g's share of a reduction: `run` elements `step` apart. step 1: the contiguous run
// starting at g * run, which a CPU streams with sixteen partial sums; step = global size:
// elements a grid apart starting at g, so that a GPU's loads stay coalesced, with four partial
// sums (more lose on a GPU what they win on a CPU: docs/benchmarks.md, "What the figures
// taught": reduce). The branch is uniform.
px::Value<float> reduce_share(px::In<float>& in, const px::Int& n, const px::Int& run,
                              const px::Int& step) {
    px::Int g = px::global_id(0);
    px::Int i = px::select(step == 1, g * run, g);
    px::Int end = px::min(i + run * step, n);
    px::Float sum = 0.0f;
    px::If(step == 1, [&] { sum = partial_sums(in, i, end, 1, 16); }).Else([&] {
        sum = partial_sums(in, i, end, step, 4);
    });
    return sum;
}
} // namespace

const Kernel<In<float>, Out<float>, Int, Int, Int>& reduce() {
    static const auto k =
        px::kernel("reduce", {"in", "out", "n", "run", "step"},
                   [](px::In<float> in, px::Out<float> out, px::Int n, px::Int run, px::Int step) {
                       auto partial = px::shared<float>(1024);
                       px::Int lid = px::local_id(0);
                       px::Int size = px::local_size(0);
                       partial[lid] = reduce_share(in, n, run, step);
                       px::barrier();
                       px::Int s = size / 2;
                       px::While(s > 0, [&] {
                           px::If(lid < s, [&] { partial[lid] = partial[lid] + partial[lid + s]; });
                           px::barrier();
                           s = s / 2;
                       });
                       px::If(lid == 0, [&] { px::atomic_add(out[0], partial[0]); });
                   });
    return k;
}

const Kernel<In<Vec<float, 4>>, Out<float>, Int, Int, Int>& warp_reduce() {
    static const auto k = px::kernel(
        "warp_reduce", {"in", "out", "n", "run", "step"},
        [](px::In<Vec<float, 4>> in, px::Out<float> out, px::Int n, px::Int run, px::Int step) {
            auto partial = px::shared<float>(1024); // one per subgroup: at most one per work-item
            // Work-item g sums `run` float4s `step` apart (as reduce_share does with floats),
            // two loads of 16 bytes in flight.
            px::Int g = px::global_id(0);
            px::Int i = px::select(step == 1, g * run, g);
            px::Int end = px::min(i + run * step, n);
            px::Var<Vec<float, 4>> acc0 = Vec<float, 4>{}, acc1 = Vec<float, 4>{};
            px::While(i + step < end, [&] {
                acc0 += in[i];
                acc1 += in[i + step];
                i += 2 * step;
            });
            px::If(i < end, [&] { acc0 += in[i]; });
            px::Var<Vec<float, 4>> s = acc0 + acc1;
            px::Float sum = px::subgroup_reduce_add((s.x() + s.y()) + (s.z() + s.w()));
            px::If(px::lane_id() == 0, [&] { partial[px::subgroup_id()] = sum; });
            px::barrier();
            // The first subgroup adds up the subgroups' sums, a strided share on each lane,
            // and one work-item adds the group's total to the result.
            px::If(px::subgroup_id() == 0, [&] {
                px::Int width = px::subgroup_size();
                px::Int subgroups = (px::local_size(0) + width - 1) / width;
                px::Float total = 0.0f;
                px::For(px::lane_id(), subgroups, width, [&](px::Int j) { total += partial[j]; });
                total = px::subgroup_reduce_add(total);
                px::If(px::lane_id() == 0, [&] { px::atomic_add(out[0], total); });
            });
        });
    return k;
}

const Kernel<In<float>, In<float>, Out<float>, Int, Int, Int>& matmul_naive() {
    static const auto k = px::kernel(
        "matmul_naive", {"a", "b", "c", "m", "n", "k"},
        [](px::In<float> a, px::In<float> b, px::Out<float> c, px::Int m, px::Int n, px::Int kk) {
            px::Int col = px::global_id(0);
            px::Int row = px::global_id(1);
            px::If(row < m && col < n, [&] {
                px::Float acc = 0.0f;
                px::For(0, kk, [&](px::Int p) { acc += a[row * kk + p] * b[p * n + col]; });
                c[row * n + col] = acc;
            });
        });
    return k;
}

const Kernel<In<float>, Out<float>, Int, Int>& transpose() {
    static const auto k = px::kernel(
        "transpose", {"in", "out", "rows", "cols"},
        [](px::In<float> in, px::Out<float> out, px::Int rows, px::Int cols) {
            constexpr int T = 16;
            auto tile = px::shared<float>(T * (T + 1)); // +1 column: no bank conflicts on GPUs
            px::Int tx = px::local_id(0);
            px::Int ty = px::local_id(1);
            px::Int x = px::group_id(0) * T + tx;
            px::Int y = px::group_id(1) * T + ty;
            px::If(y < rows && x < cols, [&] { tile[ty * (T + 1) + tx] = in[y * cols + x]; });
            px::barrier();
            px::Int ox = px::group_id(1) * T + tx;
            px::Int oy = px::group_id(0) * T + ty;
            px::If(oy < cols && ox < rows, [&] { out[oy * rows + ox] = tile[tx * (T + 1) + ty]; });
        });
    return k;
}

const Kernel<In<int32_t>, Out<int32_t>, Out<int32_t>, Int>& scan_groups() {
    static const auto k = px::kernel(
        "scan_groups", {"in", "out", "sums", "n"},
        [](px::In<int32_t> in, px::Out<int32_t> out, px::Out<int32_t> sums, px::Int n) {
            auto totals = px::shared<int32_t>(2 * 1024); // double buffer: no read-write race
            px::Int lid = px::local_id(0);
            px::Int size = px::local_size(0);
            px::Int i = px::global_id(0);
            // Each subgroup scans its own values; its last lane then holds the subgroup's total.
            px::Int x =
                px::subgroup_scan_inclusive_add(px::select(i < n, in[px::min(i, n - 1)], 0));
            totals[lid] = 0;
            px::barrier();
            px::If(px::lane_id() == px::subgroup_size() - 1,
                   [&] { totals[px::subgroup_id()] = x; });
            px::barrier();
            // An inclusive scan of the subgroups' totals (a few on a GPU, one per work-item where
            // subgroups have one lane), in shared memory.
            px::Int src = 0;
            px::Int offset = 1;
            px::While(offset < size, [&] {
                px::Int dst = size - src;
                px::Int v = totals[src + lid];
                px::If(lid >= offset, [&] { v += totals[src + lid - offset]; });
                totals[dst + lid] = v;
                px::barrier();
                src = dst;
                offset = offset * 2;
            });
            px::Int sg = px::subgroup_id();
            x += px::select(sg > 0, totals[src + px::max(sg - 1, 0)], 0);
            px::If(i < n, [&] { out[i] = x; });
            px::If(lid == size - 1, [&] { sums[px::group_id(0)] = x; });
        });
    return k;
}

const Kernel<InOut<int32_t>, In<int32_t>, Int>& scan_add() {
    static const auto k =
        px::kernel("scan_add", {"data", "offsets", "n"},
                   [](px::InOut<int32_t> data, px::In<int32_t> offsets, px::Int n) {
                       px::Int i = px::global_id(0);
                       px::Int g = px::group_id(0);
                       px::If(i < n && g > 0, [&] { data[i] += offsets[g - 1]; });
                   });
    return k;
}

namespace {

// A histogram kernel with `max_bins` shared counters; each work-item counts the key at its
// global id, or with `grid_stride` every key from there on, the grid's size apart.
Kernel<In<uint32_t>, InOut<uint32_t>, Int, Int> make_histogram(const char* name, int max_bins,
                                                               bool grid_stride) {
    return px::kernel(name, {"in", "bins", "n", "nbins"},
                      [=](px::In<uint32_t> in, px::InOut<uint32_t> bins, px::Int n, px::Int nbins) {
                          auto local = px::shared<uint32_t>(uint32_t(max_bins));
                          px::Int lid = px::local_id(0);
                          px::Int size = px::local_size(0);
                          px::For(lid, nbins, size, [&](px::Int b) { local[b] = 0u; });
                          px::barrier();
                          auto tally = [&](const px::Int& i) {
                              px::atomic_add(local[in[i] % px::cast<uint32_t>(nbins)], 1u);
                          };
                          px::Int i = px::global_id(0);
                          if (grid_stride)
                              px::For(i, n, px::global_size(0), tally);
                          else
                              px::If(i < n, [&] { tally(i); });
                          px::barrier();
                          px::For(lid, nbins, size, [&](px::Int b) {
                              px::UInt count = local[b];
                              px::If(count > 0u, [&] { px::atomic_add(bins[b], count); });
                          });
                      });
}

} // namespace

const Kernel<In<uint32_t>, InOut<uint32_t>, Int, Int>& histogram() {
    static const auto k = make_histogram("histogram", histogram_max_bins, false);
    return k;
}

const Kernel<In<uint32_t>, InOut<uint32_t>, Int, Int>& histogram_wide() {
    static const auto k = make_histogram("histogram_wide", histogram_wide_bins, true);
    return k;
}

Grid histogram_wide_grid(size_t n) {
    // Groups of 256 whose work-items count 256 keys each at least, and no more than 132 groups
    // (one per multiprocessor of an H100): every group zeroes and merges all its bins, which
    // costs more than its keys when a group sees few.
    const size_t groups = std::clamp<size_t>(n / (256 * 256), 1, 132);
    return Grid(groups * 256).local_size(256);
}

const Kernel<In<float>, Out<float>, Int>& pipeline_step() {
    static const auto k = px::kernel(
        "pipeline_step", {"x", "y", "n"}, [](px::In<float> x, px::Out<float> y, px::Int n) {
            px::Int i = px::global_id(0);
            px::If(i < n, [&] {
                // A degree-8 polynomial by Horner's rule: enough arithmetic per element that the
                // kernel takes about as long as moving the element in and out.
                px::Float v = x[i];
                px::Float acc = pipeline_coefficients[0];
                for (float c : std::span(pipeline_coefficients).subspan(1))
                    acc = acc * v + c;
                y[i] = acc;
            });
        });
    return k;
}

const ir::Kernel* find(std::string_view name) {
    static const std::map<std::string, const ir::Kernel*, std::less<>> all = {
        {"vector_add", &vector_add().ir()},
        {"reduce", &reduce().ir()},
        {"warp_reduce", &warp_reduce().ir()},
        {"matmul_naive", &matmul_naive().ir()},
        {"matmul", &matmul_tiled().ir()},
        {"matmul_tiled", &matmul_tiled().ir()},
        {"transpose", &transpose().ir()},
        {"scan_groups", &scan_groups().ir()},
        {"scan_add", &scan_add().ir()},
        {"histogram", &histogram().ir()},
        {"histogram_wide", &histogram_wide().ir()},
        {"vector_add_float4", &vector_add_float4().ir()},
        {"saxpy_f16", &saxpy_f16().ir()},
        {"gelu_f32", &gelu_f32().ir()},
        {"dequant_int8", &dequant_int8().ir()},
        {"particles", &particles().ir()},
        {"pipeline_step", &pipeline_step().ir()},
        {"math_catalog_f32", &math_catalog<float>().ir()},
        {"math_catalog_f64", &math_catalog<double>().ir()},
    };
    if (auto it = all.find(name); it != all.end()) return it->second;
    // A family's name is its first variant; a variant's kernel name, that variant.
    for (const detail::FamilyDef* f : families()) {
        if (name == f->name()) return f->kernel(f->variants().front()).get();
        if (name.starts_with(f->name() + "__"))
            for (const Tuning& v : f->variants())
                if (f->variant_name(v) == name) return f->kernel(v).get();
    }
    return nullptr;
}

const std::vector<const detail::FamilyDef*>& families() {
    static const std::vector<const detail::FamilyDef*> all = {
        &matmul_f16().def(),    &matmul_bf16().def(),    &matmul_tf32().def(),
        &softmax_bf16().def(),  &softmax_f32().def(),    &layernorm_bf16().def(),
        &layernorm_f32().def(), &lib::gemm_f32().def(),  &lib::gemm_tf32().def(),
        &lib::gemm_f16().def(), &lib::gemm_bf16().def(), &lib::sum_f32().def(),
        &lib::sum_i32().def(),  &lib::scan_f32().def(),  &lib::scan_i32().def()};
    return all;
}

const detail::FamilyDef* find_family(std::string_view name) {
    for (const detail::FamilyDef* f : families())
        if (f->name() == name) return f;
    return nullptr;
}

std::vector<std::string> names() {
    return {
        "vector_add",        "reduce",      "warp_reduce",   "matmul_naive",     "matmul_tiled",
        "transpose",         "scan_groups", "scan_add",      "histogram",        "histogram_wide",
        "vector_add_float4", "saxpy_f16",   "gelu_f32",      "dequant_int8",     "softmax_bf16",
        "softmax_f32",       "particles",   "pipeline_step", "math_catalog_f32", "math_catalog_f64",
        "matmul_f16",        "matmul_bf16", "matmul_tf32",   "layernorm_bf16",   "layernorm_f32"};
}

} // namespace plexus::samples
