// What the in-tree plugins that own their handles (native, interp) share: the calling
// thread's last_error message, logging through the host, and the list of live handles that
// shutdown frees when the host forgot to. Header-only, so that a plugin still links nothing of
// plexus: each shared library gets its own copy of this state (hidden visibility).
#pragma once

#include <plexus/plugin.h>

#include <cstddef>
#include <mutex>
#include <string>

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

} // namespace plx_support
