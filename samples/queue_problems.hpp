// The samples of px::Queue: multi_device_matmul (f32, f16, bf16) and pipeline (see
// queue_problems.cpp).
#pragma once

#include "problems.hpp"

#include <functional>
#include <random>
#include <span>

namespace plexus::samples {

// A problem that may spread over several devices of its backend.
class MultiDeviceProblem : public Problem {
public:
    // The device index each part of the last run() went to.
    virtual std::vector<int> devices_used() const = 0;
};

// A problem of several stages that run on their own queues and overlap (pipeline).
class StagedProblem : public MultiDeviceProblem {
public:
    static constexpr int stages = 3; // upload, compute, download
    // Only that stage of run(), for each chunk: what the bench compares the overlap with.
    virtual void run_stage(Runtime& rt, const Target& t, int stage) = 0;
};

std::unique_ptr<Problem> make_queue_problem(const std::string& name, size_t size, Runtime& rt,
                                            std::mt19937& g);
const std::vector<std::string>& queue_problem_names();

// Freivalds' test of c = a b for sizes whose reference takes hours: for three random vectors x
// of +-1, every row of c x against a (b x) in double, within 1e-5 sum_pj |a_ip b_pj| + 1e-6 n
// (each element's own tolerance summed over the row; `bound`, when given, replaces the 1e-5
// sum term). A wrong element shows in its row's sum unless errors cancel exactly for all three x.
CheckResult check_matmul_rows(const std::vector<float>& a, const std::vector<float>& b,
                              std::span<const float> c, int m, int n, int k,
                              std::function<double(double)> bound = {});

// Every element of c = a b (m x k times k x n, row-major) against a double reference, within
// 1e-5 sum_p |a_ip b_pj| + 1e-6, or bound(sum_p |a_ip b_pj|) when given.
CheckResult check_matmul(const std::vector<float>& a, const std::vector<float>& b,
                         std::span<const float> c, int m, int n, int k,
                         std::function<double(double)> bound = {});

} // namespace plexus::samples
