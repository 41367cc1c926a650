// The launch path's allocations, its argument lists and its shortcut: once a kernel is
// compiled and its buffers are current, a launch allocates nothing on the heap (the Event's
// state comes from the thread's block cache; on a Direct backend the queue keeps an argument
// block per launch), whatever its arguments; a kernel with
// more arguments than the lists hold inline still gets each one; a launch like the thread's
// last one skips routing only for that very kernel and Runtime. On every backend of this
// build tree where a backend runs code.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include "build_tree_config.hpp"
#include "counting_new.hpp"
#include "launch_fixture.hpp"

#include <plexus/plexus.hpp>

#include <string>
#include <vector>

namespace px = plexus;

namespace {

// The Event's state comes from the thread's block cache, except under AddressSanitizer, where
// it is an ordinary allocation so that a use after free is still caught.
#if defined(__SANITIZE_ADDRESS__)
constexpr double kEventAllocations = 1;
#else
constexpr double kEventAllocations = 0;
#endif

// Heap allocations per call of `launch`, over a round of launches that follows an identical
// one: the first compiles and routes the kernel and lets the lane's lists reach their size.
template <class F> double allocations_per_launch(px::Runtime& rt, F launch) {
    const int n = 100;
    for (int i = 0; i < n; ++i)
        launch();
    rt.finish();
    const unsigned long before = launch_test::allocations.load();
    for (int i = 0; i < n; ++i)
        launch();
    const unsigned long after = launch_test::allocations.load();
    rt.finish();
    return double(after - before) / n;
}

} // namespace

TEST_CASE("a launch's arguments cost no heap allocation") {
    px::Runtime rt(launch_test::fake_config());
    const auto& empty = launch_test::empty_kernel();
    const auto& add = launch_test::add_kernel();
    // fakejit hands out an event per launch and allocates nothing itself; fakedirect has no
    // events, and the core keeps each launch's argument block until its queue syncs. The
    // first round filled the thread's block cache.
    for (auto [backend, most] :
         {std::pair{"fakejit", kEventAllocations}, {"fakedirect", kEventAllocations + 1}}) {
        INFO(backend);
        const px::Target target{backend, 0};
        px::Buffer<float> a(rt, 64), b(rt, 64), c(rt, 64);
        const double bare = allocations_per_launch(
            rt, [&] { rt.launch(target, empty, px::Grid(32).local_size(32)); });
        const double with_args = allocations_per_launch(
            rt, [&] { rt.launch(target, add, px::Grid(64).local_size(32), a, b, c, 64); });
        CHECK(bare <= most);
        CHECK(with_args == bare);
    }
}

TEST_CASE("a launch of 20 arguments, one buffer passed twice, gets each of them") {
    // More arguments and distinct buffers than the launch path's lists hold inline (16).
    static const auto many = px::kernel(
        "many_args", {"a0", "a1",  "a2",  "a3",  "a4",  "a5",  "a6",  "a7", "s",   "a8",
                      "a9", "a10", "a11", "a12", "a13", "a14", "a15", "t",  "out", "n"},
        [](px::In<int32_t> a0, px::In<int32_t> a1, px::In<int32_t> a2, px::In<int32_t> a3,
           px::In<int32_t> a4, px::In<int32_t> a5, px::In<int32_t> a6, px::In<int32_t> a7,
           px::Int s, px::In<int32_t> a8, px::In<int32_t> a9, px::In<int32_t> a10,
           px::In<int32_t> a11, px::In<int32_t> a12, px::In<int32_t> a13, px::In<int32_t> a14,
           px::In<int32_t> a15, px::Int t, px::Out<int32_t> out, px::Int n) {
            px::Int i = px::global_id(0);
            px::If(i < n, [&] {
                out[i] = a0[i] + a1[i] * 2 + a2[i] * 3 + a3[i] * 4 + a4[i] * 5 + a5[i] * 6 +
                         a6[i] * 7 + a7[i] * 8 + a8[i] * 9 + a9[i] * 10 + a10[i] * 11 +
                         a11[i] * 12 + a12[i] * 13 + a13[i] * 14 + a14[i] * 15 + a15[i] * 16 +
                         s * 1000 + t * 7;
            });
        });
    px::Runtime rt(px::test::hermetic_config());
    const int n = 300;
    // Input j holds i + 100 j; a12 is passed a3's buffer.
    std::vector<px::Buffer<int32_t>> in;
    for (int j = 0; j < 16; ++j) {
        std::vector<int32_t> v(n);
        for (int i = 0; i < n; ++i)
            v[size_t(i)] = i + 100 * j;
        in.emplace_back(rt, v);
    }
    std::vector<int32_t> want(n);
    for (int i = 0; i < n; ++i) {
        int32_t sum = 0;
        for (int j = 0; j < 16; ++j)
            sum += (i + 100 * (j == 12 ? 3 : j)) * (j + 1);
        want[size_t(i)] = sum + 5 * 1000 + 9 * 7;
    }
    for (const px::Backend* b : rt.backends()) {
        for (size_t d = 0; d < b->devices().size(); ++d) {
            INFO(b->name() << ":" << d);
            px::Buffer<int32_t> out(rt, n);
            rt.launch(px::Target{b->name(), int(d)}, many, px::Grid(n), in[0], in[1], in[2], in[3],
                      in[4], in[5], in[6], in[7], 5, in[8], in[9], in[10], in[11], in[3], in[13],
                      in[14], in[15], 9, out, n)
                .wait();
            CHECK(out.to_vector() == want);
        }
    }
}

namespace {

// Fills out with `value` through a kernel traced now (the same name and parameters each time),
// on the target; returns the output.
std::vector<int32_t> fill_with(px::Runtime& rt, const px::Target& target, int32_t value) {
    const auto fill =
        px::kernel("fill_value", {"out", "n"}, [value](px::Out<int32_t> out, px::Int n) {
            px::Int i = px::global_id(0);
            px::If(i < n, [&] { out[i] = value; });
        });
    px::Buffer<int32_t> out(rt, 100);
    rt.launch(target, fill, px::Grid(100), out, 100).wait();
    return out.to_vector();
}

} // namespace

TEST_CASE("a launch takes the last launch's shortcut only for that very kernel and Runtime") {
    // The shortcut skips routing for a launch like the calling thread's last one. A kernel
    // traced anew (same name and parameters, another body) after the last one was freed, or a
    // Runtime made where a destroyed one was, must not find the old kernel's code or device.
    px::Runtime rt(px::test::hermetic_config());
    for (const px::Backend* b : rt.backends()) {
        const px::Target target{b->name(), 0};
        INFO(b->name());
        for (int32_t value = 1; value <= 3; ++value)
            CHECK(fill_with(rt, target, value) == std::vector<int32_t>(100, value));
    }
    for (int round = 0; round < 3; ++round) {
        px::Runtime fresh(px::test::hermetic_config());
        px::Buffer<float> a(fresh, std::vector<float>(64, 1.5f)),
            b(fresh, std::vector<float>(64, 2.0f)), c(fresh, 64);
        fresh.launch(px::Target{"interp", 0}, launch_test::add_kernel(), px::Grid(64), a, b, c, 64)
            .wait();
        CHECK(c.to_vector() == std::vector<float>(64, 3.5f));
    }
}
