// matmul_f16, matmul_bf16 and matmul_tf32: c (f32) = a x b through matrix fragments (tensor
// cores on CUDA, plain arithmetic elsewhere), any m, n, k (samples/matmul_mma.cpp).
#pragma once

#include "problems.hpp"

#include <random>

namespace plexus::samples {

// A group is mma_subgroups subgroups (launched as width x mma_subgroups work-items, width the
// device's subgroup width: 32 on NVIDIA GPUs, 1 on the host); it computes an
// mma_block x mma_block block of c.
inline constexpr int mma_block = 128;
inline constexpr int mma_subgroups = 8;
const Kernel<In<half>, In<half>, Out<float>, Int, Int, Int>& matmul_f16();
const Kernel<In<bf16>, In<bf16>, Out<float>, Int, Int, Int>& matmul_bf16();
const Kernel<In<float>, In<float>, Out<float>, Int, Int, Int>& matmul_tf32();
// The f16 and bf16 problems use these where k is not a multiple of 8 and n is: a by registers.
const Kernel<In<half>, In<half>, Out<float>, Int, Int, Int>& matmul_f16_rows();
const Kernel<In<bf16>, In<bf16>, Out<float>, Int, Int, Int>& matmul_bf16_rows();
// The launch of one of those kernels on `t` for an m x n c: a group of mma_subgroups rows of
// the device's subgroup width per mma_block x mma_block block.
Grid matmul_mma_grid(Runtime& rt, const Target& t, const ir::Kernel& kernel, size_t m, size_t n);
// The tolerance of one element of c, from its sum_p |a b| over k products: exact products
// summed in f32, plus (tf32) the truncation of each input to tf32.
double matmul_mma_bound(int k, double mag, bool tf32);

// The problem of one of those names, or nullptr.
std::unique_ptr<Problem> make_mma_problem(const std::string& name, size_t size, Runtime& rt,
                                          std::mt19937& g);
// The same for an m x k by k x n product (plexus bench --mnk).
std::unique_ptr<Problem> make_mma_problem(const std::string& name, int m, int n, int k, Runtime& rt,
                                          unsigned seed);
const std::vector<std::string>& mma_problem_names();

} // namespace plexus::samples
