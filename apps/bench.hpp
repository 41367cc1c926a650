// Pieces of `plexus bench` shared by its files.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "plexus/config.hpp"

namespace plexus::app {

// Median wall-clock seconds of `reps` calls of f, after one untimed call.
double median_seconds(int reps, const std::function<void()>& f);

double ms_since(std::chrono::steady_clock::time_point t0);
// The middle element of v once sorted (the upper one of an even count).
double median(std::vector<double> v);
// Disables the built-in backends other than `backend`, so that they are never opened.
void enable_only(Config& config, const std::string& backend);

// Runs `ENV plexus bench ARGS` (this executable) in a new process and returns the JSON object
// it prints last, or {"error": ...}.
nlohmann::json run_child(const std::string& env, const std::string& args);

// `plexus bench --startup`: Runtime construction in fresh processes, per backend and for all,
// beside the vendors' own start-up calls. `child` measures one and prints it as JSON.
int run_startup(const std::string& json_path);
int run_startup_child(const std::vector<std::string>& args);

// `plexus bench --first-launch`: the cost of vector_add's first launch on the CUDA backend in
// fresh processes (driver JIT cache off), cold and with plexus's disk cache warm, beside the
// raw NVRTC + cuModuleLoadData path. `child` runs one measurement and prints it as JSON.
int run_first_launch(const std::string& json_path, const std::string& plot_path);
int run_first_launch_child(const std::vector<std::string>& args);

} // namespace plexus::app
