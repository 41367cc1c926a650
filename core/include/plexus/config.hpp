// plexus::Config: the JSON configuration that selects, ranks and tunes backends (see
// docs/configuration.md for every key); parsing checks every key and names file and JSON path.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace plexus {

// One `backends.NAME` section. Unset optionals keep the plugin's own defaults.
struct BackendConfig {
    std::optional<bool> enabled;
    std::optional<int> priority;         // overrides the plugin's default priority
    std::optional<std::string> devices;  // "all", "gpu", "cpu", "accelerator" or a name substring
    std::optional<unsigned> threads;     // >= 1; meaningful for native
    std::optional<std::string> compiler; // "llvm" or "nvrtc"; meaningful for cuda
    // The CPU and features host code is compiled for (a Direct backend: native); unset, the
    // host's own. A CPU name LLVM knows ("znver4", "x86-64-v3") and "+avx2,-avx512f".
    std::optional<std::string> cpu, features;
    // A Direct backend's launch whose buffers take at least this many bytes runs the
    // kernel's streaming twin (HostKernel::streaming_function); `never` for false. Unset: the
    // last-level cache of the CPUs that run it (executor.cpp, streaming_bytes).
    static constexpr uint64_t never = UINT64_MAX;
    std::optional<uint64_t> streaming_stores;
    nlohmann::json section = nlohmann::json::object(); // the raw section, given to the plugin
};

// One `kernels.NAME` section.
struct KernelConfig {
    std::vector<std::string> prefer; // backend names, tried first, in this order
};

// When a plugin's init first runs in a child process (see docs/configuration.md).
enum class PluginValidation {
    FirstLoad, // a file not validated before (path, size, mtime, content): once, then cached
    Always,    // every load that would run init in this process, ignoring every cache
    Never,     // init runs in this process straight away, as before validation existed
};
const char* to_string(PluginValidation v); // "first_load", "always", "never"

// How a launch that several devices can run picks one (docs/routing.md).
enum class Routing {
    Priority, // the router's ranking: the kernel's prefer list, priority, device score
    // The smallest predicted time: the kernel's timed launches of the launch's size on each
    // device, plus moving its buffers there at the links' measured bandwidth; the ranking
    // decides until every candidate has been timed.
    Measured,
};
const char* to_string(Routing r); // "priority", "measured"

struct Config {
    std::vector<std::string> plugin_dirs; // absolute after parsing
    bool use_env_plugin_path = true;      // read PLEXUS_PLUGIN_PATH (never when setuid)
    bool use_install_dir = true;          // search <libdir>/plexus/plugins last
    std::map<std::string, BackendConfig> backends;
    std::map<std::string, KernelConfig> kernels;
    bool fallback = true;
    // Launch events carry device timestamps (Event::seconds()). Off, they only order and
    // wait, which costs the device and the host less per launch.
    bool profiling = false;
    std::string cache_dir = default_cache_dir(); // '~' expanded
    std::string log_level = "warn";              // trace, debug, info, warn, error, off
    // A Chrome/Perfetto trace of each Runtime's work, written when the Runtime is destroyed
    // ("" = none; PLEXUS_TRACE overrides). docs/configuration.md#trace.
    std::string trace;
    PluginValidation validate_plugins = PluginValidation::FirstLoad;
    // How long a validation child may take to open, initialize and list the devices of one
    // plugin before it is killed and the plugin reported timed_out.
    unsigned plugin_init_timeout_ms = 10000;
    // Threads that compile kernels ahead of their launches (Runtime::prepare); 0: the
    // hardware's threads, at most 8.
    unsigned compile_threads = 0;
    // Kernel families (plexus/family.hpp): "auto" (true) measures the variants a device can
    // run at the first launch of each (family, device, shape bucket) and keeps the fastest,
    // stored under cache_dir/tuning; "off" (false) takes the family's heuristic and any
    // choice stored before. The budget bounds one tuning's wall time, compiles included: the
    // heuristic's variant is always measured, each other one if the longest a candidate has
    // taken so far still fits.
    bool tuning = true;
    unsigned tuning_budget_ms = 2000;
    Routing routing = Routing::Priority;
    std::string source; // the file it came from, "" for defaults

    // Parses a configuration document; `origin` names it in errors and anchors relative
    // plugin_dirs (its directory). Throws Error(InvalidConfig) naming origin and JSON path.
    static Config parse(std::string_view json_text, const std::string& origin);
    // Reads and parses a file; a missing or unreadable file is an InvalidConfig error.
    static Config from_file(const std::string& path);
    // PLEXUS_CONFIG, else $XDG_CONFIG_HOME/plexus/config.json (or ~/.config/plexus/config.json)
    // when it exists, else defaults; PLEXUS_LOG overrides log_level, PLEXUS_TRACE trace. In a
    // setuid or setgid process the environment and the user's file are ignored: defaults only.
    static Config load();

    // $XDG_CACHE_HOME/plexus, else ~/.cache/plexus; "" (no disk cache) in a setuid or
    // setgid process, whose home directory belongs to the user who ran it.
    static std::string default_cache_dir();
};

// Sets the level of plexus's logger (stderr) from a log_level name; throws InvalidConfig on
// an unknown name.
void set_log_level(const std::string& level);

} // namespace plexus
