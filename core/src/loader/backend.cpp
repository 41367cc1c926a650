// plexus::Backend and the names of the ABI's enumerations.
#include "plexus/backend.hpp"

#include "plexus/catalog.hpp"
#include "plexus/codegen.hpp"

#include <algorithm>

namespace plexus {

const char* to_string(ExecModel m) {
    switch (m) {
    case ExecModel::JIT: return "jit";
    case ExecModel::Direct: return "direct";
    case ExecModel::Custom: return "custom";
    }
    return "unknown";
}

const char* to_string(DeviceType t) {
    switch (t) {
    case DeviceType::CPU: return "cpu";
    case DeviceType::GPU: return "gpu";
    case DeviceType::Accelerator: return "accelerator";
    case DeviceType::Other: return "other";
    }
    return "other";
}

std::string DeviceInfo::uuid_string() const {
    if (std::all_of(uuid.begin(), uuid.end(), [](uint8_t b) { return b == 0; })) return {};
    static const char* hex = "0123456789abcdef";
    std::string s = type == DeviceType::GPU ? "GPU-" : "";
    for (size_t i = 0; i < uuid.size(); ++i) {
        if (i == 4 || i == 6 || i == 8 || i == 10) s += '-';
        s += hex[uuid[i] >> 4];
        s += hex[uuid[i] & 15];
    }
    return s;
}

const char* to_string(plx_language l) {
    if (l == PLX_LANG_UNSET) return "unset";
    const codegen::Language* row = codegen::find_language(l);
    return row ? row->name : "unknown";
}

const char* status_name(plx_status s) {
    switch (s) {
    case PLX_OK: return "PLX_OK";
    case PLX_ERROR_INVALID_ARGUMENT: return "PLX_ERROR_INVALID_ARGUMENT";
    case PLX_ERROR_OUT_OF_MEMORY: return "PLX_ERROR_OUT_OF_MEMORY";
    case PLX_ERROR_COMPILE: return "PLX_ERROR_COMPILE";
    case PLX_ERROR_NO_DRIVER: return "PLX_ERROR_NO_DRIVER";
    case PLX_ERROR_NO_DEVICE: return "PLX_ERROR_NO_DEVICE";
    case PLX_ERROR_UNSUPPORTED: return "PLX_ERROR_UNSUPPORTED";
    case PLX_ERROR_LAUNCH: return "PLX_ERROR_LAUNCH";
    case PLX_ERROR_DEVICE: return "PLX_ERROR_DEVICE";
    case PLX_ERROR_ABI_MISMATCH: return "PLX_ERROR_ABI_MISMATCH";
    case PLX_ERROR_NOT_FOUND: return "PLX_ERROR_NOT_FOUND";
    case PLX_ERROR_OUT_OF_RESOURCES: return "PLX_ERROR_OUT_OF_RESOURCES";
    case PLX_ERROR_INTERNAL: return "PLX_ERROR_INTERNAL";
    }
    return "PLX_ERROR_(unknown status)";
}

const char* to_string(LoadOutcome o) {
    switch (o) {
    case LoadOutcome::Loaded: return "loaded";
    case LoadOutcome::NotAPlugin: return "not_a_plugin";
    case LoadOutcome::AbiMismatch: return "abi_mismatch";
    case LoadOutcome::InitFailed: return "init_failed";
    case LoadOutcome::MissingDependency: return "missing_dependency";
    case LoadOutcome::NoDevices: return "no_devices";
    case LoadOutcome::DisabledByConfig: return "disabled_by_config";
    case LoadOutcome::Duplicate: return "duplicate";
    case LoadOutcome::Crashed: return "crashed";
    case LoadOutcome::TimedOut: return "timed_out";
    }
    return "unknown";
}

static ErrorContext plugin_context(const std::string& plugin) {
    ErrorContext ctx;
    ctx.plugin = plugin;
    return ctx;
}

Backend::Backend(BackendDesc desc) : desc_(std::move(desc)) {
    for (const std::string& n : desc_.intrinsics) {
        names_.push_back(std::make_unique<std::string>(n));
        plx_intrinsic entry{};
        entry.name = names_.back()->c_str();
        table_.push_back(entry);
    }
    index_table();
}

Backend::Backend(BackendDesc desc, const plx_plugin* api, std::vector<plx_device> handles,
                 std::shared_ptr<const void> keepalive)
    : desc_(std::move(desc)), api_(api), handles_(std::move(handles)),
      keepalive_(std::move(keepalive)) {
    desc_.intrinsics.clear();
    const uint32_t minor = PLX_VERSION_MINOR(api_->abi_version);
    if (api_->intrinsics != nullptr) {
        for (uint32_t i = 0; i < api_->num_intrinsics; ++i) {
            const plx_intrinsic& entry = api_->intrinsics[i];
            if (entry.name == nullptr || *entry.name == '\0') continue; // unusable, skip
            // A row of a class that the plugin's ABI minor did not have is no claim of its.
            if (const IntrinsicInfo* info = find_intrinsic(entry.name);
                info != nullptr && capability_class_since_minor(info->capability_class) > minor) {
                ++ignored_;
                continue;
            }
            table_.push_back(entry);
            desc_.intrinsics.emplace_back(entry.name);
        }
    }
    index_table();
}

void Backend::index_table() {
    // The first entry of a name wins, as in a C table lookup.
    for (size_t i = 0; i < table_.size(); ++i)
        index_.emplace(table_[i].name, i);
    for (const plx_intrinsic& entry : table_)
        if (const IntrinsicInfo* info = find_intrinsic(entry.name))
            classes_ |= info->capability_class;
}

bool Backend::has_intrinsic(const std::string& name) const {
    return index_.find(name) != index_.end();
}

const plx_intrinsic* Backend::intrinsic(const std::string& name) const {
    auto it = index_.find(name);
    return it == index_.end() ? nullptr : &table_[it->second];
}

plx_device Backend::device(uint32_t index) const {
    if (api_ == nullptr)
        throw Error(ErrorCode::Internal, "backend '" + name() + "' has no plugin behind it",
                    plugin_context(name()));
    if (index >= handles_.size())
        throw Error(ErrorCode::InvalidArgument,
                    "device index " + std::to_string(index) + " is out of range (" +
                        std::to_string(handles_.size()) + " devices)",
                    plugin_context(name()));
    return handles_[index];
}

const plx_plugin& Backend::api() const {
    if (api_ == nullptr)
        throw Error(ErrorCode::Internal, "backend '" + name() + "' has no plugin behind it",
                    plugin_context(name()));
    return *api_;
}

std::string Backend::last_error() const {
    if (api_ == nullptr || api_->last_error == nullptr) return {};
    const char* msg = api_->last_error();
    return msg == nullptr ? std::string() : std::string(msg);
}

ErrorCode error_code(plx_status s) {
    switch (s) {
    case PLX_ERROR_OUT_OF_MEMORY: return ErrorCode::OutOfMemory;
    case PLX_ERROR_COMPILE: return ErrorCode::Compile;
    case PLX_ERROR_OUT_OF_RESOURCES: return ErrorCode::OutOfResources;
    case PLX_ERROR_LAUNCH: return ErrorCode::Launch;
    case PLX_ERROR_UNSUPPORTED: return ErrorCode::Unsupported;
    case PLX_ERROR_INVALID_ARGUMENT: return ErrorCode::InvalidArgument;
    default: return ErrorCode::Device;
    }
}

void Backend::check(plx_status s, const char* what, const std::string& device,
                    const std::string& kernel) const {
    if (s == PLX_OK) return;
    const ErrorCode code = error_code(s);
    const std::string detail = last_error();
    ErrorContext ctx;
    ctx.plugin = name();
    ctx.device = device;
    ctx.kernel = kernel;
    std::string message = std::string(what) + " failed with " + status_name(s);
    if (s == PLX_ERROR_COMPILE)
        ctx.build_log = detail;
    else if (!detail.empty())
        message += ": " + detail;
    throw Error(code, message, std::move(ctx));
}

} // namespace plexus
