// A benchmark program (not a test): where the host time of an empty launch goes on CUDA, one
// layer at a time, in alternating rounds of 200 launches (median of 31): a raw cuLaunchKernel
// of the PTX plexus generates, the plugin's launch without and with an event, and
// Runtime::launch. Exits 77 when no CUDA device is found.
#include <plexus/codegen.hpp>
#include <plexus/plexus.hpp>

#include <cuda.h>

#include "driver_symbol.hpp"
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <vector>

namespace {

using clock_type = std::chrono::steady_clock;

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

} // namespace

int main() {
    using namespace plexus;
    Config config;
    config.plugin_dirs = {std::filesystem::path(PLEXUS_CUDA_PLUGIN_PATH).parent_path().string()};
    config.use_env_plugin_path = false;
    config.use_install_dir = false;
    Runtime rt(config);
    const Backend* b = nullptr;
    for (const Backend* x : rt.backends())
        if (x->name() == "cuda" && !x->devices().empty()) b = x;
    if (b == nullptr) {
        std::printf("SKIP: no CUDA device was found\n");
        return 77;
    }
    static const auto empty = plexus::kernel("empty", [] {});
    const Target target{"cuda", 0};
    const Grid grid = Grid(32).local_size(32);
    rt.launch(target, empty, grid);
    rt.finish();

    const plx_plugin& p = b->api();
    plx_device dev = b->device(0);
    plx_queue q = nullptr;
    codegen::Options options;
    options.arch = b->devices()[0].arch;
    const std::string ptx = codegen::make_codegen(PLX_LANG_PTX)->generate(empty.ir(), options);
    plx_module m = nullptr;
    plx_kernel k = nullptr;
    if (p.queue_create(dev, 0, &q) != PLX_OK ||
        p.module_load(dev, PLX_LANG_PTX, ptx.data(), ptx.size(), "", &m) != PLX_OK ||
        p.kernel_get(m, "empty", &k) != PLX_OK) {
        std::fprintf(stderr, "plugin set-up failed: %s\n", p.last_error());
        return 1;
    }
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    auto load = sym<decltype(&::cuModuleLoadData)>(lib, "cuModuleLoadData");
    auto get = sym<decltype(&::cuModuleGetFunction)>(lib, "cuModuleGetFunction");
    auto stream_create = sym<decltype(&::cuStreamCreate)>(lib, "cuStreamCreate");
    auto stream_sync = sym<decltype(&::cuStreamSynchronize)>(lib, "cuStreamSynchronize");
    auto launch = sym<decltype(&::cuLaunchKernel)>(lib, "cuLaunchKernel");
    CUmodule raw_module;
    CUfunction raw_fn;
    CUstream raw_stream;
    // The plugin left the device's primary context current on this thread.
    if (load(&raw_module, ptx.c_str()) != CUDA_SUCCESS ||
        get(&raw_fn, raw_module, "empty") != CUDA_SUCCESS ||
        stream_create(&raw_stream, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS) {
        std::fprintf(stderr, "raw set-up failed\n");
        return 1;
    }
    plx_launch_dims d{};
    d.struct_size = sizeof d;
    d.dims = 1;
    d.global_size[0] = 32, d.global_size[1] = d.global_size[2] = 1;
    d.local_size[0] = 32, d.local_size[1] = d.local_size[2] = 1;

    const int n = 200;
    std::vector<double> raw, plugin, plugin_event, runtime;
    auto round = [&](std::vector<double>& into, auto&& one, auto&& drain) {
        const auto t0 = clock_type::now();
        for (int i = 0; i < n; ++i)
            one();
        into.push_back(std::chrono::duration<double, std::micro>(clock_type::now() - t0).count() /
                       n);
        drain();
    };
    bool ok = true;
    for (int r = 0; r < 31; ++r) {
        round(
            raw,
            [&] {
                ok &= launch(raw_fn, 1, 1, 1, 32, 1, 1, 0, raw_stream, nullptr, nullptr) ==
                      CUDA_SUCCESS;
            },
            [&] { stream_sync(raw_stream); });
        round(
            plugin, [&] { ok &= p.launch(q, k, &d, nullptr, 0, nullptr) == PLX_OK; },
            [&] { p.queue_sync(q); });
        round(
            plugin_event,
            [&] {
                plx_event e = nullptr;
                ok &= p.launch(q, k, &d, nullptr, 0, &e) == PLX_OK;
                p.event_release(e);
            },
            [&] { p.queue_sync(q); });
        round(runtime, [&] { rt.launch(target, empty, grid); }, [&] { rt.finish(); });
    }
    if (!ok) {
        std::fprintf(stderr, "a launch failed\n");
        return 1;
    }
    const double base = median(raw);
    std::printf("%-34s %10s %12s\n", "empty launch, host time", "us", "over raw");
    for (auto [name, v] : {std::pair{"raw cuLaunchKernel", base},
                           {"plugin launch, no event", median(plugin)},
                           {"plugin launch + event", median(plugin_event)},
                           {"Runtime::launch", median(runtime)}})
        std::printf("%-34s %10.3f %+12.3f\n", name, v, v - base);
    p.queue_destroy(q);
    p.module_unload(m);
    return 0;
}
