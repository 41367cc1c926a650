// Queues and events of the native plugin. Every command runs to completion before its call
// returns, so a queue is trivially in order and an event is complete when it is created.
#include "native.hpp"

#include <chrono>
#include <new>

namespace plx_native {

uint64_t now_ns() noexcept {
    return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                     std::chrono::steady_clock::now().time_since_epoch())
                                     .count());
}

bool valid_queue(plx_queue queue) noexcept {
    return queue && queue->magic == plx_queue_s::kMagic;
}

bool queue_profiles(plx_queue queue) noexcept {
    return (queue->flags & PLX_QUEUE_PROFILING) != 0;
}

plx_status queue_create(plx_device device, uint32_t flags, plx_queue* queue) {
    if (!valid_device(device))
        return fail(PLX_ERROR_INVALID_ARGUMENT, "native: queue_create: not a native device");
    if (!queue) return fail(PLX_ERROR_INVALID_ARGUMENT, "native: queue_create: queue is NULL");
    // Unknown flag bits come from a newer host; they only ask for extras, so they are ignored.
    auto* q = new (std::nothrow) plx_queue_s;
    if (!q) return fail(PLX_ERROR_OUT_OF_MEMORY, "native: queue_create: out of host memory");
    q->flags = flags;
    q->device = device;
    track(q);
    *queue = q;
    return PLX_OK;
}

plx_status queue_sync(plx_queue queue) {
    if (!valid_queue(queue))
        return fail(PLX_ERROR_INVALID_ARGUMENT, "native: queue_sync: not a native queue");
    // Every command finished before its call returned, and a failed one said so then: a
    // failure is reported once, by the call that met it.
    return PLX_OK;
}

void queue_destroy(plx_queue queue) {
    if (!valid_queue(queue)) return;
    queue->magic = 0;
    untrack(queue);
    delete queue;
}

plx_status event_create(const char* fn, plx_queue queue, plx_status status, uint64_t start_ns,
                        uint64_t end_ns, plx_event* event) {
    auto* e = new (std::nothrow) plx_event_s;
    if (!e)
        return fail(PLX_ERROR_OUT_OF_MEMORY, std::string("native: ") + fn + ": out of host memory");
    e->status = status;
    e->profiled = queue_profiles(queue);
    e->start_ns = start_ns;
    e->end_ns = end_ns;
    track(e);
    *event = e;
    return PLX_OK;
}

plx_status event_wait(plx_event event) {
    if (!event || event->magic != plx_event_s::kMagic)
        return fail(PLX_ERROR_INVALID_ARGUMENT, "native: event_wait: not a native event");
    if (event->status != PLX_OK)
        return fail(event->status, "native: event_wait: the event's command failed");
    return PLX_OK;
}

plx_status event_profile(plx_event event, uint64_t* start_ns, uint64_t* end_ns) {
    if (!event || event->magic != plx_event_s::kMagic)
        return fail(PLX_ERROR_INVALID_ARGUMENT, "native: event_profile: not a native event");
    if (!start_ns || !end_ns)
        return fail(PLX_ERROR_INVALID_ARGUMENT,
                    "native: event_profile: start_ns or end_ns is NULL");
    if (!event->profiled)
        return fail(PLX_ERROR_UNSUPPORTED,
                    "native: event_profile: the event's queue was not created with "
                    "PLX_QUEUE_PROFILING");
    *start_ns = event->start_ns;
    *end_ns = event->end_ns;
    return PLX_OK;
}

plx_status queue_marker(plx_queue queue, plx_event* event) {
    if (!valid_queue(queue))
        return fail(PLX_ERROR_INVALID_ARGUMENT, "native: queue_marker: not a native queue");
    if (!event) return fail(PLX_ERROR_INVALID_ARGUMENT, "native: queue_marker: event is NULL");
    // Every earlier command has finished, and one that failed reported it when it was called:
    // the marker is complete, and OK. A profiled marker takes no time.
    const uint64_t t = queue_profiles(queue) ? now_ns() : 0;
    return event_create("queue_marker", queue, PLX_OK, t, t, event);
}

plx_status queue_wait_event(plx_queue queue, plx_event event) {
    if (!valid_queue(queue))
        return fail(PLX_ERROR_INVALID_ARGUMENT, "native: queue_wait_event: not a native queue");
    if (!event || event->magic != plx_event_s::kMagic)
        return fail(PLX_ERROR_INVALID_ARGUMENT, "native: queue_wait_event: not a native event");
    // Events of this plugin are complete when they are made: nothing to wait for.
    return PLX_OK;
}

void event_release(plx_event event) {
    if (!event || event->magic != plx_event_s::kMagic) return;
    event->magic = 0;
    untrack(event);
    delete event;
}

} // namespace plx_native
