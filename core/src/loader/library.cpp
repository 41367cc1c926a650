// Opening one plugin library: dlopen, plx_plugin_init, the descriptor's contract checks and
// device enumeration, with a process-wide refcount so that init runs once per load.
#include "loader/library.hpp"

#include <cerrno>
#include <climits>
#include <condition_variable>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <map>
#include <mutex>

#include "config/log.hpp"
#include "loader/elf_check.hpp"

namespace plexus::detail {

namespace {

struct Entry {
    std::unique_ptr<PluginLibrary> library;
    int refs = 0;
    // A plugin whose descriptor has another major version cannot be shut down safely (its
    // layout is unknown), so it stays open forever and every later open reports the same.
    bool poisoned = false;
    OpenResult failure;
    // init is running on some thread, outside the registry's lock; other opens of the same
    // library wait for it (registry_changed) rather than run init twice.
    bool initializing = false;
};

// Deliberately leaked: a Runtime destroyed during static destruction must still find it, and
// plugins are never shut down from atexit.
std::mutex& registry_mutex() {
    static auto* m = new std::mutex;
    return *m;
}
std::condition_variable& registry_changed() {
    static auto* c = new std::condition_variable;
    return *c;
}
std::map<std::string, Entry>& registry() {
    static auto* r = new std::map<std::string, Entry>;
    return *r;
}

void host_log(void* ctx, plx_log_level level, const char* msg) {
    const auto* lib = static_cast<const PluginLibrary*>(ctx);
    spdlog::level::level_enum l = spdlog::level::info;
    switch (level) {
    case PLX_LOG_TRACE: l = spdlog::level::trace; break;
    case PLX_LOG_DEBUG: l = spdlog::level::debug; break;
    case PLX_LOG_INFO: l = spdlog::level::info; break;
    case PLX_LOG_WARN: l = spdlog::level::warn; break;
    case PLX_LOG_ERROR: l = spdlog::level::err; break;
    default: break;
    }
    log().log(l, "[{}] {}", lib != nullptr ? lib->log_name : "?", msg != nullptr ? msg : "(null)");
}

std::string version_string(uint32_t v) {
    return std::to_string(PLX_VERSION_MAJOR(v)) + "." + std::to_string(PLX_VERSION_MINOR(v));
}

std::string file_name(const std::string& path) {
    auto slash = path.rfind('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

// "libplexus-cuda.so" -> "cuda": how the plugin is named in log lines before it says its name.
std::string log_name_for(const std::string& path) {
    std::string n = file_name(path);
    if (n.rfind("libplexus-", 0) == 0) n = n.substr(10);
    if (auto dot = n.find('.'); dot != std::string::npos) n = n.substr(0, dot);
    return n;
}

std::string fixed_string(const char* s, size_t capacity) {
    return std::string(s, strnlen(s, capacity));
}

const char* model_name(uint32_t raw_model) {
    switch (raw_model) {
    case PLX_EXEC_JIT: return "jit";
    case PLX_EXEC_DIRECT: return "direct";
    case PLX_EXEC_CUSTOM: return "custom";
    default: return "";
    }
}

// The plugin's message for the calling thread; the descriptor may be half-filled, so every
// pointer is checked.
std::string plugin_message(const plx_plugin& api) {
    if (api.last_error == nullptr) return {};
    const char* msg = api.last_error();
    return msg == nullptr ? std::string() : std::string(msg);
}

OpenResult fail(LoadOutcome outcome, std::string message) {
    OpenResult r;
    r.outcome = outcome;
    r.message = std::move(message);
    return r;
}

OpenResult classify_dlopen_error(const std::string& path, const std::string& real,
                                 const std::string& err) {
    static const std::string missing = ": cannot open shared object file";
    if (auto pos = err.find(missing); pos != std::string::npos) {
        std::string file = err.substr(0, pos);
        if (file != path && file != real && file_name(file) != file_name(real))
            return fail(LoadOutcome::MissingDependency,
                        "needs " + file + ", which is not installed or not on the library path (" +
                            err + ")");
    }
    // An undefined symbol under RTLD_NOW almost always means a dependency of the wrong version.
    if (err.find("undefined symbol") != std::string::npos)
        return fail(LoadOutcome::MissingDependency, "a symbol it needs is missing (" + err + ")");
    return fail(LoadOutcome::NotAPlugin, "not a loadable shared library (" + err + ")");
}

bool valid_name(const char* name) {
    if (name == nullptr || *name == '\0') return false;
    for (const char* p = name; *p != '\0'; ++p) {
        char c = *p;
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-'))
            return false;
    }
    return true;
}

// The first broken rule of the descriptor, or "" when it keeps the contract.
std::string contract_violation(const plx_plugin& api, uint32_t size) {
    struct Field {
        const char* name;
        size_t end;
        bool present;
    };
#define PLX_FIELD(f, required)                                                                     \
    Field {                                                                                        \
        #f, offsetof(plx_plugin, f) + sizeof(api.f), (required)                                    \
    }
    const uint32_t model = raw_enum(api.execution_model); // 0 past struct_size
    const bool jit = model == PLX_EXEC_JIT;
    const bool direct = model == PLX_EXEC_DIRECT;
    const bool custom = model == PLX_EXEC_CUSTOM;
    const Field fields[] = {
        PLX_FIELD(name, api.name != nullptr),
        PLX_FIELD(execution_model, model != PLX_EXEC_UNSET),
        PLX_FIELD(last_error, api.last_error != nullptr),
        PLX_FIELD(device_count, api.device_count != nullptr),
        PLX_FIELD(device_get, api.device_get != nullptr),
        PLX_FIELD(device_info, api.device_info != nullptr),
        PLX_FIELD(buffer_alloc, api.buffer_alloc != nullptr),
        PLX_FIELD(buffer_free, api.buffer_free != nullptr),
        PLX_FIELD(buffer_write, api.buffer_write != nullptr),
        PLX_FIELD(buffer_read, api.buffer_read != nullptr),
        PLX_FIELD(queue_create, api.queue_create != nullptr),
        PLX_FIELD(queue_sync, api.queue_sync != nullptr),
        PLX_FIELD(queue_destroy, api.queue_destroy != nullptr),
    };
    const Field jit_fields[] = {
        PLX_FIELD(languages, api.languages != nullptr && api.num_languages > 0),
        PLX_FIELD(module_load, api.module_load != nullptr),
        PLX_FIELD(kernel_get, api.kernel_get != nullptr),
        PLX_FIELD(launch, api.launch != nullptr),
    };
    const Field direct_fields[] = {
        PLX_FIELD(launch_host, api.launch_host != nullptr),
        PLX_FIELD(buffer_host_ptr, api.buffer_host_ptr != nullptr),
    };
#undef PLX_FIELD
    auto check = [&](const Field& f) -> std::string {
        if (f.end > size)
            return "struct_size " + std::to_string(size) + " is too small to hold '" + f.name +
                   "' (needs at least " + std::to_string(f.end) + " bytes)";
        if (!f.present)
            return std::string("'") + f.name +
                   "' is not set (NULL, empty or 0), and it is required";
        return {};
    };
    for (const Field& f : fields)
        if (auto v = check(f); !v.empty()) return v;
    if (!valid_name(api.name))
        return std::string("name \"") + api.name +
               "\" must be non-empty lowercase letters, digits, '_' or '-'";
    if (!jit && !direct && !custom)
        return "execution_model " + std::to_string(model) +
               " is not PLX_EXEC_JIT, PLX_EXEC_DIRECT or PLX_EXEC_CUSTOM";
    if (jit || custom)
        for (const Field& f : jit_fields)
            if (auto v = check(f); !v.empty()) return v;
    if (direct)
        for (const Field& f : direct_fields)
            if (auto v = check(f); !v.empty()) return v;
    for (uint32_t i = 0; (jit || custom) && i < api.num_languages; ++i)
        if (raw_enum(api.languages[i]) == PLX_LANG_UNSET)
            return "languages[" + std::to_string(i) + "] is PLX_LANG_UNSET";
    if (custom) {
        bool ir = false;
        for (uint32_t i = 0; i < api.num_languages; ++i)
            ir = ir || raw_enum(api.languages[i]) == PLX_LANG_PLEXUS_IR_JSON ||
                 raw_enum(api.languages[i]) == PLX_LANG_PLEXUS_IR2_JSON;
        if (!ir)
            return "a Custom plugin must list PLX_LANG_PLEXUS_IR_JSON or PLX_LANG_PLEXUS_IR2_JSON "
                   "in 'languages'";
    }
    if (api.num_intrinsics > 0 && api.intrinsics == nullptr)
        return "'intrinsics' is NULL but num_intrinsics is " + std::to_string(api.num_intrinsics);
    return {};
}

// `abi_minor` is the plugin's: from 1.2 on a device states its subgroup operations (1.3: its
// matrix operations) in subgroup_ops (matrix_ops), so a field left without its KNOWN bit says
// "none", not "ask the intrinsic table", which only plugins older than the field rely on.
DeviceInfo convert(const plx_device_info& in, uint32_t abi_minor) {
    DeviceInfo d;
    d.name = fixed_string(in.name, sizeof in.name);
    d.vendor = fixed_string(in.vendor, sizeof in.vendor);
    d.platform = fixed_string(in.platform, sizeof in.platform);
    d.arch = fixed_string(in.arch, sizeof in.arch);
    switch (raw_enum(in.type)) {
    case PLX_DEVICE_TYPE_CPU: d.type = DeviceType::CPU; break;
    case PLX_DEVICE_TYPE_GPU: d.type = DeviceType::GPU; break;
    case PLX_DEVICE_TYPE_ACCELERATOR: d.type = DeviceType::Accelerator; break;
    default: d.type = DeviceType::Other; break;
    }
    d.compute_units = in.compute_units;
    d.max_work_group_size = in.max_work_group_size;
    d.max_work_group_dims = {in.max_work_group_dims[0], in.max_work_group_dims[1],
                             in.max_work_group_dims[2]};
    d.subgroup_size = in.subgroup_size == 0 ? 1 : in.subgroup_size;
    d.memory_bytes = in.memory_bytes;
    d.max_alloc_bytes = in.max_alloc_bytes;
    d.local_memory_bytes = in.local_memory_bytes;
    d.fp64 = in.fp64 != 0;
    d.compute_capability = in.compute_capability;
    std::copy(std::begin(in.uuid), std::end(in.uuid), d.uuid.begin());
    d.pci_bus_id = fixed_string(in.pci_bus_id, sizeof in.pci_bus_id);
    if (in.subgroup_ops & PLX_SUBGROUP_KNOWN)
        d.subgroup_ops = in.subgroup_ops & PLX_SUBGROUP_ALL;
    else if (abi_minor >= 2)
        d.subgroup_ops = 0, d.subgroup_ops_unstated = true;
    if (in.matrix_ops & PLX_MATRIX_KNOWN)
        d.matrix_ops = in.matrix_ops & (PLX_MATRIX_ALL | PLX_MATRIX_EMULATED);
    else if (abi_minor >= 3)
        d.matrix_ops = 0, d.matrix_ops_unstated = true;
    return d;
}

// Lists the devices; an empty list comes with the reason.
std::string enumerate_devices(PluginLibrary& lib) {
    const plx_plugin& api = lib.api;
    uint32_t count = 0;
    if (plx_status s = api.device_count(&count); s != PLX_OK)
        return std::string("device_count failed with ") + status_name(s) + ": " +
               plugin_message(api);
    if (count == 0) return "the plugin reports no device";
    std::string why;
    for (uint32_t i = 0; i < count; ++i) {
        plx_device handle = nullptr;
        plx_device_info info{};
        info.struct_size = sizeof info;
        plx_status s = api.device_get(i, &handle);
        if (s == PLX_OK) s = api.device_info(handle, &info);
        if (s != PLX_OK) {
            why =
                "device " + std::to_string(i) + ": " + status_name(s) + ": " + plugin_message(api);
            log().warn("[{}] skipping {}", lib.log_name, why);
            continue;
        }
        lib.device_handles.push_back(handle);
        lib.devices.push_back(convert(info, PLX_VERSION_MINOR(api.abi_version)));
    }
    return lib.devices.empty() ? "every device failed to answer (" + why + ")" : std::string();
}

OpenResult loaded(const PluginLibrary& lib, std::shared_ptr<const PluginLibrary> keep) {
    OpenResult r;
    r.outcome = LoadOutcome::Loaded;
    r.name = lib.api.name;
    r.execution_model = model_name(raw_enum(lib.api.execution_model));
    r.priority = lib.api.priority;
    r.library = std::move(keep);
    return r;
}

void release(const PluginLibrary* lib) {
    std::lock_guard lock(registry_mutex());
    auto it = registry().find(lib->realpath);
    if (it == registry().end() || --it->second.refs > 0) return;
    PluginLibrary& l = *it->second.library;
    log().debug("[{}] shutting down {}", l.log_name, l.path);
    if (l.api.shutdown != nullptr) l.api.shutdown();
    dlclose(l.handle);
    registry().erase(it);
}

std::shared_ptr<const PluginLibrary> acquire(Entry& e) {
    ++e.refs;
    return std::shared_ptr<const PluginLibrary>(e.library.get(), release);
}

// Runs init and every check; on success the library is ready to enter the registry.
OpenResult initialize(PluginLibrary& lib, Entry& entry, StageFn stage) {
    if (std::string bad = check_elf(lib.realpath); !bad.empty())
        return fail(LoadOutcome::NotAPlugin, "not a loadable shared library: " + bad);
    const char* said_name = nullptr;
    auto step = [stage, &said_name](const char* name) {
        if (stage != nullptr) stage(name, said_name);
    };
    step("open");
    dlerror();
    lib.handle = dlopen(lib.realpath.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib.handle == nullptr) {
        const char* err = dlerror();
        return classify_dlopen_error(lib.path, lib.realpath,
                                     err != nullptr ? err : "unknown error");
    }
    auto close = [&](OpenResult r) {
        dlclose(lib.handle);
        lib.handle = nullptr;
        return r;
    };
    auto init = reinterpret_cast<plx_plugin_init_fn>(dlsym(lib.handle, PLX_PLUGIN_INIT_SYMBOL));
    if (init == nullptr)
        return close(fail(LoadOutcome::NotAPlugin,
                          "a shared library without the entry point " PLX_PLUGIN_INIT_SYMBOL));

    lib.host.struct_size = sizeof lib.host;
    lib.host.host_ctx = &lib;
    lib.host.log = host_log;
    lib.host.options_json = lib.options_json.c_str();
    lib.api = plx_plugin{};
    lib.api.struct_size = sizeof lib.api;
    step("init");
    const plx_status status = init(PLX_ABI_VERSION, &lib.host, &lib.api);

    // Fields past what the plugin declares are not its own: treat them as 0.
    uint32_t size = lib.api.struct_size;
    if (size < sizeof lib.api)
        std::memset(reinterpret_cast<char*>(&lib.api) + size, 0, sizeof lib.api - size);
    auto fits = [&](size_t end) { return size >= end; };
    OpenResult said;
    if (fits(offsetof(plx_plugin, name) + sizeof(const char*)) && lib.api.name != nullptr) {
        said.name = lib.api.name;
        said_name = said.name.c_str();
    }
    if (fits(offsetof(plx_plugin, execution_model) + sizeof(plx_exec_model)))
        said.execution_model = model_name(raw_enum(lib.api.execution_model));
    if (fits(offsetof(plx_plugin, priority) + sizeof(int32_t))) said.priority = lib.api.priority;
    const uint32_t abi =
        fits(offsetof(plx_plugin, abi_version) + sizeof(uint32_t)) ? lib.api.abi_version : 0;
    auto with = [&](LoadOutcome o, std::string message) {
        OpenResult r = said;
        r.outcome = o;
        r.message = std::move(message);
        return r;
    };

    if (status != PLX_OK) {
        std::string msg = plugin_message(lib.api);
        OpenResult r;
        if (status == PLX_ERROR_ABI_MISMATCH) {
            r = with(LoadOutcome::AbiMismatch,
                     (abi != 0 ? "built for plugin ABI " + version_string(abi)
                               : std::string("refused")) +
                         ", this host speaks " + version_string(PLX_ABI_VERSION) +
                         (msg.empty() ? "" : ": " + msg));
        } else if (status == PLX_ERROR_NO_DRIVER) {
            r = with(LoadOutcome::MissingDependency,
                     msg.empty() ? "its driver is not installed (PLX_ERROR_NO_DRIVER)" : msg);
        } else {
            r = with(LoadOutcome::InitFailed,
                     std::string("plx_plugin_init returned ") + status_name(status) + ": " +
                         (msg.empty() ? "(the plugin left no message)" : msg));
        }
        return close(r);
    }
    if (abi != 0 && PLX_VERSION_MAJOR(abi) != PLX_ABI_VERSION_MAJOR) {
        entry.poisoned = true; // not closed: see Entry::poisoned
        entry.failure = with(LoadOutcome::AbiMismatch,
                             "its descriptor says plugin ABI " + version_string(abi) +
                                 ", this host speaks " + version_string(PLX_ABI_VERSION));
        return entry.failure;
    }
    auto shut = [&](OpenResult r) {
        step("shutdown");
        if (lib.api.shutdown != nullptr) lib.api.shutdown();
        return close(std::move(r));
    };
    if (abi == 0)
        return shut(with(LoadOutcome::InitFailed,
                         "the descriptor breaks the plugin contract: abi_version "
                         "is 0; set it to PLX_ABI_VERSION"));
    if (std::string v = contract_violation(lib.api, size); !v.empty())
        return shut(
            with(LoadOutcome::InitFailed, "the descriptor breaks the plugin contract: " + v));
    step("devices");
    if (std::string why = enumerate_devices(lib); !why.empty())
        return shut(with(LoadOutcome::NoDevices, why));
    return with(LoadOutcome::Loaded, "");
}

} // namespace

bool plugin_is_open(const std::string& realpath) {
    std::lock_guard lock(registry_mutex());
    return registry().count(realpath) != 0;
}

OpenResult open_plugin(const std::string& path, const std::string& options_json, StageFn stage) {
    char resolved[PATH_MAX];
    if (realpath(path.c_str(), resolved) == nullptr)
        return fail(LoadOutcome::NotAPlugin,
                    std::string("cannot resolve the path: ") + std::strerror(errno));
    const std::string real = resolved;

    // The lock is not held through init, so that independent plugins initialize in parallel.
    std::unique_lock lock(registry_mutex());
    registry_changed().wait(lock, [&] {
        auto found = registry().find(real);
        return found == registry().end() || !found->second.initializing;
    });
    auto [it, inserted] = registry().try_emplace(real);
    Entry& entry = it->second;
    if (!inserted) {
        if (entry.poisoned) return entry.failure;
        if (entry.library->options_json != options_json)
            log().info("[{}] already initialized with other options; the first ones stay in force",
                       entry.library->log_name);
        return loaded(*entry.library, acquire(entry));
    }

    auto lib = std::make_unique<PluginLibrary>();
    lib->path = path;
    lib->realpath = real;
    lib->log_name = log_name_for(path);
    lib->options_json = options_json;
    PluginLibrary& l = *lib;
    entry.library = std::move(lib);
    entry.initializing = true;
    lock.unlock();
    OpenResult r = initialize(l, entry, stage); // only this thread touches the entry meanwhile
    lock.lock();
    entry.initializing = false;
    registry_changed().notify_all();
    if (entry.poisoned) return r;
    if (r.outcome != LoadOutcome::Loaded) {
        registry().erase(it);
        return r;
    }
    return loaded(l, acquire(entry));
}

} // namespace plexus::detail
