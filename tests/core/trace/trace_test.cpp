// PLEXUS_TRACE / Config::trace: a Runtime that launches vector_add on every backend of the
// build tree writes, when destroyed, a trace file that parses as JSON and holds, per backend,
// the plugin's load, the kernel's compile, its transfers (with their sizes) and its launch,
// and with profiling on the launch's device time, each on the backend's own track.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include "build_tree_config.hpp"
#include "kernels.hpp"
#include "plexus/plexus.hpp"

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <unistd.h>

namespace px = plexus;
namespace fs = std::filesystem;

namespace {

struct Found {
    std::string track;
    nlohmann::json event;
};

// The complete events of a trace with the name of their track.
std::vector<Found> events_of(const nlohmann::json& trace) {
    std::map<int, std::string> tracks;
    for (const auto& e : trace.at("traceEvents"))
        if (e.at("ph") == "M" && e.at("name") == "thread_name")
            tracks[e.at("tid").get<int>()] = e.at("args").at("name");
    std::vector<Found> out;
    for (const auto& e : trace.at("traceEvents")) {
        if (e.at("ph") != "X") continue;
        REQUIRE(e.at("dur").get<double>() >= 0);
        REQUIRE(e.at("ts").get<double>() >= 0);
        out.push_back({tracks.at(e.at("tid").get<int>()), e});
    }
    return out;
}

const Found* find(const std::vector<Found>& all, const std::string& track_prefix,
                  const std::string& name) {
    for (const Found& f : all)
        if (f.track.rfind(track_prefix, 0) == 0 && f.event.at("name") == name) return &f;
    return nullptr;
}

} // namespace

TEST_CASE("a trace holds each backend's load, compile, transfers, launch and device time") {
    const fs::path file =
        fs::temp_directory_path() / ("plexus-trace-" + std::to_string(::getpid()) + ".json");
    const int n = 1000 + int(std::random_device{}() % 1000);
    std::vector<std::string> backends;
    {
        px::Config c = px::test::build_tree_config();
        c.cache_dir = "";
        c.fallback = false;
        c.profiling = true;
        c.trace = file.string();
        px::Runtime rt(c);
        std::mt19937 rng(5);
        std::uniform_real_distribution<float> u(-10, 10);
        std::vector<float> a(n), b(n);
        for (int i = 0; i < n; ++i)
            a[i] = u(rng), b[i] = u(rng);
        const auto& k = px::samples::vector_add();
        for (const px::Backend* be : rt.backends()) {
            if (be->devices().empty()) continue;
            backends.push_back(be->name());
            px::Buffer<float> ba(rt, a), bb(rt, b), bc(rt, size_t(n));
            rt.launch(px::Target{be->name(), 0}, k, px::Grid(size_t(n)), ba, bb, bc, n).wait();
            const std::vector<float> c_out = bc.to_vector();
            int bad = 0;
            for (int i = 0; i < n; ++i)
                bad += c_out[size_t(i)] != a[size_t(i)] + b[size_t(i)];
            CHECK_MESSAGE(bad == 0, be->name());
        }
        REQUIRE_FALSE(backends.empty());
        CHECK_FALSE(fs::exists(file)); // written when the Runtime goes
    }
    REQUIRE(fs::exists(file));
    std::ifstream in(file);
    const nlohmann::json trace = nlohmann::json::parse(in); // throws if it is not JSON
    fs::remove(file);
    const std::vector<Found> all = events_of(trace);

    for (const std::string& be : backends) {
        CAPTURE(be);
        const Found* load =
            find(all, "plugins: libplexus-" + be + ".so", "load libplexus-" + be + ".so");
        REQUIRE(load != nullptr);
        CHECK(load->event.at("args").at("outcome") == "loaded");
        const std::string track = be + ":0 (";
        const Found* compile = find(all, track, "compile vector_add");
        REQUIRE(compile != nullptr);
        CHECK(compile->event.at("args").at("from_disk_cache") == false);
        const Found* launch = find(all, track, "launch vector_add");
        REQUIRE(launch != nullptr);
        CHECK(launch->event.at("args").at("global")[0] == n);
        // Two inputs written, the output zero-filled, then read back: n floats each.
        int writes = 0, reads = 0, fills = 0;
        for (const Found& f : all) {
            if (f.track.rfind(track, 0) != 0 || f.event.at("cat") != "transfer") continue;
            CHECK(f.event.at("args").at("bytes") == size_t(n) * sizeof(float));
            const std::string name = f.event.at("name");
            writes += name == "write from host", reads += name == "read to host",
                fills += name == "zero fill";
        }
        CHECK(writes == 2);
        CHECK(fills == 1);
        CHECK(reads == 1);
        const Found* device = find(all, track, "vector_add");
        REQUIRE(device != nullptr);
        CHECK(device->track == launch->track + " device");
        CHECK(device->event.at("args").at("device_ms").get<double>() > 0);
        // The launch comes after its compile.
        CHECK(launch->event.at("ts").get<double>() >= compile->event.at("ts").get<double>());
    }
}

TEST_CASE("without a trace file nothing is written") {
    const fs::path dir =
        fs::temp_directory_path() / ("plexus-notrace-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const fs::path cwd = fs::current_path();
    fs::current_path(dir);
    {
        px::Config c = px::test::build_tree_config();
        c.cache_dir = "";
        CHECK(c.trace.empty());
        px::Runtime rt(c);
        px::Buffer<float> x(rt, std::vector<float>(16, 1.0f));
        CHECK(x.to_vector() == std::vector<float>(16, 1.0f));
    }
    fs::current_path(cwd);
    CHECK(fs::is_empty(dir));
    fs::remove_all(dir);
}

// backends.native.streaming_stores: a launch whose buffers take at least that many bytes runs
// the kernel's streaming twin (non-temporal stores), and says so in its trace span; below it,
// the plain function. Both give every element exactly.
TEST_CASE("native: launches at or above streaming_stores bytes run the streaming twin") {
#if !defined(__x86_64__)
    MESSAGE("SKIP: streaming twins are made for x86-64 only");
#else
    const fs::path file =
        fs::temp_directory_path() / ("plexus-trace-stream-" + std::to_string(::getpid()) + ".json");
    // float4 elements: three buffers of 16 bytes each, the threshold between the sizes; the
    // last launch passes `a` twice, which counts once: two buffers of 6000, below it (counted
    // twice, three would be above).
    struct Case {
        int n;
        bool same_input;
    };
    const std::vector<Case> cases = {
        {1000, false}, {4999, false}, {5000, false}, {77777, false}, {6000, true}};
    const uint64_t threshold = 3 * 16 * 5000;
    auto buffers = [](const Case& c) {
        return uint64_t(c.same_input ? 2 : 3) * 16 * uint64_t(c.n);
    };
    {
        px::Config c = px::test::build_tree_config();
        c.cache_dir = "";
        c.trace = file.string();
        c.backends["native"].streaming_stores = threshold;
        px::Runtime rt(c);
        bool native = false;
        for (const px::Backend* be : rt.backends())
            native = native || (be->name() == "native" && !be->devices().empty());
        if (!native) {
            MESSAGE("SKIP: no native backend in this build");
            return;
        }
        std::mt19937 rng(11);
        std::uniform_real_distribution<float> u(-10, 10);
        for (const Case& k : cases) {
            const int n = k.n;
            CAPTURE(n);
            std::vector<px::Vec<float, 4>> a(static_cast<size_t>(n)), b(static_cast<size_t>(n));
            for (int i = 0; i < n; ++i)
                for (int l = 0; l < 4; ++l)
                    a[size_t(i)][l] = u(rng),
                    b[size_t(i)][l] = k.same_input ? a[size_t(i)][l] : u(rng);
            px::Buffer<px::Vec<float, 4>> ba(rt, a), bb(rt, b), bc(rt, size_t(n));
            rt.launch(px::Target{"native", 0}, px::samples::vector_add_float4(),
                      px::Grid(size_t(n)), ba, k.same_input ? ba : bb, bc, n)
                .wait();
            const auto out = bc.to_vector();
            int bad = 0;
            for (int i = 0; i < n; ++i)
                for (int l = 0; l < 4; ++l)
                    bad += out[size_t(i)][l] != a[size_t(i)][l] + b[size_t(i)][l];
            CHECK(bad == 0);
        }
    }
    std::ifstream in(file);
    const nlohmann::json trace = nlohmann::json::parse(in);
    in.close();
    fs::remove(file);
    std::vector<bool> streamed;
    for (const Found& f : events_of(trace))
        if (f.track.rfind("native:0 (", 0) == 0 && f.event.at("name") == "launch vector_add_float4")
            streamed.push_back(f.event.at("args").value("streaming_stores", false));
    REQUIRE(streamed.size() == cases.size());
    for (size_t i = 0; i < cases.size(); ++i) {
        CAPTURE(cases[i].n);
        CHECK(streamed[i] == (buffers(cases[i]) >= threshold));
    }
#endif
}
