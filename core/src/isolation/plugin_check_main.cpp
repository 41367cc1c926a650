// plexus-plugin-check: the child process in which libplexus first runs a plugin's init, and in
// which `plexus doctor` exercises a device, so that a plugin that crashes or hangs there
// cannot take the host down. Installed in <libdir>/plexus; libplexus finds it beside itself.
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "isolation/probe.hpp"

// In a sanitizer build the child must die of the plugin's own signal, as it would in the
// host, not exit through the sanitizer's report; and a leak report would change its status.
#define PLEXUS_CHILD_SANITIZER_OPTIONS                                                             \
    "handle_segv=0:handle_sigbus=0:handle_abort=0:handle_sigfpe=0:handle_sigill=0:detect_leaks=0"
extern "C" const char* __asan_default_options() {
    return PLEXUS_CHILD_SANITIZER_OPTIONS;
}
extern "C" const char* __ubsan_default_options() {
    return PLEXUS_CHILD_SANITIZER_OPTIONS;
}
extern "C" const char* __tsan_default_options() {
    return PLEXUS_CHILD_SANITIZER_OPTIONS;
}

int main(int argc, char** argv) {
    // Killed with its parent (a host interrupted with ^C leaves no child running), and a
    // crashing plugin leaves no core file behind.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    for (int i = 1; i + 1 < argc; ++i)
        if (std::strcmp(argv[i], "--parent") == 0 && ::getppid() != std::atoi(argv[i + 1]))
            return 3;
    struct rlimit no_core{0, 0};
    ::setrlimit(RLIMIT_CORE, &no_core);
    return plexus::detail::plugin_check_main(argc, argv);
}
