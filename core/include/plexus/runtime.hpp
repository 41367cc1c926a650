// plexus::Runtime: discovers and loads the backend plugins named by the configuration and
// routes work to them. Plugins are shared between Runtimes and unloaded with the last one.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "plexus/backend.hpp"
#include "plexus/config.hpp"
#include "plexus/launch.hpp"
#include "plexus/router.hpp"

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
    double load_ms = 0;  // the plugin's module_load: its compile of the source, or loading the binary
    double total_ms = 0; // all of it, kernel_get included
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

    // The ranked candidates for this kernel (and launch grid, when given).
    std::vector<Candidate> explain(const ir::Kernel& kernel, const Grid* grid = nullptr) const;

    // Launches a kernel on the best backend (or on `target`): the arguments are checked
    // against the kernel's parameters at compile time (In/Out/InOut<T> take a Buffer<T>,
    // scalar parameters a number), and buffers are moved to the chosen device only when needed.
    template <class... P, class... A>
    Event launch(const Kernel<P...>& kernel, const Grid& grid, A&&... args) {
        return launch(Target{}, kernel, grid, std::forward<A>(args)...);
    }
    template <class... P, class... A>
    Event launch(const Target& target, const Kernel<P...>& kernel, const Grid& grid, A&&... args) {
        static_assert(sizeof...(P) == sizeof...(A),
                      "plexus::Runtime::launch: the number of arguments is not the kernel's");
        static_assert((detail::arg_ok<P, std::remove_cvref_t<A>>::value && ...),
                      "plexus::Runtime::launch: an argument does not fit its parameter "
                      "(In/Out/InOut<T> take a Buffer<T>, scalar parameters take a number)");
        std::vector<LaunchArg> list{detail::to_arg<P>(args)...};
        return launch_ir(target, kernel.ir_ptr(), grid, list);
    }
    // The same for a kernel known only at run time (a JSON IR file): arguments are checked
    // against its parameters before the launch.
    Event launch_ir(const Target& target, const std::shared_ptr<const ir::Kernel>& kernel,
                    const Grid& grid, std::vector<LaunchArg>& args);
    // Waits for every launch and transfer of every device.
    void finish();
    // One report per kernel compiled (or loaded from the disk cache) by this Runtime, in order.
    std::vector<CompileReport> compile_reports() const;

    Impl& impl();
    const Impl& impl() const;

private:
    std::unique_ptr<Impl> impl_;
};

} // namespace plexus
