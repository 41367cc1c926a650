// Prints the native plugin's launch_host overhead (empty work-group function) for a few grid
// sizes; a measurement to read, not a test. Run: meson test --benchmark or the binary.
#include "plugin_fixture.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

int main(int argc, char** argv) {
    const std::string options = argc > 1 ? argv[1] : "{}";
    native_test::Plugin p(options);
    if (p.status != PLX_OK) {
        std::fprintf(stderr, "init failed: %s\n", p.error.c_str());
        return 1;
    }
    plx_queue q = p.queue();
    auto empty = [](const plx_workgroup_ctx*, void*) {};
    std::printf("native launch_host overhead, %u threads, empty work-group function\n",
                p.info().compute_units);
    std::printf("%10s %12s %12s %12s\n", "groups", "median_us", "min_us", "ns/group");
    for (uint64_t groups : {1ull, 2ull, 16ull, 1024ull, 65536ull}) {
        plx_launch_dims dims{};
        dims.struct_size = sizeof dims;
        dims.dims = 1;
        dims.global_size[0] = groups * 64;
        dims.global_size[1] = dims.global_size[2] = 1;
        dims.local_size[0] = 64;
        dims.local_size[1] = dims.local_size[2] = 1;
        const int reps = groups >= 65536 ? 200 : 5000;
        std::vector<double> us;
        us.reserve(reps);
        for (int i = 0; i < reps + 100; ++i) {
            const auto t0 = std::chrono::steady_clock::now();
            if (p.desc.launch_host(q, empty, nullptr, &dims, nullptr) != PLX_OK) {
                std::fprintf(stderr, "launch failed: %s\n", p.last_error().c_str());
                return 1;
            }
            const auto t1 = std::chrono::steady_clock::now();
            if (i >= 100) us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
        }
        std::sort(us.begin(), us.end());
        const double median = us[us.size() / 2];
        std::printf("%10llu %12.2f %12.2f %12.2f\n", static_cast<unsigned long long>(groups),
                    median, us.front(), median * 1000.0 / double(groups));
    }

    // Parallel speedup on groups that do real work (about 20 us of arithmetic each).
    auto busy = [](const plx_workgroup_ctx* ctx, void*) {
        volatile double x = double(ctx->group_id[0]);
        for (int i = 0; i < 20000; ++i)
            x = x * 1.0000001 + 0.5;
    };
    plx_launch_dims dims{};
    dims.struct_size = sizeof dims;
    dims.dims = 1;
    dims.global_size[0] = 2000;
    dims.global_size[1] = dims.global_size[2] = 1;
    dims.local_size[0] = dims.local_size[1] = dims.local_size[2] = 1;
    const auto t0 = std::chrono::steady_clock::now();
    p.desc.launch_host(q, busy, nullptr, &dims, nullptr);
    const auto t1 = std::chrono::steady_clock::now();
    std::printf("2000 busy groups: %.2f ms\n",
                std::chrono::duration<double, std::milli>(t1 - t0).count());
    p.desc.queue_destroy(q);
    return 0;
}
