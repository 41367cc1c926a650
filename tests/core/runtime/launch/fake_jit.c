/* A JIT backend that does nothing on the device, for measuring the host's own launch path: it
 * takes any OpenCL C, launches nothing and, like the CUDA plugin on a queue without profiling,
 * hands out an event for every launch that records nothing until someone waits. Its calls
 * allocate nothing, so every allocation and instruction of a launch through it is the core's. */
#include "plugin-api/fake_common.h"

struct plx_module_s {
    int unused;
};
struct plx_kernel_s {
    int unused;
};
struct plx_event_s {
    int unused;
};
static struct plx_module_s jit_module;
static struct plx_kernel_s jit_kernel;
/* Every event is this one: nothing runs, so each is complete as soon as it is made. */
static struct plx_event_s jit_event;

static const plx_language jit_languages[] = {PLX_LANG_OPENCL_C};

static plx_status jit_module_load(plx_device d, plx_language lang, const char* source, size_t bytes,
                                  const char* options, plx_module* m) {
    (void)d, (void)lang, (void)source, (void)bytes, (void)options;
    *m = &jit_module;
    return PLX_OK;
}

static plx_status jit_kernel_get(plx_module m, const char* name, plx_kernel* k) {
    (void)m, (void)name;
    *k = &jit_kernel;
    return PLX_OK;
}

static plx_status jit_launch(plx_queue q, plx_kernel k, const plx_launch_dims* dims,
                             const plx_arg* args, uint32_t num_args, plx_event* event) {
    (void)q, (void)k, (void)dims, (void)args, (void)num_args;
    if (event != NULL) *event = &jit_event;
    return PLX_OK;
}

static plx_status jit_event_wait(plx_event e) {
    (void)e;
    return PLX_OK;
}
static void jit_event_release(plx_event e) {
    (void)e;
}
static plx_status jit_queue_marker(plx_queue q, plx_event* e) {
    (void)q;
    *e = &jit_event;
    return PLX_OK;
}

PLX_EXPORT plx_status plx_plugin_init(uint32_t host_abi_version, const plx_host_api* host,
                                      plx_plugin* plugin) {
    (void)host;
    if (PLX_VERSION_MAJOR(host_abi_version) != PLX_ABI_VERSION_MAJOR) return PLX_ERROR_ABI_MISMATCH;
    fake_fill(plugin, "fakejit");
    plugin->execution_model = PLX_EXEC_JIT;
    plugin->languages = jit_languages;
    plugin->num_languages = 1;
    plugin->buffer_host_ptr = NULL;
    plugin->launch_host = NULL;
    plugin->module_load = jit_module_load;
    plugin->kernel_get = jit_kernel_get;
    plugin->launch = jit_launch;
    plugin->event_wait = jit_event_wait;
    plugin->event_release = jit_event_release;
    plugin->queue_marker = jit_queue_marker;
    return PLX_OK;
}
