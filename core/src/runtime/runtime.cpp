// plexus::Runtime: configuration, plugin loading and routing queries.
#include "runtime/runtime_impl.hpp"

#include <algorithm>

#include "loader/loader.hpp"

namespace plexus {

Runtime::Impl::Impl(Config c) : config(std::move(c)) {
    set_log_level(config.log_level);
    if (!config.trace.empty()) trace = std::make_unique<detail::Trace>(config.trace);
    detail::LoadResult loaded = detail::load_plugins(config, trace.get());
    report = std::move(loaded.report);
    backends = std::move(loaded.backends);
    exec = std::make_unique<detail::Executor>(config, backends, trace.get());
}

Runtime::Runtime() : Runtime(Config::load()) {}

Runtime::Runtime(Config config) : impl_(std::make_unique<Impl>(std::move(config))) {
    impl_->tuner = std::make_unique<detail::Tuner>(*this);
}

Runtime::~Runtime() = default;

const Config& Runtime::config() const {
    return impl_->config;
}

const std::vector<LoadReportEntry>& Runtime::load_report() const {
    return impl_->report;
}

std::vector<const Backend*> Runtime::backends() const {
    std::vector<const Backend*> out;
    for (const auto& b : impl_->backends)
        out.push_back(b.get());
    std::stable_sort(out.begin(), out.end(), [](const Backend* a, const Backend* b) {
        if (a->priority() != b->priority()) return a->priority() > b->priority();
        return a->name() < b->name();
    });
    return out;
}

std::vector<Candidate> Runtime::explain(const KernelNeeds& needs) const {
    std::vector<const Backend*> all;
    for (const auto& b : impl_->backends)
        all.push_back(b.get());
    return rank_candidates(all, needs, impl_->config);
}

std::vector<Candidate> Runtime::explain(const ir::Kernel& kernel, const Grid* grid,
                                        bool compile) const {
    return impl_->exec->explain(kernel, grid, compile);
}

Event Runtime::launch_ir(const Target& target, const std::shared_ptr<const ir::Kernel>& kernel,
                         const Grid& grid, std::span<const LaunchArg> args) {
    return impl_->exec->launch(target, kernel, grid, args);
}

Event Runtime::launch_family(const Target& target, const std::shared_ptr<detail::FamilyDef>& family,
                             const Shape& shape, std::span<const LaunchArg> args) {
    return impl_->tuner->launch(target, family, shape, args);
}

TuningReport Runtime::tune_family(const Target& target, const detail::FamilyDef& family,
                                  const Shape& shape, std::span<const LaunchArg> args,
                                  bool retune) {
    return impl_->tuner->choose(target, family, shape, args, retune);
}

std::vector<TuningReport> Runtime::tuning_reports() const {
    return impl_->tuner->reports();
}

size_t Runtime::tuning_launches() const {
    return impl_->tuner->timed_launches();
}

std::vector<RoutingDecision> Runtime::routing_decisions() const {
    return impl_->exec->routes().decisions();
}

size_t Runtime::routing_launches() const {
    return impl_->exec->routes().timed_launches();
}

void Runtime::finish() {
    impl_->exec->finish();
}

Prepared Runtime::prepare(std::span<const std::shared_ptr<const ir::Kernel>> kernels,
                          const Target& target) {
    Prepared p;
    for (const auto& k : kernels)
        p.done_.push_back(impl_->exec->prepare(k, target));
    return p;
}

void Prepared::wait() const {
    for (const auto& d : done_)
        d.wait();
    for (const auto& d : done_)
        d.get(); // the first failure, in the order the kernels were given
}

bool Prepared::ready() const {
    for (const auto& d : done_)
        if (d.wait_for(std::chrono::seconds(0)) != std::future_status::ready) return false;
    return true;
}

std::vector<CompileReport> Runtime::compile_reports() const {
    return impl_->exec->compile_reports();
}

Runtime::Impl& Runtime::impl() {
    return *impl_;
}
const Runtime::Impl& Runtime::impl() const {
    return *impl_;
}

} // namespace plexus
