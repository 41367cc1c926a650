// The OpenCL plugin's entry point: the descriptor (identity, language, intrinsic table), init and
// shutdown, and the message helpers every other file uses.
#include "opencl_plugin.hpp"

#include <cstdarg>
#include <cstdio>

namespace plx_opencl {
namespace {

const plx_language kLanguages[] = {PLX_LANG_OPENCL_C};

// Every catalog intrinsic of every class with its standard OpenCL C spelling (NULL spelling);
// each device narrows the subgroup and matrix classes with subgroup_ops and matrix_ops. The 64-bit
// atomics are listed too although they need cl_khr_int64_base_atomics / extended_atomics: the
// table is per plugin, not per device, so the router cannot tell devices apart here. A device
// without them rejects such a kernel at module_load with PLX_ERROR_COMPILE, and the router then
// falls back to the next candidate.
#define PLX_CATALOG_CLASSES PLX_CLASS_ALL
const plx_intrinsic kIntrinsics[] = {
#define PLX_INTRINSIC(id, signature, convergence, opencl_c, cuda_c, nvvm)                          \
    {.name = #id, .spelling = NULL, .host_fn = NULL, .flags = 0},
#include <plexus/intrinsics.def>
#undef PLX_INTRINSIC
};

void shutdown() {
    plx_support::release_all_tracked("opencl"); // the modules the host did not unload
    device_release_all();
    plx_support::set_host(nullptr);
}

plx_plugin make_descriptor() {
    // Every entry but buffer_host_ptr (device memory has no host address) and launch_host.
    // module_get_binary is the device's own binary, for the disk cache; queue_wait_event blocks
    // the host for another device's event; buffer_copy_peer is always PLX_ERROR_UNSUPPORTED
    // (each device has its own context).
    return PLX_JIT_DESCRIPTOR(
        plx_support::Identity("opencl", 90, PLX_EXEC_JIT, kLanguages, kIntrinsics, shutdown));
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

plx_status fail_cl(plx_status status, const char* call, cl_int code, const std::string& context) {
    std::string message = cl_error_text(call, code);
    if (!context.empty()) message += ": " + context;
    return fail(status, std::move(message));
}

plx_status fail_create(const char* call, cl_int code, const char* device_name) {
    const bool memory = code == CL_OUT_OF_HOST_MEMORY || code == CL_OUT_OF_RESOURCES;
    return fail_cl(memory ? PLX_ERROR_OUT_OF_MEMORY : PLX_ERROR_DEVICE, call, code,
                   strf("device '%s'", device_name));
}

namespace {

plx_status init(uint32_t host_abi_version, const plx_host_api* host, plx_plugin* plugin) {
    // A host of another major version may lay the descriptor out differently: write nothing.
    if (plx_status s = plx_support::check_init(Plugin::names, host_abi_version, plugin);
        s != PLX_OK)
        return s;
    // Fill the descriptor first so that the host can read name and last_error even on failure.
    plx_support::fill_descriptor(plugin, make_descriptor());
    plx_support::set_host(host);

    std::string why;
    if (load_api(&why) == nullptr) {
        log(PLX_LOG_INFO, "opencl: " + why);
        return fail(PLX_ERROR_NO_DRIVER, why);
    }
    const plx_status status = device_enumerate();
    if (status != PLX_OK) return status;
    // Zero devices is a successful init; say why for the loader's no_devices report.
    if (!no_device_reason().empty()) fail(PLX_OK, no_device_reason());
    return PLX_OK;
}

} // namespace

} // namespace plx_opencl

PLX_DEFINE_PLUGIN_INIT(plx_opencl::Plugin, plx_opencl::init)
