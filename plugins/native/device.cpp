// The native plugin's one device: the host CPU, described from /proc/cpuinfo and sysconf. The
// device entries are plugins/common/host_device.hpp's, instantiated here.
#include "native_plugin.hpp"

#include <sys/utsname.h>

#include <fstream>
#include <set>
#include <sstream>

namespace plx_native {
namespace {

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

} // namespace

bool device_setup(uint32_t threads) {
    const CpuInfo cpu = read_cpuinfo();
    const std::string machine = machine_name();
    // Subgroups of one work-item: the host code generator's subgroup operations read the
    // work-item's own value (docs/kernel-language.md, "Subgroups"). Matrix fragments are plain
    // arithmetic (ir::lower_matrix), every shape and type.
    const plx_device_info& info =
        Host::setup({.name = cpu.model.empty() ? machine : cpu.model,
                     .vendor = cpu.vendor.empty() ? "unknown" : cpu.vendor,
                     .arch = arch_name(machine, cpu),
                     .compute_units = threads,
                     .max_work_group_size = kMaxWorkGroupSize,
                     .max_work_group_dims = kMaxWorkGroupDims,
                     .subgroup_size = 1,
                     .local_memory_bytes = kLocalMemoryBytes});
    if (info.memory_bytes == 0) {
        fail(PLX_ERROR_DEVICE, "native: init: sysconf reports no physical memory");
        return false;
    }
    return true;
}

} // namespace plx_native

template struct plx_support::HostDevice<plx_native::Plugin>;
