// The Compiler: the compiled kernels per (IR hash, backend, device), the failures remembered,
// the reports and their trace spans; the builders of build_*.cpp do the work.
#include "compile/compiler.hpp"

#include "plexus/catalog.hpp"

namespace plexus::detail {

Compiled::~Compiled() {
    // Without module_unload (optional) the plugin frees its modules at shutdown.
    if (module && backend->api().module_unload) backend->api().module_unload(module);
}

double ms_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

codegen::Options codegen_options(const Backend& b, const DeviceInfo& d, const Config& config) {
    codegen::Options o;
    o.backend = b.name();
    o.arch = d.arch;
    if (auto it = config.backends.find(b.name()); it != config.backends.end()) {
        o.host_cpu = it->second.cpu.value_or("");
        o.host_features = it->second.features.value_or("");
    }
    for (const auto& info : intrinsic_catalog())
        if (const plx_intrinsic* i = b.intrinsic(info.name); i && i->spelling)
            o.spellings[info.name] = i->spelling;
    return o;
}

namespace {

// The compile as one span with its phases inside, one after another in the order they run
// (disk cache look-up and store as one bar, set-up, lowering, optimization, emission, module
// load): their durations are measured, their places within the span approximate. A failed
// compile is one span that says why.
void trace_compile(Trace& trace, const std::string& track, const CompileReport& r,
                   Trace::Clock::time_point start) {
    auto at = [&](double ms) {
        return start + std::chrono::duration_cast<Trace::Clock::duration>(
                           std::chrono::duration<double, std::milli>(ms));
    };
    if (!r.error.empty()) {
        trace.span(track, "compile " + r.kernel + " failed", "compile", start, at(r.total_ms),
                   {{"language", r.language}, {"error", r.error}});
        return;
    }
    trace.span(track, "compile " + r.kernel, "compile", start, at(r.total_ms),
               {{"language", r.language}, {"from_disk_cache", r.from_disk_cache}});
    double t = 0;
    for (auto [name, ms] : {std::pair{"disk cache", r.cache_ms},
                            {"set-up", r.setup_ms},
                            {"lower", r.lower_ms},
                            {"optimize", r.optimize_ms},
                            {"emit", r.emit_ms},
                            {"module load", r.load_ms}}) {
        if (ms <= 0) continue;
        trace.span(track, name, "compile", at(t), at(t + ms));
        t += ms;
    }
}

} // namespace

Compiler::Compiler(const Config& config, Trace* trace)
    : config_(config), trace_(trace), disk_(config.cache_dir) {}

Compiler::~Compiler() {
    clear();
}

void Compiler::clear() {
    std::lock_guard lock(mutex_);
    compiled_.clear();
}

Compiled* Compiler::find(uint64_t hash, const Backend* b, uint32_t index) const {
    std::lock_guard lock(mutex_);
    auto it = compiled_.find({hash, b, index});
    return it == compiled_.end() ? nullptr : it->second.get();
}

const Error* Compiler::failure(uint64_t hash, const Backend* b, uint32_t index) const {
    std::lock_guard lock(mutex_);
    auto it = failed_.find({hash, b, index});
    return it == failed_.end() ? nullptr : &it->second;
}

std::vector<CompileReport> Compiler::reports() const {
    std::lock_guard lock(mutex_);
    return reports_;
}

Compiled* Compiler::compile(const ir::Kernel& k, uint64_t hash, const DeviceTarget& d) {
    const Key key{hash, d.backend, d.index};
    // Made only on a miss: a promise allocates its state, and one destroyed unsatisfied makes
    // a broken_promise exception, which a launch that finds its kernel compiled must not pay.
    std::optional<std::promise<Compiled*>> promise;
    {
        std::unique_lock lock(mutex_);
        if (auto it = compiled_.find(key); it != compiled_.end()) return it->second.get();
        // The same code would fail the same way: the first failure is the answer.
        if (auto it = failed_.find(key); it != failed_.end()) throw it->second;
        if (auto it = pending_.find(key); it != pending_.end()) {
            std::shared_future<Compiled*> compiling = it->second;
            lock.unlock();
            return compiling.get(); // the compiling thread's kernel, or its error
        }
        promise.emplace();
        pending_.emplace(key, promise->get_future().share());
    }
    auto done = [&] {
        std::lock_guard lock(mutex_);
        pending_.erase(key);
    };
    const auto t0 = std::chrono::steady_clock::now();
    CompileReport report;
    report.kernel = k.name;
    report.backend = d.backend->name();
    report.device = d.info->name;
    try {
        Compiled* c = build(k, hash, d, report, t0);
        done();
        promise->set_value(c);
        return c;
    } catch (const Error& e) {
        if (e.code() == ErrorCode::Compile || e.code() == ErrorCode::Unsupported) {
            report.error = e.what();
            report.total_ms = ms_since(t0);
            if (trace_) trace_compile(*trace_, d.label, report, t0);
            std::lock_guard lock(mutex_);
            if (failed_.emplace(key, e).second) reports_.push_back(std::move(report));
        }
        done();
        promise->set_exception(std::current_exception());
        throw;
    } catch (...) {
        done();
        promise->set_exception(std::current_exception());
        throw;
    }
}

Compiled* Compiler::build(const ir::Kernel& k, uint64_t hash, const DeviceTarget& d,
                          CompileReport& report, std::chrono::steady_clock::time_point t0) {
    auto c = std::make_unique<Compiled>();
    c->backend = d.backend;
    c->cooperative = k.shared_bytes() > 0 || ir::collect_uses(k).barrier;
    if (!k.routine.empty())
        build_routine(*c, k, d, report);
    else
        switch (d.backend->exec_model()) {
        case ExecModel::Direct: build_direct(*c, k, hash, d, config_, disk_, report); break;
        case ExecModel::JIT: build_jit(*c, k, hash, d, config_, disk_, report); break;
        case ExecModel::Custom: build_custom(*c, k, d, report); break;
        }
    report.total_ms = ms_since(t0);
    if (trace_) trace_compile(*trace_, d.label, report, t0);
    std::lock_guard lock(mutex_);
    // Another thread may have compiled it meanwhile: the first stays, this one goes.
    auto [it, added] = compiled_.emplace(Key{hash, d.backend, d.index}, std::move(c));
    if (added) reports_.push_back(std::move(report));
    return it->second.get();
}

} // namespace plexus::detail
