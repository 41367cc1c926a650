// The launch path: route the kernel, compile it for the chosen device (cached), make the
// arguments resident there, launch, and fall back to the next candidate where allowed.
#include "runtime/executor.hpp"

#include "config/log.hpp"
#include "runtime/block_cache.hpp"
#include "runtime/launch_list.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>
#include <thread>

namespace plexus::detail {

// ---- device contexts and lanes ------------------------------------------------------------

Lane::Lane(DeviceContext& c, bool profiling, std::string name) : ctx(&c), label(std::move(name)) {
    const Backend& b = *c.backend;
    b.check(b.api().queue_create(c.device, profiling ? PLX_QUEUE_PROFILING : 0, &queue),
            "queue_create", label);
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

Executor::Executor(const Config& config, const std::vector<std::unique_ptr<Backend>>& backends,
                   Trace* trace)
    : config_(config), trace_(trace), compiler_(config, trace),
      pool_(config.compile_threads ? config.compile_threads
                                   : std::clamp(std::thread::hardware_concurrency(), 1u, 8u)),
      id_(++executors_made), routes_(config.cache_dir) {
    for (auto& b : backends)
        backends_.push_back(b.get());
}

Executor::~Executor() {
    pool_.stop(); // queued compiles end with an error, running ones finish
    // Every lane is waited for, also after another failed: its launches may run the code of
    // the compiled kernels freed below.
    for (auto& lane : lanes()) {
        try {
            lane->sync();
        } catch (const std::exception& e) {
            log().warn("a queue failed while the runtime shut down: {}", e.what());
        }
    }
    compiler_.clear();
    for (auto& [key, ctx] : contexts_)
        ctx->lane.reset();
}

DeviceContext& Executor::context(const Backend* b, uint32_t index) {
    if (index >= b->devices().size())
        throw Error(ErrorCode::InvalidArgument,
                    "device " + std::to_string(index) + " of backend '" + b->name() +
                        "' does not exist: it has " + std::to_string(b->devices().size()) +
                        " device(s), 0 to " + std::to_string(b->devices().size() - 1),
                    {b->name(), "", "", "", "", ""});
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
        if (target.backend.empty() ? !chosen || b->priority() > chosen->priority()
                                   : b->name() == target.backend)
            chosen = b;
    if (!chosen) {
        std::string loaded;
        for (const Backend* b : backends_)
            loaded += (loaded.empty() ? "" : ", ") + b->name();
        throw Error(ErrorCode::NoBackend,
                    target.backend.empty()
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
    auto lane = std::make_shared<Lane>(ctx, config_.profiling,
                                       ctx.label + " queue " + std::to_string(++lanes_made_));
    std::erase_if(user_lanes_, [](const std::weak_ptr<Lane>& w) { return w.expired(); });
    user_lanes_.push_back(lane);
    return lane;
}

std::vector<std::shared_ptr<Lane>> Executor::lanes() const {
    std::vector<std::shared_ptr<Lane>> all;
    std::lock_guard lock(mutex_);
    for (auto& [key, ctx] : contexts_)
        all.push_back(ctx->lane);
    for (auto& w : user_lanes_)
        if (auto l = w.lock()) all.push_back(std::move(l));
    return all;
}

void Executor::finish() {
    for (auto& lane : lanes())
        lane->sync();
}

namespace {

// Where an error of this kernel's launch happened, before a backend is chosen.
ErrorContext kernel_context(const ir::Kernel& k) {
    return ErrorContext{"", "", k.name, "", "", ""};
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
    for (uint32_t d = g.dims; d < 3; ++d)
        asked[d] = 1;
    if (w.required[0]) {
        for (uint32_t d = g.dims; d < 3; ++d)
            if (w.required[d] != 1)
                throw Error(ErrorCode::InvalidArgument,
                            "kernel '" + k.name + "' requires work-groups of " + shape(w.required) +
                                ", which a " + std::to_string(g.dims) + "-D grid cannot have",
                            kernel_context(k));
        if (g.local[0] == 0)
            g.local = w.required;
        else if (asked != w.required)
            throw Error(ErrorCode::InvalidArgument,
                        "kernel '" + k.name + "' requires work-groups of " + shape(w.required) +
                            " (px::require_work_group_size); the launch asks for " + shape(asked),
                        kernel_context(k));
    }
    if (w.max && g.local[0] != 0 && uint64_t(asked[0]) * asked[1] * asked[2] > w.max)
        throw Error(ErrorCode::InvalidArgument,
                    "kernel '" + k.name + "' takes at most " + std::to_string(w.max) +
                        " work-items per group (px::max_work_group_size); the launch asks for " +
                        shape(asked),
                    kernel_context(k));
    return g;
}

// `cooperative`: the kernel has barriers or shared arrays, so its work-items may rely on the
// group's size (a shared array sized for the documented default, per-work-item state kept
// across barriers); its default group stays 256 in 1-D everywhere.
std::array<uint32_t, 3> choose_local(const Grid& g, const DeviceInfo& d, bool cooperative,
                                     uint32_t kernel_max) {
    if (g.local[0] != 0) {
        std::array<uint32_t, 3> l = g.local;
        for (uint32_t i = g.dims; i < 3; ++i)
            l[i] = 1;
        return l;
    }
    // Otherwise a CPU gets 1-D groups of 4096 (clamped to the device's maximum): a work-item
    // loop long enough to amortize the group's set-up, and a kernel that reads a few blocks
    // a group apart gets streams long enough for the hardware prefetchers (docs/benchmarks.md,
    // "What the figures taught": vector_add).
    uint32_t wide = d.type == DeviceType::CPU && !cooperative ? 4096 : 256;
    std::array<uint32_t, 3> l = g.dims == 1   ? std::array<uint32_t, 3>{wide, 1, 1}
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

bool same_kernel(const std::weak_ptr<const ir::Kernel>& seen,
                 const std::shared_ptr<const ir::Kernel>& k) {
    return !seen.owner_before(k) && !k.owner_before(seen) && !seen.expired();
}

bool serves(const Candidate& c, const Target& target) {
    return c.kept && (target.backend.empty() || c.backend == target.backend) &&
           (target.device < 0 || c.device_index == uint32_t(target.device));
}

std::vector<CompileReport> Executor::compile_reports() const {
    return compiler_.reports();
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
        n.work_group_size =
            grid->local[0] * std::max(1u, grid->local[1]) * std::max(1u, grid->local[2]);
    n.native_backends.insert(uses.native_backends.begin(), uses.native_backends.end());
    n.has_native_blocks = uses.native_blocks;
    n.native_fallback = uses.native_fallback;
    n.ir_v2 = ir::needs_ir_v2(k);
    n.routine = k.routine;
    // A required work-group shape is the launch's shape on every device: drop those too small.
    const auto& req = k.work_group.required;
    if (req[0] && !n.work_group_size) n.work_group_size = req[0] * req[1] * req[2];
    static const std::set<plx_language> generated = [] {
        std::set<plx_language> langs;
        for (const codegen::Language& l : codegen::languages())
            if (l.generated) langs.insert(l.id);
        return langs;
    }();
    n.languages_available = generated;
    return n;
}

std::shared_ptr<const std::vector<Candidate>>
Executor::ranking(const std::shared_ptr<const ir::Kernel>& k, uint64_t work_group_size,
                  uint64_t& hash) {
    std::lock_guard lock(mutex_);
    KernelFacts& f = facts_[k.get()];
    if (!same_kernel(f.kernel, k)) f = {k, k->hash(), needs_of(*k, nullptr), {}, {}};
    hash = f.hash;
    auto& ranked = f.ranked[work_group_size];
    if (!ranked) {
        KernelNeeds needs = f.needs;
        needs.work_group_size = uint32_t(work_group_size);
        ranked = std::make_shared<const std::vector<Candidate>>(
            rank_candidates(backends_, needs, config_));
    }
    return ranked;
}

std::vector<Candidate> Executor::explain(const ir::Kernel& k, const Grid* grid,
                                         bool compile_first) {
    std::vector<Candidate> ranked = rank_candidates(backends_, needs_of(k, grid), config_);
    const uint64_t hash = k.hash();
    for (Candidate& c : ranked) {
        if (!c.kept) continue;
        if (compile_first) {
            try {
                compiler_.compile(k, hash, context(c.backend_ptr, c.device_index));
            } catch (const Error&) {
                // remembered below when it is a rejection of the kernel
            }
        }
        if (const Error* e = compiler_.failure(hash, c.backend_ptr, c.device_index)) {
            c.kept = false;
            c.reason = std::string("the kernel failed to compile here: ") + e->what();
        }
    }
    return ranked;
}

Event Executor::launch(const Target& asked, const std::shared_ptr<const ir::Kernel>& k,
                       const Grid& grid, std::span<const LaunchArg> args,
                       const std::shared_ptr<Lane>& lane) {
    // A queue's launch goes to the queue's device and nowhere else. Otherwise `asked` is used as
    // it is: a copy would copy its string at every launch.
    std::optional<Target> of_queue;
    if (lane) of_queue = Target{lane->ctx->backend->name(), int(lane->ctx->index)};
    const Target& target = of_queue ? *of_queue : asked;
    // Arguments against parameters, before anything is routed or compiled.
    if (args.size() != k->params.size())
        throw Error(ErrorCode::InvalidArgument,
                    "kernel '" + k->name + "' takes " + std::to_string(k->params.size()) +
                        " arguments, got " + std::to_string(args.size()),
                    kernel_context(*k));
    for (size_t i = 0; i < args.size(); ++i) {
        const ir::Param& p = k->params[i];
        auto which = [&] {
            return "argument " + std::to_string(i) + " ('" + p.name + "') of kernel '" + k->name +
                   "'";
        };
        bool is_buffer = args[i].buffer != nullptr;
        if (is_buffer != (p.kind == ir::Param::Kind::Buffer))
            throw Error(ErrorCode::InvalidArgument,
                        which() + ": expected " + (is_buffer ? "a scalar " : "a buffer of ") +
                            to_string(p.type) + ", got " + (is_buffer ? "a buffer" : "a scalar"),
                        kernel_context(*k));
        if (args[i].type != p.type)
            throw Error(ErrorCode::InvalidArgument,
                        which() + ": expected " + to_string(p.type) +
                            (is_buffer ? " elements" : "") + ", got " + to_string(args[i].type) +
                            (to_string(p.type) == to_string(args[i].type)
                                 ? " declared with other members"
                                 : ""),
                        kernel_context(*k));
        if (is_buffer && args[i].buffer->size() == 0)
            throw Error(ErrorCode::InvalidArgument, which() + ": the buffer is empty",
                        kernel_context(*k));
        if (is_buffer && args[i].buffer->state().exec != this)
            throw Error(ErrorCode::InvalidArgument,
                        which() + ": the buffer belongs to another plexus::Runtime",
                        kernel_context(*k));
    }
    for (uint32_t d = 0; d < grid.dims; ++d)
        if (grid.global[d] == 0)
            throw Error(ErrorCode::InvalidArgument,
                        "kernel '" + k->name + "': the grid is empty in dimension " +
                            std::to_string(d),
                        kernel_context(*k));
    const Grid bounded = bounded_grid(*k, grid);

    uint64_t work_group_size = bounded.local[0] == 0
                                   ? 0
                                   : uint64_t(bounded.local[0]) * std::max(1u, bounded.local[1]) *
                                         std::max(1u, bounded.local[2]);
    // Measured routing decides every launch that is not pinned to a backend, device or queue.
    if (config_.routing == Routing::Measured && target.backend.empty() && target.device < 0 &&
        !lane)
        return launch_measured(target, k, bounded, work_group_size, args);
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
                             e.code() == ErrorCode::OutOfResources ||
                             e.code() == ErrorCode::OutOfMemory || e.code() == ErrorCode::Device;
    return config_.fallback && recoverable && target.backend.empty();
}

Event Executor::launch_ranked(const Target& target, const std::shared_ptr<const ir::Kernel>& k,
                              const Grid& bounded, uint64_t work_group_size,
                              std::span<const LaunchArg> args, const std::shared_ptr<Lane>& lane,
                              Failure hot) {
    std::string tried;
    std::optional<Error> last;
    // Whether a device failed during this launch: then the next launch like it goes through
    // the ranking again (the failure may pass: memory, a device) instead of the hot path.
    bool fresh_failure = false;
    // A failure on one device that the next candidate may take over.
    auto note = [&](const Error& e, const DeviceContext& ctx) {
        log().warn("kernel '{}' failed on {}, trying the next backend: {}", k->name, ctx.label,
                   e.what());
        tried += "\n  " + ctx.label + ": " + e.what();
        last = e;
        fresh_failure = true;
    };
    if (hot.error) note(*hot.error, *hot.ctx);
    uint64_t hash = 0;
    std::shared_ptr<const std::vector<Candidate>> ranking_ptr = ranking(k, work_group_size, hash);
    const std::vector<Candidate>& ranked = *ranking_ptr;
    for (const Candidate& c : ranked) {
        if (!serves(c, target)) continue;
        auto [ready_ctx, compiled] = ready(hash, c.backend_ptr, c.device_index);
        // A device that rejected the kernel before is passed over at once, as if the router had
        // dropped it: the launch that met the failure said so.
        if (!compiled && target.backend.empty() && config_.fallback)
            if (const Error* e = compiler_.failure(hash, c.backend_ptr, c.device_index)) {
                tried +=
                    "\n  " + c.backend + ":" + std::to_string(c.device_index) + ": " + e->what();
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
    if (last)
        throw Error(last->code(), "kernel '" + k->name + "' failed on every backend:" + tried,
                    kernel_context(*k));
    throw no_backend(*k, ranked, target);
}

Error Executor::no_backend(const ir::Kernel& k, const std::vector<Candidate>& ranked,
                           const Target& target) const {
    auto line = [](const Candidate& c) {
        return "\n  " + c.backend + ":" + std::to_string(c.device_index) + " (" + c.device_name +
               "): " + c.reason;
    };
    std::string reasons;
    if (target.backend.empty()) {
        for (const Candidate& c : ranked)
            reasons += line(c);
    } else {
        // A named target is the only candidate: its devices' reasons, and the other backends
        // only by name (they were not considered).
        std::string others;
        size_t devices = 0;
        for (const Candidate& c : ranked) {
            if (c.backend != target.backend) {
                const std::string id = c.backend + ":" + std::to_string(c.device_index);
                others += (others.empty() ? "" : ", ") + id;
                continue;
            }
            ++devices;
            if (target.device < 0 || c.device_index == uint32_t(target.device)) reasons += line(c);
        }
        std::string requested =
            "\n  requested backend '" + target.backend + "'" +
            (target.device < 0 ? "" : " device " + std::to_string(target.device));
        if (devices == 0)
            requested += ", which is not loaded";
        else if (reasons.empty())
            requested += ", which has " + std::to_string(devices) + " device(s)";
        reasons =
            requested + reasons +
            (others.empty() ? "" : "\n  not considered (the launch names a backend): " + others);
    }
    return Error(ErrorCode::NoBackend,
                 "no backend can run kernel '" + k.name + "'" +
                     (reasons.empty() ? std::string(": no backend is loaded") : reasons),
                 kernel_context(k));
}

std::shared_future<void> Executor::prepare(const std::shared_ptr<const ir::Kernel>& k,
                                           const Target& target) {
    auto promise = std::make_shared<std::promise<void>>();
    std::shared_future<void> done = promise->get_future().share();
    uint64_t hash = 0;
    std::shared_ptr<const std::vector<Candidate>> ranked = ranking(k, 0, hash);
    auto pick = std::find_if(ranked->begin(), ranked->end(),
                             [&](const Candidate& c) { return serves(c, target); });
    if (pick == ranked->end()) {
        promise->set_exception(std::make_exception_ptr(no_backend(*k, *ranked, target)));
        return done;
    }
    pool_.submit([this, k, hash, b = pick->backend_ptr, index = pick->device_index,
                  promise](bool cancelled) {
        if (cancelled) {
            promise->set_exception(std::make_exception_ptr(
                Error(ErrorCode::InvalidArgument,
                      "kernel '" + k->name +
                          "' was not compiled: its Runtime was destroyed before the compile began",
                      kernel_context(*k))));
            return;
        }
        try {
            compiler_.compile(*k, hash, context(b, index));
            promise->set_value();
        } catch (...) {
            promise->set_exception(std::current_exception());
        }
    });
    return done;
}

Executor::HotHit Executor::hot_launch(const std::shared_ptr<const ir::Kernel>& k,
                                      uint64_t work_group_size, const Target& target) {
    const HotLaunch* h = hot_of_thread;
    // While the weak pointer has not expired, the kernel it saw still lives at kernel_ptr: k is
    // that kernel.
    if (!h || h->executor != id_ || h->kernel_ptr != k.get() ||
        h->work_group_size != work_group_size || h->device != target.device ||
        h->backend != target.backend || h->kernel.expired())
        return {};
    return {h->ctx, h->compiled, h->hash};
}

void Executor::remember_hot(const std::shared_ptr<const ir::Kernel>& k, uint64_t work_group_size,
                            const Target& target, uint64_t hash, DeviceContext& ctx) {
    Compiled* compiled = compiler_.find(hash, ctx.backend, ctx.index);
    if (!compiled) return;
    if (hot_gone) return; // the thread is ending
    if (!hot_owner.hot) {
        hot_owner.hot = std::make_unique<HotLaunch>();
        hot_of_thread = hot_owner.hot.get();
    }
    *hot_owner.hot = {id_,           k.get(), k,    work_group_size, target.backend,
                      target.device, hash,    &ctx, compiled};
}

std::pair<DeviceContext*, Compiled*> Executor::ready(uint64_t hash, const Backend* b,
                                                     uint32_t index) {
    Compiled* c = compiler_.find(hash, b, index);
    if (!c) return {nullptr, nullptr};
    std::lock_guard lock(mutex_);
    auto ctx = contexts_.find({b, index});
    if (ctx == contexts_.end()) return {nullptr, nullptr};
    return {ctx->second.get(), c};
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
        for (const BufferUse& u : uses)
            order_.push_back(u.state);
        if (order_.size() > 1) std::sort(order_.begin(), order_.end());
        try {
            for (; locked_ < order_.size(); ++locked_)
                order_[locked_]->mutex.lock();
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
        while (locked_ > 0)
            order_[--locked_]->mutex.unlock();
    }
    LaunchList<BufferState*, kInlineArgs> order_;
    size_t locked_ = 0;
};

// The buffers of one launch: each distinct one once (a buffer passed twice is handled once,
// written if either use writes it), locked from its ordering until the launch is recorded on
// it, so that nothing slips in between.
class LaunchBuffers {
public:
    LaunchBuffers(std::span<const LaunchArg> args, const ir::Kernel& k)
        : uses_(args.size()), locks_(collect(args, k)) {}

    // Makes every buffer current on the lane's device, in argument order, after the commands of
    // other lanes it must follow.
    void make_resident(Lane& lane) {
        for (; prepared_ < uses_.size(); ++prepared_) {
            BufferUse& u = uses_[prepared_];
            u.moved = u.state->make_resident(lane);
            DeviceCopy* here = u.state->copy_on(lane.ctx);
            BufferState::before(*here, lane, u.write);
            u.handle = here->buffer;
        }
    }
    // The argument's buffer on the launch's device.
    plx_buffer handle(const LaunchArg& a) { return use_of(a)->handle; }
    // The bytes of the launch's buffers, each once.
    uint64_t bytes() {
        uint64_t n = 0;
        for (const BufferUse& u : uses_)
            n += u.state->bytes;
        return n;
    }
    // After the launch was enqueued: the buffers it used and wrote.
    void used(const std::shared_ptr<EventState>& event) {
        for (BufferUse& u : uses_)
            u.state->used(u.moved, event, u.write);
    }
    // After a failure once transfers were enqueued: they are recorded all the same, so that
    // other queues and the buffers' destructors wait for them.
    void record_transfers(const std::shared_ptr<Lane>& lane) noexcept {
        if (prepared_ == 0) return;
        try {
            std::shared_ptr<EventState> marker;
            {
                std::lock_guard ql(lane->mutex);
                marker = lane_marker(lane);
            }
            for (size_t j = 0; j < prepared_; ++j)
                uses_[j].state->used(uses_[j].moved, marker, false);
        } catch (...) {
            // Nothing more can be done here: the original error is the one to report.
        }
    }

private:
    BufferUse* use_of(const LaunchArg& a) {
        BufferState* state = &a.buffer->state();
        return std::find_if(uses_.begin(), uses_.end(),
                            [&](const BufferUse& u) { return u.state == state; });
    }
    LaunchList<BufferUse, kInlineArgs>& collect(std::span<const LaunchArg> args,
                                                const ir::Kernel& k) {
        for (size_t i = 0; i < args.size(); ++i) {
            if (!args[i].buffer) continue;
            const bool w = k.params[i].access != ir::Access::Read;
            if (BufferUse* at = use_of(args[i]); at != uses_.end())
                at->write = at->write || w;
            else
                uses_.push_back({&args[i].buffer->state(), w});
        }
        return uses_;
    }

    LaunchList<BufferUse, kInlineArgs> uses_;
    BufferLocks locks_;
    size_t prepared_ = 0;
};

// A Direct launch's argument block: one pointer per parameter (a buffer's host memory, or a
// scalar's bytes held here), alive until the queue syncs.
struct HostLaunch {
    explicit HostLaunch(size_t params) : pointers(params), scalars(params) {}
    LaunchList<void*, kInlineArgs> pointers;
    LaunchList<std::array<unsigned char, 8>, kInlineArgs> scalars;
    codegen::HostArgs host_args{};
};

// The launch's geometry on the device, with what the device and the kernel allow checked.
plx_launch_dims launch_dims(const Grid& grid, const DeviceContext& ctx, const Compiled& c,
                            const ir::Kernel& k) {
    plx_launch_dims dims{};
    dims.struct_size = sizeof dims;
    dims.dims = grid.dims;
    std::array<uint32_t, 3> local = choose_local(grid, *ctx.info, c.cooperative, k.work_group.max);
    for (int d = 0; d < 3; ++d) {
        dims.global_size[d] = d < int(grid.dims) ? grid.global[d] : 1;
        dims.local_size[d] = local[d];
    }
    const uint64_t group = uint64_t(local[0]) * local[1] * local[2];
    if (ctx.info->max_work_group_size && group > ctx.info->max_work_group_size)
        throw Error(ErrorCode::OutOfResources,
                    "work-group of " + std::to_string(group) +
                        " work-items exceeds the device's maximum of " +
                        std::to_string(ctx.info->max_work_group_size),
                    {ctx.backend->name(), ctx.info->name, k.name, "", "", ""});
    // Warpgroup accumulators belong to four subgroups together: a group of a partial warpgroup
    // would hang wgmma and leave rows uncomputed elsewhere.
    if (const uint32_t width = ctx.info->subgroup_size;
        width && group % (4 * width) != 0 && k.has_warpgroup())
        throw Error(
            ErrorCode::InvalidArgument,
            "kernel '" + k.name +
                "' holds warpgroup accumulators, so its work-groups are whole warpgroups: " +
                "a multiple of 4 subgroups of " + std::to_string(width) + " work-items (" +
                std::to_string(4 * width) + "); the launch's group has " + std::to_string(group),
            {ctx.backend->name(), ctx.info->name, k.name, "", "", ""});
    dims.dynamic_local_bytes =
        c.host ? uint32_t(c.host->local_bytes(uint32_t(group))) : c.dynamic_local_bytes;
    return dims;
}

// A Direct backend's launch: the work-group function and its argument block (lane lock held).
void enqueue_host(Lane& lane, const Compiled& c, const ir::Kernel& k,
                  std::span<const LaunchArg> args, LaunchBuffers& buffers,
                  const plx_launch_dims& dims, plx_event* event, TraceSpan* span) {
    const Backend& b = *lane.ctx->backend;
    auto hl = std::make_shared<HostLaunch>(args.size());
    for (const LaunchArg& a : args) {
        if (a.buffer) {
            void* p = b.api().buffer_host_ptr(buffers.handle(a));
            if (p == nullptr)
                throw Error(ErrorCode::Device,
                            "buffer_host_ptr returned NULL for a buffer of " +
                                std::to_string(a.buffer->bytes()) + " bytes",
                            {b.name(), lane.ctx->info->name, k.name, "", "", ""});
            hl->pointers.push_back(p);
        } else {
            hl->pointers.push_back(hl->scalars.push_back(a.bytes).data());
        }
    }
    hl->host_args.args = hl->pointers.data();
    // Whether the launch's buffers, each once, reach the kernel's streaming size: summed only
    // for a kernel that has a streaming twin.
    const bool streaming =
        c.streaming_from != BackendConfig::never && buffers.bytes() >= c.streaming_from;
    if (streaming && span) span->args["streaming_stores"] = true;
    plx_workgroup_fn fn = streaming ? c.host->streaming_function() : c.host->function();
    b.check(b.api().launch_host(lane.queue, fn, &hl->host_args, &dims, event), "launch_host",
            lane.label, k.name);
    lane.pending.push_back(std::move(hl));
}

// A JIT or Custom backend's launch: the plugin's kernel and the arguments as plx_args (lane
// lock held).
void enqueue_kernel(Lane& lane, const Compiled& c, const ir::Kernel& k,
                    std::span<const LaunchArg> args, LaunchBuffers& buffers,
                    const plx_launch_dims& dims, plx_event* event) {
    const Backend& b = *lane.ctx->backend;
    LaunchList<plx_arg, kInlineArgs> pa(args.size());
    for (const LaunchArg& a : args) {
        plx_arg& arg = pa.push_back({});
        arg.struct_size = sizeof(plx_arg);
        if (a.buffer) {
            arg.kind = PLX_ARG_BUFFER;
            arg.buffer = buffers.handle(a);
        } else {
            arg.kind = PLX_ARG_SCALAR;
            arg.value = a.bytes.data();
            arg.size = a.size;
        }
    }
    b.check(b.api().launch(lane.queue, c.kernel, &dims, pa.data(), uint32_t(pa.size()), event),
            "launch", lane.label, k.name);
}

} // namespace

Event Executor::launch_on(const std::shared_ptr<Lane>& lane,
                          const std::shared_ptr<const ir::Kernel>& k, uint64_t hash,
                          const Grid& grid, std::span<const LaunchArg> args, Compiled* c,
                          std::chrono::steady_clock::time_point* started) {
    DeviceContext& ctx = *lane->ctx;
    if (!c) c = compiler_.compile(*k, hash, ctx);
    const plx_launch_dims dims = launch_dims(grid, ctx, *c, *k);
    LaunchBuffers buffers(args, *k);
    std::shared_ptr<EventState> event = new_event_state();
    try {
        buffers.make_resident(*lane);
        if (started) {
            // A timed launch starts on an idle queue, its buffers in place.
            lane->sync();
            *started = std::chrono::steady_clock::now();
        }
        // Every launch gets an event, so that Event::wait() waits for this launch alone and a
        // failure is reported by the event's wait; timestamps only when profiling. A plugin
        // without event_wait or event_release gets no event to leak: waiting syncs its queue.
        const plx_plugin& api = ctx.backend->api();
        const bool events = api.event_wait && api.event_release;
        event->wait_by_sync = !events;
        event->lane = lane;
        std::optional<TraceSpan> span;
        if (trace_) {
            span.emplace(trace_, lane->label, "launch " + k->name, "launch");
            span->args = {{"global", dims.global_size}, {"local", dims.local_size}};
            if (config_.profiling)
                event->device_span.reset(new DeviceSpan{trace_, k->name, Trace::Clock::now()});
        }
        std::lock_guard lock(lane->mutex);
        plx_event* out = events ? &event->event : nullptr;
        if (c->host)
            enqueue_host(*lane, *c, *k, args, buffers, dims, out, span ? &*span : nullptr);
        else
            enqueue_kernel(*lane, *c, *k, args, buffers, dims, out);
    } catch (...) {
        buffers.record_transfers(lane);
        throw;
    }
    buffers.used(event);
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
    if (device_span && event && api.event_profile &&
        api.event_profile(event, &start, &end) == PLX_OK) {
        const DeviceSpan& d = *device_span;
        d.trace->span(lane->label + " device", d.kernel, "device", d.submitted,
                      d.submitted + std::chrono::nanoseconds(end - start),
                      {{"device_ms", double(end - start) * 1e-6}});
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
    if (!api.event_profile || api.event_profile(state_->event, &start, &end) != PLX_OK)
        return std::nullopt;
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
int Event::device_index() const {
    return state_ && state_->lane ? int(state_->lane->ctx->index) : -1;
}

} // namespace plexus
