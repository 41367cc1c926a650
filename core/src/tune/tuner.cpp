// Choosing a kernel family's variant per launch: devices in the router's order; on the first
// that can run any variant, a stored choice, else the candidates timed within the budget
// (tuning "auto"), else the family's heuristic.
#include "tune/tuner.hpp"

#include "config/log.hpp"

#include <algorithm>
#include <chrono>
#include <thread>

namespace plexus::detail {

namespace {
using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

bool recoverable(const Error& e) {
    return e.code() == ErrorCode::Compile || e.code() == ErrorCode::Unsupported ||
           e.code() == ErrorCode::OutOfResources || e.code() == ErrorCode::NoBackend;
}

// Whether a timed trial that failed with `e` only drops its candidate: a recoverable error, or
// memory the variant could not get.
bool trial_may_fail(const Error& e) {
    return recoverable(e) || e.code() == ErrorCode::OutOfMemory;
}

// The contents of every buffer a launch may write, put back after the trials.
class Snapshot {
public:
    Snapshot(const ir::Kernel& k, std::span<const LaunchArg> args) {
        for (size_t i = 0; i < args.size() && i < k.params.size(); ++i)
            if (args[i].buffer && k.params[i].access != ir::Access::Read) {
                std::vector<unsigned char> bytes(args[i].buffer->bytes());
                args[i].buffer->read_bytes(bytes.data(), bytes.size());
                saved_.emplace_back(args[i].buffer, std::move(bytes));
            }
    }
    void restore() {
        for (auto& [buffer, bytes] : saved_)
            buffer->write_bytes(bytes.data(), bytes.size());
    }

private:
    std::vector<std::pair<BufferBase*, std::vector<unsigned char>>> saved_;
};
} // namespace

std::vector<Tuner::Device> Tuner::devices(const FamilyDef& family, const Target& target) const {
    KernelNeeds needs;
    needs.kernel = family.name();
    std::vector<Device> out;
    for (const Candidate& c : rt_.explain(needs)) {
        if (!c.kept || !c.backend_ptr) continue;
        if (!target.backend.empty() && c.backend != target.backend) continue;
        if (target.device >= 0 && c.device_index != uint32_t(target.device)) continue;
        out.push_back({c.backend_ptr, c.device_index, c.priority});
    }
    return out;
}

std::optional<Tuner::Choice> Tuner::fit(const FamilyDef& family, const Tuning& v, const Device& d,
                                        const Shape& shape, std::string& why) const {
    const DeviceInfo& info = d.backend->devices()[d.index];
    FamilyContext ctx{d.backend->name(), info, shape};
    why = family.reject(v, ctx);
    if (!why.empty()) return std::nullopt;
    Choice c{Target{d.backend->name(), int(d.index)}, family.kernel(v), family.grid(v, ctx)};
    // The router's own checks on the traced variant (shared memory, intrinsics, group size,
    // an earlier compile failure here). A library routine is loaded first (no code is
    // generated): whether the backend offers it is known only then.
    const bool probe = !c.kernel->routine.empty();
    for (const Candidate& cand : rt_.explain(*c.kernel, &c.grid, probe)) {
        if (cand.backend_ptr != d.backend || cand.device_index != d.index) continue;
        if (cand.kept) return c;
        why = cand.reason;
        return std::nullopt;
    }
    why = "the router does not list this device";
    return std::nullopt;
}

double Tuner::time_variant(const Choice& c, std::span<const LaunchArg> args) {
    rt_.launch_ir(c.target, c.kernel, c.grid, args).wait(); // warm: caches, clocks, lazy loads
    double best = 0, total = 0;
    for (int rep = 0; rep < 5 && (rep < 2 || total < 0.05); ++rep) {
        const auto t0 = Clock::now();
        rt_.launch_ir(c.target, c.kernel, c.grid, args).wait();
        const double s = std::chrono::duration<double>(Clock::now() - t0).count();
        ++timed_;
        total += s;
        best = rep == 0 ? s : std::min(best, s);
    }
    return best;
}

std::optional<Tuner::Choice> Tuner::tune_on(const Device& d, const FamilyDef& family,
                                            const Shape& shape, std::span<const LaunchArg> args,
                                            TuningReport& report, bool retune, double& seconds,
                                            std::string& tried) {
    const Config& config = rt_.config();
    const DeviceInfo& info = d.backend->devices()[d.index];
    report.backend = d.backend->name();
    report.device = info.name;
    report.candidates.clear();
    FamilyContext ctx{d.backend->name(), info, shape};
    TuningRecord key;
    key.family = family.name();
    key.family_hash = family.hash();
    key.backend = d.backend->name();
    key.backend_version = d.backend->version();
    key.device = info.name;
    key.arch = info.arch;
    key.bucket = report.bucket;
    std::string why;
    seconds = -1;

    if (!retune)
        if (std::optional<TuningRecord> stored = load_tuning(config.cache_dir, key)) {
            std::optional<Choice> c = fit(family, stored->variant, d, shape, why);
            if (c && c->kernel->hash() == stored->kernel_hash) {
                report.chosen = stored->variant;
                report.kernel = c->kernel->name;
                report.source = "stored";
                report.candidates = stored->candidates;
                for (const TuningCandidate& tc : stored->candidates)
                    if (tc.variant == stored->variant && tc.dropped.empty()) seconds = tc.seconds;
                return c;
            }
        }

    // The heuristic's variant first, then the space in order.
    const Tuning first = family.heuristic(ctx);
    std::vector<Tuning> order = {first};
    for (const Tuning& v : family.variants())
        if (v != first) order.push_back(v);
    std::vector<std::pair<Tuning, Choice>> fits;
    for (const Tuning& v : order) {
        std::optional<Choice> c = fit(family, v, d, shape, why);
        if (!c) {
            report.candidates.push_back({v, family.variant_name(v), 0, why});
            continue;
        }
        fits.emplace_back(v, *c);
        if (!config.tuning && !retune) break; // the first that fits is the choice
    }
    if (fits.empty()) {
        // The heuristic's reason first (what the device lacks for the variant it would
        // take), then every variant's.
        tried += "\n  " + d.backend->name() + ":" + std::to_string(d.index) + " (" + info.name +
                 "): " + report.candidates.front().dropped;
        for (const TuningCandidate& c : report.candidates)
            tried += "\n    {" + c.variant.text() + "}: " + c.dropped;
        return std::nullopt;
    }
    if (fits.size() == 1 || (!config.tuning && !retune)) {
        report.chosen = fits[0].first;
        report.kernel = fits[0].second.kernel->name;
        report.source = "heuristic";
        return fits[0].second;
    }
    // Measure: compile ahead a few at a time, time each while the budget lasts.
    const auto t0 = Clock::now();
    // On a CPU device a compile beside a timed launch would take the launch's cores: there
    // each candidate compiles just before it is timed.
    const size_t window = info.type == DeviceType::CPU ? 1
                          : config.compile_threads
                              ? config.compile_threads
                              : std::clamp(std::thread::hardware_concurrency(), 1u, 8u);
    std::vector<Prepared> prepared;
    auto prepare_upto = [&](size_t end) {
        while (prepared.size() < std::min(end, fits.size())) {
            const Choice& c = fits[prepared.size()].second;
            const std::shared_ptr<const ir::Kernel> one[] = {c.kernel};
            prepared.push_back(rt_.prepare(one, c.target));
        }
    };
    Snapshot snapshot(*fits[0].second.kernel, args);
    std::optional<size_t> best;
    double best_s = 0;
    // The longest one candidate took (its compile, or the wait for it, and its launches):
    // a candidate starts only if that much fits in what is left of the budget.
    double slowest_ms = 0;
    for (size_t i = 0; i < fits.size(); ++i) {
        const auto& [v, c] = fits[i];
        TuningCandidate tc{v, c.kernel->name, 0, ""};
        if (i > 0 && ms_since(t0) + slowest_ms > config.tuning_budget_ms) {
            tc.dropped = "the tuning budget (" + std::to_string(config.tuning_budget_ms) +
                         " ms) would be spent first";
            report.candidates.push_back(std::move(tc));
            continue;
        }
        const auto started = Clock::now();
        prepare_upto(i + window);
        try {
            prepared[i].wait();
            tc.seconds = time_variant(c, args);
            if (!best || tc.seconds < best_s) {
                best = i;
                best_s = tc.seconds;
            }
        } catch (const Error& e) {
            if (!trial_may_fail(e)) throw;
            tc.dropped = e.what();
        }
        slowest_ms = std::max(slowest_ms, ms_since(started));
        report.candidates.push_back(std::move(tc));
    }
    snapshot.restore();
    report.tuning_ms = ms_since(t0);
    if (!best) {
        tried +=
            "\n  " + d.backend->name() + ":" + std::to_string(d.index) + ": every variant failed";
        return std::nullopt;
    }
    const auto& [v, c] = fits[*best];
    report.chosen = v;
    report.kernel = c.kernel->name;
    report.source = "measured";
    key.variant = v;
    key.kernel_hash = c.kernel->hash();
    key.candidates = report.candidates;
    store_tuning(config.cache_dir, key);
    seconds = best_s;
    log().info("tuned '{}' on {} for shape bucket {}: {} ({:.3f} ms) in {:.0f} ms", family.name(),
               info.name, shape_text(report.bucket), c.kernel->name, best_s * 1e3,
               report.tuning_ms);
    return c;
}

Tuner::Choice Tuner::resolve(const Target& target, const FamilyDef& family, const Shape& shape,
                             std::span<const LaunchArg> args, TuningReport& report, bool retune) {
    report.family = family.name();
    report.shape = shape;
    report.bucket = family.bucket(shape);
    // Measured routing of a launch not pinned to a backend or device: each device's best
    // variant (timed when it is the heuristic's or the only one), then the device where it is
    // fastest. Otherwise the first device (in the router's order) that can run a variant.
    const bool across =
        rt_.config().routing == Routing::Measured && target.backend.empty() && target.device < 0;
    std::string tried;
    std::optional<std::pair<Choice, TuningReport>> best;
    double best_s = -1;
    std::vector<RoutePrediction> routes;
    for (const Device& d : devices(family, target)) {
        // As for kernels (runtime/measured.cpp): a device ranked below priority 0 (they come
        // last) is a last resort, outside the comparison, taken when no other runs a variant.
        if (across && d.priority < 0 && best) break;
        TuningReport r = report;
        double s = -1;
        std::optional<Choice> c = tune_on(d, family, shape, args, r, retune, s, tried);
        if (!c) continue;
        if (!across) {
            report = std::move(r);
            return *c;
        }
        if (s < 0) { // the heuristic's variant, or the only one: timed to compare devices
            Snapshot snapshot(*c->kernel, args);
            std::optional<Error> failed;
            try {
                s = time_variant(*c, args);
            } catch (const Error& e) {
                if (!trial_may_fail(e)) throw;
                failed = e;
            }
            snapshot.restore(); // also after a failed trial: it may have written
            if (failed) {
                tried += "\n  " + d.backend->name() + ":" + std::to_string(d.index) + ": " +
                         failed->what();
                continue;
            }
        }
        routes.push_back({d.backend->name(), r.device, d.index, 1, s, 0, 0});
        if (!best || s < best_s) {
            best.emplace(*c, std::move(r));
            best_s = s;
        }
    }
    if (best) {
        report = std::move(best->second);
        report.routes = std::move(routes);
        return best->first;
    }
    throw Error(ErrorCode::NoBackend,
                "no device can run a variant of kernel family '" + family.name() + "'" +
                    (tried.empty() ? std::string(": no device is selected") : tried));
}

TuningReport Tuner::choose(const Target& target, const FamilyDef& family, const Shape& shape,
                           std::span<const LaunchArg> args, bool retune) {
    std::lock_guard lock(mutex_);
    TuningReport report;
    resolve(target, family, shape, args, report, retune);
    reports_.push_back(report);
    return report;
}

Event Tuner::launch(const Target& target, const std::shared_ptr<FamilyDef>& family,
                    const Shape& shape, std::span<const LaunchArg> args) {
    if (!family->has_grid())
        throw Error(ErrorCode::InvalidKernel,
                    "kernel family '" + family->name() + "' has no grid function (.grid(...))");
    const auto key = std::make_tuple(family.get(), target.backend, target.device, shape);
    for (int attempt = 0;; ++attempt) {
        std::optional<Choice> choice;
        {
            std::lock_guard lock(mutex_);
            if (auto it = chosen_.find(key); it != chosen_.end()) {
                choice = it->second.second;
            } else {
                TuningReport report;
                choice = resolve(target, *family, shape, args, report, false);
                reports_.push_back(std::move(report));
                if (chosen_.size() >= 4096) chosen_.clear();
                chosen_[key] = {family, *choice};
            }
        }
        try {
            return rt_.launch_ir(choice->target, choice->kernel, choice->grid, args);
        } catch (const Error& e) {
            // A variant the device rejects when it is compiled is remembered by the runtime
            // and passed over by the next choice (another variant there, or another device
            // where the launch is not pinned).
            if (attempt >= 8 || !rt_.config().fallback || !recoverable(e)) throw;
            log().warn("kernel '{}' failed on {}:{}, choosing again: {}", choice->kernel->name,
                       choice->target.backend, choice->target.device, e.what());
            std::lock_guard lock(mutex_);
            chosen_.erase(key);
        }
    }
}

std::vector<TuningReport> Tuner::reports() const {
    std::lock_guard lock(mutex_);
    return reports_;
}

size_t Tuner::timed_launches() const {
    std::lock_guard lock(mutex_);
    return timed_;
}

} // namespace plexus::detail
