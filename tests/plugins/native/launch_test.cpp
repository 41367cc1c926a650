// Native plugin launch_host: every work-item of 1-, 2- and 3-D grids runs exactly once, local
// memory is private per group, limits are enforced, events and profiling, concurrent hosts.
#include "grid_check.hpp"
#include "plugin_fixture.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <random>
#include <stdexcept>
#include <thread>
#include <vector>

using native_test::contains;
using native_test::Grid;
using native_test::GridCheck;
using native_test::Plugin;

namespace {

Grid make_grid(uint32_t dims, std::initializer_list<uint64_t> global,
               std::initializer_list<uint32_t> local, uint32_t local_bytes = 0) {
    Grid g;
    g.dims = dims;
    int i = 0;
    for (uint64_t v : global)
        g.global[i++] = v;
    i = 0;
    for (uint32_t v : local)
        g.local[i++] = v;
    g.local_bytes = local_bytes;
    return g;
}

// A random grid of at most ~`max_items` padded work-items, often not a multiple of the group.
Grid random_grid(std::mt19937& rng, uint64_t max_items) {
    Grid g;
    g.dims = 1 + rng() % 3;
    const uint32_t max_local[3] = {32, 8, 4}; // at most 1024 work-items
    uint64_t budget = max_items;
    for (uint32_t d = 0; d < g.dims; ++d) {
        g.local[d] = 1 + rng() % max_local[d];
        const uint64_t per_dim = std::max<uint64_t>(1, d + 1 == g.dims ? budget : 40);
        g.global[d] = 1 + rng() % per_dim;
        budget = std::max<uint64_t>(1, budget / (g.global[d] + g.local[d]));
    }
    const uint32_t sizes[] = {0, 8, 13, 1024, 64 * 1024};
    g.local_bytes = sizes[rng() % 5];
    return g;
}

// Launches `grid` on `q` and returns "" or what went wrong.
std::string launch_and_verify(Plugin& p, plx_queue q, const Grid& grid, uint32_t units) {
    GridCheck check(grid, units);
    const plx_launch_dims dims = grid.launch_dims();
    const plx_status s = p.desc.launch_host(q, GridCheck::run, &check, &dims, nullptr);
    if (s != PLX_OK) return grid.str() + ": launch_host returned " + std::to_string(s);
    const std::string problem = check.verify();
    return problem.empty() ? problem : grid.str() + ": " + problem;
}

} // namespace

TEST_SUITE("native") {

    TEST_CASE("every work-item of 1-, 2- and 3-D grids runs exactly once") {
        for (const std::string options : {"{}", "{\"threads\": 1}", "{\"threads\": 3}"}) {
            CAPTURE(options);
            Plugin p(options);
            REQUIRE_MESSAGE(p.status == PLX_OK, p.error);
            const uint32_t units = p.info().compute_units;
            plx_queue q = p.queue();
            const Grid grids[] = {
                make_grid(1, {1}, {1}),
                make_grid(1, {1}, {64}),
                make_grid(1, {1000}, {64}, 256),
                make_grid(1, {4099}, {256}, 13),
                make_grid(1, {1 << 16}, {1024}, 4096),
                make_grid(1, {100003}, {1}),
                make_grid(2, {33, 17}, {8, 4}, 64),
                make_grid(2, {1, 1000}, {1, 16}),
                make_grid(2, {512, 3}, {32, 32}, 256 * 1024),
                make_grid(3, {5, 7, 9}, {2, 3, 4}, 8),
                make_grid(3, {64, 64, 64}, {8, 8, 8}, 1024),
                make_grid(3, {3, 1, 130}, {1, 1, 64}),
            };
            for (const Grid& g : grids)
                CHECK_MESSAGE(launch_and_verify(p, q, g, units) == "", g.str());
            std::mt19937 rng(1234);
            for (int i = 0; i < 60; ++i) {
                const Grid g = random_grid(rng, 20000);
                const std::string problem = launch_and_verify(p, q, g, units);
                CHECK_MESSAGE(problem.empty(), problem);
            }
            CHECK(p.desc.queue_sync(q) == PLX_OK);
            p.desc.queue_destroy(q);
        }
    }

    TEST_CASE(
        "unused dimensions are 1 whatever the struct holds; a zero global size runs nothing") {
        Plugin p;
        REQUIRE(p.status == PLX_OK);
        plx_queue q = p.queue();
        Grid g = make_grid(1, {77}, {8});
        GridCheck check(g, p.info().compute_units);
        plx_launch_dims dims = g.launch_dims();
        dims.global_size[1] = 0; // a zeroed tail means "unused"
        dims.local_size[2] = 0;
        REQUIRE(p.desc.launch_host(q, GridCheck::run, &check, &dims, nullptr) == PLX_OK);
        CHECK(check.verify() == "");

        std::atomic<int> calls{0};
        auto count = [](const plx_workgroup_ctx*, void* user) {
            static_cast<std::atomic<int>*>(user)->fetch_add(1);
        };
        plx_launch_dims empty = make_grid(2, {0, 5}, {4, 4}).launch_dims();
        CHECK(p.desc.launch_host(q, count, &calls, &empty, nullptr) == PLX_OK);
        CHECK(calls.load() == 0);
        p.desc.queue_destroy(q);
    }

    TEST_CASE("launch limits are enforced with a message naming the limit") {
        Plugin p;
        REQUIRE(p.status == PLX_OK);
        plx_queue q = p.queue();
        auto nothing = [](const plx_workgroup_ctx*, void*) {};
        struct Case {
            Grid grid;
            plx_status status;
            const char* message;
        };
        const Case cases[] = {
            {make_grid(0, {8}, {8}), PLX_ERROR_INVALID_ARGUMENT, "dims->dims is 0"},
            {make_grid(4, {8}, {8}), PLX_ERROR_INVALID_ARGUMENT, "dims->dims is 4"},
            {make_grid(1, {8}, {0}), PLX_ERROR_INVALID_ARGUMENT, "local_size[0] is 0"},
            {make_grid(2, {8, 8}, {8, 0}), PLX_ERROR_INVALID_ARGUMENT, "local_size[1] is 0"},
            {make_grid(1, {16384}, {8192}), PLX_ERROR_OUT_OF_RESOURCES, "max_work_group_dims"},
            {make_grid(3, {1, 1, 128}, {1, 1, 65}), PLX_ERROR_OUT_OF_RESOURCES, "limit of 64"},
            {make_grid(3, {128, 64, 64}, {64, 64, 2}), PLX_ERROR_OUT_OF_RESOURCES,
             "8192 work-items is above the device limit of 4096"},
            {make_grid(3, {UINT64_MAX, UINT64_MAX, 2}, {1, 1, 1}), PLX_ERROR_OUT_OF_RESOURCES,
             "2^64"},
        };
        for (const Case& k : cases) {
            CAPTURE(k.grid.str());
            const plx_launch_dims dims = k.grid.launch_dims();
            plx_event ev = reinterpret_cast<plx_event>(1);
            CHECK(p.desc.launch_host(q, nothing, nullptr, &dims, &ev) == k.status);
            CHECK_MESSAGE(contains(p.last_error(), k.message), p.last_error());
        }
        const plx_launch_dims ok = make_grid(1, {8}, {8}).launch_dims();
        CHECK(p.desc.launch_host(q, nullptr, nullptr, &ok, nullptr) == PLX_ERROR_INVALID_ARGUMENT);
        CHECK(contains(p.last_error(), "fn is NULL"));
        CHECK(p.desc.launch_host(q, nothing, nullptr, nullptr, nullptr) ==
              PLX_ERROR_INVALID_ARGUMENT);
        CHECK(p.desc.launch_host(nullptr, nothing, nullptr, &ok, nullptr) ==
              PLX_ERROR_INVALID_ARGUMENT);
        // Limits exactly at the maximum are accepted.
        const plx_launch_dims max =
            make_grid(3, {1024, 1, 1}, {1024, 1, 1}, 256 * 1024).launch_dims();
        CHECK(p.desc.launch_host(q, nothing, nullptr, &max, nullptr) == PLX_OK);
        CHECK(p.desc.queue_sync(q) == PLX_OK); // refused launches are not queue failures
        p.desc.queue_destroy(q);
    }

    TEST_CASE("local memory past local_memory_bytes: each worker's block grows to fit") {
        // The generated code's per-work-item frames come on top of the kernel's shared arrays
        // (which local_memory_bytes bounds), so a launch may ask for more.
        Plugin p;
        REQUIRE(p.status == PLX_OK);
        plx_queue q = p.queue();
        struct Seen {
            std::atomic<int> groups{0}, bad{0};
        } seen;
        auto fill = [](const plx_workgroup_ctx* ctx, void* user) {
            auto* s = static_cast<Seen*>(user);
            auto* bytes = static_cast<unsigned char*>(ctx->local_mem);
            const auto tag = static_cast<unsigned char>(ctx->group_id[0] * 7 + 1);
            if (ctx->local_mem_bytes != 1024 * 1024 || reinterpret_cast<uintptr_t>(bytes) % 64 != 0)
                ++s->bad;
            std::memset(bytes, tag, ctx->local_mem_bytes);
            for (size_t i = 0; i < ctx->local_mem_bytes; i += 4093)
                if (bytes[i] != tag) ++s->bad;
            ++s->groups;
        };
        const plx_launch_dims big = make_grid(1, {64 * 32}, {64}, 1024 * 1024).launch_dims();
        CHECK(p.desc.launch_host(q, fill, &seen, &big, nullptr) == PLX_OK);
        CHECK(p.desc.queue_sync(q) == PLX_OK);
        CHECK(seen.groups.load() == 32);
        CHECK(seen.bad.load() == 0);
        p.desc.queue_destroy(q);
    }

    TEST_CASE("events report completion and, on a profiling queue, start and end times") {
        Plugin p;
        REQUIRE(p.status == PLX_OK);
        plx_queue plain = p.queue();
        plx_queue prof = p.queue(PLX_QUEUE_PROFILING);
        auto sleepy = [](const plx_workgroup_ctx*, void*) {
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
        };
        const plx_launch_dims dims = make_grid(1, {4}, {1}).launch_dims();

        plx_event ev = nullptr;
        REQUIRE(p.desc.launch_host(prof, sleepy, nullptr, &dims, &ev) == PLX_OK);
        REQUIRE(ev != nullptr);
        CHECK(p.desc.event_wait(ev) == PLX_OK);
        uint64_t start = 0, end = 0;
        REQUIRE(p.desc.event_profile(ev, &start, &end) == PLX_OK);
        CHECK(start > 0);
        // Four 2 ms groups on however many threads: at least one group's length passed.
        CHECK(end - start >= 2'000'000);
        CHECK(p.desc.event_profile(ev, nullptr, &end) == PLX_ERROR_INVALID_ARGUMENT);
        p.desc.event_release(ev);

        REQUIRE(p.desc.launch_host(plain, sleepy, nullptr, &dims, &ev) == PLX_OK);
        CHECK(p.desc.event_wait(ev) == PLX_OK);
        CHECK(p.desc.event_profile(ev, &start, &end) == PLX_ERROR_UNSUPPORTED);
        CHECK(contains(p.last_error(), "PLX_QUEUE_PROFILING"));
        p.desc.event_release(ev);
        p.desc.event_release(nullptr);
        CHECK(p.desc.event_wait(nullptr) == PLX_ERROR_INVALID_ARGUMENT);
        CHECK(p.desc.queue_sync(plain) == PLX_OK);
        CHECK(p.desc.queue_sync(prof) == PLX_OK);
        p.desc.queue_destroy(plain);
        p.desc.queue_destroy(prof);
    }

    TEST_CASE("a failing work-group function fails the launch and the next sync, not the pool") {
        Plugin p("{\"threads\": 3}");
        REQUIRE(p.status == PLX_OK);
        plx_queue q = p.queue();
        auto thrower = [](const plx_workgroup_ctx* ctx, void*) {
            if (ctx->group_id[0] == 37) throw std::runtime_error("group 37 gave up");
        };
        const plx_launch_dims dims = make_grid(1, {1000}, {1}).launch_dims();
        plx_event ev = reinterpret_cast<plx_event>(1);
        CHECK(p.desc.launch_host(q, thrower, nullptr, &dims, &ev) == PLX_ERROR_LAUNCH);
        CHECK(ev == nullptr);
        CHECK(contains(p.last_error(), "group 37 gave up"));
        CHECK(p.desc.queue_sync(q) == PLX_OK); // reported once, by the launch itself
        CHECK(launch_and_verify(p, q, make_grid(1, {5000}, {16}, 64), 3) == "");
        p.desc.queue_destroy(q);
    }

    TEST_CASE("a launch from inside a work-group is refused") {
        Plugin p;
        REQUIRE(p.status == PLX_OK);
        struct Nested {
            Plugin* p = nullptr;
            plx_queue q = nullptr;
            std::atomic<int> refused{0};
            std::mutex mutex;
            std::string message;
        } nested;
        nested.p = &p;
        nested.q = p.queue();
        auto outer = [](const plx_workgroup_ctx*, void* user) {
            auto* n = static_cast<Nested*>(user);
            const plx_launch_dims d = make_grid(1, {4}, {1}).launch_dims();
            if (n->p->desc.launch_host(
                    n->q, [](const plx_workgroup_ctx*, void*) {}, nullptr, &d, nullptr) ==
                PLX_ERROR_UNSUPPORTED) {
                n->refused.fetch_add(1);
                std::lock_guard lock(n->mutex);
                n->message = n->p->last_error();
            }
        };
        plx_queue q = p.queue();
        const plx_launch_dims dims = make_grid(1, {6}, {1}).launch_dims();
        REQUIRE(p.desc.launch_host(q, outer, &nested, &dims, nullptr) == PLX_OK);
        CHECK(nested.refused.load() == 6);
        CHECK(contains(nested.message, "inside a work-group"));
        p.desc.queue_destroy(q);
        p.desc.queue_destroy(nested.q);
    }

    TEST_CASE("groups are spread over the pool threads") {
        // Sleeping groups leave the CPU free, so even a loaded machine schedules the pool threads
        // within the 40 ms this launch takes on one thread.
        Plugin p("{\"threads\": 4}");
        REQUIRE(p.status == PLX_OK);
        plx_queue q = p.queue();
        std::atomic<uint32_t> seen[4] = {};
        auto sleepy = [](const plx_workgroup_ctx* ctx, void* user) {
            static_cast<std::atomic<uint32_t>*>(user)[ctx->worker].fetch_add(1);
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        };
        const plx_launch_dims dims = make_grid(1, {40}, {1}).launch_dims();
        REQUIRE(p.desc.launch_host(q, sleepy, seen, &dims, nullptr) == PLX_OK);
        uint32_t workers = 0, groups = 0;
        for (auto& n : seen) {
            workers += n.load() != 0;
            groups += n.load();
        }
        CHECK(groups == 40);
        CHECK(workers >= 2);
        p.desc.queue_destroy(q);
    }

    TEST_CASE("several host threads launch at once on their own queues and on a shared one") {
        for (const std::string options :
             {"{\"threads\": 1}", "{\"threads\": 2}", "{\"threads\": 4}", "{}"}) {
            CAPTURE(options);
            Plugin p(options);
            REQUIRE_MESSAGE(p.status == PLX_OK, p.error);
            const uint32_t units = p.info().compute_units;
            plx_queue shared = p.queue();
            std::mutex shared_mutex; // the host serializes calls naming the same queue
            constexpr int kThreads = 4;
            std::vector<std::string> problems(kThreads);
            std::vector<std::thread> threads;
            for (int t = 0; t < kThreads; ++t) {
                threads.emplace_back([&, t] {
                    std::mt19937 rng(100 + t);
                    plx_queue own = p.queue();
                    for (int i = 0; i < 40 && problems[t].empty(); ++i) {
                        const Grid g = random_grid(rng, 4000);
                        if (i % 2 == 0) {
                            problems[t] = launch_and_verify(p, own, g, units);
                        } else {
                            GridCheck check(g, units);
                            const plx_launch_dims dims = g.launch_dims();
                            plx_status s;
                            {
                                std::lock_guard lock(shared_mutex);
                                s = p.desc.launch_host(shared, GridCheck::run, &check, &dims,
                                                       nullptr);
                            }
                            problems[t] = s != PLX_OK ? "shared launch failed" : check.verify();
                            if (!problems[t].empty()) problems[t] = g.str() + ": " + problems[t];
                        }
                    }
                    if (problems[t].empty() && p.desc.queue_sync(own) != PLX_OK)
                        problems[t] = "queue_sync failed";
                    p.desc.queue_destroy(own);
                });
            }
            for (auto& th : threads)
                th.join();
            for (int t = 0; t < kThreads; ++t)
                CHECK_MESSAGE(problems[t].empty(), problems[t]);
            p.desc.queue_destroy(shared);
        }
    }

} // TEST_SUITE
