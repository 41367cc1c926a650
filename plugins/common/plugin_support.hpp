// What every plugin (native, interp, opencl, cuda) shares: the calling thread's last_error,
// logging through the host, the guard that keeps C++ exceptions from crossing the C ABI, the
// exported entry point, and buffer_fill's pattern check. The rest of plugins/common builds on
// it: descriptor.hpp (init's checks, the descriptor and device_info written as far as the
// host's struct_size reaches), handles.hpp (the registry of live handles), and for the plugins
// that run on the host CPU, synchronously (native, interp), host_plugin.hpp with
// host_device.hpp, host_memory.hpp and sync_queue.hpp. exports.map is every plugin's version
// script. Header-only, so that a plugin still links nothing of plexus: each shared library
// gets its own copy of this state (hidden visibility, and the version script).
#pragma once

#include <plexus/plugin.h>

#include <cstddef>
#include <exception>
#include <initializer_list>
#include <new>
#include <string>
#include <string_view>

namespace plx_support {

// How a plugin names itself in its messages: "native: queue_create: not a native device".
// Every plugin has a traits struct `Plugin` in its namespace with `static constexpr Names
// names`; the templates of plugins/common take it as their parameter.
struct Names {
    const char* plugin;   // "native"
    const char* a_plugin; // with its article: "a native", "an interp"
};

// ---- last_error -------------------------------------------------------------------------

inline thread_local std::string tl_last_error;

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

// fail() with the message put together from `parts`, which cannot throw on the way.
inline plx_status fail_parts(plx_status status,
                             std::initializer_list<std::string_view> parts) noexcept {
    try {
        std::string message;
        for (std::string_view part : parts)
            message += part;
        tl_last_error = std::move(message);
    } catch (...) {
        tl_last_error.clear();
    }
    return status;
}

inline const char* last_error_text() noexcept {
    return tl_last_error.c_str();
}

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

// buffer_fill's pattern, in every plugin: pattern_bytes is 1, 2, 4 or 8 and bytes a multiple
// of it. `prefix` starts the message: "native: buffer_fill: ".
inline plx_status check_fill_pattern(const char* prefix, size_t pattern_bytes, size_t bytes) {
    if (pattern_bytes != 1 && pattern_bytes != 2 && pattern_bytes != 4 && pattern_bytes != 8)
        return fail(PLX_ERROR_INVALID_ARGUMENT,
                    prefix + ("pattern_bytes is " + std::to_string(pattern_bytes) +
                              ", must be 1, 2, 4 or 8"));
    if (bytes % pattern_bytes != 0)
        return fail(PLX_ERROR_INVALID_ARGUMENT, prefix + ("bytes (" + std::to_string(bytes) +
                                                          ") is not a multiple of pattern_bytes (" +
                                                          std::to_string(pattern_bytes) + ")"));
    return PLX_OK;
}

// ---- the host's services ----------------------------------------------------------------

// What the plugin keeps of the host's table from init until shutdown.
struct HostServices {
    void* ctx = nullptr;
    void (*log)(void* host_ctx, plx_log_level level, const char* msg) = nullptr;
};
inline HostServices g_host;

// Keeps the host's context and log, read only where they lie inside the host's struct_size;
// nullptr (shutdown) forgets them.
inline void set_host(const plx_host_api* host) noexcept {
    g_host = HostServices{};
    if (host && host->struct_size >= offsetof(plx_host_api, log) + sizeof host->log) {
        g_host.ctx = host->host_ctx;
        g_host.log = host->log;
    }
}

// The plugin's section of the configuration as JSON text, or nullptr when the host's table
// is too old to hold it.
inline const char* host_options(const plx_host_api* host) noexcept {
    if (host &&
        host->struct_size >= offsetof(plx_host_api, options_json) + sizeof host->options_json)
        return host->options_json;
    return nullptr;
}

// Logs through the host, when it lent a log. Messages name the plugin themselves
// ("native: 8 threads").
inline void log(plx_log_level level, const std::string& message) noexcept {
    if (g_host.log) g_host.log(g_host.ctx, level, message.c_str());
}

// ---- the guard --------------------------------------------------------------------------

// The status for the exception being handled, with last_error "<plugin>: [<fn>: ]out of host
// memory" or "<plugin>: [<fn>: ]internal error: <what>". Called only from a catch block.
inline plx_status caught(const Names& names, const char* fn) noexcept {
    const std::string_view where = fn ? fn : "";
    const std::string_view colon = fn ? ": " : "";
    try {
        throw;
    } catch (const std::bad_alloc&) {
        return fail_parts(PLX_ERROR_OUT_OF_MEMORY,
                          {names.plugin, ": ", where, colon, "out of host memory"});
    } catch (const std::exception& e) {
        return fail_parts(PLX_ERROR_INTERNAL,
                          {names.plugin, ": ", where, colon, "internal error: ", e.what()});
    } catch (...) {
        return fail_parts(PLX_ERROR_INTERNAL, {names.plugin, ": ", where, colon,
                                               "internal error: an exception of unknown type"});
    }
}

// An entry of the descriptor behind the guard: std::bad_alloc while building a message, or a
// bug caught as a logic_error, becomes a status instead of crossing the C ABI.
// guarded<Plugin, F> is the function the descriptor points at.
template <class Plugin, auto F> struct Guarded;
template <class Plugin, typename... Args, plx_status (*F)(Args...)> struct Guarded<Plugin, F> {
    static plx_status call(Args... args) noexcept {
        try {
            return F(args...);
        } catch (...) {
            return caught(Plugin::names, nullptr);
        }
    }
};
template <class Plugin, auto F> constexpr auto guarded = &Guarded<Plugin, F>::call;

// plx_plugin_init behind the guard: "<plugin>: init: out of host memory".
template <class Plugin, auto Init>
plx_status guarded_init(uint32_t host_abi_version, const plx_host_api* host,
                        plx_plugin* plugin) noexcept {
    try {
        return Init(host_abi_version, host, plugin);
    } catch (...) {
        return caught(Plugin::names, "init");
    }
}

} // namespace plx_support

// Defines the one symbol a plugin exports, plx_plugin_init, as the plugin's `init` behind the
// guard; `Plugin` is its traits struct. The version script exports.map keeps everything else
// inside the library.
#define PLX_DEFINE_PLUGIN_INIT(Plugin, init)                                                       \
    extern "C" PLX_EXPORT plx_status plx_plugin_init(                                              \
        uint32_t host_abi_version, const plx_host_api* host, plx_plugin* plugin) {                 \
        return ::plx_support::guarded_init<Plugin, init>(host_abi_version, host, plugin);          \
    }
