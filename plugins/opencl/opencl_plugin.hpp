// Internal header of the OpenCL plugin: the dlopen'ed API table, the handle structs behind the
// opaque plx_* types, and the error helpers shared by the per-role source files; last_error,
// logging, the guard and the registry of live handles are plugins/common's.
#pragma once

#include "common/descriptor.hpp"
#include "common/handles.hpp"

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <CL/cl_ext.h>

#include <plexus/plugin.h>

#include <atomic>
#include <cstdarg>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

// Extension queries, defined here when the installed headers predate them.
#ifndef CL_DEVICE_UUID_KHR
#define CL_DEVICE_UUID_KHR 0x106A // cl_khr_device_uuid: cl_uchar[16]
#endif
#ifndef CL_UUID_SIZE_KHR
#define CL_UUID_SIZE_KHR 16
#endif
#ifndef CL_DEVICE_PCI_BUS_INFO_KHR
#define CL_DEVICE_PCI_BUS_INFO_KHR 0x410F // cl_khr_pci_bus_info: cl_device_pci_bus_info_khr
typedef struct _cl_device_pci_bus_info_khr {
    cl_uint pci_domain;
    cl_uint pci_bus;
    cl_uint pci_device;
    cl_uint pci_function;
} cl_device_pci_bus_info_khr;
#endif
// cl_nv_device_attribute_query, each a cl_uint.
#ifndef CL_DEVICE_PCI_BUS_ID_NV
#define CL_DEVICE_PCI_BUS_ID_NV 0x4008
#endif
#ifndef CL_DEVICE_PCI_SLOT_ID_NV
#define CL_DEVICE_PCI_SLOT_ID_NV 0x4009
#endif
#ifndef CL_DEVICE_PCI_DOMAIN_ID_NV
#define CL_DEVICE_PCI_DOMAIN_ID_NV 0x400A
#endif

// Every OpenCL 1.2 function the plugin calls, listed once: the table's members, the dlsym loop
// and the pointer types (decltype of the real declaration) all come from this list.
#define PLX_CL_FUNCTIONS(X)                                                                        \
    X(clGetPlatformIDs)                                                                            \
    X(clGetPlatformInfo)                                                                           \
    X(clGetDeviceIDs)                                                                              \
    X(clGetDeviceInfo)                                                                             \
    X(clCreateContext)                                                                             \
    X(clReleaseContext)                                                                            \
    X(clCreateCommandQueue)                                                                        \
    X(clReleaseCommandQueue)                                                                       \
    X(clFinish)                                                                                    \
    X(clFlush)                                                                                     \
    X(clCreateBuffer)                                                                              \
    X(clReleaseMemObject)                                                                          \
    X(clEnqueueReadBuffer)                                                                         \
    X(clEnqueueWriteBuffer)                                                                        \
    X(clEnqueueCopyBuffer)                                                                         \
    X(clEnqueueFillBuffer)                                                                         \
    X(clEnqueueMarkerWithWaitList)                                                                 \
    X(clEnqueueBarrierWithWaitList)                                                                \
    X(clEnqueueMapBuffer)                                                                          \
    X(clEnqueueUnmapMemObject)                                                                     \
    X(clGetMemObjectInfo)                                                                          \
    X(clRetainMemObject)                                                                           \
    X(clCreateProgramWithSource)                                                                   \
    X(clCreateProgramWithBinary)                                                                   \
    X(clBuildProgram)                                                                              \
    X(clGetProgramInfo)                                                                            \
    X(clGetProgramBuildInfo)                                                                       \
    X(clReleaseProgram)                                                                            \
    X(clCreateKernel)                                                                              \
    X(clReleaseKernel)                                                                             \
    X(clGetKernelInfo)                                                                             \
    X(clGetKernelWorkGroupInfo)                                                                    \
    X(clSetKernelArg)                                                                              \
    X(clEnqueueNDRangeKernel)                                                                      \
    X(clWaitForEvents)                                                                             \
    X(clGetEventInfo)                                                                              \
    X(clGetEventProfilingInfo)                                                                     \
    X(clReleaseEvent)

namespace plx_opencl {

struct Api {
#define PLX_CL_MEMBER(fn) decltype(&::fn) fn = nullptr;
    PLX_CL_FUNCTIONS(PLX_CL_MEMBER)
#undef PLX_CL_MEMBER
};

// Opens the ICD loader once per process (std::call_once). The library is libOpenCL.so.1, then
// libOpenCL.so, or only the name in PLEXUS_OPENCL_LIBRARY when that variable is set (ignored in
// setuid processes). Returns the table, or nullptr with the reason in *why.
const Api* load_api(std::string* why);
// The table loaded by load_api; valid after a successful init.
const Api& cl();

// "CL_OUT_OF_RESOURCES", or "unknown OpenCL error" for a code not in the table.
const char* cl_error_name(cl_int code);
// "clCreateBuffer: CL_OUT_OF_RESOURCES (-5)"
std::string cl_error_text(const char* call, cl_int code);

std::string strf(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

// What plugins/common's templates need of this plugin. Most of its messages name the function
// only ("queue_create: queue is NULL"); plugins/common's, and every log line, start "opencl: ".
struct Plugin {
    static constexpr plx_support::Names names{"opencl", "an opencl"};
};

using plx_support::fail;
using plx_support::live;
using plx_support::log;

// fail() with "<call>: <NAME> (<code>): <context>".
plx_status fail_cl(plx_status status, const char* call, cl_int code, const std::string& context);
// fail_cl() for a call that creates or builds something on a device: out of memory when the
// driver ran out of host memory or resources, a device error otherwise; the context names it.
plx_status fail_create(const char* call, cl_int code, const char* device_name);

// A built cl_program shared by every module loaded from the same (source, options).
struct Program {
    cl_program program = nullptr;
    ~Program();
};

// One slot of a device's program cache; `mutex` makes concurrent loads of the same source
// build once while loads of other sources proceed.
struct CacheSlot {
    std::mutex mutex;
    std::shared_ptr<Program> program; // null until built
};

// Statistics exposed through debug log messages; the tests read them from the log.
struct DeviceStats {
    std::atomic<uint64_t> builds{0};
    std::atomic<uint64_t> cache_hits{0};
};

plx_status device_enumerate(); // at init: fills the device list, 0 devices is not an error
// The device's context, created at its first use (listing devices creates none); on failure
// the status with last_error set, the same at every later call.
plx_status ensure_context(plx_device_s& dev);
void device_release_all(); // at shutdown
const std::string& no_device_reason();

} // namespace plx_opencl

// The opaque handles of plugin.h. Each is in the registry of live handles (handles.hpp) from
// creation until freed, by its address and its kind, kMagic: a handle of the wrong kind, or one
// already freed, is refused without being read. Modules are owned by the registry, so that
// shutdown frees what the host did not unload; the others are freed by their own entries.
struct plx_device_s {
    static constexpr uint32_t kMagic = 0x504c5844;
    cl_platform_id platform = nullptr;
    cl_device_id id = nullptr;
    cl_context context = nullptr; // see ensure_context
    std::once_flag context_once;
    cl_int context_error = CL_SUCCESS;
    plx_device_info info{};
    // The OpenCL C the generated code is built as (device.cpp, c_standard): "-cl-std=CL1.2",
    // or CL3.0 where that lets cl_ext_float_atomics' built-ins replace compare-exchange loops.
    std::string c_standard = "-cl-std=CL1.2";
    std::vector<size_t> max_item_sizes;
    std::mutex cache_mutex;
    // Key: options, a NUL, then the source. Entries live until shutdown, so a module loaded
    // again after being unloaded still skips the build.
    std::unordered_map<std::string, std::shared_ptr<plx_opencl::CacheSlot>> programs;
    plx_opencl::DeviceStats stats;
    // host_alloc: an internal queue for mapping and unmapping (made at the first host_alloc,
    // released at shutdown) and every live allocation, its mapped pointer -> its cl_mem.
    std::mutex host_mutex;
    cl_command_queue host_queue = nullptr;
    std::unordered_map<void*, cl_mem> host_allocs;
};

struct plx_buffer_s {
    static constexpr uint32_t kMagic = 0x504c5842;
    plx_device_s* device = nullptr;
    cl_mem mem = nullptr; // the plugin's own, or one reference to a buffer_wrap'ped cl_mem
    size_t bytes = 0;     // for a wrapped cl_mem, the size given to buffer_wrap
};

struct plx_queue_s {
    static constexpr uint32_t kMagic = 0x504c5851;
    plx_device_s* device = nullptr;
    cl_command_queue queue = nullptr;
    bool profiling = false;
};

struct plx_kernel_s {
    static constexpr uint32_t kMagic = 0x504c584b;
    struct plx_module_s* module = nullptr;
    cl_kernel kernel = nullptr;
    std::string name;
    cl_uint num_args = 0;
    size_t max_work_group_size = 0; // this kernel's limit, may be below the device's
    cl_ulong static_local_bytes = 0;
    // clSetKernelArg changes state shared by every thread using this cl_kernel: the arguments
    // and the enqueue that captures them must happen under one lock.
    std::mutex launch_mutex;
};

// Unloading it (or shutdown) releases its kernels.
struct plx_module_s final : plx_support::Tracked {
    static constexpr uint32_t kMagic = 0x504c584d;
    plx_device_s* device = nullptr;
    std::shared_ptr<plx_opencl::Program> program;
    std::mutex kernels_mutex;
    std::map<std::string, std::unique_ptr<plx_kernel_s>> kernels;
    ~plx_module_s() override;
};

struct plx_event_s {
    static constexpr uint32_t kMagic = 0x504c5845;
    cl_event event = nullptr;
    bool profiling = false;
    plx_device_s* device = nullptr; // the device of the queue that made it
};

// The descriptor's functions (plugins/common/descriptor.hpp, PLX_JIT_ENTRIES), with plugin.h's
// signatures: device.cpp the device entries, memory.cpp buffer_*, host_alloc and host_free,
// queue.cpp queue_* and event_*, module.cpp module_* and kernel_get, launch.cpp launch.
namespace plx_opencl {
PLX_JIT_ENTRIES(PLX_DECLARE_ENTRY)

// memory.cpp: shutdown's release of what the host did not free, and the queue.
void host_release_all(plx_device_s& dev);
// queue.cpp: wraps a cl_event of `queue` (taking its reference) in a plx_event for `out`;
// releases it on failure.
plx_status event_wrap(cl_event event, const plx_queue_s& queue, plx_event* out);
// Checks a queue handle and that a buffer belongs to its device.
plx_status check_queue(plx_queue queue, const char* fn);
} // namespace plx_opencl
