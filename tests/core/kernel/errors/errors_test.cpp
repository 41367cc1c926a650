// The runtime's error paths on the real plugins of this build tree: bad launch arguments, a
// native block that does not compile (with and without fallback), the interpreter's bounds
// check, an impossible allocation and an unknown backend; after each, the runtime still works.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include "build_tree_config.hpp"
#include "kernels.hpp"
#include "plexus/plexus.hpp"

#include <algorithm>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace px = plexus;
namespace ir = plexus::ir;

namespace {

px::Config test_config() {
    return px::test::build_tree_config();
}

bool has_backend(const px::Runtime& rt, const std::string& name) {
    for (const px::Backend* b : rt.backends())
        if (b->name() == name && !b->devices().empty()) return true;
    return false;
}

std::vector<float> random_floats(size_t n, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> d(-100.0f, 100.0f);
    std::vector<float> v(n);
    for (float& x : v)
        x = d(rng);
    return v;
}

// Runs vector_add on `target` over random inputs and checks every element exactly: one
// float addition gives the same result on every IEEE backend.
void check_vector_add(px::Runtime& rt, const px::Target& target, size_t n, unsigned seed) {
    INFO("vector_add on " << (target.backend.empty() ? "the router's choice" : target.backend)
                          << ", n=" << n);
    std::vector<float> ha = random_floats(n, seed), hb = random_floats(n, seed + 1);
    px::Buffer<float> a(rt, ha), b(rt, hb), c(rt, n);
    px::Event ev = rt.launch(target, px::samples::vector_add(), px::Grid(n), a, b, c, int(n));
    ev.wait();
    if (!target.backend.empty()) CHECK(ev.backend() == target.backend);
    std::vector<float> got = c.to_vector();
    REQUIRE(got.size() == n);
    size_t bad = 0;
    for (size_t i = 0; i < n; ++i)
        if (got[i] != ha[i] + hb[i] && bad++ == 0)
            FAIL_CHECK("element " << i << ": got " << got[i] << ", want " << ha[i] + hb[i]);
    CHECK(bad == 0);
}

template <class F> px::Error expect_error(px::ErrorCode code, F&& f) {
    try {
        f();
    } catch (const px::Error& e) {
        INFO("error: " << e.what());
        CHECK(e.code() == code);
        return e;
    }
    FAIL("no plexus::Error was thrown");
    return px::Error(px::ErrorCode::Internal, "unreachable");
}

bool contains(const std::string& s, const std::string& part) {
    return s.find(part) != std::string::npos;
}

// c[i] = a[i] + b[i], with an OpenCL native block that does not compile and a portable fallback.
const px::Kernel<px::In<float>, px::In<float>, px::Out<float>, px::Int>& broken_native_add() {
    static const auto k = px::kernel(
        "broken_native_add", {"a", "b", "c", "n"},
        [](px::In<float> a, px::In<float> b, px::Out<float> c, px::Int n) {
            px::Int i = px::global_id(0);
            px::If(i < n, [&] {
                px::native({{"opencl", "c[v0] = a[v0] +* ) b[v0] this is not OpenCL C;"}},
                           [&] { c[i] = a[i] + b[i]; });
            });
        });
    return k;
}

} // namespace

TEST_CASE("launch_ir checks a run-time kernel's arguments") {
    px::Runtime rt(test_config());
    auto k = std::make_shared<const ir::Kernel>(
        ir::from_json(ir::to_json(px::samples::vector_add().ir()), "vector_add.json"));
    const size_t n = 1000;
    std::vector<float> ha = random_floats(n, 11), hb = random_floats(n, 12);
    px::Buffer<float> a(rt, ha), b(rt, hb), c(rt, n);
    px::Buffer<int32_t> ints(rt, n);

    SUBCASE("a scalar for a buffer") {
        std::vector<px::LaunchArg> args{px::LaunchArg::scalar<float>(1.0f), b, c,
                                        px::LaunchArg::scalar<int32_t>(n)};
        px::Error e = expect_error(px::ErrorCode::InvalidArgument,
                                   [&] { rt.launch_ir({}, k, px::Grid(n), args); });
        CHECK(contains(e.message(), "argument 0 ('a') of kernel 'vector_add'"));
        CHECK(contains(e.message(), "expected a buffer of f32, got a scalar"));
        CHECK(e.context().kernel == "vector_add");
    }
    SUBCASE("a buffer for a scalar") {
        std::vector<px::LaunchArg> args{a, b, c, c};
        px::Error e = expect_error(px::ErrorCode::InvalidArgument,
                                   [&] { rt.launch_ir({}, k, px::Grid(n), args); });
        CHECK(contains(e.message(), "argument 3 ('n') of kernel 'vector_add'"));
        CHECK(contains(e.message(), "got a buffer"));
    }
    SUBCASE("a buffer of the wrong element type") {
        std::vector<px::LaunchArg> args{a, ints, c, px::LaunchArg::scalar<int32_t>(n)};
        px::Error e = expect_error(px::ErrorCode::InvalidArgument,
                                   [&] { rt.launch_ir({}, k, px::Grid(n), args); });
        CHECK(contains(e.message(), "argument 1 ('b') of kernel 'vector_add'"));
        CHECK(contains(e.message(), "expected f32 elements, got i32"));
    }
    SUBCASE("a scalar of the wrong type") {
        std::vector<px::LaunchArg> args{a, b, c, px::LaunchArg::scalar<int64_t>(n)};
        px::Error e = expect_error(px::ErrorCode::InvalidArgument,
                                   [&] { rt.launch_ir({}, k, px::Grid(n), args); });
        CHECK(contains(e.message(), "argument 3 ('n') of kernel 'vector_add'"));
        CHECK(contains(e.message(), "expected i32, got i64"));
    }
    SUBCASE("the wrong number of arguments") {
        std::vector<px::LaunchArg> args{a, b, c};
        px::Error e = expect_error(px::ErrorCode::InvalidArgument,
                                   [&] { rt.launch_ir({}, k, px::Grid(n), args); });
        CHECK(contains(e.message(), "kernel 'vector_add' takes 4 arguments, got 3"));
    }
    SUBCASE("an empty grid") {
        std::vector<px::LaunchArg> args{a, b, c, px::LaunchArg::scalar<int32_t>(n)};
        px::Error e = expect_error(px::ErrorCode::InvalidArgument,
                                   [&] { rt.launch_ir({}, k, px::Grid(0), args); });
        CHECK(contains(e.message(), "the grid is empty in dimension 0"));
    }
    // After the refusals, the same kernel and buffers launch correctly.
    std::vector<px::LaunchArg> args{a, b, c, px::LaunchArg::scalar<int32_t>(n)};
    rt.launch_ir({}, k, px::Grid(n), args).wait();
    std::vector<float> got = c.to_vector();
    size_t bad = 0;
    for (size_t i = 0; i < n; ++i)
        bad += got[i] != ha[i] + hb[i];
    CHECK(bad == 0);
}

TEST_CASE("a native block that does not compile falls back, or fails with the build log") {
    px::Config config = test_config();
    config.backends["opencl"].priority = 200; // ahead of native, so the broken block is tried first
    config.fallback = true;
    px::Runtime rt(config);
    if (!has_backend(rt, "opencl")) {
        MESSAGE("skipped: no OpenCL device");
        return;
    }
    std::vector<px::Candidate> ranked = rt.explain(broken_native_add().ir());
    auto first =
        std::find_if(ranked.begin(), ranked.end(), [](const px::Candidate& c) { return c.kept; });
    REQUIRE(first != ranked.end());
    REQUIRE(first->backend == "opencl");

    const size_t n = 777;
    std::vector<float> ha = random_floats(n, 21), hb = random_floats(n, 22);
    {
        px::Buffer<float> a(rt, ha), b(rt, hb), c(rt, n);
        px::Event ev = rt.launch(broken_native_add(), px::Grid(n), a, b, c, int(n));
        ev.wait();
        CHECK(ev.backend() != "opencl");
        std::vector<float> got = c.to_vector();
        size_t bad = 0;
        for (size_t i = 0; i < n; ++i)
            bad += got[i] != ha[i] + hb[i];
        CHECK(bad == 0);
    }

    // Without fallback the compile error reaches the caller, with PoCL's words.
    px::Config strict = config;
    strict.fallback = false;
    px::Runtime rt2(strict);
    px::Buffer<float> a(rt2, ha), b(rt2, hb), c(rt2, n);
    px::Error e = expect_error(px::ErrorCode::Compile, [&] {
        rt2.launch(broken_native_add(), px::Grid(n), a, b, c, int(n));
    });
    CHECK(e.context().plugin == "opencl");
    CHECK(e.context().kernel == "broken_native_add");
    CHECK_FALSE(e.context().build_log.empty());
    INFO("build log: " << e.context().build_log);
    CHECK(contains(e.context().build_log, "error"));
    // A named target never falls back, whatever the configuration says.
    {
        px::Buffer<float> a1(rt, ha), b1(rt, hb), c1(rt, n);
        expect_error(px::ErrorCode::Compile, [&] {
            rt.launch(px::Target{"opencl"}, broken_native_add(), px::Grid(n), a1, b1, c1, int(n));
        });
    }
    // The OpenCL backend still runs kernels that compile.
    check_vector_add(rt2, px::Target{"opencl"}, n, 23);
}

TEST_CASE("the interpreter catches an out-of-bounds store; the runtime stays usable") {
    px::Runtime rt(test_config());
    REQUIRE(has_backend(rt, "interp"));
    auto oob = px::kernel("oob_store", {"c", "n"}, [](px::Out<float> c, px::Int n) {
        px::Int i = px::global_id(0);
        px::If(i < n, [&] { c[i + 1] = 1.0f; });
    });
    const size_t n = 64;
    px::Buffer<float> c(rt, n);
    px::Error e = expect_error(px::ErrorCode::Launch, [&] {
        rt.launch(px::Target{"interp"}, oob, px::Grid(n), c, int(n)).wait();
    });
    CHECK(contains(e.message(), "oob_store"));
    CHECK(contains(e.message(), "work-item"));
    CHECK(contains(e.message(), "out-of-bounds store"));
    CHECK(contains(e.message(), "[64]"));

    check_vector_add(rt, px::Target{"interp"}, 300, 31);
    if (has_backend(rt, "native"))
        check_vector_add(rt, px::Target{"native"}, 5000, 32);
    else
        MESSAGE("native backend not built: checked the interpreter only");
    rt.finish();
}

TEST_CASE("an allocation beyond the device's memory is OutOfMemory; the runtime stays usable") {
    px::Runtime rt(test_config());
    std::string backend = has_backend(rt, "opencl")   ? "opencl"
                          : has_backend(rt, "native") ? "native"
                                                      : "";
    if (backend.empty()) {
        MESSAGE("skipped: neither an OpenCL device nor the native backend");
        return;
    }
    INFO("backend " << backend);
    const size_t n = 256;
    std::vector<float> ha = random_floats(n, 41), hb = random_floats(n, 42);
    px::Buffer<float> a(rt, ha), b(rt, hb);
    {
        px::Buffer<float> huge(rt, size_t(1) << 40); // 4 TiB
        px::Error e = expect_error(px::ErrorCode::OutOfMemory, [&] {
            rt.launch(px::Target{backend}, px::samples::vector_add(), px::Grid(n), a, b, huge,
                      int(n))
                .wait();
        });
        CHECK(e.context().plugin == backend);
    }
    check_vector_add(rt, px::Target{backend}, n, 43);
    // The inputs of the failed launch are intact and usable too.
    px::Buffer<float> c(rt, n);
    rt.launch(px::Target{backend}, px::samples::vector_add(), px::Grid(n), a, b, c, int(n)).wait();
    std::vector<float> got = c.to_vector();
    size_t bad = 0;
    for (size_t i = 0; i < n; ++i)
        bad += got[i] != ha[i] + hb[i];
    CHECK(bad == 0);
}

TEST_CASE("a target naming a backend that is not loaded is NoBackend, naming the loaded ones as "
          "not considered") {
    px::Runtime rt(test_config());
    px::Buffer<float> a(rt, 16), b(rt, 16), c(rt, 16);
    px::Error e = expect_error(px::ErrorCode::NoBackend, [&] {
        rt.launch(px::Target{"vulkan"}, px::samples::vector_add(), px::Grid(16), a, b, c, 16);
    });
    CHECK(contains(e.message(), "no backend can run kernel 'vector_add'"));
    CHECK(contains(e.message(), "requested backend 'vulkan', which is not loaded"));
    CHECK(contains(e.message(), "not considered (the launch names a backend): "));
    for (const px::Backend* be : rt.backends())
        if (!be->devices().empty()) {
            CHECK_MESSAGE(contains(e.message(), be->name() + ":0"),
                          "backend " << be->name() << " not named");
            // Named, not listed with a reason as if it were a candidate.
            CHECK(!contains(e.message(), "\n  " + be->name() + ":0 ("));
        }
    // A device index that does not exist is refused the same way, naming the backend's count.
    px::Error d = expect_error(px::ErrorCode::NoBackend, [&] {
        rt.launch(px::Target{"interp", 99}, px::samples::vector_add(), px::Grid(16), a, b, c, 16);
    });
    CHECK(contains(d.message(), "requested backend 'interp' device 99, which has 1 device(s)"));
    check_vector_add(rt, px::Target{}, 16, 51);
}

// A synchronous plugin reports a failed launch from launch() itself; the next queue_sync
// (Runtime::finish) must not report it a second time.
TEST_CASE("a launch error is reported once, not again by finish()") {
    px::Runtime rt(test_config());
    REQUIRE(has_backend(rt, "interp"));
    auto oob = px::kernel("oob_once", {"c", "n"}, [](px::Out<float> c, px::Int n) {
        px::Int i = px::global_id(0);
        px::If(i < n, [&] { c[i + 1] = 1.0f; });
    });
    px::Buffer<float> c(rt, 8);
    expect_error(px::ErrorCode::Launch,
                 [&] { rt.launch(px::Target{"interp"}, oob, px::Grid(8), c, 8).wait(); });
    CHECK_NOTHROW(rt.finish());
}

TEST_CASE("a launch whose work-group breaks the kernel's declared size is refused; the default is "
          "the declared one") {
    px::Runtime rt(test_config());
    static const auto fixed = px::kernel("fixed_group", {"out"}, [](px::Out<int32_t> out) {
        px::require_work_group_size(64);
        out[px::global_id(0)] = px::local_size(0);
    });
    static const auto capped = px::kernel("capped_group", {"out"}, [](px::Out<int32_t> out) {
        px::max_work_group_size(32);
        out[px::global_id(0)] = px::local_size(0);
    });
    px::Buffer<int32_t> out(rt, 128);
    px::Error e = expect_error(px::ErrorCode::InvalidArgument,
                               [&] { rt.launch(fixed, px::Grid(128).local_size(32), out); });
    CHECK(e.message().find("requires work-groups of 64 x 1 x 1") != std::string::npos);
    CHECK(e.message().find("asks for 32 x 1 x 1") != std::string::npos);
    e = expect_error(px::ErrorCode::InvalidArgument,
                     [&] { rt.launch(capped, px::Grid(128).local_size(64), out); });
    CHECK(e.message().find("at most 32 work-items per group") != std::string::npos);
    for (const px::Backend* b : rt.backends()) {
        INFO(b->name());
        rt.launch(px::Target{b->name()}, fixed, px::Grid(128), out).wait();
        std::vector<int32_t> got = out.to_vector();
        CHECK(std::count(got.begin(), got.end(), 64) == 128);
        rt.launch(px::Target{b->name()}, capped, px::Grid(128), out).wait();
        got = out.to_vector();
        CHECK(std::all_of(got.begin(), got.end(), [](int32_t s) { return s > 0 && s <= 32; }));
    }
    check_vector_add(rt, {}, 1000, 3); // the runtime still works
}
