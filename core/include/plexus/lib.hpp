// px::lib: kernels a program calls on its buffers instead of writing them, each a kernel family
// (plexus/family.hpp) tuned per device and shape like any other, and routed like any launch
// (docs/library.md). Row kernels today: softmax and layer normalization, accumulated in f32.
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

} // namespace plexus::lib
