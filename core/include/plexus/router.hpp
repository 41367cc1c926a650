// Routing: every (backend, device) pair is a candidate; the kernel's needs and the
// configuration drop some, and the rest are ranked. A pure function, so it is unit-testable.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "plexus/backend.hpp"
#include "plexus/config.hpp"

namespace plexus {

// What a kernel (and its launch) needs from a backend and a device.
struct KernelNeeds {
    std::string kernel;               // looks up kernels.NAME.prefer
    std::set<std::string> intrinsics; // catalog names
    bool fp64 = false;
    uint64_t local_memory_bytes = 0;       // static + dynamic local memory per work-group
    uint32_t work_group_size = 0;          // work-items per group; 0: no constraint
    std::set<std::string> native_backends; // backends its native blocks have an entry for
    bool has_native_blocks = false;
    bool native_fallback = false;               // the native blocks carry a portable fallback
    std::set<plx_language> languages_available; // what the core can generate; empty = all
    bool ir_v2 = false;  // a Custom backend must read "plexus-ir/2" (ir::needs_ir_v2)
    std::string routine; // a library routine (ir::Kernel::routine): backends offering routines
};

struct Candidate {
    std::string backend;
    uint32_t device_index = 0;
    std::string device_name;
    bool kept = false;
    std::string reason; // why kept ("priority 90 (plugin default), gpu, ...") or dropped
    int priority = 0;   // the priority it was ranked by
    double device_score = 0;
    const Backend* backend_ptr = nullptr;
};

// Kept candidates first, best first; then the dropped ones with their reason. Rank: the
// kernel's prefer list, then priority (the config's override, else the plugin's default;
// a CPU device of a JIT or Custom backend counts kDriverCpuPenalty less, so the host's own
// Direct backend wins on the CPU), then device score, then backend name and device index.
std::vector<Candidate> rank_candidates(const std::vector<const Backend*>& backends,
                                       const KernelNeeds& needs, const Config& config);

// Subtracted from the plugin's default priority for a CPU device driven through a JIT or
// Custom backend (an OpenCL CPU device ranks below native, an OpenCL GPU above it).
inline constexpr int kDriverCpuPenalty = 50;

// GPU > accelerator > CPU > other, then compute units.
double device_score(const DeviceInfo& device);

// Whether a `devices` selector ("all", "gpu", "cpu", "accelerator", or a case-insensitive
// substring of the platform or name) accepts the device.
bool device_selected(const std::string& selector, const DeviceInfo& device);

} // namespace plexus
