// The executor: per-device queues, buffer residency, the compiled-kernel cache and the launch
// path (route, compile, make arguments resident, launch, fall back). Internal to libplexus.
#pragma once

#include "cache/disk_cache.hpp"
#include "plexus/backend.hpp"
#include "plexus/codegen.hpp"
#include "plexus/config.hpp"
#include "plexus/launch.hpp"
#include "plexus/runtime.hpp"
#include "plexus/router.hpp"
#include "trace/trace.hpp"

#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <vector>

namespace plexus::detail {

// One (backend, device) pair in use: its queue, and the lock that serializes calls naming it.
struct DeviceContext {
    const Backend* backend = nullptr;
    uint32_t index = 0;
    plx_device device = nullptr;
    const DeviceInfo* info = nullptr;
    plx_queue queue = nullptr;
    std::mutex mutex;
    std::vector<std::shared_ptr<const void>> pending; // kept alive until the queue syncs
    Trace* trace = nullptr;                            // the Runtime's, when tracing
    std::string label;                                 // "cuda:0 (NVIDIA H100 80GB HBM3)", for messages

    void sync(); // waits for the queue; takes the lock
};

struct DeviceCopy {
    DeviceContext* ctx;
    plx_buffer buffer;
    bool valid;
};

// Where a buffer's contents are. No valid copy anywhere means all zeros.
struct BufferState {
    class Executor* exec = nullptr;
    ir::Type element = ir::Scalar::F32;
    size_t count = 0, bytes = 0;
    std::vector<unsigned char> host;
    bool host_valid = false;
    std::vector<DeviceCopy> copies;
    std::mutex mutex;

    ~BufferState();
    DeviceCopy* copy_on(DeviceContext* ctx);
    const DeviceCopy* valid_copy() const;
    void refresh_host();                 // makes the host copy current (lock held)
    void make_resident(DeviceContext* c); // makes the copy on c current (lock held)
    void written_on(DeviceContext* c);    // after a kernel wrote it there (lock held)
};

struct EventState {
    DeviceContext* ctx = nullptr;
    plx_event event = nullptr;
    bool wait_by_sync = false; // the plugin has no events: a wait syncs the whole queue
    std::shared_ptr<const void> keepalive;
    // Tracing with profiling on: the launch's device time goes on the trace when the last
    // Event handle lets go.
    Trace* trace = nullptr;
    std::string kernel;
    Trace::Clock::time_point submitted{};
    ~EventState();
};

struct Compiled {
    const Backend* backend = nullptr;
    plx_module module = nullptr;
    plx_kernel kernel = nullptr;
    std::unique_ptr<codegen::HostKernel> host;
    bool cooperative = false;      // barriers or shared arrays: see choose_local
    ~Compiled();
};

class Executor {
public:
    Executor(const Config& config, const std::vector<std::unique_ptr<Backend>>& backends, Trace* trace = nullptr);
    ~Executor();

    Event launch(const Target& target, const std::shared_ptr<const ir::Kernel>& kernel,
                 const Grid& grid, std::vector<LaunchArg>& args);
    std::vector<Candidate> explain(const ir::Kernel& kernel, const Grid* grid) const;
    void finish();
    DeviceContext& context(const Backend* b, uint32_t index);
    std::vector<CompileReport> compile_reports() const;

private:
    const Config& config_;
    Trace* trace_;
    std::vector<const Backend*> backends_;
    mutable std::mutex mutex_;
    std::map<std::pair<const Backend*, uint32_t>, std::unique_ptr<DeviceContext>> contexts_;
    std::vector<CompileReport> reports_;
    std::map<std::tuple<uint64_t, const Backend*, uint32_t>, std::shared_ptr<Compiled>> compiled_;
    DiskCache disk_;
    // Per traced kernel, what every launch needs and costs a walk of the IR (the hash
    // serializes it): computed at its first launch. The weak pointer tells a kernel from a
    // later one allocated at the same address.
    struct KernelFacts {
        std::weak_ptr<const ir::Kernel> kernel;
        uint64_t hash = 0;
        KernelNeeds needs; // without the launch's work-group size
        // The ranked candidates per work-group size (0: the device picks): backends, devices
        // and config are fixed for the Executor's life, so a ranking never changes.
        std::map<uint64_t, std::shared_ptr<const std::vector<Candidate>>> ranked;
    };
    std::map<const ir::Kernel*, KernelFacts> facts_;
    // The kernel's hash and its ranking for a work-group size, computed at first use.
    std::shared_ptr<const std::vector<Candidate>> ranking(const std::shared_ptr<const ir::Kernel>& k,
                                                          uint64_t work_group_size, uint64_t& hash);

    KernelNeeds needs_of(const ir::Kernel& k, const Grid* grid) const;
    std::shared_ptr<Compiled> compile(const ir::Kernel& k, uint64_t hash, DeviceContext& ctx);
    std::unique_ptr<codegen::HostKernel> host_kernel(const ir::Kernel& k, uint64_t hash, DeviceContext& ctx,
                                                     CompileReport& report);
    // JIT: the module from the disk cache, or generated, loaded and then stored there.
    plx_module load_jit_module(const ir::Kernel& k, uint64_t hash, DeviceContext& ctx, ErrorContext& where,
                               CompileReport& report);
    // The last launch that went to the first candidate of its ranking, so that the next launch
    // of that kernel with that work-group size and target skips routing: the ranking never
    // changes, and the compiled kernel stays for the Executor's life. Guarded by mutex_.
    struct Hot {
        std::weak_ptr<const ir::Kernel> kernel;
        uint64_t work_group_size = 0;
        std::string backend;
        int device = -1;
        uint64_t hash = 0;
        DeviceContext* ctx = nullptr;
        std::shared_ptr<Compiled> compiled;
    } hot_;
    struct HotHit {
        DeviceContext* ctx = nullptr; // null: not the last launch's kind
        std::shared_ptr<Compiled> compiled;
        uint64_t hash = 0;
    };
    HotHit hot_launch(const std::shared_ptr<const ir::Kernel>& k, uint64_t work_group_size, const Target& target);
    void remember_hot(const std::shared_ptr<const ir::Kernel>& k, uint64_t work_group_size, const Target& target,
                      uint64_t hash, DeviceContext& ctx);
    // The device's context and the kernel compiled there, when both exist already: one lock,
    // the common case of a launch. {nullptr, nullptr} otherwise.
    std::pair<DeviceContext*, std::shared_ptr<Compiled>> ready(uint64_t hash, const Backend* b, uint32_t index);
    // `c`: the kernel compiled for ctx, or null to compile (or find) it now.
    Event launch_on(DeviceContext& ctx, const std::shared_ptr<const ir::Kernel>& k, uint64_t hash,
                    const Grid& grid, std::vector<LaunchArg>& args, std::shared_ptr<Compiled> c);
};

} // namespace plexus::detail
