// A benchmark program (not a test): the CUDA plugin's launch overhead against a raw
// cuLaunchKernel of the same kernel, and its host transfers against raw pinned copies, measured
// in the same run. Prints a table; exits 77 when no CUDA device is found.
#include "plugins/cuda/plugin_host.hpp"

#include "kernels_ptx.hpp"

#include <cuda.h>

#include "driver_symbol.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

using plexus::test::PluginHost;

namespace {

double now_s() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

#define BENCH_CHECK(expr)                                                                          \
    do {                                                                                           \
        if (!(expr)) {                                                                             \
            std::fprintf(stderr, "failed: %s (line %d)\n", #expr, __LINE__);                       \
            std::exit(1);                                                                          \
        }                                                                                          \
    } while (0)

} // namespace

int main() {
    PluginHost host(PLEXUS_CUDA_PLUGIN_PATH);
    BENCH_CHECK(host.library != nullptr);
    uint32_t count = 0;
    if (host.init() != PLX_OK || host.plugin.device_count(&count) != PLX_OK || count == 0) {
        std::printf("SKIP: no CUDA device was found: %s\n", host.error().c_str());
        return 77;
    }
    const plx_plugin& p = host.plugin;
    plx_device dev;
    BENCH_CHECK(p.device_get(0, &dev) == PLX_OK);
    plx_queue q;
    BENCH_CHECK(p.queue_create(dev, 0, &q) == PLX_OK);
    plx_module mod;
    BENCH_CHECK(p.module_load(dev, PLX_LANG_PTX, kKernelsPtx, sizeof kKernelsPtx, "", &mod) ==
                PLX_OK);
    plx_kernel k;
    BENCH_CHECK(p.kernel_get(mod, "vadd", &k) == PLX_OK);
    const size_t n = 256;
    plx_buffer a, b, c;
    BENCH_CHECK(p.buffer_alloc(dev, n * 4, &a) == PLX_OK);
    BENCH_CHECK(p.buffer_alloc(dev, n * 4, &b) == PLX_OK);
    BENCH_CHECK(p.buffer_alloc(dev, n * 4, &c) == PLX_OK);
    const uint64_t n64 = n;
    const plx_arg args[] = {{sizeof(plx_arg), PLX_ARG_BUFFER, a, nullptr, 0},
                            {sizeof(plx_arg), PLX_ARG_BUFFER, b, nullptr, 0},
                            {sizeof(plx_arg), PLX_ARG_BUFFER, c, nullptr, 0},
                            {sizeof(plx_arg), PLX_ARG_SCALAR, nullptr, &n64, 8}};
    plx_launch_dims d{};
    d.struct_size = sizeof d;
    d.dims = 1;
    d.global_size[0] = n, d.global_size[1] = d.global_size[2] = 1;
    d.local_size[0] = 256, d.local_size[1] = d.local_size[2] = 1;

    // The raw baseline: the same driver, primary context, PTX and kernel, on its own stream.
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    BENCH_CHECK(lib != nullptr);
    auto cuDevicePrimaryCtxRetain_ =
        sym<decltype(&::cuDevicePrimaryCtxRetain)>(lib, "cuDevicePrimaryCtxRetain");
    auto cuCtxSetCurrent_ = sym<decltype(&::cuCtxSetCurrent)>(lib, "cuCtxSetCurrent");
    auto cuModuleLoadData_ = sym<decltype(&::cuModuleLoadData)>(lib, "cuModuleLoadData");
    auto cuModuleGetFunction_ = sym<decltype(&::cuModuleGetFunction)>(lib, "cuModuleGetFunction");
    auto cuStreamCreate_ = sym<decltype(&::cuStreamCreate)>(lib, "cuStreamCreate");
    auto cuStreamSynchronize_ = sym<decltype(&::cuStreamSynchronize)>(lib, "cuStreamSynchronize");
    auto cuLaunchKernel_ = sym<decltype(&::cuLaunchKernel)>(lib, "cuLaunchKernel");
    auto cuMemAlloc_ = sym<decltype(&::cuMemAlloc_v2)>(lib, "cuMemAlloc_v2");
    auto cuMemAllocHost_ = sym<decltype(&::cuMemAllocHost_v2)>(lib, "cuMemAllocHost_v2");
    auto cuMemcpyHtoDAsync_ = sym<decltype(&::cuMemcpyHtoDAsync_v2)>(lib, "cuMemcpyHtoDAsync_v2");
    auto cuMemcpyDtoHAsync_ = sym<decltype(&::cuMemcpyDtoHAsync_v2)>(lib, "cuMemcpyDtoHAsync_v2");
    CUcontext ctx;
    BENCH_CHECK(cuDevicePrimaryCtxRetain_(&ctx, 0) == CUDA_SUCCESS);
    BENCH_CHECK(cuCtxSetCurrent_(ctx) == CUDA_SUCCESS);
    CUmodule raw_mod;
    BENCH_CHECK(cuModuleLoadData_(&raw_mod, kKernelsPtx) == CUDA_SUCCESS);
    CUfunction raw_fn;
    BENCH_CHECK(cuModuleGetFunction_(&raw_fn, raw_mod, "vadd") == CUDA_SUCCESS);
    CUstream raw_stream;
    BENCH_CHECK(cuStreamCreate_(&raw_stream, CU_STREAM_NON_BLOCKING) == CUDA_SUCCESS);
    CUdeviceptr ra, rb, rc;
    BENCH_CHECK(cuMemAlloc_(&ra, n * 4) == CUDA_SUCCESS &&
                cuMemAlloc_(&rb, n * 4) == CUDA_SUCCESS && cuMemAlloc_(&rc, n * 4) == CUDA_SUCCESS);
    uint64_t raw_n = n;
    void* raw_params[] = {&ra, &rb, &rc, &raw_n};

    // Launch rate: the best of several rounds of back-to-back launches, then one sync.
    const int launches = 20000, rounds = 7;
    double best_raw = 1e9, best_plx = 1e9;
    for (int r = 0; r < rounds; ++r) {
        double t0 = now_s();
        for (int i = 0; i < launches; ++i)
            BENCH_CHECK(cuLaunchKernel_(raw_fn, 1, 1, 1, 256, 1, 1, 0, raw_stream, raw_params,
                                        nullptr) == CUDA_SUCCESS);
        BENCH_CHECK(cuStreamSynchronize_(raw_stream) == CUDA_SUCCESS);
        best_raw = std::min(best_raw, (now_s() - t0) / launches);
        t0 = now_s();
        for (int i = 0; i < launches; ++i)
            BENCH_CHECK(p.launch(q, k, &d, args, 4, nullptr) == PLX_OK);
        BENCH_CHECK(p.queue_sync(q) == PLX_OK);
        best_plx = std::min(best_plx, (now_s() - t0) / launches);
    }
    std::printf("%-34s %12s %12s %12s\n", "measure", "raw driver", "plexus", "difference");
    std::printf("%-34s %10.3f us %10.3f us %+10.3f us\n", "launch of vadd (4 args), per launch",
                best_raw * 1e6, best_plx * 1e6, (best_plx - best_raw) * 1e6);

    // Transfers: pageable host memory through the plugin against raw pinned copies.
    const size_t bytes = size_t(512) << 20;
    std::vector<char> host_mem(bytes, 1);
    void* pinned;
    BENCH_CHECK(cuMemAllocHost_(&pinned, bytes) == CUDA_SUCCESS);
    std::memset(pinned, 1, bytes);
    CUdeviceptr rbig;
    BENCH_CHECK(cuMemAlloc_(&rbig, bytes) == CUDA_SUCCESS);
    plx_buffer big;
    BENCH_CHECK(p.buffer_alloc(dev, bytes, &big) == PLX_OK);
    double raw_h2d = 1e9, raw_d2h = 1e9, plx_h2d = 1e9, plx_d2h = 1e9;
    for (int r = 0; r < 3; ++r) {
        double t0 = now_s();
        BENCH_CHECK(cuMemcpyHtoDAsync_(rbig, pinned, bytes, raw_stream) == CUDA_SUCCESS);
        BENCH_CHECK(cuStreamSynchronize_(raw_stream) == CUDA_SUCCESS);
        raw_h2d = std::min(raw_h2d, now_s() - t0);
        t0 = now_s();
        BENCH_CHECK(cuMemcpyDtoHAsync_(pinned, rbig, bytes, raw_stream) == CUDA_SUCCESS);
        BENCH_CHECK(cuStreamSynchronize_(raw_stream) == CUDA_SUCCESS);
        raw_d2h = std::min(raw_d2h, now_s() - t0);
        t0 = now_s();
        BENCH_CHECK(p.buffer_write(q, big, 0, host_mem.data(), bytes) == PLX_OK);
        plx_h2d = std::min(plx_h2d, now_s() - t0);
        t0 = now_s();
        BENCH_CHECK(p.buffer_read(q, big, 0, host_mem.data(), bytes) == PLX_OK);
        plx_d2h = std::min(plx_d2h, now_s() - t0);
    }
    const double gb = bytes / 1e9;
    std::printf("%-34s %9.2f GB/s %9.2f GB/s %10.0f %%\n", "write 512 MiB (raw: pinned)",
                gb / raw_h2d, gb / plx_h2d, 100.0 * raw_h2d / plx_h2d);
    std::printf("%-34s %9.2f GB/s %9.2f GB/s %10.0f %%\n", "read 512 MiB (raw: pinned)",
                gb / raw_d2h, gb / plx_d2h, 100.0 * raw_d2h / plx_d2h);
    p.buffer_free(big);
    p.buffer_free(a), p.buffer_free(b), p.buffer_free(c);
    p.module_unload(mod);
    p.queue_destroy(q);
    p.shutdown();
    return 0;
}
