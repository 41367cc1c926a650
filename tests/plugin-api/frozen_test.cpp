// Binary compatibility with every released ABI minor: a third party's OpenCL plugin built
// against the frozen public headers of 1.0, 1.1, 1.2, 1.3 and 1.4 (tests/plugin-api/frozen) and
// today's loads in this host and runs every sample it can say it runs, each output element checked;
// what it cannot say (a class its header did not have, subgroup operations it never stated
// per device) is routed around, never sent to it. Also: the capability classes a table claims.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <dlfcn.h>

#include <set>

#include "abi_fixture.hpp"
#include "kernels.hpp"
#include "plexus/catalog.hpp"
#include "plexus/doctor.hpp"
#include "plexus/plugin.h"
#include "problems.hpp"

using namespace plexus;

namespace {

// ocl-icd keeps its platform list for the life of the library, and the plugins here are its
// only users in this process: when the last of them unloads, the ICD loader goes with it and
// LeakSanitizer reports that list. A program that uses OpenCL holds the loader for its life;
// so does this one.
void* const keep_icd_loader = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_NODELETE);

struct Frozen {
    const char* name;
    uint32_t minor;   // of the header it was built against
    uint32_t classes; // what its table is read as claiming
};

// cl12 and cl13 list the subgroup (and matrix) rows their headers had, so they claim those
// classes; their devices never state subgroup_ops / matrix_ops, so no such kernel is routed to
// them. cl14 and clnow name only CORE, ATOMICS and MATH, as today's header asks.
constexpr uint32_t kBase = PLX_CLASS_CORE | PLX_CLASS_ATOMICS | PLX_CLASS_MATH;
const Frozen kFrozen[] = {
    {"cl10", 0, kBase},
    {"cl11", 1, kBase},
    {"cl12", 2, kBase | PLX_CLASS_SUBGROUP},
    {"cl13", 3, kBase | PLX_CLASS_SUBGROUP | PLX_CLASS_MATRIX},
    {"cl14", 4, kBase},
    {"clnow", PLX_ABI_VERSION_MINOR, kBase},
};

} // namespace

TEST_CASE("a plugin built against each earlier public header loads and runs the samples it can") {
    for (const Frozen& f : kFrozen) {
        const std::string plugin = f.name;
        CAPTURE(plugin);
        abi::Alone a(f.name);
        REQUIRE(a.rt->load_report().size() == 1);
        const LoadReportEntry& e = a.rt->load_report()[0];
        if (e.outcome == LoadOutcome::NoDevices) {
            MESSAGE("skipped: " << e.message << " (no OpenCL device here)");
            return;
        }
        REQUIRE_MESSAGE(e.outcome == LoadOutcome::Loaded, e.message);
        const Backend& b = *a.rt->backends().at(0);
        CHECK(b.api().abi_version == PLX_MAKE_VERSION(1, f.minor));
        CHECK(b.capability_classes() == f.classes);
        CHECK(b.ignored_intrinsics() == 0);
        for (const DeviceInfo& d : b.devices()) {
            // Fields the header had but the plugin left 0: from 1.2 on, "none" (not "ask the
            // table").
            if (f.minor >= 2)
                CHECK(d.subgroup_ops == std::optional<uint32_t>(0));
            else
                CHECK(!d.subgroup_ops);
            if (f.minor >= 3)
                CHECK(d.matrix_ops == std::optional<uint32_t>(0));
            else
                CHECK(!d.matrix_ops);
            // ... and the router's reason then names the plugin's silence, not the device.
            CHECK(d.subgroup_ops_unstated == (f.minor >= 2));
            CHECK(d.matrix_ops_unstated == (f.minor >= 3));
        }
        std::set<std::string> ran;
        std::string skipped;
        for (const std::string& name : samples::problem_names()) {
            const size_t size = samples::test_sizes(name, false).at(1);
            auto p = samples::make_problem(name, size, *a.rt, 5);
            INFO(name << " " << p->size_text());
            try {
                p->run(*a.rt, Target{f.name, 0});
            } catch (const Error& e) {
                const std::string why = samples::drop_reason(e, Target{f.name, 0});
                INFO(e.what());
                // Routed around: an intrinsic its table does not list, an operation its device
                // does not state, a type or size the device lacks. Never a failed compile.
                REQUIRE(!why.empty());
                skipped += "\n  " + name + ": " + why;
                continue;
            }
            const samples::CheckResult r = p->check();
            INFO(r.bad << " of " << r.checked << " wrong; " << r.first_bad);
            CHECK(r.ok());
            ran.insert(name);
        }
        MESSAGE(plugin << " ran " << ran.size() << " of " << samples::problem_names().size()
                       << " samples; routed around:" << skipped);
        for (const char* must :
             {"vector_add", "reduce", "matmul_tiled", "histogram", "transpose", "softmax_f32"})
            CHECK_MESSAGE(ran.count(must) == 1, std::string(must));
        // The math functions added after 1.1 are not in the older tables: math_catalog is
        // routed around there ("lacks intrinsic ...").
        CHECK(ran.count("math_catalog") == (f.minor >= 2 ? 1u : 0u));
        for (const char* never : {"warp_reduce", "scan"})
            CHECK_MESSAGE(ran.count(never) == 0, never);
    }
}

TEST_CASE("each catalog row has one capability class, and a class is no older than its ABI minor") {
    std::set<uint32_t> seen;
    for (const IntrinsicInfo& info : intrinsic_catalog()) {
        CAPTURE(info.name);
        REQUIRE(info.capability_class != 0);
        CHECK((info.capability_class & (info.capability_class - 1)) == 0); // one bit
        seen.insert(info.capability_class);
        if (info.name.rfind("subgroup_", 0) == 0)
            CHECK(info.capability_class == PLX_CLASS_SUBGROUP);
        if (info.name.rfind("matrix_", 0) == 0) CHECK(info.capability_class == PLX_CLASS_MATRIX);
        if (info.name.rfind("atomic_", 0) == 0) CHECK(info.capability_class == PLX_CLASS_ATOMICS);
    }
    CHECK(seen == std::set<uint32_t>(capability_classes().begin(), capability_classes().end()));
    CHECK(capability_class_since_minor(PLX_CLASS_SUBGROUP) == 2);
    CHECK(capability_class_since_minor(PLX_CLASS_MATRIX) == 3);
    // An include that names no class gets ABI 1.0's.
    size_t base = 0;
    for (const IntrinsicInfo& info : intrinsic_catalog())
        base += (info.capability_class & kBase) != 0;
    const char* const unnamed[] = {
#define PLX_INTRINSIC(id, signature, convergence, opencl_c, cuda_c, nvvm) #id,
#include "plexus/intrinsics.def"
#undef PLX_INTRINSIC
    };
    CHECK(std::size(unnamed) == base);
    for (const char* n : unnamed)
        CHECK((find_intrinsic(n)->capability_class & kBase) != 0);
}

namespace {

// The ids of the devices of a diagnosis, or empty when the plugin found no OpenCL device.
bool has_devices(const Diagnosis& d) {
    REQUIRE(d.plugins.size() == 1);
    const PluginDiagnosis& p = d.plugins[0];
    if (p.entry.outcome == LoadOutcome::NoDevices) return false;
    REQUIRE_MESSAGE(p.entry.outcome == LoadOutcome::Loaded, p.entry.message);
    REQUIRE(!p.devices.empty());
    return true;
}

const CheckStep* step_of(const DeviceDiagnosis& d, const std::string& name) {
    for (const CheckStep& s : d.steps)
        if (s.name == name) return &s;
    return nullptr;
}

Config quiet_config(const abi::TempDir& t) {
    Config c;
    c.use_env_plugin_path = false;
    c.use_install_dir = false;
    c.cache_dir = (t.path / "cache").string();
    return c;
}

} // namespace

TEST_CASE("plexus doctor --plugin: every claim of an honest plugin holds") {
    abi::TempDir t;
    // A file of any name, anywhere: the check links it into a folder of its own.
    const abi::fs::path file = t.path / "my-opencl-plugin.so";
    abi::fs::copy_file(abi::built("cl10"), file);
    const Diagnosis d = diagnose_plugin(file.string(), quiet_config(t));
    if (!has_devices(d)) return;
    const PluginDiagnosis& p = d.plugins[0];
    CHECK(p.entry.name == "cl10");
    CHECK_MESSAGE(p.severity == Severity::Ok, p.summary << " / " << p.advice);
    for (const DeviceDiagnosis& dev : p.devices) {
        CAPTURE(dev.summary);
        CHECK(dev.severity == Severity::Ok);
        for (const char* cls : {"core", "atomics", "math"}) {
            const CheckStep* s = step_of(dev, cls);
            REQUIRE_MESSAGE(s != nullptr, cls);
            CHECK_MESSAGE(s->ok, cls << ": " << s->message);
        }
        CHECK(step_of(dev, "subgroup basic") == nullptr); // not claimed: not checked
    }
}

TEST_CASE("plexus doctor --plugin: an over-claiming plugin is caught, claim by claim") {
    abi::TempDir t;
    const Diagnosis d = diagnose_plugin(abi::built("cllie"), quiet_config(t));
    if (!has_devices(d)) return;
    const PluginDiagnosis& p = d.plugins[0];
    CHECK(p.severity == Severity::Problem);
    CHECK(p.advice.find("PLX_CATALOG_CLASSES") != std::string::npos);
    for (const DeviceDiagnosis& dev : p.devices) {
        CAPTURE(dev.summary);
        CHECK(dev.severity == Severity::Problem);
        // Its atomic_add is spelled to add one too many: compiles, runs, and is wrong.
        const CheckStep* atomics = step_of(dev, "atomics");
        REQUIRE(atomics != nullptr);
        CHECK(!atomics->ok);
        CHECK(atomics->message.find("atomic_add on a buffer") != std::string::npos);
        CHECK(dev.summary.find("atomics: ") != std::string::npos);
        for (const char* cls : {"core", "math"}) {
            const CheckStep* s = step_of(dev, cls);
            REQUIRE_MESSAGE(s != nullptr, cls);
            CHECK_MESSAGE(s->ok, cls << ": " << s->message);
        }
        // It states every subgroup family and matrix type: each is checked, and each the
        // device lacks (no cl_khr_subgroups on PoCL 3.1, for one) fails with the build log.
        for (const char* claim : {"subgroup basic", "subgroup shuffle", "subgroup shuffle_relative",
                                  "subgroup ballot", "matrix f16", "matrix bf16", "matrix tf32"})
            CHECK_MESSAGE(step_of(dev, claim) != nullptr, claim);
    }
}

TEST_CASE("a routed launch whose compile fails on the first candidate runs on the second, once") {
    abi::TempDir t;
    t.add("p", "clbroken"); // priority 95: ranked above plexus's OpenCL plugin (90)
    t.add("p", "opencl");
    Config c = Config::parse(R"({"plugin_dirs": ["p"]})", (t.path / "config.json").string());
    c.use_env_plugin_path = false;
    c.use_install_dir = false;
    c.cache_dir = "";
    c.trace = (t.path / "trace.json").string();
    c.backends["native"].enabled = false; // the build tree's, if any: only the two here
    c.backends["interp"].enabled = false;
    c.backends["cuda"].enabled = false;
    {
        Runtime rt(c);
        if (rt.backends().size() < 2) {
            MESSAGE("skipped: no OpenCL device here");
            return;
        }
        REQUIRE(rt.backends()[0]->name() == "clbroken");
        for (int round = 0; round < 3; ++round) {
            auto p = samples::make_problem("vector_add", 10007, rt, unsigned(round));
            p->run(rt, Target{});
            CHECK(p->check().ok());
        }
        // Tried once on clbroken, remembered: one failed compile, one good one.
        const auto reports = rt.compile_reports();
        REQUIRE(reports.size() == 2);
        CHECK(reports[0].backend == "clbroken");
        CHECK(reports[0].error.find("CLP_REFUSE") != std::string::npos);
        CHECK(reports[1].backend == "opencl");
        CHECK(reports[1].error.empty());
        // The ranking says why clbroken is passed over.
        bool saw = false;
        for (const Candidate& cand : rt.explain(samples::vector_add().ir()))
            if (cand.backend == "clbroken") {
                saw = true;
                CHECK(!cand.kept);
                CHECK(cand.reason.find("failed to compile here") != std::string::npos);
                CHECK(cand.reason.find("CLP_REFUSE") != std::string::npos);
            }
        CHECK(saw);
        // Pinned to it, the remembered failure is the error.
        auto pinned = samples::make_problem("vector_add", 100, rt, 9);
        CHECK_THROWS_WITH_AS(pinned->run(rt, Target{"clbroken", 0}),
                             doctest::Contains("CLP_REFUSE"), Error);
    }
    // The trace names the failed compile.
    CHECK(abi::read_file(t.path / "trace.json").find("compile vector_add failed") !=
          std::string::npos);
}

TEST_CASE("explain --compile drops a candidate that rejects the kernel") {
    abi::TempDir t;
    t.add("p", "clbroken");
    t.add("p", "opencl");
    Config c = Config::parse(R"({"plugin_dirs": ["p"]})", (t.path / "config.json").string());
    c.use_env_plugin_path = false;
    c.use_install_dir = false;
    c.cache_dir = "";
    Runtime rt(c);
    if (rt.backends().size() < 2) return;
    const ir::Kernel& k = samples::vector_add().ir();
    for (const Candidate& cand : rt.explain(k))
        CHECK(cand.kept); // without --compile: both
    for (const Candidate& cand : rt.explain(k, nullptr, true)) {
        CAPTURE(cand.backend);
        CHECK(cand.kept == (cand.backend != "clbroken"));
    }
}
