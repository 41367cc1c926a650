/* A plugin whose init succeeds but whose descriptor breaks one rule, chosen by FAKE_BREAK. */
#include <stddef.h>

#include "fake_common.h"

static const plx_language no_languages[1] = {PLX_LANG_UNSET};

PLX_EXPORT plx_status plx_plugin_init(uint32_t host_abi_version, const plx_host_api* host,
                                      plx_plugin* plugin) {
    (void)host_abi_version;
    (void)host;
    fake_fill(plugin, "contract");
#if FAKE_BREAK == 1
    plugin->name = "";
#elif FAKE_BREAK == 2
    plugin->name = NULL;
#elif FAKE_BREAK == 3
    plugin->last_error = NULL;
#elif FAKE_BREAK == 4
    plugin->device_count = NULL;
#elif FAKE_BREAK == 5
    plugin->execution_model = PLX_EXEC_UNSET;
#elif FAKE_BREAK == 6
    plugin->execution_model = (plx_exec_model)42;
#elif FAKE_BREAK == 7
    plugin->execution_model = PLX_EXEC_JIT; /* and no languages */
#elif FAKE_BREAK == 8
    static const plx_language langs[] = {PLX_LANG_OPENCL_C};
    plugin->execution_model = PLX_EXEC_JIT;
    plugin->languages = langs;
    plugin->num_languages = 1; /* but no module_load / launch */
#elif FAKE_BREAK == 9
    plugin->launch_host = NULL;
#elif FAKE_BREAK == 10
    plugin->struct_size = offsetof(plx_plugin, buffer_alloc);
#elif FAKE_BREAK == 11
    plugin->name = "Has Spaces";
#elif FAKE_BREAK == 12
    plugin->abi_version = 0;
#elif FAKE_BREAK == 13
    plugin->execution_model = PLX_EXEC_CUSTOM;
    plugin->languages = no_languages;
    plugin->num_languages = 1;
#else
#error "FAKE_BREAK selects the broken rule"
#endif
    (void)no_languages;
    return PLX_OK;
}
