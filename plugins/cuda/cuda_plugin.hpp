// Internal header of the CUDA backend plugin: the driver function table, the handle structs
// behind the opaque plx_* types, and the driver error helpers shared by every file; last_error,
// logging and the guard are plugins/common's. cuBLAS, for the library routines, is
// routines.cpp's alone.
#pragma once

#include "../common/descriptor.hpp"

#include <cuda.h>
#include <plexus/plugin.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

// Every driver function the plugin calls, listed once. The member of the table is typed with
// decltype(&fn), so cuda.h checks each signature; cuda.h maps the plain names to versioned ones
// (cuMemAlloc -> cuMemAlloc_v2), so the table member and the dlsym name are the versioned ABI
// symbol, which is what libcuda exports.
// clang-format off
#define PLX_CUDA_REQUIRED_FUNCTIONS(X)                                                          \
    X(cuInit) X(cuDriverGetVersion) X(cuDeviceGetCount) X(cuDeviceGet) X(cuDeviceGetName)     \
    X(cuDeviceGetAttribute) X(cuDeviceTotalMem) X(cuDevicePrimaryCtxRetain)                    \
    X(cuDevicePrimaryCtxRelease) X(cuCtxGetCurrent) X(cuCtxSetCurrent) X(cuMemGetInfo)        \
    X(cuMemAlloc) X(cuMemFree) X(cuMemAllocHost) X(cuMemFreeHost) X(cuMemcpyHtoDAsync)        \
    X(cuMemcpyDtoHAsync) X(cuMemcpyDtoDAsync) X(cuMemsetD8Async) X(cuMemsetD16Async)          \
    X(cuMemsetD32Async) X(cuStreamCreate) X(cuStreamDestroy) X(cuStreamSynchronize)           \
    X(cuEventCreate) X(cuEventDestroy) X(cuEventRecord) X(cuEventSynchronize)                 \
    X(cuLinkCreate) X(cuLinkAddData) X(cuLinkComplete) X(cuLinkDestroy) X(cuModuleLoadDataEx) \
    X(cuModuleUnload) X(cuModuleGetFunction) X(cuFuncGetAttribute) X(cuFuncSetAttribute)      \
    X(cuLaunchKernel)
// clang-format on

// Functions a driver may lack: each use checks the pointer. cuEventElapsedTime maps to _v2
// (CUDA 12.8+) and cuDeviceGetUuid to _v2 (CUDA 11.4+); driver.cpp falls back to the
// unversioned symbols, which have the same signatures. From cuDeviceGetUuid on they serve the
// ABI 1.1 functions: every CUDA 11+ driver has them, but the plugin does not refuse a driver
// over them (device_info leaves the field empty, the other entry points answer
// PLX_ERROR_UNSUPPORTED naming the missing symbol, see PLX_CU_NEED).
// clang-format off
#define PLX_CUDA_OPTIONAL_FUNCTIONS(X)                                                          \
    X(cuGetErrorName) X(cuGetErrorString) X(cuEventElapsedTime) X(cuFuncGetParamInfo)         \
    X(cuDeviceGetUuid) X(cuDeviceGetPCIBusId) X(cuStreamWaitEvent) X(cuMemcpyPeerAsync)       \
    X(cuDeviceCanAccessPeer) X(cuCtxEnablePeerAccess) X(cuMemHostAlloc) X(cuPointerGetAttribute)
// clang-format on

namespace plx_cuda {

struct Driver {
#define PLX_CUDA_MEMBER(fn) decltype(&::fn) fn = nullptr;
    PLX_CUDA_REQUIRED_FUNCTIONS(PLX_CUDA_MEMBER)
    PLX_CUDA_OPTIONAL_FUNCTIONS(PLX_CUDA_MEMBER)
#undef PLX_CUDA_MEMBER
};

// Loads libcuda once per process (std::call_once). On failure returns PLX_ERROR_NO_DRIVER and
// sets the calling thread's last error to the reason.
plx_status load_driver();
// The table; valid only after load_driver() returned PLX_OK.
const Driver& drv();

// ---- errors and logging -------------------------------------------------------------------
// What plugins/common's templates need of this plugin: messages start "cuda: <function>: ".
struct Plugin {
    static constexpr plx_support::Names names{"cuda", "a cuda"};
};

using plx_support::fail;
using plx_support::last_error_text;
using plx_support::log;

// "cuMemAlloc_v2 returned CUDA_ERROR_OUT_OF_MEMORY (2: out of memory)"
std::string describe(const char* call, CUresult result);
// Sets last_error to "cuda: <what>: <describe(call, result)>" and returns status.
plx_status cu_error(plx_status status, const char* what, const char* call, CUresult result);
// The plx_status that best matches a CUresult of a call that is not expected to fail.
plx_status status_of(CUresult result);

// Sets last_error to "cuda: <fn>: the driver has no <call> ..." and returns
// PLX_ERROR_UNSUPPORTED. PLX_CU_NEED(fn, cuXxx) returns that from the enclosing entry point
// `fn` when the optional driver function cuXxx is missing.
plx_status missing_function(const char* fn, const char* call);
#define PLX_CU_NEED(fn, call)                                                                      \
    do {                                                                                           \
        if (::plx_cuda::drv().call == nullptr)                                                     \
            return ::plx_cuda::missing_function(fn, PLX_CUDA_NAME(call));                          \
    } while (0)

// Calls a driver function and, on failure, returns from the enclosing function with an error
// naming the call (the versioned symbol) and the context `what`.
#define PLX_CU_TRY(what, call, ...)                                                                \
    do {                                                                                           \
        CUresult plx_cu_result_ = ::plx_cuda::drv().call(__VA_ARGS__);                             \
        if (plx_cu_result_ != CUDA_SUCCESS)                                                        \
            return ::plx_cuda::cu_error(::plx_cuda::status_of(plx_cu_result_), what,               \
                                        PLX_CUDA_NAME(call), plx_cu_result_);                      \
    } while (0)
#define PLX_CUDA_STR_(x) #x
#define PLX_CUDA_NAME(fn) PLX_CUDA_STR_(fn)

// A library routine (ABI 1.4, PLX_LANG_ROUTINE) that routines.cpp runs with cuBLAS.
struct Routine;

} // namespace plx_cuda

// cuBLAS's handle type, as cublas_api.h declares it (routines.cpp opens cuBLAS at run time).
struct cublasContext;

// ---- handles --------------------------------------------------------------------------------

struct plx_device_s {
    uint32_t index = 0;
    CUdevice dev = 0;
    plx_device_info info{};
    int max_grid[3] = {0, 0, 0};
    uint32_t max_shared_optin = 0; // the largest static + dynamic shared memory of a block

    // Primary context, retained at first use (device_count and device_info need none).
    // ctx_known: ctx_once has run, so ctx, ctx_status and ctx_error are final. Every launch
    // reads it instead of calling std::call_once, which sets and clears thread-locals on each
    // call (four TLS look-ups from a shared library).
    std::once_flag ctx_once;
    std::atomic<bool> ctx_known{false};
    CUcontext ctx = nullptr;
    plx_status ctx_status = PLX_OK;
    std::string ctx_error;

    // The fill kernels (8-byte patterns, unaligned 2 and 4 byte patterns), loaded at first use.
    std::once_flag fill_once;
    CUmodule fill_module = nullptr;
    CUfunction fill_u64 = nullptr;
    CUfunction fill_bytes = nullptr;
    plx_status fill_status = PLX_OK;
    std::string fill_error;

    // Timing-disabled CUevents of the device's context, recorded again and again: the markers
    // of event_wait and queue_wait_event and the events of queue_marker on non-profiling
    // queues. Creating and destroying a CUevent each time costs more than a launch. A CUevent
    // is reused only once nothing holds it; a wait already enqueued or begun on it keeps
    // waiting for the record it saw.
    std::mutex event_pool_mutex;
    std::vector<CUevent> event_pool;

    // Peer access from this device's context to the memory of device i (buffer_copy_peer),
    // decided once per ordered pair: 0 not asked yet, 1 enabled, 2 unavailable (the driver
    // stages such copies through the host).
    std::mutex peer_mutex;
    std::vector<uint8_t> peer_state;

    // The device's cuBLAS handle (routines.cpp), created by the first routine module_load with
    // the context current, destroyed at shutdown. A handle serves one stream at a time, and
    // launches come from any thread: blas_mutex guards it and each use (cublasSetStream and the
    // gemm together).
    std::mutex blas_mutex;
    cublasContext* blas = nullptr;
};

struct plx_buffer_s {
    plx_device_s* device = nullptr;
    CUdeviceptr ptr = 0;
    size_t bytes = 0;
    bool owned = true; // false for buffer_wrap: the caller keeps the allocation
};

// The timestamp origin of a profiling queue; shared with its events, which may outlive it.
struct BaseEvent {
    CUevent event = nullptr;
    ~BaseEvent();
};

struct LaunchEvent;

struct plx_event_s {
    plx_device_s* device = nullptr;
    CUevent start = nullptr; // profiling launches only
    CUevent end = nullptr;   // profiling launches, and every queue_marker event
    std::shared_ptr<BaseEvent> base;
    // The launch event of a queue without profiling (this event is its `event`): nothing was
    // recorded at the launch; event_wait (or queue_wait_event) records a marker on the stream
    // then, which follows the launch (and perhaps later work), so a launch costs the host one
    // cuLaunchKernel.
    LaunchEvent* deferred = nullptr;
    // `end` came from the device's event pool and goes back there at event_release.
    bool pooled = false;
};

// What every launch of a queue without profiling hands out as its event: one per queue, the
// same handle each time, since each such event means the same (a marker recorded on the
// stream when someone waits). A launch then allocates nothing and records nothing: it takes
// one reference. `refs` counts the queue and each launch event not yet released; the last
// to go frees it, so events outlive their queue. `stream` is null once the queue is destroyed
// (after its work finished), so that a late wait has nothing left to wait for.
struct LaunchEvent {
    plx_event_s event;
    std::mutex mutex; // guards stream
    CUstream stream = nullptr;
    std::atomic<uint64_t> refs{1};
};

struct plx_queue_s {
    plx_device_s* device = nullptr;
    CUstream stream = nullptr;
    bool profiling = false;
    std::shared_ptr<BaseEvent> base;
    LaunchEvent* launch_event = nullptr;

    // Two pinned staging buffers for read / write; each slot's event marks its last copy done.
    static constexpr size_t kStagingBytes = size_t(8) << 20;
    void* staging[2] = {nullptr, nullptr};
    CUevent staging_done[2] = {nullptr, nullptr};
};

struct plx_kernel_s {
    plx_module_s* module = nullptr;
    CUfunction function = nullptr;
    const plx_cuda::Routine* routine = nullptr; // a library routine's kernel: no function
    std::string name;
    uint32_t max_threads = 0;   // CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK
    uint32_t static_shared = 0; // CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES
    // Parameter sizes from cuFuncGetParamInfo; empty when the driver cannot tell.
    std::vector<uint32_t> param_sizes;
    bool params_known = false;
    // The dynamic shared memory the function is currently allowed (48 KiB by default).
    std::atomic<uint32_t> dynamic_shared_allowed{48u * 1024u};
    std::mutex attribute_mutex;
};

struct plx_module_s {
    plx_device_s* device = nullptr;
    CUmodule module = nullptr;
    std::vector<char> cubin; // what module_get_binary returns
    std::mutex kernels_mutex;
    std::unordered_map<std::string, std::unique_ptr<plx_kernel_s>> kernels;
    // A routine's module (PLX_LANG_ROUTINE) has no CUmodule and no cubin: its one kernel,
    // which kernel_get gives for any name.
    const plx_cuda::Routine* routine = nullptr;
    std::unique_ptr<plx_kernel_s> routine_kernel;
};

namespace plx_cuda {

// Devices found at init; stable until shutdown.
std::vector<std::unique_ptr<plx_device_s>>& devices();
plx_status enumerate_devices();
void release_devices();

// Retains the device's primary context once (device->ctx), without making it current.
plx_status retain_context(plx_device_s* device);
// Makes the device's primary context current on the calling thread (retaining it first).
plx_status make_current(plx_device_s* device);

// The descriptor's functions (plugins/common/descriptor.hpp, PLX_JIT_ENTRIES), with plugin.h's
// signatures: device.cpp the device entries, memory.cpp buffer_*, host_alloc and host_free,
// queue.cpp queue_* and event_*, module.cpp module_* and kernel_get, launch.cpp launch.
PLX_JIT_ENTRIES(PLX_DECLARE_ENTRY)

// memory.cpp: the fill kernels of a device, released with it.
void release_fill_module(plx_device_s* device);
// memcpy that splits large copies across a few helper threads (copy_pool.cpp).
void host_copy(void* dst, const void* src, size_t bytes);
void stop_copy_pool();

// queue.cpp: a command's event, where one is asked for: on a profiling queue a start recorded
// before the command and an end after it; otherwise, after it, a reference to the queue's
// LaunchEvent.
plx_status event_begin(plx_queue queue, plx_event* event, plx_event_s** pending);
plx_status event_end(plx_queue queue, plx_event_s* pending, plx_event* event);

// module.cpp: loads a cubin or PTX into a module of the device (shared by module.cpp and the
// fill kernels).
plx_status load_ptx_to_cubin(const char* ptx, size_t ptx_bytes, const std::string& options,
                             std::vector<char>* cubin);
plx_status load_cubin(const std::vector<char>& cubin, CUmodule* module);

// routines.cpp: the library routines (PLX_LANG_ROUTINE) with cuBLAS, opened at run time.
// routine_load is module_load's for that language (`name` of `bytes`, options checked);
// routine_launch is launch's for a routine kernel; release_routines destroys the device's
// cuBLAS handle, with its context current (release_devices).
plx_status routine_load(plx_device_s* device, const char* name, size_t bytes, const char* options,
                        plx_module* module);
plx_status routine_launch(plx_queue queue, plx_kernel_s* kernel, const plx_arg* args,
                          uint32_t num_args, plx_event* event);
void release_routines(plx_device_s* device);

} // namespace plx_cuda
