// Buffers of the interpreter: zero-filled host memory; every transfer is checked against the
// buffer's size before it touches memory.
#include "interp.hpp"

#include <cstdlib>
#include <cstring>
#include <new>

plx_buffer_s::~plx_buffer_s() { std::free(data); }

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
    if (plx_status s = check("buffer_write", queue, buffer); s != PLX_OK) return s;
    if (!in_range(buffer, offset, bytes))
        return fail(PLX_ERROR_INVALID_ARGUMENT,
                    "interp: buffer_write: " + range_text("the", offset, bytes, buffer));
    if (bytes == 0) return PLX_OK;
    if (!src) return fail(PLX_ERROR_INVALID_ARGUMENT, "interp: buffer_write: src is NULL");
    std::memmove(buffer->data + offset, src, bytes);
    return PLX_OK;
}

plx_status buffer_read(plx_queue queue, plx_buffer buffer, size_t offset, void* dst,
                       size_t bytes) {
    if (plx_status s = check("buffer_read", queue, buffer); s != PLX_OK) return s;
    if (!in_range(buffer, offset, bytes))
        return fail(PLX_ERROR_INVALID_ARGUMENT,
                    "interp: buffer_read: " + range_text("the", offset, bytes, buffer));
    if (bytes == 0) return PLX_OK;
    if (!dst) return fail(PLX_ERROR_INVALID_ARGUMENT, "interp: buffer_read: dst is NULL");
    std::memmove(dst, buffer->data + offset, bytes);
    return PLX_OK;
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

} // namespace plx_interp
