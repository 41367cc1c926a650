// Internal declarations shared by the native CPU plugin's files (device, memory, queue, launch,
// plugin). Nothing here crosses the ABI except through the opaque handle structs.
#pragma once

#include "../common/plugin_support.hpp"

#include <plexus/plugin.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

namespace plx_native {

// Work-group local memory per group. A CPU has no scratchpad: local memory is a per-worker
// host block reused by every group that worker runs. 256 KiB is L2-sized on current cores,
// large enough for the usual tiles (a 64x64 f64 tile is 32 KiB) and small enough to
// preallocate for every worker so that a launch never allocates.
constexpr uint64_t kLocalMemoryBytes = 256 * 1024;
constexpr uint32_t kMaxWorkGroupSize = 4096;
constexpr uint32_t kMaxWorkGroupDims[3] = {4096, 4096, 64};
// Buffers and local memory start on a cache line, which also covers every vector width up
// to AVX-512.
constexpr size_t kAlignment = plx_support::kHostAlignment;
// More threads than this is certainly a typo in the configuration.
constexpr uint32_t kMaxThreads = 4096;

// plugin_support.hpp: last_error (messages start with "native: <function>: "), logging
// through the host, the list of live handles that shutdown frees, and the 1.1 entries of a
// plugin whose buffers are host memory.
using plx_support::fail;
using plx_support::last_error_text;
using plx_support::log;
using plx_support::track;
using plx_support::Tracked;
using plx_support::untrack;

// device.cpp
bool device_setup(uint32_t threads);
void device_teardown() noexcept;
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
plx_status buffer_read(plx_queue queue, plx_buffer buffer, size_t offset, void* dst, size_t bytes);
// 1.1: every command completes before its call returns, so the asynchronous forms are the
// blocking ones under their own names.
plx_status buffer_write_async(plx_queue queue, plx_buffer buffer, size_t offset, const void* src,
                              size_t bytes);
plx_status buffer_read_async(plx_queue queue, plx_buffer buffer, size_t offset, void* dst,
                             size_t bytes);
plx_status buffer_copy(plx_queue queue, plx_buffer dst, size_t dst_offset, plx_buffer src,
                       size_t src_offset, size_t bytes);
plx_status buffer_fill(plx_queue queue, plx_buffer buffer, size_t offset, const void* pattern,
                       size_t pattern_bytes, size_t bytes);
void* buffer_host_ptr(plx_buffer buffer);
plx_status buffer_copy_peer(plx_queue queue, plx_buffer dst, size_t dst_offset, plx_buffer src,
                            size_t src_offset, size_t bytes);
// host_alloc, host_free, buffer_wrap and buffer_native come from plugin_support.hpp, with
// what is this plugin's own; shutdown calls HostMemory::release_all.
struct HostPlugin {
    static constexpr plx_support::Names names{"native", "a native"};
    static constexpr auto valid_device = &plx_native::valid_device;
    static constexpr auto valid_buffer = &plx_native::valid_buffer;
    // host_alloc's message for a block that does not fit.
    static std::string no_room(size_t bytes, uint64_t limit) {
        return "could not allocate " + std::to_string(bytes) + " bytes of host memory (" +
               std::to_string(limit) + " bytes physical memory)";
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
bool queue_profiles(plx_queue queue) noexcept;
// Creates a completed event; start and end are steady-clock ns (0 when not profiled); `fn`
// names the calling function in the out-of-memory message.
plx_status event_create(const char* fn, plx_queue queue, plx_status status, uint64_t start_ns,
                        uint64_t end_ns, plx_event* event);
plx_status event_wait(plx_event event);
plx_status event_profile(plx_event event, uint64_t* start_ns, uint64_t* end_ns);
void event_release(plx_event event);
uint64_t now_ns() noexcept;
// 1.1: queue_marker returns a completed event (every earlier command has finished, and a
// failed one reported itself then); queue_wait_event has nothing to wait for.
plx_status queue_marker(plx_queue queue, plx_event* event);
plx_status queue_wait_event(plx_queue queue, plx_event event);

// launch.cpp
bool pool_start(uint32_t threads);
void pool_stop() noexcept;
uint32_t pool_threads() noexcept;
plx_status launch_host(plx_queue queue, plx_workgroup_fn fn, void* user,
                       const plx_launch_dims* dims, plx_event* event);

} // namespace plx_native

// The opaque handles of plugin.h. Each carries a magic word so that a wrong or freed handle
// is usually refused with PLX_ERROR_INVALID_ARGUMENT instead of being dereferenced blindly.
struct plx_device_s {
    static constexpr uint32_t kMagic = 0x4e444556; // "NDEV"
    uint32_t magic = kMagic;
    plx_device_info info{};
};

struct plx_buffer_s final : plx_native::Tracked {
    static constexpr uint32_t kMagic = 0x4e425546; // "NBUF"
    uint32_t magic = kMagic;
    std::byte* data = nullptr;
    size_t bytes = 0;
    plx_device device = nullptr;
    bool owned = true; // false for buffer_wrap: the caller keeps the memory
    ~plx_buffer_s() override;
};

struct plx_queue_s final : plx_native::Tracked {
    static constexpr uint32_t kMagic = 0x4e515545; // "NQUE"
    uint32_t magic = kMagic;
    uint32_t flags = 0;
    plx_device device = nullptr;
};

struct plx_event_s final : plx_native::Tracked {
    static constexpr uint32_t kMagic = 0x4e45564e; // "NEVN"
    uint32_t magic = kMagic;
    plx_status status = PLX_OK;
    bool profiled = false;
    uint64_t start_ns = 0;
    uint64_t end_ns = 0;
};
