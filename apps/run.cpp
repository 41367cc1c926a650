// `plexus run`: runs the sample kernels on every backend and device found, checks every
// output element against a host reference, and prints one line per run.
#include "app.hpp"
#include "kernels.hpp"
#include "problems.hpp"

#include <chrono>
#include <cstdio>
#include <iostream>

namespace plexus::app {
namespace {

int run_samples(const std::vector<std::string>& args) {
    std::string only_backend, only_kernel;
    size_t size = 0;
    for (size_t i = 0; i < args.size(); ++i) {
        if (args[i] == "--help" || args[i] == "-h") {
            std::cout << "usage: plexus run [--backend NAME] [--kernel NAME] [--size N]\n"
                         "Runs each sample kernel on each backend and device found and checks its "
                         "output.\n";
            return 0;
        }
        if (i + 1 < args.size() && args[i] == "--backend")
            only_backend = args[++i];
        else if (i + 1 < args.size() && args[i] == "--kernel")
            only_kernel = args[++i];
        else if (i + 1 < args.size() && args[i] == "--size")
            size = std::stoul(args[++i]);
        else {
            std::cerr << "plexus run: unexpected argument '" << args[i] << "'\n";
            return 2;
        }
    }
    Runtime rt(load_config());
    // The compile of each problem's kernel (the sample of the problem's name) for every device
    // starts now, on the Runtime's compile pool (Config::compile_threads), so that compiles
    // overlap each other and the runs: a run waits only for its own kernel. A kernel a device
    // cannot take fails its compile here and its run reports the router's reason, as without
    // this. A problem whose kernels have other names (scan's two) compiles them at its launch;
    // a kernel family's (the matmul_f16 / bf16 / tf32 problems) are compiled by its tuning.
    std::vector<std::shared_ptr<const ir::Kernel>> kernels;
    for (const std::string& name : samples::problem_names())
        if (only_kernel.empty() || name == only_kernel)
            if (const ir::Kernel* k = samples::find_family(name) ? nullptr : samples::find(name))
                kernels.push_back(std::make_shared<const ir::Kernel>(*k));
    for (const Backend* b : rt.backends())
        if (only_backend.empty() || b->name() == only_backend)
            for (size_t d = 0; d < b->devices().size(); ++d)
                rt.prepare(kernels, Target{b->name(), int(d)});
    int failures = 0, runs = 0, skipped = 0;
    std::printf("%-8s %-40s %-17s %-22s %-8s %10s\n", "backend", "device", "kernel", "size",
                "result", "ms");
    for (const Backend* b : rt.backends()) {
        if (!only_backend.empty() && b->name() != only_backend) continue;
        for (size_t d = 0; d < b->devices().size(); ++d) {
            for (const std::string& name : samples::problem_names()) {
                if (!only_kernel.empty() && name != only_kernel) continue;
                bool slow = b->name() == "interp";
                size_t n = size ? size : samples::run_size(name, slow);
                std::string result;
                double ms = 0;
                std::string size_text;
                try {
                    auto p = samples::make_problem(name, n, rt, 42);
                    size_text = p->size_text();
                    auto t0 = std::chrono::steady_clock::now();
                    p->run(rt, Target{b->name(), int(d)});
                    ms = std::chrono::duration<double, std::milli>(
                             std::chrono::steady_clock::now() - t0)
                             .count();
                    auto r = p->check();
                    result =
                        r.ok() ? "ok" : "FAIL: " + std::to_string(r.bad) + " bad, " + r.first_bad;
                } catch (const Error& e) {
                    // The router dropped this device for the kernel (a capability it lacks):
                    // not a failure, and the reason is the router's own.
                    const std::string why = samples::drop_reason(e, Target{b->name(), int(d)});
                    result = why.empty() ? std::string("ERROR: ") + e.what() : "skipped: " + why;
                } catch (const std::exception& e) {
                    result = std::string("ERROR: ") + e.what();
                }
                const bool skip = result.rfind("skipped", 0) == 0;
                skipped += skip;
                runs += !skip;
                if (result != "ok" && !skip) ++failures;
                std::printf("%-8s %-40.40s %-17s %-22s %-8s %10.2f\n", b->name().c_str(),
                            b->devices()[d].name.c_str(), name.c_str(), size_text.c_str(),
                            skip             ? "skipped"
                            : result == "ok" ? "ok"
                                             : "FAILED",
                            ms);
                if (result != "ok") std::printf("  %s\n", result.c_str());
            }
        }
    }
    std::printf(
        "%d runs, %d passed, %d failed, %d skipped where the router drops the device (kernels "
        "compile ahead, in parallel; a run's time includes waiting for its own)\n",
        runs, runs - failures, failures, skipped);
    return failures ? 1 : 0;
}

const Registration reg{
    {"run", run_samples, "run the sample kernels on every backend found and check them"}};

} // namespace
} // namespace plexus::app
