// plexus::diagnose, what `plexus doctor` prints: every plugin validated afresh in a child
// process, every device of every plugin that loads exercised in a child process of its own, and
// for each a diagnosis and what to do about it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "plexus/backend.hpp"
#include "plexus/config.hpp"

namespace plexus {

enum class Severity {
    Ok,      // works
    Note,    // not usable here, and that may be fine (no driver for hardware this machine lacks)
    Problem, // broken: a program using it fails or crashes
};
const char* to_string(Severity s); // "ok", "note", "problem"

// One check a device went through: "queue", "allocate", "write", "read", "copy", "fill",
// "free", "kernel" (compile and launch a vector addition, compare every element); or, for
// diagnose_plugin, one per capability class claimed.
struct CheckStep {
    std::string name;
    bool ok = false;
    std::string message;
};

struct DeviceDiagnosis {
    uint32_t index = 0;
    DeviceInfo info;
    Severity severity = Severity::Ok;
    std::vector<CheckStep> steps; // in order, up to the one that failed
    std::string summary;          // one line
    std::string advice;           // what to do; "" when nothing
};

struct PluginDiagnosis {
    LoadReportEntry entry;            // from a validation run in a child process
    Severity severity = Severity::Ok; // the worst of the plugin's and its devices'
    std::string summary;
    std::string advice;
    std::vector<DeviceDiagnosis> devices; // a plugin that loaded: one per device
};

struct Diagnosis {
    std::string config_source;            // "" for defaults
    std::vector<PluginDiagnosis> plugins; // in discovery order
    size_t count(Severity s) const;
};

// Loads the plugins of `config` with validate_plugins "always" (every plugin's init runs in a
// child first; the verdict cache is refreshed, never read) and exercises each device of each
// plugin that loaded in a child process, so that a plugin that crashes or hangs in any step
// is diagnosed, not fatal. Plugins already open in this process are not validated again.
// `device_limit_ms` bounds the check of one device. Throws only for an invalid configuration.
Diagnosis diagnose(Config config, unsigned device_limit_ms = 120000);

// Conformance of one plugin file, for its author (`plexus doctor --plugin FILE`): validated in a
// child process like any plugin, then on each of its devices, in a child process, a small
// kernel per capability class it claims (each class of intrinsics.def its table lists rows of;
// per device, each subgroup family and matrix type its device bits state) is compiled, run on
// it alone and checked against a host reference. A device's steps are named for the classes
// ("core", "atomics", "math", "subgroup basic", ..., "matrix f16"); a claim the device fails is
// a Problem, listed with the mismatch or the build log. The file needs no particular name or
// folder; the configuration's backends.NAME options apply. Throws InvalidArgument when `file`
// is not a file.
Diagnosis diagnose_plugin(const std::string& file, Config config,
                          unsigned device_limit_ms = 120000);

} // namespace plexus
