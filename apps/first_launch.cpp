// `plexus bench --first-launch`: what the first launch of a kernel costs a new process on the
// CUDA backend, with the driver's own JIT cache off (CUDA_CACHE_DISABLE=1) so that nothing is
// reused behind plexus's back. Three child processes, each a fresh `plexus` started by this one:
//   raw   NVRTC compiles a CUDA C vector add to PTX and cuModuleLoadData loads it (the path a
//         programmer without plexus takes);
//   cold  plexus (only its cuda plugin enabled) with an empty disk cache: code generation,
//         PTX emission, module load;
//   warm  plexus again with the disk cache the cold run filled (the linked cubin).
#include "app.hpp"
#include "bench.hpp"
#include "cuda_baselines.hpp"
#include "plot.hpp"
#include "problems.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <unistd.h>

namespace plexus::app {
namespace {

std::string fmt_ms(const nlohmann::json& j, const char* key) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f", j.value(key, 0.0));
    return buf;
}

} // namespace

int run_first_launch_child(const std::vector<std::string>& args) {
    if (args.empty()) return 2;
    nlohmann::json result;
    try {
        if (args[0] == "raw") {
            cuda_baseline::RawFirstLaunch r = cuda_baseline::raw_first_launch(0);
            result = {{"init_ms", r.init_ms},
                      {"nvrtc_open_ms", r.nvrtc_open_ms},
                      {"nvrtc_ms", r.nvrtc_ms},
                      {"module_load_ms", r.module_load_ms},
                      {"verified", r.verified}};
            if (!r.error.empty()) result["error"] = r.error;
        } else if (args[0] == "plexus" && args.size() == 2) {
            auto t0 = std::chrono::steady_clock::now();
            Config config = load_config();
            config.cache_dir = args[1];
            // Only the cuda plugin, as for a program configured for CUDA alone: the OpenCL
            // drivers' start-up threads would otherwise still be busy during the compile.
            enable_only(config, "cuda");
            Runtime rt(config);
            double runtime_ms = ms_since(t0);
            auto p = samples::make_problem("vector_add", size_t(1) << 20, rt, 7);
            Target cuda{"cuda", 0};
            auto t1 = std::chrono::steady_clock::now();
            p->run(rt, cuda);
            double first_ms = ms_since(t1);
            auto t2 = std::chrono::steady_clock::now();
            p->run(rt, cuda);
            double second_ms = ms_since(t2);
            result = {{"runtime_ms", runtime_ms},
                      {"first_run_ms", first_ms},
                      {"second_run_ms", second_ms},
                      {"verified", p->check().ok()}};
            for (const CompileReport& c : rt.compile_reports()) {
                if (c.kernel != "vector_add" || c.backend != "cuda") continue;
                result.update({{"language", c.language},
                               {"from_disk_cache", c.from_disk_cache},
                               {"setup_ms", c.setup_ms},
                               {"lower_ms", c.lower_ms},
                               {"optimize_ms", c.optimize_ms},
                               {"emit_ms", c.emit_ms},
                               {"cache_ms", c.cache_ms},
                               {"load_ms", c.load_ms},
                               {"total_ms", c.total_ms}});
            }
        } else {
            return 2;
        }
    } catch (const std::exception& e) {
        result["error"] = e.what();
    }
    std::printf("%s\n", result.dump().c_str());
    return 0;
}

namespace {

// The run whose `key` is the median of `runs` (each a child's JSON); an error if any failed.
nlohmann::json median_run(const std::vector<nlohmann::json>& runs, const char* key) {
    for (const auto& r : runs)
        if (r.contains("error")) return r;
    std::vector<nlohmann::json> sorted = runs;
    std::sort(sorted.begin(), sorted.end(),
              [key](const nlohmann::json& a, const nlohmann::json& b) {
                  return a.value(key, 0.0) < b.value(key, 0.0);
              });
    return sorted[sorted.size() / 2];
}

} // namespace

int run_first_launch(const std::string& json_path, const std::string& plot_path) {
    // Five of each, interleaved, so that a slow moment of the machine hits every kind alike;
    // each cold run gets an empty cache directory, the warm run after it the filled one.
    constexpr int kRuns = 5;
    std::vector<nlohmann::json> raws, colds, warms;
    for (int i = 0; i < kRuns; ++i) {
        auto dir = std::filesystem::temp_directory_path() /
                   ("plexus-first-launch-" + std::to_string(getpid()) + "-" + std::to_string(i));
        std::filesystem::remove_all(dir);
        raws.push_back(run_child("CUDA_CACHE_DISABLE=1", "--first-launch-child raw"));
        nlohmann::json cold =
            run_child("CUDA_CACHE_DISABLE=1", "--first-launch-child plexus '" + dir.string() + "'");
        nlohmann::json warm =
            run_child("CUDA_CACHE_DISABLE=1", "--first-launch-child plexus '" + dir.string() + "'");
        std::filesystem::remove_all(dir);
        if (cold.contains("total_ms")) cold["compile_ms"] = cold["total_ms"];
        raws.back()["compile_ms"] =
            raws.back().value("nvrtc_ms", 0.0) + raws.back().value("module_load_ms", 0.0);
        colds.push_back(cold);
        warms.push_back(warm);
    }
    nlohmann::json raw = median_run(raws, "compile_ms"), cold = median_run(colds, "total_ms"),
                   warm = median_run(warms, "total_ms");

    std::printf("first launch of vector_add on cuda device 0, new processes, CUDA_CACHE_DISABLE=1 "
                "(ms; the run with "
                "the median compile time of %d)\n",
                kRuns);
    for (auto* r : {&raw, &cold, &warm})
        if (r->contains("error"))
            std::printf("  failed: %s\n", (*r)["error"].get<std::string>().c_str());
    double raw_ms = raw.value("compile_ms", 0.0);
    std::printf("  raw:   cuInit+context %s, dlopen NVRTC %s, NVRTC compile %s, cuModuleLoadData "
                "%s -> compile+load %.2f%s\n",
                fmt_ms(raw, "init_ms").c_str(), fmt_ms(raw, "nvrtc_open_ms").c_str(),
                fmt_ms(raw, "nvrtc_ms").c_str(), fmt_ms(raw, "module_load_ms").c_str(), raw_ms,
                raw.value("verified", false) ? "" : " (NOT verified)");
    for (auto [name, r] : {std::pair{"cold", &cold}, std::pair{"warm", &warm}}) {
        std::printf("  %s:  runtime start %s; setup %s, IR->LLVM %s, optimize %s, PTX emission %s, "
                    "disk cache %s, "
                    "module load %s -> total %s (%s%s); first run %s, second %s%s\n",
                    name, fmt_ms(*r, "runtime_ms").c_str(), fmt_ms(*r, "setup_ms").c_str(),
                    fmt_ms(*r, "lower_ms").c_str(), fmt_ms(*r, "optimize_ms").c_str(),
                    fmt_ms(*r, "emit_ms").c_str(), fmt_ms(*r, "cache_ms").c_str(),
                    fmt_ms(*r, "load_ms").c_str(), fmt_ms(*r, "total_ms").c_str(),
                    r->value("from_disk_cache", false) ? "from the disk cache: " : "",
                    r->value("language", std::string("?")).c_str(),
                    fmt_ms(*r, "first_run_ms").c_str(), fmt_ms(*r, "second_run_ms").c_str(),
                    r->value("verified", false) ? "" : " (NOT verified)");
    }
    std::printf("  every run's compile ms: raw");
    for (const auto& r : raws)
        std::printf(" %.2f", r.value("compile_ms", 0.0));
    std::printf("; cold");
    for (const auto& r : colds)
        std::printf(" %.2f", r.value("total_ms", 0.0));
    std::printf("; warm");
    for (const auto& r : warms)
        std::printf(" %.2f", r.value("total_ms", 0.0));
    std::printf("\n");
    std::printf("  (plexus with only its cuda plugin enabled; the raw kernel is the "
                "one-element-per-thread vector\n"
                "   add, smaller than the sample's; its NVRTC dlopen is not counted, plexus's LLVM "
                "set-up and\n"
                "   disk-cache store are)\n");
    if (raw_ms > 0)
        std::printf("  cold total / raw compile+load = %.2f (target <= 0.5); warm total %.2f ms "
                    "(target <= 5)\n",
                    cold.value("total_ms", 0.0) / raw_ms, warm.value("total_ms", 0.0));
    if (!plot_path.empty()) {
        std::vector<Stack> stacks{{"raw (NVRTC + cuModuleLoadData)",
                                   {{"NVRTC compile", raw.value("nvrtc_ms", 0.0)},
                                    {"module load", raw.value("module_load_ms", 0.0)}}}};
        for (auto [name, r] :
             {std::pair{"plexus cold", &cold}, std::pair{"plexus warm (disk cache)", &warm}})
            stacks.push_back({name,
                              {{"set-up", r->value("setup_ms", 0.0)},
                               {"IR -> LLVM", r->value("lower_ms", 0.0)},
                               {"optimize", r->value("optimize_ms", 0.0)},
                               {"PTX emission", r->value("emit_ms", 0.0)},
                               {"disk cache", r->value("cache_ms", 0.0)},
                               {"module load", r->value("load_ms", 0.0)}}});
        write_plot(
            plot_path,
            phase_chart(stacks,
                        "first launch of vector_add on cuda:0, new processes (median run, ms)"));
    }
    if (!json_path.empty()) {
        std::ofstream out(json_path);
        out << nlohmann::json{{"first_launch",
                               {{"raw", raw},
                                {"cold", cold},
                                {"warm", warm},
                                {"runs", {{"raw", raws}, {"cold", colds}, {"warm", warms}}}}}}
                   .dump(2)
            << "\n";
        if (!out) throw Error(ErrorCode::InvalidArgument, "cannot write " + json_path);
    }
    return raw.contains("error") || cold.contains("error") || warm.contains("error") ? 1 : 0;
}

} // namespace plexus::app
