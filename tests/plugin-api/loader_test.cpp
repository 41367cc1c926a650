// The loader against fake plugins: every load outcome with its message, manifests, the
// first-wins rule, the config's enabled flag, and plugins shared between Runtimes.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <iterator>
#include <map>
#include <random>
#include <sstream>
#include <thread>
#include <unistd.h>

#include "abi_fixture.hpp"
#include "plexus/plexus.hpp"

using namespace plexus;
using abi::TempDir;

namespace {

const char* kConfig = R"({
    "plugin_dirs": ["d1", "d2", "d3", "d4"],
    "backends": {
        "mgood": {"enabled": false},
        "dropoff": {"enabled": false},
        "good": {"options": {"x": 1}}
    }
})";

// The fakes' markers (abi::Markers) count the inits in this process apart from those of the
// validation children, so validation stays on as by default; the verdict cache is off.
Config config_for(const TempDir& t, const std::string& text = kConfig) {
    Config c = Config::parse(text, (t.path / "config.json").string());
    c.use_env_plugin_path = false;
    c.use_install_dir = false;
    c.cache_dir = "";
    return c;
}

std::string random_bytes(size_t n, unsigned seed) {
    std::mt19937 rng(seed);
    std::string s(n, '\0');
    for (char& c : s)
        c = static_cast<char>(rng());
    return s;
}

std::string prefix_of(const std::string& file, size_t n) {
    std::ifstream in(file, std::ios::binary);
    std::string s(n, '\0');
    in.read(s.data(), static_cast<std::streamsize>(n));
    return s;
}

// The whole zoo: drop-ins in d1, the loser of a duplicate in d2, manifests in d3, and a plugin
// whose dependency is missing in d4.
void lay_out(const TempDir& t) {
    for (const char* p :
         {"good", "dup_a", "dropoff", "nodevices", "twodevices", "init_fail", "init_silent",
          "nodriver", "abi_status", "abi_descriptor", "no_entry", "example"})
        t.add("d1", p);
    for (int i = 1; i <= 13; ++i)
        t.add("d1", "contract" + std::to_string(i));
    t.write("d1/random.so", random_bytes(4096, 7));
    t.write("d1/truncated.so", prefix_of(abi::built("good"), 3000));
    t.write("d1/README.txt", "not a plugin, not looked at");
    t.write("d1/libplexus-good.so.1", "a versioned name is not a plugin name");

    t.add("d2", "dup_b");

    t.add("d3", "mgood");
    t.add("d3", "named");
    t.add("d3", "liar");
    t.add("d3", "futurelib");
    auto manifest = [](const std::string& name, const std::string& lib,
                       const std::string& abi_version) {
        return R"({"file_format_version": 1, "name": ")" + name + R"(", "library": ")" + lib +
               R"(", "abi": ")" + abi_version + R"(", "priority": 60})";
    };
    t.write("d3/mgood.json", manifest("mgood", "libplexus-mgood.so", "1.0"));
    t.write("d3/named.json", manifest("named", "./libplexus-named.so", "1.2"));
    t.write("d3/liar.json", manifest("honest", "libplexus-liar.so", "1.0"));
    t.write("d3/future.json", manifest("futurelib", "libplexus-futurelib.so", "2.0"));
    t.write("d3/ghost.json", manifest("ghost", "libplexus-ghost.so", "1.0"));
    t.write("d3/broken.json", manifest("broken", "libplexus-broken.so", "1.0").substr(0, 30));
    t.write("d3/wrongformat.json",
            R"({"file_format_version": 2, "name": "x", "library": "x.so", "abi": "1.0"})");

    t.add("d4", "needsdep");
}

std::map<std::string, LoadReportEntry> by_file(const std::vector<LoadReportEntry>& report) {
    std::map<std::string, LoadReportEntry> m;
    for (const auto& e : report) {
        std::string file = abi::fs::path(e.path).filename().string();
        CHECK_MESSAGE(m.count(file) == 0, "two report entries for " << file);
        m[file] = e;
    }
    return m;
}

// "1.2": the plugin ABI this host speaks, as load reports write it.
std::string host_abi() {
    return "1." + std::to_string(PLX_ABI_VERSION_MINOR);
}

void expect(const std::map<std::string, LoadReportEntry>& m, const std::string& file,
            LoadOutcome outcome, const std::string& message_part, const std::string& name = "?") {
    CAPTURE(file);
    auto it = m.find(file);
    REQUIRE_MESSAGE(it != m.end(), "no report entry for " << file);
    CHECK_MESSAGE(to_string(it->second.outcome) == std::string(to_string(outcome)),
                  it->second.message);
    CHECK_MESSAGE(it->second.message.find(message_part) != std::string::npos,
                  "message: " << it->second.message << "\nexpected to contain: " << message_part);
    if (name != "?") CHECK(it->second.name == name);
}

} // namespace

TEST_CASE("every load outcome is reported with its reason, and the good plugins still load") {
    TempDir t;
    abi::Markers marks;
    lay_out(t);
    Runtime rt(config_for(t));
    const auto m = by_file(rt.load_report());

    expect(m, "libplexus-good.so", LoadOutcome::Loaded, "", "good");
    expect(m, "libplexus-twodevices.so", LoadOutcome::Loaded, "", "twodevices");
    expect(m, "libplexus-example.so", LoadOutcome::Loaded, "", "example");
    expect(m, "libplexus-named.so", LoadOutcome::Loaded, "", "named");
    expect(m, "libplexus-dup_a.so", LoadOutcome::Loaded, "", "dup");
    expect(m, "libplexus-dup_b.so", LoadOutcome::Duplicate,
           "already loaded from " + (t.path / "d1/libplexus-dup_a.so").string(), "dup");
    expect(m, "libplexus-init_fail.so", LoadOutcome::InitFailed,
           "PLX_ERROR_DEVICE: the fake widget is jammed", "broken");
    expect(m, "libplexus-init_silent.so", LoadOutcome::InitFailed,
           "PLX_ERROR_INTERNAL: (the plugin left no message)", "broken");
    expect(m, "libplexus-nodriver.so", LoadOutcome::MissingDependency,
           "libfakevendor.so.1 is not installed", "nodriver");
    expect(m, "libplexus-abi_status.so", LoadOutcome::AbiMismatch,
           "built for plugin ABI 2.3, this host speaks " + host_abi() + ": needs plugin ABI 2",
           "future");
    expect(m, "libplexus-abi_descriptor.so", LoadOutcome::AbiMismatch,
           "its descriptor says plugin ABI 2.3, this host speaks " + host_abi(), "future");
    expect(m, "libplexus-no_entry.so", LoadOutcome::NotAPlugin,
           "without the entry point plx_plugin_init", "");
    expect(m, "random.so", LoadOutcome::NotAPlugin, "not a loadable shared library", "");
    expect(m, "truncated.so", LoadOutcome::NotAPlugin, "not a loadable shared library", "");
    expect(m, "libplexus-nodevices.so", LoadOutcome::NoDevices, "no device", "nodevices");
    expect(m, "libplexus-dropoff.so", LoadOutcome::DisabledByConfig,
           "backends.dropoff.enabled is false in " + (t.path / "config.json").string(), "dropoff");
    // Disabled plugins were never opened, here or in a validation child: neither library is
    // mapped into this process.
    {
        std::ifstream maps("/proc/self/maps");
        const std::string mapped((std::istreambuf_iterator<char>(maps)),
                                 std::istreambuf_iterator<char>());
        CHECK(mapped.find("libplexus-good.so") != std::string::npos); // the check can see a plugin
        CHECK(mapped.find("libplexus-dropoff.so") == std::string::npos);
        CHECK(mapped.find("libplexus-mgood.so") == std::string::npos);
    }
    expect(m, "libplexus-needsdep.so", LoadOutcome::MissingDependency, "needs libplexus-fakedep.so",
           "");

    // Manifests: judged before the library is opened where they can be.
    expect(m, "libplexus-mgood.so", LoadOutcome::DisabledByConfig,
           "backends.mgood.enabled is false", "mgood");
    expect(m, "libplexus-futurelib.so", LoadOutcome::AbiMismatch,
           "declares plugin ABI 2.0, this host speaks " + host_abi(), "futurelib");
    expect(m, "libplexus-liar.so", LoadOutcome::InitFailed,
           "its manifest says the plugin is 'honest' but it calls itself 'liar'");
    expect(m, "libplexus-ghost.so", LoadOutcome::NotAPlugin,
           "names library " + (t.path / "d3/libplexus-ghost.so").string() +
               ", which does not exist",
           "ghost");
    expect(m, "broken.json", LoadOutcome::NotAPlugin, "not valid JSON");
    expect(m, "wrongformat.json", LoadOutcome::NotAPlugin,
           "'file_format_version' must be 1, found 2");
    CHECK(marks("mgood").empty());     // disabled by its manifest: never opened
    CHECK(marks("futurelib").empty()); // refused by its manifest: never opened

    // Contract breaches, each named.
    const std::pair<int, std::string> contract[] = {
        {1, "name \"\" must be non-empty lowercase"},
        {2, "'name' is not set"},
        {3, "'last_error' is not set"},
        {4, "'device_count' is not set"},
        {5, "'execution_model' is not set"},
        {6, "execution_model 42 is not PLX_EXEC_JIT"},
        {7, "'languages' is not set"},
        {8, "'module_load' is not set"},
        {9, "'launch_host' is not set"},
        {10, "too small to hold 'buffer_alloc'"},
        {11, "name \"Has Spaces\" must be"},
        {12, "abi_version is 0"},
        {13, "'module_load' is not set"},
    };
    for (const auto& [n, part] : contract) {
        const std::string file = "libplexus-contract" + std::to_string(n) + ".so";
        expect(m, file, LoadOutcome::InitFailed, "the descriptor breaks the plugin contract");
        expect(m, file, LoadOutcome::InitFailed, part);
    }

    // Nothing else was reported: README.txt and the .so.1 are not plugin files.
    CHECK(m.size() == 12 + 13 + 2 + 1 + 7 + 1);
    CHECK(m.count("README.txt") == 0);

    // Loaded plugins carry their devices, and backends() ranks them.
    const auto& good = m.at("libplexus-good.so");
    REQUIRE(good.devices.size() == 1);
    CHECK(good.devices[0].name == "Fake CPU 0");
    CHECK(good.devices[0].type == DeviceType::CPU);
    CHECK(good.devices[0].compute_units == 3);
    CHECK(good.devices[0].local_memory_bytes == 1024);
    CHECK(good.execution_model == "direct");
    CHECK(good.priority == 10);
    CHECK(m.at("libplexus-twodevices.so").devices.size() == 2);
    CHECK(m.at("libplexus-twodevices.so").devices[1].name == "Fake CPU 1");
    CHECK(m.at("libplexus-named.so").priority == 33); // the plugin's own word beats its manifest's
    std::vector<std::string> names;
    for (const Backend* b : rt.backends())
        names.push_back(b->name());
    CHECK(names == std::vector<std::string>{"named", "twodevices", "dup", "good", "example"});
    CHECK(rt.backends()[2]->vendor() == "first"); // the first directory won

    // The good plugin got its backends.good section as options, and a log function.
    CHECK(marks("good") == std::vector<std::string>{"init", R"(options {"options":{"x":1}})"});
    // A drop-in disabled by the config is never opened (its file name gives its name); a
    // plugin without devices is shut down at once.
    CHECK(marks("dropoff").empty());
    CHECK(marks("nodevices") == std::vector<std::string>{"init", "options {}", "shutdown"});
    // Every contract breaker of this major ABI is shut down again; one whose descriptor says
    // another major is not (its layout is unknown), and one whose init failed has nothing to
    // shut down.
    const auto contract_marks = marks("contract");
    CHECK(std::count(contract_marks.begin(), contract_marks.end(), "init") == 13);
    CHECK(std::count(contract_marks.begin(), contract_marks.end(), "shutdown") == 13);
    CHECK(marks("future_descriptor") == std::vector<std::string>{"init"});
    CHECK(marks("future_status") == std::vector<std::string>{"init"});
}

TEST_CASE("report order follows directories, then file names") {
    TempDir t;
    lay_out(t);
    Runtime rt(config_for(t));
    std::vector<std::pair<std::string, std::string>> seen; // (dir, file)
    for (const auto& e : rt.load_report()) {
        abi::fs::path p(e.path);
        seen.emplace_back(p.parent_path().filename().string(), p.filename().string());
    }
    REQUIRE(!seen.empty());
    for (size_t i = 1; i < seen.size(); ++i) {
        CAPTURE(seen[i].second);
        CHECK(seen[i - 1].first <= seen[i].first);
        if (seen[i - 1].first == seen[i].first && seen[i].first != "d3")
            CHECK(seen[i - 1].second < seen[i].second);
    }
}

TEST_CASE("a plugin is initialized once, shared by Runtimes, and shut down with the last") {
    TempDir t;
    abi::Markers marks;
    t.add("only", "good");
    const std::string cfg = R"({"plugin_dirs": ["only"]})";
    {
        auto first = std::make_unique<Runtime>(config_for(t, cfg));
        Runtime second(config_for(t, cfg));
        REQUIRE(first->backends().size() == 1);
        REQUIRE(second.backends().size() == 1);
        CHECK(&first->backends()[0]->api() == &second.backends()[0]->api());
        CHECK(marks("good") == std::vector<std::string>{"init", "options {}"});
        first.reset();
        CHECK(marks("good") == std::vector<std::string>{"init", "options {}"});
        CHECK(second.backends()[0]->devices().size() == 1);
    }
    CHECK(marks("good") == std::vector<std::string>{"init", "options {}", "shutdown"});
    // And a new Runtime loads it afresh.
    {
        Runtime again(config_for(t, cfg));
        CHECK(again.backends().size() == 1);
    }
    CHECK(marks("good") == std::vector<std::string>{"init", "options {}", "shutdown", "init",
                                                    "options {}", "shutdown"});
}

TEST_CASE("Runtimes made on several threads at once share one initialization") {
    TempDir t;
    abi::Markers marks;
    t.add("only", "good");
    const Config cfg = config_for(t, R"({"plugin_dirs": ["only"]})");
    for (int round = 0; round < 3; ++round) {
        std::vector<std::thread> threads;
        std::atomic<int> loaded{0};
        std::atomic<bool> go{false};
        std::vector<std::unique_ptr<Runtime>> runtimes(6);
        for (size_t i = 0; i < runtimes.size(); ++i)
            threads.emplace_back([&, i] {
                while (!go)
                    std::this_thread::yield();
                runtimes[i] = std::make_unique<Runtime>(cfg);
                loaded += static_cast<int>(runtimes[i]->backends().size());
            });
        go = true;
        for (auto& th : threads)
            th.join();
        CHECK(loaded == 6);
        // Released from several threads too.
        threads.clear();
        for (auto& rt : runtimes)
            threads.emplace_back([&rt] { rt.reset(); });
        for (auto& th : threads)
            th.join();
    }
    const auto lines = marks("good");
    CHECK(std::count(lines.begin(), lines.end(), "init") == 3);
    CHECK(std::count(lines.begin(), lines.end(), "shutdown") == 3);
    CHECK(lines.back() == "shutdown");
}

TEST_CASE("plugin inits run one after another in a process; the report keeps discovery order") {
    // Each fake's init fails if the other's runs meanwhile (fake_meet.c): two plugins may sit
    // on one vendor library, whose start-up need not be safe from two threads.
    TempDir t;
    abi::Markers marks;
    t.add("one", "meet_b");
    t.add("one", "meet_a");
    t.add("one", "good");
    Runtime rt(config_for(t, R"({"plugin_dirs": ["one"], "validate_plugins": "never"})"));
    const auto& report = rt.load_report();
    REQUIRE(report.size() == 3);
    std::vector<std::string> names;
    for (const auto& e : report) {
        names.push_back(e.name);
        CHECK_MESSAGE(e.outcome == LoadOutcome::Loaded, e.name << ": " << e.message);
    }
    CHECK(names == std::vector<std::string>{"good", "meet_a", "meet_b"});
    CHECK(rt.backends().size() == 3);
}

TEST_CASE("a launch that fails where the last one like it went falls back to the next backend") {
    TempDir t;
    abi::Markers marks;
    t.add("one", "limited");
    t.add("one", "good");
    Config c = config_for(t, R"({"plugin_dirs": ["one"], "validate_plugins": "never"})");
    c.fallback = true;
    Runtime rt(c);
    REQUIRE(rt.backends().size() == 2);
    static const auto fill =
        plexus::kernel("fill_index", {"out", "n"}, [](Out<int32_t> out, Int n) {
            Int i = global_id(0);
            If(i < n, [&] { out[i] = i * 3 + 1; });
        });
    auto run = [&](int n) {
        Buffer<int32_t> out(rt, size_t(n));
        Event e = rt.launch(fill, Grid(size_t(n)).local_size(64), out, n);
        e.wait();
        std::vector<int32_t> got = out.to_vector();
        size_t bad = 0;
        for (int i = 0; i < n; ++i)
            bad += got[size_t(i)] != i * 3 + 1;
        CHECK_MESSAGE(bad == 0, n << " work-items on " << e.backend());
        return e.backend();
    };
    CHECK(run(1000) == "limited");
    CHECK(run(2000) == "limited"); // the last launch's device, without routing
    CHECK(run(10000) == "good");   // it fails there: the ranking goes on to the next
    CHECK(run(3000) == "limited");
}

TEST_CASE("a plugin with a future ABI in its descriptor is never initialized twice") {
    TempDir t;
    abi::Markers marks;
    t.add("only", "abi_descriptor");
    const std::string cfg = R"({"plugin_dirs": ["only"]})";
    for (int i = 0; i < 2; ++i) {
        Runtime rt(config_for(t, cfg));
        REQUIRE(rt.load_report().size() == 1);
        CHECK(rt.load_report()[0].outcome == LoadOutcome::AbiMismatch);
    }
    CHECK(marks("future_descriptor") == std::vector<std::string>{"init"});
}

TEST_CASE("the missing dependency is the reason: with it in place the plugin loads") {
    TempDir t;
    t.add("d", "needsdep");
    const std::string cfg = R"({"plugin_dirs": ["d"]})";
    {
        Runtime rt(config_for(t, cfg));
        REQUIRE(rt.load_report().size() == 1);
        CHECK(rt.load_report()[0].outcome == LoadOutcome::MissingDependency);
        CHECK(rt.load_report()[0].message.find("libplexus-fakedep.so") != std::string::npos);
        CHECK(rt.backends().empty());
    }
    // The same file loads where its RUNPATH ($ORIGIN/dep) finds the dependency. (A new folder:
    // glibc remembers for the whole process that d/dep did not exist.)
    t.add("e", "needsdep");
    abi::fs::create_directories(t.path / "e/dep");
    abi::fs::copy_file(std::getenv("FAKE_DEP_LIBRARY"), t.path / "e/dep/libplexus-fakedep.so");
    Runtime rt(config_for(t, R"({"plugin_dirs": ["e"]})"));
    REQUIRE(rt.load_report().size() == 1);
    CHECK_MESSAGE(rt.load_report()[0].outcome == LoadOutcome::Loaded, rt.load_report()[0].message);
    REQUIRE(rt.backends().size() == 1);
    CHECK(rt.backends()[0]->priority() == 77); // the value came from the dependency
}

TEST_CASE("config: a disabled manifest plugin, a priority override, the env path switch") {
    TempDir t;
    abi::Markers marks;
    t.add("a", "good");
    t.add("b", "twodevices");
    Config c = config_for(t, R"({"plugin_dirs": ["a"], "backends": {"good": {"priority": 99}}})");
    const std::string b = (t.path / "b").string();
    setenv("PLEXUS_PLUGIN_PATH", ("/nonexistent:" + b).c_str(), 1);
    {
        Runtime without_env(c); // use_env_plugin_path is false
        REQUIRE(without_env.backends().size() == 1);
        CHECK(without_env.backends()[0]->priority() == 99);
        CHECK(without_env.backends()[0]->plugin_priority() == 10);
        CHECK(without_env.load_report()[0].priority == 99);
    }
    c.use_env_plugin_path = true;
    {
        Runtime with_env(c);
        REQUIRE(with_env.backends().size() == 2);
        CHECK(with_env.backends()[1]->name() == "twodevices");
    }
    unsetenv("PLEXUS_PLUGIN_PATH");
}

TEST_CASE("explain ranks the loaded backends' devices and says why") {
    TempDir t;
    t.add("a", "good");
    t.add("a", "twodevices");
    t.add("a", "example");
    Runtime rt(config_for(t, R"({"plugin_dirs": ["a"]})"));
    KernelNeeds k;
    auto all = rt.explain(k);
    REQUIRE(all.size() == 4);
    CHECK(all[0].backend == "twodevices");
    CHECK(all[0].device_index == 0);
    CHECK(all[1].backend == "twodevices");
    CHECK(all[1].device_index == 1);
    CHECK(all[2].backend == "good");
    CHECK(all[3].backend == "example");
    k.intrinsics = {"atomic_add_i32_global"};
    auto cs = rt.explain(k);
    REQUIRE(cs.size() == 4);
    CHECK(cs[0].backend == "example");
    CHECK(cs[0].kept);
    CHECK_FALSE(cs[1].kept);
    CHECK(cs[1].reason == "lacks intrinsic atomic_add_i32_global");
    k.intrinsics.clear();
    k.local_memory_bytes = 2048; // fakes have 1 KiB, the example 64 KiB
    cs = rt.explain(k);
    CHECK(cs[0].backend == "example");
    CHECK(cs[1].reason ==
          "the device lacks the local memory: the kernel needs 2048 bytes, the device has 1024");
}

TEST_CASE("no plugin directories: an empty report, no error") {
    TempDir t;
    Runtime rt(config_for(t, R"({"plugin_dirs": ["does-not-exist"]})"));
    CHECK(rt.load_report().empty());
    CHECK(rt.backends().empty());
    CHECK(rt.explain(KernelNeeds{}).empty());
}

// meson puts the fake dependency's folder on LD_LIBRARY_PATH (the plugin that needs it is a
// test dependency), which would hide the missing dependency; the dynamic loader reads the
// variable only at start, so restart without that folder.
int main(int argc, char** argv) {
    const char* dep = std::getenv("FAKE_DEP_LIBRARY");
    const char* ld = std::getenv("LD_LIBRARY_PATH");
    if (dep != nullptr && ld != nullptr) {
        const auto dep_dir = abi::fs::weakly_canonical(abi::fs::path(dep).parent_path());
        std::string kept;
        bool dropped = false;
        std::stringstream ss(ld);
        for (std::string dir; std::getline(ss, dir, ':');) {
            std::error_code ec;
            if (!dir.empty() && abi::fs::weakly_canonical(dir, ec) == dep_dir) {
                dropped = true;
                continue;
            }
            kept += (kept.empty() ? "" : ":") + dir;
        }
        if (dropped) {
            setenv("LD_LIBRARY_PATH", kept.c_str(), 1);
            execv("/proc/self/exe", argv);
            std::perror("execv /proc/self/exe");
            return 1;
        }
    }
    doctest::Context context(argc, argv);
    return context.run();
}
