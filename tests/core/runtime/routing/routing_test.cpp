// Routing by measured cost (config routing "measured", docs/routing.md) over two fake Direct
// backends whose launch and transfer times the test sets (fake_timed.c): measured routing
// leaves the higher priority for the faster device and keeps it when it is the faster, counts
// the bytes a launch would move and their time, never moves a pinned launch, and a second
// Runtime over the same cache directory times nothing. Every launch's result is checked, every
// element, against the host (c = a + b: exact in floats).
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include "core/runtime/launch/launch_fixture.hpp"
#include "plexus/plexus.hpp"
#include "problem_util.hpp"
#include "router/history.hpp"

#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <random>

namespace px = plexus;
using namespace plexus;

namespace {

// The launches that explore one candidate: the warm-up, then those kept.
constexpr uint32_t kExplore = kRouteWarmups + kRouteSamples;

using launch_test::add_kernel; // c = a + b, n

// slowfake ranks first (priority 90); each fake sleeps `*_launch_us` per launch and
// `*_write_us` per write from the host.
Config config(long slow_launch_us, long quick_launch_us, const std::string& cache_dir = "",
              long quick_write_us = 0, Routing routing = Routing::Measured) {
    Config c = launch_test::fake_config(); // this folder's fakes alone, no validation
    c.fallback = true;
    c.cache_dir = cache_dir;
    c.routing = routing;
    // Through the parser, as a configuration file would: the priorities and the sections the
    // plugins read their options from.
    const nlohmann::json backends = {
        {"slowfake", {{"priority", 90}, {"options", {{"launch_us", slow_launch_us}}}}},
        {"quickfake",
         {{"priority", 10},
          {"options", {{"launch_us", quick_launch_us}, {"write_us", quick_write_us}}}}}};
    c.backends =
        Config::parse(nlohmann::json{{"backends", backends}}.dump(), "routing_test").backends;
    return c;
}

// a, b and c of n floats, a and b random.
struct Problem {
    size_t n;
    std::vector<float> a, b;
    px::Buffer<float> da, db, dc;
    Problem(Runtime& rt, size_t n_, unsigned seed) : Problem(rt, n_, std::mt19937(seed)) {}
    Problem(Runtime& rt, size_t n_, std::mt19937&& g)
        : n(n_), a(px::samples::random_floats(n_, g)), b(px::samples::random_floats(n_, g)),
          da(rt, a), db(rt, b), dc(rt, n_) {}
    Event launch(Runtime& rt, const Target& target = {}) {
        return rt.launch(target, add_kernel(), px::Grid(n), da, db, dc, int(n));
    }
    // Every element of c against the host's a + b.
    void check() const {
        const std::vector<float> c = dc.to_vector();
        size_t bad = 0;
        for (size_t i = 0; i < n; ++i)
            bad += c[i] != a[i] + b[i];
        CHECK(bad == 0);
    }
};

const RoutePrediction& prediction(const RoutingDecision& d, const std::string& backend) {
    for (const RoutePrediction& p : d.candidates)
        if (p.backend == backend) return p;
    FAIL("no prediction for " << backend);
    static RoutePrediction none;
    return none;
}

struct TempDir {
    std::string path;
    TempDir() {
        std::string t = (std::filesystem::temp_directory_path() / "plexus-routing-XXXXXX").string();
        REQUIRE(mkdtemp(t.data()) != nullptr);
        path = t;
    }
    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
    }
};

// Launches the problem `launches` times, each checked; returns the backends they went to.
std::vector<std::string> run(Runtime& rt, Problem& p, int launches) {
    std::vector<std::string> went;
    for (int i = 0; i < launches; ++i) {
        Event e = p.launch(rt);
        e.wait();
        went.push_back(e.backend());
        p.check();
    }
    return went;
}

} // namespace

TEST_CASE("priority routing takes the higher priority, whatever it costs") {
    Runtime rt(config(20000, 0, "", 0, Routing::Priority));
    REQUIRE(rt.backends().size() == 2);
    Problem p(rt, 1000, 1);
    for (const std::string& b : run(rt, p, 4))
        CHECK(b == "slowfake");
    CHECK(rt.routing_launches() == 0);
    CHECK(rt.routing_decisions().empty());
}

TEST_CASE("measured routing times each device, then takes the faster") {
    Runtime rt(config(20000, 0));
    Problem p(rt, 1000, 2);
    const std::vector<std::string> went = run(rt, p, 10);
    // The ranking's order while exploring: slowfake's timed launches (a warm-up, then those
    // kept), then quickfake's.
    for (size_t i = 0; i < went.size(); ++i)
        CHECK(went[i] == (i < kExplore ? "slowfake" : "quickfake"));
    CHECK(rt.routing_launches() == 2 * kExplore);
    const std::vector<RoutingDecision> ds = rt.routing_decisions();
    REQUIRE(ds.size() == 1);
    const RoutingDecision& d = ds[0];
    CHECK(d.kernel == "add");
    CHECK(d.backend == "quickfake");
    CHECK(d.source == "measured");
    CHECK(d.launches == 10);
    CHECK(d.bucket == LaunchBucket{10, 14}); // 1000 items; 12000 bytes
    const RoutePrediction& slow = prediction(d, "slowfake");
    const RoutePrediction& quick = prediction(d, "quickfake");
    CHECK(slow.samples == kRouteSamples);
    CHECK(quick.samples == kRouteSamples);
    CHECK(slow.kernel_seconds >= 0.020);
    CHECK(quick.kernel_seconds < slow.kernel_seconds);
}

TEST_CASE("measured routing keeps the higher priority when it is the faster") {
    Runtime rt(config(0, 20000));
    Problem p(rt, 1000, 3);
    const std::vector<std::string> went = run(rt, p, 11);
    for (size_t i = 2 * kExplore; i < went.size(); ++i)
        CHECK(went[i] == "slowfake");
    REQUIRE(rt.routing_decisions().size() == 1);
    CHECK(rt.routing_decisions()[0].backend == "slowfake");
}

TEST_CASE("a launch pinned to a backend is never moved or timed") {
    Runtime rt(config(20000, 0));
    Problem p(rt, 1000, 4);
    for (int i = 0; i < 8; ++i) {
        Event e = p.launch(rt, Target{"slowfake"});
        e.wait();
        CHECK(e.backend() == "slowfake");
        p.check();
    }
    px::Queue q = rt.queue(Target{"slowfake"});
    for (int i = 0; i < 2; ++i) {
        Event e = q.launch(add_kernel(), px::Grid(p.n), p.da, p.db, p.dc, int(p.n));
        e.wait();
        CHECK(e.backend() == "slowfake");
        p.check();
    }
    CHECK(rt.routing_launches() == 0);
    CHECK(rt.routing_decisions().empty());
}

TEST_CASE("the bytes a launch would move count, at the link's measured bandwidth") {
    // quickfake runs the kernel at once but writes from the host slowly (50 ms a write):
    // with its buffers in place it wins, with new data on the host the slower kernel (0.5 ms)
    // nearer the data does, even with the move weighed over the 10 launches so far.
    Runtime rt(config(500, 0, "", 50000));
    const size_t n = 16384; // 64 KiB a buffer
    Problem p(rt, n, 5);
    run(rt, p, int(2 * kExplore) + 1);
    std::vector<RoutingDecision> ds = rt.routing_decisions();
    REQUIRE(ds.size() == 1);
    CHECK(ds[0].backend == "quickfake");
    CHECK(prediction(ds[0], "quickfake").moved_bytes == 0);

    // New a on the host: quickfake would move a (64 KiB at its slow link); slowfake a and the c
    // that quickfake wrote.
    std::mt19937 g(6);
    p.a = px::samples::random_floats(n, g);
    p.da.write(p.a);
    Event e = p.launch(rt);
    e.wait();
    p.check();
    CHECK(e.backend() == "slowfake");
    ds = rt.routing_decisions();
    REQUIRE(ds.size() == 1);
    const RoutePrediction& quick = prediction(ds[0], "quickfake");
    const RoutePrediction& slow = prediction(ds[0], "slowfake");
    CHECK(quick.moved_bytes == n * sizeof(float));
    CHECK(slow.moved_bytes == 2 * n * sizeof(float));
    // 64 KiB at about 5 MB/s (256 KiB written in 50 ms at calibration), over 10 launches.
    CHECK(quick.transfer_seconds > 0.010);
    CHECK(ds[0].launches == 2 * kExplore + 2);
    CHECK(quick.predicted_seconds ==
          doctest::Approx(quick.kernel_seconds + quick.transfer_seconds / ds[0].launches));
    CHECK(quick.predicted_seconds > slow.predicted_seconds);
}

TEST_CASE("a second Runtime over the same cache directory predicts at once") {
    TempDir dir;
    {
        Runtime rt(config(20000, 0, dir.path));
        Problem p(rt, 1000, 7);
        run(rt, p, int(2 * kExplore));
        CHECK(rt.routing_launches() == 2 * kExplore);
    }
    const std::vector<RouteRecord> stored = stored_routes(dir.path);
    REQUIRE(stored.size() == 2);
    for (const RouteRecord& r : stored) {
        CHECK(r.kernel == "add");
        CHECK(r.kernel_hash == add_kernel().ir().hash());
        CHECK(r.seconds.size() == kRouteSamples);
        CHECK(r.bucket == LaunchBucket{10, 14});
    }
    Runtime rt(config(20000, 0, dir.path));
    Problem p(rt, 1000, 8);
    for (const std::string& b : run(rt, p, 3))
        CHECK(b == "quickfake");
    CHECK(rt.routing_launches() == 0);
    REQUIRE(rt.routing_decisions().size() == 1);
    CHECK(rt.routing_decisions()[0].source == "measured");
}

TEST_CASE("a launch only one device can take is not timed") {
    Config c = config(20000, 0);
    c.backends["quickfake"].enabled = false;
    Runtime rt(c);
    Problem p(rt, 1000, 9);
    for (const std::string& b : run(rt, p, 4))
        CHECK(b == "slowfake");
    CHECK(rt.routing_launches() == 0);
}

TEST_CASE("a kernel family goes to the device where its best variant is fastest") {
    using Add = px::Family<px::In<float>, px::In<float>, px::Out<float>, px::Int>;
    Add family = px::family(
        "add_family", {"a", "b", "c", "n"},
        [](const px::Tuning& v, px::In<float> a, px::In<float> b, px::Out<float> c, px::Int n) {
            const int per = int(v["per"]);
            px::Int i0 = px::global_id(0) * per;
            for (int j = 0; j < per; ++j)
                px::If(i0 + j < n, [&] { c[i0 + j] = a[i0 + j] + b[i0 + j]; });
        });
    family.tune("per", {1, 2});
    family.grid([](const px::Tuning& v, const px::FamilyContext& c) {
        return px::Grid((uint64_t(c.shape.at(0)) + v["per"] - 1) / v["per"]);
    });
    for (const bool tuning : {true, false}) {
        CAPTURE(tuning);
        Config c = config(20000, 0);
        c.tuning = tuning;
        Runtime rt(c);
        Problem p(rt, 1000, 10);
        Event e = rt.launch(family, px::Shape{1000}, p.da, p.db, p.dc, 1000);
        e.wait();
        CHECK(e.backend() == "quickfake");
        p.check();
        const std::vector<TuningReport> reports = rt.tuning_reports();
        REQUIRE(reports.size() == 1);
        CHECK(reports[0].backend == "quickfake");
        REQUIRE(reports[0].routes.size() == 2);
        CHECK(reports[0].routes[0].backend == "slowfake");
        CHECK(reports[0].routes[0].kernel_seconds >= 0.020);
        CHECK(reports[0].routes[1].kernel_seconds < reports[0].routes[0].kernel_seconds);
    }
}

TEST_CASE("a candidate below priority 0 is a last resort, never timed") {
    Config c = config(0, 20000);
    c.backends["slowfake"].priority = -10;
    Runtime rt(c);
    Problem p(rt, 1000, 11);
    for (const std::string& b : run(rt, p, 4))
        CHECK(b == "quickfake");
    CHECK(rt.routing_launches() == 0);
}

TEST_CASE("choose_route: explore in order, settle the slow after one launch, then the least") {
    using detail::choose_route;
    auto p = [](uint32_t samples, double kernel, double transfer = 0) {
        RoutePrediction r;
        r.samples = samples;
        r.kernel_seconds = r.fastest_seconds = r.slowest_seconds = kernel;
        r.transfer_seconds = transfer;
        return r;
    };
    bool exploring = false;
    auto choose = [&](std::vector<RoutePrediction> c, uint64_t launch = 1) {
        return choose_route(c, launch, exploring);
    };
    CHECK(choose({p(0, 0), p(0, 0)}) == 0);
    CHECK(exploring);
    CHECK(choose({p(3, 2.0), p(1, 1.0)}) == 1);
    CHECK(exploring);
    // One launch 5 times the fastest: settled; the choice is by prediction.
    CHECK(choose({p(3, 1.0), p(1, 5.0)}) == 0);
    CHECK(!exploring);
    // Within 4 times: timed again.
    CHECK(choose({p(3, 1.0), p(1, 3.0)}) == 1);
    CHECK(exploring);
    // Transfers count, less at each launch of the kernel; a tie keeps the earlier.
    CHECK(choose({p(3, 1.0, 0.5), p(3, 1.2)}) == 1);
    CHECK(!exploring);
    CHECK(choose({p(3, 1.0, 0.5), p(3, 1.2)}, 3) == 0);
    // A tie is a close call: timed on until both have kRouteCloseSamples, then the earlier.
    CHECK(choose({p(3, 1.0), p(3, 1.0)}) == 0);
    CHECK(exploring);
    CHECK(choose({p(kRouteCloseSamples, 1.0), p(kRouteCloseSamples, 1.0)}) == 0);
    CHECK(!exploring);
    std::vector<RoutePrediction> c = {p(3, 1.0, 0.5), p(3, 1.2)};
    choose_route(c, 2, exploring);
    CHECK(c[0].predicted_seconds == 1.25);
    CHECK(c[1].predicted_seconds == 1.2);
    // Close calls: ranges that overlap, transfers included.
    auto ranged = [&](uint32_t samples, double lo, double mid, double hi, double transfer = 0) {
        RoutePrediction r = p(samples, mid, transfer);
        r.fastest_seconds = lo;
        r.slowest_seconds = hi;
        return r;
    };
    // Apart: the smaller prediction, nothing more to time.
    CHECK(choose({ranged(3, 1.8, 2.0, 2.2), ranged(3, 0.9, 1.0, 1.1)}) == 1);
    CHECK(!exploring);
    // Overlapping: the earlier of the two until it has kRouteCloseSamples, then the other.
    CHECK(choose({ranged(3, 0.9, 1.2, 1.4), ranged(3, 0.8, 1.0, 1.3)}) == 0);
    CHECK(exploring);
    CHECK(choose({ranged(7, 0.9, 1.2, 1.4), ranged(3, 0.8, 1.0, 1.3)}) == 0);
    CHECK(exploring);
    CHECK(choose({ranged(kRouteCloseSamples, 0.9, 1.2, 1.4), ranged(5, 0.8, 1.0, 1.3)}) == 1);
    CHECK(exploring);
    CHECK(choose({ranged(3, 0.8, 1.0, 1.3), ranged(kRouteCloseSamples, 0.9, 1.2, 1.4)}) == 0);
    CHECK(exploring);
    CHECK(choose({ranged(kRouteCloseSamples, 0.9, 1.2, 1.4),
                  ranged(kRouteCloseSamples, 0.8, 1.0, 1.3)}) == 1);
    CHECK(!exploring);
    // A third candidate apart from both changes nothing; one settled as slow is not timed.
    CHECK(choose({ranged(3, 5, 6, 7), ranged(3, 0.9, 1.2, 1.4), ranged(3, 0.8, 1.0, 1.3)}) == 1);
    CHECK(choose({ranged(1, 5, 5, 5), ranged(kRouteCloseSamples, 0.8, 1.0, 1.3)}) == 1);
    CHECK(!exploring);
    // A candidate settled as slow that the other's transfer makes the best is not timed on.
    CHECK(choose({ranged(1, 5, 5, 5), ranged(3, 0.5, 1.2, 1.3, 3.9)}) == 0);
    CHECK(!exploring);
    // The transfer's share moves a range: apart at the first launch, close at the tenth.
    CHECK(choose({ranged(3, 0.9, 1.0, 1.1, 1.0), ranged(3, 1.2, 1.3, 1.4)}, 1) == 1);
    CHECK(!exploring);
    CHECK(choose({ranged(3, 0.9, 1.0, 1.1, 1.0), ranged(3, 1.2, 1.3, 1.4)}, 10) == 0);
    CHECK(exploring);
    CHECK(detail::median({3, 1, 2}) == 2);
    CHECK(detail::median({4, 1, 2, 3}) == 2.5);
    CHECK(detail::median({}) == 0);
    CHECK(detail::launch_bucket(1000, 12000) == LaunchBucket{10, 14});
    CHECK(detail::launch_bucket(1024, 16384) == LaunchBucket{11, 15});
}
