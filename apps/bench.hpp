// Pieces of `plexus bench` shared by its files.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "plexus/config.hpp"
#include "plexus/runtime.hpp"

namespace plexus::app {

// Median wall-clock seconds of `reps` calls of f, after one untimed call.
double median_seconds(int reps, const std::function<void()>& f);

// Median seconds of `reps` runs of each of f and g, timed alternately after one untimed run of
// each: a CPU's bandwidth drifts (other tenants, frequency), and alternating lets the drift
// hit both sides alike.
std::pair<double, double> median_seconds_alternating(int reps, const std::function<void()>& f,
                                                     const std::function<void()>& g);

double ms_since(std::chrono::steady_clock::time_point t0);
// A new directory under the system's temporary one (an empty disk cache), removed with the
// object; throws Error(InvalidArgument) when it cannot be made.
struct TempDir {
    std::string path;
    TempDir();
    ~TempDir();
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
};

// Writes `doc` to `path` (indented); throws Error(InvalidArgument) naming the file when it cannot.
void write_json(const std::string& path, const nlohmann::json& doc);
// The middle element of v once sorted (the upper one of an even count).
double median(std::vector<double> v);
// Disables the built-in backends other than `backend`, so that they are never opened.
void enable_only(Config& config, const std::string& backend);

// Runs `ENV plexus bench ARGS` (this executable) in a new process and returns the JSON object
// it prints last, or {"error": ...}.
nlohmann::json run_child(const std::string& env, const std::string& args);

// One row of `plexus bench`: the JSON object and its printed line (ratio = value / baseline; a
// baseline of 0 with `base_error` says why it was not measured).
nlohmann::json result_row(const std::string& kernel, const Backend& b, const std::string& device,
                          const std::string& size, const char* unit, double value, bool verified,
                          const std::string& base_name, double base_value,
                          const std::string& base_error);

// The rows of the host API 2 (bench_queues.cpp), each beside its raw baseline in the same run:
// `transfer`: Queue::write / read of `bytes` from pageable and from HostMemory, against a
// pinned cuMemcpy (CUDA), a blocking clEnqueue{Write,Read}Buffer from the same memory (OpenCL)
// or a memcpy (CPU backends); `pipeline`: the overlapped sample against its slowest stage
// alone; `peer_copy`: device 0 to device 1; `multi_device_matmul`: all devices of the backend
// against its device 0 alone. `cuda` is the CUDA baseline session of the device, null with cuda_why
// when there is none.
namespace cuda_baseline {
class Session;
}
std::vector<nlohmann::json> transfer_rows(Runtime& rt, const Backend& b, size_t d, size_t bytes,
                                          int reps, cuda_baseline::Session* cuda,
                                          const std::string& cuda_why);
// Device d, or with d < 0 every device of the backend (each with its own queues, beside the
// same run on device 0 alone). `cuda`: device d's (or 0's) CUDA session, for the raw duplex
// copy beside the row; may be null.
nlohmann::json pipeline_row(Runtime& rt, const Backend& b, int d, size_t n, int reps,
                            cuda_baseline::Session* cuda);
// Device 0 -> 1 of a backend with two devices or more, through Queue::prefetch, beside
// cuMemcpyPeer (`cuda`: the session of device 1); null for a backend with one device.
nlohmann::json peer_copy_row(Runtime& rt, const Backend& b, size_t bytes, int reps,
                             cuda_baseline::Session* cuda, const std::string& cuda_why);
// `kernel`: multi_device_matmul, multi_device_matmul_f16 or multi_device_matmul_bf16.
nlohmann::json multi_device_row(Runtime& rt, const Backend& b, const std::string& kernel,
                                size_t size, int reps);

// `plexus bench --startup`: Runtime construction in fresh processes, per backend and for all,
// beside the vendors' own start-up calls. `child` measures one and prints it as JSON.
int run_startup(const std::string& json_path);
int run_startup_child(const std::vector<std::string>& args);

// `plexus bench --first-launch`: the cost of vector_add's first launch on the CUDA backend in
// fresh processes (driver JIT cache off), cold and with plexus's disk cache warm, beside the
// raw NVRTC + cuModuleLoadData path. `child` runs one measurement and prints it as JSON.
int run_first_launch(const std::string& json_path, const std::string& plot_path);
int run_first_launch_child(const std::vector<std::string>& args);
// `plexus bench --compile` (bench_compile.cpp): per sample kernel the size of its IR, JSON and
// generated code and each generator's time, then per backend the compile cold and from the disk
// cache.
int run_compile_bench(const std::string& only_backend, const std::string& only_kernel,
                      const std::string& json_path);

// `plexus bench --routing` (bench_routing.cpp): per sample, measured routing's choice beside
// each candidate device's time pinned.
int run_routing_bench(const std::string& only_kernel, size_t size, int reps,
                      const std::string& json_path);

} // namespace plexus::app
