// Internal declarations shared by the interpreter plugin's files (device, memory, queue, module,
// launch, plugin). Nothing here crosses the ABI except through the opaque handle structs.
#pragma once

#include "program.hpp"

#include "../common/plugin_support.hpp"

#include <plexus/plugin.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace plx_interp {

// Work-group local memory per group. The interpreter keeps shared arrays in a host block per
// launch; 64 KiB is the smallest limit of the GPU backends (48 KiB static on CUDA plus
// headroom, 64 KiB on most OpenCL devices), so a kernel that runs here fits there as well.
constexpr uint64_t kLocalMemoryBytes = 64 * 1024;
constexpr uint32_t kMaxWorkGroupSize = 1024;
// The subgroup width: a group's work-items, in linear order, split into subgroups of 8 (the
// last one partial when the group size is not a multiple), narrower than any GPU's warp so
// that a kernel relying on a width of 32 shows it here.
constexpr uint32_t kSubgroupWidth = 8;
constexpr uint32_t kMaxWorkGroupDims[3] = {1024, 1024, 64};

// plugin_support.hpp: last_error (messages start with "interp: <function>: "), logging
// through the host, the list of live handles that shutdown frees, and the 1.1 entries of a
// plugin whose buffers are host memory.
using plx_support::fail;
using plx_support::last_error_text;
using plx_support::log;
using plx_support::track;
using plx_support::Tracked;
using plx_support::untrack;

// catalog.cpp: the intrinsic table of the descriptor, and a check at init that every catalog
// entry has an implementation here.
const plx_intrinsic* intrinsic_table(uint32_t* count) noexcept;
bool catalog_setup(std::string& error);

// device.cpp
void device_setup();
bool valid_device(plx_device device) noexcept;
plx_status device_count(uint32_t* count);
plx_status device_get(uint32_t index, plx_device* device);
plx_status device_info(plx_device device, plx_device_info* info);

// memory.cpp
bool valid_buffer(plx_buffer buffer) noexcept;
plx_status buffer_alloc(plx_device device, size_t bytes, plx_buffer* buffer);
void buffer_free(plx_buffer buffer);
plx_status buffer_write(plx_queue queue, plx_buffer buffer, size_t offset, const void* src,
                        size_t bytes);
plx_status buffer_read(plx_queue queue, plx_buffer buffer, size_t offset, void* dst,
                       size_t bytes);
plx_status buffer_copy(plx_queue queue, plx_buffer dst, size_t dst_offset, plx_buffer src,
                       size_t src_offset, size_t bytes);
plx_status buffer_fill(plx_queue queue, plx_buffer buffer, size_t offset, const void* pattern,
                       size_t pattern_bytes, size_t bytes);
// 1.1: every command completes before its call returns, so the asynchronous forms are the
// blocking ones under their own names.
plx_status buffer_write_async(plx_queue queue, plx_buffer buffer, size_t offset, const void* src,
                              size_t bytes);
plx_status buffer_read_async(plx_queue queue, plx_buffer buffer, size_t offset, void* dst,
                             size_t bytes);
plx_status buffer_copy_peer(plx_queue queue, plx_buffer dst, size_t dst_offset, plx_buffer src,
                            size_t src_offset, size_t bytes);
// host_alloc, host_free, buffer_wrap and buffer_native come from plugin_support.hpp, with
// what is this plugin's own; shutdown calls HostMemory::release_all.
struct HostPlugin {
    static constexpr plx_support::Names names{"interp", "an interp"};
    static constexpr auto valid_device = &plx_interp::valid_device;
    static constexpr auto valid_buffer = &plx_interp::valid_buffer;
    // host_alloc's message for a block that does not fit.
    static std::string no_room(size_t bytes, uint64_t /*limit*/) {
        return std::to_string(bytes) + " bytes do not fit in host memory";
    }
};
using HostMemory = plx_support::HostMemory<HostPlugin>;

// queue.cpp
bool valid_queue(plx_queue queue) noexcept;
plx_status queue_create(plx_device device, uint32_t flags, plx_queue* queue);
plx_status queue_sync(plx_queue queue);
void queue_destroy(plx_queue queue);
// A command that failed while running (not one refused up front) is also reported by the
// next queue_sync, as the ABI asks of an in-order queue.
// Creates a completed event; start and end are steady-clock ns, kept when the queue profiles;
// `fn` names the calling function in the out-of-memory message.
plx_status event_create(const char* fn, plx_queue queue, plx_status status, uint64_t start_ns,
                        uint64_t end_ns, plx_event* event);
plx_status event_wait(plx_event event);
plx_status event_profile(plx_event event, uint64_t* start_ns, uint64_t* end_ns);
void event_release(plx_event event);
uint64_t now_ns() noexcept;
bool queue_profiles(plx_queue queue) noexcept;
// 1.1: queue_marker returns a completed event (every earlier command has finished, and a
// failed one reported itself then); queue_wait_event has nothing to wait for.
plx_status queue_marker(plx_queue queue, plx_event* event);
plx_status queue_wait_event(plx_queue queue, plx_event event);

// module.cpp: module_load has the loader (loader.hpp) parse and check the IR JSON into a
// Program; the loader throws CompileError.
struct CompileError {
    std::string message; // "<json path>: <what>"
};
plx_status module_load(plx_device device, plx_language language, const char* source,
                       size_t source_bytes, const char* options, plx_module* module);
void module_unload(plx_module module);
plx_status kernel_get(plx_module module, const char* name, plx_kernel* kernel);

// exec.cpp (machine.hpp): runs every work-group of a launch, one after another, its
// work-items in lockstep.
struct LaunchShape {
    uint32_t dims;
    uint64_t global_size[3];
    uint32_t local_size[3];
    uint64_t num_groups[3];
};
struct BoundParam {
    std::byte* data = nullptr; // buffers
    uint64_t bytes = 0;
    uint64_t scalar = 0;       // scalars, as a register holds them (ops.hpp)
};
// What stopped a launch: "kernel \"k\": <what> at <statement path>, work-item ...".
struct LaunchError {
    std::string message;
};
void execute(const Program& program, const LaunchShape& shape,
             const std::vector<BoundParam>& params);

// launch.cpp
plx_status launch(plx_queue queue, plx_kernel kernel, const plx_launch_dims* dims,
                  const plx_arg* args, uint32_t num_args, plx_event* event);

} // namespace plx_interp

// The opaque handles of plugin.h. Each carries a magic word so that a wrong or freed handle
// is usually refused with PLX_ERROR_INVALID_ARGUMENT instead of being dereferenced blindly.
struct plx_device_s {
    static constexpr uint32_t kMagic = 0x49444556; // "IDEV"
    uint32_t magic = kMagic;
    plx_device_info info{};
};

struct plx_buffer_s final : plx_interp::Tracked {
    static constexpr uint32_t kMagic = 0x49425546; // "IBUF"
    uint32_t magic = kMagic;
    std::byte* data = nullptr;
    size_t bytes = 0;
    plx_device device = nullptr;
    bool owned = true; // false for buffer_wrap: the caller keeps the memory
    ~plx_buffer_s() override;
};

struct plx_queue_s final : plx_interp::Tracked {
    static constexpr uint32_t kMagic = 0x49515545; // "IQUE"
    uint32_t magic = kMagic;
    uint32_t flags = 0;
    plx_device device = nullptr;
};

struct plx_event_s final : plx_interp::Tracked {
    static constexpr uint32_t kMagic = 0x49455654; // "IEVT"
    uint32_t magic = kMagic;
    plx_status status = PLX_OK;
    bool profiled = false;
    uint64_t start_ns = 0;
    uint64_t end_ns = 0;
};

// A module holds the one kernel of its IR document; the kernel handle points into it.
struct plx_kernel_s {
    static constexpr uint32_t kMagic = 0x494b524e; // "IKRN"
    uint32_t magic = kMagic;
    plx_interp::Program program;
};

struct plx_module_s final : plx_interp::Tracked {
    static constexpr uint32_t kMagic = 0x494d4f44; // "IMOD"
    uint32_t magic = kMagic;
    plx_kernel_s kernel;
};
