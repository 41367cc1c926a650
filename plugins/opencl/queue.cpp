// Command queues (one in-order cl_command_queue per plx_queue) and events (a cl_event each,
// with profiling timestamps when the queue was made with PLX_QUEUE_PROFILING); markers and
// waits between queues, of one device or of two.
#include "opencl_plugin.hpp"

#include <new>

namespace plx_opencl {

plx_status check_queue(plx_queue queue, const char* fn) {
    if (!live(queue))
        return fail(PLX_ERROR_INVALID_ARGUMENT,
                    strf("%s: not a live queue of the opencl plugin", fn));
    return PLX_OK;
}

plx_status queue_create(plx_device device, uint32_t flags, plx_queue* queue) {
    if (!live(device))
        return fail(PLX_ERROR_INVALID_ARGUMENT, "queue_create: not a device of the opencl plugin");
    if (queue == nullptr) return fail(PLX_ERROR_INVALID_ARGUMENT, "queue_create: queue is NULL");
    if ((flags & ~PLX_QUEUE_PROFILING) != 0)
        return fail(PLX_ERROR_INVALID_ARGUMENT,
                    strf("queue_create: unknown flags 0x%x", flags & ~PLX_QUEUE_PROFILING));
    const bool profiling = (flags & PLX_QUEUE_PROFILING) != 0;
    if (plx_status s = ensure_context(*device); s != PLX_OK) return s;
    cl_int err = CL_SUCCESS;
    cl_command_queue q = cl().clCreateCommandQueue(device->context, device->id,
                                                   profiling ? CL_QUEUE_PROFILING_ENABLE : 0, &err);
    if (q == nullptr || err != CL_SUCCESS)
        return fail_create("clCreateCommandQueue", err, device->info.name);
    auto* out = plx_support::make_live<plx_queue_s>();
    if (out == nullptr) {
        cl().clReleaseCommandQueue(q);
        return fail(PLX_ERROR_OUT_OF_MEMORY, "queue_create: out of host memory");
    }
    out->device = device;
    out->queue = q;
    out->profiling = profiling;
    *queue = out;
    return PLX_OK;
}

plx_status queue_sync(plx_queue queue) {
    if (plx_status s = check_queue(queue, "queue_sync"); s != PLX_OK) return s;
    const cl_int err = cl().clFinish(queue->queue);
    if (err != CL_SUCCESS)
        return fail_cl(err == CL_OUT_OF_RESOURCES ? PLX_ERROR_LAUNCH : PLX_ERROR_DEVICE, "clFinish",
                       err, strf("device '%s'", queue->device->info.name));
    return PLX_OK;
}

void queue_destroy(plx_queue queue) {
    if (!live(queue)) return;
    plx_support::untrack(queue);
    cl().clFinish(queue->queue);
    cl().clReleaseCommandQueue(queue->queue);
    delete queue;
}

plx_status event_wrap(cl_event event, const plx_queue_s& queue, plx_event* out) {
    auto* e = plx_support::make_live<plx_event_s>();
    if (e == nullptr) {
        cl().clReleaseEvent(event);
        return fail(PLX_ERROR_OUT_OF_MEMORY, "out of host memory for an event");
    }
    e->event = event;
    e->profiling = queue.profiling;
    e->device = queue.device;
    *out = e;
    return PLX_OK;
}

plx_status queue_marker(plx_queue queue, plx_event* event) {
    if (plx_status s = check_queue(queue, "queue_marker"); s != PLX_OK) return s;
    if (event == nullptr) return fail(PLX_ERROR_INVALID_ARGUMENT, "queue_marker: event is NULL");
    // With an empty wait list the marker waits for every command enqueued before it.
    cl_event ev = nullptr;
    const cl_int err = cl().clEnqueueMarkerWithWaitList(queue->queue, 0, nullptr, &ev);
    if (err != CL_SUCCESS)
        return fail_cl(err == CL_OUT_OF_HOST_MEMORY ? PLX_ERROR_OUT_OF_MEMORY : PLX_ERROR_DEVICE,
                       "clEnqueueMarkerWithWaitList", err,
                       strf("queue_marker on device '%s'", queue->device->info.name));
    // Another queue may wait for this event (queue_wait_event): the marker, and what it
    // waits for, must reach the device rather than sit in this queue's host-side batch.
    cl().clFlush(queue->queue);
    return event_wrap(ev, *queue, event);
}

// OpenCL takes wait lists only of events of the queue's own context, and each device of this
// plugin has its own context. Two cases:
// - the event is of the queue's context (any queue of the same device, markers and launch
//   events alike): a barrier with the event in its wait list; the host does not block;
// - the event is of another device's context: OpenCL cannot express the dependency, so this
//   call BLOCKS THE HOST in clWaitForEvents until the event has completed, then returns;
//   everything enqueued on the queue afterwards therefore starts after it. A failure of the
//   event's command is reported here (PLX_ERROR_LAUNCH), since the waiting queue must not go
//   on with data that was never produced.
plx_status queue_wait_event(plx_queue queue, plx_event event) {
    if (plx_status s = check_queue(queue, "queue_wait_event"); s != PLX_OK) return s;
    if (!live(event))
        return fail(PLX_ERROR_INVALID_ARGUMENT,
                    "queue_wait_event: not a live event of the opencl plugin");
    const plx_device_s& dev = *queue->device;
    if (event->device != nullptr && event->device->context == dev.context) {
        const cl_int err =
            cl().clEnqueueBarrierWithWaitList(queue->queue, 1, &event->event, nullptr);
        if (err != CL_SUCCESS)
            return fail_cl(err == CL_OUT_OF_HOST_MEMORY ? PLX_ERROR_OUT_OF_MEMORY
                                                        : PLX_ERROR_DEVICE,
                           "clEnqueueBarrierWithWaitList", err,
                           strf("queue_wait_event on device '%s'", dev.info.name));
        return PLX_OK;
    }
    const char* other = event->device != nullptr ? event->device->info.name : "?";
    const cl_int err = cl().clWaitForEvents(1, &event->event);
    cl_int exec = CL_COMPLETE;
    const cl_int info_err = cl().clGetEventInfo(event->event, CL_EVENT_COMMAND_EXECUTION_STATUS,
                                                sizeof exec, &exec, nullptr);
    if (info_err == CL_SUCCESS && exec < 0)
        return fail_cl(PLX_ERROR_LAUNCH, "command execution status", exec,
                       strf("queue_wait_event: the command of device '%s' that the queue of "
                            "device '%s' waits for failed",
                            other, dev.info.name));
    if (err != CL_SUCCESS)
        return fail_cl(PLX_ERROR_DEVICE, "clWaitForEvents", err,
                       strf("queue_wait_event: the queue of device '%s' waiting on the host for "
                            "an event of device '%s'",
                            dev.info.name, other));
    return PLX_OK;
}

plx_status queue_native(plx_queue queue, uint64_t* native) {
    if (plx_status s = check_queue(queue, "queue_native"); s != PLX_OK) return s;
    if (native == nullptr) return fail(PLX_ERROR_INVALID_ARGUMENT, "queue_native: native is NULL");
    *native = reinterpret_cast<uintptr_t>(queue->queue);
    return PLX_OK;
}

plx_status event_wait(plx_event event) {
    if (!live(event))
        return fail(PLX_ERROR_INVALID_ARGUMENT,
                    "event_wait: not a live event of the opencl plugin");
    cl_int err = cl().clWaitForEvents(1, &event->event);
    // A failed command shows as a negative execution status; clWaitForEvents then reports
    // CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST, which hides the cause.
    cl_int exec = CL_COMPLETE;
    const cl_int info_err = cl().clGetEventInfo(event->event, CL_EVENT_COMMAND_EXECUTION_STATUS,
                                                sizeof exec, &exec, nullptr);
    if (info_err == CL_SUCCESS && exec < 0)
        return fail_cl(PLX_ERROR_LAUNCH, "command execution status", exec,
                       "the command of this event failed");
    if (err != CL_SUCCESS) return fail_cl(PLX_ERROR_DEVICE, "clWaitForEvents", err, "");
    return PLX_OK;
}

plx_status event_profile(plx_event event, uint64_t* start_ns, uint64_t* end_ns) {
    if (!live(event))
        return fail(PLX_ERROR_INVALID_ARGUMENT,
                    "event_profile: not a live event of the opencl plugin");
    if (start_ns == nullptr || end_ns == nullptr)
        return fail(PLX_ERROR_INVALID_ARGUMENT, "event_profile: start_ns or end_ns is NULL");
    if (!event->profiling)
        return fail(PLX_ERROR_UNSUPPORTED, "event_profile: the event's queue was not created with "
                                           "PLX_QUEUE_PROFILING");
    // Timestamps exist only once the command is done.
    if (plx_status s = event_wait(event); s != PLX_OK) return s;
    cl_ulong start = 0;
    cl_ulong end = 0;
    cl_int err = cl().clGetEventProfilingInfo(event->event, CL_PROFILING_COMMAND_START,
                                              sizeof start, &start, nullptr);
    if (err == CL_SUCCESS)
        err = cl().clGetEventProfilingInfo(event->event, CL_PROFILING_COMMAND_END, sizeof end, &end,
                                           nullptr);
    if (err != CL_SUCCESS) return fail_cl(PLX_ERROR_DEVICE, "clGetEventProfilingInfo", err, "");
    *start_ns = start;
    *end_ns = end;
    return PLX_OK;
}

void event_release(plx_event event) {
    if (!live(event)) return;
    plx_support::untrack(event);
    cl().clReleaseEvent(event->event);
    delete event;
}

} // namespace plx_opencl
