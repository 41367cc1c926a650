// Pieces of `plexus bench` shared by its files.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace plexus::app {

// Median wall-clock seconds of `reps` calls of f, after one untimed call.
double median_seconds(int reps, const std::function<void()>& f);

// `plexus bench --first-launch`: the cost of vector_add's first launch on the CUDA backend in
// fresh processes (driver JIT cache off), cold and with plexus's disk cache warm, beside the
// raw NVRTC + cuModuleLoadData path. `child` runs one measurement and prints it as JSON.
int run_first_launch(const std::string& json_path);
int run_first_launch_child(const std::vector<std::string>& args);

} // namespace plexus::app
