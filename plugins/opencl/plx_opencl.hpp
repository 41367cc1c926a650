// Internal header of the OpenCL plugin: the dlopen'ed API table, the handle structs behind the
// opaque plx_* types, and the error and logging helpers shared by the per-role source files.
#pragma once

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

namespace plx_ocl {

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

// Sets the calling thread's last_error and returns status.
plx_status fail(plx_status status, std::string message);
// fail() with "<call>: <NAME> (<code>): <context>".
plx_status fail_cl(plx_status status, const char* call, cl_int code, const std::string& context);
// fail_cl() for a call that creates or builds something on a device: out of memory when the
// driver ran out of host memory or resources, a device error otherwise; the context names it.
plx_status fail_create(const char* call, cl_int code, const char* device_name);
const char* last_error();
void log(plx_log_level level, const std::string& message);

// Handle tags: a handle of the wrong kind, or one already freed, is refused instead of used.
enum class Tag : uint32_t {
    none = 0,
    device = 0x504c5844,
    buffer = 0x504c5842,
    queue = 0x504c5851,
    module = 0x504c584d,
    kernel = 0x504c584b,
    event = 0x504c5845
};

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
void device_release_all();     // at shutdown
const std::string& no_device_reason();

// True when `handle` is null, of another kind, or already freed.
template <class Handle> bool bad_handle(const Handle* handle, Tag expected) {
    return handle == nullptr || handle->tag != expected;
}

} // namespace plx_ocl

struct plx_device_s {
    plx_ocl::Tag tag = plx_ocl::Tag::device;
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
    std::unordered_map<std::string, std::shared_ptr<plx_ocl::CacheSlot>> programs;
    plx_ocl::DeviceStats stats;
    // host_alloc: an internal queue for mapping and unmapping (made at the first host_alloc,
    // released at shutdown) and every live allocation, its mapped pointer -> its cl_mem.
    std::mutex host_mutex;
    cl_command_queue host_queue = nullptr;
    std::unordered_map<void*, cl_mem> host_allocs;
};

struct plx_buffer_s {
    plx_ocl::Tag tag = plx_ocl::Tag::buffer;
    plx_device_s* device = nullptr;
    cl_mem mem = nullptr; // the plugin's own, or one reference to a buffer_wrap'ped cl_mem
    size_t bytes = 0;     // for a wrapped cl_mem, the size given to buffer_wrap
};

struct plx_queue_s {
    plx_ocl::Tag tag = plx_ocl::Tag::queue;
    plx_device_s* device = nullptr;
    cl_command_queue queue = nullptr;
    bool profiling = false;
};

struct plx_kernel_s {
    plx_ocl::Tag tag = plx_ocl::Tag::kernel;
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

struct plx_module_s {
    plx_ocl::Tag tag = plx_ocl::Tag::module;
    plx_device_s* device = nullptr;
    std::shared_ptr<plx_ocl::Program> program;
    std::mutex kernels_mutex;
    std::map<std::string, std::unique_ptr<plx_kernel_s>> kernels;
};

struct plx_event_s {
    plx_ocl::Tag tag = plx_ocl::Tag::event;
    cl_event event = nullptr;
    bool profiling = false;
    plx_device_s* device = nullptr; // the device of the queue that made it
};

// The descriptor's functions, one group per source file.
namespace plx_ocl {
plx_status device_count(uint32_t* count);
plx_status device_get(uint32_t index, plx_device* device);
plx_status device_info(plx_device device, plx_device_info* info);

plx_status buffer_alloc(plx_device device, size_t bytes, plx_buffer* buffer);
void buffer_free(plx_buffer buffer);
plx_status buffer_write(plx_queue queue, plx_buffer buffer, size_t offset, const void* src,
                        size_t bytes);
plx_status buffer_read(plx_queue queue, plx_buffer buffer, size_t offset, void* dst, size_t bytes);
plx_status buffer_copy(plx_queue queue, plx_buffer dst, size_t dst_offset, plx_buffer src,
                       size_t src_offset, size_t bytes);
plx_status buffer_fill(plx_queue queue, plx_buffer buffer, size_t offset, const void* pattern,
                       size_t pattern_bytes, size_t bytes);
// 1.1
plx_status buffer_write_async(plx_queue queue, plx_buffer buffer, size_t offset, const void* src,
                              size_t bytes);
plx_status buffer_read_async(plx_queue queue, plx_buffer buffer, size_t offset, void* dst,
                             size_t bytes);
plx_status buffer_copy_peer(plx_queue queue, plx_buffer dst, size_t dst_offset, plx_buffer src,
                            size_t src_offset, size_t bytes);
plx_status host_alloc(plx_device device, size_t bytes, void** ptr);
void host_free(plx_device device, void* ptr);
void host_release_all(plx_device_s& dev); // shutdown: what the host did not free, and the queue
plx_status buffer_wrap(plx_device device, uint64_t native, size_t bytes, plx_buffer* buffer);
plx_status buffer_native(plx_buffer buffer, uint64_t* native);

plx_status queue_create(plx_device device, uint32_t flags, plx_queue* queue);
plx_status queue_sync(plx_queue queue);
void queue_destroy(plx_queue queue);
plx_status event_wait(plx_event event);
plx_status event_profile(plx_event event, uint64_t* start_ns, uint64_t* end_ns);
void event_release(plx_event event);
// 1.1
plx_status queue_marker(plx_queue queue, plx_event* event);
plx_status queue_wait_event(plx_queue queue, plx_event event);
plx_status queue_native(plx_queue queue, uint64_t* native);
// Wraps a cl_event of `queue` (taking its reference) in a plx_event for `out`; releases it on
// failure.
plx_status event_wrap(cl_event event, const plx_queue_s& queue, plx_event* out);
// Checks a queue handle and that a buffer belongs to its device.
plx_status check_queue(plx_queue queue, const char* fn);

plx_status module_load(plx_device device, plx_language language, const char* source,
                       size_t source_bytes, const char* options, plx_module* module);
plx_status module_get_binary(plx_module module, plx_language* language, void* data, size_t* bytes);
void module_unload(plx_module module);
void module_release_all(); // shutdown: the modules the host did not unload
plx_status kernel_get(plx_module module, const char* name, plx_kernel* kernel);

plx_status launch(plx_queue queue, plx_kernel kernel, const plx_launch_dims* dims,
                  const plx_arg* args, uint32_t num_args, plx_event* event);
} // namespace plx_ocl
