// What a plugin that runs on the host CPU, synchronously (native, interp), takes from
// plugins/common, put together: its device, memory, queue and event entries for the
// descriptor, and what shutdown frees of them.
#pragma once

#include "host_device.hpp"
#include "host_memory.hpp"
#include "sync_queue.hpp"

// The memory entries a host plugin implements itself (the bounds messages and the copies
// differ): X(name) for each. PLX_HOST_BUFFER_ENTRIES(PLX_DECLARE_ENTRY) declares them,
// PLX_HOST_BUFFER_ENTRIES(PLX_SET_ENTRY) points the descriptor at them.
// clang-format off
#define PLX_HOST_BUFFER_ENTRIES(X) X(buffer_alloc) X(buffer_copy) X(buffer_fill) X(buffer_copy_peer)
// clang-format on

namespace plx_support {

// The three as one: HostPlugin<Plugin>::check_queue, ::check_range, ::setup, ...
template <class Plugin>
struct HostPlugin : HostDevice<Plugin>, HostMemory<Plugin>, SyncQueue<Plugin> {
    using Device = HostDevice<Plugin>;
    using Memory = HostMemory<Plugin>;
    using Queues = SyncQueue<Plugin>;
    static constexpr const Names& names = Plugin::names;

    // Points the descriptor's entries that plugins/common implements at them, behind the guard.
    // Everything runs synchronously: a marker is complete when it is made, an asynchronous
    // transfer is done when it returns.
    static void set_entries(plx_plugin& descriptor) noexcept {
        descriptor.device_count = Entry<Plugin, &Device::device_count>::value;
        descriptor.device_get = Entry<Plugin, &Device::device_get>::value;
        descriptor.device_info = Entry<Plugin, &Device::device_info>::value;
        descriptor.buffer_free = Entry<Plugin, &Memory::buffer_free>::value;
        descriptor.buffer_write = Entry<Plugin, &Memory::buffer_write>::value;
        descriptor.buffer_read = Entry<Plugin, &Memory::buffer_read>::value;
        descriptor.queue_create = Entry<Plugin, &Queues::queue_create>::value;
        descriptor.queue_sync = Entry<Plugin, &Queues::queue_sync>::value;
        descriptor.queue_destroy = Entry<Plugin, &Queues::queue_destroy>::value;
        descriptor.event_wait = Entry<Plugin, &Queues::event_wait>::value;
        descriptor.event_profile = Entry<Plugin, &Queues::event_profile>::value;
        descriptor.event_release = Entry<Plugin, &Queues::event_release>::value;
        // 1.1
        descriptor.queue_marker = Entry<Plugin, &Queues::queue_marker>::value;
        descriptor.queue_wait_event = Entry<Plugin, &Queues::queue_wait_event>::value;
        descriptor.buffer_write_async = Entry<Plugin, &Memory::buffer_write_async>::value;
        descriptor.buffer_read_async = Entry<Plugin, &Memory::buffer_read_async>::value;
        descriptor.host_alloc = Entry<Plugin, &Memory::host_alloc>::value;
        descriptor.host_free = Entry<Plugin, &Memory::host_free>::value;
        descriptor.buffer_wrap = Entry<Plugin, &Memory::buffer_wrap>::value;
        descriptor.buffer_native = Entry<Plugin, &Memory::buffer_native>::value;
        // No native queue: commands run on the calling thread (and native's worker pool).
        descriptor.queue_native = nullptr;
    }

    // Shutdown's part: every handle and host_alloc block the host did not free, the device,
    // and the host's services.
    static void release_all() noexcept {
        release_all_tracked(names.plugin);
        Memory::release_all();
        Device::teardown();
        set_host(nullptr);
    }
};

} // namespace plx_support
