// Direct backends (native): the kernel's work-group function through LLVM, from the disk cache
// where it holds the object code for this target, and the launch size from which its
// streaming twin runs.
#include "compile/compiler.hpp"

#include "codegen/host/jit/host_kernel.hpp"
#include "config/log.hpp"
#include "runtime/host_cache.hpp"

#include <algorithm>

namespace plexus::detail {

namespace {

// From how many bytes of buffers a launch on a Direct backend's device runs the streaming twin
// of its kernel: the config's `streaming_stores`, else half the last-level cache of the CPUs
// that run it (the cache's bytes per CPU sharing it, times the device's threads; 32 MiB where
// the host reports none), against the whole sizes of the launch's buffers, each once (not the
// bytes the kernel touches, which the runtime does not know). A launch that touches more than
// the cache streams through it anyway: the first lines it wrote are evicted before it ends, so
// saving their reads costs no consumer a hit. Half, because the launch shares the cache (with
// the rest of the process, and on a VM with its neighbours): docs/benchmarks.md measures the
// crossover.
uint64_t streaming_bytes(const Backend& b, const DeviceInfo& d, const Config& config) {
    if (auto it = config.backends.find(b.name());
        it != config.backends.end() && it->second.streaming_stores)
        return *it->second.streaming_stores;
    static const CacheShare llc = last_level_cache();
    if (llc.cpus == 0) return uint64_t(32) << 20;
    return llc.bytes / llc.cpus * std::max(1u, d.compute_units) / 2;
}

// The object code from the disk cache, or compiled and then stored there. The key holds the
// target triple, CPU and features the code was compiled for.
std::unique_ptr<codegen::HostKernel> host_kernel(const ir::Kernel& k, uint64_t hash,
                                                 const DeviceTarget& d, const Config& config,
                                                 DiskCache& disk, CompileReport& report) {
    const Backend& b = *d.backend;
    codegen::Options options = codegen_options(b, *d.info, config);
    auto t0 = std::chrono::steady_clock::now();
    std::optional<CacheKey> key;
    if (disk.enabled())
        key = CacheKey{hash,           "host_object", b.name(),
                       b.version(),    d.info->name,  codegen::host_target_id(options),
                       core_build_id()};
    if (key) {
        if (auto entry = disk.load(*key); entry && !entry->empty()) {
            report.cache_ms = ms_since(t0);
            auto t_load = std::chrono::steady_clock::now();
            try {
                auto loaded = codegen::load_host_object(k, options, *entry);
                report.load_ms = ms_since(t_load);
                report.language = "host object";
                report.from_disk_cache = true;
                report.code_bytes = entry->size();
                return loaded;
            } catch (const Error& e) {
                log().warn("the cached object code of kernel '{}' did not link on {} "
                           "({}); compiling it again",
                           k.name, d.label, e.what());
            }
        }
    }
    report.language = "host code";
    auto t_compile = std::chrono::steady_clock::now();
    auto compiled = codegen::compile_host(k, options);
    report.lower_ms = ms_since(t_compile);
    report.code_bytes = compiled->object().size();
    if (key) {
        auto t_store = std::chrono::steady_clock::now();
        disk.store(*key, compiled->object().data(), compiled->object().size());
        report.cache_ms += ms_since(t_store);
    }
    return compiled;
}

} // namespace

void build_direct(Compiled& c, const ir::Kernel& k, uint64_t hash, const DeviceTarget& d,
                  const Config& config, DiskCache& disk, CompileReport& report) {
    c.host = host_kernel(k, hash, d, config, disk, report);
    if (c.host->streaming_function())
        c.streaming_from = streaming_bytes(*d.backend, *d.info, config);
}

} // namespace plexus::detail
