// The native plugin's one device: the host CPU, described from /proc/cpuinfo and sysconf.
#include "native.hpp"

#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

namespace plx_native {
namespace {

plx_device_s g_device;

void copy_string(char* dst, size_t capacity, const std::string& src) {
    const size_t n = std::min(capacity - 1, src.size());
    std::memcpy(dst, src.data(), n);
    dst[n] = '\0';
}

std::string trim(const std::string& s) {
    const auto begin = s.find_first_not_of(" \t");
    if (begin == std::string::npos) return {};
    const auto end = s.find_last_not_of(" \t\r\n");
    return s.substr(begin, end - begin + 1);
}

struct CpuInfo {
    std::string model;
    std::string vendor;
    std::set<std::string> flags;
};

// Reads the first processor's entry only: Linux lists the same model and flags for each core
// of a homogeneous CPU, and a hybrid one differs only in cache sizes.
CpuInfo read_cpuinfo() {
    CpuInfo cpu;
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty()) {
            if (!cpu.model.empty() || !cpu.vendor.empty()) break;
            continue;
        }
        const auto colon = line.find(':');
        if (colon == std::string::npos) continue;
        const std::string key = trim(line.substr(0, colon));
        const std::string value = trim(line.substr(colon + 1));
        if (key == "model name" && cpu.model.empty())
            cpu.model = value;
        else if (key == "vendor_id" && cpu.vendor.empty())
            cpu.vendor = value;
        else if ((key == "flags" || key == "Features") && cpu.flags.empty()) {
            std::istringstream words(value);
            for (std::string w; words >> w;)
                cpu.flags.insert(w);
        }
    }
    return cpu;
}

std::string machine_name() {
    utsname u{};
    if (uname(&u) == 0 && u.machine[0] != '\0') return u.machine;
#if defined(__x86_64__)
    return "x86_64";
#elif defined(__aarch64__)
    return "aarch64";
#else
    return "unknown";
#endif
}

// "x86_64-avx512", "x86_64-avx2", "x86_64-sse4.2": the widest vector ISA the host code
// generator may assume, so the router and cache keys can tell machines apart.
std::string arch_name(const std::string& machine, const CpuInfo& cpu) {
    if (machine == "x86_64" || machine == "i686") {
        if (cpu.flags.count("avx512f")) return machine + "-avx512";
        if (cpu.flags.count("avx2")) return machine + "-avx2";
        if (cpu.flags.count("sse4_2")) return machine + "-sse4.2";
    }
    return machine;
}

uint64_t physical_memory() {
    const long pages = sysconf(_SC_PHYS_PAGES);
    const long page_size = sysconf(_SC_PAGE_SIZE);
    if (pages <= 0 || page_size <= 0) return 0;
    return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_size);
}

} // namespace

bool device_setup(uint32_t threads) {
    const CpuInfo cpu = read_cpuinfo();
    const std::string machine = machine_name();
    plx_device_info& info = g_device.info;
    info = plx_device_info{};
    info.struct_size = sizeof(plx_device_info);
    info.type = PLX_DEVICE_TYPE_CPU;
    copy_string(info.name, sizeof info.name, cpu.model.empty() ? machine : cpu.model);
    copy_string(info.vendor, sizeof info.vendor, cpu.vendor.empty() ? "unknown" : cpu.vendor);
    copy_string(info.platform, sizeof info.platform, "");
    copy_string(info.arch, sizeof info.arch, arch_name(machine, cpu));
    info.compute_units = threads;
    info.max_work_group_size = kMaxWorkGroupSize;
    std::copy(std::begin(kMaxWorkGroupDims), std::end(kMaxWorkGroupDims), info.max_work_group_dims);
    // Subgroups of one work-item: the host code generator's subgroup operations read the
    // work-item's own value (docs/kernel-language.md, "Subgroups").
    info.subgroup_size = 1;
    info.subgroup_ops = PLX_SUBGROUP_KNOWN | PLX_SUBGROUP_ALL;
    // Matrix fragments as plain arithmetic (ir::lower_matrix), every shape and type.
    info.matrix_ops = PLX_MATRIX_KNOWN | PLX_MATRIX_ALL | PLX_MATRIX_EMULATED;
    info.memory_bytes = physical_memory();
    info.max_alloc_bytes = info.memory_bytes;
    info.local_memory_bytes = kLocalMemoryBytes;
    info.fp64 = 1;
    info.compute_capability = 0;
    g_device.magic = plx_device_s::kMagic;
    if (info.memory_bytes == 0) {
        fail(PLX_ERROR_DEVICE, "native: init: sysconf reports no physical memory");
        return false;
    }
    return true;
}

void device_teardown() noexcept {
    g_device.magic = 0;
}

bool valid_device(plx_device device) noexcept {
    return device == &g_device && device->magic == plx_device_s::kMagic;
}

plx_status device_count(uint32_t* count) {
    if (!count) return fail(PLX_ERROR_INVALID_ARGUMENT, "native: device_count: count is NULL");
    *count = 1;
    return PLX_OK;
}

plx_status device_get(uint32_t index, plx_device* device) {
    if (!device) return fail(PLX_ERROR_INVALID_ARGUMENT, "native: device_get: device is NULL");
    if (index != 0)
        return fail(PLX_ERROR_INVALID_ARGUMENT, "native: device_get: index " +
                                                    std::to_string(index) +
                                                    " is out of range (1 device)");
    *device = &g_device;
    return PLX_OK;
}

plx_status device_info(plx_device device, plx_device_info* info) {
    if (!valid_device(device))
        return fail(PLX_ERROR_INVALID_ARGUMENT, "native: device_info: not a native device");
    if (!info) return fail(PLX_ERROR_INVALID_ARGUMENT, "native: device_info: info is NULL");
    if (info->struct_size < sizeof(uint32_t))
        return fail(PLX_ERROR_INVALID_ARGUMENT, "native: device_info: info->struct_size is " +
                                                    std::to_string(info->struct_size) +
                                                    ", too small for any field");
    // Write only what the caller's (possibly older) struct holds, and say how much that was.
    const size_t n = std::min<size_t>(info->struct_size, sizeof(plx_device_info));
    std::memcpy(reinterpret_cast<char*>(info) + sizeof(uint32_t),
                reinterpret_cast<const char*>(&device->info) + sizeof(uint32_t),
                n - sizeof(uint32_t));
    info->struct_size = static_cast<uint32_t>(n);
    return PLX_OK;
}

} // namespace plx_native
