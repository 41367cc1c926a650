// plexus::Runtime: discovers and loads the backend plugins named by the configuration and
// routes work to them. Plugins are shared between Runtimes and unloaded with the last one.
#pragma once

#include <future>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "plexus/backend.hpp"
#include "plexus/config.hpp"
#include "plexus/family.hpp"
#include "plexus/launch.hpp"
#include "plexus/queue.hpp"
#include "plexus/router.hpp"
#include "plexus/routing.hpp"
#include "plexus/tuning.hpp"

namespace plexus {

// Where the time went when one kernel was made ready for one device (its first launch there).
struct CompileReport {
    std::string kernel, backend, device;
    std::string language;         // of what the plugin loaded: generated source, or a cached binary
    bool from_disk_cache = false; // the disk cache held it: no code generation
    // Code generation (codegen::Phases): one-time set-up of the generator in this process,
    // IR -> target IR or source, LLVM's optimization, LLVM IR -> PTX. A Direct backend's whole
    // host compile counts as `lower`; a C-like generator has only `lower`.
    double setup_ms = 0, lower_ms = 0, optimize_ms = 0, emit_ms = 0;
    double cache_ms = 0; // disk cache look-up, and the store after a miss
    // The plugin's module_load: its compile of the source, or loading the binary.
    double load_ms = 0;
    double total_ms = 0; // all of it, kernel_get included
    // The size of what was loaded: generated source or PTX, a cached binary, the IR JSON of a
    // Custom plugin, or a Direct backend's host object code.
    size_t code_bytes = 0;
    // Why the device rejected the kernel ("" when it compiled): a failure is reported once and
    // remembered, and a routed launch goes on to the next candidate without trying again.
    std::string error;
};

// Host memory that a device transfers at full speed: page-locked where its backend allocates
// it (CUDA cuMemHostAlloc, a mapped OpenCL host buffer), 64-byte aligned ordinary memory
// otherwise. Freed with the last copy of the handle, which must go while its Runtime lives.
class HostMemory {
public:
    HostMemory() = default;
    HostMemory(std::shared_ptr<void> memory, size_t bytes, bool page_locked)
        : memory_(std::move(memory)), bytes_(bytes), page_locked_(page_locked) {}
    void* data() const { return memory_.get(); }
    size_t bytes() const { return bytes_; }
    bool page_locked() const { return page_locked_; } // the backend allocated it
    template <class T> std::span<T> as() const {
        return {static_cast<T*>(data()), bytes_ / sizeof(T)};
    }

private:
    std::shared_ptr<void> memory_;
    size_t bytes_ = 0;
    bool page_locked_ = false;
};

// Kernels being compiled ahead of their launches (Runtime::prepare). Copies share the state;
// it outlives the Runtime (compiles still queued then end with an error saying so).
class Prepared {
public:
    // Waits until every kernel is compiled (or failed); throws the first failure, the error
    // the kernel's launch on that device reports.
    void wait() const;
    // Whether every compile has ended, without waiting.
    bool ready() const;
    size_t size() const { return done_.size(); }

private:
    friend class Runtime;
    std::vector<std::shared_future<void>> done_;
};

class Runtime {
public:
    struct Impl; // core/src/runtime/runtime_impl.hpp

    // Config::load(): PLEXUS_CONFIG, the user's file, or defaults.
    Runtime();
    explicit Runtime(Config config);
    ~Runtime();
    Runtime(const Runtime&) = delete;
    Runtime& operator=(const Runtime&) = delete;

    const Config& config() const;
    // One entry per plugin file found, in discovery order.
    const std::vector<LoadReportEntry>& load_report() const;
    // The loaded backends, highest effective priority first, ties by name.
    std::vector<const Backend*> backends() const;
    // Every (backend, device) candidate for a kernel with these needs, ranked, with the reason
    // each was kept or dropped.
    std::vector<Candidate> explain(const KernelNeeds& needs) const;

    // The ranked candidates for this kernel (and launch grid, when given). A candidate where the
    // kernel failed to compile in this Runtime is dropped with the failure as its reason; with
    // `compile`, the kernel is first compiled on every kept candidate (what `plexus explain
    // --compile` shows), which may take a while.
    std::vector<Candidate> explain(const ir::Kernel& kernel, const Grid* grid = nullptr,
                                   bool compile = false) const;

    // Launches a kernel on the best backend (or on `target`): the arguments are checked
    // against the kernel's parameters at compile time (In/Out/InOut<T> take a Buffer<T>,
    // scalar parameters a number), and buffers are moved to the chosen device only when needed.
    template <class... P, class... A>
    Event launch(const Kernel<P...>& kernel, const Grid& grid, A&&... args) {
        return launch(Target{}, kernel, grid, std::forward<A>(args)...);
    }
    template <class... P, class... A>
    Event launch(const Target& target, const Kernel<P...>& kernel, const Grid& grid, A&&... args) {
        auto list = detail::launch_args<P...>(args...);
        return launch_ir(target, kernel.ir_ptr(), grid, list);
    }
    // The same for a kernel known only at run time (a JSON IR file): arguments are checked
    // against its parameters before the launch.
    Event launch_ir(const Target& target, const std::shared_ptr<const ir::Kernel>& kernel,
                    const Grid& grid, std::span<const LaunchArg> args);
    // Launches a kernel family's variant for this shape: on the best device that can run one
    // (or on `target`), the variant stored for the (family, device, shape bucket), else the
    // fastest of the variants timed now (Config::tuning "auto"), else the family's heuristic;
    // the grid is the family's for that variant. See plexus/family.hpp.
    template <class... P, class... A>
    Event launch(const Family<P...>& family, const Shape& shape, A&&... args) {
        return launch(Target{}, family, shape, std::forward<A>(args)...);
    }
    template <class... P, class... A>
    Event launch(const Target& target, const Family<P...>& family, const Shape& shape,
                 A&&... args) {
        auto list = detail::launch_args<P...>(args...);
        return launch_family(target, family.def_ptr(), shape, list);
    }
    Event launch_family(const Target& target, const std::shared_ptr<detail::FamilyDef>& family,
                        const Shape& shape, std::span<const LaunchArg> args);
    // The variant a launch of the family with these arguments would use, tuning now where
    // nothing is stored (`retune`: even where something is); the arguments are the launch's
    // and the buffers it may write are put back as they were. What `plexus tune` runs.
    template <class... P, class... A>
    TuningReport tune(const Target& target, const Family<P...>& family, const Shape& shape,
                      bool retune, A&&... args) {
        auto list = detail::launch_args<P...>(args...);
        return tune_family(target, *family.def_ptr(), shape, list, retune);
    }
    TuningReport tune_family(const Target& target, const detail::FamilyDef& family,
                             const Shape& shape, std::span<const LaunchArg> args, bool retune);
    // Every choice of a family variant this Runtime made, in order (one per family, device
    // and shape: later launches of the same shape reuse it).
    std::vector<TuningReport> tuning_reports() const;
    // How many launches tuning has timed in this Runtime.
    size_t tuning_launches() const;
    // With routing "measured": the latest decision of each (kernel, launch bucket) this
    // Runtime routed, and how many launches it timed to learn (routing.hpp).
    std::vector<RoutingDecision> routing_decisions() const;
    size_t routing_launches() const;
    // A new in-order queue on the target's device (the named backend's device, device 0 when
    // none is given; the highest-priority backend when no backend is named). See queue.hpp.
    Queue queue(const Target& target = {});
    // `bytes` of host memory for transfers to and from the target's device (see HostMemory).
    HostMemory host_memory(const Target& target, size_t bytes);
    // Waits for every launch and transfer of every device and queue.
    void finish();
    // Compiles kernels ahead of their launches and returns at once: each on the device its
    // launch would go to (the first candidate of the router, or of `target`), in parallel on a
    // pool of at most Config::compile_threads threads. A launch of a kernel still compiling
    // waits for that kernel alone; one compiled already starts at once.
    Prepared prepare(std::span<const std::shared_ptr<const ir::Kernel>> kernels,
                     const Target& target = {});
    template <class... K> Prepared prepare(const Target& target, const K&... kernels) {
        const std::shared_ptr<const ir::Kernel> list[] = {kernels.ir_ptr()...};
        return prepare(std::span<const std::shared_ptr<const ir::Kernel>>(list), target);
    }
    // One report per kernel compiled (or loaded from the disk cache) by this Runtime, in order.
    std::vector<CompileReport> compile_reports() const;

    Impl& impl();
    const Impl& impl() const;

private:
    std::unique_ptr<Impl> impl_;
};

} // namespace plexus
