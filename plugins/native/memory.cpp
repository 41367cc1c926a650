// Buffers of the native plugin: 64-byte aligned host memory; transfers are plain copies,
// complete when they return (every queue command of this plugin is synchronous). buffer_free,
// the transfers to and from the host, host_alloc and wrapping are
// plugins/common/host_memory.hpp's, instantiated here with the plugin's messages.
#include "native_plugin.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

namespace plx_native {

std::string Plugin::no_room(size_t bytes, uint64_t limit) {
    return "could not allocate " + std::to_string(bytes) + " bytes of host memory (" +
           std::to_string(limit) + " bytes physical memory)";
}

std::string Plugin::out_of_range(size_t offset, size_t bytes, size_t size) {
    return "offset " + std::to_string(offset) + " + " + std::to_string(bytes) +
           " bytes is beyond the buffer's " + std::to_string(size) + " bytes";
}

plx_status buffer_alloc(plx_device device, size_t bytes, plx_buffer* buffer) {
    if (!plx_support::is_host_device(device))
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
    auto* b = plx_support::make_tracked<plx_buffer_s>();
    if (!b) {
        std::free(data);
        return fail(PLX_ERROR_OUT_OF_MEMORY, "native: buffer_alloc: out of host memory");
    }
    b->data = static_cast<std::byte*>(data);
    b->bytes = bytes;
    b->device = device;
    *buffer = b;
    return PLX_OK;
}

plx_status buffer_copy(plx_queue queue, plx_buffer dst, size_t dst_offset, plx_buffer src,
                       size_t src_offset, size_t bytes) {
    if (plx_status s = Host::check_queue("buffer_copy", queue); s != PLX_OK) return s;
    if (plx_status s = Host::check_range("buffer_copy (dst)", dst, dst_offset, bytes); s != PLX_OK)
        return s;
    if (plx_status s = Host::check_range("buffer_copy (src)", src, src_offset, bytes); s != PLX_OK)
        return s;
    // The ranges may overlap when dst and src are the same buffer.
    if (bytes != 0) std::memmove(dst->data + dst_offset, src->data + src_offset, bytes);
    return PLX_OK;
}

plx_status buffer_fill(plx_queue queue, plx_buffer buffer, size_t offset, const void* pattern,
                       size_t pattern_bytes, size_t bytes) {
    if (plx_status s = Host::check_queue("buffer_fill", queue); s != PLX_OK) return s;
    if (plx_status s = Host::check_range("buffer_fill", buffer, offset, bytes); s != PLX_OK)
        return s;
    if (!pattern) return fail(PLX_ERROR_INVALID_ARGUMENT, "native: buffer_fill: pattern is NULL");
    if (plx_status s =
            plx_support::check_fill_pattern("native: buffer_fill: ", pattern_bytes, bytes);
        s != PLX_OK)
        return s;
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
    return live(buffer) ? buffer->data : nullptr;
}

// The plugin's devices all address host memory, so a peer copy is a plain copy; two buffers
// of one device belong to buffer_copy.
plx_status buffer_copy_peer(plx_queue queue, plx_buffer dst, size_t dst_offset, plx_buffer src,
                            size_t src_offset, size_t bytes) {
    if (plx_status s = Host::check_queue("buffer_copy_peer", queue); s != PLX_OK) return s;
    if (plx_status s = Host::check_range("buffer_copy_peer (dst)", dst, dst_offset, bytes);
        s != PLX_OK)
        return s;
    if (plx_status s = Host::check_range("buffer_copy_peer (src)", src, src_offset, bytes);
        s != PLX_OK)
        return s;
    if (plx_status s = Host::check_peer(queue, dst, src); s != PLX_OK) return s;
    // memmove: wrapped buffers of two devices may share host memory.
    if (bytes != 0) std::memmove(dst->data + dst_offset, src->data + src_offset, bytes);
    return PLX_OK;
}

} // namespace plx_native

template class plx_support::HostMemory<plx_native::Plugin>;
