// The interpreter plugin's entry point: descriptor, last_error, handle bookkeeping and
// shutdown. Only plx_plugin_init is exported.
#include "interp_plugin.hpp"

#include <mutex>

namespace plx_interp {
namespace {

bool g_initialized = false;
std::mutex g_init_mutex;

const plx_language kLanguages[] = {PLX_LANG_PLEXUS_IR2_JSON, PLX_LANG_PLEXUS_IR_JSON};

void plugin_shutdown() {
    std::lock_guard lock(g_init_mutex);
    if (!g_initialized) return;
    Host::release_all();
    g_initialized = false;
}

plx_plugin make_descriptor() {
    uint32_t num_intrinsics = 0;
    const plx_intrinsic* intrinsics = intrinsic_table(&num_intrinsics);
    plx_plugin descriptor = plx_support::describe({.name = "interp",
                                                   .priority = 5,
                                                   .execution_model = PLX_EXEC_CUSTOM,
                                                   .languages = kLanguages,
                                                   .intrinsics = {intrinsics, num_intrinsics},
                                                   .shutdown = plugin_shutdown});
    Host::set_entries(descriptor);
    PLX_HOST_BUFFER_ENTRIES(PLX_SET_ENTRY)
    // Custom: the host never reaches into device memory directly (no buffer_host_ptr), and
    // hands over no host functions (no launch_host).
    PLX_SET_ENTRY(module_load)
    PLX_SET_ENTRY(module_unload)
    PLX_SET_ENTRY(kernel_get)
    PLX_SET_ENTRY(launch)
    return descriptor;
}

plx_status init(uint32_t host_abi_version, const plx_host_api* host, plx_plugin* plugin) {
    if (plx_status s = plx_support::check_init(Plugin::names, host_abi_version, plugin);
        s != PLX_OK)
        return s;
    std::lock_guard lock(g_init_mutex);
    if (g_initialized)
        return fail(PLX_ERROR_INVALID_ARGUMENT,
                    "interp: init: already initialized; call shutdown first");
    // The interpreter has no options of its own; the keys of its section belong to the host.
    std::string catalog_error;
    if (!catalog_setup(catalog_error))
        return fail(PLX_ERROR_INTERNAL, "interp: init: " + catalog_error);
    device_setup();
    plx_support::set_host(host);
    g_initialized = true;
    plx_support::fill_descriptor(plugin, make_descriptor());
    return PLX_OK;
}

} // namespace

} // namespace plx_interp

PLX_DEFINE_PLUGIN_INIT(plx_interp::Plugin, plx_interp::init)
