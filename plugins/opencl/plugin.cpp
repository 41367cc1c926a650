// The OpenCL plugin's entry point: the descriptor (identity, language, intrinsic table), init and
// shutdown, and the per-thread last error and host logging every other file uses.
#include "plx_opencl.hpp"

#include <cstdio>
#include <cstring>

namespace plx_ocl {
namespace {

thread_local std::string t_last_error;

// The host's services, copied at init; only the fields inside its struct_size are read.
struct HostServices {
    void* ctx = nullptr;
    void (*log)(void*, plx_log_level, const char*) = nullptr;
};
HostServices g_host;

const plx_language kLanguages[] = {PLX_LANG_OPENCL_C};

// Every catalog intrinsic with its standard OpenCL C spelling (NULL spelling). The 64-bit
// atomics are listed too although they need cl_khr_int64_base_atomics / extended_atomics: the
// table is per plugin, not per device, so the router cannot tell devices apart here. A device
// without them rejects such a kernel at module_load with PLX_ERROR_COMPILE, and the router then
// falls back to the next candidate.
const plx_intrinsic kIntrinsics[] = {
#define PLX_INTRINSIC(id, signature, convergence, opencl_c, cuda_c, nvvm)                          \
    {.name = #id, .spelling = NULL, .host_fn = NULL, .flags = 0},
#include <plexus/intrinsics.def>
#undef PLX_INTRINSIC
};

void shutdown() {
    module_release_all();
    device_release_all();
    g_host = HostServices{};
}

plx_plugin make_descriptor() {
    plx_plugin d{};
    d.struct_size = sizeof(plx_plugin);
    d.abi_version = PLX_ABI_VERSION;
    d.name = "opencl";
    d.version = "1.0.0";
    d.vendor = "plexus";
    d.priority = 90;
    d.execution_model = PLX_EXEC_JIT;
    d.languages = kLanguages;
    d.num_languages = sizeof kLanguages / sizeof kLanguages[0];
    d.intrinsics = kIntrinsics;
    d.num_intrinsics = sizeof kIntrinsics / sizeof kIntrinsics[0];
    d.last_error = &last_error;
    d.shutdown = &shutdown;
    d.device_count = &device_count;
    d.device_get = &device_get;
    d.device_info = &device_info;
    d.buffer_alloc = &buffer_alloc;
    d.buffer_free = &buffer_free;
    d.buffer_write = &buffer_write;
    d.buffer_read = &buffer_read;
    d.buffer_copy = &buffer_copy;
    d.buffer_fill = &buffer_fill;
    d.buffer_host_ptr = nullptr; // JIT: device memory has no host address
    d.queue_create = &queue_create;
    d.queue_sync = &queue_sync;
    d.queue_destroy = &queue_destroy;
    d.module_load = &module_load;
    d.module_unload = &module_unload;
    d.module_get_binary = &module_get_binary; // the device's own binary, for the disk cache
    d.kernel_get = &kernel_get;
    d.launch = &launch;
    d.launch_host = nullptr;
    d.event_wait = &event_wait;
    d.event_profile = &event_profile;
    d.event_release = &event_release;
    // 1.1
    d.queue_marker = &queue_marker;
    d.queue_wait_event = &queue_wait_event; // blocks the host for another device's event
    d.buffer_write_async = &buffer_write_async;
    d.buffer_read_async = &buffer_read_async;
    d.buffer_copy_peer = &buffer_copy_peer; // always PLX_ERROR_UNSUPPORTED: separate contexts
    d.host_alloc = &host_alloc;
    d.host_free = &host_free;
    d.buffer_wrap = &buffer_wrap;
    d.buffer_native = &buffer_native;
    d.queue_native = &queue_native;
    return d;
}

// Fills the fields that fit the host's struct and tells it how many were written.
void fill_descriptor(plx_plugin* out) {
    const plx_plugin d = make_descriptor();
    const size_t n = out->struct_size < sizeof d ? out->struct_size : sizeof d;
    std::memcpy(out, &d, n);
    if (n >= sizeof out->struct_size) out->struct_size = static_cast<uint32_t>(n);
}

} // namespace

std::string strf(const char* fmt, ...) {
    va_list args;
    va_start(args, fmt);
    va_list copy;
    va_copy(copy, args);
    const int n = std::vsnprintf(nullptr, 0, fmt, copy);
    va_end(copy);
    std::string out;
    if (n > 0) {
        out.resize(static_cast<size_t>(n));
        std::vsnprintf(out.data(), out.size() + 1, fmt, args);
    }
    va_end(args);
    return out;
}

plx_status fail(plx_status status, std::string message) {
    t_last_error = std::move(message);
    return status;
}

plx_status fail_cl(plx_status status, const char* call, cl_int code, const std::string& context) {
    std::string message = cl_error_text(call, code);
    if (!context.empty()) message += ": " + context;
    return fail(status, std::move(message));
}

plx_status fail_create(const char* call, cl_int code, const char* device_name) {
    const bool memory = code == CL_OUT_OF_HOST_MEMORY || code == CL_OUT_OF_RESOURCES;
    return fail_cl(memory ? PLX_ERROR_OUT_OF_MEMORY : PLX_ERROR_DEVICE, call, code, strf("device '%s'", device_name));
}

const char* last_error() {
    return t_last_error.c_str();
}

void log(plx_log_level level, const std::string& message) {
    if (g_host.log != nullptr) g_host.log(g_host.ctx, level, ("opencl: " + message).c_str());
}

} // namespace plx_ocl

extern "C" PLX_EXPORT plx_status plx_plugin_init(uint32_t host_abi_version,
                                                 const plx_host_api* host, plx_plugin* plugin) {
    using namespace plx_ocl;
    if (plugin == nullptr)
        return fail(PLX_ERROR_INVALID_ARGUMENT, "plx_plugin_init: plugin is NULL");
    // A host of another major version may lay the descriptor out differently: write nothing.
    if (PLX_VERSION_MAJOR(host_abi_version) != PLX_ABI_VERSION_MAJOR) {
        return fail(PLX_ERROR_ABI_MISMATCH,
                    strf("the host speaks plugin ABI %u.%u, this plugin %u.%u",
                         PLX_VERSION_MAJOR(host_abi_version), PLX_VERSION_MINOR(host_abi_version),
                         PLX_ABI_VERSION_MAJOR, PLX_ABI_VERSION_MINOR));
    }
    // Fill the descriptor first so that the host can read name and last_error even on failure.
    fill_descriptor(plugin);

    g_host = HostServices{};
    if (host != nullptr) {
        const size_t size = host->struct_size;
        if (size >= offsetof(plx_host_api, host_ctx) + sizeof host->host_ctx)
            g_host.ctx = host->host_ctx;
        if (size >= offsetof(plx_host_api, log) + sizeof host->log) g_host.log = host->log;
    }

    std::string why;
    if (load_api(&why) == nullptr) {
        log(PLX_LOG_INFO, why);
        return fail(PLX_ERROR_NO_DRIVER, why);
    }
    const plx_status status = device_enumerate();
    if (status != PLX_OK) return status;
    // Zero devices is a successful init; say why for the loader's no_devices report.
    if (!no_device_reason().empty()) fail(PLX_OK, no_device_reason());
    return PLX_OK;
}
