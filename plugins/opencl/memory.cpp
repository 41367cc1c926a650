// Device buffers: allocation (with the device's limits checked first), bounds-checked read,
// write, copy and fill, each enqueued on the caller's in-order queue.
#include "plx_opencl.hpp"

#include <cstring>
#include <new>

namespace plx_ocl {
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
    if (bad_handle(buffer, Tag::buffer))
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
    if (bad_handle(device, Tag::device))
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
    auto* b = new (std::nothrow) plx_buffer_s;
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
    if (bad_handle(buffer, Tag::buffer)) return;
    cl().clReleaseMemObject(buffer->mem);
    buffer->tag = Tag::none;
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
    if (pattern_bytes != 1 && pattern_bytes != 2 && pattern_bytes != 4 && pattern_bytes != 8)
        return fail(
            PLX_ERROR_INVALID_ARGUMENT,
            strf("buffer_fill: pattern_bytes is %zu, expected 1, 2, 4 or 8", pattern_bytes));
    if (bytes % pattern_bytes != 0)
        return fail(PLX_ERROR_INVALID_ARGUMENT,
                    strf("buffer_fill: bytes (%zu) is not a multiple of pattern_bytes (%zu)", bytes,
                         pattern_bytes));
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

} // namespace plx_ocl
