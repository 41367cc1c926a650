// `plexus bench --startup`: what constructing a Runtime costs a new process, for each backend
// alone (every other plugin disabled, so never opened) and for all of them, beside the vendor
// calls a program without plexus makes: cuInit + the primary context of device 0, and
// clGetPlatformIDs + clGetDeviceIDs of every platform. Each figure is the median of five
// fresh processes, the kinds interleaved.
#include "app.hpp"
#include "bench.hpp"

#include "plexus/runtime.hpp"

#include <algorithm>
#include <cstdio>
#include <dlfcn.h>
#include <fstream>
#include <map>

namespace plexus::app {
namespace {

constexpr int kRuns = 5;

// cuInit + cuDeviceGet + cuDevicePrimaryCtxRetain, through dlopen as the CUDA plugin does.
nlohmann::json raw_cuda() {
    auto t0 = std::chrono::steady_clock::now();
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return {{"error", "libcuda.so.1 is not installed"}};
    using Init = int (*)(unsigned);
    using DeviceGet = int (*)(int*, int);
    using Retain = int (*)(void**, int);
    auto init = reinterpret_cast<Init>(dlsym(lib, "cuInit"));
    auto device_get = reinterpret_cast<DeviceGet>(dlsym(lib, "cuDeviceGet"));
    auto retain = reinterpret_cast<Retain>(dlsym(lib, "cuDevicePrimaryCtxRetain"));
    int device = 0;
    void* ctx = nullptr;
    if (!init || !device_get || !retain || init(0) != 0 || device_get(&device, 0) != 0 ||
        retain(&ctx, device) != 0)
        return {{"error", "cuInit, cuDeviceGet or cuDevicePrimaryCtxRetain failed"}};
    return {{"ms", ms_since(t0)}};
}

// clGetPlatformIDs + clGetDeviceIDs (all types) of every platform, through dlopen.
nlohmann::json raw_opencl() {
    auto t0 = std::chrono::steady_clock::now();
    void* lib = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return {{"error", "libOpenCL.so.1 is not installed"}};
    using GetPlatforms = int (*)(unsigned, void**, unsigned*);
    using GetDevices = int (*)(void*, unsigned long, unsigned, void**, unsigned*);
    auto platforms = reinterpret_cast<GetPlatforms>(dlsym(lib, "clGetPlatformIDs"));
    auto devices = reinterpret_cast<GetDevices>(dlsym(lib, "clGetDeviceIDs"));
    unsigned n = 0;
    if (!platforms || !devices || platforms(0, nullptr, &n) != 0 || n == 0)
        return {{"error", "no OpenCL platform"}};
    std::vector<void*> ids(n);
    platforms(n, ids.data(), nullptr);
    unsigned total = 0;
    for (void* p : ids) {
        unsigned count = 0;
        constexpr unsigned long all_types = 0xFFFFFFFF; // CL_DEVICE_TYPE_ALL
        if (devices(p, all_types, 0, nullptr, &count) == 0 && count > 0) {
            std::vector<void*> d(count);
            devices(p, all_types, count, d.data(), nullptr);
            total += count;
        }
    }
    return {{"ms", ms_since(t0)}, {"devices", total}};
}

// Runtime construction with only `backend` enabled ("all": the configuration as it is).
nlohmann::json runtime_start(const std::string& backend) {
    Config config = load_config();
    if (backend != "all") enable_only(config, backend);
    auto t0 = std::chrono::steady_clock::now();
    Runtime rt(config);
    const double ms = ms_since(t0);
    size_t devices = 0;
    for (const Backend* b : rt.backends())
        devices += b->devices().size();
    return {{"ms", ms}, {"backends", rt.backends().size()}, {"devices", devices}};
}

std::string cell(const std::vector<nlohmann::json>& runs, double& median) {
    std::vector<double> ms;
    for (const auto& r : runs) {
        if (r.contains("error")) return r["error"].get<std::string>();
        ms.push_back(r.value("ms", 0.0));
    }
    median = app::median(ms);
    char buf[256];
    int at = std::snprintf(buf, sizeof buf, "%8.2f ms  (", median);
    for (size_t i = 0; i < ms.size(); ++i)
        at += std::snprintf(buf + at, sizeof buf - size_t(at), "%s%.2f", i ? " " : "", ms[i]);
    std::snprintf(buf + at, sizeof buf - size_t(at), ")");
    return buf;
}

} // namespace

int run_startup_child(const std::vector<std::string>& args) {
    nlohmann::json result;
    try {
        if (args.size() != 2)
            result = {{"error", "usage: --startup-child raw cuda|opencl, or runtime NAME|all"}};
        else if (args[0] == "raw")
            result = args[1] == "cuda" ? raw_cuda() : raw_opencl();
        else if (args[0] == "runtime")
            result = runtime_start(args[1]);
        else
            result = {{"error", "unknown measurement " + args[0]}};
    } catch (const std::exception& e) {
        result = {{"error", e.what()}};
    }
    std::printf("%s\n", result.dump().c_str());
    return 0;
}

int run_startup(const std::string& json_path) {
    // Which plugins load here: a Runtime in this process (its load also warms the page cache
    // for the children, so every figure is a warm start).
    std::vector<std::string> kinds;
    {
        Runtime rt(load_config());
        for (const Backend* b : rt.backends())
            kinds.push_back("runtime " + b->name());
    }
    std::sort(kinds.begin(), kinds.end());
    kinds.push_back("runtime all");
    kinds.push_back("raw cuda");
    kinds.push_back("raw opencl");
    std::map<std::string, std::vector<nlohmann::json>> runs;
    for (int i = 0; i < kRuns; ++i)
        for (const std::string& k : kinds)
            runs[k].push_back(run_child("", "--startup-child " + k));

    std::printf("Runtime start-up in new processes, median of %d (every run)\n", kRuns);
    std::map<std::string, double> medians;
    for (const std::string& k : kinds) {
        double median = 0;
        const std::string text = cell(runs[k], median);
        if (median > 0) medians[k] = median;
        const bool raw = k.rfind("raw", 0) == 0;
        std::printf("  %-16s %s\n",
                    (raw ? k.substr(4) + " (raw vendor calls)"
                         : k.substr(8) + (k == "runtime all" ? "" : " alone"))
                        .c_str(),
                    text.c_str());
    }
    double slowest_raw = 0;
    for (const char* r : {"raw cuda", "raw opencl"})
        if (medians.count(r)) slowest_raw = std::max(slowest_raw, medians[r]);
    if (slowest_raw > 0 && medians.count("runtime all"))
        std::printf("  all backends / slowest raw vendor start = %.2f (target <= 1.1)\n",
                    medians["runtime all"] / slowest_raw);
    if (!json_path.empty()) {
        write_json(json_path, {{"startup", runs}});
    }
    return 0;
}

} // namespace plexus::app
