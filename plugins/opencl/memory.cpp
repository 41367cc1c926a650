// Device buffers: allocation (with the device's limits checked first), bounds-checked read,
// write, copy and fill, each enqueued on the caller's in-order queue; non-blocking reads and
// writes, page-locked host memory (host_alloc), wrapped and native cl_mem handles.
#include "opencl_plugin.hpp"

#include <cstring>
#include <new>

namespace plx_opencl {
namespace {

plx_status map_memory_error(const char* call, cl_int err, const std::string& context) {
    switch (err) {
    case CL_MEM_OBJECT_ALLOCATION_FAILURE:
    case CL_OUT_OF_RESOURCES:
    case CL_OUT_OF_HOST_MEMORY: return fail_cl(PLX_ERROR_OUT_OF_MEMORY, call, err, context);
    default: return fail_cl(PLX_ERROR_DEVICE, call, err, context);
    }
}

// Checks the buffer handle, that it lives on the queue's device and that [offset, offset+bytes)
// lies inside it, without overflowing.
plx_status check_range(const char* fn, const char* which, plx_queue queue, plx_buffer buffer,
                       size_t offset, size_t bytes) {
    if (!live(buffer))
        return fail(PLX_ERROR_INVALID_ARGUMENT,
                    strf("%s: %s is not a live buffer of the opencl plugin", fn, which));
    if (buffer->device != queue->device)
        return fail(PLX_ERROR_INVALID_ARGUMENT,
                    strf("%s: %s belongs to device '%s', the queue to device '%s'", fn, which,
                         buffer->device->info.name, queue->device->info.name));
    if (offset > buffer->bytes || bytes > buffer->bytes - offset)
        return fail(PLX_ERROR_INVALID_ARGUMENT,
                    strf("%s: %s range [%zu, %zu + %zu) is outside the buffer of %zu bytes", fn,
                         which, offset, offset, bytes, buffer->bytes));
    return PLX_OK;
}

} // namespace

plx_status buffer_alloc(plx_device device, size_t bytes, plx_buffer* buffer) {
    if (!live(device))
        return fail(PLX_ERROR_INVALID_ARGUMENT, "buffer_alloc: not a device of the opencl plugin");
    if (buffer == nullptr) return fail(PLX_ERROR_INVALID_ARGUMENT, "buffer_alloc: buffer is NULL");
    if (bytes == 0) return fail(PLX_ERROR_INVALID_ARGUMENT, "buffer_alloc: bytes is 0");
    // Drivers may accept an oversized request lazily and fail at first use; refuse it here.
    if (bytes > device->info.max_alloc_bytes)
        return fail(PLX_ERROR_OUT_OF_MEMORY,
                    strf("buffer_alloc: %zu bytes exceed the largest single allocation of device "
                         "'%s', %llu bytes (CL_DEVICE_MAX_MEM_ALLOC_SIZE)",
                         bytes, device->info.name,
                         static_cast<unsigned long long>(device->info.max_alloc_bytes)));
    if (plx_status s = ensure_context(*device); s != PLX_OK) return s;
    cl_int err = CL_SUCCESS;
    cl_mem mem = cl().clCreateBuffer(device->context, CL_MEM_READ_WRITE, bytes, nullptr, &err);
    if (mem == nullptr || err != CL_SUCCESS) {
        const std::string context = strf(
            "%zu bytes on device '%s' (global memory %llu bytes, max allocation %llu bytes)", bytes,
            device->info.name, static_cast<unsigned long long>(device->info.memory_bytes),
            static_cast<unsigned long long>(device->info.max_alloc_bytes));
        if (err == CL_INVALID_BUFFER_SIZE)
            return fail_cl(PLX_ERROR_OUT_OF_MEMORY, "clCreateBuffer", err, context);
        return map_memory_error("clCreateBuffer", err, context);
    }
    auto* b = plx_support::make_live<plx_buffer_s>();
    if (b == nullptr) {
        cl().clReleaseMemObject(mem);
        return fail(PLX_ERROR_OUT_OF_MEMORY, "buffer_alloc: out of host memory");
    }
    b->device = device;
    b->mem = mem;
    b->bytes = bytes;
    *buffer = b;
    return PLX_OK;
}

void buffer_free(plx_buffer buffer) {
    if (!live(buffer)) return;
    plx_support::untrack(buffer);
    cl().clReleaseMemObject(buffer->mem);
    delete buffer;
}

plx_status buffer_write(plx_queue queue, plx_buffer buffer, size_t offset, const void* src,
                        size_t bytes) {
    if (plx_status s = check_queue(queue, "buffer_write"); s != PLX_OK) return s;
    if (plx_status s = check_range("buffer_write", "buffer", queue, buffer, offset, bytes);
        s != PLX_OK)
        return s;
    if (bytes == 0) return PLX_OK;
    if (src == nullptr) return fail(PLX_ERROR_INVALID_ARGUMENT, "buffer_write: src is NULL");
    const cl_int err = cl().clEnqueueWriteBuffer(queue->queue, buffer->mem, CL_TRUE, offset, bytes,
                                                 src, 0, nullptr, nullptr);
    if (err != CL_SUCCESS)
        return map_memory_error("clEnqueueWriteBuffer", err,
                                strf("%zu bytes at offset %zu", bytes, offset));
    return PLX_OK;
}

plx_status buffer_read(plx_queue queue, plx_buffer buffer, size_t offset, void* dst, size_t bytes) {
    if (plx_status s = check_queue(queue, "buffer_read"); s != PLX_OK) return s;
    if (plx_status s = check_range("buffer_read", "buffer", queue, buffer, offset, bytes);
        s != PLX_OK)
        return s;
    if (bytes == 0) return PLX_OK;
    if (dst == nullptr) return fail(PLX_ERROR_INVALID_ARGUMENT, "buffer_read: dst is NULL");
    // Blocking on an in-order queue: earlier kernels and copies finish before the read.
    const cl_int err = cl().clEnqueueReadBuffer(queue->queue, buffer->mem, CL_TRUE, offset, bytes,
                                                dst, 0, nullptr, nullptr);
    if (err != CL_SUCCESS)
        return map_memory_error("clEnqueueReadBuffer", err,
                                strf("%zu bytes at offset %zu", bytes, offset));
    return PLX_OK;
}

plx_status buffer_copy(plx_queue queue, plx_buffer dst, size_t dst_offset, plx_buffer src,
                       size_t src_offset, size_t bytes) {
    if (plx_status s = check_queue(queue, "buffer_copy"); s != PLX_OK) return s;
    if (plx_status s = check_range("buffer_copy", "dst", queue, dst, dst_offset, bytes);
        s != PLX_OK)
        return s;
    if (plx_status s = check_range("buffer_copy", "src", queue, src, src_offset, bytes);
        s != PLX_OK)
        return s;
    if (bytes == 0) return PLX_OK;
    if (dst == src && dst_offset < src_offset + bytes && src_offset < dst_offset + bytes)
        return fail(PLX_ERROR_INVALID_ARGUMENT,
                    strf("buffer_copy: source [%zu, +%zu) and destination [%zu, +%zu) overlap in "
                         "the same buffer",
                         src_offset, bytes, dst_offset, bytes));
    const cl_int err = cl().clEnqueueCopyBuffer(queue->queue, src->mem, dst->mem, src_offset,
                                                dst_offset, bytes, 0, nullptr, nullptr);
    if (err != CL_SUCCESS)
        return map_memory_error("clEnqueueCopyBuffer", err, strf("%zu bytes", bytes));
    return PLX_OK;
}

plx_status buffer_fill(plx_queue queue, plx_buffer buffer, size_t offset, const void* pattern,
                       size_t pattern_bytes, size_t bytes) {
    if (plx_status s = check_queue(queue, "buffer_fill"); s != PLX_OK) return s;
    if (plx_status s = check_range("buffer_fill", "buffer", queue, buffer, offset, bytes);
        s != PLX_OK)
        return s;
    if (pattern == nullptr) return fail(PLX_ERROR_INVALID_ARGUMENT, "buffer_fill: pattern is NULL");
    if (plx_status s = plx_support::check_fill_pattern("buffer_fill: ", pattern_bytes, bytes);
        s != PLX_OK)
        return s;
    if (bytes == 0) return PLX_OK;
    if (offset % pattern_bytes != 0) {
        // clEnqueueFillBuffer wants an aligned offset, plugin.h does not: write the repeated
        // pattern instead. The write blocks, which keeps it ordered on the in-order queue.
        std::vector<unsigned char> data(bytes);
        for (size_t i = 0; i < bytes; i += pattern_bytes)
            std::memcpy(data.data() + i, pattern, pattern_bytes);
        return buffer_write(queue, buffer, offset, data.data(), bytes);
    }
    const cl_int err = cl().clEnqueueFillBuffer(queue->queue, buffer->mem, pattern, pattern_bytes,
                                                offset, bytes, 0, nullptr, nullptr);
    if (err != CL_SUCCESS)
        return map_memory_error("clEnqueueFillBuffer", err,
                                strf("%zu bytes at offset %zu", bytes, offset));
    return PLX_OK;
}

} // namespace plx_opencl

// ---- 1.1 -------------------------------------------------------------------------------------

namespace plx_opencl {

// Non-blocking: OpenCL reads `src` when the command runs, which is what plugin.h asks of the
// caller (src valid and unchanged until a later marker or queue_sync says the write is done).
plx_status buffer_write_async(plx_queue queue, plx_buffer buffer, size_t offset, const void* src,
                              size_t bytes) {
    if (plx_status s = check_queue(queue, "buffer_write_async"); s != PLX_OK) return s;
    if (plx_status s = check_range("buffer_write_async", "buffer", queue, buffer, offset, bytes);
        s != PLX_OK)
        return s;
    if (bytes == 0) return PLX_OK;
    if (src == nullptr) return fail(PLX_ERROR_INVALID_ARGUMENT, "buffer_write_async: src is NULL");
    const cl_int err = cl().clEnqueueWriteBuffer(queue->queue, buffer->mem, CL_FALSE, offset, bytes,
                                                 src, 0, nullptr, nullptr);
    if (err != CL_SUCCESS)
        return map_memory_error("clEnqueueWriteBuffer", err,
                                strf("buffer_write_async of %zu bytes at offset %zu, device '%s'",
                                     bytes, offset, queue->device->info.name));
    cl().clFlush(queue->queue); // start the transfer now, not at the next blocking call
    return PLX_OK;
}

plx_status buffer_read_async(plx_queue queue, plx_buffer buffer, size_t offset, void* dst,
                             size_t bytes) {
    if (plx_status s = check_queue(queue, "buffer_read_async"); s != PLX_OK) return s;
    if (plx_status s = check_range("buffer_read_async", "buffer", queue, buffer, offset, bytes);
        s != PLX_OK)
        return s;
    if (bytes == 0) return PLX_OK;
    if (dst == nullptr) return fail(PLX_ERROR_INVALID_ARGUMENT, "buffer_read_async: dst is NULL");
    const cl_int err = cl().clEnqueueReadBuffer(queue->queue, buffer->mem, CL_FALSE, offset, bytes,
                                                dst, 0, nullptr, nullptr);
    if (err != CL_SUCCESS)
        return map_memory_error("clEnqueueReadBuffer", err,
                                strf("buffer_read_async of %zu bytes at offset %zu, device '%s'",
                                     bytes, offset, queue->device->info.name));
    cl().clFlush(queue->queue);
    return PLX_OK;
}

// Every device has its own cl_context and a cl_mem cannot be used in another context, so no
// pair of devices of this plugin can copy directly: after checking the arguments this always
// answers PLX_ERROR_UNSUPPORTED, and the host stages the copy through host memory (which is
// what the plugin would do itself, with less knowledge of the host's ordering).
plx_status buffer_copy_peer(plx_queue queue, plx_buffer dst, size_t dst_offset, plx_buffer src,
                            size_t src_offset, size_t bytes) {
    if (plx_status s = check_queue(queue, "buffer_copy_peer"); s != PLX_OK) return s;
    if (!live(dst) || !live(src))
        return fail(PLX_ERROR_INVALID_ARGUMENT,
                    strf("buffer_copy_peer: %s is not a live buffer of the opencl plugin",
                         !live(dst) ? "dst" : "src"));
    if (dst->device == src->device)
        return fail(PLX_ERROR_INVALID_ARGUMENT,
                    strf("buffer_copy_peer: dst and src are both on device '%s'; use buffer_copy",
                         dst->device->info.name));
    if (queue->device != dst->device && queue->device != src->device)
        return fail(PLX_ERROR_INVALID_ARGUMENT,
                    strf("buffer_copy_peer: the queue is on device '%s', neither dst's ('%s') "
                         "nor src's ('%s')",
                         queue->device->info.name, dst->device->info.name, src->device->info.name));
    if (dst_offset > dst->bytes || bytes > dst->bytes - dst_offset || src_offset > src->bytes ||
        bytes > src->bytes - src_offset)
        return fail(PLX_ERROR_INVALID_ARGUMENT,
                    strf("buffer_copy_peer: %zu bytes from offset %zu of a %zu-byte src to offset "
                         "%zu of a %zu-byte dst go past a buffer's end",
                         bytes, src_offset, src->bytes, dst_offset, dst->bytes));
    return fail(PLX_ERROR_UNSUPPORTED,
                strf("buffer_copy_peer: devices '%s' and '%s' have separate OpenCL contexts and "
                     "a cl_mem cannot cross contexts: the host stages the copy through host "
                     "memory",
                     src->device->info.name, dst->device->info.name));
}

namespace {

// The device's internal queue for mapping host_alloc memory, made once; host_mutex held.
plx_status host_queue_locked(plx_device_s& dev, cl_command_queue* out) {
    if (dev.host_queue == nullptr) {
        cl_int err = CL_SUCCESS;
        cl_command_queue q = cl().clCreateCommandQueue(dev.context, dev.id, 0, &err);
        if (q == nullptr || err != CL_SUCCESS)
            return fail_create("clCreateCommandQueue (host_alloc's mapping queue)", err,
                               dev.info.name);
        dev.host_queue = q;
    }
    *out = dev.host_queue;
    return PLX_OK;
}

// Unmaps and releases one host_alloc allocation; false (with last_error) when a call failed.
bool host_unmap(plx_device_s& dev, cl_command_queue q, void* ptr, cl_mem mem) {
    cl_event ev = nullptr;
    cl_int err = cl().clEnqueueUnmapMemObject(q, mem, ptr, 0, nullptr, &ev);
    if (err == CL_SUCCESS) {
        err = cl().clWaitForEvents(1, &ev);
        cl().clReleaseEvent(ev);
        if (err != CL_SUCCESS)
            fail_cl(PLX_ERROR_DEVICE, "clWaitForEvents", err,
                    strf("host_free: unmapping %p on device '%s'", ptr, dev.info.name));
    } else {
        fail_cl(PLX_ERROR_DEVICE, "clEnqueueUnmapMemObject", err,
                strf("host_free: %p on device '%s'", ptr, dev.info.name));
    }
    cl().clReleaseMemObject(mem);
    return err == CL_SUCCESS;
}

} // namespace

// Page-locked memory the OpenCL way: a CL_MEM_ALLOC_HOST_PTR buffer of the device's context,
// mapped (blocking) on an internal queue of the device; the mapping is the host pointer and
// stays until host_free unmaps it. NVIDIA's driver pins such memory, PoCL gives plain memory.
plx_status host_alloc(plx_device device, size_t bytes, void** ptr) {
    if (!live(device))
        return fail(PLX_ERROR_INVALID_ARGUMENT, "host_alloc: not a device of the opencl plugin");
    if (ptr == nullptr) return fail(PLX_ERROR_INVALID_ARGUMENT, "host_alloc: ptr is NULL");
    *ptr = nullptr;
    if (bytes == 0) return fail(PLX_ERROR_INVALID_ARGUMENT, "host_alloc: bytes is 0");
    if (bytes > device->info.max_alloc_bytes)
        return fail(PLX_ERROR_OUT_OF_MEMORY,
                    strf("host_alloc: %zu bytes exceed the largest single allocation of device "
                         "'%s', %llu bytes (CL_DEVICE_MAX_MEM_ALLOC_SIZE)",
                         bytes, device->info.name,
                         static_cast<unsigned long long>(device->info.max_alloc_bytes)));
    if (plx_status s = ensure_context(*device); s != PLX_OK) return s;
    cl_command_queue q = nullptr;
    {
        std::lock_guard<std::mutex> lock(device->host_mutex);
        if (plx_status s = host_queue_locked(*device, &q); s != PLX_OK) return s;
    }
    cl_int err = CL_SUCCESS;
    cl_mem mem = cl().clCreateBuffer(device->context, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR,
                                     bytes, nullptr, &err);
    if (mem == nullptr || err != CL_SUCCESS)
        return map_memory_error("clCreateBuffer", err == CL_SUCCESS ? CL_OUT_OF_RESOURCES : err,
                                strf("host_alloc of %zu bytes (CL_MEM_ALLOC_HOST_PTR) on device "
                                     "'%s'",
                                     bytes, device->info.name));
    void* p = cl().clEnqueueMapBuffer(q, mem, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes, 0,
                                      nullptr, nullptr, &err);
    if (p == nullptr || err != CL_SUCCESS) {
        cl().clReleaseMemObject(mem);
        return map_memory_error(
            "clEnqueueMapBuffer", err == CL_SUCCESS ? CL_MAP_FAILURE : err,
            strf("host_alloc of %zu bytes on device '%s'", bytes, device->info.name));
    }
    try {
        std::lock_guard<std::mutex> lock(device->host_mutex);
        device->host_allocs.emplace(p, mem);
    } catch (const std::bad_alloc&) {
        host_unmap(*device, q, p, mem);
        return fail(PLX_ERROR_OUT_OF_MEMORY, "host_alloc: out of host memory");
    }
    *ptr = p;
    return PLX_OK;
}

void host_free(plx_device device, void* ptr) {
    if (!live(device) || ptr == nullptr) return;
    cl_mem mem = nullptr;
    cl_command_queue q = nullptr;
    {
        std::lock_guard<std::mutex> lock(device->host_mutex);
        auto it = device->host_allocs.find(ptr);
        if (it != device->host_allocs.end()) {
            mem = it->second;
            device->host_allocs.erase(it);
        }
        q = device->host_queue;
    }
    if (mem == nullptr) {
        log(PLX_LOG_WARN, strf("opencl: host_free: %p is not live memory of host_alloc on device "
                               "'%s'; ignored",
                               ptr, device->info.name));
        return;
    }
    if (!host_unmap(*device, q, ptr, mem))
        log(PLX_LOG_WARN, std::string("opencl: ") + plx_support::last_error_text());
}

void host_release_all(plx_device_s& dev) {
    std::lock_guard<std::mutex> lock(dev.host_mutex);
    for (auto& [ptr, mem] : dev.host_allocs)
        host_unmap(dev, dev.host_queue, ptr, mem);
    dev.host_allocs.clear();
    if (dev.host_queue != nullptr) cl().clReleaseCommandQueue(dev.host_queue);
    dev.host_queue = nullptr;
}

// A cl_mem the caller made in the device's context (the context is the one behind
// queue_native's cl_command_queue, CL_QUEUE_CONTEXT). The wrapper holds one reference
// (clRetainMemObject) that buffer_free releases; the caller's own reference is untouched.
plx_status buffer_wrap(plx_device device, uint64_t native, size_t bytes, plx_buffer* buffer) {
    if (!live(device))
        return fail(PLX_ERROR_INVALID_ARGUMENT, "buffer_wrap: not a device of the opencl plugin");
    if (buffer == nullptr) return fail(PLX_ERROR_INVALID_ARGUMENT, "buffer_wrap: buffer is NULL");
    if (native == 0)
        return fail(PLX_ERROR_INVALID_ARGUMENT, "buffer_wrap: native is 0, not a cl_mem");
    if (bytes == 0) return fail(PLX_ERROR_INVALID_ARGUMENT, "buffer_wrap: bytes is 0");
    if (plx_status s = ensure_context(*device); s != PLX_OK) return s;
    cl_mem mem = reinterpret_cast<cl_mem>(static_cast<uintptr_t>(native));
    cl_mem_object_type type = 0;
    cl_context context = nullptr;
    size_t size = 0;
    cl_int err = cl().clGetMemObjectInfo(mem, CL_MEM_TYPE, sizeof type, &type, nullptr);
    if (err == CL_SUCCESS)
        err = cl().clGetMemObjectInfo(mem, CL_MEM_CONTEXT, sizeof context, &context, nullptr);
    if (err == CL_SUCCESS)
        err = cl().clGetMemObjectInfo(mem, CL_MEM_SIZE, sizeof size, &size, nullptr);
    if (err != CL_SUCCESS)
        return fail_cl(PLX_ERROR_INVALID_ARGUMENT, "clGetMemObjectInfo", err,
                       strf("buffer_wrap: 0x%llx is not a usable cl_mem (device '%s')",
                            static_cast<unsigned long long>(native), device->info.name));
    if (type != CL_MEM_OBJECT_BUFFER)
        return fail(PLX_ERROR_INVALID_ARGUMENT,
                    strf("buffer_wrap: the cl_mem is not a buffer (CL_MEM_TYPE 0x%x), device '%s'",
                         static_cast<unsigned>(type), device->info.name));
    if (context != device->context)
        return fail(PLX_ERROR_INVALID_ARGUMENT,
                    strf("buffer_wrap: the cl_mem's CL_MEM_CONTEXT is not the cl_context of "
                         "device '%s'; create it in the context of a queue of the device "
                         "(queue_native, then CL_QUEUE_CONTEXT)",
                         device->info.name));
    if (size < bytes)
        return fail(PLX_ERROR_INVALID_ARGUMENT,
                    strf("buffer_wrap: the cl_mem has %zu bytes (CL_MEM_SIZE), fewer than the "
                         "%zu asked for, device '%s'",
                         size, bytes, device->info.name));
    auto* b = plx_support::make_live<plx_buffer_s>();
    if (b == nullptr) return fail(PLX_ERROR_OUT_OF_MEMORY, "buffer_wrap: out of host memory");
    err = cl().clRetainMemObject(mem);
    if (err != CL_SUCCESS) {
        plx_support::untrack(b);
        delete b;
        return fail_cl(PLX_ERROR_INVALID_ARGUMENT, "clRetainMemObject", err,
                       strf("buffer_wrap on device '%s'", device->info.name));
    }
    b->device = device;
    b->mem = mem;
    b->bytes = bytes;
    *buffer = b;
    return PLX_OK;
}

plx_status buffer_native(plx_buffer buffer, uint64_t* native) {
    if (!live(buffer))
        return fail(PLX_ERROR_INVALID_ARGUMENT,
                    "buffer_native: not a live buffer of the opencl plugin");
    if (native == nullptr) return fail(PLX_ERROR_INVALID_ARGUMENT, "buffer_native: native is NULL");
    *native = reinterpret_cast<uintptr_t>(buffer->mem);
    return PLX_OK;
}

} // namespace plx_opencl
