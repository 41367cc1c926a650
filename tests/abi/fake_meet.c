/* Two plugins (FAKE_NAME, FAKE_PEER) whose inits must overlap: each leaves NAME.PID.started in
 * FAKE_MARKER_DIR and waits up to 20 s for its peer's file from the same process. Loaded one
 * after another, the first init gives up and fails; loaded at once, both succeed. A
 * validation child (another process, no peer) does not wait. */
#include <time.h>
#include <unistd.h>

#include "fake_common.h"

static int fake_marker_path(char* out, size_t size, const char* name) {
    const char* dir = getenv("FAKE_MARKER_DIR");
    if (dir == NULL) return 0;
    snprintf(out, size, "%s/%s.%ld.started", dir, name, (long)getpid());
    return 1;
}

PLX_EXPORT plx_status plx_plugin_init(uint32_t host_abi_version, const plx_host_api* host,
                                      plx_plugin* plugin) {
    (void)host;
    if (PLX_VERSION_MAJOR(host_abi_version) != PLX_ABI_VERSION_MAJOR) return PLX_ERROR_ABI_MISMATCH;
    fake_fill(plugin, FAKE_NAME);
    if (fake_in_validation_child()) return PLX_OK;
    char mine[1024], peer[1024];
    if (!fake_marker_path(mine, sizeof mine, FAKE_NAME) || !fake_marker_path(peer, sizeof peer, FAKE_PEER))
        return fake_fail(PLX_ERROR_INTERNAL, "FAKE_MARKER_DIR is not set");
    FILE* f = fopen(mine, "w");
    if (f == NULL) return fake_fail(PLX_ERROR_INTERNAL, "cannot write the start marker");
    fclose(f);
    for (int i = 0; i < 2000; ++i) {
        if (access(peer, F_OK) == 0) return PLX_OK;
        struct timespec ten_ms = {0, 10 * 1000 * 1000};
        nanosleep(&ten_ms, NULL);
    }
    return fake_fail(PLX_ERROR_DEVICE, "init ran alone: " FAKE_PEER "'s init did not start while this one waited");
}
