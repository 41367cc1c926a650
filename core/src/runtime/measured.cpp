// Routing by measured cost (config `routing: "measured"`): each launch that several devices can
// run goes to the smallest prediction (the kernel's timed launches of that size there, plus
// moving its buffers there); until every candidate has kRouteSamples timed launches (or is
// settled as slow), the launch goes to the first that lacks them and is timed. Candidates
// ranked below priority 0 are last resorts, outside the measurement. docs/routing.md.
#include "config/log.hpp"
#include "runtime/executor.hpp"
#include "runtime/launch_list.hpp"

#include <algorithm>

namespace plexus::detail {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

// The bytes a link calibration moves each way: enough to reach the link's bandwidth, within
// what the device allows in one allocation.
size_t calibration_bytes(const DeviceInfo& d) {
    size_t bytes = size_t(16) << 20;
    if (d.max_alloc_bytes) bytes = std::min<size_t>(bytes, d.max_alloc_bytes / 4);
    return std::max<size_t>(bytes, 4096);
}

// Candidates and buffers of one launch without a heap allocation up to these counts.
constexpr size_t kInlineCandidates = 8, kInlineBuffers = 16;

} // namespace

Link Executor::link_of(DeviceContext& ctx) {
    if (ctx.link_known.load(std::memory_order_acquire)) return ctx.link;
    std::lock_guard once(link_mutex_);
    if (ctx.link_known.load(std::memory_order_relaxed)) return ctx.link;
    std::optional<Link> known = routes_.load_link(ctx);
    if (!known) {
        const Backend& b = *ctx.backend;
        const size_t bytes = calibration_bytes(*ctx.info);
        Link link{1e10, 1e10}; // kept only when measuring fails (logged)
        plx_buffer buffer = nullptr;
        try {
            b.check(b.api().buffer_alloc(ctx.device, bytes, &buffer), "buffer_alloc", ctx.label);
            HostMemory host = aligned_host_memory(bytes, "the link calibration of " + ctx.label);
            std::fill_n(static_cast<unsigned char*>(host.data()), bytes, 1);
            // Each way: one transfer to warm up, the faster of two timed.
            auto rate = [&](bool write) {
                double best = 0;
                for (int rep = 0; rep < 3; ++rep) {
                    const auto t0 = Clock::now();
                    transfer(ctx.lane, buffer, 0, host.data(), bytes, write, true)->wait();
                    const double s = seconds_since(t0);
                    if (rep == 1 || (rep == 2 && s < best)) best = s;
                }
                return double(bytes) / std::max(best, 1e-9);
            };
            link.write_bytes_per_s = rate(true);
            link.read_bytes_per_s = rate(false);
            log().info("measured the link of {}: {:.2f} GB/s to the device, {:.2f} GB/s back",
                       ctx.label, link.write_bytes_per_s * 1e-9, link.read_bytes_per_s * 1e-9);
        } catch (const Error& e) {
            log().warn("could not measure the link of {} ({}); its transfers count as 10 GB/s",
                       ctx.label, e.what());
        }
        if (buffer) b.api().buffer_free(buffer);
        routes_.store_link(ctx, link);
        known = link;
    }
    ctx.link = *known;
    ctx.link_known.store(true, std::memory_order_release);
    return ctx.link;
}

std::shared_ptr<const std::vector<DeviceContext*>>
Executor::measured_candidates(const std::shared_ptr<const ir::Kernel>& k, uint64_t work_group_size,
                              uint64_t& hash) {
    {
        // Known for this very kernel: one lock. ranking() below replaces the facts of a kernel
        // freed and another made at its address.
        std::lock_guard lock(mutex_);
        const KernelFacts& f = facts_[k.get()];
        if (auto it = f.measured.find(work_group_size);
            same_kernel(f.kernel, k) && it != f.measured.end()) {
            hash = f.hash;
            return it->second;
        }
    }
    std::shared_ptr<const std::vector<Candidate>> ranked = ranking(k, work_group_size, hash);
    // A candidate ranked below priority 0 is a last resort (the interpreter: priority 5 - 50
    // for a CPU behind a Custom driver): never timed, taken only when the others fail.
    auto list = std::make_shared<std::vector<DeviceContext*>>();
    for (const Candidate& c : *ranked)
        if (c.kept && c.priority >= 0) list->push_back(&context(c.backend_ptr, c.device_index));
    std::lock_guard lock(mutex_);
    return facts_[k.get()].measured[work_group_size] = std::move(list);
}

Event Executor::launch_measured(const Target& target, const std::shared_ptr<const ir::Kernel>& k,
                                const Grid& bounded, uint64_t work_group_size,
                                std::span<const LaunchArg> args) {
    uint64_t hash = 0;
    const std::shared_ptr<const std::vector<DeviceContext*>> all =
        measured_candidates(k, work_group_size, hash);
    // Each cost's device is one of these DeviceContexts (static_cast back below).
    LaunchList<RouteCost, kInlineCandidates> costs(all->size());
    for (DeviceContext* ctx : *all)
        if (!compiler_.failure(hash, ctx->backend, ctx->index)) costs.push_back({ctx, 0, 0});
    // One device or none: nothing to choose (and none's error is the ranking's).
    if (costs.size() < 2)
        return launch_ranked(target, k, bounded, work_group_size, args, nullptr, {});

    // What is not current on each device moves there: from the host, or from another device
    // through the host. A buffer current nowhere is zeros, filled in place. Each buffer is
    // locked once.
    LaunchList<BufferState*, kInlineBuffers> buffers(args.size());
    uint64_t items = 1, bytes = 0;
    for (uint32_t d = 0; d < bounded.dims; ++d)
        items *= bounded.global[d];
    for (const LaunchArg& a : args) {
        BufferState* s = a.buffer ? &a.buffer->state() : nullptr;
        if (!s || std::find(buffers.begin(), buffers.end(), s) != buffers.end()) continue;
        buffers.push_back(s);
        bytes += s->bytes;
        DeviceContext* from = nullptr;
        LaunchList<bool, kInlineCandidates> here(costs.size());
        bool host = false;
        {
            std::lock_guard lock(s->mutex);
            for (const RouteCost& cost : costs) {
                const DeviceCopy* copy = s->copy_on(static_cast<DeviceContext*>(cost.device));
                here.push_back(copy && copy->valid);
            }
            host = s->host_valid;
            if (const DeviceCopy* other = s->valid_copy(); other && !host) from = other->ctx;
        }
        if (!host && !from) continue;
        for (size_t i = 0; i < costs.size(); ++i) {
            if (here[i]) continue;
            DeviceContext& ctx = *static_cast<DeviceContext*>(costs[i].device);
            costs[i].moved_bytes += s->bytes;
            costs[i].transfer_seconds += double(s->bytes) / link_of(ctx).write_bytes_per_s;
            if (from)
                costs[i].transfer_seconds += double(s->bytes) / link_of(*from).read_bytes_per_s;
        }
    }
    const LaunchBucket bucket = launch_bucket(items, bytes);
    const RouteHistory::Choice choice =
        routes_.decide(hash, k->name, bucket, std::span(costs.data(), costs.size()));
    DeviceContext& ctx = *static_cast<DeviceContext*>(costs[choice.index].device);
    try {
        if (!choice.exploring) return launch_on(ctx.lane, k, hash, bounded, args, nullptr);
        Clock::time_point started;
        Event e = launch_on(ctx.lane, k, hash, bounded, args, nullptr, &started);
        e.wait();
        routes_.add(hash, bucket, ctx, seconds_since(started));
        return e;
    } catch (const Error& e) {
        if (!may_fall_back(e, target)) throw;
        return launch_ranked(target, k, bounded, work_group_size, args, nullptr, {&e, &ctx});
    }
}

} // namespace plexus::detail
