// What the suites that run each case on every device share: one hermetic Runtime over this
// build tree's plugins per test program (build_tree_config.hpp's hermetic_config), and its
// devices, each with the label messages name it by.
#pragma once

#include "build_tree_config.hpp"
#include "plexus/runtime.hpp"

#include <string>
#include <vector>

namespace plexus::test {

inline Runtime& hermetic_runtime() {
    static Runtime rt(hermetic_config());
    return rt;
}

struct TestDevice {
    Target target;
    std::string label; // "opencl:0 (pthread-skylake-avx512-AMD EPYC)"
    const DeviceInfo* info;
};

inline std::vector<TestDevice> every_device() {
    std::vector<TestDevice> out;
    for (const Backend* b : hermetic_runtime().backends())
        for (size_t i = 0; i < b->devices().size(); ++i)
            out.push_back({Target{b->name(), int(i)},
                           b->name() + ":" + std::to_string(i) + " (" + b->devices()[i].name + ")",
                           &b->devices()[i]});
    return out;
}

} // namespace plexus::test
