// `plexus bench`: vector_add, reduce and matmul on each backend at sizes beyond the caches,
// each beside a hand-written baseline measured in the same run: C++ on the host CPU for a CPU
// device, the nvcc-compiled kernels and cuBLAS of cuda_baselines for a GPU the CUDA driver
// sees. A result counts as verified only when that run's output was checked against the host
// reference.
#include "bench.hpp"
#include "app.hpp"
#include "baselines.hpp"
#include "cuda_baselines.hpp"
#include "launch_baselines.hpp"
#include "matmul_mma.hpp"
#include "plot.hpp"
#include "problems.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>

namespace plexus::app {

namespace {

// Wall-clock seconds of one call of f.
double seconds_of(const std::function<void()>& f) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

} // namespace

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

void enable_only(Config& config, const std::string& backend) {
    for (const char* other : {"native", "interp", "opencl", "cuda"})
        if (backend != other) config.backends[other].enabled = false;
}

double ms_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

TempDir::TempDir() {
    std::string t = (std::filesystem::temp_directory_path() / "plexus-bench-XXXXXX").string();
    if (!mkdtemp(t.data()))
        throw Error(ErrorCode::InvalidArgument, "cannot make a temporary directory like " + t);
    path = t;
}

TempDir::~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
}

void write_json(const std::string& path, const nlohmann::json& doc) {
    std::ofstream out(path);
    out << doc.dump(2) << "\n";
    if (!out) throw Error(ErrorCode::InvalidArgument, "cannot write " + path);
}

nlohmann::json run_child(const std::string& env, const std::string& args) {
    const std::string self = std::filesystem::canonical("/proc/self/exe").string();
    const std::string command = env + " '" + self + "' bench " + args;
    FILE* pipe = popen(command.c_str(), "r");
    if (!pipe) return {{"error", "cannot start " + command}};
    std::string out;
    char buf[4096];
    while (size_t got = fread(buf, 1, sizeof buf, pipe))
        out.append(buf, got);
    const int status = pclose(pipe);
    const auto line_start = out.rfind('{');
    if (line_start == std::string::npos)
        return {{"error", "the child process printed no result (status " + std::to_string(status) +
                              "): " + out}};
    try {
        return nlohmann::json::parse(out.substr(line_start));
    } catch (const std::exception& e) {
        return {{"error", std::string("unreadable child output: ") + e.what()}};
    }
}

std::pair<double, double> median_seconds_alternating(int reps, const std::function<void()>& f,
                                                     const std::function<void()>& g) {
    f();
    g();
    std::vector<double> tf, tg;
    for (int i = 0; i < reps; ++i) {
        tf.push_back(seconds_of(f));
        tg.push_back(seconds_of(g));
    }
    return {median(std::move(tf)), median(std::move(tg))};
}

double median_seconds(int reps, const std::function<void()>& f) {
    f();
    std::vector<double> t;
    for (int i = 0; i < reps; ++i)
        t.push_back(seconds_of(f));
    return median(std::move(t));
}

namespace {

struct Baseline {
    std::string name;
    double value = 0;
    std::string error; // not measured, and why
};

// The matmul problems' shape for a size (samples::make_problem uses the same).
struct Shape {
    int m, n, k;
};
Shape matmul_shape(size_t size) {
    return {int(size), int(std::max<size_t>(1, size - size / 8)), int(size + 3)};
}

// The C++ baseline on the host CPU: its inputs, one run, and its work in the problem's unit.
struct HostBaseline {
    std::string name;
    double work = 0;
    std::function<void()> run;
};

HostBaseline host_baseline(const std::string& kernel, size_t size, Shape sh) {
    std::mt19937 g(1);
    std::uniform_real_distribution<float> d(-1, 1);
    auto randv = [&](size_t n) {
        auto v = std::make_shared<std::vector<float>>(n);
        for (auto& x : *v)
            x = d(g);
        return v;
    };
    if (kernel == "vector_add" || kernel == "vector_add_float4") {
        auto a = randv(size), b = randv(size), c = std::make_shared<std::vector<float>>(size);
        return {"C++ -O3 -march=native, std::thread loop", 12.0 * size,
                [=] { baseline::vector_add(a->data(), b->data(), c->data(), size); }};
    }
    if (kernel == "reduce" || kernel == "warp_reduce") {
        auto x = randv(size);
        return {"C++ -O3 -march=native, std::thread sum", 4.0 * size, [=] {
                    volatile float sink = baseline::reduce(x->data(), size);
                    (void)sink;
                }};
    }
    auto a = randv(size_t(sh.m) * sh.k), b = randv(size_t(sh.k) * sh.n);
    auto c = std::make_shared<std::vector<float>>(size_t(sh.m) * sh.n);
    bool naive = kernel == "matmul_naive";
    return {naive ? "C++ -O3 -march=native, naive triple loop, std::thread"
                  : "C++ -O3 -march=native, cache-blocked loop, std::thread",
            2.0 * sh.m * sh.n * double(sh.k), [=] {
                (naive ? baseline::matmul_naive : baseline::matmul_blocked)(
                    a->data(), b->data(), c->data(), sh.m, sh.n, sh.k);
            }};
}

// OpenBLAS SGEMM on the host beside a CPU matmul row (`row`, just measured): the same plexus
// figure against cblas_sgemm of the same shape, median of `reps` runs after an untimed one,
// its output checked against the blocked loop's. It is timed after the row, not alternately
// with it: OpenBLAS's threads spin for a while after each call and would slow what ran next.
nlohmann::json openblas_row(const Backend& b, const std::string& device, const std::string& kernel,
                            const nlohmann::json& row, size_t size, int reps) {
    const baseline::OpenBlas& blas = baseline::openblas();
    const double value = row.value("value", 0.0);
    const std::string size_text = row.value("size", ""), unit = row.value("unit", "GFLOP/s");
    const bool verified = row.value("verified", false);
    if (!blas.error.empty()) {
        nlohmann::json out = result_row(kernel, b, device, size_text, unit.c_str(), value, verified,
                                        "OpenBLAS cblas_sgemm", 0, blas.error);
        out["against"] = "OpenBLAS";
        return out;
    }
    Shape sh = matmul_shape(size);
    std::mt19937 g(3);
    std::uniform_real_distribution<float> d(-1, 1);
    std::vector<float> a(size_t(sh.m) * sh.k), bm(size_t(sh.k) * sh.n), c(size_t(sh.m) * sh.n),
        want(c.size());
    for (auto& x : a)
        x = d(g);
    for (auto& x : bm)
        x = d(g);
    const double seconds =
        median_seconds(reps, [&] { blas.sgemm(a.data(), bm.data(), c.data(), sh.m, sh.n, sh.k); });
    baseline::matmul_blocked(a.data(), bm.data(), want.data(), sh.m, sh.n, sh.k);
    std::string error;
    for (size_t i = 0; i < c.size() && error.empty(); ++i)
        if (std::abs(c[i] - want[i]) > 1e-3f * float(sh.k)) // sums of k products of [-1, 1] values
            error = "its output differs from the blocked loop's at element " + std::to_string(i);
    nlohmann::json out =
        result_row(kernel, b, device, size_text, unit.c_str(), value, verified, blas.name,
                   error.empty() ? 2.0 * sh.m * sh.n * double(sh.k) / seconds / 1e9 : 0, error);
    out["against"] = "OpenBLAS";
    std::printf("        baseline of the row above: %s\n", blas.name.c_str());
    return out;
}

// The hand-written CUDA baselines, one session per CUDA device, opened at first use. A cuda
// device's baseline runs on the same ordinal; another backend's GPU (OpenCL on the same card)
// gets the first CUDA device of the same name.
class GpuBaselines {
public:
    explicit GpuBaselines(const Runtime& rt) {
        for (const Backend* b : rt.backends())
            if (b->name() == "cuda")
                for (const DeviceInfo& d : b->devices())
                    names_.push_back(d.name);
    }

    // The session for device `index` of `backend`, or nullptr with why.
    cuda_baseline::Session* session(const std::string& backend, size_t index,
                                    const std::string& device, std::string& why) {
        int ordinal = -1;
        if (backend == "cuda") {
            ordinal = int(index);
        } else {
            auto it = std::find(names_.begin(), names_.end(), device);
            if (it != names_.end()) ordinal = int(it - names_.begin());
        }
        if (ordinal < 0) {
            why = "no CUDA baseline: the cuda backend has no device named '" + device + "'";
            return nullptr;
        }
        auto& s = sessions_[ordinal];
        if (!s) s = cuda_baseline::Session::open(ordinal, why_[ordinal]);
        why = why_[ordinal];
        return s.get();
    }

private:
    std::vector<std::string> names_;
    std::map<int, std::unique_ptr<cuda_baseline::Session>> sessions_;
    std::map<int, std::string> why_;
};

Baseline from_figure(const cuda_baseline::Figure& f, double scale) {
    if (!f.error.empty()) return {f.name, 0, f.error};
    if (!f.verified) return {f.name, 0, "its output was not checked"};
    return {f.name, f.value * scale, ""};
}

Baseline gpu_baseline(cuda_baseline::Session& s, const std::string& kernel, size_t size, Shape sh,
                      int reps) {
    // The nvcc baseline of vector_add is the float4 kernel: the one to compare float4 with.
    if (kernel == "vector_add" || kernel == "vector_add_float4")
        return from_figure(s.vector_add(size, reps), 1);
    if (kernel == "reduce" || kernel == "warp_reduce") return from_figure(s.reduce(size, reps), 1);
    for (const char* t : {"f16", "bf16", "tf32"})
        if (kernel == std::string("matmul_") + t || kernel == std::string("gemm_") + t)
            return from_figure(s.gemm_ex(t, sh.m, sh.n, sh.k, reps), 1);
    return from_figure(s.sgemm(sh.m, sh.n, sh.k, reps), 1);
}

struct Options {
    std::string backend, kernel, json_path;
    size_t size = 0;
    Shape mnk{0, 0, 0}; // --mnk: the matrix-fragment matmuls' m, n, k instead of --size's
    int reps = 10;
    bool first_launch = false;
    bool startup = false;
    bool compile = false;
    bool routing = false;
    std::string plot_path;
};

// Microseconds of host time per launch of an empty kernel (`groups` groups of 32) in one
// round of `launches`; the queue is drained after the round, untimed.
double plexus_launch_round_us(Runtime& rt, const Target& target, int launches, unsigned groups) {
    static const auto empty = plexus::kernel("empty", [] {});
    const double s = seconds_of([&] {
        for (int i = 0; i < launches; ++i)
            rt.launch(target, empty, Grid(32 * groups).local_size(32));
    });
    rt.finish();
    return s / launches * 1e6;
}

// softmax_f32 / bf16 and layernorm_f32 / bf16 on a GPU at 32768 x 1024 and 8192 x 8192 (or
// --size / 1000 rows of 1000), each beside cuMemcpyDtoD of the x and y bytes, counted read +
// written like the kernel's.
std::vector<nlohmann::json> row_gpu_rows(Runtime& rt, const Backend& b, size_t d,
                                         const std::string& kernel, const Options& o,
                                         GpuBaselines& gpu) {
    const DeviceInfo& dev = b.devices()[d];
    const Target target{b.name(), int(d)};
    std::vector<std::pair<int, int>> shapes = {{32768, 1024}, {8192, 8192}};
    if (o.size) shapes = {{int(std::max<size_t>(1, o.size / 1000)), 1000}};
    std::vector<nlohmann::json> rows;
    for (const auto& [r, c] : shapes) {
        auto p = samples::make_row_problem(kernel, r, c, rt, 7);
        const double value = p->work() / median_seconds(o.reps, [&] { p->run(rt, target); }) / 1e9;
        std::string why;
        cuda_baseline::Session* session = gpu.session(b.name(), d, dev.name, why);
        Baseline base{"", 0, why};
        if (session) {
            const cuda_baseline::Figure f = session->d2d_copy_gbps(size_t(p->work() / 2), o.reps);
            base = {f.name, f.error.empty() ? f.value : 0, f.error};
        }
        rows.push_back(result_row(kernel, b, dev.name, p->size_text(), p->unit(), value,
                                  p->check().ok(), base.name, base.value, base.error));
    }
    return rows;
}

nlohmann::json bench_row(Runtime& rt, const Backend& b, size_t d, const std::string& kernel,
                         const Options& o, std::map<std::string, Baseline>& gpu_baselines,
                         GpuBaselines& gpu) {
    const DeviceInfo& dev = b.devices()[d];
    bool is_gpu = dev.type == DeviceType::GPU;
    bool matmul = kernel.rfind("matmul", 0) == 0 || kernel.rfind("gemm", 0) == 0;
    size_t size = o.size   ? o.size
                  : matmul ? (is_gpu ? 4096 : 1024)
                           : (is_gpu ? size_t(1) << 28 : size_t(1) << 25);
    Target target{b.name(), int(d)};
    // The matmuls --mnk shapes: the matrix-fragment families and px::lib::matmul's (gemm_*).
    const bool fragments = kernel == "matmul_f16" || kernel == "matmul_bf16" ||
                           kernel == "matmul_tf32" || kernel.rfind("gemm", 0) == 0;
    const Shape sh = fragments && o.mnk.m ? o.mnk : matmul_shape(size);
    auto p = fragments && o.mnk.m ? samples::make_mma_problem(kernel, sh.m, sh.n, sh.k, rt, 7)
                                  : samples::make_problem(kernel, size, rt, 7);
    int reps = matmul && !is_gpu ? std::max(1, o.reps / 3) : o.reps;
    double value = 0;
    Baseline base;
    if (kernel == "softmax_bf16") {
        // Its baseline is the same kernel in f32, on the same device: what bf16 saves in bytes.
        auto f32 = samples::make_problem("softmax_f32", size, rt, 7);
        auto [s, sf] = median_seconds_alternating(
            reps, [&] { p->run(rt, target); }, [&] { f32->run(rt, target); });
        value = p->work() / s / 1e9;
        base = {"plexus softmax_f32, the same kernel in f32", f32->work() / sf / 1e9,
                f32->check().ok() ? "" : "its output was wrong"};
    } else if (!is_gpu) {
        // The host baseline shares the CPU's memory system: timed alternately with plexus.
        HostBaseline hb = host_baseline(kernel, size, sh);
        auto [s, sb] = median_seconds_alternating(reps, [&] { p->run(rt, target); }, hb.run);
        value = p->work() / s / 1e9;
        base = {hb.name, hb.work / sb / 1e9, ""};
    } else {
        value = p->work() / median_seconds(reps, [&] { p->run(rt, target); }) / 1e9;
        std::string key = kernel + "/" + p->size_text() + "/" + dev.name;
        if (!gpu_baselines.count(key)) {
            std::string why;
            cuda_baseline::Session* session = gpu.session(b.name(), d, dev.name, why);
            gpu_baselines[key] =
                session ? gpu_baseline(*session, kernel, size, sh, o.reps) : Baseline{"", 0, why};
        }
        base = gpu_baselines[key];
    }
    bool verified = p->check().ok();
    return result_row(kernel, b, dev.name, p->size_text(), p->unit(), value, verified, base.name,
                      base.value, base.error);
}

// The samples of the type and operation extensions, each with its size here (elements; particles:
// bodies, math_catalog: inputs per function), for the rows beside PoCL. --size does not apply:
// particles is quadratic in it.
const std::vector<std::pair<const char*, size_t>>& pocl_kernels() {
    static const std::vector<std::pair<const char*, size_t>> kernels = {
        {"vector_add_float4", size_t(1) << 24},
        {"saxpy_f16", size_t(1) << 24},
        {"gelu_f32", size_t(1) << 24},
        {"dequant_int8", size_t(1) << 24},
        {"softmax_bf16", size_t(1) << 24},
        {"warp_reduce", size_t(1) << 24},
        {"scan", size_t(1) << 22},
        {"histogram_wide", size_t(1) << 22},
        {"particles", 8192},
        {"math_catalog", size_t(1) << 14}};
    return kernels;
}

// The first OpenCL device that is a CPU (PoCL), or null; `at` is set to it.
const DeviceInfo* pocl_device(Runtime& rt, Target& at) {
    for (const Backend* b : rt.backends())
        if (b->name() == "opencl")
            for (size_t d = 0; d < b->devices().size(); ++d)
                if (b->devices()[d].type == DeviceType::CPU) {
                    at = Target{b->name(), int(d)};
                    return &b->devices()[d];
                }
    return nullptr;
}

// A sample on the native backend beside the same problem on the OpenCL CPU device: the same
// kernel through another compiler of work-items for the same CPU. Each side has its own
// instance of the problem (the same seed), so no buffer moves between the backends, and the
// two are timed alternately. Where PoCL cannot run the kernel, the row says why.
nlohmann::json pocl_row(Runtime& rt, const Backend& b, size_t d, const char* kernel, size_t size,
                        const Options& o) {
    const std::string device = b.devices()[d].name;
    const Target ours{b.name(), int(d)};
    auto p = samples::make_problem(kernel, size, rt, 7);
    Target pocl;
    const DeviceInfo* pocl_dev = pocl_device(rt, pocl);
    std::string why = pocl_dev ? "" : "no OpenCL CPU device (PoCL) is loaded";
    std::unique_ptr<samples::Problem> q;
    if (pocl_dev) {
        q = samples::make_problem(kernel, size, rt, 7);
        try {
            q->run(rt, pocl);
        } catch (const Error& e) {
            why = samples::drop_reason(e, pocl);
            if (why.empty()) why = e.what();
        }
    }
    const int reps = std::max(1, o.reps / 3);
    double value = 0, base = 0;
    const std::string base_name =
        "PoCL" + (pocl_dev ? " on " + pocl_dev->name : std::string()) + ": the same kernel";
    if (why.empty()) {
        auto [s, sq] =
            median_seconds_alternating(reps, [&] { p->run(rt, ours); }, [&] { q->run(rt, pocl); });
        value = p->work() / s / 1e9;
        base = q->work() / sq / 1e9;
        if (!q->check().ok()) why = "its output was wrong";
    } else {
        value = p->work() / median_seconds(reps, [&] { p->run(rt, ours); }) / 1e9;
    }
    const bool verified = p->check().ok();
    nlohmann::json row = result_row(kernel, b, device, p->size_text(), p->unit(), value, verified,
                                    base_name, why.empty() ? base : 0, why);
    row["against"] = "PoCL";
    if (why.empty()) std::printf("        baseline of the row above: %s\n", base_name.c_str());
    return row;
}

// What an empty launch costs without plexus on one device: one round at a time, or -1 with
// why set. One group of 32 work-items, or on the native backend one per hardware thread.
struct RawLaunch {
    std::string name; // empty: the backend has no raw launch to compare with (no row)
    unsigned groups = 1;
    std::function<double(int launches, std::string& why)> round_us; // empty: not measurable here
};

RawLaunch raw_launch(const Backend& b, size_t d, GpuBaselines& gpu, std::string& why) {
    const DeviceInfo& dev = b.devices()[d];
    RawLaunch raw;
    if (b.name() == "cuda") {
        raw.name = "cuLaunchKernel of an empty kernel, 1 block of 32";
        if (cuda_baseline::Session* session = gpu.session(b.name(), d, dev.name, why))
            raw.round_us = [session](int launches, std::string& failed) {
                cuda_baseline::Figure f = session->empty_launch_round_us(launches);
                if (!f.error.empty()) failed = f.error;
                return f.error.empty() ? f.value : -1;
            };
    } else if (b.name() == "opencl") {
        raw.name = "clEnqueueNDRangeKernel of an empty kernel, 1 group of 32, no event";
        std::shared_ptr<launch_baseline::OpenCL> cl =
            launch_baseline::OpenCL::open(dev.platform, dev.name, why);
        if (cl)
            raw.round_us = [cl](int launches, std::string& failed) {
                return cl->round_us(launches, failed);
            };
    } else if (b.name() == "native") {
        auto pool = std::make_shared<launch_baseline::ForkJoin>();
        raw.groups = pool->threads();
        raw.name = "std::thread fork-join of " + std::to_string(raw.groups) + " empty groups";
        raw.round_us = [pool](int launches, std::string&) {
            return pool->round_us(launches, pool->threads());
        };
    }
    return raw;
}

// The launch-overhead row: plexus's host cost per launch of an empty kernel beside the raw
// call of its backend, in alternating rounds so that a busy host slows both alike; the
// median round of each. null for a backend with no raw launch.
nlohmann::json launch_row(Runtime& rt, const Backend& b, size_t d, GpuBaselines& gpu) {
    const DeviceInfo& dev = b.devices()[d];
    // Few enough launches per round that the device's queue never fills: the figure is the
    // host's cost, not the rate at which the GPU retires empty kernels.
    const int launches = 200, rounds = 21;
    const Target target{b.name(), int(d)};
    std::string why;
    RawLaunch raw = raw_launch(b, d, gpu, why);
    if (raw.name.empty()) return nullptr;
    plexus_launch_round_us(rt, target, launches,
                           raw.groups); // warm-up: compiles and loads the kernel
    std::vector<double> ours, theirs;
    for (int r = 0; r < rounds; ++r) {
        ours.push_back(plexus_launch_round_us(rt, target, launches, raw.groups));
        if (!raw.round_us || !why.empty()) continue;
        if (double us = raw.round_us(launches, why); us >= 0) theirs.push_back(us);
    }
    const double us = median(ours);
    Baseline base{raw.name, why.empty() && !theirs.empty() ? median(theirs) : 0, why};
    const std::string size =
        std::to_string(launches) + " launches of " + std::to_string(raw.groups) + "x32";
    nlohmann::json row = {
        {"kernel", "empty_launch"}, {"backend", b.name()}, {"device", dev.name}, {"size", size},
        {"unit", "us/launch"},      {"value", us},         {"verified", true}};
    row["baseline"] = {{"name", base.name}, {"value", base.value}};
    if (!base.error.empty()) row["baseline"]["error"] = base.error;
    // A time: the ratio is baseline / value, so that above 1 still means faster than the baseline.
    row["ratio"] = base.value > 0 ? nlohmann::json(base.value / us) : nlohmann::json(nullptr);
    row["above_baseline_us"] =
        base.value > 0 ? nlohmann::json(us - base.value) : nlohmann::json(nullptr);
    std::printf("%-7s %-28.28s %-17s %-22s %10.2f %-8s %10.2f %6.2f yes (%+.2f us over raw)\n",
                b.name().c_str(), dev.name.c_str(), "empty_launch", size.c_str(), us, "us",
                base.value, base.value > 0 ? base.value / us : 0.0, us - base.value);
    if (!base.error.empty()) std::printf("        baseline not measured: %s\n", base.error.c_str());
    return row;
}

int usage_error(const std::string& message) {
    std::cerr << "plexus bench: " << message << "\n";
    return 2;
}

int run_bench(const std::vector<std::string>& args) {
    if (!args.empty() && args[0] == "--first-launch-child")
        return run_first_launch_child({args.begin() + 1, args.end()});
    if (!args.empty() && args[0] == "--startup-child")
        return run_startup_child({args.begin() + 1, args.end()});
    Options o;
    for (size_t i = 0; i < args.size(); ++i) {
        if (args[i] == "--help" || args[i] == "-h") {
            std::cout
                << "usage: plexus bench [--backend NAME] [--kernel NAME] [--size N] [--mnk M,N,K] "
                   "[--reps N] [--json FILE] [--plot FILE]\n"
                   "       plexus bench --first-launch [--json FILE] [--plot FILE]\n"
                   "       plexus bench --startup [--json FILE]\n"
                   "       plexus bench --compile [--backend NAME] [--kernel NAME] [--json FILE]\n"
                   "       plexus bench --routing [--kernel NAME] [--size N] [--reps N] [--json "
                   "FILE]\n"
                   "  kernels: vector_add, vector_add_float4, reduce, warp_reduce, matmul_naive, "
                   "matmul_tiled (matmul: all;\n"
                   "           on a CPU each also beside OpenBLAS cblas_sgemm, opened at run time "
                   "where installed),\n"
                   "           matmul_f16, matmul_bf16, matmul_tf32 (matrix fragments; GPU: beside "
                   "cublasGemmEx),\n"
                   "           gemm_f32, gemm_tf32, gemm_f16, gemm_bf16 (px::lib::matmul: plexus's "
                   "kernels and the\n"
                   "           backend's library routine, tuned; beside cuBLAS on a GPU, OpenBLAS "
                   "for gemm_f32 on a CPU),\n"
                   "           softmax_f32 / bf16, layernorm_f32 / bf16 (GPU: 32768 x 1024 and "
                   "8192 x 8192 "
                   "beside "
                   "cuMemcpyDtoD;\n"
                   "           CPU: softmax_bf16 beside softmax_f32), empty_launch (cuda, "
                   "opencl, native),\n"
                   "           and on native CPU devices vector_add_float4, saxpy_f16, "
                   "gelu_f32, dequant_int8, softmax_bf16,\n"
                   "           warp_reduce, scan, histogram_wide, particles, math_catalog beside "
                   "PoCL (the same kernel),\n"
                   "           transfer (Queue::write / read, pageable and pinned, beside the raw "
                   "copy; --size in bytes),\n"
                   "           pipeline (three overlapped queues beside the slowest stage alone),\n"
                   "           multi_device_matmul (all devices of a backend beside its device 0 "
                   "alone),\n"
                   "           peer_copy (device 0 to 1 through Queue::prefetch, beside "
                   "cuMemcpyPeer on CUDA)\n"
                   "  the interpreter is left out unless named with --backend\n"
                   "  --size N: elements, or for matmuls m = N, n = N - N/8, k = N + 3; --mnk: the "
                   "shape of\n"
                   "            matmul_f16, matmul_bf16, matmul_tf32 and gemm_* (8192,8192,8192)\n"
                   "  --plot: an SVG of each row's ratio to its baseline (with --first-launch: the "
                   "phases)\n"
                   "  --first-launch: vector_add's first launch on the CUDA backend in new "
                   "processes\n"
                   "  --startup: Runtime construction per backend and for all in new processes, "
                   "beside\n"
                   "             cuInit + context and clGetPlatformIDs + clGetDeviceIDs\n"
                   "  --compile: per sample kernel, its IR, JSON and generated code sizes and each "
                   "generator's\n"
                   "             time; per backend, the compile cold and from the disk cache\n"
                   "  --routing: per sample, where routing \"measured\" sends it (fresh history) "
                   "and each\n"
                   "             candidate device's time pinned\n";
            return 0;
        }
        if (args[i] == "--first-launch" || args[i] == "--startup" || args[i] == "--compile" ||
            args[i] == "--routing") {
            (args[i] == "--startup"   ? o.startup
             : args[i] == "--compile" ? o.compile
             : args[i] == "--routing" ? o.routing
                                      : o.first_launch) = true;
            continue;
        }
        if (i + 1 >= args.size()) return usage_error("'" + args[i] + "' needs a value");
        if (args[i] == "--backend")
            o.backend = args[++i];
        else if (args[i] == "--kernel")
            o.kernel = args[++i];
        else if (args[i] == "--json")
            o.json_path = args[++i];
        else if (args[i] == "--plot")
            o.plot_path = args[++i];
        else if (args[i] == "--size")
            o.size = std::stoul(args[++i]);
        else if (args[i] == "--mnk") {
            if (!parse_mnk(args[++i], o.mnk.m, o.mnk.n, o.mnk.k))
                return usage_error("--mnk takes three positive sizes M,N,K, not '" + args[i] + "'");
        } else if (args[i] == "--reps")
            o.reps = std::max(1, std::stoi(args[++i]));
        else
            return usage_error("unexpected argument '" + args[i] + "'");
    }
    if (o.first_launch) return run_first_launch(o.json_path, o.plot_path);
    if (o.startup) return run_startup(o.json_path);
    if (o.compile) return run_compile_bench(o.backend, o.kernel, o.json_path);
    if (o.routing) return run_routing_bench(o.kernel, o.size, o.reps, o.json_path);

    Runtime rt(load_config());
    GpuBaselines gpu(rt);
    nlohmann::json results = nlohmann::json::array();
    std::map<std::string, Baseline> baselines;
    std::printf("%-7s %-28s %-17s %-22s %10s %-8s %10s %6s %s\n", "backend", "device", "kernel",
                "size", "value", "unit", "baseline", "ratio", "verified");
    auto wanted = [&](const std::string& kernel) {
        return o.kernel.empty() || kernel == o.kernel ||
               (o.kernel == "matmul" && kernel.rfind("matmul", 0) == 0);
    };
    // One kind of row, when wanted; a failure becomes a row that says so.
    auto attempt = [&](const Backend& b, const std::string& device, const char* kernel,
                       const std::function<void()>& f) {
        if (!wanted(kernel)) return;
        try {
            f();
        } catch (const std::exception& e) {
            std::printf("%-7s %-28.28s %-17s failed: %s\n", b.name().c_str(), device.c_str(),
                        kernel, e.what());
            results.push_back({{"kernel", kernel},
                               {"backend", b.name()},
                               {"device", device},
                               {"error", e.what()},
                               {"verified", false}});
        }
        std::fflush(stdout);
    };
    for (const Backend* b : rt.backends()) {
        if (o.backend.empty() ? b->name() == "interp" : b->name() != o.backend) continue;
        for (size_t d = 0; d < b->devices().size(); ++d) {
            const DeviceInfo& dev = b->devices()[d];
            for (std::string kernel :
                 {"vector_add", "vector_add_float4", "reduce", "warp_reduce", "matmul_naive",
                  "matmul_tiled", "matmul_f16", "matmul_bf16", "matmul_tf32", "gemm_f32",
                  "gemm_tf32", "gemm_f16", "gemm_bf16", "softmax_f32", "softmax_bf16",
                  "layernorm_f32", "layernorm_bf16"}) {
                // On a CPU, softmax_bf16's row has the f32 kernel as its baseline; the row
                // kernels' other rows are a GPU's.
                const bool row_kernel =
                    kernel.rfind("softmax", 0) == 0 || kernel.rfind("layernorm", 0) == 0;
                if (row_kernel && kernel != "softmax_bf16" && dev.type != DeviceType::GPU) continue;
                if (row_kernel && dev.type == DeviceType::GPU) {
                    attempt(*b, dev.name, kernel.c_str(), [&] {
                        for (auto& row : row_gpu_rows(rt, *b, d, kernel, o, gpu))
                            results.push_back(std::move(row));
                    });
                    continue;
                }
                attempt(*b, dev.name, kernel.c_str(), [&] {
                    results.push_back(bench_row(rt, *b, d, kernel, o, baselines, gpu));
                    // --mnk shapes only the fragment matmuls; the OpenBLAS row uses --size's shape.
                    if (dev.type != DeviceType::GPU && !o.mnk.m &&
                        (kernel.rfind("matmul", 0) == 0 || kernel == "gemm_f32"))
                        results.push_back(openblas_row(*b, dev.name, kernel, results.back(),
                                                       o.size ? o.size : 1024,
                                                       std::max(1, o.reps / 3)));
                });
            }
            const bool is_gpu = dev.type == DeviceType::GPU;
            // The queue rows: 1 GiB transfers (or --size bytes), the pipeline of 2^28 floats on
            // a GPU and 2^25 on a CPU (or --size), and once per backend the matmuls split across
            // its devices (f32 at 16384, a size at which one GPU works for about 200 ms).
            attempt(*b, dev.name, "transfer", [&] {
                std::string why;
                cuda_baseline::Session* session =
                    b->name() == "cuda" ? gpu.session(b->name(), d, dev.name, why) : nullptr;
                for (auto& row : transfer_rows(rt, *b, d, o.size ? o.size : size_t(1) << 30, o.reps,
                                               session, why))
                    results.push_back(std::move(row));
            });
            attempt(*b, dev.name, "pipeline", [&] {
                std::string why;
                cuda_baseline::Session* session =
                    b->name() == "cuda" ? gpu.session(b->name(), d, dev.name, why) : nullptr;
                const size_t n = o.size ? o.size : is_gpu ? size_t(1) << 28 : size_t(1) << 25;
                results.push_back(pipeline_row(rt, *b, int(d), n, o.reps, session));
                // Once per backend with several devices: the chunks dealt out to all of them.
                if (d == 0 && b->devices().size() > 1)
                    results.push_back(pipeline_row(rt, *b, -1, n, o.reps, session));
            });
            if (d == 0)
                attempt(*b, dev.name, "peer_copy", [&] {
                    std::string why;
                    cuda_baseline::Session* session =
                        b->name() == "cuda" && b->devices().size() > 1
                            ? gpu.session(b->name(), 1, b->devices()[1].name, why)
                            : nullptr;
                    if (nlohmann::json row = peer_copy_row(
                            rt, *b, o.size ? o.size : size_t(1) << 30, o.reps, session, why);
                        !row.is_null())
                        results.push_back(std::move(row));
                });
            // f16 and bf16 at 20480, where one H100 or H200 works for about 130 ms on tensor cores.
            if (d == 0)
                for (const char* kernel :
                     {"multi_device_matmul", "multi_device_matmul_f16", "multi_device_matmul_bf16"})
                    attempt(*b, dev.name, kernel, [&] {
                        const size_t gpu_size =
                            std::string(kernel) == "multi_device_matmul" ? 16384 : 20480;
                        results.push_back(multi_device_row(rt, *b, kernel,
                                                           o.size   ? o.size
                                                           : is_gpu ? gpu_size
                                                                    : 512,
                                                           is_gpu ? std::max(1, o.reps / 3) : 1));
                    });
            // The type and operation samples beside PoCL, on the native backend's CPU.
            if (b->name() == "native" && dev.type == DeviceType::CPU)
                for (const auto& [kernel, size] : pocl_kernels())
                    attempt(*b, dev.name, kernel,
                            [&] { results.push_back(pocl_row(rt, *b, d, kernel, size, o)); });
            attempt(*b, dev.name, "empty_launch", [&] {
                if (nlohmann::json row = launch_row(rt, *b, d, gpu); !row.is_null())
                    results.push_back(std::move(row));
            });
        }
    }
    if (!o.json_path.empty()) {
        write_json(o.json_path, {{"results", results}});
    }
    if (!o.plot_path.empty())
        write_plot(
            o.plot_path,
            ratio_chart(results,
                        "plexus bench: throughput / baseline of the same run (higher is better)"));
    std::printf("CPU baselines run on the host CPU (%u threads); GPU baselines are nvcc-compiled "
                "CUDA and cuBLAS\n",
                std::max(1u, std::thread::hardware_concurrency()));
    return 0;
}

const Registration reg{
    {"bench", run_bench, "measure the sample kernels against hand-written baselines"}};

} // namespace
} // namespace plexus::app
