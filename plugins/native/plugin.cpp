// The native plugin's entry point: descriptor, options, last_error, handle bookkeeping and
// shutdown. Only plx_plugin_init is exported.
#include "native.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <new>
#include <thread>

namespace plx_native {
namespace {

bool g_initialized = false;
std::mutex g_init_mutex;

// The core's LLVM host code generator emits every catalog intrinsic inline; listing them all
// tells the router this backend accepts any kernel the catalog can express.
const plx_intrinsic kIntrinsics[] = {
#define PLX_INTRINSIC(id, signature, convergence, opencl_c, cuda_c, nvvm)                          \
    {.name = #id, .spelling = "", .host_fn = nullptr, .flags = PLX_INTRINSIC_INLINE},
#include <plexus/intrinsics.def>
#undef PLX_INTRINSIC
};

// Reads `threads` from the plugin's options; other keys of the section (enabled, priority,
// devices) belong to the host, which has already checked them.
bool parse_options(const char* text, uint32_t& threads) {
    const unsigned hw = std::thread::hardware_concurrency();
    threads = std::clamp<unsigned>(hw, 1, kMaxThreads);
    nlohmann::json options;
    try {
        options = nlohmann::json::parse(text ? text : "{}");
    } catch (const nlohmann::json::parse_error& e) {
        fail(PLX_ERROR_INVALID_ARGUMENT,
             std::string("native: init: options are not valid JSON: ") + e.what());
        return false;
    }
    if (!options.is_object()) {
        fail(PLX_ERROR_INVALID_ARGUMENT,
             "native: init: options must be a JSON object, got " + options.dump());
        return false;
    }
    const auto it = options.find("threads");
    if (it == options.end()) return true;
    const bool ok = (it->is_number_unsigned() || it->is_number_integer()) &&
                    it->get<int64_t>() >= 1 && it->get<int64_t>() <= kMaxThreads;
    if (!ok) {
        fail(PLX_ERROR_INVALID_ARGUMENT,
             "native: init: option \"threads\" must be an integer from 1 to " +
                 std::to_string(kMaxThreads) + ", got " + it->dump());
        return false;
    }
    threads = static_cast<uint32_t>(it->get<int64_t>());
    return true;
}

// Keeps C++ exceptions (std::bad_alloc while building a message) from crossing the C ABI.
template <auto F> struct Guarded;
template <typename... Args, plx_status (*F)(Args...)> struct Guarded<F> {
    static plx_status call(Args... args) noexcept {
        try {
            return F(args...);
        } catch (const std::bad_alloc&) {
            return fail(PLX_ERROR_OUT_OF_MEMORY, "native: out of host memory");
        } catch (const std::exception& e) {
            return fail(PLX_ERROR_INTERNAL, std::string("native: internal error: ") + e.what());
        }
    }
};
template <auto F> constexpr auto guarded = &Guarded<F>::call;

const char* plugin_last_error() {
    return last_error_text();
}

void plugin_shutdown() {
    std::lock_guard lock(g_init_mutex);
    if (!g_initialized) return;
    pool_stop();
    plx_support::release_all_tracked("native");
    HostMemory::release_all();
    device_teardown();
    plx_support::g_host = nullptr;
    g_initialized = false;
}

plx_plugin make_descriptor() {
    return plx_plugin{
        .struct_size = sizeof(plx_plugin),
        .abi_version = PLX_ABI_VERSION,
        .name = "native",
        .version = "1.0.0",
        .vendor = "plexus",
        .priority = 50,
        .execution_model = PLX_EXEC_DIRECT,
        .languages = nullptr,
        .num_languages = 0,
        .intrinsics = kIntrinsics,
        .num_intrinsics = sizeof kIntrinsics / sizeof kIntrinsics[0],
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
        .buffer_host_ptr = buffer_host_ptr,
        .queue_create = guarded<queue_create>,
        .queue_sync = guarded<queue_sync>,
        .queue_destroy = queue_destroy,
        // Direct: no source is compiled here, the core hands over host functions.
        .module_load = nullptr,
        .module_unload = nullptr,
        .module_get_binary = nullptr,
        .kernel_get = nullptr,
        .launch = nullptr,
        .launch_host = guarded<launch_host>,
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
        .buffer_native = guarded<HostMemory::buffer_native>,
        // No native queue: commands run on the calling thread and the worker pool.
        .queue_native = nullptr,
    };
}

// Copies what the host's descriptor holds and says how much that is.
void fill_descriptor(plx_plugin* plugin, const plx_plugin& ours) {
    const size_t n = std::min<size_t>(plugin->struct_size, sizeof(plx_plugin));
    std::memcpy(reinterpret_cast<char*>(plugin) + sizeof(uint32_t),
                reinterpret_cast<const char*>(&ours) + sizeof(uint32_t), n - sizeof(uint32_t));
    plugin->struct_size = static_cast<uint32_t>(n);
}

plx_status start(const plx_host_api* host) {
    std::lock_guard lock(g_init_mutex);
    if (g_initialized)
        return fail(PLX_ERROR_INVALID_ARGUMENT,
                    "native: init: already initialized; call shutdown first");
    const char* options = nullptr;
    if (host && host->struct_size >= offsetof(plx_host_api, options_json) + sizeof(const char*))
        options = host->options_json;
    uint32_t threads = 0;
    if (!parse_options(options, threads)) return PLX_ERROR_INVALID_ARGUMENT;
    if (!device_setup(threads)) return PLX_ERROR_DEVICE;
    if (!pool_start(threads)) {
        device_teardown();
        return PLX_ERROR_OUT_OF_RESOURCES;
    }
    plx_support::g_host = host;
    g_initialized = true;
    log(PLX_LOG_DEBUG, "native: " + std::to_string(threads) + " threads");
    return PLX_OK;
}

plx_status init(uint32_t host_abi_version, const plx_host_api* host, plx_plugin* plugin) {
    // Another major may lay the descriptor out differently: leave it untouched.
    if (PLX_VERSION_MAJOR(host_abi_version) != PLX_ABI_VERSION_MAJOR)
        return fail(PLX_ERROR_ABI_MISMATCH,
                    "native: init: host ABI " +
                        std::to_string(PLX_VERSION_MAJOR(host_abi_version)) + "." +
                        std::to_string(PLX_VERSION_MINOR(host_abi_version)) + ", plugin ABI " +
                        std::to_string(PLX_ABI_VERSION_MAJOR) + "." +
                        std::to_string(PLX_ABI_VERSION_MINOR));
    if (!plugin) return fail(PLX_ERROR_INVALID_ARGUMENT, "native: init: plugin is NULL");
    if (plugin->struct_size < sizeof(uint32_t))
        return fail(PLX_ERROR_INVALID_ARGUMENT,
                    "native: init: plugin->struct_size is " + std::to_string(plugin->struct_size));
    const plx_status status = start(host);
    plx_plugin ours = make_descriptor();
    if (status != PLX_OK) {
        // The loader still gets our identity and the message; no other entry may be called.
        plx_plugin identity{};
        identity.struct_size = sizeof(plx_plugin);
        identity.abi_version = ours.abi_version;
        identity.name = ours.name;
        identity.version = ours.version;
        identity.vendor = ours.vendor;
        identity.priority = ours.priority;
        identity.execution_model = ours.execution_model;
        identity.last_error = ours.last_error;
        ours = identity;
    }
    fill_descriptor(plugin, ours);
    return status;
}

} // namespace

} // namespace plx_native

extern "C" PLX_EXPORT plx_status plx_plugin_init(uint32_t host_abi_version,
                                                 const plx_host_api* host, plx_plugin* plugin) {
    try {
        return plx_native::init(host_abi_version, host, plugin);
    } catch (const std::bad_alloc&) {
        return plx_native::fail(PLX_ERROR_OUT_OF_MEMORY, "native: init: out of host memory");
    } catch (const std::exception& e) {
        return plx_native::fail(PLX_ERROR_INTERNAL, std::string("native: init: ") + e.what());
    }
}
