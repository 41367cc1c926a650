// Command queues (one in-order cl_command_queue per plx_queue) and events (a cl_event each,
// with profiling timestamps when the queue was made with PLX_QUEUE_PROFILING).
#include "plx_opencl.hpp"

#include <new>

namespace plx_ocl {

plx_status check_queue(plx_queue queue, const char* fn) {
    if (bad_handle(queue, Tag::queue))
        return fail(PLX_ERROR_INVALID_ARGUMENT,
                    strf("%s: not a live queue of the opencl plugin", fn));
    return PLX_OK;
}

plx_status queue_create(plx_device device, uint32_t flags, plx_queue* queue) {
    if (bad_handle(device, Tag::device))
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
    if (q == nullptr || err != CL_SUCCESS) return fail_create("clCreateCommandQueue", err, device->info.name);
    auto* out = new (std::nothrow) plx_queue_s;
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
    if (bad_handle(queue, Tag::queue)) return;
    cl().clFinish(queue->queue);
    cl().clReleaseCommandQueue(queue->queue);
    queue->tag = Tag::none;
    delete queue;
}

plx_status event_wrap(cl_event event, bool profiling, plx_event* out) {
    auto* e = new (std::nothrow) plx_event_s;
    if (e == nullptr) {
        cl().clReleaseEvent(event);
        return fail(PLX_ERROR_OUT_OF_MEMORY, "out of host memory for an event");
    }
    e->event = event;
    e->profiling = profiling;
    *out = e;
    return PLX_OK;
}

plx_status event_wait(plx_event event) {
    if (bad_handle(event, Tag::event))
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
    if (bad_handle(event, Tag::event))
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
    if (bad_handle(event, Tag::event)) return;
    cl().clReleaseEvent(event->event);
    event->tag = Tag::none;
    delete event;
}

} // namespace plx_ocl
