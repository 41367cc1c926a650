// Child processes for work that must not take the host down: started with posix_spawn (safe in
// a process that holds threads or GPU contexts, unlike fork), each in a process group of its
// own, with a time limit, a report pipe on fd 3 and its output captured.
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace plexus::detail {

struct ChildSpec {
    std::vector<std::string> argv; // argv[0] is the path of the executable
    std::vector<std::string>
        extra_env; // "NAME=value", replacing NAME in this process's environment
    // The time limit counts from the child's first report byte: loading the child program
    // (libplexus, LLVM) on a loaded machine must not count against the code it then runs.
    // Before that byte, `startup` more is allowed.
    std::chrono::milliseconds limit{10000};
    std::chrono::milliseconds startup{10000};
};

struct ChildResult {
    std::string start_error; // posix_spawn failed: why; nothing below is meaningful
    bool timed_out = false;  // killed, with its process group, at the limit
    bool exited = false;     // ended through exit(): exit_status holds its status
    int exit_status = 0;
    int signal = 0; // ended by this signal (SIGKILL after a time-out)
    bool status_lost =
        false;          // the host reaps children itself (SIGCHLD ignored): only the pipes tell
    std::string report; // everything the child wrote to fd 3
    std::string output; // the last bytes the child wrote to stdout and stderr
    double ms = 0;      // from the spawn to the end
};

// Starts every child at once and waits for all of them, each up to its limit. A child that
// outlives its limit is killed with its whole process group; so are processes a child left
// behind when it ended. Never throws for a child that misbehaves.
std::vector<ChildResult> run_children(const std::vector<ChildSpec>& specs);

// "SIGSEGV"; "signal 42" for one without a name.
std::string signal_name(int signal);
// "segmentation fault", from strsignal.
std::string signal_description(int signal);

} // namespace plexus::detail
