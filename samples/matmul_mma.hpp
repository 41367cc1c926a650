// matmul_f16, matmul_bf16 and matmul_tf32: c (f32) = a x b through matrix fragments (tensor
// cores on CUDA, plain arithmetic elsewhere), any m, n, k: the problems of px::lib's families.
#pragma once

#include "problems.hpp"

#include "plexus/family.hpp"
#include "plexus/lib.hpp"

#include <random>

namespace plexus::samples {

// The families, from px::lib (plexus/lib.hpp).
using lib::matmul_bf16;
using lib::matmul_f16;
using lib::matmul_tf32;
using lib::mma_block;
using lib::mma_portable;
using lib::mma_subgroups;
using lib::MmaFamily;
// The family's heuristic variant for an m x n x k product on the target's device (the
// routed one when the target names no backend), with its grid.
template <class T>
std::pair<Kernel<In<T>, In<T>, Out<float>, Int, Int, Int>, Grid>
mma_variant(const MmaFamily<T>& family, Runtime& rt, const Target& t, int64_t m, int64_t n,
            int64_t k);
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
