// Queues and events of the CUDA backend: one non-blocking CUstream per queue; an event is a
// CUevent pair whose times are measured from a base event recorded when the queue was made.
#include "cuda_plugin.hpp"

#include <cmath>

BaseEvent::~BaseEvent() {
    if (event != nullptr) plx_cuda::drv().cuEventDestroy(event);
}

namespace plx_cuda {

namespace {

// Drops one reference to a queue's launch event (the queue's own, or a launch's).
void release_launch_event(LaunchEvent* l) {
    if (l->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete l;
}

void destroy_queue_resources(plx_queue q) {
    for (int s = 0; s < 2; ++s) {
        if (q->staging[s] != nullptr) drv().cuMemFreeHost(q->staging[s]);
        if (q->staging_done[s] != nullptr) drv().cuEventDestroy(q->staging_done[s]);
    }
    q->base.reset();
    if (q->launch_event != nullptr) {
        {
            std::lock_guard lock(q->launch_event->mutex);
            q->launch_event->stream = nullptr;
        }
        release_launch_event(q->launch_event);
    }
    if (q->stream != nullptr) drv().cuStreamDestroy(q->stream);
    delete q;
}

CUevent take_pooled_event(plx_device_s* device) {
    std::lock_guard lock(device->event_pool_mutex);
    if (device->event_pool.empty()) return nullptr;
    CUevent e = device->event_pool.back();
    device->event_pool.pop_back();
    return e;
}

void return_pooled_event(plx_device_s* device, CUevent e) {
    std::lock_guard lock(device->event_pool_mutex);
    device->event_pool.push_back(e);
}

// A timing-disabled CUevent of the device's context (whose context is current), pooled.
plx_status pooled_event(plx_device_s* device, const char* what, CUevent* e) {
    *e = take_pooled_event(device);
    if (*e == nullptr) PLX_CU_TRY(what, cuEventCreate, e, CU_EVENT_DISABLE_TIMING);
    return PLX_OK;
}

uint64_t ms_to_ns(float ms) {
    return ms <= 0.0f ? 0 : static_cast<uint64_t>(std::llround(static_cast<double>(ms) * 1e6));
}

} // namespace

plx_status queue_create(plx_device device, uint32_t flags, plx_queue* queue) {
    if (device == nullptr || queue == nullptr)
        return fail(PLX_ERROR_INVALID_ARGUMENT, "cuda: queue_create: device or queue is NULL");
    if ((flags & ~PLX_QUEUE_PROFILING) != 0)
        return fail(PLX_ERROR_INVALID_ARGUMENT, "cuda: queue_create: unknown flag bits " +
                                                    std::to_string(flags & ~PLX_QUEUE_PROFILING) +
                                                    " (only PLX_QUEUE_PROFILING is defined)");
    if (plx_status s = make_current(device); s != PLX_OK) return s;
    auto* q = new plx_queue_s;
    q->device = device;
    q->profiling = (flags & PLX_QUEUE_PROFILING) != 0;
    // Non-blocking: the legacy default stream, which other libraries may use, never
    // serializes against plexus work.
    CUresult r = drv().cuStreamCreate(&q->stream, CU_STREAM_NON_BLOCKING);
    if (r != CUDA_SUCCESS) {
        q->stream = nullptr;
        destroy_queue_resources(q);
        return cu_error(status_of(r), "queue_create", PLX_CUDA_NAME(cuStreamCreate), r);
    }
    if (!q->profiling) {
        q->launch_event = new LaunchEvent;
        q->launch_event->event.device = device;
        q->launch_event->event.deferred = q->launch_event;
        q->launch_event->stream = q->stream;
    } else {
        q->base = std::make_shared<BaseEvent>();
        r = drv().cuEventCreate(&q->base->event, CU_EVENT_DEFAULT);
        if (r == CUDA_SUCCESS) r = drv().cuEventRecord(q->base->event, q->stream);
        if (r != CUDA_SUCCESS) {
            destroy_queue_resources(q);
            return cu_error(status_of(r), "queue_create: recording the base event",
                            PLX_CUDA_NAME(cuEventRecord), r);
        }
    }
    *queue = q;
    return PLX_OK;
}

plx_status queue_sync(plx_queue queue) {
    if (queue == nullptr)
        return fail(PLX_ERROR_INVALID_ARGUMENT, "cuda: queue_sync: queue is NULL");
    if (plx_status s = make_current(queue->device); s != PLX_OK) return s;
    PLX_CU_TRY("queue_sync", cuStreamSynchronize, queue->stream);
    return PLX_OK;
}

void queue_destroy(plx_queue queue) {
    if (queue == nullptr) return;
    if (make_current(queue->device) == PLX_OK) drv().cuStreamSynchronize(queue->stream);
    destroy_queue_resources(queue);
}

plx_status event_begin(plx_queue queue, plx_event* event, plx_event_s** pending) {
    *pending = nullptr;
    if (event == nullptr || !queue->profiling) return PLX_OK;
    auto* e = new plx_event_s;
    e->device = queue->device;
    e->base = queue->base;
    CUresult r = drv().cuEventCreate(&e->start, CU_EVENT_DEFAULT);
    if (r == CUDA_SUCCESS) r = drv().cuEventRecord(e->start, queue->stream);
    if (r != CUDA_SUCCESS) {
        event_release(e);
        return cu_error(status_of(r), "recording a start event", PLX_CUDA_NAME(cuEventRecord), r);
    }
    *pending = e;
    return PLX_OK;
}

plx_status event_end(plx_queue queue, plx_event_s* pending, plx_event* event) {
    if (event == nullptr) return PLX_OK;
    if (!queue->profiling) {
        // Recorded by event_wait, if anyone waits.
        queue->launch_event->refs.fetch_add(1, std::memory_order_relaxed);
        *event = &queue->launch_event->event;
        return PLX_OK;
    }
    CUresult r = drv().cuEventCreate(&pending->end, CU_EVENT_DEFAULT);
    if (r == CUDA_SUCCESS) r = drv().cuEventRecord(pending->end, queue->stream);
    if (r != CUDA_SUCCESS) {
        event_release(pending);
        return cu_error(status_of(r), "recording an end event", PLX_CUDA_NAME(cuEventRecord), r);
    }
    *event = pending;
    return PLX_OK;
}

plx_status event_wait(plx_event event) {
    if (event == nullptr)
        return fail(PLX_ERROR_INVALID_ARGUMENT, "cuda: event_wait: event is NULL");
    if (plx_status s = make_current(event->device); s != PLX_OK) return s;
    if (event->deferred) {
        // A marker recorded now follows the launch on its in-order stream; it may wait for
        // later work too. Pooled markers: creating a CUevent per wait would cost more.
        CUevent marker = nullptr;
        if (plx_status s = pooled_event(event->device, "event_wait: creating a marker", &marker);
            s != PLX_OK)
            return s;
        CUresult r = CUDA_SUCCESS;
        const char* call = PLX_CUDA_NAME(cuEventRecord);
        {
            std::lock_guard lock(event->deferred->mutex);
            // No stream: the queue was destroyed after its work finished.
            if (event->deferred->stream != nullptr)
                r = drv().cuEventRecord(marker, event->deferred->stream);
        }
        if (r == CUDA_SUCCESS) {
            call = PLX_CUDA_NAME(cuEventSynchronize);
            r = drv().cuEventSynchronize(marker);
        }
        return_pooled_event(event->device, marker);
        if (r != CUDA_SUCCESS) return cu_error(status_of(r), "event_wait", call, r);
        return PLX_OK;
    }
    PLX_CU_TRY("event_wait", cuEventSynchronize, event->end);
    return PLX_OK;
}

plx_status event_profile(plx_event event, uint64_t* start_ns, uint64_t* end_ns) {
    if (event == nullptr || start_ns == nullptr || end_ns == nullptr)
        return fail(PLX_ERROR_INVALID_ARGUMENT, "cuda: event_profile: an argument is NULL");
    if (event->end == nullptr || event->base == nullptr)
        return fail(
            PLX_ERROR_UNSUPPORTED,
            "cuda: event_profile: the event's queue was not created with PLX_QUEUE_PROFILING");
    if (drv().cuEventElapsedTime == nullptr)
        return fail(PLX_ERROR_UNSUPPORTED,
                    "cuda: event_profile: the driver has no cuEventElapsedTime");
    if (plx_status s = make_current(event->device); s != PLX_OK) return s;
    PLX_CU_TRY("event_profile: waiting for the command", cuEventSynchronize, event->end);
    float from_base = 0.0f, duration = 0.0f;
    if (event->start == nullptr) { // a queue_marker event: one instant, start == end
        PLX_CU_TRY("event_profile", cuEventElapsedTime, &from_base, event->base->event, event->end);
        *start_ns = *end_ns = ms_to_ns(from_base);
        return PLX_OK;
    }
    PLX_CU_TRY("event_profile", cuEventElapsedTime, &from_base, event->base->event, event->start);
    PLX_CU_TRY("event_profile", cuEventElapsedTime, &duration, event->start, event->end);
    // Two differences rather than base->end: a float of milliseconds since queue creation
    // loses precision as the queue ages, while the command's own duration stays exact.
    *start_ns = ms_to_ns(from_base);
    *end_ns = *start_ns + ms_to_ns(duration);
    return PLX_OK;
}

void event_release(plx_event event) {
    if (event == nullptr) return;
    if (event->deferred) { // no CUevent of its own
        release_launch_event(event->deferred);
        return;
    }
    if (event->pooled) { // a queue_marker event of a non-profiling queue
        return_pooled_event(event->device, event->end);
        delete event;
        return;
    }
    // The events belong to the device's context; the releasing thread may have none current.
    make_current(event->device);
    if (event->start != nullptr) drv().cuEventDestroy(event->start);
    if (event->end != nullptr) drv().cuEventDestroy(event->end);
    delete event;
}

// ---- ABI 1.1 ------------------------------------------------------------------------------

plx_status queue_marker(plx_queue queue, plx_event* event) {
    if (queue == nullptr || event == nullptr)
        return fail(PLX_ERROR_INVALID_ARGUMENT, "cuda: queue_marker: queue or event is NULL");
    if (plx_status s = make_current(queue->device); s != PLX_OK) return s;
    auto* e = new plx_event_s;
    e->device = queue->device;
    // Recorded now, not deferred: it must not cover commands enqueued after this call. On a
    // profiling queue the event keeps timing, so event_profile gives the marker's instant.
    CUresult r = CUDA_SUCCESS;
    if (queue->profiling) {
        e->base = queue->base;
        r = drv().cuEventCreate(&e->end, CU_EVENT_DEFAULT);
        if (r != CUDA_SUCCESS) {
            e->end = nullptr;
            event_release(e);
            return cu_error(status_of(r), "queue_marker", PLX_CUDA_NAME(cuEventCreate), r);
        }
    } else {
        if (plx_status s = pooled_event(queue->device, "queue_marker", &e->end); s != PLX_OK) {
            delete e;
            return s;
        }
        e->pooled = true;
    }
    r = drv().cuEventRecord(e->end, queue->stream);
    if (r != CUDA_SUCCESS) {
        event_release(e);
        return cu_error(status_of(r), "queue_marker", PLX_CUDA_NAME(cuEventRecord), r);
    }
    *event = e;
    return PLX_OK;
}

plx_status queue_wait_event(plx_queue queue, plx_event event) {
    if (queue == nullptr || event == nullptr)
        return fail(PLX_ERROR_INVALID_ARGUMENT, "cuda: queue_wait_event: queue or event is NULL");
    PLX_CU_NEED("queue_wait_event", cuStreamWaitEvent);
    if (event->deferred) {
        // A launch event of a non-profiling queue: record a marker on its stream now. It
        // follows the launch (and perhaps later work, which only makes the wait longer). The
        // marker belongs to the event's device, which may not be the queue's.
        if (plx_status s = make_current(event->device); s != PLX_OK) return s;
        CUevent marker = nullptr;
        if (plx_status s =
                pooled_event(event->device, "queue_wait_event: creating a marker", &marker);
            s != PLX_OK)
            return s;
        bool recorded = false;
        CUresult r = CUDA_SUCCESS;
        {
            std::lock_guard lock(event->deferred->mutex);
            // No stream: the queue was destroyed after its work finished; nothing to wait for.
            if (event->deferred->stream != nullptr) {
                r = drv().cuEventRecord(marker, event->deferred->stream);
                recorded = r == CUDA_SUCCESS;
            }
        }
        if (r != CUDA_SUCCESS) {
            return_pooled_event(event->device, marker);
            return cu_error(status_of(r), "queue_wait_event: recording a marker",
                            PLX_CUDA_NAME(cuEventRecord), r);
        }
        if (recorded) {
            plx_status s = make_current(queue->device);
            if (s == PLX_OK) {
                r = drv().cuStreamWaitEvent(queue->stream, marker, 0);
                if (r != CUDA_SUCCESS)
                    s = cu_error(status_of(r), "queue_wait_event", PLX_CUDA_NAME(cuStreamWaitEvent),
                                 r);
            }
            // The wait is enqueued with the record it saw; the marker may be recorded again.
            return_pooled_event(event->device, marker);
            return s;
        }
        return_pooled_event(event->device, marker);
        return PLX_OK;
    }
    if (event->end == nullptr)
        return fail(PLX_ERROR_INTERNAL,
                    "cuda: queue_wait_event: the event has neither a CUevent nor a stream");
    // A recorded CUevent (a marker, or a launch of a profiling queue); cross-device waits are
    // fine for cuStreamWaitEvent.
    if (plx_status s = make_current(queue->device); s != PLX_OK) return s;
    PLX_CU_TRY("queue_wait_event", cuStreamWaitEvent, queue->stream, event->end, 0);
    return PLX_OK;
}

plx_status queue_native(plx_queue queue, uint64_t* native) {
    if (queue == nullptr || native == nullptr)
        return fail(PLX_ERROR_INVALID_ARGUMENT, "cuda: queue_native: queue or native is NULL");
    *native = reinterpret_cast<uint64_t>(queue->stream);
    return PLX_OK;
}

} // namespace plx_cuda
