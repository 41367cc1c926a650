// The registry of live handles (native, interp, opencl): every handle the plugin gave out,
// keyed by its address, with its kind and what shutdown frees when the host forgot to.
#pragma once

#include "plugin_support.hpp"

#include <cstdint>
#include <mutex>
#include <new>
#include <string>
#include <type_traits>
#include <unordered_map>

namespace plx_support {

// A handle is checked by looking its address up (live<T>), never by reading through it: the
// host may pass a queue where an event belongs, or a freed handle, and neither may be
// dereferenced before its type is known. Its kind is the handle struct's kMagic.
// A handle the plugin allocates alone derives from Tracked, so that shutdown can free it.
struct Tracked {
    virtual ~Tracked() = default;
};

struct LiveHandle {
    uint32_t kind = 0;
    Tracked* owned = nullptr; // deleted by release_all_tracked; null for one freed elsewhere
};

inline std::mutex g_tracked_mutex;
inline std::unordered_map<const void*, LiveHandle> g_live;

// Registers `handle`; `owned` is what release_all_tracked deletes (null: the handle lives
// inside an object registered on its own, as a module's kernel, or shutdown leaves it alone).
// Throws std::bad_alloc.
template <class Handle> void track(Handle* handle, Tracked* owned) {
    std::lock_guard lock(g_tracked_mutex);
    g_live[static_cast<const void*>(handle)] = {Handle::kMagic, owned};
}
template <class Handle> void track(Handle* handle) {
    track(handle, static_cast<Tracked*>(handle));
}

// track(handle, owned) that says false, registering nothing, when there is no memory for it.
template <class Handle> bool try_track(Handle* handle, Tracked* owned) noexcept {
    try {
        track(handle, owned);
        return true;
    } catch (...) {
        return false;
    }
}

// A new handle of type T, registered, with `owned` what shutdown frees; nullptr when there is
// no memory for it.
template <class T> T* make_registered(bool owned) noexcept {
    T* object = new (std::nothrow) T;
    if (!object) return nullptr;
    Tracked* owner = nullptr;
    if constexpr (std::is_base_of_v<Tracked, T>) owner = owned ? object : nullptr;
    if (!try_track(object, owner)) {
        delete object;
        return nullptr;
    }
    return object;
}

// A new handle that shutdown frees when the host did not (T derives from Tracked).
template <class T> T* make_tracked() noexcept {
    static_assert(std::is_base_of_v<Tracked, T>);
    return make_registered<T>(true);
}

// A new handle that only its own entry frees (buffer_free, ...): shutdown forgets it.
template <class T> T* make_live() noexcept {
    return make_registered<T>(false);
}

inline void untrack(const void* handle) noexcept {
    std::lock_guard lock(g_tracked_mutex);
    g_live.erase(handle);
}

// Whether `handle` is a live handle of this kind; reads nothing through it.
template <class Handle> bool live(const Handle* handle) noexcept {
    if (!handle) return false;
    std::lock_guard lock(g_tracked_mutex);
    auto it = g_live.find(static_cast<const void*>(handle));
    return it != g_live.end() && it->second.kind == Handle::kMagic;
}

// Unregisters a handle of type T and deletes it; a handle that is not live is left alone.
template <class T> void release_tracked(T* handle) noexcept {
    if (!live(handle)) return;
    untrack(handle);
    delete handle;
}

// Frees every handle still registered that the plugin owns, and forgets the rest; `plugin`
// names the plugin in the debug message.
inline void release_all_tracked(const char* plugin) noexcept {
    std::unordered_map<const void*, LiveHandle> left;
    {
        std::lock_guard lock(g_tracked_mutex);
        left.swap(g_live);
    }
    size_t count = 0;
    for (auto& [handle, h] : left)
        if (h.owned) {
            delete h.owned;
            ++count;
        }
    if (count == 0) return;
    try {
        log(PLX_LOG_DEBUG, std::string(plugin) + ": shutdown released " + std::to_string(count) +
                               " handles the host had not freed");
    } catch (...) {
        // out of memory for the message: the handles are freed all the same
    }
}

} // namespace plx_support
