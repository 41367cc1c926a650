// The sample kernels of plexus, written in the kernel language: the e2e suite, `plexus
// codegen` and `plexus bench` all use these definitions.
#pragma once

#include "plexus/family.hpp"
#include "plexus/kernel.hpp"
#include "plexus/launch.hpp"
#include "plexus/lib.hpp"

#include <array>
#include <span>

namespace plexus::samples {

// c[i] = a[i] + b[i] for i < n; each work-item adds four elements a work-group apart, so the
// grid needs ceil(n / 4) work-items.
inline constexpr int vector_add_per_item = 4;
const Kernel<In<float>, In<float>, Out<float>, Int>& vector_add();
// Adds the n elements of `in` into out[0] (zeroed by the caller): each work-item sums `run`
// elements `step` apart (step 1: the run at global_id * run; otherwise elements a grid apart
// from global_id, with step the global size), each work-group combines its sums in shared
// memory with a barrier tree, then one atomic add per group. Work-group size: a power of two
// <= 1024.
const Kernel<In<float>, Out<float>, Int, Int, Int>& reduce();
// The same sum over n float4s (the floats, padded with zeros to a multiple of 4) through
// subgroup reductions: each subgroup's sum into shared memory, the first subgroup adds those
// up, and one atomic per group. 16-byte loads, as the nvcc baseline's.
const Kernel<In<Vec<float, 4>>, Out<float>, Int, Int, Int>& warp_reduce();
// c (m x n) = a (m x k) * b (k x n), row-major, one work-item per element of c; work-group
// matmul_naive_local x matmul_naive_local.
inline constexpr int matmul_naive_local = 16;
const Kernel<In<float>, In<float>, Out<float>, Int, Int, Int>& matmul_naive();
// The same as a register-blocked SGEMM: px::lib's (plexus/lib.hpp).
using lib::matmul_block;
using lib::matmul_group_size;
using lib::matmul_tiled;
using lib::matmul_tiled_grid;
// out (cols x rows) = transpose of in (rows x cols) through a shared 16 x 17 tile.
const Kernel<In<float>, Out<float>, Int, Int>& transpose();
// Inclusive prefix sum inside each work-group and the sum of each group in sums[group]: each
// subgroup scans its values (px::subgroup_scan_inclusive_add), the subgroups' totals are
// scanned in shared memory (Hillis-Steele) and added back; `scan_add` then adds the scanned
// group sums. Power-of-two groups of at most 1024.
const Kernel<In<int32_t>, Out<int32_t>, Out<int32_t>, Int>& scan_groups();
const Kernel<InOut<int32_t>, In<int32_t>, Int>& scan_add();
// bins[in[i] % nbins] += 1 through atomics on a shared histogram, merged with global atomics.
inline constexpr int histogram_max_bins = 256;
const Kernel<In<uint32_t>, InOut<uint32_t>, Int, Int>& histogram();
// The same with up to 32768 bins: 128 KiB of shared counters per group, past the 48 KiB a
// CUDA kernel may declare statically (the CUDA generators then use dynamic shared memory).
// Few groups walk the input (a grid-stride loop), so each merges its bins once for many keys.
inline constexpr int histogram_wide_bins = 32768;
const Kernel<In<uint32_t>, InOut<uint32_t>, Int, Int>& histogram_wide();
Grid histogram_wide_grid(size_t n);

// ---- samples of the IR's types (typed_kernels.cpp) ----

using Vec3 = Vec<float, 3>;
using Vec4 = Vec<float, 4>;
// c[i] = a[i] + b[i] for i < n4, one float4 per work-item: each access one 16-byte load or store.
const Kernel<In<Vec4>, In<Vec4>, Out<Vec4>, Int>& vector_add_float4();
// y[i] = a * x[i] + y[i] in half precision: a rounded to half, then each operation rounded.
const Kernel<In<half>, InOut<half>, Float, Int>& saxpy_f16();
// y[i] = gelu(x[i]) for i < n, GPT-2's tanh form: 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715
// x^3))).
const Kernel<In<float>, Out<float>, Int>& gelu_f32();
// out[i] = float4(w[i]) * scale[row], for a rows x (4 * cols4) matrix of int8 weights stored as
// char4 (four weights of one row per element) and one f32 scale per row.
const Kernel<In<Vec<int8_t, 4>>, In<float>, Out<Vec4>, Int, Int>& dequant_int8();
// Row-wise softmax and layer normalization of a rows x cols matrix, accumulated in f32: the
// kernel families of px::lib (plexus/lib.hpp), launched with the shape {rows, cols}.
using lib::LayerNormFamily;
using lib::SoftmaxFamily;
inline const SoftmaxFamily<bf16>& softmax_bf16() {
    return lib::softmax_bf16();
}
inline const SoftmaxFamily<float>& softmax_f32() {
    return lib::softmax_f32();
}
inline const LayerNormFamily<bf16>& layernorm_bf16() {
    return lib::layernorm_bf16();
}
inline const LayerNormFamily<float>& layernorm_f32() {
    return lib::layernorm_f32();
}

// A particle of the n-body sample: free, charged (its field strength) or anchored to a point.
using ParticleKind =
    Variant<"ParticleKind", Case<"free">, Case<"charged", float>, Case<"anchored", Vec3>>;
struct Particle {
    Vec3 pos, vel;
    float mass;
    bf16 charge;
    ParticleKind kind;
};
PLEXUS_RECORD(Particle, pos, vel, mass, charge, kind);
// One step of dt: every particle attracted by every other (softened gravity, through tiles of
// records in shared memory), then moved by its kind: free ones by that force, charged ones also
// by charge * strength along particles_field, anchored ones pulled to their anchor by a spring.
// Work-group size: particles_tile (required).
inline constexpr int particles_tile = 64;
inline constexpr float particles_softening = 0.01f;
inline constexpr float particles_spring = 4.0f;
inline constexpr Vec3 particles_field{{0.0f, 0.0f, 1.0f}};
const Kernel<In<Particle>, Out<Particle>, Int, Float>& particles();

// pipeline: y = p(x) for a fixed degree-8 polynomial p (Horner's rule), the kernel of the
// pipeline sample, whose chunks are uploaded, computed and downloaded on three queues.
inline constexpr std::array<float, 9> pipeline_coefficients{0.5f, -1.25f, 0.75f, 2.0f, -0.5f,
                                                            1.5f, -2.25f, 0.25f, 1.0f};
const Kernel<In<float>, Out<float>, Int>& pipeline_step();

// Every sample by name, as IR: for `plexus codegen NAME`.
// A sample kernel by name: a kernel family's name gives its first variant (the one tuned for
// NVIDIA GPUs), a variant's kernel name (`matmul_f16__path1_wide1_stages4_blocks1`) that
// variant.
const ir::Kernel* find(std::string_view name);
std::vector<std::string> names();
// The kernel families `plexus explain` and `plexus codegen` know: the samples' (matmul_f16,
// matmul_bf16, matmul_tf32, softmax_*, layernorm_*) and px::lib's (gemm_*, sum_*, scan_*).
const std::vector<const detail::FamilyDef*>& families();
const detail::FamilyDef* find_family(std::string_view name);

} // namespace plexus::samples
