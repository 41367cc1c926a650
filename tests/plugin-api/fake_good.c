/* A plugin that keeps the contract. FAKE_NAME, FAKE_VENDOR, FAKE_PRIORITY and FAKE_DEVICES
 * make several distinct good plugins (and the no-devices one) from this one file. */
#include "fake_common.h"

#ifndef FAKE_NAME
#define FAKE_NAME "good"
#endif
#ifndef FAKE_VENDOR
#define FAKE_VENDOR "fakes inc."
#endif
#ifndef FAKE_PRIORITY
#define FAKE_PRIORITY 10
#endif
#ifndef FAKE_DEVICES
#define FAKE_DEVICES 1
#endif

PLX_EXPORT plx_status plx_plugin_init(uint32_t host_abi_version, const plx_host_api* host,
                                      plx_plugin* plugin) {
    if (PLX_VERSION_MAJOR(host_abi_version) != PLX_ABI_VERSION_MAJOR) return PLX_ERROR_ABI_MISMATCH;
    fake_fill(plugin, FAKE_NAME);
    plugin->vendor = FAKE_VENDOR;
    plugin->priority = FAKE_PRIORITY;
    fake_num_devices = FAKE_DEVICES;
    /* Prove the host API works: log through it, and read the options it passed. */
    if (host != NULL && host->log != NULL && host->options_json != NULL) {
        char msg[300];
        snprintf(msg, sizeof msg, "options %s", host->options_json);
        host->log(host->host_ctx, PLX_LOG_INFO, msg);
        fake_mark(msg);
    }
    return PLX_OK;
}
