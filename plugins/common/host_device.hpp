// The one device of a plugin that runs on the host CPU (native, interp): plugin.h's device
// handle for it, its description, the device entries device_count, device_get and
// device_info, and a launch's work-group shape checked against its limits.
#pragma once

#include "descriptor.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

// The opaque device handle of plugin.h. The plugin's one device is a global, valid between
// the plugin's device setup and its teardown; a handle is checked by its address first.
struct plx_device_s {
    plx_device_info info{};
    bool ready = false;
};

namespace plx_support {

// The one device; each plugin library has its own.
inline plx_device_s g_host_device;

inline bool is_host_device(const plx_device_s* device) noexcept {
    return device == &g_host_device && g_host_device.ready;
}

// The host's physical memory in bytes; 0 when sysconf cannot tell.
inline uint64_t physical_memory() noexcept {
    const long pages = sysconf(_SC_PHYS_PAGES);
    const long page_size = sysconf(_SC_PAGE_SIZE);
    if (pages <= 0 || page_size <= 0) return 0;
    return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_size);
}

// Copies `text` into a fixed char array of plx_device_info, cut to fit, NUL-terminated.
template <size_t N> void copy_text(char (&out)[N], std::string_view text) noexcept {
    const size_t n = std::min(N - 1, text.size());
    std::memcpy(out, text.data(), n);
    out[n] = '\0';
}

// The dims' dynamic_local_bytes; 0 in an older host's struct, which ends before it.
inline uint32_t dynamic_local_bytes(const plx_launch_dims* dims) noexcept {
    return dims->struct_size >= offsetof(plx_launch_dims, dynamic_local_bytes) + sizeof(uint32_t)
               ? dims->dynamic_local_bytes
               : 0;
}

// What a host plugin says of its device. The rest is the same for both: a CPU, the host's
// physical memory (max_alloc_bytes too), fp64, every subgroup operation, every matrix fragment
// as plain arithmetic (emulated).
struct CpuDevice {
    std::string_view name, vendor, arch;
    uint32_t compute_units;
    uint32_t max_work_group_size;
    const uint32_t (&max_work_group_dims)[3];
    uint32_t subgroup_size;
    uint64_t local_memory_bytes;
};

// The device entries; messages name the plugin by Plugin::names.
template <class Plugin> struct HostDevice {
    static constexpr const Names& names = Plugin::names;

    // Describes the device and makes it valid; its memory_bytes is 0 when sysconf cannot tell.
    static const plx_device_info& setup(const CpuDevice& device) noexcept {
        plx_device_info& info = g_host_device.info;
        info = plx_device_info{};
        info.struct_size = sizeof(plx_device_info);
        info.type = PLX_DEVICE_TYPE_CPU;
        copy_text(info.name, device.name);
        copy_text(info.vendor, device.vendor);
        copy_text(info.platform, "");
        copy_text(info.arch, device.arch);
        info.compute_units = device.compute_units;
        info.max_work_group_size = device.max_work_group_size;
        std::copy(std::begin(device.max_work_group_dims), std::end(device.max_work_group_dims),
                  info.max_work_group_dims);
        info.subgroup_size = device.subgroup_size;
        info.subgroup_ops = PLX_SUBGROUP_KNOWN | PLX_SUBGROUP_ALL;
        info.matrix_ops = PLX_MATRIX_KNOWN | PLX_MATRIX_ALL | PLX_MATRIX_EMULATED;
        info.memory_bytes = physical_memory();
        info.max_alloc_bytes = info.memory_bytes;
        info.local_memory_bytes = device.local_memory_bytes;
        info.fp64 = 1;
        info.compute_capability = 0;
        g_host_device.ready = true;
        return info;
    }

    // The work-group shape of a launch's dims against the device's limits; `fn` names the
    // entry ("launch_host") in the message. Builds no string unless a check fails: the happy
    // path of a launch allocates nothing.
    static plx_status check_dims(const char* fn, const plx_launch_dims* dims) {
        if (!dims) return fail_in(names, fn, PLX_ERROR_INVALID_ARGUMENT, "dims is NULL");
        if (dims->struct_size < offsetof(plx_launch_dims, dynamic_local_bytes))
            return fail_in(names, fn, PLX_ERROR_INVALID_ARGUMENT,
                           "dims->struct_size " + std::to_string(dims->struct_size) +
                               " is too small to hold local_size");
        if (dims->dims < 1 || dims->dims > 3)
            return fail_in(names, fn, PLX_ERROR_INVALID_ARGUMENT,
                           "dims->dims is " + std::to_string(dims->dims) + ", must be 1, 2 or 3");
        const plx_device_info& info = g_host_device.info;
        uint64_t product = 1;
        for (uint32_t d = 0; d < dims->dims; ++d) {
            const uint32_t l = dims->local_size[d];
            auto where = [&] {
                return "local_size[" + std::to_string(d) + "] is " + std::to_string(l);
            };
            if (l == 0)
                return fail_in(names, fn, PLX_ERROR_INVALID_ARGUMENT,
                               where() + ", must be at least 1");
            if (l > info.max_work_group_dims[d])
                return fail_in(names, fn, PLX_ERROR_OUT_OF_RESOURCES,
                               where() + ", above the device limit of " +
                                   std::to_string(info.max_work_group_dims[d]) +
                                   " (max_work_group_dims)");
            product *= l;
        }
        if (product > info.max_work_group_size)
            return fail_in(names, fn, PLX_ERROR_OUT_OF_RESOURCES,
                           "a work-group of " + std::to_string(product) +
                               " work-items is above the device limit of " +
                               std::to_string(info.max_work_group_size) + " (max_work_group_size)");
        return PLX_OK;
    }

    // At shutdown: the device handle is no longer valid.
    static void teardown() noexcept { g_host_device.ready = false; }

    static plx_status device_count(uint32_t* count) {
        if (!count)
            return fail_in(names, "device_count", PLX_ERROR_INVALID_ARGUMENT, "count is NULL");
        *count = 1;
        return PLX_OK;
    }

    static plx_status device_get(uint32_t index, plx_device* device) {
        static constexpr const char* fn = "device_get";
        if (!device) return fail_in(names, fn, PLX_ERROR_INVALID_ARGUMENT, "device is NULL");
        if (index != 0)
            return fail_in(names, fn, PLX_ERROR_INVALID_ARGUMENT,
                           "index " + std::to_string(index) + " is out of range (1 device)");
        *device = &g_host_device;
        return PLX_OK;
    }

    // Writes only what the caller's (possibly older) struct holds, and says how much that was.
    static plx_status device_info(plx_device device, plx_device_info* info) {
        static constexpr const char* fn = "device_info";
        if (!is_host_device(device)) return not_ours(names, fn, "device");
        if (!info) return fail_in(names, fn, PLX_ERROR_INVALID_ARGUMENT, "info is NULL");
        if (!write_device_info(device->info, info))
            return fail_in(names, fn, PLX_ERROR_INVALID_ARGUMENT,
                           "info->struct_size is " + std::to_string(info->struct_size) +
                               ", too small for any field");
        return PLX_OK;
    }
};

} // namespace plx_support
