// Entry point of the CUDA backend plugin: fills the plx_plugin descriptor (identity,
// languages, intrinsic table, functions), opens the driver and enumerates the GPUs.
#include "cuda_internal.hpp"

#include <algorithm>
#include <cstring>

namespace plexus::cuda {
namespace {

// Preferred first: PTX is what the core generates; CUDA C needs NVRTC; the binary is what
// module_get_binary returns, for caches.
const plx_language kLanguages[] = {PLX_LANG_PTX, PLX_LANG_CUDA_C, PLX_LANG_CUDA_BINARY};

// Every catalog intrinsic, with the catalog's standard spelling (NULL).
const plx_intrinsic kIntrinsics[] = {
#define PLX_INTRINSIC(name, signature, convergence, opencl_c, cuda_c, nvvm) {#name, NULL, NULL, 0},
#include <plexus/intrinsics.def>
#undef PLX_INTRINSIC
};

const char* last_error() { return last_error_text(); }

void shutdown() {
    release_devices();
    stop_copy_pool();
    set_host(nullptr);
}

plx_plugin make_descriptor() {
    plx_plugin p{};
    p.struct_size = sizeof(plx_plugin);
    p.abi_version = PLX_ABI_VERSION;
    p.name = "cuda";
    p.version = "1.0.0";
    p.vendor = "plexus";
    p.priority = 100;
    p.execution_model = PLX_EXEC_JIT;
    p.languages = kLanguages;
    p.num_languages = sizeof kLanguages / sizeof kLanguages[0];
    p.intrinsics = kIntrinsics;
    p.num_intrinsics = sizeof kIntrinsics / sizeof kIntrinsics[0];
    p.last_error = last_error;
    p.shutdown = shutdown;
    p.device_count = device_count;
    p.device_get = device_get;
    p.device_info = device_info;
    p.buffer_alloc = buffer_alloc;
    p.buffer_free = buffer_free;
    p.buffer_write = buffer_write;
    p.buffer_read = buffer_read;
    p.buffer_copy = buffer_copy;
    p.buffer_fill = buffer_fill;
    p.buffer_host_ptr = nullptr; // device memory has no host address
    p.queue_create = queue_create;
    p.queue_sync = queue_sync;
    p.queue_destroy = queue_destroy;
    p.module_load = module_load;
    p.module_unload = module_unload;
    p.module_get_binary = module_get_binary;
    p.kernel_get = kernel_get;
    p.launch = launch;
    p.launch_host = nullptr; // JIT: the core never hands this plugin host functions
    p.event_wait = event_wait;
    p.event_profile = event_profile;
    p.event_release = event_release;
    // ABI 1.1
    p.queue_marker = queue_marker;
    p.queue_wait_event = queue_wait_event;
    p.buffer_write_async = buffer_write_async;
    p.buffer_read_async = buffer_read_async;
    p.buffer_copy_peer = buffer_copy_peer;
    p.host_alloc = host_alloc;
    p.host_free = host_free;
    p.buffer_wrap = buffer_wrap;
    p.buffer_native = buffer_native;
    p.queue_native = queue_native;
    return p;
}

} // namespace
} // namespace plexus::cuda

extern "C" PLX_EXPORT plx_status plx_plugin_init(uint32_t host_abi_version, const plx_host_api* host,
                                                 plx_plugin* plugin) {
    using namespace plexus::cuda;
    if (plugin == nullptr || plugin->struct_size < sizeof(uint32_t))
        return set_error(PLX_ERROR_INVALID_ARGUMENT, "cuda: plx_plugin_init: plugin is NULL or its struct_size is 0");
    // Write the prefix both definitions share; struct_size then says how much was written.
    const plx_plugin descriptor = make_descriptor();
    const size_t size = std::min<size_t>(plugin->struct_size, sizeof descriptor);
    std::memcpy(plugin, &descriptor, size);
    plugin->struct_size = static_cast<uint32_t>(size);

    if (PLX_VERSION_MAJOR(host_abi_version) != PLX_ABI_VERSION_MAJOR)
        return set_error(PLX_ERROR_ABI_MISMATCH,
                         "cuda: the plugin implements plexus plugin ABI " +
                             std::to_string(PLX_ABI_VERSION_MAJOR) + "." + std::to_string(PLX_ABI_VERSION_MINOR) +
                             ", the host " + std::to_string(PLX_VERSION_MAJOR(host_abi_version)) + "." +
                             std::to_string(PLX_VERSION_MINOR(host_abi_version)));
    set_host(host);
    if (plx_status s = load_driver(); s != PLX_OK) return s;
    return enumerate_devices();
}
