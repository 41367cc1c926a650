// `plexus bench --compile`: what each sample kernel costs to make ready. Per kernel, the size of
// its IR (nodes), of its JSON and of what each generator makes of it, with the time of each
// generator (no device needed: OpenCL C, CUDA C, PTX for sm_90, host object code through LLVM);
// then per loaded backend, the compile through a Runtime with an empty disk cache (cold) beside
// the same compile from the disk cache (cached), one kernel at a time.
#include "bench.hpp"

#include "app.hpp"
#include "plexus/codegen.hpp"

#include "kernels.hpp"

#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <unistd.h>

namespace plexus::app {

namespace {

// Expressions and statements in the kernel's body.
size_t count_nodes(const ir::Stmt& s);
size_t count_nodes(const ir::Expr& e) {
    if (!e) return 0;
    size_t n = 1;
    ir::for_each_child(*e, [&](const ir::Expr& c) { n += count_nodes(c); });
    return n;
}
size_t count_nodes(const ir::Stmt& s) {
    if (!s) return 0;
    size_t n = 1;
    ir::for_each_part(
        *s, [&](const ir::Expr& e) { n += count_nodes(e); },
        [&](const ir::Stmt& c) { n += count_nodes(c); });
    return n;
}

// The shape a family's variants are checked at here: every path of the samples fits it.
const Shape family_shape = {1024, 1024, 1024};

// A sample kernel, or a variant of a sample family with the family and its values: whether a
// device would run it is the family's check at family_shape.
struct SampleKernel {
    std::string name;
    const ir::Kernel* kernel;
    const detail::FamilyDef* family = nullptr;
    Tuning tuning;
    // Why the variant would not run on the device ("" when it would; always "" for a kernel).
    std::string reject(const std::string& backend, const DeviceInfo& d) const {
        return family ? family->reject(tuning, FamilyContext{backend, d, family_shape}) : "";
    }
};

// The sample kernels, each once (`matmul` names matmul_tiled too); of a family, every variant
// that runs on a device with subgroups of 32 or of 1 (NVIDIA GPUs, the host).
std::vector<SampleKernel> sample_kernels(const std::string& only) {
    std::vector<SampleKernel> out;
    std::set<const ir::Kernel*> seen;
    auto add = [&](SampleKernel k) {
        if (k.kernel && seen.insert(k.kernel).second) out.push_back(std::move(k));
    };
    for (const std::string& name : samples::names()) {
        if (const detail::FamilyDef* f = samples::find_family(name)) {
            for (const Tuning& v : f->variants())
                for (uint32_t width : {32u, 1u}) {
                    DeviceInfo d;
                    d.subgroup_size = width;
                    if (f->reject(v, FamilyContext{"", d, family_shape}).empty()) {
                        const std::string vname = f->variant_name(v);
                        if (only.empty() || only == name || only == vname)
                            add({vname, f->kernel(v).get(), f, v});
                        break;
                    }
                }
            continue;
        }
        const ir::Kernel* k = samples::find(name);
        if (k && (only.empty() || name == only || k->name == only)) add({k->name, k, nullptr, {}});
    }
    return out;
}

struct Generated {
    double ms = -1; // -1: not generated (the reason in `error`)
    size_t bytes = 0;
    std::string error;
};

Generated generate(const std::string& lang, const ir::Kernel& k) {
    Generated g;
    try {
        codegen::Options options;
        const auto t0 = std::chrono::steady_clock::now();
        if (lang == "host") {
            g.bytes = codegen::compile_host(k, options)->object().size();
        } else {
            const plx_language id = lang == "opencl-c" ? PLX_LANG_OPENCL_C
                                    : lang == "cuda-c" ? PLX_LANG_CUDA_C
                                                       : PLX_LANG_PTX;
            if (id == PLX_LANG_PTX) options.arch = "sm_90";
            options.backend = id == PLX_LANG_OPENCL_C ? "opencl" : "cuda";
            g.bytes = codegen::make_codegen(id)->generate(k, options).size();
        }
        g.ms = ms_since(t0);
    } catch (const std::exception& e) {
        g.error = e.what();
    }
    return g;
}

std::string cell(double ms) {
    char buf[32];
    if (ms < 0) return "-";
    std::snprintf(buf, sizeof buf, "%.1f", ms);
    return buf;
}

// Every kernel on the target, one at a time; the reports of this Runtime by kernel name.
std::map<std::string, CompileReport> compile_all(Config config, const std::string& backend,
                                                 const std::vector<SampleKernel>& kernels) {
    config.compile_threads = 1;
    Runtime rt(std::move(config));
    for (const SampleKernel& s : kernels) {
        const ir::Kernel* k = s.kernel;
        const Backend* b = nullptr;
        for (const Backend* each : rt.backends())
            if (each->name() == backend && !each->devices().empty()) b = each;
        if (b && !s.reject(backend, b->devices()[0]).empty()) continue;     // not its variant
        std::shared_ptr<const ir::Kernel> ptr(k, [](const ir::Kernel*) {}); // a static kernel
        try {
            rt.prepare({&ptr, 1}, Target{backend, 0}).wait();
        } catch (const Error&) {
            // dropped by the router or failed: the report (or its absence) says so below
        }
    }
    std::map<std::string, CompileReport> out;
    for (CompileReport& r : rt.compile_reports())
        out[r.kernel] = std::move(r);
    return out;
}

} // namespace

int run_compile_bench(const std::string& only_backend, const std::string& only_kernel,
                      const std::string& json_path) {
    const auto kernels = sample_kernels(only_kernel);
    if (kernels.empty()) {
        std::cerr << "plexus bench --compile: no sample kernel named '" << only_kernel << "'\n";
        return 2;
    }
    nlohmann::json rows = nlohmann::json::array();

    // Code generation alone. Each generator's first kernel also pays its one-time set-up in
    // this process (LLVM's targets, libdevice), which the table shows as its own row first.
    const std::vector<std::string> langs = {"opencl-c", "cuda-c", "ptx", "host"};
    std::printf("code generation, no device (ms, bytes); `setup` is each generator's first use "
                "in the process\n");
    std::printf("%-40s %8s %9s", "kernel", "IR nodes", "JSON");
    for (const std::string& l : langs)
        std::printf(" %9s %9s", (l + " ms").c_str(), "bytes");
    std::printf("\n");
    {
        const ir::Kernel& first = *kernels.front().kernel;
        std::printf("%-40s %8s %9s", "setup", "", "");
        for (const std::string& l : langs) {
            Generated once = generate(l, first), again = generate(l, first);
            const double setup =
                once.ms >= 0 && again.ms >= 0 ? std::max(0.0, once.ms - again.ms) : -1;
            std::printf(" %9s %9s", cell(setup).c_str(), "");
            rows.push_back({{"part", "setup"}, {"language", l}, {"ms", setup}});
        }
        std::printf("\n");
    }
    for (const auto& [name, k, family, tuning] : kernels) {
        const size_t nodes = count_nodes(k->body);
        const size_t json_bytes = ir::canonical_json(*k).size(); // what a Custom plugin gets
        nlohmann::json row = {
            {"part", "codegen"}, {"kernel", name}, {"ir_nodes", nodes}, {"json_bytes", json_bytes}};
        std::printf("%-40s %8zu %9zu", name.c_str(), nodes, json_bytes);
        for (const std::string& l : langs) {
            Generated g = generate(l, *k);
            std::printf(" %9s %9s", cell(g.ms).c_str(),
                        g.ms < 0 ? "-" : std::to_string(g.bytes).c_str());
            row[l] = g.ms < 0 ? nlohmann::json{{"error", g.error}}
                              : nlohmann::json{{"ms", g.ms}, {"bytes", g.bytes}};
        }
        std::printf("\n");
        std::fflush(stdout);
        rows.push_back(row);
    }

    // Through each backend: cold (empty disk cache) and from the disk cache, in two Runtimes.
    Config base = load_config();
    std::vector<std::string> backends;
    {
        Runtime probe(base);
        for (const Backend* b : probe.backends())
            if (!b->devices().empty() && (only_backend.empty() || b->name() == only_backend))
                backends.push_back(b->name());
    }
    for (const std::string& backend : backends) {
        TempDir cache;
        Config c = base;
        c.cache_dir = cache.path;
        enable_only(c, backend);
        const auto cold = compile_all(c, backend, kernels);
        const auto cached = compile_all(c, backend, kernels);
        std::printf("\n%s device 0: compile through the Runtime (ms; cold = empty disk cache)\n",
                    backend.c_str());
        std::printf("%-40s %-16s %10s %10s %10s %10s %10s\n", "kernel", "language", "cold",
                    "codegen", "plugin", "cached", "bytes");
        for (const auto& [name, k, family, tuning] : kernels) {
            auto it = cold.find(k->name);
            if (it == cold.end()) {
                std::printf("%-40s not routed to %s\n", name.c_str(), backend.c_str());
                continue;
            }
            const CompileReport& r = it->second;
            if (!r.error.empty()) {
                std::printf("%-40s failed: %s\n", name.c_str(), r.error.c_str());
                rows.push_back({{"part", "backend"},
                                {"backend", backend},
                                {"kernel", name},
                                {"error", r.error}});
                continue;
            }
            auto hit = cached.find(k->name);
            const double cached_ms =
                hit != cached.end() && hit->second.from_disk_cache ? hit->second.total_ms : -1;
            const double codegen_ms = r.setup_ms + r.lower_ms + r.optimize_ms + r.emit_ms;
            // module_load and kernel_get (some drivers build the program at kernel_get).
            const double plugin_ms = std::max(0.0, r.total_ms - codegen_ms - r.cache_ms);
            std::printf("%-40s %-16.16s %10.1f %10.1f %10.1f %10s %10zu\n", name.c_str(),
                        r.language.c_str(), r.total_ms, codegen_ms, plugin_ms,
                        cell(cached_ms).c_str(), r.code_bytes);
            std::fflush(stdout);
            rows.push_back({{"part", "backend"},
                            {"backend", backend},
                            {"kernel", name},
                            {"language", r.language},
                            {"cold_ms", r.total_ms},
                            {"codegen_ms", codegen_ms},
                            {"plugin_ms", plugin_ms},
                            {"cached_ms", cached_ms},
                            {"code_bytes", r.code_bytes}});
        }
    }
    if (!json_path.empty()) {
        std::ofstream out(json_path);
        out << nlohmann::json{{"compile", rows}}.dump(2) << "\n";
        if (!out) {
            std::cerr << "plexus bench: cannot write " << json_path << "\n";
            return 1;
        }
    }
    return 0;
}

} // namespace plexus::app
