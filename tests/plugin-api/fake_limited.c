/* A good plugin, ranked above `good`, whose launches of more than 4096 work-items fail with
 * PLX_ERROR_OUT_OF_RESOURCES: the next backend must take them, also after a launch of the
 * same kernel went here. */
#include "fake_common.h"

static plx_status limited_launch_host(plx_queue q, plx_workgroup_fn fn, void* user,
                                      const plx_launch_dims* dims, plx_event* event) {
    if (dims->global_size[0] > 4096)
        return fake_fail(PLX_ERROR_OUT_OF_RESOURCES,
                         "the limited fake runs at most 4096 work-items");
    return fake_launch_host(q, fn, user, dims, event);
}

PLX_EXPORT plx_status plx_plugin_init(uint32_t host_abi_version, const plx_host_api* host,
                                      plx_plugin* plugin) {
    (void)host;
    if (PLX_VERSION_MAJOR(host_abi_version) != PLX_ABI_VERSION_MAJOR) return PLX_ERROR_ABI_MISMATCH;
    fake_fill(plugin, "limited");
    plugin->priority = 20;
    plugin->launch_host = limited_launch_host;
    return PLX_OK;
}
