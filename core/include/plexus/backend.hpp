// plexus::Backend: one loaded plugin (its descriptor, devices and effective priority) and the
// load report that says what happened to every plugin file the loader found.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "plexus/error.hpp"
#include "plexus/plugin.h"

namespace plexus {

enum class ExecModel { JIT, Direct, Custom };
enum class DeviceType { CPU, GPU, Accelerator, Other };

const char* to_string(ExecModel m);    // "jit", "direct", "custom"
const char* to_string(DeviceType t);   // "cpu", "gpu", "accelerator", "other"
const char* to_string(plx_language l); // "ptx", "cuda_c", "opencl_c", "plexus_ir_json", ...
// The one mapping of a plugin's failure to the error users see: OUT_OF_MEMORY, COMPILE,
// OUT_OF_RESOURCES, LAUNCH, UNSUPPORTED and INVALID_ARGUMENT to their own codes, the rest to
// Device. (Backend::check applies it.)
ErrorCode error_code(plx_status s);
const char* status_name(plx_status s); // "PLX_ERROR_COMPILE"

struct DeviceInfo {
    std::string name, vendor, platform, arch;
    DeviceType type = DeviceType::Other;
    uint32_t compute_units = 0;
    uint32_t max_work_group_size = 0; // 0: unknown
    uint32_t subgroup_size = 1;
    uint32_t compute_capability = 0;
    std::array<uint32_t, 3> max_work_group_dims{};
    uint64_t memory_bytes = 0;
    uint64_t max_alloc_bytes = 0;
    uint64_t local_memory_bytes = 0;
    bool fp64 = false;
    std::array<uint8_t, 16> uuid{}; // all zero when the plugin does not know it
    std::string pci_bus_id;         // "0000:41:00.0", "" when unknown
    // The subgroup operations the device runs (PLX_SUBGROUP_* bits); unset when the plugin
    // predates ABI 1.2, whose intrinsic table alone then decides.
    std::optional<uint32_t> subgroup_ops;
    // The matrix fragments the device runs (PLX_MATRIX_* bits, PLX_MATRIX_EMULATED included);
    // unset when the plugin predates ABI 1.3.
    std::optional<uint32_t> matrix_ops;
    // True where the plugin (ABI 1.2 on; 1.3 on for matrices) left the field without its KNOWN
    // bit: the device then has none of those operations, and the router says that is why.
    bool subgroup_ops_unstated = false;
    bool matrix_ops_unstated = false;
    // "GPU-8f3a...": the UUID in the form nvidia-smi prints, "" when unknown.
    std::string uuid_string() const;
};

enum class LoadOutcome {
    Loaded,
    NotAPlugin,        // not a loadable library, no plx_plugin_init, or a broken manifest
    AbiMismatch,       // another major ABI version (manifest, init status or descriptor)
    InitFailed,        // init failed, or its descriptor breaks the contract
    MissingDependency, // a needed library or the vendor driver is not installed
    NoDevices,         // loaded fine but reports no device; unloaded again
    DisabledByConfig,  // backends.NAME.enabled is false
    Duplicate,         // a plugin of that name was already loaded; the first wins
    Crashed,           // its init crashed or ended the process in a validation child; not loaded
    TimedOut,          // its init did not return within plugin_init_timeout_ms there; not loaded
};

const char* to_string(LoadOutcome o); // "loaded", "not_a_plugin", ...

struct LoadReportEntry {
    std::string path; // the library, or the manifest when the library was never located
    std::string name; // "" when the file never said
    std::string message;
    LoadOutcome outcome = LoadOutcome::NotAPlugin;
    std::string execution_model; // "jit", "direct", "custom", or "" when unknown
    int priority = 0;            // effective (after config), when known
    int signal = 0;              // Crashed: the signal that ended the validation child, if one did
    std::vector<DeviceInfo> devices; // loaded plugins only
};

// Everything the router and the tools need to know about a backend, as plain data; unit tests
// build a Backend from this alone.
struct BackendDesc {
    std::string name, version, vendor, path;
    ExecModel exec_model = ExecModel::Direct;
    int plugin_priority = 0; // the plugin's own default
    int priority = 0;        // effective: the config's override, else plugin_priority
    std::vector<plx_language> languages;
    std::vector<std::string> intrinsics; // catalog names, standard spelling
    std::vector<DeviceInfo> devices;
};

class Backend {
public:
    // A backend with no plugin behind it (tests, tools): api() and device() throw.
    explicit Backend(BackendDesc desc);
    // Used by the loader: `api` and `handles` stay valid as long as `keepalive` lives.
    Backend(BackendDesc desc, const plx_plugin* api, std::vector<plx_device> handles,
            std::shared_ptr<const void> keepalive);
    Backend(const Backend&) = delete;
    Backend& operator=(const Backend&) = delete;

    const std::string& name() const { return desc_.name; }
    const std::string& version() const { return desc_.version; }
    const std::string& vendor() const { return desc_.vendor; }
    const std::string& path() const { return desc_.path; }
    ExecModel exec_model() const { return desc_.exec_model; }
    int priority() const { return desc_.priority; }
    int plugin_priority() const { return desc_.plugin_priority; }
    const std::vector<plx_language>& languages() const { return desc_.languages; }
    bool has_intrinsic(const std::string& name) const;
    // The plugin's entry; a NULL spelling means "the catalog's standard spelling". nullptr
    // when the backend lacks it.
    const plx_intrinsic* intrinsic(const std::string& name) const;
    // The capability classes (PLX_CLASS_* of intrinsics.def) of which the table lists a row,
    // and how many rows were not taken as claims because their class is newer than the
    // plugin's ABI minor.
    uint32_t capability_classes() const { return classes_; }
    uint32_t ignored_intrinsics() const { return ignored_; }
    const std::vector<DeviceInfo>& devices() const { return desc_.devices; }
    plx_device device(uint32_t index) const;
    const plx_plugin& api() const;
    bool has_plugin() const { return api_ != nullptr; }

    // The calling thread's last error message of the plugin ("" when there is none).
    std::string last_error() const;
    // Throws plexus::Error for a status other than PLX_OK, with the code mapped from the
    // status (error_code), the plugin's message (as the build log for PLX_ERROR_COMPILE), and
    // plugin / device / kernel as context: every plugin status becomes an error here.
    void check(plx_status s, const char* what, const std::string& device = {},
               const std::string& kernel = {}) const;

private:
    void index_table();

    BackendDesc desc_;
    const plx_plugin* api_ = nullptr;
    std::vector<plx_device> handles_;
    std::shared_ptr<const void> keepalive_;
    std::vector<plx_intrinsic> table_;                // points into the plugin or names_
    std::vector<std::unique_ptr<std::string>> names_; // owned names of a plain backend
    std::map<std::string, size_t, std::less<>> index_;
    uint32_t classes_ = 0;
    uint32_t ignored_ = 0;
};

} // namespace plexus
