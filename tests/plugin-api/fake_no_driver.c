/* Its vendor library is not installed: PLX_ERROR_NO_DRIVER with the plugin's own words. */
#include "fake_common.h"

PLX_EXPORT plx_status plx_plugin_init(uint32_t host_abi_version, const plx_host_api* host,
                                      plx_plugin* plugin) {
    (void)host_abi_version;
    (void)host;
    plugin->name = "nodriver";
    plugin->last_error = fake_last_error;
    return fake_fail(PLX_ERROR_NO_DRIVER, "libfakevendor.so.1 is not installed");
}
