// Hand-written CUDA baselines for `plexus bench`: nvcc-compiled kernels and cuBLAS, run through
// the driver API, which this library opens itself (dlopen), so a program linking it runs where
// CUDA is absent. No CUDA header is needed to use this one.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

namespace plexus::app::cuda_baseline {

// One measured figure. error non-empty: not measured (or the result was wrong), and why.
struct Figure {
    double value = 0;
    std::string name; // what was measured, e.g. "CUDA vadd4 (nvcc -O3, float4 grid-stride)"
    std::string error;
    bool verified = false; // the output of the measured runs was checked on the host
};

// One device through its primary context. Timing of vector_add, reduce and sgemm is that of
// `plexus bench`: wall-clock median of `reps` runs of (launch + stream synchronize) after one
// untimed warm-up; inputs are uniform floats in [-1, 1] (std::mt19937), uploaded before timing.
// No method throws.
class Session {
public:
    // nullptr, with why set, when there is no driver, no such device, or no kernels were built.
    static std::unique_ptr<Session> open(int ordinal, std::string& why);
    ~Session();
    Session(const Session&) = delete;
    Session& operator=(const Session&) = delete;

    Figure vector_add(size_t n, int reps); // GB/s, 12 bytes per element; every c[i] checked
    Figure reduce(size_t n, int reps); // GB/s, 4 bytes per element; checked against a double sum
    // GFLOP/s (2mnk / s / 1e9) of row-major C = A B by cuBLAS FP32 (no TF32); 256 elements checked.
    Figure sgemm(int m, int n, int k, int reps);
    // The same by cublasGemmEx with `inputs` "f16", "bf16" (their bits in memory) or "tf32"
    // (floats, CUBLAS_COMPUTE_32F_FAST_TF32), f32 output and accumulation.
    Figure gemm_ex(const std::string& inputs, int m, int n, int k, int reps);
    // Microseconds of host time per cuLaunchKernel of an empty kernel in one round of
    // `launches` (the stream is synchronized after the round, untimed), so that a caller can
    // alternate rounds with what it compares.
    Figure empty_launch_round_us(int launches);
    // GB/s of one blocking cuMemcpyHtoD (upload) or cuMemcpyDtoH of `bytes` between page-locked
    // host memory (cuMemAllocHost) and the device: the median of `reps`; the words checked.
    Figure memcpy_gbps(size_t bytes, bool upload, int reps);
    // What bounds a transfer from or to ordinary (pageable) memory, which the copy engine
    // cannot reach: GB/s of a memcpy of `bytes` between ordinary memory and page-locked memory
    // (upload: into the page-locked), split over every host thread (the host side of any
    // staged path), and of pinning the ordinary memory for the one transfer instead
    // (cuMemHostRegister, the blocking copy, cuMemHostUnregister). Medians of `reps`, checked.
    Figure host_copy_gbps(size_t bytes, bool upload, int reps);
    Figure registered_copy_gbps(size_t bytes, bool upload, int reps);
    // GB/s of cuMemcpyPeer of `bytes` from device `other` into this one, then cuCtxSynchronize
    // (a copy between devices returns before it ends), peer access enabled where the pair
    // allows it; the copy checked word by word.
    Figure peer_copy_gbps(int other, size_t bytes, int reps);
    // GB/s of `bytes` up and `bytes` down at once, on two streams from and to page-locked host
    // memory (both directions counted): what the host link carries when a pipeline overlaps them.
    Figure duplex_gbps(size_t bytes, int reps);
    // GB/s of cuMemcpyDtoD of `bytes` within the device, then cuCtxSynchronize, counting the
    // bytes read and written (2 x bytes): what a kernel that reads and writes once can reach.
    Figure d2d_copy_gbps(size_t bytes, int reps);

private:
    struct State;
    explicit Session(std::unique_ptr<State> state);
    std::unique_ptr<State> state_;
};

// GB/s of duplex_gbps on devices 0 .. devices-1 at once, `bytes` split evenly among them (each
// device's share up and down, both directions of every device counted): the bound for a
// pipeline that deals its chunks out to every device.
Figure duplex_every_device_gbps(int devices, size_t bytes, int reps);

// The cost of a first launch by hand, meant for a fresh process run with CUDA_CACHE_DISABLE=1:
// init_ms is loading the driver (if not yet loaded), cuInit and setting up the primary context;
// nvrtc_open_ms is the dlopen of NVRTC; nvrtc_ms is compiling a vector add to PTX; module_load_ms
// is cuModuleLoadData of that PTX (the driver's JIT). verified: the kernel ran right on 1M
// elements.
struct RawFirstLaunch {
    double init_ms = 0, nvrtc_open_ms = 0, nvrtc_ms = 0, module_load_ms = 0;
    std::string error;
    bool verified = false;
};
RawFirstLaunch raw_first_launch(int ordinal);

} // namespace plexus::app::cuda_baseline
