/* A plugin linked against libplexus-fakedep.so, which the test leaves out of reach. */
#include "fake_common.h"

int fake_dep_value(void);

PLX_EXPORT plx_status plx_plugin_init(uint32_t host_abi_version, const plx_host_api* host,
                                      plx_plugin* plugin) {
    (void)host_abi_version;
    (void)host;
    fake_fill(plugin, "needsdep");
    plugin->priority = fake_dep_value();
    return PLX_OK;
}
