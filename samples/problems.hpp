// Sample problems: a sample kernel with random inputs of a given size, a way to run it on a
// chosen backend, and a check of every output element against a host reference. The e2e
// suite, `plexus run` and `plexus bench` all use these, so each check is written once.
#pragma once

#include "plexus/plexus.hpp"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace plexus::samples {

struct CheckResult {
    size_t checked = 0;    // output elements compared
    size_t bad = 0;        // elements outside the tolerance
    double max_error = 0;  // largest |got - want| / bound seen (<= 1 passes)
    std::string first_bad; // "element 17: got 3, want 4"
    bool ok() const { return checked > 0 && bad == 0; }
};

class Problem {
public:
    virtual ~Problem() = default;
    virtual std::string kernel() const = 0;
    virtual std::string size_text() const = 0; // "n=1048576", "m=n=k=1024"
    // Launches everything the problem needs on `target` (several launches for scan) and waits.
    virtual void run(Runtime& rt, const Target& target) = 0;
    // Compares every output element with the host reference; the tolerance is in tolerance().
    virtual CheckResult check() = 0;
    virtual std::string tolerance() const = 0;
    // For benchmarks: the work of one run() in `unit()` ("GB/s" counts bytes moved,
    // "GFLOP/s" floating-point operations).
    virtual double work() const = 0;
    virtual const char* unit() const = 0;
    // The problem's kernel family tuned for its shape on `target` (Runtime::tune: measured
    // where nothing is stored, or always with `retune`); std::nullopt for a problem that
    // launches no family.
    virtual std::optional<TuningReport> tune(Runtime&, const Target&, bool /*retune*/) {
        return std::nullopt;
    }
};

// The problem names: vector_add, reduce, warp_reduce, matmul_naive, matmul_tiled, transpose, scan,
// histogram, and those of the IR's types: vector_add_float4, saxpy_f16, dequant_int8,
// softmax_bf16, softmax_f32, particles; those of queues (queue_problems.hpp); math_catalog.
const std::vector<std::string>& problem_names();

// `size` is the problem's main dimension (elements, or the matrix side for matmul and
// transpose; matmul uses m = size, n = size - size/8, k = size + 3 to stay off multiples).
std::unique_ptr<Problem> make_problem(const std::string& name, size_t size, Runtime& rt,
                                      unsigned seed);

// softmax_bf16, softmax_f32, layernorm_bf16 or layernorm_f32 of `rows` x `cols` random values.
std::unique_ptr<Problem> make_row_problem(const std::string& name, int rows, int cols, Runtime& rt,
                                          unsigned seed);

// The family of a sample tuned ahead of time for a shape (`plexus tune`): matmul_* and gemm_*
// take {m, n, k}, softmax_* and layernorm_* {rows, cols}, sum_f32 and scan_i32 {n}. An unknown
// name or a shape of the wrong length is an InvalidArgument error that says what is expected.
TuningReport tune_family(const std::string& name, const std::vector<int>& shape, Runtime& rt,
                         const Target& target, bool retune);

// When `e` is the NoBackend error of a launch on `target` and the router dropped that device
// for the kernel (a capability it lacks: "the device lacks subgroups (cl_khr_subgroups), ..."),
// the router's reason; otherwise "". `plexus run` and the suites skip such a device, saying why.
std::string drop_reason(const Error& e, const Target& target);

// Sizes the e2e suite runs, smaller ones for a slow (interpreter) backend.
std::vector<size_t> test_sizes(const std::string& name, bool slow);
// The size `plexus run` uses by default.
size_t run_size(const std::string& name, bool slow);

} // namespace plexus::samples
