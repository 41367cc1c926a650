// Entry point of the CUDA backend plugin: fills the plx_plugin descriptor (identity,
// languages, intrinsic table, functions), opens the driver and enumerates the GPUs.
#include "cuda_plugin.hpp"

namespace plx_cuda {
namespace {

// Preferred first: PTX is what the core generates; CUDA C needs NVRTC; the binary is what
// module_get_binary returns, for caches; routines (cuBLAS) last, since the core generates code
// in the first language it can, and it generates no routine.
const plx_language kLanguages[] = {PLX_LANG_PTX, PLX_LANG_CUDA_C, PLX_LANG_CUDA_BINARY,
                                   PLX_LANG_ROUTINE};

// Every catalog intrinsic, with the catalog's standard spelling (NULL).
#define PLX_CATALOG_CLASSES PLX_CLASS_ALL
const plx_intrinsic kIntrinsics[] = {
#define PLX_INTRINSIC(name, signature, convergence, opencl_c, cuda_c, nvvm) {#name, NULL, NULL, 0},
#include <plexus/intrinsics.def>
#undef PLX_INTRINSIC
};

void shutdown() {
    release_devices();
    stop_copy_pool();
    plx_support::set_host(nullptr);
}

plx_plugin make_descriptor() {
    // Every entry but buffer_host_ptr (device memory has no host address) and launch_host (the
    // core never hands this plugin host functions); the ABI 1.1 ones whatever the driver (one
    // lacking what an entry needs makes it answer PLX_ERROR_UNSUPPORTED).
    return PLX_JIT_DESCRIPTOR(
        plx_support::Identity("cuda", 100, PLX_EXEC_JIT, kLanguages, kIntrinsics, shutdown));
}

plx_status init(uint32_t host_abi_version, const plx_host_api* host, plx_plugin* plugin) {
    if (plx_status s = plx_support::check_descriptor(Plugin::names, plugin); s != PLX_OK) return s;
    // Even a host of another major gets the prefix both definitions share (the name, the
    // version, last_error); struct_size then says how much was written.
    plx_support::fill_descriptor(plugin, make_descriptor());
    if (plx_status s = plx_support::check_abi(Plugin::names, host_abi_version); s != PLX_OK)
        return s;
    plx_support::set_host(host);
    if (plx_status s = load_driver(); s != PLX_OK) return s;
    return enumerate_devices();
}

} // namespace
} // namespace plx_cuda

PLX_DEFINE_PLUGIN_INIT(plx_cuda::Plugin, plx_cuda::init)
