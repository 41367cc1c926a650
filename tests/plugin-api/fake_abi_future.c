/* A plugin of a future major ABI. FAKE_VIA_STATUS: init refuses with PLX_ERROR_ABI_MISMATCH;
 * otherwise init "succeeds" but its descriptor says 2.0. */
#include "fake_common.h"

PLX_EXPORT plx_status plx_plugin_init(uint32_t host_abi_version, const plx_host_api* host,
                                      plx_plugin* plugin) {
    (void)host;
    (void)host_abi_version;
#ifdef FAKE_VIA_STATUS
    fake_fill(plugin, "future_status"); /* the marker file's name; the plugin's is "future" */
#else
    fake_fill(plugin, "future_descriptor");
#endif
    plugin->name = "future";
    plugin->abi_version = PLX_MAKE_VERSION(2, 3);
#ifdef FAKE_VIA_STATUS
    return fake_fail(PLX_ERROR_ABI_MISMATCH, "needs plugin ABI 2");
#else
    return PLX_OK;
#endif
}
