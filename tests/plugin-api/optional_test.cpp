// "NULL means unsupported": plugins whose optional functions are all NULL (real backends of
// this build behind tests/plugin-api/fake_minimal.c) run every sample problem, each checked.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>

#include "abi_fixture.hpp"
#include "plexus/catalog.hpp"
#include "problems.hpp"

using namespace plexus;

namespace {

// The wrappers meson built: FAKE_PLUGIN_MINIMAL_<INNER> for each inner backend of this build.
std::vector<std::string> built_wrappers() {
    std::vector<std::string> out;
    for (const char* inner : {"native", "interp", "opencl"})
        if (std::getenv(("FAKE_PLUGIN_MINIMAL_" + abi::upper(inner)).c_str()) != nullptr)
            out.push_back(std::string("minimal_") + inner);
    return out;
}

} // namespace

TEST_CASE("a plugin with every optional function NULL runs every sample") {
    const auto wrappers = built_wrappers();
    REQUIRE(!wrappers.empty());
    for (const std::string& wrapper : wrappers) {
        CAPTURE(wrapper);
        abi::Alone m(wrapper, "minimal");
        REQUIRE(m.rt->load_report().size() == 1);
        const LoadReportEntry& e = m.rt->load_report()[0];
        if (e.outcome == LoadOutcome::MissingDependency || e.outcome == LoadOutcome::NoDevices) {
            MESSAGE(wrapper << " skipped: " << e.message); // OpenCL without a device here
            continue;
        }
        REQUIRE_MESSAGE(e.outcome == LoadOutcome::Loaded, e.message);
        const Backend& b = *m.rt->backends().at(0);
        const plx_plugin& api = b.api();
        // Every optional function of the descriptor the host sees is NULL.
        for (const bool absent : {api.shutdown == nullptr, api.buffer_fill == nullptr,
                                  api.buffer_copy == nullptr, api.module_unload == nullptr,
                                  api.module_get_binary == nullptr, api.event_wait == nullptr,
                                  api.event_profile == nullptr, api.event_release == nullptr})
            CHECK(absent);
        // A 1.0 table is read as claiming only 1.0's classes.
        CHECK(b.capability_classes() == (PLX_CLASS_CORE | PLX_CLASS_ATOMICS | PLX_CLASS_MATH));
        CHECK(b.ignored_intrinsics() > 0);
        const bool slow = wrapper == "minimal_interp";
        for (const std::string& name : samples::problem_names()) {
            const size_t size = samples::test_sizes(name, slow).at(1);
            auto p = samples::make_problem(name, size, *m.rt, 11);
            INFO(name << " " << p->size_text());
            try {
                p->run(*m.rt, Target{"minimal", 0});
            } catch (const Error& e) {
                // The inner device lacks what the kernel needs (fp64 somewhere), or the kernel
                // needs a class that ABI 1.0 did not have: the wrapper says it is a 1.0 plugin,
                // so the subgroup and matrix rows it passes on from its inner table are no claim.
                const std::string why = samples::drop_reason(e, Target{"minimal", 0});
                INFO(std::string(e.what()));
                REQUIRE((why.rfind("the device lacks", 0) == 0 ||
                         why.rfind("lacks intrinsic subgroup_", 0) == 0 ||
                         why.rfind("lacks intrinsic matrix_", 0) == 0));
                continue;
            }
            const samples::CheckResult r = p->check();
            INFO(r.bad << " of " << r.checked << " wrong; " << r.first_bad);
            CHECK(r.ok());
        }
    }
}

TEST_CASE("without buffer_fill a fresh buffer larger than the zeroing block reads as zeros") {
    static const auto add_one = kernel("add_one", {"x", "n"}, [](InOut<float> x, Int n) {
        Int i = global_id(0);
        If(i < n, [&] { x[i] = x[i] + 1.0f; });
    });
    const auto wrappers = built_wrappers();
    REQUIRE(!wrappers.empty());
    abi::Alone m(wrappers.front(),
                 "minimal"); // native where it was built: the interpreter is slow at this size
    REQUIRE(m.rt->backends().size() == 1);
    const int n = (3 << 20) / 4 + 5; // 3 MiB and a bit: four blocks of zeros, the last partial
    Buffer<float> x(*m.rt, size_t(n));
    Event ev = m.rt->launch(Target{"minimal", 0}, add_one, Grid(size_t(n)), x, n);
    ev.wait(); // no events: waits through queue_sync
    CHECK_FALSE(ev.seconds().has_value());
    std::vector<float> got = x.to_vector();
    CHECK(std::count(got.begin(), got.end(), 1.0f) == n);
}
