// The launch path: route the kernel, compile it for the chosen device (cached), make the
// arguments resident there, launch, and fall back to the next candidate where allowed.
#include "runtime/executor.hpp"

#include "codegen/host/jit/host_kernel.hpp"
#include "runtime/block_cache.hpp"
#include "runtime/host_cache.hpp"
#include "runtime/launch_list.hpp"
#include "plexus/catalog.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <spdlog/spdlog.h>

namespace plexus::detail {

// ---- device contexts and lanes ------------------------------------------------------------

Lane::Lane(DeviceContext& c, bool profiling, std::string name) : ctx(&c), label(std::move(name)) {
    const Backend& b = *c.backend;
    b.check(b.api().queue_create(c.device, profiling ? PLX_QUEUE_PROFILING : 0, &queue), "queue_create", label);
}

Lane::~Lane() {
    // queue_destroy waits for the queue's work.
    if (queue) ctx->backend->api().queue_destroy(queue);
}

void Lane::sync() {
    std::lock_guard lock(mutex);
    if (queue) ctx->backend->check(ctx->backend->api().queue_sync(queue), "queue_sync", label);
    pending.clear();
}

namespace {

std::atomic<uint64_t> executors_made{0};

// The calling thread's HotLaunch. A launch reads only `hot_of_thread`, a plain pointer: no
// initialization guard or destructor registration on the way. `hot_owner` frees the entry
// when the thread ends and clears the pointer, so that a launch made later in the thread's
// end (from another thread_local's destructor) finds none and caches none.
thread_local HotLaunch* hot_of_thread = nullptr;
thread_local bool hot_gone = false;
struct HotOwner {
    std::unique_ptr<HotLaunch> hot;
    ~HotOwner() {
        hot_of_thread = nullptr;
        hot_gone = true;
    }
};
thread_local HotOwner hot_owner;

} // namespace

Executor::Executor(const Config& config, const std::vector<std::unique_ptr<Backend>>& backends, Trace* trace)
    : config_(config), trace_(trace), disk_(config.cache_dir), id_(++executors_made) {
    for (auto& b : backends) backends_.push_back(b.get());
}

Executor::~Executor() {
    // Every lane is waited for, also after another failed: its launches may run the code of
    // the compiled kernels freed below.
    for (auto& lane : lanes()) {
        try {
            lane->sync();
        } catch (const std::exception& e) {
            spdlog::warn("plexus: a queue failed while the runtime shut down: {}", e.what());
        }
    }
    compiled_.clear();
    for (auto& [key, ctx] : contexts_) ctx->lane.reset();
}

DeviceContext& Executor::context(const Backend* b, uint32_t index) {
    if (index >= b->devices().size())
        throw Error(ErrorCode::InvalidArgument, "device " + std::to_string(index) + " of backend '" + b->name() +
                    "' does not exist: it has " + std::to_string(b->devices().size()) + " device(s), 0 to " +
                    std::to_string(b->devices().size() - 1), {b->name(), "", "", "", "", ""});
    std::lock_guard lock(mutex_);
    auto& slot = contexts_[{b, index}];
    if (!slot) {
        auto ctx = std::make_unique<DeviceContext>();
        ctx->backend = b;
        ctx->index = index;
        ctx->device = b->device(index);
        ctx->info = &b->devices().at(index);
        ctx->trace = trace_;
        ctx->label = b->name() + ":" + std::to_string(index) + " (" + ctx->info->name + ")";
        ctx->lane = std::make_shared<Lane>(*ctx, config_.profiling, ctx->label);
        slot = std::move(ctx);
    }
    return *slot;
}

DeviceContext& Executor::context_for(const Target& target, const char* what) {
    const Backend* chosen = nullptr;
    for (const Backend* b : backends_)
        if (target.backend.empty() ? !chosen || b->priority() > chosen->priority() : b->name() == target.backend)
            chosen = b;
    if (!chosen) {
        std::string loaded;
        for (const Backend* b : backends_) loaded += (loaded.empty() ? "" : ", ") + b->name();
        throw Error(ErrorCode::NoBackend, target.backend.empty()
                                              ? std::string(what) + " needs a backend, and none is loaded"
                                              : std::string(what) + ": no backend '" + target.backend +
                                                    "' is loaded (loaded: " + (loaded.empty() ? "none" : loaded) + ")",
                    {target.backend, "", "", "", "", ""});
    }
    return context(chosen, target.device < 0 ? 0 : uint32_t(target.device));
}

std::shared_ptr<Lane> Executor::new_lane(const Target& target) {
    DeviceContext& ctx = context_for(target, "a queue");
    std::lock_guard lock(mutex_);
    auto lane = std::make_shared<Lane>(ctx, config_.profiling, ctx.label + " queue " + std::to_string(++lanes_made_));
    std::erase_if(user_lanes_, [](const std::weak_ptr<Lane>& w) { return w.expired(); });
    user_lanes_.push_back(lane);
    return lane;
}

std::vector<std::shared_ptr<Lane>> Executor::lanes() const {
    std::vector<std::shared_ptr<Lane>> all;
    std::lock_guard lock(mutex_);
    for (auto& [key, ctx] : contexts_) all.push_back(ctx->lane);
    for (auto& w : user_lanes_)
        if (auto l = w.lock()) all.push_back(std::move(l));
    return all;
}

void Executor::finish() {
    for (auto& lane : lanes()) lane->sync();
}

// ---- compiled kernels --------------------------------------------------------------------

Compiled::~Compiled() {
    // Without module_unload (optional) the plugin frees its modules at shutdown.
    if (module && backend->api().module_unload) backend->api().module_unload(module);
}

namespace {

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

// From how many bytes of buffers a launch on a Direct backend's device runs the streaming twin
// of its kernel: the config's `streaming_stores`, else half the last-level cache of the CPUs
// that run it (the cache's bytes per CPU sharing it, times the device's threads; 32 MiB where
// the host reports none), against the whole sizes of the launch's buffers, each once (not the
// bytes the kernel touches, which the runtime does not know). A launch that touches more than
// the cache streams through it anyway: the first lines it wrote are evicted before it ends, so
// saving their reads costs no consumer a hit. Half, because the launch shares the cache (with
// the rest of the process, and on a VM with its neighbours): vector_add_float4 launched again
// and again streamed faster from 18 MiB of buffers on the Zen 4 (32 MiB L3; plain stores
// faster at 12 MiB) and from 150 MiB on the 16-core Xeon (300 MiB reported; plain faster at
// 75 MiB), docs/benchmarks.md.
uint64_t streaming_bytes(const Backend& b, const DeviceInfo& d, const Config& config) {
    if (auto it = config.backends.find(b.name()); it != config.backends.end() && it->second.streaming_stores)
        return *it->second.streaming_stores;
    static const detail::CacheShare llc = detail::last_level_cache();
    if (llc.cpus == 0) return uint64_t(32) << 20;
    return llc.bytes / llc.cpus * std::max(1u, d.compute_units) / 2;
}

// The language plexus generates for a JIT backend: its first accepted language that plexus
// has a generator for; CUDA C first where the config asks for NVRTC.
plx_language pick_language(const Backend& b, const Config& config) {
    auto it = config.backends.find(b.name());
    bool nvrtc = it != config.backends.end() && it->second.compiler == "nvrtc";
    std::vector<plx_language> order = b.languages();
    if (nvrtc)
        std::stable_partition(order.begin(), order.end(), [](plx_language l) { return l == PLX_LANG_CUDA_C; });
    for (plx_language l : order)
        if (codegen::make_codegen(l)) return l;
    return PLX_LANG_UNSET;
}

// Where an error of this kernel's launch happened, before a backend is chosen.
ErrorContext kernel_context(const ir::Kernel& k) { return ErrorContext{"", "", k.name, "", "", ""}; }

// Whether `seen` is this very kernel object: the same control block, alive since `k` holds
// it. Unlike seen.lock() == k, no reference count changes.
bool same_kernel(const std::weak_ptr<const ir::Kernel>& seen, const std::shared_ptr<const ir::Kernel>& k) {
    return !seen.owner_before(k) && !k.owner_before(seen) && !seen.expired();
}

// The launch's grid with the kernel's declared work-group size applied: a required shape is
// the default and the only one allowed; an explicit group may not exceed a declared maximum.
Grid bounded_grid(const ir::Kernel& k, const Grid& grid) {
    const ir::WorkGroupBound& w = k.work_group;
    Grid g = grid;
    auto shape = [](const std::array<uint32_t, 3>& l) {
        return std::to_string(l[0]) + " x " + std::to_string(l[1]) + " x " + std::to_string(l[2]);
    };
    std::array<uint32_t, 3> asked = g.local;
    for (uint32_t d = g.dims; d < 3; ++d) asked[d] = 1;
    if (w.required[0]) {
        for (uint32_t d = g.dims; d < 3; ++d)
            if (w.required[d] != 1)
                throw Error(ErrorCode::InvalidArgument, "kernel '" + k.name + "' requires work-groups of " +
                            shape(w.required) + ", which a " + std::to_string(g.dims) + "-D grid cannot have", kernel_context(k));
        if (g.local[0] == 0) g.local = w.required;
        else if (asked != w.required)
            throw Error(ErrorCode::InvalidArgument, "kernel '" + k.name + "' requires work-groups of " + shape(w.required) +
                        " (px::require_work_group_size); the launch asks for " + shape(asked), kernel_context(k));
    }
    if (w.max && g.local[0] != 0 && uint64_t(asked[0]) * asked[1] * asked[2] > w.max)
        throw Error(ErrorCode::InvalidArgument, "kernel '" + k.name + "' takes at most " + std::to_string(w.max) +
                    " work-items per group (px::max_work_group_size); the launch asks for " + shape(asked), kernel_context(k));
    return g;
}

// `cooperative`: the kernel has barriers or shared arrays, so its work-items may rely on the
// group's size (a shared array sized for the documented default, per-work-item state kept
// across barriers); its default group stays 256 in 1-D everywhere.
std::array<uint32_t, 3> choose_local(const Grid& g, const DeviceInfo& d, bool cooperative, uint32_t kernel_max) {
    if (g.local[0] != 0) {
        std::array<uint32_t, 3> l = g.local;
        for (uint32_t i = g.dims; i < 3; ++i) l[i] = 1;
        return l;
    }
    // Otherwise a CPU gets 1-D groups of 4096 (clamped to the device's maximum): a work-item
    // loop long enough to amortize the group's set-up, and a kernel that reads a few blocks
    // a group apart gets streams long enough for the hardware prefetchers (the sample
    // vector_add reached 0.5 of the C++ loop's bandwidth with groups of 256, 0.85 with 1024
    // and 0.97 with 4096 on the 2-core EPYC).
    uint32_t wide = d.type == DeviceType::CPU && !cooperative ? 4096 : 256;
    std::array<uint32_t, 3> l = g.dims == 1 ? std::array<uint32_t, 3>{wide, 1, 1}
                               : g.dims == 2 ? std::array<uint32_t, 3>{16, 16, 1}
                                             : std::array<uint32_t, 3>{8, 8, 4};
    uint32_t max = d.max_work_group_size ? d.max_work_group_size : 256;
    if (kernel_max) max = std::min(max, kernel_max);
    while (l[0] * l[1] * l[2] > max) {
        auto big = std::max_element(l.begin(), l.end());
        *big = std::max(1u, *big / 2);
    }
    return l;
}

} // namespace

namespace {

double ms_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

} // namespace

// The compile as one span with its phases inside, one after another in the order they run
// (disk cache look-up and store as one bar, set-up, lowering, optimization, emission, module
// load): their durations are measured, their places within the span approximate.
static void trace_compile(Trace& trace, const std::string& track, const CompileReport& r, Trace::Clock::time_point start) {
    auto at = [&](double ms) { return start + std::chrono::duration_cast<Trace::Clock::duration>(std::chrono::duration<double, std::milli>(ms)); };
    if (!r.error.empty()) {
        trace.span(track, "compile " + r.kernel + " failed", "compile", start, at(r.total_ms),
                   {{"language", r.language}, {"error", r.error}});
        return;
    }
    trace.span(track, "compile " + r.kernel, "compile", start, at(r.total_ms),
               {{"language", r.language}, {"from_disk_cache", r.from_disk_cache}});
    double t = 0;
    for (auto [name, ms] : {std::pair{"disk cache", r.cache_ms}, {"set-up", r.setup_ms}, {"lower", r.lower_ms},
                            {"optimize", r.optimize_ms}, {"emit", r.emit_ms}, {"module load", r.load_ms}}) {
        if (ms <= 0) continue;
        trace.span(track, name, "compile", at(t), at(t + ms));
        t += ms;
    }
}

const Error* Executor::compile_failure(uint64_t hash, const Backend* b, uint32_t index) const {
    std::lock_guard lock(mutex_);
    auto it = failed_.find({hash, b, index});
    return it == failed_.end() ? nullptr : &it->second;
}

Compiled* Executor::compile(const ir::Kernel& k, uint64_t hash, DeviceContext& ctx) {
    auto key = std::make_tuple(hash, ctx.backend, ctx.index);
    {
        std::lock_guard lock(mutex_);
        if (auto it = compiled_.find(key); it != compiled_.end()) return it->second.get();
        // The same code would fail the same way: the first failure is the answer.
        if (auto it = failed_.find(key); it != failed_.end()) throw it->second;
    }
    auto t0 = std::chrono::steady_clock::now();
    const Backend& b = *ctx.backend;
    CompileReport report;
    report.kernel = k.name;
    report.backend = b.name();
    report.device = ctx.info->name;
    try {
        return compile_new(k, hash, ctx, report, t0);
    } catch (const Error& e) {
        // A rejected kernel stays rejected (the build log, an unsupported construct); memory
        // or a device may recover, so those are tried again at the next launch.
        if (e.code() != ErrorCode::Compile && e.code() != ErrorCode::Unsupported) throw;
        report.error = e.what();
        report.total_ms = ms_since(t0);
        if (trace_) trace_compile(*trace_, ctx.label, report, t0);
        std::lock_guard lock(mutex_);
        if (failed_.emplace(key, e).second) reports_.push_back(std::move(report));
        throw;
    }
}

Compiled* Executor::compile_new(const ir::Kernel& k, uint64_t hash, DeviceContext& ctx, CompileReport& report,
                                std::chrono::steady_clock::time_point t0) {
    auto key = std::make_tuple(hash, ctx.backend, ctx.index);
    const Backend& b = *ctx.backend;
    auto c = std::make_unique<Compiled>();
    c->backend = &b;
    c->cooperative = k.shared_bytes() > 0 || ir::collect_uses(k).barrier;
    ErrorContext where{b.name(), ctx.info->name, k.name, "", "", ""};
    if (b.exec_model() == ExecModel::Direct) {
        c->host = host_kernel(k, hash, ctx, report);
        if (c->host->streaming_function()) c->streaming_from = streaming_bytes(b, *ctx.info, config_);
    } else {
        if (b.exec_model() == ExecModel::JIT) {
            const plx_language lang = pick_language(b, config_);
            c->module = load_jit_module(k, hash, ctx, lang, where, report);
            if (lang == PLX_LANG_PTX || lang == PLX_LANG_CUDA_C)
                c->dynamic_shared = uint32_t(codegen::cuda_dynamic_shared(k).bytes);
        } else {
            auto t_lower = std::chrono::steady_clock::now();
            // A plugin that reads the IR gets warpgroup accumulators as plain arithmetic (each
            // subgroup its 16 rows; the swizzle is then only index arithmetic), and the kernel
            // without min_groups, which only guides the CUDA generators: one written before
            // those existed still loads the kernel.
            ir::Kernel plain = ir::lower_matrix(k, /*only_warpgroup=*/true);
            for (ir::ArrayDecl& a : plain.shared) a.swizzle = false;
            plain.work_group.min_groups = 0;
            // The oldest schema the kernel fits, under the language value the plugin lists for it.
            const bool v2 = ir::needs_ir_v2(plain);
            const auto& langs = b.languages();
            const plx_language lang = v2 || std::find(langs.begin(), langs.end(), PLX_LANG_PLEXUS_IR_JSON) == langs.end()
                                          ? PLX_LANG_PLEXUS_IR2_JSON
                                          : PLX_LANG_PLEXUS_IR_JSON;
            report.language = to_string(lang);
            std::string json = ir::to_json(plain);
            report.lower_ms = ms_since(t_lower);
            auto t_load = std::chrono::steady_clock::now();
            plx_status s = b.api().module_load(ctx.device, lang, json.data(), json.size(), "", &c->module);
            report.load_ms = ms_since(t_load);
            if (s != PLX_OK) {
                where.build_log = b.last_error();
                throw Error(s == PLX_ERROR_COMPILE ? ErrorCode::Compile : ErrorCode::Device,
                            std::string("module_load of the IR failed (") + status_name(s) + ")", where);
            }
        }
        b.check(b.api().kernel_get(c->module, k.name.c_str(), &c->kernel), "kernel_get", ctx.label);
    }
    report.total_ms = ms_since(t0);
    if (trace_) trace_compile(*trace_, ctx.label, report, t0);
    std::lock_guard lock(mutex_);
    // Another thread may have compiled it meanwhile: the first stays, this one goes.
    auto [it, added] = compiled_.emplace(key, std::move(c));
    if (added) reports_.push_back(std::move(report));
    return it->second.get();
}

// Direct: the object code from the disk cache, or compiled and then stored there. The key
// holds the target triple, CPU and features the code was compiled for.
std::unique_ptr<codegen::HostKernel> Executor::host_kernel(const ir::Kernel& k, uint64_t hash, DeviceContext& ctx,
                                                           CompileReport& report) {
    const Backend& b = *ctx.backend;
    codegen::Options options = codegen_options(b, *ctx.info, config_);
    auto t0 = std::chrono::steady_clock::now();
    std::optional<CacheKey> key;
    if (disk_.enabled())
        key = CacheKey{hash, "host_object", b.name(), b.version(), ctx.info->name, codegen::host_target_id(options),
                       core_build_id()};
    if (key) {
        if (auto entry = disk_.load(*key); entry && !entry->empty()) {
            report.cache_ms = ms_since(t0);
            auto t_load = std::chrono::steady_clock::now();
            try {
                auto loaded = codegen::load_host_object(k, options, *entry);
                report.load_ms = ms_since(t_load);
                report.language = "host object";
                report.from_disk_cache = true;
                return loaded;
            } catch (const Error& e) {
                spdlog::warn("plexus: the cached object code of kernel '{}' did not link on {} ({}); compiling it again",
                             k.name, ctx.label, e.what());
            }
        }
    }
    report.language = "host code";
    auto t_compile = std::chrono::steady_clock::now();
    auto compiled = codegen::compile_host(k, options);
    report.lower_ms = ms_since(t_compile);
    if (key) {
        auto t_store = std::chrono::steady_clock::now();
        disk_.store(*key, compiled->object().data(), compiled->object().size());
        report.cache_ms += ms_since(t_store);
    }
    return compiled;
}

std::vector<CompileReport> Executor::compile_reports() const {
    std::lock_guard lock(mutex_);
    return reports_;
}

// A cache entry is one byte naming the plx_language of what follows (a binary the plugin can
// load again, or the generated source when it returns none), then that text or binary.
plx_module Executor::load_jit_module(const ir::Kernel& k, uint64_t hash, DeviceContext& ctx, plx_language lang,
                                     ErrorContext& where, CompileReport& report) {
    const Backend& b = *ctx.backend;
    if (lang == PLX_LANG_UNSET)
        throw Error(ErrorCode::Unsupported, "plexus generates none of the backend's languages", where);
    CacheKey key{hash, to_string(lang), b.name(), b.version(), ctx.info->name, ctx.info->arch, core_build_id()};
    plx_module module = nullptr;
    auto t_cache = std::chrono::steady_clock::now();
    if (auto entry = disk_.load(key); entry && entry->size() > 1) {
        report.cache_ms = ms_since(t_cache);
        auto stored = static_cast<plx_language>((*entry)[0]);
        const char* data = reinterpret_cast<const char*>(entry->data() + 1);
        auto t_load = std::chrono::steady_clock::now();
        if (b.api().module_load(ctx.device, stored, data, entry->size() - 1, "", &module) == PLX_OK) {
            report.load_ms = ms_since(t_load);
            report.language = to_string(stored);
            report.from_disk_cache = true;
            spdlog::debug("plexus: kernel '{}' for {} from the disk cache ({})", k.name, ctx.label, to_string(stored));
            return module;
        }
        spdlog::warn("plexus: the cached {} of kernel '{}' did not load on {} ({}); compiling it again",
                     to_string(stored), k.name, ctx.label, b.last_error());
    } else {
        report.cache_ms = ms_since(t_cache);
    }
    codegen::Phases phases;
    codegen::Options options = codegen_options(b, *ctx.info, config_);
    options.phases = &phases;
    auto t_gen = std::chrono::steady_clock::now();
    std::string source = codegen::make_codegen(lang)->generate(k, options);
    double gen_ms = ms_since(t_gen);
    report.language = to_string(lang);
    report.setup_ms = phases.setup * 1e3;
    report.optimize_ms = phases.optimize * 1e3;
    report.emit_ms = phases.emit * 1e3;
    // A generator without phases (the C-like ones) counts wholly as lowering.
    report.lower_ms = gen_ms - report.setup_ms - report.optimize_ms - report.emit_ms;
    auto t_load = std::chrono::steady_clock::now();
    plx_status s = b.api().module_load(ctx.device, lang, source.data(), source.size(), "", &module);
    report.load_ms = ms_since(t_load);
    if (s != PLX_OK) {
        where.build_log = b.last_error();
        throw Error(s == PLX_ERROR_COMPILE ? ErrorCode::Compile : ErrorCode::Device,
                    std::string("module_load of the ") + to_string(lang) + " failed (" + status_name(s) + ")", where);
    }
    if (disk_.enabled()) {
        auto t_store = std::chrono::steady_clock::now();
        std::vector<unsigned char> entry(1, static_cast<unsigned char>(lang));
        entry.insert(entry.end(), source.begin(), source.end());
        plx_language binary_lang = PLX_LANG_UNSET;
        size_t bytes = 0;
        if (b.api().module_get_binary && b.api().module_get_binary(module, &binary_lang, nullptr, &bytes) == PLX_OK &&
            bytes > 0) {
            std::vector<unsigned char> binary(bytes + 1);
            if (b.api().module_get_binary(module, &binary_lang, binary.data() + 1, &bytes) == PLX_OK) {
                binary[0] = static_cast<unsigned char>(binary_lang);
                binary.resize(bytes + 1);
                entry = std::move(binary);
            }
        }
        disk_.store(key, entry.data(), entry.size());
        report.cache_ms += ms_since(t_store);
    }
    return module;
}

// ---- routing -----------------------------------------------------------------------------

KernelNeeds Executor::needs_of(const ir::Kernel& k, const Grid* grid) const {
    ir::KernelUses uses = ir::collect_uses(k);
    KernelNeeds n;
    n.kernel = k.name;
    n.intrinsics.insert(uses.intrinsics.begin(), uses.intrinsics.end());
    n.fp64 = uses.fp64;
    n.local_memory_bytes = k.shared_bytes();
    if (grid && grid->local[0] != 0)
        n.work_group_size = grid->local[0] * std::max(1u, grid->local[1]) * std::max(1u, grid->local[2]);
    n.native_backends.insert(uses.native_backends.begin(), uses.native_backends.end());
    n.has_native_blocks = uses.native_blocks;
    n.native_fallback = uses.native_fallback;
    n.ir_v2 = ir::needs_ir_v2(k);
    // A required work-group shape is the launch's shape on every device: drop those too small.
    const auto& req = k.work_group.required;
    if (req[0] && !n.work_group_size) n.work_group_size = req[0] * req[1] * req[2];
    static const std::set<plx_language> generated = [] {
        std::set<plx_language> langs{PLX_LANG_PLEXUS_IR_JSON, PLX_LANG_PLEXUS_IR2_JSON};
        for (plx_language l : {PLX_LANG_OPENCL_C, PLX_LANG_CUDA_C, PLX_LANG_PTX})
            if (codegen::make_codegen(l)) langs.insert(l);
        return langs;
    }();
    n.languages_available = generated;
    return n;
}

std::shared_ptr<const std::vector<Candidate>> Executor::ranking(const std::shared_ptr<const ir::Kernel>& k,
                                                                uint64_t work_group_size, uint64_t& hash) {
    std::lock_guard lock(mutex_);
    KernelFacts& f = facts_[k.get()];
    if (!same_kernel(f.kernel, k)) f = {k, k->hash(), needs_of(*k, nullptr), {}};
    hash = f.hash;
    auto& ranked = f.ranked[work_group_size];
    if (!ranked) {
        KernelNeeds needs = f.needs;
        needs.work_group_size = uint32_t(work_group_size);
        ranked = std::make_shared<const std::vector<Candidate>>(rank_candidates(backends_, needs, config_));
    }
    return ranked;
}

std::vector<Candidate> Executor::explain(const ir::Kernel& k, const Grid* grid, bool compile_first) {
    std::vector<Candidate> ranked = rank_candidates(backends_, needs_of(k, grid), config_);
    const uint64_t hash = k.hash();
    for (Candidate& c : ranked) {
        if (!c.kept) continue;
        if (compile_first) {
            try {
                compile(k, hash, context(c.backend_ptr, c.device_index));
            } catch (const Error&) {
                // remembered below when it is a rejection of the kernel
            }
        }
        if (const Error* e = compile_failure(hash, c.backend_ptr, c.device_index)) {
            c.kept = false;
            c.reason = std::string("the kernel failed to compile here: ") + e->what();
        }
    }
    return ranked;
}

Event Executor::launch(const Target& asked, const std::shared_ptr<const ir::Kernel>& k,
                       const Grid& grid, std::span<const LaunchArg> args, const std::shared_ptr<Lane>& lane) {
    // A queue's launch goes to the queue's device and nowhere else. Otherwise `asked` is used as
    // it is: a copy would copy its string at every launch.
    std::optional<Target> of_queue;
    if (lane) of_queue = Target{lane->ctx->backend->name(), int(lane->ctx->index)};
    const Target& target = of_queue ? *of_queue : asked;
    // Arguments against parameters, before anything is routed or compiled.
    if (args.size() != k->params.size())
        throw Error(ErrorCode::InvalidArgument, "kernel '" + k->name + "' takes " +
                    std::to_string(k->params.size()) + " arguments, got " + std::to_string(args.size()), kernel_context(*k));
    for (size_t i = 0; i < args.size(); ++i) {
        const ir::Param& p = k->params[i];
        auto which = [&] { return "argument " + std::to_string(i) + " ('" + p.name + "') of kernel '" + k->name + "'"; };
        bool is_buffer = args[i].buffer != nullptr;
        if (is_buffer != (p.kind == ir::Param::Kind::Buffer))
            throw Error(ErrorCode::InvalidArgument, which() + ": expected " +
                        (is_buffer ? "a scalar " : "a buffer of ") + to_string(p.type) + ", got " +
                        (is_buffer ? "a buffer" : "a scalar"), kernel_context(*k));
        if (args[i].type != p.type)
            throw Error(ErrorCode::InvalidArgument, which() + ": expected " + to_string(p.type) +
                        (is_buffer ? " elements" : "") + ", got " + to_string(args[i].type) +
                        (to_string(p.type) == to_string(args[i].type) ? " declared with other members" : ""), kernel_context(*k));
        if (is_buffer && args[i].buffer->size() == 0)
            throw Error(ErrorCode::InvalidArgument, which() + ": the buffer is empty", kernel_context(*k));
        if (is_buffer && args[i].buffer->state().exec != this)
            throw Error(ErrorCode::InvalidArgument, which() + ": the buffer belongs to another plexus::Runtime", kernel_context(*k));
    }
    for (uint32_t d = 0; d < grid.dims; ++d)
        if (grid.global[d] == 0)
            throw Error(ErrorCode::InvalidArgument, "kernel '" + k->name + "': the grid is empty in dimension " + std::to_string(d), kernel_context(*k));
    const Grid bounded = bounded_grid(*k, grid);

    uint64_t work_group_size = bounded.local[0] == 0
                                   ? 0
                                   : uint64_t(bounded.local[0]) * std::max(1u, bounded.local[1]) * std::max(1u, bounded.local[2]);
    // The launch like the last one that went to its first candidate: straight there. The rest
    // (routing, falling back) is another function, so that this path stays short.
    if (HotHit hot = hot_launch(k, work_group_size, target); hot.ctx) {
        try {
            return launch_on(lane ? lane : hot.ctx->lane, k, hot.hash, bounded, args, hot.compiled);
        } catch (const Error& e) {
            if (!may_fall_back(e, target)) throw;
            return launch_ranked(target, k, bounded, work_group_size, args, lane, {&e, hot.ctx});
        }
    }
    return launch_ranked(target, k, bounded, work_group_size, args, lane, {});
}

bool Executor::may_fall_back(const Error& e, const Target& target) const {
    const bool recoverable = e.code() == ErrorCode::Compile || e.code() == ErrorCode::Unsupported ||
                             e.code() == ErrorCode::OutOfResources || e.code() == ErrorCode::OutOfMemory ||
                             e.code() == ErrorCode::Device;
    return config_.fallback && recoverable && target.backend.empty();
}

Event Executor::launch_ranked(const Target& target, const std::shared_ptr<const ir::Kernel>& k, const Grid& bounded,
                              uint64_t work_group_size, std::span<const LaunchArg> args,
                              const std::shared_ptr<Lane>& lane, Failure hot) {
    std::string tried;
    std::optional<Error> last;
    // Whether a device failed during this launch: then the next launch like it goes through
    // the ranking again (the failure may pass: memory, a device) instead of the hot path.
    bool fresh_failure = false;
    // A failure on one device that the next candidate may take over.
    auto note = [&](const Error& e, const DeviceContext& ctx) {
        spdlog::warn("plexus: kernel '{}' failed on {}, trying the next backend: {}", k->name, ctx.label, e.what());
        tried += "\n  " + ctx.label + ": " + e.what();
        last = e;
        fresh_failure = true;
    };
    if (hot.error) note(*hot.error, *hot.ctx);
    uint64_t hash = 0;
    std::shared_ptr<const std::vector<Candidate>> ranking_ptr = ranking(k, work_group_size, hash);
    const std::vector<Candidate>& ranked = *ranking_ptr;
    for (const Candidate& c : ranked) {
        if (!c.kept) continue;
        if (!target.backend.empty() && c.backend != target.backend) continue;
        if (target.device >= 0 && c.device_index != uint32_t(target.device)) continue;
        auto [ready_ctx, compiled] = ready(hash, c.backend_ptr, c.device_index);
        // A device that rejected the kernel before is passed over at once, as if the router had
        // dropped it: the launch that met the failure said so.
        if (!compiled && target.backend.empty() && config_.fallback)
            if (const Error* e = compile_failure(hash, c.backend_ptr, c.device_index)) {
                tried += "\n  " + c.backend + ":" + std::to_string(c.device_index) + ": " + e->what();
                if (!last) last = *e;
                continue;
            }
        DeviceContext& ctx = ready_ctx ? *ready_ctx : context(c.backend_ptr, c.device_index);
        if (&ctx == hot.ctx) continue;
        try {
            Event e = launch_on(lane ? lane : ctx.lane, k, hash, bounded, args, compiled);
            if (!fresh_failure) remember_hot(k, work_group_size, target, hash, ctx);
            return e;
        } catch (const Error& e) {
            if (!may_fall_back(e, target)) throw;
            note(e, ctx);
        }
    }
    if (last) throw Error(last->code(), "kernel '" + k->name + "' failed on every backend:" + tried, kernel_context(*k));
    std::string reasons;
    for (const Candidate& c : ranked)
        reasons += "\n  " + c.backend + ":" + std::to_string(c.device_index) + " (" + c.device_name + "): " + c.reason;
    if (!target.backend.empty()) reasons = "\n  requested backend '" + target.backend + "'" + reasons;
    throw Error(ErrorCode::NoBackend, "no backend can run kernel '" + k->name + "'" +
                (reasons.empty() ? std::string(": no backend is loaded") : reasons), kernel_context(*k));
}

Executor::HotHit Executor::hot_launch(const std::shared_ptr<const ir::Kernel>& k, uint64_t work_group_size,
                                   const Target& target) {
    const HotLaunch* h = hot_of_thread;
    // While the weak pointer has not expired, the kernel it saw still lives at kernel_ptr: k is
    // that kernel.
    if (!h || h->executor != id_ || h->kernel_ptr != k.get() || h->work_group_size != work_group_size ||
        h->device != target.device || h->backend != target.backend || h->kernel.expired())
        return {};
    return {h->ctx, h->compiled, h->hash};
}

void Executor::remember_hot(const std::shared_ptr<const ir::Kernel>& k, uint64_t work_group_size,
                            const Target& target, uint64_t hash, DeviceContext& ctx) {
    Compiled* compiled = nullptr;
    {
        std::lock_guard lock(mutex_);
        auto c = compiled_.find({hash, ctx.backend, ctx.index});
        if (c == compiled_.end()) return;
        compiled = c->second.get();
    }
    if (hot_gone) return; // the thread is ending
    if (!hot_owner.hot) {
        hot_owner.hot = std::make_unique<HotLaunch>();
        hot_of_thread = hot_owner.hot.get();
    }
    *hot_owner.hot = {id_, k.get(), k, work_group_size, target.backend, target.device, hash, &ctx, compiled};
}

std::pair<DeviceContext*, Compiled*> Executor::ready(uint64_t hash, const Backend* b, uint32_t index) {
    std::lock_guard lock(mutex_);
    auto ctx = contexts_.find({b, index});
    if (ctx == contexts_.end()) return {nullptr, nullptr};
    auto c = compiled_.find({hash, b, index});
    if (c == compiled_.end()) return {nullptr, nullptr};
    return {ctx->second.get(), c->second.get()};
}

namespace {

// Launches of up to this many arguments keep their per-argument lists on the stack.
constexpr size_t kInlineArgs = 16;

// One distinct buffer among a launch's arguments: whether the kernel may write it, and once it
// is current on the launch's device, its copy there and what making it current moved.
struct BufferUse {
    BufferState* state;
    bool write;
    plx_buffer handle = nullptr;
    Moved moved{};
};

// Holds the buffers' locks, taken in address order so that two launches of the same buffers
// cannot deadlock; sorting is skipped for the common launch of zero or one buffer.
class BufferLocks {
public:
    explicit BufferLocks(LaunchList<BufferUse, kInlineArgs>& uses) : order_(uses.size()) {
        for (const BufferUse& u : uses) order_.push_back(u.state);
        if (order_.size() > 1) std::sort(order_.begin(), order_.end());
        try {
            for (; locked_ < order_.size(); ++locked_) order_[locked_]->mutex.lock();
        } catch (...) {
            unlock();
            throw;
        }
    }
    ~BufferLocks() { unlock(); }
    BufferLocks(const BufferLocks&) = delete;
    BufferLocks& operator=(const BufferLocks&) = delete;

private:
    void unlock() {
        while (locked_ > 0) order_[--locked_]->mutex.unlock();
    }
    LaunchList<BufferState*, kInlineArgs> order_;
    size_t locked_ = 0;
};

// A Direct launch's argument block: one pointer per parameter (a buffer's host memory, or a
// scalar's bytes held here), alive until the queue syncs.
struct HostLaunch {
    explicit HostLaunch(size_t params) : pointers(params), scalars(params) {}
    LaunchList<void*, kInlineArgs> pointers;
    LaunchList<std::array<unsigned char, 8>, kInlineArgs> scalars;
    codegen::HostArgs host_args{};
};

} // namespace

Event Executor::launch_on(const std::shared_ptr<Lane>& lane, const std::shared_ptr<const ir::Kernel>& k, uint64_t hash,
                          const Grid& grid, std::span<const LaunchArg> args, Compiled* c) {
    DeviceContext& ctx = *lane->ctx;
    const Backend& b = *ctx.backend;
    const plx_plugin& api = b.api();
    if (!c) c = compile(*k, hash, ctx);

    plx_launch_dims dims{};
    dims.struct_size = sizeof dims;
    dims.dims = grid.dims;
    std::array<uint32_t, 3> local = choose_local(grid, *ctx.info, c->cooperative, k->work_group.max);
    for (int d = 0; d < 3; ++d) {
        dims.global_size[d] = d < int(grid.dims) ? grid.global[d] : 1;
        dims.local_size[d] = local[d];
    }
    uint64_t group = uint64_t(local[0]) * local[1] * local[2];
    if (ctx.info->max_work_group_size && group > ctx.info->max_work_group_size)
        throw Error(ErrorCode::OutOfResources, "work-group of " + std::to_string(group) +
                    " work-items exceeds the device's maximum of " + std::to_string(ctx.info->max_work_group_size),
                    {b.name(), ctx.info->name, k->name, "", "", ""});
    // Warpgroup accumulators belong to four subgroups together: a group of a partial warpgroup
    // would hang wgmma and leave rows uncomputed elsewhere.
    if (const uint32_t width = ctx.info->subgroup_size;
        width && group % (4 * width) != 0 && k->has_warpgroup())
        throw Error(ErrorCode::InvalidArgument,
                    "kernel '" + k->name + "' holds warpgroup accumulators, so its work-groups are whole warpgroups: " +
                        "a multiple of 4 subgroups of " + std::to_string(width) + " work-items (" +
                        std::to_string(4 * width) + "); the launch's group has " + std::to_string(group),
                    {b.name(), ctx.info->name, k->name, "", "", ""});
    dims.dynamic_local_bytes = c->host ? uint32_t(c->host->local_bytes(uint32_t(group))) : c->dynamic_shared;

    // Buffers: make every argument current on this device, in argument order (a buffer passed
    // twice is handled once), after the commands of other lanes it must follow.
    LaunchList<BufferUse, kInlineArgs> buffers(args.size());
    auto use_of = [&](const LaunchArg& a) {
        BufferState* state = &a.buffer->state();
        return std::find_if(buffers.begin(), buffers.end(), [&](const BufferUse& u) { return u.state == state; });
    };
    for (size_t i = 0; i < args.size(); ++i) {
        if (!args[i].buffer) continue;
        const bool w = k->params[i].access != ir::Access::Read;
        if (BufferUse* at = use_of(args[i]); at != buffers.end()) at->write = at->write || w;
        else buffers.push_back({&args[i].buffer->state(), w});
    }
    // Every buffer stays locked from its ordering until the launch is recorded on it: nothing
    // can slip in between.
    BufferLocks locks(buffers);
    size_t prepared = 0;
    // A failure once transfers were enqueued still records them, so that other queues and
    // the buffer's destructor wait for them.
    auto record_transfers = [&] {
        if (prepared == 0) return;
        try {
            std::shared_ptr<EventState> marker;
            {
                std::lock_guard ql(lane->mutex);
                marker = lane_marker(lane);
            }
            for (size_t j = 0; j < prepared; ++j) buffers[j].state->used(buffers[j].moved, marker, false);
        } catch (...) {
            // Nothing more can be done here: the original error is the one to report.
        }
    };
    try {
        for (; prepared < buffers.size(); ++prepared) {
            BufferUse& u = buffers[prepared];
            u.moved = u.state->make_resident(*lane);
            DeviceCopy* here = u.state->copy_on(&ctx);
            BufferState::before(*here, *lane, u.write);
            u.handle = here->buffer;
        }
    } catch (...) {
        record_transfers();
        throw;
    }
    auto handle_of = [&](const LaunchArg& a) { return use_of(a)->handle; };

    std::shared_ptr<EventState> event = new_event_state();
    try {
        // Every launch gets an event, so that Event::wait() waits for this launch alone and a
        // failure is reported by the event's wait; timestamps only when profiling. A plugin
        // without event_wait or event_release gets no event to leak: waiting syncs its queue.
        const bool events = api.event_wait && api.event_release;
        plx_event* event_out = events ? &event->event : nullptr;
        event->wait_by_sync = !events;
        event->lane = lane;
        std::optional<TraceSpan> span;
        if (trace_) {
            span.emplace(trace_, lane->label, "launch " + k->name, "launch");
            span->args = {{"global", dims.global_size}, {"local", dims.local_size}};
            if (config_.profiling)
                event->device_span.reset(new DeviceSpan{trace_, k->name, Trace::Clock::now()});
        }
        {
            std::lock_guard lock(lane->mutex);
            if (c->host) {
                auto hl = std::make_shared<HostLaunch>(args.size());
                for (const LaunchArg& a : args) {
                    if (a.buffer) {
                        void* p = api.buffer_host_ptr(handle_of(a));
                        if (p == nullptr)
                            throw Error(ErrorCode::Device, "buffer_host_ptr returned NULL for a buffer of " +
                                        std::to_string(a.buffer->bytes()) + " bytes",
                                        {b.name(), ctx.info->name, k->name, "", "", ""});
                        hl->pointers.push_back(p);
                    } else {
                        hl->pointers.push_back(hl->scalars.push_back(a.bytes).data());
                    }
                }
                hl->host_args.args = hl->pointers.data();
                // Whether the launch's buffers, each once, reach the kernel's streaming size:
                // summed only for a kernel that has a streaming twin.
                bool streaming = false;
                if (c->streaming_from != BackendConfig::never) {
                    uint64_t bytes = 0;
                    for (const BufferUse& u : buffers) bytes += u.state->bytes;
                    streaming = bytes >= c->streaming_from;
                }
                if (streaming && span) span->args["streaming_stores"] = true;
                plx_workgroup_fn fn = streaming ? c->host->streaming_function() : c->host->function();
                b.check(api.launch_host(lane->queue, fn, &hl->host_args, &dims, event_out),
                        "launch_host", lane->label);
                lane->pending.push_back(std::move(hl));
            } else {
                LaunchList<plx_arg, kInlineArgs> pa(args.size());
                for (const LaunchArg& a : args) {
                    plx_arg& arg = pa.push_back({});
                    arg.struct_size = sizeof(plx_arg);
                    if (a.buffer) {
                        arg.kind = PLX_ARG_BUFFER;
                        arg.buffer = handle_of(a);
                    } else {
                        arg.kind = PLX_ARG_SCALAR;
                        arg.value = a.bytes.data();
                        arg.size = a.size;
                    }
                }
                plx_status s = api.launch(lane->queue, c->kernel, &dims, pa.data(), uint32_t(pa.size()), event_out);
                if (s != PLX_OK) {
                    ErrorContext where{b.name(), ctx.info->name, k->name, "", "", ""};
                    ErrorCode code = s == PLX_ERROR_OUT_OF_RESOURCES ? ErrorCode::OutOfResources
                                     : s == PLX_ERROR_OUT_OF_MEMORY  ? ErrorCode::OutOfMemory
                                     : s == PLX_ERROR_INVALID_ARGUMENT ? ErrorCode::InvalidArgument
                                     : s == PLX_ERROR_LAUNCH ? ErrorCode::Launch : ErrorCode::Device;
                    throw Error(code, b.last_error().empty() ? std::string("launch failed: ") + status_name(s)
                                                             : b.last_error(), where);
                }
            }
        }
    } catch (...) {
        record_transfers();
        throw;
    }
    for (BufferUse& u : buffers) u.state->used(u.moved, event, u.write);
    return Event(std::move(event));
}

// ---- events ------------------------------------------------------------------------------

std::shared_ptr<EventState> new_event_state() {
    return std::allocate_shared<EventState>(CachedAllocator<EventState>{});
}

EventState::~EventState() {
    if (!lane) return;
    const plx_plugin& api = lane->ctx->backend->api();
    uint64_t start = 0, end = 0;
    // Placed at the submission: the device's clock is not the host's.
    if (device_span && event && api.event_profile && api.event_profile(event, &start, &end) == PLX_OK) {
        const DeviceSpan& d = *device_span;
        d.trace->span(lane->label + " device", d.kernel, "device", d.submitted,
                      d.submitted + std::chrono::nanoseconds(end - start), {{"device_ms", double(end - start) * 1e-6}});
    }
    if (event && api.event_release) api.event_release(event);
}

void EventState::wait() {
    if (!lane) return;
    if (wait_by_sync) return lane->sync();
    if (!event) return; // the plugin finished the command before returning
    const Backend& b = *lane->ctx->backend;
    b.check(b.api().event_wait(event), "event_wait", lane->label);
}

std::shared_ptr<EventState> lane_marker(const std::shared_ptr<Lane>& lane) {
    const Backend& b = *lane->ctx->backend;
    const plx_plugin& api = b.api();
    std::shared_ptr<EventState> e = new_event_state();
    e->lane = lane;
    // Without the plugin's marker, or when it fails, waiting syncs the lane: never an event
    // that is lost while the commands before it run (a failure of theirs shows at the sync).
    if (!api.queue_marker || !api.event_wait || !api.event_release ||
        api.queue_marker(lane->queue, &e->event) != PLX_OK) {
        e->event = nullptr;
        e->wait_by_sync = true;
    }
    return e;
}

} // namespace plexus::detail

namespace plexus {

void Event::wait() const {
    if (state_) state_->wait();
}

std::optional<double> Event::seconds() const {
    if (!state_ || !state_->event) return std::nullopt;
    wait();
    const plx_plugin& api = state_->lane->ctx->backend->api();
    uint64_t start = 0, end = 0;
    if (!api.event_profile || api.event_profile(state_->event, &start, &end) != PLX_OK) return std::nullopt;
    return double(end - start) * 1e-9;
}

const std::string& Event::backend() const {
    static const std::string none;
    return state_ && state_->lane ? state_->lane->ctx->backend->name() : none;
}
const std::string& Event::device() const {
    static const std::string none;
    return state_ && state_->lane ? state_->lane->ctx->info->name : none;
}
int Event::device_index() const { return state_ && state_->lane ? int(state_->lane->ctx->index) : -1; }

} // namespace plexus
