// Turning IR into something a backend can launch: one builder per execution model (Direct:
// host code through LLVM; JIT: generated source the plugin compiles; Custom: the IR as JSON),
// the kernels compiled per (IR hash, backend, device), the compile failures remembered, the
// disk cache and the compile reports. The runtime routes and launches; this compiles.
#pragma once

#include "cache/disk_cache.hpp"
#include "plexus/backend.hpp"
#include "plexus/codegen.hpp"
#include "plexus/config.hpp"
#include "plexus/error.hpp"
#include "plexus/runtime.hpp"
#include "trace/trace.hpp"

#include <chrono>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

namespace plexus::detail {

// The device a kernel is compiled for (the runtime's DeviceContext is one).
struct DeviceTarget {
    const Backend* backend = nullptr;
    uint32_t index = 0;
    plx_device device = nullptr;
    const DeviceInfo* info = nullptr;
    std::string label; // "cuda:0 (NVIDIA H100 80GB HBM3)", for messages and the trace
};

// A kernel made ready for one device; it lives as long as its Compiler, whose owner waits for
// every queue before freeing it, so launches refer to it without counting references.
struct Compiled {
    const Backend* backend = nullptr;
    plx_module module = nullptr;
    plx_kernel kernel = nullptr;
    std::unique_ptr<codegen::HostKernel> host;
    // A launch whose buffers take at least this many bytes runs host->streaming_function().
    uint64_t streaming_from = BackendConfig::never;
    bool cooperative = false;         // barriers or shared arrays: see the runtime's choose_local
    uint32_t dynamic_local_bytes = 0; // what every launch asks for on top of the code's own
    ~Compiled();
};

class Compiler {
public:
    Compiler(const Config& config, Trace* trace);
    ~Compiler();
    Compiler(const Compiler&) = delete;
    Compiler& operator=(const Compiler&) = delete;

    // The kernel compiled for the device: from memory, or made now (and from the disk cache
    // where it holds it), or, when another thread is compiling it, what that compile gives. A
    // failure to compile (ErrorCode::Compile or Unsupported) is remembered and thrown again for
    // that kernel and device without trying again; memory or a device may recover, so other
    // failures are not.
    Compiled* compile(const ir::Kernel& k, uint64_t hash, const DeviceTarget& d);
    // The kernel compiled for the device, or null when it was not (yet).
    Compiled* find(uint64_t hash, const Backend* b, uint32_t index) const;
    // The remembered compile failure of the kernel on the device, or null.
    const Error* failure(uint64_t hash, const Backend* b, uint32_t index) const;
    // One report per kernel compiled, or failed, in order.
    std::vector<CompileReport> reports() const;
    // Frees every compiled kernel (the owner calls it once no queue can run them).
    void clear();

private:
    using Key = std::tuple<uint64_t, const Backend*, uint32_t>;
    Compiled* build(const ir::Kernel& k, uint64_t hash, const DeviceTarget& d,
                    CompileReport& report, std::chrono::steady_clock::time_point t0);

    const Config& config_;
    Trace* trace_;
    DiskCache disk_;
    mutable std::mutex mutex_;
    std::map<Key, std::unique_ptr<Compiled>> compiled_;
    std::map<Key, Error> failed_; // kernels a device rejected
    // Kernels being compiled now: a second caller for one waits for the first caller's result
    // (or error) instead of compiling it again, so a launch waits only for its own kernel.
    std::map<Key, std::shared_future<Compiled*>> pending_;
    std::vector<CompileReport> reports_;
};

// ---- the builders, one per execution model (build_*.cpp) -------------------------------------

// Milliseconds since t0, for the reports.
double ms_since(std::chrono::steady_clock::time_point t0);
// What the generators need of the backend and device: its name, arch, CPU, spellings.
codegen::Options codegen_options(const Backend& b, const DeviceInfo& d, const Config& config);

// Direct: the host code from the disk cache, or compiled through LLVM and stored there; sets
// host and streaming_from.
void build_direct(Compiled& c, const ir::Kernel& k, uint64_t hash, const DeviceTarget& d,
                  const Config& config, DiskCache& disk, CompileReport& report);
// JIT: source in the first language of the plugin's that plexus generates, loaded by the
// plugin (or its binary from the disk cache); sets module, kernel and dynamic_local_bytes.
void build_jit(Compiled& c, const ir::Kernel& k, uint64_t hash, const DeviceTarget& d,
               const Config& config, DiskCache& disk, CompileReport& report);
// A library routine (Kernel::routine), any execution model: the plugin's routine of that name
// (PLX_LANG_ROUTINE); one the plugin or device does not offer is an Unsupported error, so the
// router passes over the device for the kernel from then on. Sets module and kernel.
void build_routine(Compiled& c, const ir::Kernel& k, const DeviceTarget& d, CompileReport& report);
// Custom: the IR as JSON in the oldest schema the kernel fits; sets module and kernel.
void build_custom(Compiled& c, const ir::Kernel& k, const DeviceTarget& d, CompileReport& report);

} // namespace plexus::detail
