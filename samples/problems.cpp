// The sample problems: inputs, launches and host references (see problems.hpp).
#include "problems.hpp"

#include "kernels.hpp"
#include "math_catalog.hpp"
#include "matmul_mma.hpp"
#include "problem_util.hpp"
#include "queue_problems.hpp"
#include "typed_problems.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <random>

namespace plexus::samples {
namespace {

class VectorAdd final : public Problem {
public:
    VectorAdd(size_t n, Runtime& rt, std::mt19937& g)
        : n_(n), a_(random_floats(n, g)), b_(random_floats(n, g)), ba_(rt, a_), bb_(rt, b_),
          bc_(rt, n) {}
    std::string kernel() const override { return "vector_add"; }
    std::string size_text() const override { return "n=" + std::to_string(n_); }
    void run(Runtime& rt, const Target& t) override {
        size_t items = (n_ + vector_add_per_item - 1) / vector_add_per_item;
        rt.launch(t, vector_add(), Grid(std::max<size_t>(items, 1)), ba_, bb_, bc_, int(n_)).wait();
    }
    CheckResult check() override {
        CheckResult r;
        auto c = bc_.host();
        for (size_t i = 0; i < n_; ++i) {
            float want = a_[i] + b_[i];
            record(r, i, c[i], want, 1e-6 * std::max(1.0f, std::fabs(want)));
        }
        return r;
    }
    std::string tolerance() const override { return "|got - want| <= 1e-6 max(1, |want|)"; }
    double work() const override { return 3.0 * 4 * n_; }
    const char* unit() const override { return "GB/s"; }

private:
    size_t n_;
    std::vector<float> a_, b_;
    Buffer<float> ba_, bb_, bc_;
};

// reduce, or warp_reduce (the same sum through subgroup reductions, of the floats as float4s
// padded with zeros).
class Reduce final : public Problem {
public:
    Reduce(bool warp, size_t n, Runtime& rt, std::mt19937& g)
        : n_(n), x_(random_floats(n, g)), out_(rt, 1) {
        if (warp)
            in4_.emplace(rt, as_float4(x_));
        else
            in_.emplace(rt, x_);
    }
    std::string kernel() const override { return in4_ ? "warp_reduce" : "reduce"; }
    std::string size_text() const override { return "n=" + std::to_string(n_); }
    void run(Runtime& rt, const Target& t) override {
        // The sum starts at 0: one work-item writes it on the device, queued before the sum
        // like the nvcc baseline's cuMemsetD32Async (a host write of the 4 bytes is a blocking
        // transfer, 3% of a 1 GiB reduce on the H100).
        static const auto zero = plexus::kernel(
            "zero", {"out"}, [](Out<float> out) { If(global_id(0) == 0, [&] { out[0] = 0.0f; }); });
        rt.launch(t, zero, Grid(1), out_);
        // A GPU gets eight groups per compute unit (one wave that fills it: fewer groups
        // contend less on the final atomic), each work-item reading elements a grid apart
        // (coalesced); a CPU gets a few groups per core, each work-item one contiguous run.
        const DeviceInfo& dev = device_of(rt, t);
        const bool cpu = dev.type == DeviceType::CPU;
        const size_t n = in4_ ? (n_ + 3) / 4 : n_; // elements: floats, or float4s
        size_t groups = std::min<size_t>((n + 255) / 256,
                                         (cpu ? 4 : 8) * size_t(std::max(1u, dev.compute_units)));
        size_t items = groups * 256, run = (n + items - 1) / items;
        size_t step = cpu ? 1 : items;
        if (in4_)
            rt.launch(t, warp_reduce(), Grid(items).local_size(256), *in4_, out_, int(n), int(run),
                      int(step))
                .wait();
        else
            rt.launch(t, reduce(), Grid(items).local_size(256), *in_, out_, int(n), int(run),
                      int(step))
                .wait();
    }
    CheckResult check() override {
        double want = 0, mag = 0;
        for (float v : x_)
            want += v, mag += std::fabs(v);
        CheckResult r;
        record(r, 0, out_.host()[0], want, 1e-5 * mag + 1e-6);
        return r;
    }
    std::string tolerance() const override {
        return "|got - want| <= 1e-5 sum|x| (want in double)";
    }
    double work() const override { return 4.0 * n_; }
    const char* unit() const override { return "GB/s"; }

private:
    static std::vector<Vec4> as_float4(const std::vector<float>& x) {
        std::vector<Vec4> v((x.size() + 3) / 4, Vec4{});
        for (size_t i = 0; i < x.size(); ++i)
            v[i / 4][int(i % 4)] = x[i];
        return v;
    }
    size_t n_;
    std::vector<float> x_;
    std::optional<Buffer<float>> in_; // reduce's input
    std::optional<Buffer<Vec4>> in4_; // or warp_reduce's
    Buffer<float> out_;
};

class Matmul final : public Problem {
public:
    Matmul(bool tiled, size_t size, Runtime& rt, std::mt19937& g)
        : tiled_(tiled), m_(int(size)), n_(int(std::max<size_t>(1, size - size / 8))),
          k_(int(size + 3)), a_(random_floats(size_t(m_) * k_, g)),
          b_(random_floats(size_t(k_) * n_, g)), ba_(rt, a_), bb_(rt, b_),
          bc_(rt, size_t(m_) * n_) {}
    std::string kernel() const override { return tiled_ ? "matmul_tiled" : "matmul_naive"; }
    std::string size_text() const override {
        return "m=" + std::to_string(m_) + " n=" + std::to_string(n_) + " k=" + std::to_string(k_);
    }
    void run(Runtime& rt, const Target& t) override {
        if (!tiled_) {
            rt.launch(t, matmul_naive(),
                      Grid(n_, m_).local_size(matmul_naive_local, matmul_naive_local), ba_, bb_,
                      bc_, m_, n_, k_)
                .wait();
            return;
        }
        rt.launch(t, matmul_tiled(), matmul_tiled_grid(size_t(m_), size_t(n_)), ba_, bb_, bc_, m_,
                  n_, k_)
            .wait();
    }
    CheckResult check() override {
        auto c = bc_.host();
        return check_matmul(a_, b_, std::span<const float>(c.data(), c.size()), m_, n_, k_);
    }
    std::string tolerance() const override {
        return "|got - want| <= 1e-5 sum_p |a b| + 1e-6 (want in double)";
    }
    double work() const override { return 2.0 * m_ * n_ * double(k_); }
    const char* unit() const override { return "GFLOP/s"; }

private:
    bool tiled_;
    int m_, n_, k_;
    std::vector<float> a_, b_;
    Buffer<float> ba_, bb_, bc_;
};

class Transpose final : public Problem {
public:
    Transpose(size_t size, Runtime& rt, std::mt19937& g)
        : rows_(int(size)), cols_(int(size + size / 3 + 1)),
          x_(random_floats(size_t(rows_) * cols_, g)), in_(rt, x_), out_(rt, x_.size()) {}
    std::string kernel() const override { return "transpose"; }
    std::string size_text() const override {
        return "rows=" + std::to_string(rows_) + " cols=" + std::to_string(cols_);
    }
    void run(Runtime& rt, const Target& t) override {
        rt.launch(t, transpose(), Grid(cols_, rows_).local_size(16, 16), in_, out_, rows_, cols_)
            .wait();
    }
    CheckResult check() override {
        CheckResult r;
        auto y = out_.host();
        for (int row = 0; row < rows_; ++row)
            for (int col = 0; col < cols_; ++col)
                record(r, size_t(col) * rows_ + row, y[size_t(col) * rows_ + row],
                       x_[size_t(row) * cols_ + col], 0);
        return r;
    }
    std::string tolerance() const override { return "exact"; }
    double work() const override { return 2.0 * 4 * x_.size(); }
    const char* unit() const override { return "GB/s"; }

private:
    int rows_, cols_;
    std::vector<float> x_;
    Buffer<float> in_, out_;
};

// sum_f32: px::lib::sum of random floats (tuned families, two launches).
class LibSum final : public Problem {
public:
    LibSum(size_t n, Runtime& rt, std::mt19937& g)
        : n_(n), x_(random_floats(n, g)), in_(rt, x_), out_(rt, 1) {}
    std::string kernel() const override { return "sum_f32"; }
    std::string size_text() const override { return "n=" + std::to_string(n_); }
    void run(Runtime& rt, const Target& t) override {
        lib::sum(rt, in_, out_, int64_t(n_), t).wait();
    }
    std::optional<TuningReport> tune(Runtime& rt, const Target& t, bool retune) override {
        // The first pass, over x: its groups' totals, at most 512 (the second pass's input).
        Buffer<float> totals(rt, 512);
        return rt.tune(t, lib::sum_f32(), {int64_t(n_)}, retune, in_, totals, int(n_));
    }
    CheckResult check() override {
        double want = 0, mag = 0;
        for (float v : x_)
            want += v, mag += std::fabs(v);
        CheckResult r;
        record(r, 0, out_.host()[0], want, double(n_) * 0x1p-24 * mag + 1e-6);
        return r;
    }
    std::string tolerance() const override {
        return "|got - want| <= n 2^-24 sum|x| (want in double)";
    }
    double work() const override { return 4.0 * double(n_); }
    const char* unit() const override { return "GB/s"; }

private:
    size_t n_;
    std::vector<float> x_;
    Buffer<float> in_, out_;
};

// scan_i32: px::lib::inclusive_scan of random int32s (tuned families, one level per 256 times
// more elements), exact.
class LibScan final : public Problem {
public:
    LibScan(size_t n, Runtime& rt, std::mt19937& g) : n_(n), in_(rt, n), out_(rt, n) {
        std::uniform_int_distribution<int> d(-100, 100);
        x_.resize(n);
        for (auto& v : x_)
            v = d(g);
        in_.write(x_);
    }
    std::string kernel() const override { return "scan_i32"; }
    std::string size_text() const override { return "n=" + std::to_string(n_); }
    void run(Runtime& rt, const Target& t) override {
        lib::inclusive_scan(rt, in_, out_, int64_t(n_), t).wait();
    }
    std::optional<TuningReport> tune(Runtime& rt, const Target& t, bool retune) override {
        Buffer<int32_t> sums(rt, (n_ + 255) / 256); // the first level's group totals
        return rt.tune(t, lib::scan_i32(), {int64_t(n_)}, retune, in_, out_, sums, int(n_));
    }
    CheckResult check() override {
        CheckResult r;
        auto y = out_.host();
        int64_t sum = 0;
        for (size_t i = 0; i < n_; ++i) {
            sum += x_[i];
            record(r, i, y[i], double(sum), 0);
        }
        return r;
    }
    std::string tolerance() const override { return "exact"; }
    double work() const override { return 2.0 * 4 * double(n_); }
    const char* unit() const override { return "GB/s"; }

private:
    size_t n_;
    std::vector<int32_t> x_;
    Buffer<int32_t> in_, out_;
};

class Scan final : public Problem {
public:
    Scan(size_t n, Runtime& rt, std::mt19937& g) : n_(int(n)), data_(rt, n) {
        std::uniform_int_distribution<int> d(-100, 100);
        x_.resize(n);
        for (auto& v : x_)
            v = d(g);
    }
    std::string kernel() const override { return "scan"; }
    std::string size_text() const override { return "n=" + std::to_string(n_); }
    void run(Runtime& rt, const Target& t) override {
        data_.write(x_);
        result_ = scan(rt, t, data_, n_);
    }
    CheckResult check() override {
        CheckResult r;
        auto y = result_->host();
        int64_t sum = 0;
        for (int i = 0; i < n_; ++i) {
            sum += x_[i];
            record(r, size_t(i), y[i], double(sum), 0);
        }
        return r;
    }
    std::string tolerance() const override { return "exact"; }
    double work() const override { return 2.0 * 4 * n_; }
    const char* unit() const override { return "GB/s"; }

private:
    static constexpr int group = 256;
    // Scans each group, scans the group sums recursively, then adds them back.
    std::unique_ptr<Buffer<int32_t>> scan(Runtime& rt, const Target& t, Buffer<int32_t>& in,
                                          int n) {
        int groups = (n + group - 1) / group;
        auto out = std::make_unique<Buffer<int32_t>>(rt, size_t(n));
        Buffer<int32_t> sums(rt, size_t(groups));
        rt.launch(t, scan_groups(), Grid(size_t(groups) * group).local_size(group), in, *out, sums,
                  n);
        if (groups > 1) {
            auto offsets = scan(rt, t, sums, groups);
            rt.launch(t, scan_add(), Grid(size_t(groups) * group).local_size(group), *out, *offsets,
                      n);
        }
        rt.finish();
        return out;
    }
    int n_;
    std::vector<int32_t> x_;
    Buffer<int32_t> data_;
    std::unique_ptr<Buffer<int32_t>> result_;
};

class Histogram final : public Problem {
public:
    // wide: histogram_wide, 30011 bins (not a power of two) from 5000 keys on.
    Histogram(bool wide, size_t n, Runtime& rt, std::mt19937& g)
        : wide_(wide), n_(int(n)), nbins_(n < 10     ? 1
                                          : n < 5000 ? 7
                                          : wide     ? 30011
                                                     : histogram_max_bins),
          in_(rt, n), bins_(rt, size_t(nbins_)) {
        std::uniform_int_distribution<uint32_t> d(0, 1u << 30);
        x_.resize(n);
        for (auto& v : x_)
            v = d(g);
        in_.write(x_);
    }
    std::string kernel() const override { return wide_ ? "histogram_wide" : "histogram"; }
    std::string size_text() const override {
        return "n=" + std::to_string(n_) + " bins=" + std::to_string(nbins_);
    }
    void run(Runtime& rt, const Target& t) override {
        std::vector<uint32_t> zero(size_t(nbins_), 0);
        bins_.write(zero);
        if (wide_)
            rt.launch(t, histogram_wide(), histogram_wide_grid(size_t(n_)), in_, bins_, n_, nbins_)
                .wait();
        else
            rt.launch(t, histogram(), Grid(size_t(n_)).local_size(256), in_, bins_, n_, nbins_)
                .wait();
    }
    CheckResult check() override {
        std::vector<uint32_t> want(size_t(nbins_), 0);
        for (auto v : x_)
            ++want[v % uint32_t(nbins_)];
        CheckResult r;
        auto got = bins_.host();
        for (int b = 0; b < nbins_; ++b)
            record(r, size_t(b), got[b], want[b], 0);
        return r;
    }
    std::string tolerance() const override { return "exact"; }
    double work() const override { return 4.0 * n_; }
    const char* unit() const override { return "GB/s"; }

private:
    bool wide_;
    int n_, nbins_;
    std::vector<uint32_t> x_;
    Buffer<uint32_t> in_, bins_;
};

} // namespace

const std::vector<std::string>& problem_names() {
    static const std::vector<std::string> names = [] {
        std::vector<std::string> v = {"vector_add",     "reduce",    "warp_reduce", "matmul_naive",
                                      "matmul_tiled",   "transpose", "scan",        "histogram",
                                      "histogram_wide", "sum_f32",   "scan_i32"};
        v.insert(v.end(), typed_problem_names().begin(), typed_problem_names().end());
        v.insert(v.end(), mma_problem_names().begin(), mma_problem_names().end());
        v.insert(v.end(), queue_problem_names().begin(), queue_problem_names().end());
        v.push_back("math_catalog");
        return v;
    }();
    return names;
}

std::unique_ptr<Problem> make_problem(const std::string& name, size_t size, Runtime& rt,
                                      unsigned seed) {
    std::mt19937 g(seed);
    if (size == 0) throw Error(ErrorCode::InvalidArgument, "problem size 0");
    if (name == "vector_add") return std::make_unique<VectorAdd>(size, rt, g);
    if (name == "reduce" || name == "warp_reduce")
        return std::make_unique<Reduce>(name == "warp_reduce", size, rt, g);
    if (name == "matmul_naive") return std::make_unique<Matmul>(false, size, rt, g);
    if (name == "matmul_tiled" || name == "matmul")
        return std::make_unique<Matmul>(true, size, rt, g);
    if (name == "transpose") return std::make_unique<Transpose>(size, rt, g);
    if (name == "scan") return std::make_unique<Scan>(size, rt, g);
    if (name == "sum_f32") return std::make_unique<LibSum>(size, rt, g);
    if (name == "scan_i32") return std::make_unique<LibScan>(size, rt, g);
    if (name == "histogram" || name == "histogram_wide")
        return std::make_unique<Histogram>(name == "histogram_wide", size, rt, g);
    if (auto p = make_typed_problem(name, size, rt, g)) return p;
    if (auto p = make_mma_problem(name, size, rt, g)) return p;
    if (auto p = make_queue_problem(name, size, rt, g)) return p;
    if (name == "math_catalog") return make_math_catalog(size, rt, g);
    throw Error(ErrorCode::InvalidArgument, "unknown sample problem '" + name + "'");
}

TuningReport tune_family(const std::string& name, const std::vector<int>& shape, Runtime& rt,
                         const Target& target, bool retune) {
    const std::vector<std::string>& mma = mma_problem_names();
    const bool matmul = std::find(mma.begin(), mma.end(), name) != mma.end();
    const bool rows = name.rfind("softmax_", 0) == 0 || name.rfind("layernorm_", 0) == 0;
    const bool one = name == "sum_f32" || name == "scan_i32";
    const size_t want = matmul ? 3 : rows ? 2 : one ? 1 : 0;
    if (want == 0)
        throw Error(ErrorCode::InvalidArgument,
                    "plexus tune tunes matmul_f16, matmul_bf16, matmul_tf32, gemm_f32, gemm_tf32, "
                    "gemm_f16, gemm_bf16 (--shape M,N,K), softmax_f32, softmax_bf16, "
                    "layernorm_f32, layernorm_bf16 (--shape ROWS,COLS), sum_f32 and scan_i32 "
                    "(--shape N), not '" +
                        name + "'");
    if (shape.size() != want)
        throw Error(ErrorCode::InvalidArgument, name + " takes a shape of " + std::to_string(want) +
                                                    " sizes (" +
                                                    (matmul ? "M,N,K"
                                                     : rows ? "ROWS,COLS"
                                                            : "N") +
                                                    "), not " + std::to_string(shape.size()));
    std::unique_ptr<Problem> p = matmul
                                     ? make_mma_problem(name, shape[0], shape[1], shape[2], rt, 7)
                                 : rows ? make_row_problem(name, shape[0], shape[1], rt, 7)
                                        : make_problem(name, size_t(shape[0]), rt, 7);
    std::optional<TuningReport> r = p->tune(rt, target, retune);
    if (!r) throw Error(ErrorCode::Internal, "sample '" + name + "' launches no family");
    return *r;
}

std::string drop_reason(const Error& e, const Target& target) {
    if (e.code() != ErrorCode::NoBackend) return "";
    // The error lists every candidate: "\n  opencl:0 (name): reason".
    const std::string message = e.what();
    const std::string key =
        "\n  " + target.backend + ":" + std::to_string(std::max(target.device, 0)) + " (";
    const size_t at = message.find(key);
    if (at == std::string::npos) return "";
    const size_t colon = message.find("): ", at), end = message.find('\n', at + 1);
    if (colon == std::string::npos || colon > end) return "";
    return message.substr(colon + 3,
                          end == std::string::npos ? std::string::npos : end - colon - 3);
}

std::vector<size_t> test_sizes(const std::string& name, bool slow) {
    if (name.rfind("matmul_", 0) == 0 || name.rfind("multi_device_matmul", 0) == 0 ||
        name.rfind("gemm_", 0) == 0)
        return slow ? std::vector<size_t>{1, 17, 50} : std::vector<size_t>{1, 17, 70, 256};
    if (name == "transpose")
        return slow ? std::vector<size_t>{1, 17, 100} : std::vector<size_t>{1, 17, 300};
    if (name == "scan" || name == "scan_i32")
        return slow ? std::vector<size_t>{1, 255, 256, 1000, 20000}
                    : std::vector<size_t>{1, 255, 256, 1000, 70000};
    if (name == "particles")
        return slow ? std::vector<size_t>{1, 70, 130} : std::vector<size_t>{1, 70, 200, 1000};
    if (name == "math_catalog")
        return slow ? std::vector<size_t>{1, 300} : std::vector<size_t>{1, 300, 4096};
    if (name.rfind("softmax", 0) == 0 || name.rfind("layernorm", 0) == 0)
        return slow ? std::vector<size_t>{1, 33, 4000} : std::vector<size_t>{1, 33, 4000, 100000};
    return slow ? std::vector<size_t>{1, 1000, 4097, 30000}
                : std::vector<size_t>{1, 1000, 4097, 100003, 1 << 20};
}

size_t run_size(const std::string& name, bool slow) {
    if (name.rfind("matmul", 0) == 0 || name.rfind("multi_device_matmul", 0) == 0 ||
        name.rfind("gemm_", 0) == 0 || name == "transpose")
        return slow ? 48 : 256;
    if (name == "particles") return slow ? 200 : 2000;
    if (name == "math_catalog") return slow ? 1024 : 4096; // inputs per function
    if (name.rfind("softmax", 0) == 0 || name.rfind("layernorm", 0) == 0)
        return slow ? 16000 : 1000000;
    return slow ? 20000 : 1000003;
}

} // namespace plexus::samples
