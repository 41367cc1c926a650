// Memory of a plugin whose buffers are host memory (native, interp): plugin.h's buffer handle,
// host_alloc's blocks, and the memory entries that are the same for any such plugin
// (buffer_free, buffer_write, buffer_read and their async forms, host_alloc, host_free,
// buffer_wrap, buffer_native).
#pragma once

#include "sync_queue.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_set>

// The opaque buffer handle of plugin.h: host memory, the plugin's own or wrapped.
struct plx_buffer_s final : plx_support::Tracked {
    static constexpr uint32_t kMagic = 0x48425546; // "HBUF"
    std::byte* data = nullptr;
    size_t bytes = 0;
    plx_device device = nullptr;
    bool owned = true; // false for buffer_wrap: the caller keeps the memory
    ~plx_buffer_s() override {
        if (owned) std::free(data);
    }
};

namespace plx_support {

// Buffers and host_alloc's blocks start on a cache line, which also covers every vector width
// up to AVX-512.
inline constexpr size_t kHostAlignment = 64;

// `bytes` of host memory aligned to kHostAlignment (the size rounded up to it, as
// aligned_alloc wants); nullptr when the memory is not there or the rounded size would wrap.
// Freed with std::free.
inline void* aligned_host_alloc(size_t bytes) noexcept {
    if (bytes > SIZE_MAX - (kHostAlignment - 1)) return nullptr;
    return std::aligned_alloc(kHostAlignment,
                              (bytes + kHostAlignment - 1) / kHostAlignment * kHostAlignment);
}

// host_alloc's blocks, recorded so that host_free refuses a pointer host_alloc did not return
// and shutdown frees what the host never gave back. Any host memory is as fast as any other
// for a CPU device: the alignment is all there is to "pinned" here.
class HostBlocks {
public:
    // What follows "<plugin>: host_alloc: " when a block of `bytes` is not to be had: more than
    // `limit` (the device's memory_bytes), or more than the system gives.
    using NoRoomText = std::string (*)(size_t bytes, uint64_t limit);

    HostBlocks(const Names& names, NoRoomText no_room) : names_(names), no_room_(no_room) {}
    HostBlocks(const HostBlocks&) = delete;
    HostBlocks& operator=(const HostBlocks&) = delete;

    // host_alloc. `device` is the device's info, or nullptr when the handle is not one of the
    // plugin's devices.
    plx_status alloc(const plx_device_info* device, size_t bytes, void** ptr) {
        static constexpr const char* fn = "host_alloc";
        if (!device) return not_ours(names_, fn, "device");
        if (!ptr) return fail_in(names_, fn, PLX_ERROR_INVALID_ARGUMENT, "ptr is NULL");
        if (bytes == 0) return fail_in(names_, fn, PLX_ERROR_INVALID_ARGUMENT, "bytes is 0");
        const uint64_t limit = device->memory_bytes;
        void* data = bytes <= limit ? aligned_host_alloc(bytes) : nullptr;
        if (!data) return fail_in(names_, fn, PLX_ERROR_OUT_OF_MEMORY, no_room_(bytes, limit));
        try {
            std::lock_guard lock(mutex_);
            blocks_.insert(data);
        } catch (...) {
            std::free(data);
            return fail_in(names_, fn, PLX_ERROR_OUT_OF_MEMORY, "out of host memory");
        }
        *ptr = data;
        return PLX_OK;
    }

    // host_free: NULL is a no-op; a pointer host_alloc did not return, or one already freed,
    // is logged and left alone.
    void free(void* ptr) noexcept {
        if (!ptr) return;
        bool known = false;
        {
            std::lock_guard lock(mutex_);
            known = blocks_.erase(ptr) != 0;
        }
        if (known) {
            std::free(ptr);
            return;
        }
        try {
            log(PLX_LOG_WARN, std::string(names_.plugin) +
                                  ": host_free: ignored a pointer that host_alloc did not "
                                  "return, or that was already freed");
        } catch (...) {
            // out of memory for the message: the pointer is left alone all the same
        }
    }

    // Frees every block host_free never got back; called by shutdown.
    void release_all() noexcept {
        size_t count = 0;
        {
            std::lock_guard lock(mutex_);
            count = blocks_.size();
            for (void* p : blocks_)
                std::free(p);
            blocks_.clear();
        }
        if (count == 0) return;
        try {
            log(PLX_LOG_DEBUG, std::string(names_.plugin) + ": shutdown freed " +
                                   std::to_string(count) +
                                   " host_alloc blocks the host had not freed");
        } catch (...) {
            // out of memory for the message: the blocks are freed all the same
        }
    }

private:
    Names names_;
    NoRoomText no_room_;
    std::mutex mutex_;
    std::unordered_set<void*> blocks_;
};

// The memory entries that are the same for any plugin whose buffers are host memory, as the
// functions its descriptor points at, and release_all for its shutdown. What differs between
// plugins comes from `Plugin`:
//   static constexpr Names names;
//   static std::string no_room(size_t bytes, uint64_t limit): HostBlocks::NoRoomText;
//   static std::string out_of_range(size_t offset, size_t bytes, size_t size): what follows
//     "<plugin>: <fn>: " when [offset, offset + bytes) is not inside a buffer of `size` bytes.
// buffer_alloc, buffer_copy, buffer_fill and buffer_copy_peer are the plugin's own
// (PLX_HOST_BUFFER_ENTRIES, host_plugin.hpp).
template <class Plugin> class HostMemory {
public:
    static constexpr const Names& names = Plugin::names;

    // "<plugin>: <fn>: not a native buffer" unless `buffer` is one of the plugin's, else
    // Plugin::out_of_range unless [offset, offset + bytes) lies inside it, without overflowing.
    static plx_status check_range(const char* fn, plx_buffer buffer, size_t offset, size_t bytes) {
        if (!live(buffer)) return not_ours(names, fn, "buffer");
        if (offset > buffer->bytes || bytes > buffer->bytes - offset)
            return fail_in(names, fn, PLX_ERROR_INVALID_ARGUMENT,
                           Plugin::out_of_range(offset, bytes, buffer->bytes));
        return PLX_OK;
    }

    // buffer_copy_peer's own checks, once the queue and both buffers are known to be the
    // plugin's: the buffers are of two devices, one of them the queue's.
    static plx_status check_peer(plx_queue queue, plx_buffer dst, plx_buffer src) {
        static constexpr const char* fn = "buffer_copy_peer";
        if (dst->device == src->device)
            return fail_in(names, fn, PLX_ERROR_INVALID_ARGUMENT,
                           "dst and src are buffers of the same device; buffer_copy copies "
                           "within a device");
        if (queue->device != dst->device && queue->device != src->device)
            return fail_in(names, fn, PLX_ERROR_INVALID_ARGUMENT,
                           "the queue belongs to neither buffer's device");
        return PLX_OK;
    }

    static void buffer_free(plx_buffer buffer) { release_tracked(buffer); }

    // The copies are done when the call returns, which is more than the asynchronous forms
    // promise.
    static plx_status buffer_write(plx_queue queue, plx_buffer buffer, size_t offset,
                                   const void* src, size_t bytes) {
        return write("buffer_write", queue, buffer, offset, src, bytes);
    }
    static plx_status buffer_read(plx_queue queue, plx_buffer buffer, size_t offset, void* dst,
                                  size_t bytes) {
        return read("buffer_read", queue, buffer, offset, dst, bytes);
    }
    static plx_status buffer_write_async(plx_queue queue, plx_buffer buffer, size_t offset,
                                         const void* src, size_t bytes) {
        return write("buffer_write_async", queue, buffer, offset, src, bytes);
    }
    static plx_status buffer_read_async(plx_queue queue, plx_buffer buffer, size_t offset,
                                        void* dst, size_t bytes) {
        return read("buffer_read_async", queue, buffer, offset, dst, bytes);
    }

    static plx_status host_alloc(plx_device device, size_t bytes, void** ptr) {
        return blocks_.alloc(is_host_device(device) ? &device->info : nullptr, bytes, ptr);
    }

    // The block is host memory whatever device it was allocated for.
    static void host_free(plx_device, void* ptr) noexcept { blocks_.free(ptr); }

    static void release_all() noexcept { blocks_.release_all(); }

    // `native` is a host address the caller owns: the buffer uses it in place and never frees
    // it.
    static plx_status buffer_wrap(plx_device device, uint64_t native, size_t bytes,
                                  plx_buffer* buffer) {
        static constexpr const char* fn = "buffer_wrap";
        if (!is_host_device(device)) return not_ours(names, fn, "device");
        if (!buffer) return fail_in(names, fn, PLX_ERROR_INVALID_ARGUMENT, "buffer is NULL");
        if (native == 0) return fail_in(names, fn, PLX_ERROR_INVALID_ARGUMENT, "native is NULL");
        if (bytes == 0) return fail_in(names, fn, PLX_ERROR_INVALID_ARGUMENT, "bytes is 0");
        if (bytes > UINTPTR_MAX - native)
            return fail_in(names, fn, PLX_ERROR_INVALID_ARGUMENT,
                           std::to_string(bytes) +
                               " bytes from the address wrap around the address space");
        auto* b = make_tracked<plx_buffer_s>();
        if (!b) return fail_in(names, fn, PLX_ERROR_OUT_OF_MEMORY, "out of host memory");
        b->data = reinterpret_cast<std::byte*>(static_cast<uintptr_t>(native));
        b->bytes = bytes;
        b->device = device;
        b->owned = false;
        *buffer = b;
        return PLX_OK;
    }

    // The buffer's host address.
    static plx_status buffer_native(plx_buffer buffer, uint64_t* native) {
        static constexpr const char* fn = "buffer_native";
        if (!live(buffer)) return not_ours(names, fn, "buffer");
        if (!native) return fail_in(names, fn, PLX_ERROR_INVALID_ARGUMENT, "native is NULL");
        *native = reinterpret_cast<uintptr_t>(buffer->data);
        return PLX_OK;
    }

private:
    // The checks of a transfer of `bytes` between `buffer` and the host memory at `host`,
    // named `host_name` ("src", "dst") in the message; `fn` names the caller.
    static plx_status check_transfer(const char* fn, plx_queue queue, plx_buffer buffer,
                                     size_t offset, size_t bytes, const void* host,
                                     const char* host_name) {
        if (plx_status s = SyncQueue<Plugin>::check_queue(fn, queue); s != PLX_OK) return s;
        if (plx_status s = check_range(fn, buffer, offset, bytes); s != PLX_OK) return s;
        if (bytes != 0 && !host)
            return fail_in(names, fn, PLX_ERROR_INVALID_ARGUMENT,
                           std::string(host_name) + " is NULL");
        return PLX_OK;
    }

    // buffer_write and buffer_write_async. memmove: a wrapped buffer may overlap the caller's
    // memory.
    static plx_status write(const char* fn, plx_queue queue, plx_buffer buffer, size_t offset,
                            const void* src, size_t bytes) {
        if (plx_status s = check_transfer(fn, queue, buffer, offset, bytes, src, "src");
            s != PLX_OK)
            return s;
        if (bytes != 0) std::memmove(buffer->data + offset, src, bytes);
        return PLX_OK;
    }

    // buffer_read and buffer_read_async.
    static plx_status read(const char* fn, plx_queue queue, plx_buffer buffer, size_t offset,
                           void* dst, size_t bytes) {
        if (plx_status s = check_transfer(fn, queue, buffer, offset, bytes, dst, "dst");
            s != PLX_OK)
            return s;
        if (bytes != 0) std::memmove(dst, buffer->data + offset, bytes);
        return PLX_OK;
    }

    static inline HostBlocks blocks_{Plugin::names, &Plugin::no_room};
};

} // namespace plx_support
