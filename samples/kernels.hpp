// The sample kernels of plexus, written in the kernel language: the e2e suite, `plexus
// codegen` and `plexus bench` all use these definitions.
#pragma once

#include "plexus/kernel.hpp"

namespace plexus::samples {

// c[i] = a[i] + b[i] for i < n.
const Kernel<In<float>, In<float>, Out<float>, Int>& vector_add();
// Adds the n elements of `in` into out[0] (zeroed by the caller): each work-item sums runs of
// `chunk` elements a grid apart, each work-group combines its sums in shared memory with a
// barrier tree, then one atomic add per group. Work-group size: a power of two <= 1024.
const Kernel<In<float>, Out<float>, Int, Int>& reduce();
// c (m x n) = a (m x k) * b (k x n), row-major, one work-item per element of c.
const Kernel<In<float>, In<float>, Out<float>, Int, Int, Int>& matmul_naive();
// The same through 16 x 16 tiles of a and b in shared memory; work-group 16 x 16.
inline constexpr int matmul_tile = 16;
const Kernel<In<float>, In<float>, Out<float>, Int, Int, Int>& matmul_tiled();
// out (cols x rows) = transpose of in (rows x cols) through a shared 16 x 17 tile.
const Kernel<In<float>, Out<float>, Int, Int>& transpose();
// Inclusive prefix sum inside each work-group (Hillis-Steele in shared memory) and the sum of
// each group in sums[group]; `scan_add` then adds the scanned group sums. Power-of-two groups.
const Kernel<In<int32_t>, Out<int32_t>, Out<int32_t>, Int>& scan_groups();
const Kernel<InOut<int32_t>, In<int32_t>, Int>& scan_add();
// bins[in[i] % nbins] += 1 through atomics on a shared histogram, merged with global atomics.
inline constexpr int histogram_max_bins = 256;
const Kernel<In<uint32_t>, InOut<uint32_t>, Int, Int>& histogram();

// Every sample by name, as IR: for `plexus codegen NAME`.
const ir::Kernel* find(std::string_view name);
std::vector<std::string> names();

} // namespace plexus::samples
