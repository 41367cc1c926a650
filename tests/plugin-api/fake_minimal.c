/* A plugin that leaves every optional function of plugin.h NULL: it wraps a real backend of
 * this build (INNER_PLUGIN, a path) and hands on only the required functions, as a plugin
 * built against ABI 1.0 (its descriptor ends where 1.0's did, before queue_marker), so that the
 * abi suite proves the core runs every sample without the optional ones and that a 1.0 plugin
 * still loads and works synchronously. MINIMAL_NAME names it. */
#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "plexus/plugin.h"

static void* g_inner_handle;
static plx_plugin g_inner;
static char g_error[512];

static const char* minimal_last_error(void) {
    return g_error;
}

/* The host never calls shutdown (it is NULL here), so the wrapped plugin is shut down when
 * the host unloads this library. */
__attribute__((destructor)) static void minimal_unload(void) {
    if (g_inner_handle == NULL) return;
    if (g_inner.shutdown != NULL) g_inner.shutdown();
    dlclose(g_inner_handle);
    g_inner_handle = NULL;
}

PLX_EXPORT plx_status plx_plugin_init(uint32_t host_abi_version, const plx_host_api* host,
                                      plx_plugin* plugin) {
    if (PLX_VERSION_MAJOR(host_abi_version) != PLX_ABI_VERSION_MAJOR) return PLX_ERROR_ABI_MISMATCH;
    plugin->name = MINIMAL_NAME;
    plugin->last_error = minimal_last_error;
    g_inner_handle = dlopen(INNER_PLUGIN, RTLD_NOW | RTLD_LOCAL);
    if (g_inner_handle == NULL) {
        snprintf(g_error, sizeof g_error, "cannot open %s: %s", INNER_PLUGIN, dlerror());
        return PLX_ERROR_NO_DRIVER;
    }
    plx_plugin_init_fn init = (plx_plugin_init_fn)dlsym(g_inner_handle, PLX_PLUGIN_INIT_SYMBOL);
    memset(&g_inner, 0, sizeof g_inner);
    g_inner.struct_size = sizeof g_inner;
    plx_status s = init != NULL ? init(host_abi_version, host, &g_inner) : PLX_ERROR_INTERNAL;
    if (s != PLX_OK) {
        snprintf(g_error, sizeof g_error, "%s: init returned %d: %s", INNER_PLUGIN, (int)s,
                 g_inner.last_error != NULL ? g_inner.last_error() : "no entry point");
        dlclose(g_inner_handle);
        g_inner_handle = NULL;
        return PLX_ERROR_INTERNAL;
    }
    plx_plugin d = g_inner;
    d.struct_size = (uint32_t)offsetof(plx_plugin, queue_marker); /* ABI 1.0's descriptor */
    d.abi_version = PLX_MAKE_VERSION(1, 0);
    d.name = MINIMAL_NAME;
    d.shutdown = NULL;
    d.buffer_copy = NULL;
    d.buffer_fill = NULL;
    d.module_unload = NULL;
    d.module_get_binary = NULL;
    d.event_wait = NULL;
    d.event_profile = NULL;
    d.event_release = NULL;
    uint32_t size = plugin->struct_size < d.struct_size ? plugin->struct_size : d.struct_size;
    memcpy(plugin, &d, size);
    plugin->struct_size = size;
    return PLX_OK;
}
