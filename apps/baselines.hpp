// Hand-written C++ baselines for `plexus bench`, compiled -O3 -march=native and spread over
// every core with std::thread: what a programmer would write without plexus.
#pragma once

#include <cstddef>

namespace plexus::app::baseline {

void vector_add(const float* a, const float* b, float* c, size_t n);
float reduce(const float* x, size_t n);
// c (m x n) = a (m x k) b (k x n), row-major: the plain triple loop (rows split over threads).
void matmul_naive(const float* a, const float* b, float* c, int m, int n, int k);
// The same through 64 x 256 blocks of b kept in cache.
void matmul_blocked(const float* a, const float* b, float* c, int m, int n, int k);

} // namespace plexus::app::baseline
