/* Two plugins (FAKE_NAME, FAKE_PEER) that must never initialize at the same time in one
 * process: each leaves NAME.PID.running in FAKE_MARKER_DIR for 200 ms of its init and fails if
 * its peer's file from the same process appears meanwhile. Loaded one after another, as the
 * host does, both succeed; run at once, at least one fails. A validation child (another
 * process) does not wait. */
#include <time.h>
#include <unistd.h>

#include "fake_common.h"

static int fake_marker_path(char* out, size_t size, const char* name) {
    const char* dir = getenv("FAKE_MARKER_DIR");
    if (dir == NULL) return 0;
    snprintf(out, size, "%s/%s.%ld.running", dir, name, (long)getpid());
    return 1;
}

PLX_EXPORT plx_status plx_plugin_init(uint32_t host_abi_version, const plx_host_api* host,
                                      plx_plugin* plugin) {
    (void)host;
    if (PLX_VERSION_MAJOR(host_abi_version) != PLX_ABI_VERSION_MAJOR) return PLX_ERROR_ABI_MISMATCH;
    fake_fill(plugin, FAKE_NAME);
    if (fake_in_validation_child()) return PLX_OK;
    char mine[1024], peer[1024];
    if (!fake_marker_path(mine, sizeof mine, FAKE_NAME) ||
        !fake_marker_path(peer, sizeof peer, FAKE_PEER))
        return fake_fail(PLX_ERROR_INTERNAL, "FAKE_MARKER_DIR is not set");
    FILE* f = fopen(mine, "w");
    if (f == NULL) return fake_fail(PLX_ERROR_INTERNAL, "cannot write the running marker");
    fclose(f);
    int overlapped = access(peer, F_OK) == 0;
    for (int i = 0; i < 20 && !overlapped; ++i) {
        struct timespec ten_ms = {0, 10 * 1000 * 1000};
        nanosleep(&ten_ms, NULL);
        overlapped = access(peer, F_OK) == 0;
    }
    unlink(mine);
    return overlapped
               ? fake_fail(PLX_ERROR_DEVICE, "init overlapped " FAKE_PEER "'s init in this process")
               : PLX_OK;
}
