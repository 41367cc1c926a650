// The executor: per-device queues, buffer residency and the launch path (route, have the
// kernel compiled, make arguments resident, launch, fall back). Compiling is compile/'s.
// Internal to libplexus.
#pragma once

#include "compile/compile_pool.hpp"
#include "compile/compiler.hpp"
#include "plexus/backend.hpp"
#include "plexus/codegen.hpp"
#include "plexus/config.hpp"
#include "plexus/launch.hpp"
#include "plexus/router.hpp"
#include "plexus/runtime.hpp"
#include "router/history.hpp"
#include "trace/trace.hpp"

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

namespace plexus::detail {

struct DeviceContext;

// One in-order queue of a device: the default one of each device (Runtime::launch and the
// transfers it needs) or a px::Queue. The lock serializes the calls that name it.
struct Lane {
    DeviceContext* ctx = nullptr;
    plx_queue queue = nullptr;
    std::mutex mutex;
    std::vector<std::shared_ptr<const void>> pending; // kept alive until the queue syncs
    std::string label; // "cuda:0 (NVIDIA H100 80GB HBM3)", or with " queue 2"

    Lane(DeviceContext& ctx, bool profiling, std::string label);
    ~Lane(); // waits for the queue, then destroys it
    Lane(const Lane&) = delete;
    Lane& operator=(const Lane&) = delete;
    void sync(); // waits for the queue; takes the lock
};

// One (backend, device) pair in use: its identity (what kernels are compiled for) and its
// default lane.
struct DeviceContext : DeviceTarget {
    Trace* trace = nullptr; // the Runtime's, when tracing
    std::shared_ptr<Lane> lane;
    // Measured routing: the link's bandwidth, once known (Executor::link_of).
    std::atomic<bool> link_known{false};
    Link link;

    void sync() { lane->sync(); }
};

struct EventState;

// The commands in flight that use one device copy of a buffer: the last that wrote it, and
// those since that read it (at most one per lane, the latest: a lane runs in order). A command
// on another lane that reads the copy starts after `write`; one that writes it after all of
// them. Commands of one lane need nothing: they run in order.
struct CopyUse {
    std::shared_ptr<EventState> write;
    std::vector<std::shared_ptr<EventState>> reads;
};

struct DeviceCopy {
    DeviceContext* ctx;
    plx_buffer buffer;
    bool valid;
    CopyUse use{};
};

// What make_resident moved into the copy on the lane's device, for the caller to record with
// the command's event: the copy it read from (another device's), and whether it wrote.
struct Moved {
    DeviceContext* from = nullptr;
    bool wrote = false;
};

// Where a buffer's contents are. No valid copy anywhere means all zeros. The host copy is only
// ever read and written synchronously.
struct BufferState {
    class Executor* exec = nullptr;
    ir::Type element = ir::Scalar::F32;
    size_t count = 0, bytes = 0;
    Placement placement = Placement::HostMirrored;
    DeviceContext* home = nullptr; // DeviceOnly and Pinned
    HostMemory host;               // allocated at first use (never for DeviceOnly)
    bool host_valid = false;
    std::vector<DeviceCopy> copies;
    std::mutex mutex;

    ~BufferState();
    DeviceCopy* copy_on(DeviceContext* ctx);
    DeviceCopy& allocation_on(DeviceContext* ctx); // the copy there, allocated (not valid) if new
    const DeviceCopy* valid_copy() const;
    // Before a command on `lane` that reads (or writes) `copy`: orders the lane after the
    // commands of other lanes it must follow (lock held).
    static void before(DeviceCopy& copy, Lane& lane, bool write);
    // After it was enqueued, with its event (lock held).
    static void after(DeviceCopy& copy, const std::shared_ptr<EventState>& event, bool write);
    unsigned char* host_data(); // the host copy's memory, allocated at first use
    void refresh_host();        // makes the host copy current (lock held)
    // Reads the valid copy on `c`'s device into dst, blocking, after its last writer.
    void read_copy(const DeviceCopy& c, void* dst, size_t offset, size_t n);
    // Makes the copy on lane's device current, ordered on the lane (lock held). The caller
    // records the command that follows with after(): as a write of that copy when it wrote.
    Moved make_resident(Lane& lane);
    void written_on(DeviceContext* c); // after a command wrote it there (lock held)
    // Records a command on `event`'s lane that used the buffer after make_resident returned
    // `moved`, and wrote the copy on that lane's device when `write` (lock held).
    void used(const Moved& moved, const std::shared_ptr<EventState>& event, bool write);
};

// Tracing with profiling on: a launch's device time goes on the trace when the last Event
// handle lets go.
struct DeviceSpan {
    Trace* trace = nullptr;
    std::string kernel;
    Trace::Clock::time_point submitted{};
};

// Made for every launch, transfer and marker, so it holds only what every event needs (a
// launch's compiled kernel lives as long as the Executor, a Direct launch's arguments as long
// as its lane's `pending`).
struct EventState {
    std::shared_ptr<Lane> lane;
    plx_event event = nullptr;
    bool wait_by_sync = false; // the plugin has no events: a wait syncs the whole queue
    std::unique_ptr<DeviceSpan> device_span;
    ~EventState();
    void wait();
};

// A new event state, its block from the calling thread's cache (block_cache.hpp): a launch
// makes one, and its caller usually drops it at once.
std::shared_ptr<EventState> new_event_state();

// Throws InvalidArgument when [offset, offset + bytes) is not inside a buffer of `size` bytes.
void check_range(size_t offset, size_t bytes, size_t size, const char* what);

// One transfer between host memory and a buffer of the lane's device, with its event. Without
// `blocking` the plugin's asynchronous form is used where it has one (the host memory must then
// stay valid until the event); with it, the host memory may be reused on return.
std::shared_ptr<EventState> transfer(const std::shared_ptr<Lane>& lane, plx_buffer buffer,
                                     size_t offset, void* host, size_t bytes, bool write,
                                     bool blocking);

// 64-byte aligned ordinary host memory; `what` names it in the OutOfMemory error.
HostMemory aligned_host_memory(size_t bytes, const std::string& what);

// An event for everything enqueued on the lane so far (lock held): the plugin's marker, or
// one that waits by syncing the lane when the plugin has none.
std::shared_ptr<EventState> lane_marker(const std::shared_ptr<Lane>& lane);

struct Compiled;

// The last launch of a thread that went to the first candidate of its ranking, so that the
// next launch of that kernel with that work-group size and target skips routing: the ranking
// never changes, and the context and compiled kernel stay for the Executor's life. One per
// thread (executor.cpp), so that a launch takes no lock for it and touches no line that other
// threads write.
struct HotLaunch {
    uint64_t executor = 0; // Executor::id_
    // The kernel object: its address, and a weak pointer that says it is still the one there.
    const ir::Kernel* kernel_ptr = nullptr;
    std::weak_ptr<const ir::Kernel> kernel;
    uint64_t work_group_size = 0;
    std::string backend; // the launch's Target
    int device = -1;
    uint64_t hash = 0;
    DeviceContext* ctx = nullptr;
    Compiled* compiled = nullptr;
};

// Whether a kept candidate is on the target's backend and device (any, where it names none).
bool serves(const Candidate& c, const Target& target);
// Whether `seen` is this very kernel object: the same control block, alive since `k` holds
// it. Unlike seen.lock() == k, no reference count changes.
bool same_kernel(const std::weak_ptr<const ir::Kernel>& seen,
                 const std::shared_ptr<const ir::Kernel>& k);

class Executor {
public:
    Executor(const Config& config, const std::vector<std::unique_ptr<Backend>>& backends,
             Trace* trace = nullptr);
    ~Executor();

    // `lane`: a px::Queue's lane, whose device is then the only one tried; null: the default
    // lane of the device the router picks.
    Event launch(const Target& target, const std::shared_ptr<const ir::Kernel>& kernel,
                 const Grid& grid, std::span<const LaunchArg> args,
                 const std::shared_ptr<Lane>& lane = nullptr);
    // The context of the target's device: the named backend (the highest-ranked one when none
    // is named), device 0 when none is given. `what` names the request in errors.
    DeviceContext& context_for(const Target& target, const char* what);
    // Runtime::host_memory.
    HostMemory host_memory(DeviceContext& ctx, size_t bytes);
    // A new lane (px::Queue) on the target's device: the best device of the named backend, or
    // of the highest-ranked backend when none is named.
    std::shared_ptr<Lane> new_lane(const Target& target);
    // The ranking, with the candidates where the kernel failed to compile in this process
    // dropped and the failure as the reason; with `compile`, compiled first on every kept
    // candidate.
    std::vector<Candidate> explain(const ir::Kernel& kernel, const Grid* grid,
                                   bool compile = false);
    // Runtime::prepare of one kernel: its compile queued on the pool for the first candidate
    // (of the target); the future ends when it has compiled, or holds why not.
    std::shared_future<void> prepare(const std::shared_ptr<const ir::Kernel>& kernel,
                                     const Target& target);
    void finish();
    DeviceContext& context(const Backend* b, uint32_t index);
    std::vector<CompileReport> compile_reports() const;
    RouteHistory& routes() { return routes_; }

private:
    const Config& config_;
    Trace* trace_;
    std::vector<const Backend*> backends_;
    mutable std::mutex mutex_;
    std::map<std::pair<const Backend*, uint32_t>, std::unique_ptr<DeviceContext>> contexts_;
    std::vector<std::weak_ptr<Lane>> user_lanes_;     // for finish()
    std::vector<std::shared_ptr<Lane>> lanes() const; // every default and user lane alive
    uint32_t lanes_made_ = 0;
    Compiler compiler_;
    CompilePool pool_; // stopped first: its compiles use the compiler and the contexts
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
        // Measured routing's candidates per work-group size: the ranking's kept devices at
        // priority 0 or more, for a launch that names no backend.
        std::map<uint64_t, std::shared_ptr<const std::vector<DeviceContext*>>> measured;
    };
    std::map<const ir::Kernel*, KernelFacts> facts_;
    // The kernel's hash and its ranking for a work-group size, computed at first use.
    std::shared_ptr<const std::vector<Candidate>>
    ranking(const std::shared_ptr<const ir::Kernel>& k, uint64_t work_group_size, uint64_t& hash);

    KernelNeeds needs_of(const ir::Kernel& k, const Grid* grid) const;
    const uint64_t id_; // never reused, unlike an address: tells whose a HotLaunch is
    struct HotHit {
        DeviceContext* ctx = nullptr; // null: not the last launch's kind
        Compiled* compiled = nullptr;
        uint64_t hash = 0;
    };
    HotHit hot_launch(const std::shared_ptr<const ir::Kernel>& k, uint64_t work_group_size,
                      const Target& target);
    void remember_hot(const std::shared_ptr<const ir::Kernel>& k, uint64_t work_group_size,
                      const Target& target, uint64_t hash, DeviceContext& ctx);
    // The device's context and the kernel compiled there, when both exist already: one lock,
    // the common case of a routed launch. {nullptr, nullptr} otherwise.
    std::pair<DeviceContext*, Compiled*> ready(uint64_t hash, const Backend* b, uint32_t index);
    // The NoBackend error of a kernel no candidate of `ranked` (for the target) takes.
    Error no_backend(const ir::Kernel& k, const std::vector<Candidate>& ranked,
                     const Target& target) const;
    // Whether a launch that failed with `e` may go on to the next candidate.
    bool may_fall_back(const Error& e, const Target& target) const;
    // A launch that failed on the device of its thread's last launch like it (the error, or
    // null when there was none, and that device).
    struct Failure {
        const Error* error = nullptr;
        const DeviceContext* ctx = nullptr;
    };
    // The launch through the ranking: the first candidate that takes it, falling back past
    // failures where allowed; the first to succeed without a failure becomes the thread's
    // HotLaunch.
    Event launch_ranked(const Target& target, const std::shared_ptr<const ir::Kernel>& k,
                        const Grid& bounded, uint64_t work_group_size,
                        std::span<const LaunchArg> args, const std::shared_ptr<Lane>& lane,
                        Failure hot);
    // `c`: the kernel compiled for ctx, or null to compile (or find) it now.
    // With `started`, the launch is timed: it waits for the lane (its transfers included) and
    // sets `started` just before the kernel is enqueued.
    Event launch_on(const std::shared_ptr<Lane>& lane, const std::shared_ptr<const ir::Kernel>& k,
                    uint64_t hash, const Grid& grid, std::span<const LaunchArg> args, Compiled* c,
                    std::chrono::steady_clock::time_point* started = nullptr);

    // ---- measured routing (measured.cpp) ----
    RouteHistory routes_;
    // Measured routing's candidates of the kernel for a launch that names no backend or device
    // (computed at its first such launch), and its hash.
    std::shared_ptr<const std::vector<DeviceContext*>>
    measured_candidates(const std::shared_ptr<const ir::Kernel>& k, uint64_t work_group_size,
                        uint64_t& hash);
    // A launch routed by measured cost: the candidate with the smallest prediction, or one still
    // being timed (the launch waits, and its time joins the history).
    Event launch_measured(const Target& target, const std::shared_ptr<const ir::Kernel>& k,
                          const Grid& bounded, uint64_t work_group_size,
                          std::span<const LaunchArg> args);
    // The device's link bandwidth: stored, or measured at its first use (a few blocking
    // transfers each way).
    Link link_of(DeviceContext& ctx);
    std::mutex link_mutex_; // one calibration at a time
};

} // namespace plexus::detail
