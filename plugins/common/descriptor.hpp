// What init and the descriptor are alike in every plugin: the ABI major check, the identity
// (describe), the descriptor and a device_info written only as far as the host's struct_size
// reaches, the entries put behind the guard, and the list of a JIT plugin's (cuda, opencl)
// entries, declared and set from plugin.h's own types.
#pragma once

#include "plugin_support.hpp"

#include <algorithm>
#include <cstring>
#include <span>
#include <string>
#include <type_traits>

namespace plx_support {

// "1.3"
inline std::string version_text(uint32_t version) {
    return std::to_string(PLX_VERSION_MAJOR(version)) + "." +
           std::to_string(PLX_VERSION_MINOR(version));
}

// The host's ABI major must be the plugin's: another major may lay every struct out
// differently. "<plugin>: init: the plugin implements plexus plugin ABI 1.3, the host 2.0".
inline plx_status check_abi(const Names& names, uint32_t host_abi_version) {
    if (PLX_VERSION_MAJOR(host_abi_version) == PLX_ABI_VERSION_MAJOR) return PLX_OK;
    return fail_in(names, "init", PLX_ERROR_ABI_MISMATCH,
                   "the plugin implements plexus plugin ABI " + version_text(PLX_ABI_VERSION) +
                       ", the host " + version_text(host_abi_version));
}

// The descriptor the host hands init: there, and with room for its struct_size at least.
inline plx_status check_descriptor(const Names& names, const plx_plugin* plugin) {
    if (!plugin) return fail_in(names, "init", PLX_ERROR_INVALID_ARGUMENT, "plugin is NULL");
    if (plugin->struct_size < sizeof(uint32_t))
        return fail_in(names, "init", PLX_ERROR_INVALID_ARGUMENT,
                       "plugin->struct_size is " + std::to_string(plugin->struct_size));
    return PLX_OK;
}

// check_abi, then check_descriptor: a host of another major gets its descriptor untouched.
inline plx_status check_init(const Names& names, uint32_t host_abi_version,
                             const plx_plugin* plugin) {
    if (plx_status s = check_abi(names, host_abi_version); s != PLX_OK) return s;
    return check_descriptor(names, plugin);
}

// Who the plugin is, for describe().
struct Identity {
    const char* name;
    int32_t priority;
    plx_exec_model execution_model;
    std::span<const plx_language> languages; // JIT and Custom; Direct: routines only
    std::span<const plx_intrinsic> intrinsics;
    void (*shutdown)();
};

// A descriptor with the plugin's identity (version 1.0.0 by plexus, this ABI), last_error and
// shutdown, and no entry yet: the plugin points them at its functions.
inline plx_plugin describe(const Identity& identity) {
    plx_plugin descriptor{};
    descriptor.struct_size = sizeof(plx_plugin);
    descriptor.abi_version = PLX_ABI_VERSION;
    descriptor.name = identity.name;
    descriptor.version = "1.0.0";
    descriptor.vendor = "plexus";
    descriptor.priority = identity.priority;
    descriptor.execution_model = identity.execution_model;
    descriptor.languages = identity.languages.empty() ? nullptr : identity.languages.data();
    descriptor.num_languages = static_cast<uint32_t>(identity.languages.size());
    descriptor.intrinsics = identity.intrinsics.data();
    descriptor.num_intrinsics = static_cast<uint32_t>(identity.intrinsics.size());
    descriptor.last_error = last_error_text;
    descriptor.shutdown = identity.shutdown;
    return descriptor;
}

// Writes `ours` into the host's descriptor as far as its struct_size reaches (an older host's
// is shorter) and sets struct_size to what was written. After check_descriptor.
inline void fill_descriptor(plx_plugin* out, const plx_plugin& ours) noexcept {
    const size_t n = std::min<size_t>(out->struct_size, sizeof ours);
    std::memcpy(reinterpret_cast<char*>(out) + sizeof(uint32_t),
                reinterpret_cast<const char*>(&ours) + sizeof(uint32_t), n - sizeof(uint32_t));
    out->struct_size = static_cast<uint32_t>(n);
}

// The end of the last plx_device_info field lying wholly inside the first `size` bytes: a
// caller's struct is written field by field, never a field cut in two (a string, the uuid).
inline size_t device_info_fit(size_t size) noexcept {
#define PLX_INFO_END(field) (offsetof(plx_device_info, field) + sizeof(plx_device_info::field))
    // clang-format off
    static constexpr size_t ends[] = {
        PLX_INFO_END(struct_size),         PLX_INFO_END(type),
        PLX_INFO_END(name),                PLX_INFO_END(vendor),
        PLX_INFO_END(platform),            PLX_INFO_END(arch),
        PLX_INFO_END(compute_units),       PLX_INFO_END(max_work_group_size),
        PLX_INFO_END(max_work_group_dims), PLX_INFO_END(subgroup_size),
        PLX_INFO_END(memory_bytes),        PLX_INFO_END(max_alloc_bytes),
        PLX_INFO_END(local_memory_bytes),  PLX_INFO_END(fp64),
        PLX_INFO_END(compute_capability),  PLX_INFO_END(uuid),
        PLX_INFO_END(pci_bus_id),          PLX_INFO_END(subgroup_ops),
        PLX_INFO_END(matrix_ops)};
    // clang-format on
#undef PLX_INFO_END
    // The last field listed is the struct's last: a field appended to plugin.h belongs here.
    constexpr size_t last = ends[sizeof ends / sizeof ends[0] - 1];
    static_assert(last <= sizeof(plx_device_info) &&
                  sizeof(plx_device_info) - last < alignof(plx_device_info));
    if (size >= sizeof(plx_device_info)) return sizeof(plx_device_info); // padding included
    size_t fit = 0;
    for (size_t end : ends)
        if (end <= size) fit = end;
    return fit;
}

// device_info's copy: the whole fields of `ours` that fit the caller's struct_size, which is
// then set to what was written. False, writing nothing, when not even struct_size fits.
inline bool write_device_info(const plx_device_info& ours, plx_device_info* out) noexcept {
    const size_t n = device_info_fit(std::min<size_t>(out->struct_size, sizeof ours));
    if (n < sizeof out->struct_size) return false;
    std::memcpy(reinterpret_cast<char*>(out) + sizeof(uint32_t),
                reinterpret_cast<const char*>(&ours) + sizeof(uint32_t), n - sizeof(uint32_t));
    out->struct_size = static_cast<uint32_t>(n);
    return true;
}

// What the descriptor points at for the plugin's function F: the guard (Guarded) for an
// entry that returns a status, F itself for one that returns nothing (buffer_free, ...).
template <class Plugin, auto F> struct Entry {
    static constexpr auto value = F;
};
template <class Plugin, typename... Args, plx_status (*F)(Args...)> struct Entry<Plugin, F> {
    static constexpr auto value = guarded<Plugin, F>;
};

} // namespace plx_support

// The entries of plx_plugin a JIT plugin (cuda, opencl) implements: all of them but
// buffer_host_ptr and launch_host (device memory has no host address, and the core hands a
// JIT plugin no host functions). X(name) for each, in the descriptor's order.
// clang-format off
#define PLX_JIT_ENTRIES(X)                                                                    \
    X(device_count) X(device_get) X(device_info)                                              \
    X(buffer_alloc) X(buffer_free) X(buffer_write) X(buffer_read) X(buffer_copy)              \
    X(buffer_fill) X(queue_create) X(queue_sync) X(queue_destroy)                             \
    X(module_load) X(module_unload) X(module_get_binary) X(kernel_get) X(launch)              \
    X(event_wait) X(event_profile) X(event_release)                                           \
    X(queue_marker) X(queue_wait_event) X(buffer_write_async) X(buffer_read_async)            \
    X(buffer_copy_peer) X(host_alloc) X(host_free) X(buffer_wrap) X(buffer_native)            \
    X(queue_native)
// clang-format on

// Declares, in the plugin's namespace, its function for the descriptor entry `name`, with
// plugin.h's signature for it: PLX_JIT_ENTRIES(PLX_DECLARE_ENTRY).
#define PLX_DECLARE_ENTRY(name) std::remove_pointer_t<decltype(plx_plugin::name)> name;

// Points `descriptor.name` at the plugin's function `name`, behind the guard when it returns
// a status; `descriptor` and the traits struct `Plugin` are the caller's.
#define PLX_SET_ENTRY(name) descriptor.name = ::plx_support::Entry<Plugin, &name>::value;

// A JIT plugin's descriptor: describe(identity), with every entry of PLX_JIT_ENTRIES pointed
// at the function of that name in the caller's namespace.
#define PLX_JIT_DESCRIPTOR(identity)                                                               \
    [&] {                                                                                          \
        plx_plugin descriptor = ::plx_support::describe(identity);                                 \
        PLX_JIT_ENTRIES(PLX_SET_ENTRY)                                                             \
        return descriptor;                                                                         \
    }()
