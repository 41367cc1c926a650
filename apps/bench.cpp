// `plexus bench`: vector_add, reduce and matmul on each backend at sizes beyond the caches,
// each beside a hand-written C++ baseline measured in the same run. A result counts as
// verified only when that run's output was checked against the host reference.
#include "app.hpp"
#include "baselines.hpp"
#include "problems.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>

namespace plexus::app {
namespace {

using clock_type = std::chrono::steady_clock;

// Median wall-clock seconds of `reps` calls of f, after one untimed call.
double median_seconds(int reps, const std::function<void()>& f) {
    f();
    std::vector<double> t;
    for (int i = 0; i < reps; ++i) {
        auto t0 = clock_type::now();
        f();
        t.push_back(std::chrono::duration<double>(clock_type::now() - t0).count());
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

struct Baseline {
    std::string name;
    double value = 0;
};

// The C++ baseline for a problem of this kernel and size, in the problem's unit.
Baseline measure_baseline(const std::string& kernel, size_t size, int reps, std::map<std::string, Baseline>& cache) {
    std::string key = kernel + "/" + std::to_string(size);
    if (auto it = cache.find(key); it != cache.end()) return it->second;
    std::mt19937 g(1);
    std::uniform_real_distribution<float> d(-1, 1);
    auto randv = [&](size_t n) {
        std::vector<float> v(n);
        for (auto& x : v) x = d(g);
        return v;
    };
    Baseline b;
    if (kernel == "vector_add") {
        auto a = randv(size), bb = randv(size);
        std::vector<float> c(size);
        double s = median_seconds(reps, [&] { baseline::vector_add(a.data(), bb.data(), c.data(), size); });
        b = {"C++ -O3 -march=native, std::thread loop", 12.0 * size / s / 1e9};
    } else if (kernel == "reduce") {
        auto x = randv(size);
        volatile float sink = 0;
        double s = median_seconds(reps, [&] { sink = baseline::reduce(x.data(), size); });
        (void)sink;
        b = {"C++ -O3 -march=native, std::thread sum", 4.0 * size / s / 1e9};
    } else {
        int m = int(size), n = int(std::max<size_t>(1, size - size / 8)), k = int(size + 3);
        auto a = randv(size_t(m) * k), bb = randv(size_t(k) * n);
        std::vector<float> c(size_t(m) * n);
        bool naive = kernel == "matmul_naive";
        double s = median_seconds(std::max(1, reps / 3), [&] {
            (naive ? baseline::matmul_naive : baseline::matmul_blocked)(a.data(), bb.data(), c.data(), m, n, k);
        });
        b = {naive ? "C++ -O3 -march=native, naive triple loop, std::thread"
                   : "C++ -O3 -march=native, cache-blocked loop, std::thread",
             2.0 * m * n * double(k) / s / 1e9};
    }
    cache[key] = b;
    return b;
}

int run_bench(const std::vector<std::string>& args) {
    std::string only_backend, only_kernel, json_path;
    size_t size_override = 0;
    int reps = 10;
    for (size_t i = 0; i < args.size(); ++i) {
        if (args[i] == "--help" || args[i] == "-h") {
            std::cout << "usage: plexus bench [--backend NAME] [--kernel NAME] [--size N] [--reps N] [--json FILE]\n"
                         "  kernels: vector_add, reduce, matmul_naive, matmul_tiled (matmul: both)\n"
                         "  the interpreter is left out unless named with --backend\n";
            return 0;
        }
        if (i + 1 >= args.size()) {
            std::cerr << "plexus bench: '" << args[i] << "' needs a value\n";
            return 2;
        }
        if (args[i] == "--backend") only_backend = args[++i];
        else if (args[i] == "--kernel") only_kernel = args[++i];
        else if (args[i] == "--json") json_path = args[++i];
        else if (args[i] == "--size") size_override = std::stoul(args[++i]);
        else if (args[i] == "--reps") reps = std::max(1, std::stoi(args[++i]));
        else {
            std::cerr << "plexus bench: unexpected argument '" << args[i] << "'\n";
            return 2;
        }
    }
    Runtime rt(load_config());
    nlohmann::json results = nlohmann::json::array();
    std::map<std::string, Baseline> baselines;
    std::printf("%-7s %-32s %-13s %-22s %10s %-8s %10s %6s %s\n", "backend", "device", "kernel", "size", "value",
                "unit", "baseline", "ratio", "verified");
    for (const Backend* b : rt.backends()) {
        if (only_backend.empty() ? b->name() == "interp" : b->name() != only_backend) continue;
        for (size_t d = 0; d < b->devices().size(); ++d) {
            const DeviceInfo& dev = b->devices()[d];
            bool gpu = dev.type == DeviceType::GPU;
            for (std::string kernel : {"vector_add", "reduce", "matmul_naive", "matmul_tiled"}) {
                if (!only_kernel.empty() && kernel != only_kernel &&
                    !(only_kernel == "matmul" && kernel.rfind("matmul", 0) == 0))
                    continue;
                bool matmul = kernel.rfind("matmul", 0) == 0;
                size_t size = size_override ? size_override
                              : matmul ? (gpu ? 4096 : 1024)
                                       : (gpu ? size_t(1) << 28 : size_t(1) << 25);
                Target target{b->name(), int(d)};
                nlohmann::json row;
                try {
                    auto p = samples::make_problem(kernel, size, rt, 7);
                    double s = median_seconds(matmul && !gpu ? std::max(1, reps / 3) : reps,
                                              [&] { p->run(rt, target); });
                    double value = p->work() / s / 1e9;
                    bool verified = p->check().ok();
                    Baseline base = measure_baseline(kernel, size, reps, baselines);
                    double ratio = base.value > 0 ? value / base.value : 0;
                    std::printf("%-7s %-32.32s %-13s %-22s %10.2f %-8s %10.2f %6.2f %s\n", b->name().c_str(),
                                dev.name.c_str(), kernel.c_str(), p->size_text().c_str(), value, p->unit(),
                                base.value, ratio, verified ? "yes" : "NO");
                    row = {{"kernel", kernel}, {"backend", b->name()}, {"device", dev.name},
                           {"size", p->size_text()}, {"unit", p->unit()}, {"value", value},
                           {"baseline", {{"name", base.name}, {"value", base.value}}}, {"ratio", ratio},
                           {"verified", verified}};
                } catch (const std::exception& e) {
                    std::printf("%-7s %-32.32s %-13s failed: %s\n", b->name().c_str(), dev.name.c_str(),
                                kernel.c_str(), e.what());
                    row = {{"kernel", kernel}, {"backend", b->name()}, {"device", dev.name},
                           {"error", e.what()}, {"verified", false}};
                }
                results.push_back(row);
                std::fflush(stdout);
            }
        }
    }
    if (!json_path.empty()) {
        std::ofstream out(json_path);
        out << nlohmann::json{{"results", results}}.dump(2) << "\n";
        if (!out) throw Error(ErrorCode::InvalidArgument, "cannot write " + json_path);
    }
    std::printf("baselines run on the host CPU (%u threads)\n", std::max(1u, std::thread::hardware_concurrency()));
    return 0;
}

const Registration reg{{"bench", run_bench, "measure the sample kernels against C++ baselines"}};

} // namespace
} // namespace plexus::app
