// Kernel launch: checks the launch against the device's and the kernel's limits, sets the
// arguments and enqueues the NDRange with whole work-groups.
//
// Argument conventions, for the code generator:
// - PLX_ARG_BUFFER binds the buffer's cl_mem to a `__global T*` parameter.
// - PLX_ARG_SCALAR passes `size` bytes as the parameter's value, exactly as clSetKernelArg
//   wants them: the host's (little-endian) layout of the OpenCL C type, of that type's size
//   (int/uint/float 4, long/ulong/double 8; OpenCL C has no bool or size_t kernel parameters).
// - Dynamic local memory: when dims->dynamic_local_bytes > 0 the plugin appends ONE more
//   argument after the given ones, a `__local` buffer of that many bytes. A generated kernel
//   that uses dynamic local memory therefore declares a trailing `__local uchar*
//   plx_dynamic_local` parameter and the host does not pass it.
#include "opencl_plugin.hpp"

namespace plx_opencl {
namespace {

plx_status map_launch_error(const plx_kernel_s& k, const char* call, cl_int err) {
    const std::string context = strf("kernel '%s'", k.name.c_str());
    switch (err) {
    case CL_INVALID_WORK_GROUP_SIZE:
    case CL_INVALID_WORK_ITEM_SIZE:
    case CL_OUT_OF_RESOURCES: return fail_cl(PLX_ERROR_OUT_OF_RESOURCES, call, err, context);
    case CL_MEM_OBJECT_ALLOCATION_FAILURE:
    case CL_OUT_OF_HOST_MEMORY: return fail_cl(PLX_ERROR_OUT_OF_MEMORY, call, err, context);
    case CL_INVALID_KERNEL_ARGS:
    case CL_INVALID_ARG_SIZE:
    case CL_INVALID_ARG_VALUE:
    case CL_INVALID_MEM_OBJECT:
    case CL_INVALID_GLOBAL_WORK_SIZE:
        return fail_cl(PLX_ERROR_INVALID_ARGUMENT, call, err, context);
    default: return fail_cl(PLX_ERROR_LAUNCH, call, err, context);
    }
}

// Every limit a launch can exceed, checked before touching the kernel so that the message names
// the limit instead of a bare CL_INVALID_WORK_GROUP_SIZE.
plx_status check_dims(const plx_queue_s& q, const plx_kernel_s& k, const plx_launch_dims& dims,
                      size_t global[3], size_t local[3], bool* empty) {
    const plx_device_s& dev = *q.device;
    if (dims.dims < 1 || dims.dims > 3)
        return fail(
            PLX_ERROR_INVALID_ARGUMENT,
            strf("launch of '%s': dims is %u, expected 1, 2 or 3", k.name.c_str(), dims.dims));
    uint64_t group = 1;
    *empty = false;
    for (uint32_t d = 0; d < dims.dims; ++d) {
        if (dims.local_size[d] == 0)
            return fail(PLX_ERROR_INVALID_ARGUMENT,
                        strf("launch of '%s': local_size[%u] is 0", k.name.c_str(), d));
        if (dims.local_size[d] > dev.max_item_sizes[d])
            return fail(PLX_ERROR_OUT_OF_RESOURCES,
                        strf("launch of '%s': local_size[%u] = %u exceeds the device's limit of "
                             "%zu work-items in that dimension (CL_DEVICE_MAX_WORK_ITEM_SIZES)",
                             k.name.c_str(), d, dims.local_size[d], dev.max_item_sizes[d]));
        group *= dims.local_size[d];
        if (dims.global_size[d] == 0) *empty = true;
        // Whole groups, as plugin.h says; OpenCL 1.2 also demands global % local == 0.
        const uint64_t groups = (dims.global_size[d] + dims.local_size[d] - 1) / dims.local_size[d];
        if (dims.global_size[d] > SIZE_MAX - dims.local_size[d] ||
            groups > SIZE_MAX / dims.local_size[d])
            return fail(PLX_ERROR_OUT_OF_RESOURCES,
                        strf("launch of '%s': global_size[%u] = %llu is too large", k.name.c_str(),
                             d, static_cast<unsigned long long>(dims.global_size[d])));
        global[d] = static_cast<size_t>(groups * dims.local_size[d]);
        local[d] = dims.local_size[d];
    }
    if (group > dev.info.max_work_group_size)
        return fail(PLX_ERROR_OUT_OF_RESOURCES,
                    strf("launch of '%s': a work-group of %llu work-items exceeds the device's "
                         "limit of %u (CL_DEVICE_MAX_WORK_GROUP_SIZE)",
                         k.name.c_str(), static_cast<unsigned long long>(group),
                         dev.info.max_work_group_size));
    if (k.max_work_group_size != 0 && group > k.max_work_group_size)
        return fail(PLX_ERROR_OUT_OF_RESOURCES,
                    strf("launch of '%s': a work-group of %llu work-items exceeds this kernel's "
                         "limit of %zu on the device (CL_KERNEL_WORK_GROUP_SIZE)",
                         k.name.c_str(), static_cast<unsigned long long>(group),
                         k.max_work_group_size));
    const uint64_t local_bytes = k.static_local_bytes + dims.dynamic_local_bytes;
    if (local_bytes > dev.info.local_memory_bytes)
        return fail(PLX_ERROR_OUT_OF_RESOURCES,
                    strf("launch of '%s': %llu bytes of local memory (%llu static + %u dynamic) "
                         "exceed the device's %llu bytes (CL_DEVICE_LOCAL_MEM_SIZE)",
                         k.name.c_str(), static_cast<unsigned long long>(local_bytes),
                         static_cast<unsigned long long>(k.static_local_bytes),
                         dims.dynamic_local_bytes,
                         static_cast<unsigned long long>(dev.info.local_memory_bytes)));
    return PLX_OK;
}

// Sets every argument; the caller holds the kernel's launch_mutex.
plx_status set_args(const plx_queue_s& q, plx_kernel_s& k, const plx_arg* args, uint32_t num_args,
                    uint32_t dynamic_local_bytes) {
    const cl_uint expected = num_args + (dynamic_local_bytes > 0 ? 1 : 0);
    if (expected != k.num_args) {
        return fail(
            PLX_ERROR_INVALID_ARGUMENT,
            strf("launch of '%s': the kernel takes %u argument(s), %u given%s", k.name.c_str(),
                 k.num_args, num_args,
                 dynamic_local_bytes > 0
                     ? " plus the trailing __local one for dynamic_local_bytes"
                     : (k.num_args == num_args + 1
                            ? " (a trailing __local parameter needs dynamic_local_bytes > 0)"
                            : "")));
    }
    // The caller's plx_arg may be a later, larger version: step by its struct_size.
    const auto* base = reinterpret_cast<const unsigned char*>(args);
    const size_t stride = num_args > 0 ? args[0].struct_size : 0;
    if (num_args > 0 && stride < sizeof(plx_arg))
        return fail(PLX_ERROR_INVALID_ARGUMENT,
                    strf("launch of '%s': args[0].struct_size is %zu, expected at least %zu",
                         k.name.c_str(), stride, sizeof(plx_arg)));
    for (uint32_t i = 0; i < num_args; ++i) {
        const auto& arg = *reinterpret_cast<const plx_arg*>(base + i * stride);
        cl_int err = CL_SUCCESS;
        if (arg.struct_size != stride)
            return fail(PLX_ERROR_INVALID_ARGUMENT,
                        strf("launch of '%s': args[%u].struct_size is %u, args[0]'s is %zu",
                             k.name.c_str(), i, arg.struct_size, stride));
        if (arg.kind == PLX_ARG_BUFFER) {
            if (!live(arg.buffer))
                return fail(PLX_ERROR_INVALID_ARGUMENT,
                            strf("launch of '%s': argument %u is not a live buffer of the opencl "
                                 "plugin",
                                 k.name.c_str(), i));
            if (arg.buffer->device != q.device)
                return fail(PLX_ERROR_INVALID_ARGUMENT,
                            strf("launch of '%s': buffer argument %u lives on device '%s', the "
                                 "queue on '%s'",
                                 k.name.c_str(), i, arg.buffer->device->info.name,
                                 q.device->info.name));
            err = cl().clSetKernelArg(k.kernel, i, sizeof(cl_mem), &arg.buffer->mem);
        } else if (arg.kind == PLX_ARG_SCALAR) {
            if (arg.value == nullptr || arg.size == 0)
                return fail(
                    PLX_ERROR_INVALID_ARGUMENT,
                    strf("launch of '%s': scalar argument %u has no value", k.name.c_str(), i));
            err = cl().clSetKernelArg(k.kernel, i, arg.size, arg.value);
        } else {
            return fail(PLX_ERROR_INVALID_ARGUMENT,
                        strf("launch of '%s': argument %u has kind %d, expected PLX_ARG_BUFFER or "
                             "PLX_ARG_SCALAR",
                             k.name.c_str(), i, static_cast<int>(arg.kind)));
        }
        if (err != CL_SUCCESS) {
            const char* kind = arg.kind == PLX_ARG_BUFFER ? "buffer" : "scalar";
            return fail_cl(PLX_ERROR_INVALID_ARGUMENT, "clSetKernelArg", err,
                           strf("kernel '%s', argument %u (%s of %zu bytes): the kernel's "
                                "parameter has another kind or size",
                                k.name.c_str(), i, kind,
                                arg.kind == PLX_ARG_BUFFER ? sizeof(cl_mem) : arg.size));
        }
    }
    if (dynamic_local_bytes > 0) {
        const cl_int err = cl().clSetKernelArg(k.kernel, num_args, dynamic_local_bytes, nullptr);
        if (err != CL_SUCCESS)
            return fail_cl(PLX_ERROR_INVALID_ARGUMENT, "clSetKernelArg", err,
                           strf("kernel '%s', argument %u: the trailing parameter must be "
                                "`__local uchar* plx_dynamic_local`",
                                k.name.c_str(), num_args));
    }
    return PLX_OK;
}

} // namespace

plx_status launch(plx_queue queue, plx_kernel kernel, const plx_launch_dims* dims,
                  const plx_arg* args, uint32_t num_args, plx_event* event) {
    if (plx_status s = check_queue(queue, "launch"); s != PLX_OK) return s;
    if (!live(kernel))
        return fail(PLX_ERROR_INVALID_ARGUMENT, "launch: not a live kernel of the opencl plugin");
    if (kernel->module->device != queue->device)
        return fail(PLX_ERROR_INVALID_ARGUMENT,
                    strf("launch: kernel '%s' was built for device '%s', the queue is on '%s'",
                         kernel->name.c_str(), kernel->module->device->info.name,
                         queue->device->info.name));
    if (dims == nullptr || dims->struct_size < sizeof(plx_launch_dims))
        return fail(PLX_ERROR_INVALID_ARGUMENT,
                    strf("launch of '%s': dims is NULL or its struct_size is below %zu",
                         kernel->name.c_str(), sizeof(plx_launch_dims)));
    if (num_args > 0 && args == nullptr)
        return fail(
            PLX_ERROR_INVALID_ARGUMENT,
            strf("launch of '%s': args is NULL with num_args %u", kernel->name.c_str(), num_args));
    size_t global[3] = {1, 1, 1};
    size_t local[3] = {1, 1, 1};
    bool empty = false;
    if (plx_status s = check_dims(*queue, *kernel, *dims, global, local, &empty); s != PLX_OK)
        return s;

    cl_event ev = nullptr;
    cl_event* want = event != nullptr ? &ev : nullptr;
    {
        std::lock_guard<std::mutex> lock(kernel->launch_mutex);
        if (plx_status s = set_args(*queue, *kernel, args, num_args, dims->dynamic_local_bytes);
            s != PLX_OK)
            return s;
        cl_int err = CL_SUCCESS;
        if (empty) {
            // Nothing to run, but the event must still complete in queue order.
            if (want != nullptr)
                err = cl().clEnqueueMarkerWithWaitList(queue->queue, 0, nullptr, want);
            if (err != CL_SUCCESS)
                return map_launch_error(*kernel, "clEnqueueMarkerWithWaitList", err);
        } else {
            err = cl().clEnqueueNDRangeKernel(queue->queue, kernel->kernel, dims->dims, nullptr,
                                              global, local, 0, nullptr, want);
            if (err != CL_SUCCESS) return map_launch_error(*kernel, "clEnqueueNDRangeKernel", err);
        }
    }
    // Start the work now rather than at the next blocking call.
    cl().clFlush(queue->queue);
    if (event != nullptr) return event_wrap(ev, *queue, event);
    return PLX_OK;
}

} // namespace plx_opencl
