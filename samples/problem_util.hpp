// Helpers of the sample problems: random inputs, the device a target names, and the
// comparison of one output element against its reference.
#pragma once

#include "problems.hpp"

#include <random>
#include <vector>

namespace plexus::samples {

std::vector<float> random_floats(size_t n, std::mt19937& g);
const DeviceInfo& device_of(Runtime& rt, const Target& t);
// The device a launch of `kernel` on `t` goes to (the router's first choice when t names no
// backend), or null where no backend can run it (the launch itself reports that).
const DeviceInfo* routed_device(Runtime& rt, const Target& t, const ir::Kernel& kernel);
// Its subgroup width (1 where none).
uint32_t subgroup_width(Runtime& rt, const Target& t, const ir::Kernel& kernel);
// Records one comparison: |got - want| against its allowed `bound` (0: exact).
void record(CheckResult& r, size_t index, double got, double want, double bound);

} // namespace plexus::samples
