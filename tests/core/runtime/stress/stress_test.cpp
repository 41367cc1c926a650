// Many host threads on the runtime at once: 8 threads, each creating buffers, transferring
// them, launching and reading back thousands of times, on one shared Runtime and on one
// Runtime per thread, on every CPU backend of this build tree; every element of every
// result is checked. Run under ThreadSanitizer (docs/testing.md) it is the race test of the
// executor, the buffers, the events and the plugin registry. PLEXUS_STRESS_SCALE multiplies
// the iterations (the sanitizer runs use less than 1).
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <atomic>
#include <cstdlib>
#include <random>
#include <thread>

#include "int_axpy.hpp"
#include "plexus/plexus.hpp"

namespace px = plexus;

namespace {

constexpr int kThreads = 8;

const auto& axpy() {
    return px::test::int_axpy();
}

int32_t host_axpy(int32_t a, int32_t s, int32_t b) {
    return px::test::host_int_axpy(a, s, b);
}
px::Config config() {
    return px::test::strict_build_tree_config();
}

double scale() {
    const char* s = std::getenv("PLEXUS_STRESS_SCALE");
    return s != nullptr ? std::atof(s) : 1.0;
}

struct Totals {
    std::atomic<long> launches{0}, buffers{0}, transfers{0}, checked{0}, wrong{0};
    std::atomic<int> errors{0};
    std::mutex mutex;
    std::string first_problem;
    void problem(const std::string& what) {
        std::lock_guard lock(mutex);
        if (first_problem.empty()) first_problem = what;
    }
};

// One thread's work on `rt`: each iteration makes three buffers, launches twice (the second
// reads the first's output where it is), sometimes rewrites an input from the host and
// launches again, and checks every element read back. `backends` are the targets to pick from.
void work(px::Runtime& rt, const std::vector<std::string>& backends, int iterations, int max_n,
          unsigned seed, Totals& totals) {
    std::mt19937 rng(seed);
    try {
        for (int it = 0; it < iterations; ++it) {
            const std::string& backend = backends[rng() % backends.size()];
            const int n = 1 + int(rng() % unsigned(max_n));
            const size_t count = size_t(n);
            const int32_t s = int32_t(rng() % 1000) - 500;
            std::vector<int32_t> a(count), b(count);
            for (size_t i = 0; i < count; ++i)
                a[i] = int32_t(rng()), b[i] = int32_t(rng());
            px::Buffer<int32_t> da(rt, a), db(rt, b), dc(rt, count), dd(rt, count);
            totals.buffers += 4;
            totals.transfers += 2;
            px::Event first =
                rt.launch(px::Target{backend}, axpy(), px::Grid(count), da, db, dc, s, n);
            // The second runs where the scheduler picks: it may move dc to another device.
            const std::string& second = backends[rng() % backends.size()];
            rt.launch(px::Target{second}, axpy(), px::Grid(count), dc, da, dd, 1, n);
            totals.launches += 2;
            if (rng() % 2 == 0) first.wait();
            if (rng() % 4 == 0) {
                for (int32_t& x : a)
                    x = int32_t(rng());
                da.write(a);
                ++totals.transfers;
                rt.launch(px::Target{backend}, axpy(), px::Grid(count), da, db, dc, s, n);
                rt.launch(px::Target{second}, axpy(), px::Grid(count), dc, da, dd, 1, n);
                totals.launches += 2;
            }
            std::vector<int32_t> got = dd.to_vector();
            ++totals.transfers;
            long wrong = 0;
            for (size_t i = 0; i < count; ++i)
                if (got[i] != host_axpy(host_axpy(a[i], s, b[i]), 1, a[i])) ++wrong;
            totals.checked += n;
            if (wrong != 0) {
                totals.wrong += wrong;
                totals.problem(std::to_string(wrong) + " wrong elements of " + std::to_string(n) +
                               " on " + backend + " then " + second);
            }
        }
    } catch (const std::exception& e) {
        ++totals.errors;
        totals.problem(e.what());
    }
}

std::vector<std::string> cpu_backends(const px::Runtime& rt) {
    std::vector<std::string> out;
    for (const px::Backend* b : rt.backends())
        if (b->name() == "native" || b->name() == "interp" || b->name() == "opencl")
            out.push_back(b->name());
    return out;
}

// Fewer and smaller problems on the interpreter, which checks every access.
int iterations_for(const std::string& backend) {
    return int((backend == "interp" ? 40 : 250) * scale()) + 1;
}
int max_n_for(const std::string& backend) {
    return backend == "interp" ? 300 : 5000;
}

void report(const std::string& what, Totals& t) {
    MESSAGE(what << ": " << t.launches.load() << " launches, " << t.buffers.load() << " buffers, "
                 << t.transfers.load() << " transfers, " << t.checked.load()
                 << " elements checked");
    CHECK_MESSAGE(t.errors == 0, t.first_problem);
    CHECK_MESSAGE(t.wrong == 0, t.first_problem);
    CHECK(t.checked > 0);
}

} // namespace

TEST_CASE("8 threads on one shared Runtime, each backend") {
    px::Runtime rt(config());
    const auto backends = cpu_backends(rt);
    REQUIRE(!backends.empty());
    for (const std::string& backend : backends) {
        Totals totals;
        std::vector<std::thread> threads;
        for (int t = 0; t < kThreads; ++t)
            threads.emplace_back(work, std::ref(rt), std::vector<std::string>{backend},
                                 iterations_for(backend), max_n_for(backend), 100u + unsigned(t),
                                 std::ref(totals));
        for (auto& th : threads)
            th.join();
        report("shared Runtime, " + backend, totals);
    }
}

TEST_CASE("8 threads on one shared Runtime, buffers moving between backends") {
    px::Runtime rt(config());
    auto backends = cpu_backends(rt);
    REQUIRE(!backends.empty());
    Totals totals;
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
        threads.emplace_back(work, std::ref(rt), backends, iterations_for("interp"),
                             max_n_for("interp"), 200u + unsigned(t), std::ref(totals));
    for (auto& th : threads)
        th.join();
    report("shared Runtime, mixed backends", totals);
}

TEST_CASE("8 threads, one Runtime each, each backend") {
    std::vector<std::string> backends;
    {
        px::Runtime probe(config());
        backends = cpu_backends(probe);
    }
    REQUIRE(!backends.empty());
    for (const std::string& backend : backends) {
        Totals totals;
        std::vector<std::thread> threads;
        for (int t = 0; t < kThreads; ++t)
            threads.emplace_back([&, t] {
                px::Runtime rt(config()); // made and destroyed on 8 threads at once, too
                work(rt, {backend}, iterations_for(backend), max_n_for(backend), 300u + unsigned(t),
                     totals);
            });
        for (auto& th : threads)
            th.join();
        report("one Runtime per thread, " + backend, totals);
    }
}
