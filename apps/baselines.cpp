// The C++ baselines of `plexus bench` (see baselines.hpp); built with -O3 -march=native.
#include "baselines.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <thread>
#include <vector>

namespace plexus::app::baseline {
namespace {

// Runs f(begin, end, thread) over [0, n) split into one contiguous chunk per hardware thread.
template <class F> void parallel(size_t n, F f) {
    size_t threads = std::max(1u, std::thread::hardware_concurrency());
    threads = std::min(threads, std::max<size_t>(1, n));
    std::vector<std::thread> pool;
    size_t chunk = (n + threads - 1) / threads;
    for (size_t t = 1; t < threads; ++t)
        pool.emplace_back([=] { f(std::min(n, t * chunk), std::min(n, (t + 1) * chunk), t); });
    f(0, std::min(n, chunk), size_t(0));
    for (auto& th : pool)
        th.join();
}

} // namespace

void vector_add(const float* a, const float* b, float* c, size_t n) {
    parallel(n, [=](size_t lo, size_t hi, size_t) {
        for (size_t i = lo; i < hi; ++i)
            c[i] = a[i] + b[i];
    });
}

float reduce(const float* x, size_t n) {
    std::vector<double> partial(std::max(1u, std::thread::hardware_concurrency()), 0.0);
    parallel(n, [&](size_t lo, size_t hi, size_t t) {
        // Eight independent float accumulators: vectorizable, like the kernel's per-item sums.
        float acc[16] = {};
        size_t i = lo;
        for (; i + 16 <= hi; i += 16)
            for (int j = 0; j < 16; ++j)
                acc[j] += x[i + j];
        float s = 0;
        for (; i < hi; ++i)
            s += x[i];
        for (float v : acc)
            s += v;
        partial[t] = s;
    });
    double total = 0;
    for (double p : partial)
        total += p;
    return float(total);
}

void matmul_naive(const float* a, const float* b, float* c, int m, int n, int k) {
    parallel(size_t(m), [=](size_t lo, size_t hi, size_t) {
        for (size_t r = lo; r < hi; ++r)
            for (int col = 0; col < n; ++col) {
                float acc = 0;
                for (int p = 0; p < k; ++p)
                    acc += a[r * k + p] * b[size_t(p) * n + col];
                c[r * n + col] = acc;
            }
    });
}

void matmul_blocked(const float* a, const float* b, float* c, int m, int n, int k) {
    constexpr int KB = 64, NB = 256;
    parallel(size_t(m), [=](size_t lo, size_t hi, size_t) {
        for (size_t r = lo; r < hi; ++r)
            std::fill(c + r * n, c + r * n + n, 0.0f);
        for (int p0 = 0; p0 < k; p0 += KB)
            for (int c0 = 0; c0 < n; c0 += NB) {
                int p1 = std::min(k, p0 + KB), c1 = std::min(n, c0 + NB);
                for (size_t r = lo; r < hi; ++r) {
                    float* crow = c + r * n;
                    for (int p = p0; p < p1; ++p) {
                        float av = a[r * k + p];
                        const float* brow = b + size_t(p) * n;
                        for (int col = c0; col < c1; ++col)
                            crow[col] += av * brow[col];
                    }
                }
            }
    });
}

namespace {
// CBLAS's enums, as cblas.h defines them; the header is not needed to build plexus.
enum { kRowMajor = 101, kNoTrans = 111 };
using Sgemm = void (*)(int order, int trans_a, int trans_b, int m, int n, int k, float alpha,
                       const float* a, int lda, const float* b, int ldb, float beta, float* c,
                       int ldc);
using Config = const char* (*)();
} // namespace

const OpenBlas& openblas() {
    static const OpenBlas lib = [] {
        OpenBlas t;
        std::string why;
        for (const char* name : {"libopenblas.so.0", "libopenblas.so"}) {
            // RTLD_LOCAL: its BLAS symbols stay out of the way of anything else in the process.
            void* h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
            if (!h) {
                const char* e = dlerror();
                if (why.empty()) why = e ? e : std::string(name) + ": dlopen failed";
                continue;
            }
            t.fn = dlsym(h, "cblas_sgemm");
            if (!t.fn) {
                t.error = std::string(name) + " has no cblas_sgemm";
                return t;
            }
            auto config = reinterpret_cast<Config>(dlsym(h, "openblas_get_config"));
            t.name = std::string("OpenBLAS cblas_sgemm (") + (config ? config() : name) + ")";
            return t;
        }
        t.error = "OpenBLAS was not found (" + why + "); install libopenblas0 for this row";
        return t;
    }();
    return lib;
}

void OpenBlas::sgemm(const float* a, const float* b, float* c, int m, int n, int k) const {
    reinterpret_cast<Sgemm>(fn)(kRowMajor, kNoTrans, kNoTrans, m, n, k, 1.0f, a, k, b, n, 0.0f, c,
                                n);
}

} // namespace plexus::app::baseline
