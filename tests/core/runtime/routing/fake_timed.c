/* A Direct backend whose speed a test sets: it runs the kernel as fake_common.h does, then
 * sleeps `launch_us` microseconds per launch, and `write_us` per host-to-device write (its
 * configuration section's "options": {"launch_us": N, "write_us": N}). Built twice under two
 * names, it gives measured routing two devices whose times the test controls. */
#define _POSIX_C_SOURCE 199309L /* nanosleep under -std=c99 */
#include "plugin-api/fake_common.h"

#include <time.h>

#ifndef FAKE_NAME
#define FAKE_NAME "timed"
#endif

static long launch_us, write_us;

static void sleep_us(long us) {
    struct timespec t = {us / 1000000, (us % 1000000) * 1000};
    while (us > 0 && nanosleep(&t, &t) != 0) {
    }
}

/* The integer after "key": in the options text, or 0. */
static long option(const char* json, const char* key) {
    const char* at = json ? strstr(json, key) : NULL;
    if (at == NULL) return 0;
    at = strchr(at + strlen(key), ':');
    return at ? strtol(at + 1, NULL, 10) : 0;
}

static plx_status timed_launch_host(plx_queue q, plx_workgroup_fn fn, void* user,
                                    const plx_launch_dims* dims, plx_event* event) {
    plx_status s = fake_launch_host(q, fn, user, dims, event);
    sleep_us(launch_us);
    return s;
}

static plx_status timed_buffer_write(plx_queue q, plx_buffer b, size_t off, const void* src,
                                     size_t n) {
    plx_status s = fake_buffer_write(q, b, off, src, n);
    sleep_us(write_us);
    return s;
}

PLX_EXPORT plx_status plx_plugin_init(uint32_t host_abi_version, const plx_host_api* host,
                                      plx_plugin* plugin) {
    if (PLX_VERSION_MAJOR(host_abi_version) != PLX_ABI_VERSION_MAJOR) return PLX_ERROR_ABI_MISMATCH;
    fake_fill(plugin, FAKE_NAME);
    const char* options = host != NULL ? host->options_json : NULL;
    launch_us = option(options, "\"launch_us\"");
    write_us = option(options, "\"write_us\"");
    plugin->launch_host = timed_launch_host;
    plugin->buffer_write = timed_buffer_write;
    return PLX_OK;
}
