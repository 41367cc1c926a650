/* Plugins that take their process down, for the isolation tests. FAKE_CRASH chooses how:
 * 1 SIGSEGV in init, 2 abort() in init, 3 init never returns, 4 exit(0) in init, 5 a thread
 * started by init crashes just after init returned, 6 launch_host crashes (init is fine). */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include "fake_common.h"

#ifndef FAKE_NAME
#define FAKE_NAME "crash"
#endif

/* Read through a volatile pointer, so that the compiler cannot see the NULL and replace the
 * store with a trap instruction (which would be SIGILL, not the SIGSEGV of a real bug). */
static int* volatile null_pointer = NULL;

FAKE_STATIC void* crash_soon(void* arg) {
    (void)arg;
    const struct timespec soon = {0, 20 * 1000 * 1000};
    nanosleep(&soon, NULL);
    *null_pointer = 1;
    return NULL;
}

FAKE_STATIC plx_status crashing_launch_host(plx_queue q, plx_workgroup_fn fn, void* user,
                                            const plx_launch_dims* dims, plx_event* event) {
    (void)q, (void)fn, (void)user, (void)dims, (void)event;
    *null_pointer = 1;
    return PLX_OK;
}

FAKE_STATIC const plx_intrinsic all_intrinsics[] = {
#define PLX_INTRINSIC(id, signature, convergence, opencl_c, cuda_c, nvvm)                          \
    {.name = #id, .spelling = NULL, .host_fn = NULL, .flags = PLX_INTRINSIC_INLINE},
#include "plexus/intrinsics.def"
#undef PLX_INTRINSIC
};

PLX_EXPORT plx_status plx_plugin_init(uint32_t host_abi_version, const plx_host_api* host,
                                      plx_plugin* plugin) {
    (void)host_abi_version, (void)host;
    fake_fill(plugin, FAKE_NAME); /* marks "init" */
#if FAKE_CRASH != 6
    fprintf(stderr, "fake %s: about to misbehave\n", FAKE_NAME);
    fflush(stderr);
#endif
#if FAKE_CRASH == 1
    *null_pointer = 1;
#elif FAKE_CRASH == 2
    abort();
#elif FAKE_CRASH == 3
    for (;;)
        sleep(1);
#elif FAKE_CRASH == 4
    exit(0);
#elif FAKE_CRASH == 5
    pthread_t thread;
    if (pthread_create(&thread, NULL, crash_soon, NULL) != 0)
        return fake_fail(PLX_ERROR_INTERNAL, "no thread");
    pthread_detach(thread);
#elif FAKE_CRASH == 6
    plugin->launch_host = crashing_launch_host;
    plugin->intrinsics = all_intrinsics;
    plugin->num_intrinsics = sizeof all_intrinsics / sizeof all_intrinsics[0];
#endif
    return PLX_OK;
}
