/* A Custom backend written before "plexus-ir/2.1", as a third party's may be: it lists the IR
 * languages PLX_LANG_PLEXUS_IR_JSON and _IR2_JSON, keeps each document the core hands it in
 * $FAKE_IR_DIR/KERNEL.LANGUAGE.json (LANGUAGE the plx_language value), and runs nothing. The
 * test reads back what a Custom plugin is given (tests/core/compile/custom_ir_test.cpp). */
#include "../../plugin-api/fake_common.h"

struct plx_module_s {
    int unused;
};
struct plx_kernel_s {
    int unused;
};
static struct plx_module_s ir_module;
static struct plx_kernel_s ir_kernel;

static const plx_language ir_languages[] = {PLX_LANG_PLEXUS_IR2_JSON, PLX_LANG_PLEXUS_IR_JSON};

/* The kernel's name from the document: the value of its first "name" key, which the core's
 * writer (sorted keys, one space of indent) puts at the top level before any nested one. */
static void kernel_name(const char* doc, size_t bytes, char* out, size_t size) {
    snprintf(out, size, "unnamed");
    const char* key = "\n \"name\": \"";
    for (size_t i = 0; i + strlen(key) < bytes; ++i) {
        if (strncmp(doc + i, key, strlen(key)) != 0) continue;
        const char* start = doc + i + strlen(key);
        size_t n = 0;
        while (start + n < doc + bytes && start[n] != '"' && n + 1 < size)
            ++n;
        memcpy(out, start, n);
        out[n] = '\0';
        return;
    }
}

static plx_status ir_module_load(plx_device d, plx_language lang, const char* source, size_t bytes,
                                 const char* options, plx_module* m) {
    (void)d, (void)options;
    const char* dir = getenv("FAKE_IR_DIR");
    if (dir == NULL) return fake_fail(PLX_ERROR_INTERNAL, "FAKE_IR_DIR is not set");
    char name[128], path[1024];
    kernel_name(source, bytes, name, sizeof name);
    snprintf(path, sizeof path, "%s/%s.%d.json", dir, name, (int)lang);
    FILE* f = fopen(path, "w");
    if (f == NULL) return fake_fail(PLX_ERROR_INTERNAL, "cannot write the document");
    fwrite(source, 1, bytes, f);
    fclose(f);
    *m = &ir_module;
    return PLX_OK;
}

static plx_status ir_kernel_get(plx_module m, const char* name, plx_kernel* k) {
    (void)m, (void)name;
    *k = &ir_kernel;
    return PLX_OK;
}

static plx_status ir_launch(plx_queue q, plx_kernel k, const plx_launch_dims* dims,
                            const plx_arg* args, uint32_t num_args, plx_event* event) {
    (void)q, (void)k, (void)dims, (void)args, (void)num_args;
    if (event != NULL) *event = NULL;
    return PLX_OK;
}

PLX_EXPORT plx_status plx_plugin_init(uint32_t host_abi_version, const plx_host_api* host,
                                      plx_plugin* plugin) {
    (void)host;
    if (PLX_VERSION_MAJOR(host_abi_version) != PLX_ABI_VERSION_MAJOR) return PLX_ERROR_ABI_MISMATCH;
    fake_fill(plugin, "fakeir");
    plugin->execution_model = PLX_EXEC_CUSTOM;
    plugin->languages = ir_languages;
    plugin->num_languages = 2;
    plugin->launch_host = NULL;
    plugin->module_load = ir_module_load;
    plugin->kernel_get = ir_kernel_get;
    plugin->launch = ir_launch;
    return PLX_OK;
}
