// Buffers of the interpreter: zero-filled host memory; every transfer is checked against the
// buffer's size before it touches memory.
#include "interp.hpp"

#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

plx_buffer_s::~plx_buffer_s() {
    if (owned) std::free(data);
}

namespace plx_interp {
namespace {

// True when [offset, offset + bytes) lies inside the buffer, without overflowing.
bool in_range(plx_buffer buffer, size_t offset, size_t bytes) {
    return offset <= buffer->bytes && bytes <= buffer->bytes - offset;
}

std::string range_text(const char* what, size_t offset, size_t bytes, plx_buffer buffer) {
    return std::string(what) + " range [" + std::to_string(offset) + ", " + std::to_string(offset) +
           " + " + std::to_string(bytes) + ") is outside the buffer of " +
           std::to_string(buffer->bytes) + " bytes";
}

plx_status check(const char* fn, plx_queue queue, plx_buffer buffer) {
    if (!valid_queue(queue))
        return fail(PLX_ERROR_INVALID_ARGUMENT, std::string("interp: ") + fn + ": not an interp queue");
    if (!valid_buffer(buffer))
        return fail(PLX_ERROR_INVALID_ARGUMENT,
                    std::string("interp: ") + fn + ": not an interp buffer");
    return PLX_OK;
}

// buffer_write and buffer_write_async; `fn` names the caller in messages.
plx_status write_buffer(const char* fn, plx_queue queue, plx_buffer buffer, size_t offset,
                        const void* src, size_t bytes) {
    if (plx_status s = check(fn, queue, buffer); s != PLX_OK) return s;
    if (!in_range(buffer, offset, bytes))
        return fail(PLX_ERROR_INVALID_ARGUMENT,
                    std::string("interp: ") + fn + ": " + range_text("the", offset, bytes, buffer));
    if (bytes == 0) return PLX_OK;
    if (!src)
        return fail(PLX_ERROR_INVALID_ARGUMENT, std::string("interp: ") + fn + ": src is NULL");
    std::memmove(buffer->data + offset, src, bytes);
    return PLX_OK;
}

// buffer_read and buffer_read_async.
plx_status read_buffer(const char* fn, plx_queue queue, plx_buffer buffer, size_t offset,
                       void* dst, size_t bytes) {
    if (plx_status s = check(fn, queue, buffer); s != PLX_OK) return s;
    if (!in_range(buffer, offset, bytes))
        return fail(PLX_ERROR_INVALID_ARGUMENT,
                    std::string("interp: ") + fn + ": " + range_text("the", offset, bytes, buffer));
    if (bytes == 0) return PLX_OK;
    if (!dst)
        return fail(PLX_ERROR_INVALID_ARGUMENT, std::string("interp: ") + fn + ": dst is NULL");
    std::memmove(dst, buffer->data + offset, bytes);
    return PLX_OK;
}

} // namespace

bool valid_buffer(plx_buffer buffer) noexcept {
    return buffer && buffer->magic == plx_buffer_s::kMagic;
}

plx_status buffer_alloc(plx_device device, size_t bytes, plx_buffer* buffer) {
    if (!valid_device(device))
        return fail(PLX_ERROR_INVALID_ARGUMENT, "interp: buffer_alloc: not an interp device");
    if (!buffer) return fail(PLX_ERROR_INVALID_ARGUMENT, "interp: buffer_alloc: buffer is NULL");
    if (bytes == 0) return fail(PLX_ERROR_INVALID_ARGUMENT, "interp: buffer_alloc: bytes is 0");
    auto* b = new (std::nothrow) plx_buffer_s;
    if (!b) return fail(PLX_ERROR_OUT_OF_MEMORY, "interp: buffer_alloc: out of host memory");
    // Zero-filled so that a kernel reading memory nobody wrote sees the same values each run.
    b->data = static_cast<std::byte*>(std::calloc(1, bytes));
    if (!b->data) {
        delete b;
        return fail(PLX_ERROR_OUT_OF_MEMORY, "interp: buffer_alloc: " + std::to_string(bytes) +
                                                 " bytes do not fit in host memory");
    }
    b->bytes = bytes;
    b->device = device;
    track(b);
    *buffer = b;
    return PLX_OK;
}

void buffer_free(plx_buffer buffer) {
    if (!valid_buffer(buffer)) return;
    buffer->magic = 0;
    untrack(buffer);
    delete buffer;
}

plx_status buffer_write(plx_queue queue, plx_buffer buffer, size_t offset, const void* src,
                        size_t bytes) {
    return write_buffer("buffer_write", queue, buffer, offset, src, bytes);
}

plx_status buffer_read(plx_queue queue, plx_buffer buffer, size_t offset, void* dst,
                       size_t bytes) {
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
    if (plx_status s = check("buffer_copy", queue, dst); s != PLX_OK) return s;
    if (!valid_buffer(src))
        return fail(PLX_ERROR_INVALID_ARGUMENT, "interp: buffer_copy: src is not an interp buffer");
    if (!in_range(dst, dst_offset, bytes))
        return fail(PLX_ERROR_INVALID_ARGUMENT,
                    "interp: buffer_copy: " + range_text("the destination", dst_offset, bytes, dst));
    if (!in_range(src, src_offset, bytes))
        return fail(PLX_ERROR_INVALID_ARGUMENT,
                    "interp: buffer_copy: " + range_text("the source", src_offset, bytes, src));
    // memmove: a copy within one buffer may overlap.
    if (bytes) std::memmove(dst->data + dst_offset, src->data + src_offset, bytes);
    return PLX_OK;
}

plx_status buffer_fill(plx_queue queue, plx_buffer buffer, size_t offset, const void* pattern,
                       size_t pattern_bytes, size_t bytes) {
    if (plx_status s = check("buffer_fill", queue, buffer); s != PLX_OK) return s;
    if (pattern_bytes != 1 && pattern_bytes != 2 && pattern_bytes != 4 && pattern_bytes != 8)
        return fail(PLX_ERROR_INVALID_ARGUMENT, "interp: buffer_fill: pattern_bytes is " +
                                                    std::to_string(pattern_bytes) +
                                                    ", must be 1, 2, 4 or 8");
    if (bytes % pattern_bytes != 0)
        return fail(PLX_ERROR_INVALID_ARGUMENT,
                    "interp: buffer_fill: bytes " + std::to_string(bytes) +
                        " is not a multiple of pattern_bytes " + std::to_string(pattern_bytes));
    if (!in_range(buffer, offset, bytes))
        return fail(PLX_ERROR_INVALID_ARGUMENT,
                    "interp: buffer_fill: " + range_text("the", offset, bytes, buffer));
    if (bytes == 0) return PLX_OK;
    if (!pattern) return fail(PLX_ERROR_INVALID_ARGUMENT, "interp: buffer_fill: pattern is NULL");
    std::byte* out = buffer->data + offset;
    for (size_t i = 0; i < bytes; i += pattern_bytes) std::memcpy(out + i, pattern, pattern_bytes);
    return PLX_OK;
}

// The plugin's devices all address host memory, so a peer copy is a plain copy; two buffers
// of one device belong to buffer_copy.
plx_status buffer_copy_peer(plx_queue queue, plx_buffer dst, size_t dst_offset, plx_buffer src,
                            size_t src_offset, size_t bytes) {
    if (plx_status s = check("buffer_copy_peer", queue, dst); s != PLX_OK) return s;
    if (!valid_buffer(src))
        return fail(PLX_ERROR_INVALID_ARGUMENT,
                    "interp: buffer_copy_peer: src is not an interp buffer");
    if (dst->device == src->device)
        return fail(PLX_ERROR_INVALID_ARGUMENT,
                    "interp: buffer_copy_peer: dst and src are buffers of the same device; "
                    "buffer_copy copies within a device");
    if (queue->device != dst->device && queue->device != src->device)
        return fail(PLX_ERROR_INVALID_ARGUMENT,
                    "interp: buffer_copy_peer: the queue belongs to neither buffer's device");
    if (!in_range(dst, dst_offset, bytes))
        return fail(PLX_ERROR_INVALID_ARGUMENT,
                    "interp: buffer_copy_peer: " +
                        range_text("the destination", dst_offset, bytes, dst));
    if (!in_range(src, src_offset, bytes))
        return fail(PLX_ERROR_INVALID_ARGUMENT,
                    "interp: buffer_copy_peer: " +
                        range_text("the source", src_offset, bytes, src));
    // memmove: wrapped buffers of two devices may share host memory.
    if (bytes) std::memmove(dst->data + dst_offset, src->data + src_offset, bytes);
    return PLX_OK;
}

} // namespace plx_interp
