// `plexus tune`: the choices of the kernel families (docs/tuning.md). FAMILY tunes one of the
// sample families for a shape now (or shows the stored choice); --list shows the stored
// choices; --export / --import move them through a tuning file.
#include "app.hpp"

#include "plexus/plexus.hpp"
#include "problems.hpp"

#include <cstdio>
#include <iostream>
#include <sstream>

namespace plexus::app {
namespace {

int usage(std::ostream& out, int status) {
    out << "usage: plexus tune FAMILY [--shape A,B,...] [--backend NAME] [--retune] [--budget-ms "
           "N]\n"
           "       plexus tune --list\n"
           "       plexus tune --export FILE | --import FILE\n"
           "  FAMILY  matmul_f16, matmul_bf16, matmul_tf32, gemm_f32, gemm_tf32, gemm_f16,\n"
           "          gemm_bf16 (--shape M,N,K, default 1024,1024,1024; --mnk is the same),\n"
           "          softmax_f32 / bf16, layernorm_f32 / bf16 (--shape ROWS,COLS, default\n"
           "          1024,1024), sum_f32, scan_i32 (--shape N, default 1048576): tunes it for\n"
           "          that shape on the routed device (or the backend's), unless a choice is\n"
           "          stored; --retune measures anyway. Every variant that fits is\n"
           "          timed unless --budget-ms bounds the tuning (the config's tuning_budget_ms\n"
           "          is for launches). Prints every candidate.\n"
           "  --list  every choice stored in the cache directory\n"
           "  --export FILE  writes the stored choices to a tuning file; --import FILE stores a\n"
           "          tuning file's choices\n";
    return status;
}

void print_candidates(const std::vector<TuningCandidate>& candidates, double flops) {
    for (const TuningCandidate& c : candidates) {
        if (!c.dropped.empty()) continue;
        std::printf("    %-44s %10.3f ms", c.kernel.c_str(), c.seconds * 1e3);
        if (flops > 0) std::printf(" %10.1f GFLOP/s", flops / c.seconds * 1e-9);
        std::printf("\n");
    }
    size_t dropped = 0;
    for (const TuningCandidate& c : candidates)
        if (!c.dropped.empty() && ++dropped <= 64)
            std::printf("    %-44s not timed: %s\n", c.kernel.c_str(), c.dropped.c_str());
}

} // namespace

size_t print_stored_tunings(const std::string& cache_dir, const std::string& family) {
    size_t n = 0;
    for (const TuningRecord& r : stored_tunings(cache_dir)) {
        if (!family.empty() && r.family != family) continue;
        std::printf("%s on %s:%s (%s), bucket %s: %s\n", r.family.c_str(), r.backend.c_str(),
                    r.device.c_str(), r.arch.c_str(), shape_text(r.bucket).c_str(),
                    r.variant.text().c_str());
        print_candidates(r.candidates, 0);
        ++n;
    }
    return n;
}

namespace {

int run_tune(const std::vector<std::string>& args) {
    std::string family, backend, file, mode;
    std::vector<int> shape; // --shape; empty: the family's default
    bool retune = false;
    unsigned budget_ms = 3'600'000;
    for (size_t i = 0; i < args.size(); ++i) {
        if (args[i] == "--help" || args[i] == "-h") return usage(std::cout, 0);
        if (args[i] == "--retune") {
            retune = true;
        } else if (args[i] == "--list") {
            mode = "list";
        } else if ((args[i] == "--export" || args[i] == "--import") && i + 1 < args.size()) {
            mode = args[i].substr(2);
            file = args[++i];
        } else if (args[i] == "--budget-ms" && i + 1 < args.size()) {
            try {
                size_t used = 0;
                const unsigned long v = std::stoul(args[++i], &used);
                if (used != args[i].size() || v > 3'600'000) throw std::out_of_range("");
                budget_ms = unsigned(v);
            } catch (const std::exception&) {
                std::cerr << "plexus tune: --budget-ms " << args[i]
                          << ": expected milliseconds from 0 to 3600000\n";
                return 2;
            }
        } else if (args[i] == "--backend" && i + 1 < args.size()) {
            backend = args[++i];
        } else if ((args[i] == "--shape" || args[i] == "--mnk") && i + 1 < args.size()) {
            const std::string option = args[i], text = args[++i];
            shape.clear();
            std::stringstream ss(text);
            for (std::string part; std::getline(ss, part, ',');) {
                size_t used = 0;
                int value = 0;
                try {
                    value = std::stoi(part, &used);
                } catch (const std::exception&) {
                }
                if (used != part.size() || value <= 0) {
                    shape.clear();
                    break;
                }
                shape.push_back(value);
            }
            if (shape.empty() || (option == "--mnk" && shape.size() != 3)) {
                std::cerr << "plexus tune: " << option << " " << text
                          << ": expected positive sizes separated by commas, like 4096,4100,4096\n";
                return 2;
            }
        } else if (family.empty() && args[i].rfind("--", 0) != 0) {
            family = args[i];
        } else {
            std::cerr << "plexus tune: unexpected argument '" << args[i] << "'\n";
            return usage(std::cerr, 2);
        }
    }
    const Config config = load_config();
    if (mode == "export") {
        const size_t n_out = export_tunings(config.cache_dir, file);
        std::printf("%zu tuning choices written to %s\n", n_out, file.c_str());
        return 0;
    }
    if (mode == "import") {
        const size_t n_in = import_tunings(config.cache_dir, file);
        std::printf("%zu tuning choices stored under %s/tuning\n", n_in, config.cache_dir.c_str());
        return 0;
    }
    if (mode == "list") {
        const size_t n_stored = print_stored_tunings(config.cache_dir, "");
        std::printf("%zu stored choices in %s/tuning\n", n_stored, config.cache_dir.c_str());
        return 0;
    }
    if (family.empty()) return usage(std::cerr, 2);
    // Ahead of time nobody waits: every candidate that fits is timed, unless --budget-ms says.
    Config tuning = config;
    tuning.tuning_budget_ms = budget_ms;
    Runtime rt(tuning);
    if (shape.empty()) {
        const bool rows = family.rfind("softmax", 0) == 0 || family.rfind("layernorm", 0) == 0;
        const bool one = family == "sum_f32" || family == "scan_i32";
        shape = rows  ? std::vector<int>{1024, 1024}
                : one ? std::vector<int>{1 << 20}
                      : std::vector<int>{1024, 1024, 1024};
    }
    const TuningReport r = samples::tune_family(family, shape, rt, Target{backend}, retune);
    std::printf("%s %s on %s (%s), bucket %s: %s (%s", r.family.c_str(),
                shape_text(r.shape).c_str(), r.backend.c_str(), r.device.c_str(),
                shape_text(r.bucket).c_str(), r.kernel.c_str(), r.source.c_str());
    if (r.source == "measured") std::printf(", %.0f ms", r.tuning_ms);
    std::printf(")\n");
    // GFLOP/s beside each candidate of a product (m, n, k).
    const bool product = shape.size() == 3;
    print_candidates(r.candidates, product ? 2.0 * shape[0] * shape[1] * double(shape[2]) : 0.0);
    return 0;
}

const Registration reg{
    {"tune", run_tune, "tune a kernel family for a shape, or list, export, import the choices"}};

} // namespace
} // namespace plexus::app
