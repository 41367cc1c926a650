// The interpreter plugin's entry point: descriptor, last_error, handle bookkeeping and
// shutdown. Only plx_plugin_init is exported.
#include "interp.hpp"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <new>

namespace plx_interp {
namespace {

bool g_initialized = false;
std::mutex g_init_mutex;

const plx_language kLanguages[] = {PLX_LANG_PLEXUS_IR2_JSON, PLX_LANG_PLEXUS_IR_JSON};

// Keeps C++ exceptions (std::bad_alloc while building a message, a bug caught as a
// logic_error) from crossing the C ABI.
template <auto F> struct Guarded;
template <typename... Args, plx_status (*F)(Args...)> struct Guarded<F> {
    static plx_status call(Args... args) noexcept {
        try {
            return F(args...);
        } catch (const std::bad_alloc&) {
            return fail(PLX_ERROR_OUT_OF_MEMORY, "interp: out of host memory");
        } catch (const std::exception& e) {
            return fail(PLX_ERROR_INTERNAL, std::string("interp: internal error: ") + e.what());
        }
    }
};
template <auto F> constexpr auto guarded = &Guarded<F>::call;

const char* plugin_last_error() { return last_error_text(); }

void plugin_shutdown() {
    std::lock_guard lock(g_init_mutex);
    if (!g_initialized) return;
    plx_support::release_all_tracked("interp");
    HostMemory::release_all();
    plx_support::g_host = nullptr;
    g_initialized = false;
}

plx_plugin make_descriptor() {
    uint32_t num_intrinsics = 0;
    const plx_intrinsic* intrinsics = intrinsic_table(&num_intrinsics);
    return plx_plugin{
        .struct_size = sizeof(plx_plugin),
        .abi_version = PLX_ABI_VERSION,
        .name = "interp",
        .version = "1.0.0",
        .vendor = "plexus",
        .priority = 5,
        .execution_model = PLX_EXEC_CUSTOM,
        .languages = kLanguages,
        .num_languages = sizeof kLanguages / sizeof kLanguages[0],
        .intrinsics = intrinsics,
        .num_intrinsics = num_intrinsics,
        .last_error = plugin_last_error,
        .shutdown = plugin_shutdown,
        .device_count = guarded<device_count>,
        .device_get = guarded<device_get>,
        .device_info = guarded<device_info>,
        .buffer_alloc = guarded<buffer_alloc>,
        .buffer_free = buffer_free,
        .buffer_write = guarded<buffer_write>,
        .buffer_read = guarded<buffer_read>,
        .buffer_copy = guarded<buffer_copy>,
        .buffer_fill = guarded<buffer_fill>,
        // Custom: the host never reaches into device memory directly.
        .buffer_host_ptr = nullptr,
        .queue_create = guarded<queue_create>,
        .queue_sync = guarded<queue_sync>,
        .queue_destroy = queue_destroy,
        .module_load = guarded<module_load>,
        .module_unload = module_unload,
        .module_get_binary = nullptr,
        .kernel_get = guarded<kernel_get>,
        .launch = guarded<launch>,
        .launch_host = nullptr,
        .event_wait = guarded<event_wait>,
        .event_profile = guarded<event_profile>,
        .event_release = event_release,
        // 1.1. Everything runs synchronously: a marker is complete when it is made, an
        // asynchronous transfer is done when it returns.
        .queue_marker = guarded<queue_marker>,
        .queue_wait_event = guarded<queue_wait_event>,
        .buffer_write_async = guarded<buffer_write_async>,
        .buffer_read_async = guarded<buffer_read_async>,
        .buffer_copy_peer = guarded<buffer_copy_peer>,
        .host_alloc = guarded<HostMemory::host_alloc>,
        .host_free = HostMemory::host_free,
        .buffer_wrap = guarded<HostMemory::buffer_wrap>,
        // The buffer's host address; the host reads memory only through buffer_read.
        .buffer_native = guarded<HostMemory::buffer_native>,
        // No native queue: commands run on the calling thread.
        .queue_native = nullptr,
    };
}

plx_status init(uint32_t host_abi_version, const plx_host_api* host, plx_plugin* plugin) {
    if (PLX_VERSION_MAJOR(host_abi_version) != PLX_ABI_VERSION_MAJOR)
        return fail(PLX_ERROR_ABI_MISMATCH,
                    "interp: init: host ABI " + std::to_string(PLX_VERSION_MAJOR(host_abi_version)) +
                        "." + std::to_string(PLX_VERSION_MINOR(host_abi_version)) +
                        ", plugin ABI " + std::to_string(PLX_ABI_VERSION_MAJOR) + "." +
                        std::to_string(PLX_ABI_VERSION_MINOR));
    if (!plugin) return fail(PLX_ERROR_INVALID_ARGUMENT, "interp: init: plugin is NULL");
    if (plugin->struct_size < sizeof(uint32_t))
        return fail(PLX_ERROR_INVALID_ARGUMENT, "interp: init: plugin->struct_size is " +
                                                    std::to_string(plugin->struct_size));

    std::lock_guard lock(g_init_mutex);
    if (g_initialized)
        return fail(PLX_ERROR_INVALID_ARGUMENT,
                    "interp: init: already initialized; call shutdown first");
    // The interpreter has no options of its own; the keys of its section belong to the host.
    std::string catalog_error;
    if (!catalog_setup(catalog_error))
        return fail(PLX_ERROR_INTERNAL, "interp: init: " + catalog_error);
    device_setup();
    plx_support::g_host = host;
    g_initialized = true;

    // Fill what the host's descriptor holds, and say how much that is.
    const plx_plugin full = make_descriptor();
    const size_t n = std::min<size_t>(plugin->struct_size, sizeof(plx_plugin));
    std::memcpy(reinterpret_cast<char*>(plugin) + sizeof(uint32_t),
                reinterpret_cast<const char*>(&full) + sizeof(uint32_t), n - sizeof(uint32_t));
    plugin->struct_size = static_cast<uint32_t>(n);
    return PLX_OK;
}

} // namespace

} // namespace plx_interp

extern "C" PLX_EXPORT plx_status plx_plugin_init(uint32_t host_abi_version,
                                                 const plx_host_api* host, plx_plugin* plugin) {
    try {
        return plx_interp::init(host_abi_version, host, plugin);
    } catch (const std::bad_alloc&) {
        return plx_interp::fail(PLX_ERROR_OUT_OF_MEMORY, "interp: init: out of host memory");
    } catch (const std::exception& e) {
        return plx_interp::fail(PLX_ERROR_INTERNAL, std::string("interp: init: ") + e.what());
    }
}
