/* init fails with its own message; FAKE_SILENT: it fails and has no last_error at all. */
#include "fake_common.h"

PLX_EXPORT plx_status plx_plugin_init(uint32_t host_abi_version, const plx_host_api* host,
                                      plx_plugin* plugin) {
    (void)host_abi_version;
    (void)host;
    plugin->name = "broken";
#ifdef FAKE_SILENT
    return PLX_ERROR_INTERNAL;
#else
    plugin->last_error = fake_last_error;
    return fake_fail(PLX_ERROR_DEVICE, "the fake widget is jammed");
#endif
}
