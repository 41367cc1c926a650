// What the in-tree plugins that own their handles (native, interp) share: the calling
// thread's last_error message, logging through the host, the list of live handles that
// shutdown frees when the host forgot to, and the ABI 1.1 entries that are the same for any
// plugin whose buffers are host memory (host_alloc's blocks, buffer_wrap, buffer_native).
// Header-only, so that a plugin still links nothing of plexus: each shared library gets its
// own copy of this state (hidden visibility).
#pragma once

#include <plexus/plugin.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <new>
#include <string>
#include <unordered_set>

namespace plx_support {

inline thread_local std::string tl_last_error;
// The host's callbacks, from plx_plugin_init until shutdown.
inline const plx_host_api* g_host = nullptr;

// Sets the calling thread's last_error message and returns `status`, so that a function can
// `return fail(PLX_ERROR_..., "...")`.
inline plx_status fail(plx_status status, const std::string& message) noexcept {
    try {
        tl_last_error = message;
    } catch (...) {
        tl_last_error.clear(); // out of memory while reporting: an empty message is all we have
    }
    return status;
}

inline const char* last_error_text() noexcept { return tl_last_error.c_str(); }

inline void log(plx_log_level level, const std::string& message) noexcept {
    if (g_host && g_host->struct_size >= offsetof(plx_host_api, log) + sizeof(g_host->log) &&
        g_host->log)
        g_host->log(g_host->host_ctx, level, message.c_str());
}

// Handle bookkeeping: every live handle is on one list so that shutdown releases what the
// host forgot to free.
struct Tracked {
    Tracked* prev = nullptr;
    Tracked* next = nullptr;
    virtual ~Tracked() = default;
};

inline std::mutex g_tracked_mutex;
inline Tracked* g_tracked = nullptr;

inline void track(Tracked* object) {
    std::lock_guard lock(g_tracked_mutex);
    object->prev = nullptr;
    object->next = g_tracked;
    if (g_tracked) g_tracked->prev = object;
    g_tracked = object;
}

inline void untrack(Tracked* object) noexcept {
    std::lock_guard lock(g_tracked_mutex);
    (object->prev ? object->prev->next : g_tracked) = object->next;
    if (object->next) object->next->prev = object->prev;
    object->prev = object->next = nullptr;
}

// Frees every handle still on the list; `plugin` names the plugin in the debug message.
inline void release_all_tracked(const char* plugin) noexcept {
    std::lock_guard lock(g_tracked_mutex);
    size_t count = 0;
    while (g_tracked) {
        Tracked* object = g_tracked;
        g_tracked = object->next;
        delete object;
        ++count;
    }
    if (count)
        log(PLX_LOG_DEBUG, std::string(plugin) + ": shutdown released " + std::to_string(count) +
                               " handles the host had not freed");
}

// ---- ABI 1.1, for plugins whose buffers are host memory ----------------------------------

// How a plugin names itself in the messages below: "native: host_alloc: bytes is 0",
// "native: buffer_wrap: not a native device".
struct Names {
    const char* plugin;   // "native"
    const char* a_plugin; // with its article: "a native", "an interp"
};

// Sets last_error to "<plugin>: <fn>: <what>" and returns `status`.
inline plx_status fail_in(const Names& names, const char* fn, plx_status status,
                          const std::string& what) {
    return fail(status, std::string(names.plugin) + ": " + fn + ": " + what);
}

// Refuses a handle that is not one of the plugin's: "<plugin>: <fn>: not a native <kind>".
inline plx_status not_ours(const Names& names, const char* fn, const char* kind) {
    return fail_in(names, fn, PLX_ERROR_INVALID_ARGUMENT,
                   std::string("not ") + names.a_plugin + " " + kind);
}

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

// host_alloc, host_free, buffer_wrap and buffer_native of a plugin whose buffers are host
// memory, as the functions its descriptor points at, and release_all for its shutdown. What
// differs between plugins comes from `Plugin`:
//   static constexpr Names names;
//   static bool valid_device(plx_device), valid_buffer(plx_buffer): the handle is one of ours;
//   static std::string no_room(size_t bytes, uint64_t limit): HostBlocks::NoRoomText.
// Device and Buffer are the plugin's handle structs, which are complete only where the plugin
// defines them; a buffer has data, bytes, device and owned.
template <class Plugin, class Device = plx_device_s, class Buffer = plx_buffer_s> class HostMemory {
public:
    static plx_status host_alloc(Device* device, size_t bytes, void** ptr) {
        return blocks_.alloc(Plugin::valid_device(device) ? &device->info : nullptr, bytes, ptr);
    }

    // The block is host memory whatever device it was allocated for.
    static void host_free(Device*, void* ptr) noexcept { blocks_.free(ptr); }

    static void release_all() noexcept { blocks_.release_all(); }

    // `native` is a host address the caller owns: the buffer uses it in place and never frees
    // it.
    static plx_status buffer_wrap(Device* device, uint64_t native, size_t bytes, Buffer** buffer) {
        static constexpr const char* fn = "buffer_wrap";
        const Names& names = Plugin::names;
        if (!Plugin::valid_device(device)) return not_ours(names, fn, "device");
        if (!buffer) return fail_in(names, fn, PLX_ERROR_INVALID_ARGUMENT, "buffer is NULL");
        if (native == 0) return fail_in(names, fn, PLX_ERROR_INVALID_ARGUMENT, "native is NULL");
        if (bytes == 0) return fail_in(names, fn, PLX_ERROR_INVALID_ARGUMENT, "bytes is 0");
        if (bytes > UINTPTR_MAX - native)
            return fail_in(names, fn, PLX_ERROR_INVALID_ARGUMENT,
                           std::to_string(bytes) +
                               " bytes from the address wrap around the address space");
        auto* b = new (std::nothrow) Buffer;
        if (!b) return fail_in(names, fn, PLX_ERROR_OUT_OF_MEMORY, "out of host memory");
        b->data = reinterpret_cast<std::byte*>(static_cast<uintptr_t>(native));
        b->bytes = bytes;
        b->device = device;
        b->owned = false;
        track(b);
        *buffer = b;
        return PLX_OK;
    }

    // The buffer's host address.
    static plx_status buffer_native(Buffer* buffer, uint64_t* native) {
        static constexpr const char* fn = "buffer_native";
        const Names& names = Plugin::names;
        if (!Plugin::valid_buffer(buffer)) return not_ours(names, fn, "buffer");
        if (!native) return fail_in(names, fn, PLX_ERROR_INVALID_ARGUMENT, "native is NULL");
        *native = reinterpret_cast<uintptr_t>(buffer->data);
        return PLX_OK;
    }

private:
    static inline HostBlocks blocks_{Plugin::names, &Plugin::no_room};
};

} // namespace plx_support
