// Out-of-process validation: plugins that crash, abort, hang, exit or leave a crashing thread
// in their init are reported and never loaded, the others load and run, and verdicts are
// cached (in this process and on disk) so that a second load starts no child.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <signal.h>
#include <sys/stat.h>

#include <chrono>
#include <map>

#include "abi_fixture.hpp"
#include "isolation/validator.hpp"
#include "plexus/plexus.hpp"

using namespace plexus;
using abi::TempDir;
using Clock = std::chrono::steady_clock;

namespace {

constexpr unsigned kLimitMs = 2000;

// The slack allowed above the time limit: a second, times PLEXUS_TEST_TIME_SCALE where a
// sanitizer build starts processes several times slower (tests/sanitize.sh sets it).
double slack_ms() {
    const char* scale = std::getenv("PLEXUS_TEST_TIME_SCALE");
    return 1000.0 * (scale != nullptr ? std::atof(scale) : 1.0);
}

Config config_in(const TempDir& t, const std::string& cache_dir, const std::string& extra = "") {
    Config c = Config::parse(R"({"plugin_dirs": ["p"], "plugin_init_timeout_ms": )" +
                                 std::to_string(kLimitMs) + extra + "}",
                             (t.path / "config.json").string());
    c.use_env_plugin_path = false;
    c.use_install_dir = false;
    c.cache_dir = cache_dir;
    return c;
}

std::map<std::string, LoadReportEntry> by_name(const Runtime& rt) {
    std::map<std::string, LoadReportEntry> m;
    for (const auto& e : rt.load_report())
        m[abi::fs::path(e.path).stem().string().substr(10)] = e;
    return m;
}

double ms_since(Clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

void check_outcome(const std::map<std::string, LoadReportEntry>& m, const std::string& file,
                   LoadOutcome outcome, std::initializer_list<const char*> parts) {
    CAPTURE(file);
    REQUIRE(m.count(file) == 1);
    const LoadReportEntry& e = m.at(file);
    CHECK_MESSAGE(e.outcome == outcome, to_string(e.outcome) << ": " << e.message);
    for (const char* part : parts)
        CHECK_MESSAGE(e.message.find(part) != std::string::npos,
                      e.message << "\nlacks: " << std::string(part));
    CHECK_MESSAGE(e.message.find(e.path) == std::string::npos,
                  "the path is the entry's, not repeated: " << e.message);
}

const auto& vadd() {
    static const auto k = kernel("isolation_vadd", {"a", "b", "c", "n"},
                                 [](In<float> a, In<float> b, Out<float> c, Int n) {
                                     Int i = global_id(0);
                                     If(i < n, [&] { c[i] = a[i] + b[i]; });
                                 });
    return k;
}

abi::fs::path verdict_dir(const TempDir& t) {
    return t.path / "cache" / "plugin-verdicts";
}

std::vector<abi::fs::path> verdict_files(const TempDir& t) {
    std::vector<abi::fs::path> out;
    for (const auto& e : abi::fs::directory_iterator(verdict_dir(t)))
        out.push_back(e.path());
    return out;
}

} // namespace

TEST_CASE("plugins that crash, abort, hang or exit in init are reported; the others load and run") {
    TempDir t;
    abi::Markers marks;
    for (const char* p : {"good", "example", "segv", "abort", "loop", "exit0", "thread_crash"})
        t.add("p", p);
    t.add("p", "loop", "loop2"); // two hangs cost one time limit: the children run at once

    const auto t0 = Clock::now();
    Runtime rt(config_in(t, ""));
    const double load_ms = ms_since(t0);
    MESSAGE("a Runtime with 8 plugins, two of which hang, was ready in " << load_ms << " ms (limit "
                                                                         << kLimitMs << " ms)");
    CHECK(load_ms < kLimitMs + slack_ms());

    const auto m = by_name(rt);
    check_outcome(m, "segv", LoadOutcome::Crashed,
                  {"crashed with SIGSEGV (segmentation fault) in plx_plugin_init, in a validation "
                   "child process",
                   "it was not loaded", "fake segv: about to misbehave",
                   "Fix or remove the file: plexus validates it again when it changes",
                   "`plexus doctor`"});
    CHECK(m.at("segv").signal == SIGSEGV);
    check_outcome(m, "abort", LoadOutcome::Crashed, {"crashed with SIGABRT", "in plx_plugin_init"});
    CHECK(m.at("abort").signal == SIGABRT);
    check_outcome(m, "loop", LoadOutcome::TimedOut,
                  {"did not finish in plx_plugin_init within 2000 ms (plugin_init_timeout_ms)",
                   "which was killed", "raise plugin_init_timeout_ms"});
    check_outcome(m, "loop2", LoadOutcome::TimedOut, {"within 2000 ms"});
    check_outcome(m, "exit0", LoadOutcome::Crashed,
                  {"ended the process with exit status 0 in plx_plugin_init", "never exit"});
    CHECK(m.at("exit0").signal == 0);
    check_outcome(m, "thread_crash", LoadOutcome::Crashed,
                  {"crashed with SIGSEGV (segmentation fault) in code it left running, within 200 "
                   "ms after plx_plugin_init "
                   "returned"});
    CHECK(m.at("thread_crash").name == "thread_crash"); // said before its thread crashed
    check_outcome(m, "good", LoadOutcome::Loaded, {});
    check_outcome(m, "example", LoadOutcome::Loaded, {});

    // None of them ran in this process; each ran once in a child.
    for (const char* p : {"segv", "abort", "loop", "exit0", "thread_crash"}) {
        CAPTURE(p);
        CHECK(marks(p).empty());
        CHECK(marks.child_inits(p) >= 1);
    }
    CHECK(marks.child_inits("loop") == 2); // loop and loop2
    CHECK(marks("good") == std::vector<std::string>{"init", "options {}"});

    // The plugins that passed work.
    std::vector<float> a(1000, 1.5f), b(1000, 2.25f);
    Buffer<float> da(rt, a), db(rt, b), dc(rt, a.size());
    rt.launch(Target{"example", 0}, vadd(), Grid(a.size()), da, db, dc, int(a.size())).wait();
    std::vector<float> c = dc.to_vector();
    CHECK(std::count(c.begin(), c.end(), 3.75f) == 1000);
}

TEST_CASE(
    "verdicts: a second load starts no child; a changed or corrupt entry is validated again") {
    TempDir t;
    abi::Markers marks;
    const abi::fs::path good = t.add("p", "good");
    t.add("p", "segv");
    const std::string cache = (t.path / "cache").string();

    auto t0 = Clock::now();
    {
        Runtime rt(config_in(t, cache));
    }
    const double first_ms = ms_since(t0);
    CHECK(marks.child_inits("good") == 1);
    CHECK(marks.child_inits("segv") == 1);
    REQUIRE(verdict_files(t).size() == 2);

    // In this process: remembered.
    {
        Runtime rt(config_in(t, cache));
    }
    CHECK(marks.child_inits("good") == 1);

    // A new process knows only the verdict cache; forgetting this process's verdicts is that.
    detail::forget_validations();
    t0 = Clock::now();
    {
        Runtime rt(config_in(t, cache));
        CHECK(by_name(rt).at("segv").outcome ==
              LoadOutcome::Crashed); // a crash verdict is kept too
        CHECK(by_name(rt).at("good").outcome == LoadOutcome::Loaded);
    }
    const double second_ms = ms_since(t0);
    CHECK(marks.child_inits("good") == 1);
    CHECK(marks.child_inits("segv") == 1);
    MESSAGE("load with validation children: "
            << first_ms << " ms; from the verdict cache, no child: " << second_ms
            << " ms (both include the in-process init of 'good')");

    SUBCASE("a touched file is validated again") {
        abi::fs::last_write_time(good, abi::fs::last_write_time(good) + std::chrono::seconds(5));
        detail::forget_validations();
        {
            Runtime rt(config_in(t, cache));
        }
        CHECK(marks.child_inits("good") == 2);
    }
    SUBCASE("new content under the same size and time is validated again") {
        const auto when = abi::fs::last_write_time(good);
        std::string bytes = abi::read_file(good);
        const size_t comment = bytes.find("GCC: ("); // the .comment section, never loaded
        REQUIRE(comment != std::string::npos);
        bytes[comment] = 'g';
        abi::write_file(good, bytes);
        abi::fs::last_write_time(good, when);
        detail::forget_validations();
        {
            Runtime rt(config_in(t, cache));
        }
        CHECK(marks.child_inits("good") == 2);
    }
    SUBCASE("a corrupt verdict file is ignored and rewritten") {
        for (const auto& f : verdict_files(t))
            abi::write_file(f, "{\"format\": \"plexus-plugin-verdict/1\", \"res");
        detail::forget_validations();
        {
            Runtime rt(config_in(t, cache));
            CHECK(by_name(rt).at("segv").outcome == LoadOutcome::Crashed);
        }
        CHECK(marks.child_inits("good") == 2);
        CHECK(marks.child_inits("segv") == 2);
        for (const auto& f : verdict_files(t))
            CHECK(abi::read_file(f).find("\"result\": \"") != std::string::npos);
        detail::forget_validations();
        {
            Runtime rt(config_in(t, cache));
        }
        CHECK(marks.child_inits("good") == 2); // the rewritten files are used
    }
    SUBCASE("a verdict file others may write is not trusted") {
        for (const auto& f : verdict_files(t))
            abi::fs::permissions(f, abi::fs::perms::others_write, abi::fs::perm_options::add);
        detail::forget_validations();
        {
            Runtime rt(config_in(t, cache));
        }
        CHECK(marks.child_inits("good") == 2);
        for (const auto& f : verdict_files(t))
            CHECK((abi::fs::status(f).permissions() & abi::fs::perms::others_write) ==
                  abi::fs::perms::none);
    }
    SUBCASE("a verdict folder others may write is not used at all") {
        abi::fs::permissions(verdict_dir(t), abi::fs::perms::others_write,
                             abi::fs::perm_options::add);
        for (int round = 0; round < 2; ++round) {
            detail::forget_validations();
            {
                Runtime rt(config_in(t, cache));
            }
        }
        CHECK(marks.child_inits("good") == 3);
    }
    SUBCASE("other options are another verdict") {
        detail::forget_validations();
        {
            Runtime rt(config_in(t, cache, R"(, "backends": {"good": {"options": {"x": 2}}})"));
        }
        CHECK(marks.child_inits("good") == 2);
        CHECK(verdict_files(t).size() == 3);
    }
}

TEST_CASE("validate_plugins: never runs no child, always runs one at every load") {
    TempDir t;
    abi::Markers marks;
    t.add("p", "good");
    const std::string cache = (t.path / "cache").string();
    {
        Runtime rt(config_in(t, cache, R"(, "validate_plugins": "never")"));
    }
    CHECK(marks.child_inits("good") == 0);
    CHECK(marks("good") == std::vector<std::string>{"init", "options {}", "shutdown"});
    for (int i = 0; i < 2; ++i) {
        Runtime rt(config_in(t, cache, R"(, "validate_plugins": "always")"));
        CHECK(rt.backends().size() == 1);
    }
    CHECK(marks.child_inits("good") == 2);
    // A plugin already open in this process is not validated again, even with "always".
    Runtime first(config_in(t, cache, R"(, "validate_plugins": "never")"));
    Runtime second(config_in(t, cache, R"(, "validate_plugins": "always")"));
    CHECK(marks.child_inits("good") == 2);
}

TEST_CASE("a hung plugin costs the time limit once: its verdict is cached") {
    TempDir t;
    t.add("p", "loop");
    const std::string cache = (t.path / "cache").string();
    {
        Runtime rt(config_in(t, cache));
    }
    detail::forget_validations();
    const auto t0 = Clock::now();
    Runtime rt(config_in(t, cache));
    CHECK(ms_since(t0) < kLimitMs / 2);
    REQUIRE(rt.load_report().size() == 1);
    CHECK(rt.load_report()[0].outcome == LoadOutcome::TimedOut);
}
