// Helpers of the sample problems (problem_util.hpp).
#include "problem_util.hpp"

#include <cmath>
#include <cstdio>

namespace plexus::samples {

std::vector<float> random_floats(size_t n, std::mt19937& g) {
    std::uniform_real_distribution<float> d(-1.0f, 1.0f);
    std::vector<float> v(n);
    for (auto& x : v)
        x = d(g);
    return v;
}

const DeviceInfo& device_of(Runtime& rt, const Target& t) {
    for (const Backend* b : rt.backends())
        if (b->name() == t.backend && !b->devices().empty())
            return b->devices().at(t.device < 0 ? 0 : size_t(t.device));
    throw Error(ErrorCode::NoBackend, "no backend named '" + t.backend + "' is loaded");
}

const DeviceInfo* routed_device(Runtime& rt, const Target& t, const ir::Kernel& kernel) {
    if (!t.backend.empty()) return &device_of(rt, t);
    for (const Candidate& c : rt.explain(kernel))
        if (c.kept) return &c.backend_ptr->devices().at(c.device_index);
    return nullptr;
}

uint32_t subgroup_width(Runtime& rt, const Target& t, const ir::Kernel& kernel) {
    const DeviceInfo* d = routed_device(rt, t, kernel);
    return d ? d->subgroup_size : 1;
}

void record(CheckResult& r, size_t index, double got, double want, double bound) {
    ++r.checked;
    double err = std::fabs(got - want);
    double ratio = bound > 0 ? err / bound : (err == 0 ? 0 : INFINITY);
    if (!(ratio <= 1.0)) {
        if (r.bad++ == 0) {
            char buf[160];
            std::snprintf(buf, sizeof buf, "element %zu: got %.9g, want %.9g", index, got, want);
            r.first_bad = buf;
        }
    }
    if (ratio > r.max_error || std::isnan(ratio))
        r.max_error = std::isnan(ratio) ? INFINITY : ratio;
}

} // namespace plexus::samples
