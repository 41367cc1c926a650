// Hand-written C++ baselines for `plexus bench`, compiled -O3 -march=native and spread over
// every core with std::thread: what a programmer would write without plexus.
#pragma once

#include <cstddef>
#include <string>

namespace plexus::app::baseline {

void vector_add(const float* a, const float* b, float* c, size_t n);
float reduce(const float* x, size_t n);
// c (m x n) = a (m x k) b (k x n), row-major: the plain triple loop (rows split over threads).
void matmul_naive(const float* a, const float* b, float* c, int m, int n, int k);
// The same through 64 x 256 blocks of b kept in cache.
void matmul_blocked(const float* a, const float* b, float* c, int m, int n, int k);

// OpenBLAS's cblas_sgemm, opened at run time (libopenblas.so.0, then libopenblas.so) so that
// plexus neither builds nor runs against it; with its own threads, one per core by default.
struct OpenBlas {
    // The library's name and configuration ("OpenBLAS 0.3.21 DYNAMIC_ARCH ... Zen MAX_THREADS=64"),
    // or empty with `error` saying why it is not there.
    std::string name, error;
    // c (m x n) = a (m x k) b (k x n), row-major, like matmul_blocked. Call only without error.
    void sgemm(const float* a, const float* b, float* c, int m, int n, int k) const;
    void* fn = nullptr; // cblas_sgemm
};
// Loaded once per process; never closed (OpenBLAS keeps threads).
const OpenBlas& openblas();

} // namespace plexus::app::baseline
