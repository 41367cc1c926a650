// The queues and events of a plugin whose every command runs to completion before its call
// returns (native, interp): a queue is trivially in order and an event is complete when it is
// made. plugin.h's queue and event handles, and the queue and event entries.
#pragma once

#include "handles.hpp"
#include "host_device.hpp"

#include <chrono>
#include <cstdint>
#include <string>

// The opaque handles of plugin.h, registered (handles.hpp) from creation until released.
struct plx_queue_s final : plx_support::Tracked {
    static constexpr uint32_t kMagic = 0x48515545; // "HQUE"
    uint32_t flags = 0;
    plx_device device = nullptr;
};

struct plx_event_s final : plx_support::Tracked {
    static constexpr uint32_t kMagic = 0x48455654; // "HEVT"
    plx_status status = PLX_OK;
    bool profiled = false;
    uint64_t start_ns = 0; // steady-clock ns, when profiled
    uint64_t end_ns = 0;
};

namespace plx_support {

inline uint64_t now_ns() noexcept {
    return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                     std::chrono::steady_clock::now().time_since_epoch())
                                     .count());
}

// Whether the queue was made with PLX_QUEUE_PROFILING; `queue` is live.
inline bool queue_profiles(const plx_queue_s* queue) noexcept {
    return (queue->flags & PLX_QUEUE_PROFILING) != 0;
}

// The queue and event entries; messages name the plugin by Plugin::names:
// "native: queue_wait_event: not a native event".
template <class Plugin> struct SyncQueue {
    static constexpr const Names& names = Plugin::names;

    // "<plugin>: <fn>: not a native queue" unless `queue` is a live queue of the plugin.
    static plx_status check_queue(const char* fn, plx_queue queue) {
        return live(queue) ? PLX_OK : not_ours(names, fn, "queue");
    }

    static plx_status queue_create(plx_device device, uint32_t flags, plx_queue* queue) {
        static constexpr const char* fn = "queue_create";
        if (!is_host_device(device)) return not_ours(names, fn, "device");
        if (!queue) return fail_in(names, fn, PLX_ERROR_INVALID_ARGUMENT, "queue is NULL");
        // Unknown flag bits come from a newer host; they only ask for extras, so are ignored.
        auto* q = make_tracked<plx_queue_s>();
        if (!q) return fail_in(names, fn, PLX_ERROR_OUT_OF_MEMORY, "out of host memory");
        q->flags = flags;
        q->device = device;
        *queue = q;
        return PLX_OK;
    }

    // Every command finished before its call returned, and a failed one said so then: a
    // failure is reported once, by the call that met it.
    static plx_status queue_sync(plx_queue queue) { return check_queue("queue_sync", queue); }

    static void queue_destroy(plx_queue queue) { release_tracked(queue); }

    // A completed event of `queue` for the command `fn` (which names it in the out-of-memory
    // message); start and end are kept when the queue profiles.
    static plx_status event_create(const char* fn, plx_queue queue, plx_status status,
                                   uint64_t start_ns, uint64_t end_ns, plx_event* event) {
        auto* e = make_tracked<plx_event_s>();
        if (!e) return fail_in(names, fn, PLX_ERROR_OUT_OF_MEMORY, "out of host memory");
        e->status = status;
        e->profiled = queue_profiles(queue);
        e->start_ns = start_ns;
        e->end_ns = end_ns;
        *event = e;
        return PLX_OK;
    }

    static plx_status event_wait(plx_event event) {
        static constexpr const char* fn = "event_wait";
        if (!live(event)) return not_ours(names, fn, "event");
        if (event->status != PLX_OK)
            return fail_in(names, fn, event->status, "the event's command failed");
        return PLX_OK;
    }

    static plx_status event_profile(plx_event event, uint64_t* start_ns, uint64_t* end_ns) {
        static constexpr const char* fn = "event_profile";
        if (!live(event)) return not_ours(names, fn, "event");
        if (!start_ns || !end_ns)
            return fail_in(names, fn, PLX_ERROR_INVALID_ARGUMENT, "start_ns or end_ns is NULL");
        if (!event->profiled)
            return fail_in(names, fn, PLX_ERROR_UNSUPPORTED,
                           "the event's queue was not created with PLX_QUEUE_PROFILING");
        *start_ns = event->start_ns;
        *end_ns = event->end_ns;
        return PLX_OK;
    }

    static void event_release(plx_event event) { release_tracked(event); }

    // Every earlier command has finished, and one that failed reported it when it was called:
    // the marker is complete, and OK. A profiled marker takes no time.
    static plx_status queue_marker(plx_queue queue, plx_event* event) {
        static constexpr const char* fn = "queue_marker";
        if (plx_status s = check_queue(fn, queue); s != PLX_OK) return s;
        if (!event) return fail_in(names, fn, PLX_ERROR_INVALID_ARGUMENT, "event is NULL");
        const uint64_t t = queue_profiles(queue) ? now_ns() : 0;
        return event_create(fn, queue, PLX_OK, t, t, event);
    }

    // The plugin's events are complete when they are made: nothing to wait for.
    static plx_status queue_wait_event(plx_queue queue, plx_event event) {
        static constexpr const char* fn = "queue_wait_event";
        if (plx_status s = check_queue(fn, queue); s != PLX_OK) return s;
        if (!live(event)) return not_ours(names, fn, "event");
        return PLX_OK;
    }
};

} // namespace plx_support
