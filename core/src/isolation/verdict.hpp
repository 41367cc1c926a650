// What a validation child found out about a plugin file (its verdict), and what identifies that
// file (its fingerprint: path, size, modification time, content, and the init options).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace plexus::detail {

enum class VerdictResult {
    Unchecked, // not validated (validate_plugins "never", no helper, already open here, ...)
    Passed,    // the child opened, initialized, listed devices and shut it down, and exited
    Crashed,   // the child died of a signal or exited inside the plugin's code
    TimedOut,  // the child was killed at the time limit
};

const char* to_string(VerdictResult r); // "unchecked", "passed", "crashed", "timed_out"

struct Verdict {
    VerdictResult result = VerdictResult::Unchecked;
    int signal = 0;      // Crashed: the signal, 0 when the child exited
    int exit_status = 0; // Crashed without a signal: the status it exited with
    std::string stage;   // the step the child had reached: open, init, devices, grace, shutdown
    std::string name;    // the plugin's name, once its init gave one
    std::string message; // Crashed, TimedOut: the load report's message; else why unchecked
    std::string outcome; // Passed: how the load went in the child ("loaded", "init_failed", ...)
    std::string child_message; // Passed: the child's load message
    std::string output;        // the last lines the child printed
    double ms = 0;             // how long the child ran
    bool from_cache = false;

    // The plugin must not be opened in this process.
    bool refused() const {
        return result == VerdictResult::Crashed || result == VerdictResult::TimedOut;
    }
};

struct Fingerprint {
    std::string realpath;
    uint64_t size = 0;
    int64_t mtime_ns = 0;
    uint64_t content = 0; // FNV-1a 64 of the whole file
    uint64_t options = 0; // FNV-1a 64 of the options JSON its init gets
    // One line of every field and of this host's version: two fingerprints with the same key
    // are the same file given the same options by the same plexus.
    std::string key() const;
};

// The fingerprint of the file at `path` (resolved), or nullopt with `error` set.
std::optional<Fingerprint> fingerprint(const std::string& path, const std::string& options_json,
                                       std::string& error);

// The verdict cache's file format (JSON); parse_verdict returns nullopt for anything that is
// not a well-formed verdict of exactly this fingerprint key.
std::string format_verdict(const Fingerprint& fp, const Verdict& v);
std::optional<Verdict> parse_verdict(std::string_view text, const std::string& key);
// The plugin path recorded in a verdict file, "" when there is none (for pruning).
std::string verdict_path(std::string_view text);

} // namespace plexus::detail
