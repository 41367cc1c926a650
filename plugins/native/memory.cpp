// Buffers of the native plugin: 64-byte aligned host memory; transfers are plain copies,
// complete when they return (every queue command of this plugin is synchronous).
#include "native.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

namespace plx_native {
namespace {

// Checks the queue and that [offset, offset + bytes) lies inside the buffer; `what` names the
// function and the argument in the message.
plx_status check_range(const char* what, plx_buffer buffer, size_t offset, size_t bytes) {
    if (!valid_buffer(buffer))
        return fail(PLX_ERROR_INVALID_ARGUMENT,
                    std::string("native: ") + what + ": not a native buffer");
    if (offset > buffer->bytes || bytes > buffer->bytes - offset)
        return fail(PLX_ERROR_INVALID_ARGUMENT,
                    std::string("native: ") + what + ": offset " + std::to_string(offset) + " + " +
                        std::to_string(bytes) + " bytes is beyond the buffer's " +
                        std::to_string(buffer->bytes) + " bytes");
    return PLX_OK;
}

plx_status check_queue(const char* what, plx_queue queue) {
    if (!valid_queue(queue))
        return fail(PLX_ERROR_INVALID_ARGUMENT,
                    std::string("native: ") + what + ": not a native queue");
    return PLX_OK;
}

// buffer_write and buffer_write_async; `fn` names the caller in messages.
plx_status write_buffer(const char* fn, plx_queue queue, plx_buffer buffer, size_t offset,
                        const void* src, size_t bytes) {
    if (plx_status s = check_queue(fn, queue); s != PLX_OK) return s;
    if (plx_status s = check_range(fn, buffer, offset, bytes); s != PLX_OK) return s;
    if (bytes == 0) return PLX_OK;
    if (!src)
        return fail(PLX_ERROR_INVALID_ARGUMENT, std::string("native: ") + fn + ": src is NULL");
    std::memcpy(buffer->data + offset, src, bytes);
    return PLX_OK;
}

// buffer_read and buffer_read_async.
plx_status read_buffer(const char* fn, plx_queue queue, plx_buffer buffer, size_t offset, void* dst,
                       size_t bytes) {
    if (plx_status s = check_queue(fn, queue); s != PLX_OK) return s;
    if (plx_status s = check_range(fn, buffer, offset, bytes); s != PLX_OK) return s;
    if (bytes == 0) return PLX_OK;
    if (!dst)
        return fail(PLX_ERROR_INVALID_ARGUMENT, std::string("native: ") + fn + ": dst is NULL");
    std::memcpy(dst, buffer->data + offset, bytes);
    return PLX_OK;
}

} // namespace

bool valid_buffer(plx_buffer buffer) noexcept {
    return buffer && buffer->magic == plx_buffer_s::kMagic;
}

plx_status buffer_alloc(plx_device device, size_t bytes, plx_buffer* buffer) {
    if (!valid_device(device))
        return fail(PLX_ERROR_INVALID_ARGUMENT, "native: buffer_alloc: not a native device");
    if (!buffer) return fail(PLX_ERROR_INVALID_ARGUMENT, "native: buffer_alloc: buffer is NULL");
    if (bytes == 0) return fail(PLX_ERROR_INVALID_ARGUMENT, "native: buffer_alloc: bytes is 0");
    const uint64_t limit = device->info.max_alloc_bytes;
    if (bytes > limit)
        return fail(PLX_ERROR_OUT_OF_MEMORY, "native: buffer_alloc: " + std::to_string(bytes) +
                                                 " bytes exceed the device's max_alloc_bytes (" +
                                                 std::to_string(limit) +
                                                 " bytes of physical memory)");
    void* data = plx_support::aligned_host_alloc(bytes);
    if (!data)
        return fail(PLX_ERROR_OUT_OF_MEMORY, "native: buffer_alloc: could not allocate " +
                                                 std::to_string(bytes) + " bytes of host memory");
    auto* b = new (std::nothrow) plx_buffer_s;
    if (!b) {
        std::free(data);
        return fail(PLX_ERROR_OUT_OF_MEMORY, "native: buffer_alloc: out of host memory");
    }
    b->data = static_cast<std::byte*>(data);
    b->bytes = bytes;
    b->device = device;
    track(b);
    *buffer = b;
    return PLX_OK;
}

void buffer_free(plx_buffer buffer) {
    if (!valid_buffer(buffer)) return;
    untrack(buffer);
    delete buffer;
}

plx_status buffer_write(plx_queue queue, plx_buffer buffer, size_t offset, const void* src,
                        size_t bytes) {
    return write_buffer("buffer_write", queue, buffer, offset, src, bytes);
}

plx_status buffer_read(plx_queue queue, plx_buffer buffer, size_t offset, void* dst, size_t bytes) {
    return read_buffer("buffer_read", queue, buffer, offset, dst, bytes);
}

// The copy is done when the call returns, which is more than the asynchronous forms promise.
plx_status buffer_write_async(plx_queue queue, plx_buffer buffer, size_t offset, const void* src,
                              size_t bytes) {
    return write_buffer("buffer_write_async", queue, buffer, offset, src, bytes);
}

plx_status buffer_read_async(plx_queue queue, plx_buffer buffer, size_t offset, void* dst,
                             size_t bytes) {
    return read_buffer("buffer_read_async", queue, buffer, offset, dst, bytes);
}

plx_status buffer_copy(plx_queue queue, plx_buffer dst, size_t dst_offset, plx_buffer src,
                       size_t src_offset, size_t bytes) {
    if (plx_status s = check_queue("buffer_copy", queue); s != PLX_OK) return s;
    if (plx_status s = check_range("buffer_copy (dst)", dst, dst_offset, bytes); s != PLX_OK)
        return s;
    if (plx_status s = check_range("buffer_copy (src)", src, src_offset, bytes); s != PLX_OK)
        return s;
    // The ranges may overlap when dst and src are the same buffer.
    if (bytes != 0) std::memmove(dst->data + dst_offset, src->data + src_offset, bytes);
    return PLX_OK;
}

plx_status buffer_fill(plx_queue queue, plx_buffer buffer, size_t offset, const void* pattern,
                       size_t pattern_bytes, size_t bytes) {
    if (plx_status s = check_queue("buffer_fill", queue); s != PLX_OK) return s;
    if (plx_status s = check_range("buffer_fill", buffer, offset, bytes); s != PLX_OK) return s;
    if (!pattern) return fail(PLX_ERROR_INVALID_ARGUMENT, "native: buffer_fill: pattern is NULL");
    if (pattern_bytes != 1 && pattern_bytes != 2 && pattern_bytes != 4 && pattern_bytes != 8)
        return fail(PLX_ERROR_INVALID_ARGUMENT, "native: buffer_fill: pattern_bytes is " +
                                                    std::to_string(pattern_bytes) +
                                                    ", must be 1, 2, 4 or 8");
    if (bytes % pattern_bytes != 0)
        return fail(PLX_ERROR_INVALID_ARGUMENT, "native: buffer_fill: bytes (" +
                                                    std::to_string(bytes) +
                                                    ") is not a multiple of pattern_bytes (" +
                                                    std::to_string(pattern_bytes) + ")");
    if (bytes == 0) return PLX_OK;
    std::byte* p = buffer->data + offset;
    if (pattern_bytes == 1) {
        std::memset(p, *static_cast<const unsigned char*>(pattern), bytes);
        return PLX_OK;
    }
    // Doubling copies: log2(bytes / pattern_bytes) memcpy calls instead of one per element.
    std::memcpy(p, pattern, pattern_bytes);
    size_t filled = pattern_bytes;
    while (filled < bytes) {
        const size_t n = std::min(filled, bytes - filled);
        std::memcpy(p + filled, p, n);
        filled += n;
    }
    return PLX_OK;
}

void* buffer_host_ptr(plx_buffer buffer) {
    return valid_buffer(buffer) ? buffer->data : nullptr;
}

// The plugin's devices all address host memory, so a peer copy is a plain copy; two buffers
// of one device belong to buffer_copy.
plx_status buffer_copy_peer(plx_queue queue, plx_buffer dst, size_t dst_offset, plx_buffer src,
                            size_t src_offset, size_t bytes) {
    if (plx_status s = check_queue("buffer_copy_peer", queue); s != PLX_OK) return s;
    if (plx_status s = check_range("buffer_copy_peer (dst)", dst, dst_offset, bytes); s != PLX_OK)
        return s;
    if (plx_status s = check_range("buffer_copy_peer (src)", src, src_offset, bytes); s != PLX_OK)
        return s;
    if (dst->device == src->device)
        return fail(PLX_ERROR_INVALID_ARGUMENT,
                    "native: buffer_copy_peer: dst and src are buffers of the same device; "
                    "buffer_copy copies within a device");
    if (queue->device != dst->device && queue->device != src->device)
        return fail(PLX_ERROR_INVALID_ARGUMENT,
                    "native: buffer_copy_peer: the queue belongs to neither buffer's device");
    // memmove: wrapped buffers of two devices may share host memory.
    if (bytes != 0) std::memmove(dst->data + dst_offset, src->data + src_offset, bytes);
    return PLX_OK;
}

} // namespace plx_native

plx_buffer_s::~plx_buffer_s() {
    magic = 0;
    if (owned) std::free(data);
}
