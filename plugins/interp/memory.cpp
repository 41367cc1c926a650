// Buffers of the interpreter: zero-filled host memory; every transfer is checked against the
// buffer's size before it touches memory. buffer_free, the transfers to and from the host,
// host_alloc and wrapping are plugins/common/host_memory.hpp's, instantiated here with the
// plugin's messages.
#include "interp_plugin.hpp"

#include <cstdlib>
#include <cstring>
#include <string>

namespace plx_interp {
namespace {

constexpr const plx_support::Names& names = Plugin::names;

// True when [offset, offset + bytes) lies inside the buffer, without overflowing.
bool in_range(plx_buffer buffer, size_t offset, size_t bytes) {
    return offset <= buffer->bytes && bytes <= buffer->bytes - offset;
}

std::string range_text(const char* what, size_t offset, size_t bytes, size_t size) {
    return std::string(what) + " range [" + std::to_string(offset) + ", " + std::to_string(offset) +
           " + " + std::to_string(bytes) + ") is outside the buffer of " + std::to_string(size) +
           " bytes";
}

// The queue, then `buffer`: "interp: <fn>: not an interp queue", "... buffer".
plx_status check(const char* fn, plx_queue queue, plx_buffer buffer) {
    if (plx_status s = Host::check_queue(fn, queue); s != PLX_OK) return s;
    if (!live(buffer)) return plx_support::not_ours(names, fn, "buffer");
    return PLX_OK;
}

} // namespace

std::string Plugin::no_room(size_t bytes, uint64_t /*limit*/) {
    return std::to_string(bytes) + " bytes do not fit in host memory";
}

std::string Plugin::out_of_range(size_t offset, size_t bytes, size_t size) {
    return range_text("the", offset, bytes, size);
}

plx_status buffer_alloc(plx_device device, size_t bytes, plx_buffer* buffer) {
    if (!plx_support::is_host_device(device))
        return fail(PLX_ERROR_INVALID_ARGUMENT, "interp: buffer_alloc: not an interp device");
    if (!buffer) return fail(PLX_ERROR_INVALID_ARGUMENT, "interp: buffer_alloc: buffer is NULL");
    if (bytes == 0) return fail(PLX_ERROR_INVALID_ARGUMENT, "interp: buffer_alloc: bytes is 0");
    auto* b = plx_support::make_tracked<plx_buffer_s>();
    if (!b) return fail(PLX_ERROR_OUT_OF_MEMORY, "interp: buffer_alloc: out of host memory");
    // Zero-filled so that a kernel reading memory nobody wrote sees the same values each run.
    b->data = static_cast<std::byte*>(std::calloc(1, bytes));
    if (!b->data) {
        plx_support::release_tracked(b);
        return fail(PLX_ERROR_OUT_OF_MEMORY, "interp: buffer_alloc: " + std::to_string(bytes) +
                                                 " bytes do not fit in host memory");
    }
    b->bytes = bytes;
    b->device = device;
    *buffer = b;
    return PLX_OK;
}

plx_status buffer_copy(plx_queue queue, plx_buffer dst, size_t dst_offset, plx_buffer src,
                       size_t src_offset, size_t bytes) {
    if (plx_status s = check("buffer_copy", queue, dst); s != PLX_OK) return s;
    if (!live(src))
        return fail(PLX_ERROR_INVALID_ARGUMENT, "interp: buffer_copy: src is not an interp buffer");
    if (!in_range(dst, dst_offset, bytes))
        return fail(PLX_ERROR_INVALID_ARGUMENT,
                    "interp: buffer_copy: " +
                        range_text("the destination", dst_offset, bytes, dst->bytes));
    if (!in_range(src, src_offset, bytes))
        return fail(PLX_ERROR_INVALID_ARGUMENT,
                    "interp: buffer_copy: " +
                        range_text("the source", src_offset, bytes, src->bytes));
    // memmove: a copy within one buffer may overlap.
    if (bytes) std::memmove(dst->data + dst_offset, src->data + src_offset, bytes);
    return PLX_OK;
}

plx_status buffer_fill(plx_queue queue, plx_buffer buffer, size_t offset, const void* pattern,
                       size_t pattern_bytes, size_t bytes) {
    if (plx_status s = check("buffer_fill", queue, buffer); s != PLX_OK) return s;
    if (plx_status s =
            plx_support::check_fill_pattern("interp: buffer_fill: ", pattern_bytes, bytes);
        s != PLX_OK)
        return s;
    if (!in_range(buffer, offset, bytes))
        return fail(PLX_ERROR_INVALID_ARGUMENT,
                    "interp: buffer_fill: " + range_text("the", offset, bytes, buffer->bytes));
    if (bytes == 0) return PLX_OK;
    if (!pattern) return fail(PLX_ERROR_INVALID_ARGUMENT, "interp: buffer_fill: pattern is NULL");
    std::byte* out = buffer->data + offset;
    for (size_t i = 0; i < bytes; i += pattern_bytes)
        std::memcpy(out + i, pattern, pattern_bytes);
    return PLX_OK;
}

// The plugin's devices all address host memory, so a peer copy is a plain copy; two buffers
// of one device belong to buffer_copy.
plx_status buffer_copy_peer(plx_queue queue, plx_buffer dst, size_t dst_offset, plx_buffer src,
                            size_t src_offset, size_t bytes) {
    if (plx_status s = check("buffer_copy_peer", queue, dst); s != PLX_OK) return s;
    if (!live(src))
        return fail(PLX_ERROR_INVALID_ARGUMENT,
                    "interp: buffer_copy_peer: src is not an interp buffer");
    if (plx_status s = Host::check_peer(queue, dst, src); s != PLX_OK) return s;
    if (!in_range(dst, dst_offset, bytes))
        return fail(PLX_ERROR_INVALID_ARGUMENT,
                    "interp: buffer_copy_peer: " +
                        range_text("the destination", dst_offset, bytes, dst->bytes));
    if (!in_range(src, src_offset, bytes))
        return fail(PLX_ERROR_INVALID_ARGUMENT,
                    "interp: buffer_copy_peer: " +
                        range_text("the source", src_offset, bytes, src->bytes));
    // memmove: wrapped buffers of two devices may share host memory.
    if (bytes) std::memmove(dst->data + dst_offset, src->data + src_offset, bytes);
    return PLX_OK;
}

} // namespace plx_interp

template class plx_support::HostMemory<plx_interp::Plugin>;
