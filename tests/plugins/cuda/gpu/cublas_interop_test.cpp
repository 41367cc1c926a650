// Interop on the GPU: cuBLAS called on plexus buffers. The buffers' CUdeviceptr handles and a
// plexus queue's CUstream go to cublasSgemm; the result, marked as written on the device, is
// read back through plexus and every element compared with a double reference. Exits 77 (a
// skip) when there is no CUDA device or no cuBLAS.
#include "build_tree_config.hpp"
#include "plexus/plexus.hpp"

#include <cmath>
#include <cstdio>
#include <dlfcn.h>
#include <glob.h>
#include <random>
#include <string>
#include <vector>

namespace px = plexus;

namespace {

// cuBLAS's C API, declared here so that the test needs no CUDA header: handles and streams are
// opaque pointers, statuses ints, CUBLAS_OP_N is 0.
using create_fn = int (*)(void** handle);
using destroy_fn = int (*)(void* handle);
using set_stream_fn = int (*)(void* handle, void* stream);
using sgemm_fn = int (*)(void* handle, int transa, int transb, int m, int n, int k,
                         const float* alpha, const float* a, int lda, const float* b, int ldb,
                         const float* beta, float* c, int ldc);

void* open_cublas() {
    for (const char* name : {"libcublas.so", "libcublas.so.13", "libcublas.so.12"})
        if (void* lib = dlopen(name, RTLD_NOW | RTLD_LOCAL)) return lib;
    glob_t g{};
    void* lib = nullptr;
    if (glob("/usr/local/cuda/lib64/libcublas.so*", 0, nullptr, &g) == 0)
        for (size_t i = 0; i < g.gl_pathc && !lib; ++i)
            lib = dlopen(g.gl_pathv[i], RTLD_NOW | RTLD_LOCAL);
    globfree(&g);
    return lib;
}

int skip(const std::string& why) {
    std::printf("SKIP: %s\n", why.c_str());
    return 77;
}

} // namespace

int main() {
    px::Config config = px::test::build_tree_config();
    config.cache_dir = "";
    px::Runtime rt(config);
    bool cuda = false;
    for (const px::Backend* b : rt.backends())
        cuda = cuda || b->name() == "cuda";
    if (!cuda) return skip("no CUDA device (the cuda backend did not load)");
    void* lib = open_cublas();
    if (!lib) return skip("cuBLAS is not installed");
    auto create = reinterpret_cast<create_fn>(dlsym(lib, "cublasCreate_v2"));
    auto destroy = reinterpret_cast<destroy_fn>(dlsym(lib, "cublasDestroy_v2"));
    auto set_stream = reinterpret_cast<set_stream_fn>(dlsym(lib, "cublasSetStream_v2"));
    auto sgemm = reinterpret_cast<sgemm_fn>(dlsym(lib, "cublasSgemm_v2"));
    if (!create || !destroy || !set_stream || !sgemm)
        return skip("cuBLAS lacks the functions this test calls");

    const int m = 129, n = 67, k = 200;
    std::mt19937 g(31);
    std::uniform_real_distribution<float> d(-1, 1);
    std::vector<float> a(size_t(m) * k), b(size_t(k) * n);
    for (float& x : a)
        x = d(g);
    for (float& x : b)
        x = d(g);
    px::Buffer<float> da(rt, a), db(rt, b), dc(rt, size_t(m) * n);
    px::Queue q = rt.queue({"cuda"});
    const px::Target cuda0{"cuda", 0};
    auto* pa = reinterpret_cast<const float*>(da.native_handle(cuda0));
    auto* pb = reinterpret_cast<const float*>(db.native_handle(cuda0));
    auto* pc = reinterpret_cast<float*>(dc.native_handle(cuda0));
    void* handle = nullptr;
    if (create(&handle) != 0) return skip("cublasCreate failed");
    // Row-major C = A B is column-major C^T = B^T A^T.
    const float one = 1, zero = 0;
    int status = set_stream(handle, reinterpret_cast<void*>(q.native_handle()));
    if (status == 0) status = sgemm(handle, 0, 0, n, m, k, &one, pb, n, pa, k, &zero, pc, n);
    q.finish();
    destroy(handle);
    if (status != 0) {
        std::printf("FAIL: cublasSgemm on plexus buffers returned status %d\n", status);
        return 1;
    }
    dc.modified_on(cuda0);
    const std::vector<float> c = dc.to_vector();
    size_t bad = 0;
    for (int i = 0; i < m; ++i)
        for (int j = 0; j < n; ++j) {
            double want = 0, mag = 0;
            for (int p = 0; p < k; ++p) {
                want += double(a[size_t(i) * k + p]) * b[size_t(p) * n + j];
                mag += std::fabs(double(a[size_t(i) * k + p]) * b[size_t(p) * n + j]);
            }
            const double got = c[size_t(i) * n + j];
            if (!(std::fabs(got - want) <= 1e-5 * mag + 1e-6) && bad++ < 5)
                std::printf("element (%d, %d): got %.9g, want %.9g\n", i, j, got, want);
        }
    std::printf("%s: cublasSgemm on plexus buffers, %d x %d x %d, %zu of %zu elements outside |got "
                "- want| <= 1e-5 sum|ab| + 1e-6\n",
                bad == 0 ? "PASS" : "FAIL", m, n, k, bad, c.size());
    return bad == 0 ? 0 : 1;
}
