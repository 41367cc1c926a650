// The interpreter's one device: a single-threaded reference implementation on the host CPU.
#include "interp.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstring>

namespace plx_interp {
namespace {

plx_device_s g_device;

void copy_string(char* dst, size_t capacity, const char* src) {
    const size_t n = std::min(capacity - 1, std::strlen(src));
    std::memcpy(dst, src, n);
    dst[n] = '\0';
}

uint64_t physical_memory() {
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page <= 0) return 0;
    return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page);
}

} // namespace

void device_setup() {
    plx_device_info& i = g_device.info;
    i = plx_device_info{};
    i.struct_size = sizeof i;
    i.type = PLX_DEVICE_TYPE_CPU;
    copy_string(i.name, sizeof i.name, "plexus reference interpreter");
    copy_string(i.vendor, sizeof i.vendor, "plexus");
    copy_string(i.platform, sizeof i.platform, "");
    copy_string(i.arch, sizeof i.arch, "plexus-ir");
    // Groups run one after another on the calling thread.
    i.compute_units = 1;
    i.max_work_group_size = kMaxWorkGroupSize;
    for (int d = 0; d < 3; ++d) i.max_work_group_dims[d] = kMaxWorkGroupDims[d];
    // Work-items of a group run in lockstep; subgroups are runs of kSubgroupWidth of them, and
    // every subgroup operation is checked (subgroup.cpp).
    i.subgroup_size = kSubgroupWidth;
    i.subgroup_ops = PLX_SUBGROUP_KNOWN | PLX_SUBGROUP_ALL;
    // Every fragment type, with plain f32 arithmetic per subgroup (matrix.cpp): correct and
    // checked, not fast.
    i.matrix_ops = PLX_MATRIX_KNOWN | PLX_MATRIX_ALL | PLX_MATRIX_EMULATED;
    i.memory_bytes = physical_memory();
    i.max_alloc_bytes = i.memory_bytes;
    i.local_memory_bytes = kLocalMemoryBytes;
    i.fp64 = 1;
    i.compute_capability = 0;
    g_device.magic = plx_device_s::kMagic;
}

bool valid_device(plx_device device) noexcept {
    return device == &g_device && device->magic == plx_device_s::kMagic;
}

plx_status device_count(uint32_t* count) {
    if (!count) return fail(PLX_ERROR_INVALID_ARGUMENT, "interp: device_count: count is NULL");
    *count = 1;
    return PLX_OK;
}

plx_status device_get(uint32_t index, plx_device* device) {
    if (!device) return fail(PLX_ERROR_INVALID_ARGUMENT, "interp: device_get: device is NULL");
    if (index != 0)
        return fail(PLX_ERROR_INVALID_ARGUMENT, "interp: device_get: index " +
                                                    std::to_string(index) +
                                                    " is out of range (1 device)");
    *device = &g_device;
    return PLX_OK;
}

plx_status device_info(plx_device device, plx_device_info* info) {
    if (!valid_device(device))
        return fail(PLX_ERROR_INVALID_ARGUMENT, "interp: device_info: not an interp device");
    if (!info || info->struct_size < sizeof(uint32_t))
        return fail(PLX_ERROR_INVALID_ARGUMENT,
                    "interp: device_info: info is NULL or its struct_size is too small");
    // Write only what the caller's struct holds; its struct_size stays the caller's.
    const size_t n = std::min<size_t>(info->struct_size, sizeof(plx_device_info));
    std::memcpy(reinterpret_cast<char*>(info) + sizeof(uint32_t),
                reinterpret_cast<const char*>(&device->info) + sizeof(uint32_t),
                n - sizeof(uint32_t));
    return PLX_OK;
}

} // namespace plx_interp
