// px::lib: kernels a program calls on its buffers instead of writing them, each a kernel family
// (plexus/family.hpp) tuned per device and shape like any other, and routed like any launch
// (docs/library.md): matrix products (with the backend's vendor library as a candidate), and
// softmax and layer normalization, accumulated in f32.
#pragma once

#include "plexus/buffer.hpp"
#include "plexus/family.hpp"
#include "plexus/runtime.hpp"

namespace plexus::lib {

// The families behind the functions, for tuning ahead (Runtime::tune), explain and variants.
// Tuning parameters: `per` values of a row held in each work-item's registers, so that x is read
// once (the row must fit: cols <= per * width), or 0: passes over x for rows of any length;
// `width` work-items a row (32 or 256, in groups of 256); `subgroups` 1: the row's reductions by
// subgroup operations, 0: by a tree in shared memory. Shape: {rows, cols}.
template <class T> using SoftmaxFamily = Family<In<T>, Out<T>, Int, Int>;
template <class T>
using LayerNormFamily = Family<In<T>, In<float>, In<float>, Out<T>, Int, Int, Float>;
const SoftmaxFamily<float>& softmax_f32();
const SoftmaxFamily<bf16>& softmax_bf16();
const LayerNormFamily<float>& layernorm_f32();
const LayerNormFamily<bf16>& layernorm_bf16();

// y[r][c] = exp(x[r][c] - max_r) / sum_c exp(x[r][c] - max_r) for a rows x cols row-major
// matrix; f32 or bf16 values, f32 arithmetic.
Event softmax(Runtime& rt, Buffer<float>& x, Buffer<float>& y, int rows, int cols,
              const Target& target = {});
Event softmax(Runtime& rt, Buffer<bf16>& x, Buffer<bf16>& y, int rows, int cols,
              const Target& target = {});

// y[r][c] = (x[r][c] - mean_r) / sqrt(var_r + eps) * gamma[c] + beta[c], the mean and the
// (biased) variance of each row of a rows x cols row-major matrix; gamma and beta have cols
// floats.
Event layernorm(Runtime& rt, Buffer<float>& x, Buffer<float>& gamma, Buffer<float>& beta,
                Buffer<float>& y, int rows, int cols, float eps = 1e-5f, const Target& target = {});
Event layernorm(Runtime& rt, Buffer<bf16>& x, Buffer<float>& gamma, Buffer<float>& beta,
                Buffer<bf16>& y, int rows, int cols, float eps = 1e-5f, const Target& target = {});

// ---- sums and prefix sums ------------------------------------------------------------------

// out[0] = x[0] + ... + x[n - 1] (n = 0: 0), in two launches of sum_f32 / sum_i32: each group of
// 256 adds its strided share of x, then one group adds the groups' totals. Floats are added in
// an order of the launch's choosing (not left to right): the result is within n * 2^-24 *
// sum |x| of the exact sum; int32 wraps as int32 does.
Event sum(Runtime& rt, Buffer<float>& x, Buffer<float>& out, int64_t n, const Target& target = {});
Event sum(Runtime& rt, Buffer<int32_t>& x, Buffer<int32_t>& out, int64_t n,
          const Target& target = {});
// y[i] = x[0] + ... + x[i] for i < n: each group of 256 scans its values (scan_f32 / scan_i32)
// and writes its total, the totals are scanned the same way (recursively), then added back.
Event inclusive_scan(Runtime& rt, Buffer<float>& x, Buffer<float>& y, int64_t n,
                     const Target& target = {});
Event inclusive_scan(Runtime& rt, Buffer<int32_t>& x, Buffer<int32_t>& y, int64_t n,
                     const Target& target = {});
// The families behind them: tuning parameter `subgroups` (1: each subgroup scans its values
// first, 0: shared memory alone); shape {n}. scan: (x, y, sums, n); sum: (x, totals, n).
template <class T> using ScanFamily = Family<In<T>, Out<T>, Out<T>, Int>;
template <class T> using SumFamily = Family<In<T>, Out<T>, Int>;
template <class T> using AddFamily = Kernel<InOut<T>, In<T>, Int>;
const ScanFamily<float>& scan_f32();
const ScanFamily<int32_t>& scan_i32();
const SumFamily<float>& sum_f32();
const SumFamily<int32_t>& sum_i32();
// y[i] += offsets[group - 1] for the i of every group but the first (groups of 256).
template <class T> const AddFamily<T>& scan_add();

// ---- matrix products ----------------------------------------------------------------------

enum class Activation { None, Relu, Gelu };

// c (m x n, f32) = op(a) op(b), every matrix row-major: op(a) is m x k, a as stored (m x k) or,
// with transpose_a, the transpose of an a stored k x m; b likewise (k x n, or n x k stored).
// Then, in this order, bias[col] (n floats) added to every row, and the activation: relu, or
// gelu (the tanh form, as GPT-2's). With tf32 an f32 product may round a and b to tf32 (10 bits
// of mantissa; tensor cores); without, it is an f32 product. Sizes of 0 are valid.
struct Matmul {
    int64_t m = 0, n = 0, k = 0;
    bool transpose_a = false, transpose_b = false;
    Buffer<float>* bias = nullptr;
    Activation activation = Activation::None;
    bool tf32 = false;
};
// The product through the GEMM family of the inputs' type: plexus's kernels and the backend's
// library routine (cuBLAS on CUDA, a CBLAS such as OpenBLAS on the native backend) are its
// variants, tuned per device and shape and routed like any family launch; a transposed operand
// goes to plexus's kernels through a transposed copy. A buffer smaller than the shape needs, or
// a negative size, is an InvalidArgument error naming the argument; nothing is launched.
// px::lib::matmul(rt, a, b, c, {.m = 512, .n = 256, .k = 128, .transpose_b = true});
Event matmul(Runtime& rt, Buffer<float>& a, Buffer<float>& b, Buffer<float>& c, const Matmul& p,
             const Target& target = {});
Event matmul(Runtime& rt, Buffer<half>& a, Buffer<half>& b, Buffer<float>& c, const Matmul& p,
             const Target& target = {});
Event matmul(Runtime& rt, Buffer<bf16>& a, Buffer<bf16>& b, Buffer<float>& c, const Matmul& p,
             const Target& target = {});

// The GEMM families behind matmul: kernel parameters (a, b, c, m, n, k, trans_a, trans_b),
// shape {m, n, k, trans_a, trans_b}. Tuning parameter `vendor`: 1 is the backend's library
// routine of the type (plugin.h, "Library routines"; devices whose backend does not offer it
// are passed over), 0 plexus's kernels with the other parameters (matmul_tiled for gemm_f32,
// the matmul_f16 / bf16 / tf32 families' for the others). plexus's kernels take untransposed
// operands only.
template <class T> using GemmFamily = Family<In<T>, In<T>, Out<float>, Int, Int, Int, Int, Int>;
const GemmFamily<float>& gemm_f32();
const GemmFamily<float>& gemm_tf32();
const GemmFamily<half>& gemm_f16();
const GemmFamily<bf16>& gemm_bf16();

// plexus's own kernels, also the samples of their names. matmul_tiled: a register-blocked
// SGEMM; each 1-D work-group of matmul_group_size work-items computes a matmul_block x
// matmul_block block of c, 8 x 8 elements per work-item; launch matmul_tiled_grid(m, n) (the
// kernel requires work-groups of 256 x 1).
inline constexpr int matmul_block = 128;
inline constexpr int matmul_group_size = 256;
const Kernel<In<float>, In<float>, Out<float>, Int, Int, Int>& matmul_tiled();
Grid matmul_tiled_grid(size_t m, size_t n);
// matmul_f16 / bf16 / tf32: c (f32) = a x b on the matrix units (tensor cores on CUDA, plain
// arithmetic elsewhere), any m, n, k, shape {m, n, k}. A group is mma_subgroups subgroups
// (width x mma_subgroups work-items, width the device's subgroup width: 32 on NVIDIA GPUs, 1
// on the host); it computes mma_block x mma_block blocks of c. Tuning parameters (core/src/lib/
// mma.cpp): path (0, 1: warpgroup accumulators, a and b by copy_async or a by registers; 2: m16
// fragments), wide (groups of 256 with fixed copies), stages, blocks.
inline constexpr int mma_block = 128;
inline constexpr int mma_subgroups = 8;
template <class T> using MmaFamily = Family<In<T>, In<T>, Out<float>, Int, Int, Int>;
const MmaFamily<half>& matmul_f16();
const MmaFamily<bf16>& matmul_bf16();
const MmaFamily<float>& matmul_tf32();
// The family's variant that runs wherever any of its variants does (m16 fragments, copies by
// loops for any group size): what the router is asked about which devices can take a launch.
template <class T> const ir::Kernel& mma_portable(const MmaFamily<T>& family);

} // namespace plexus::lib
