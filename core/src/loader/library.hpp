// The process-wide registry of opened plugin libraries: each file is dlopen'ed and initialized
// once, shared by every Runtime that uses it, and shut down when the last one lets go.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "plexus/backend.hpp"
#include "plexus/plugin.h"

namespace plexus::detail {

// An initialized plugin whose descriptor passed every check and that has devices.
struct PluginLibrary {
    std::string path;     // as found
    std::string realpath; // the registry's key
    std::string log_name; // prefix of the plugin's log messages, fixed before init
    std::string options_json;
    void* handle = nullptr;
    plx_host_api host{};
    plx_plugin api{};
    std::vector<plx_device> device_handles;
    std::vector<DeviceInfo> devices;
};

struct OpenResult {
    LoadOutcome outcome = LoadOutcome::NotAPlugin;
    std::string message;
    std::string name;            // whatever the plugin said, even on failure
    std::string execution_model; // likewise
    int priority = 0;
    int signal = 0;                               // Crashed: the signal of the validation child
    std::shared_ptr<const PluginLibrary> library; // set only when outcome is Loaded
};

// Called just before each step that runs the plugin's own code: "open" (dlopen, which runs
// its constructors), "init", "devices" and "shutdown", with the plugin's name once its init
// has given one (else nullptr). The validation child reports them, so that a crash names the
// step it happened in.
using StageFn = void (*)(const char* stage, const char* plugin_name);

// The integer a plugin stored in an enum field. Loading an enum object whose value is not one
// of its enumerators is undefined behaviour in C++ (UBSan stops there), and a plugin may
// store anything, so its enums are read as integers until they are checked.
template <class E> uint32_t raw_enum(const E& field) {
    static_assert(sizeof(E) == sizeof(uint32_t));
    uint32_t v;
    std::memcpy(&v, &field, sizeof v);
    return v;
}

// Opens, initializes and checks the plugin at `path` (or shares the copy already open).
// Never throws for a broken plugin: every failure is an outcome with a message. Thread-safe:
// different libraries initialize concurrently; a second open of one waits for the first.
OpenResult open_plugin(const std::string& path, const std::string& options_json,
                       StageFn stage = nullptr);

// Whether the plugin at this real path is initialized in this process now (or stays open
// because its descriptor has another major ABI).
bool plugin_is_open(const std::string& realpath);

} // namespace plexus::detail
