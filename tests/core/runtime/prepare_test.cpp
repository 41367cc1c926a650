// Runtime::prepare: kernels compiled ahead of their launches on a bounded pool, on every device
// of this build tree. Each kernel compiles once per device however many threads ask for it at
// once, a launch of a prepared kernel gives the same results as one that compiles itself, and
// failures reach both wait() and the launch.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include "every_device.hpp"
#include "plexus/plexus.hpp"

#include <doctest/doctest.h>

#include <random>
#include <thread>

namespace px = plexus;
using namespace plexus;
using plexus::test::every_device;

namespace {

// Kernels distinct by a constant, so that each is its own compile: c[i] = a[i] * s + k.
std::shared_ptr<const px::Kernel<px::In<float>, px::Out<float>, px::Int>> scaled(int k) {
    return std::make_shared<px::Kernel<px::In<float>, px::Out<float>, px::Int>>(
        px::kernel("scaled_" + std::to_string(k), {"a", "c", "n"},
                   [k](px::In<float> a, px::Out<float> c, px::Int n) {
                       px::Int i = px::global_id(0);
                       px::If(i < n, [&] { c[i] = a[i] * 3.0f + float(k); });
                   }));
}

// Runs kernel k on the target and checks every element against the host.
void run_and_check(Runtime& rt, const Target& t, int k,
                   const px::Kernel<px::In<float>, px::Out<float>, px::Int>& kernel) {
    const int n = 1000 + 37 * k;
    std::mt19937 rng(static_cast<unsigned>(k));
    std::uniform_real_distribution<float> dist(-10.0f, 10.0f);
    std::vector<float> a(static_cast<size_t>(n)), c;
    for (float& x : a)
        x = dist(rng);
    px::Buffer<float> da(rt, a), dc(rt, size_t(n));
    rt.launch(t, kernel, Grid(size_t(n)), da, dc, n).wait();
    c = dc.to_vector();
    for (int i = 0; i < n; ++i)
        REQUIRE_MESSAGE(c[size_t(i)] == a[size_t(i)] * 3.0f + float(k),
                        "kernel " << k << " element " << i);
}

// The compile reports of the kernel on the device (each test's Runtime compiles for one).
size_t reports_of(const Runtime& rt, const std::string& kernel, const test::TestDevice& d) {
    size_t n = 0;
    for (const CompileReport& r : rt.compile_reports())
        n += r.kernel == kernel && r.backend == d.target.backend && r.device == d.info->name;
    return n;
}

Config config_with_threads(unsigned threads) {
    Config c = test::hermetic_config();
    c.compile_threads = threads;
    return c;
}

} // namespace

TEST_CASE("prepared kernels run correctly and compile once per device") {
    std::vector<std::shared_ptr<const px::Kernel<px::In<float>, px::Out<float>, px::Int>>> ks;
    for (int k = 0; k < 6; ++k)
        ks.push_back(scaled(k));
    for (const auto& d : every_device()) {
        CAPTURE(d.label);
        Runtime rt(config_with_threads(2)); // its reports are this device's alone
        std::vector<std::shared_ptr<const ir::Kernel>> irs;
        for (const auto& k : ks)
            irs.push_back(k->ir_ptr());
        Prepared p = rt.prepare(irs, d.target);
        CHECK(p.size() == ks.size());
        // Launch while the pool may still be compiling: a launch waits for its own kernel.
        for (int k = 5; k >= 0; --k)
            run_and_check(rt, d.target, k, *ks[size_t(k)]);
        p.wait();
        CHECK(p.ready());
        for (int k = 0; k < 6; ++k)
            CHECK(reports_of(rt, "scaled_" + std::to_string(k), d) == 1);
    }
}

TEST_CASE("threads launching one kernel at once compile it once") {
    for (const auto& d : every_device()) {
        CAPTURE(d.label);
        Runtime rt(config_with_threads(4));
        auto k = scaled(100);
        Prepared p = rt.prepare(d.target, *k); // the pool and four launches race for it
        std::vector<std::thread> threads;
        std::atomic<int> failures{0};
        for (int t = 0; t < 4; ++t)
            threads.emplace_back([&] {
                try {
                    run_and_check(rt, d.target, 100, *k);
                } catch (...) {
                    ++failures;
                }
            });
        for (auto& t : threads)
            t.join();
        p.wait();
        CHECK(failures == 0);
        CHECK(reports_of(rt, "scaled_100", d) == 1);
    }
}

TEST_CASE("a kernel no device takes: wait() and the launch report the router's reasons") {
    Runtime rt(config_with_threads(1));
    auto k = scaled(7);
    Prepared p = rt.prepare(Target{"no_such_backend", 0}, *k);
    CHECK(p.ready());
    try {
        p.wait();
        FAIL("wait() did not throw");
    } catch (const Error& e) {
        CHECK(e.code() == ErrorCode::NoBackend);
        CHECK(std::string(e.what()).find("requested backend 'no_such_backend'") !=
              std::string::npos);
    }
    Prepared none = rt.prepare({}, Target{});
    CHECK(none.size() == 0);
    none.wait(); // nothing to wait for
}

TEST_CASE("a compile that fails reaches wait(), and the launch meets the same error") {
    // Native OpenCL C that the OpenCL compiler rejects.
    for (const auto& d : every_device()) {
        if (d.target.backend != "opencl") continue; // its compiler rejects the native code
        CAPTURE(d.label);
        Runtime rt(config_with_threads(2));
        const auto bad = px::kernel("prepare_bad", {"c"}, [&](px::Out<float> c) {
            px::native({{d.target.backend, "this is not code;"}});
            c[0] = 1.0f;
        });
        Prepared p = rt.prepare(d.target, bad);
        std::string waited;
        try {
            p.wait();
        } catch (const Error& e) {
            waited = e.what();
            CHECK(e.code() == ErrorCode::Compile);
        }
        REQUIRE_FALSE(waited.empty());
        px::Buffer<float> dc(rt, size_t(1));
        try {
            rt.launch(d.target, bad, Grid(1), dc);
            FAIL("the launch did not throw");
        } catch (const Error& e) {
            CHECK(e.code() == ErrorCode::Compile);
            CHECK(std::string(e.what()) == waited); // the failure remembered, not a second compile
        }
    }
}

TEST_CASE("a Runtime destroyed with compiles queued ends them with an error, never a hang") {
    for (const auto& d : every_device()) {
        CAPTURE(d.label);
        Prepared p;
        {
            Runtime rt(config_with_threads(1));
            std::vector<std::shared_ptr<const ir::Kernel>> irs;
            for (int k = 200; k < 216; ++k)
                irs.push_back(scaled(k)->ir_ptr());
            p = rt.prepare(irs, d.target);
        }
        CHECK(p.ready());
        try {
            p.wait();
        } catch (const Error& e) {
            CHECK(std::string(e.what()).find(
                      "its Runtime was destroyed before the compile began") != std::string::npos);
        }
    }
}
