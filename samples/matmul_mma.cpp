// The problems of matmul_f16 / matmul_bf16 / matmul_tf32, px::lib's families of plexus's own
// GEMM kernels on the matrix units (core/src/lib/mma.cpp): random inputs, launches, checks.
#include "matmul_mma.hpp"

#include "problem_util.hpp"
#include "queue_problems.hpp"

#include <algorithm>
#include <cmath>
#include <functional>

namespace plexus::samples {
namespace {

namespace px = plexus;

// Inputs of the problem's type: random in [-1, 1], rounded to it (tf32 keeps f32 inputs).
template <class T> std::vector<T> random_inputs(size_t count, std::mt19937& g) {
    std::vector<float> f = random_floats(count, g);
    return std::vector<T>(f.begin(), f.end());
}

template <class T> const MmaFamily<T>& mma_family() {
    if constexpr (std::same_as<T, px::half>)
        return matmul_f16();
    else if constexpr (std::same_as<T, px::bf16>)
        return matmul_bf16();
    else
        return matmul_tf32();
}

// How a problem computes c: plexus's family of T, or px::lib::matmul (the GEMM family of T:
// plexus's kernels and the backend's library routine), f32 products exact or through tf32.
enum class Through { Family, Lib, LibExact };

template <class T> const lib::GemmFamily<T>& gemm_family(Through via) {
    if constexpr (std::same_as<T, px::half>)
        return lib::gemm_f16();
    else if constexpr (std::same_as<T, px::bf16>)
        return lib::gemm_bf16();
    else
        return via == Through::LibExact ? lib::gemm_f32() : lib::gemm_tf32();
}

template <class T> class MatmulMma final : public Problem {
public:
    MatmulMma(int m, int n, int k, Runtime& rt, std::mt19937& g, Through via = Through::Family)
        : m_(m), n_(n), k_(k), via_(via), a_(random_inputs<T>(size_t(m_) * k_, g)),
          b_(random_inputs<T>(size_t(k_) * n_, g)), ba_(rt, a_), bb_(rt, b_),
          bc_(rt, size_t(m_) * n_) {}
    std::string kernel() const override {
        return via_ == Through::Family ? mma_family<T>().name() : gemm_family<T>(via_).name();
    }
    std::string size_text() const override {
        return "m=" + std::to_string(m_) + " n=" + std::to_string(n_) + " k=" + std::to_string(k_);
    }
    void run(Runtime& rt, const Target& t) override {
        if (via_ == Through::Family)
            rt.launch(t, mma_family<T>(), {m_, n_, k_}, ba_, bb_, bc_, m_, n_, k_).wait();
        else
            lib::matmul(rt, ba_, bb_, bc_,
                        {.m = m_, .n = n_, .k = k_, .tf32 = via_ == Through::Lib}, t)
                .wait();
    }
    CheckResult check() override {
        auto c = bc_.host();
        // Past 2^33 multiply-adds (plexus bench at 4096 and up) every element against a double
        // product would take minutes: each row of c is checked through three random +-1
        // combinations of its columns instead (c x against a (b x)), which any wrong element
        // changes.
        if (double(m_) * n_ * k_ > 0x1p33) return check_rows(c);
        CheckResult r;
        std::vector<double> want(static_cast<size_t>(n_)), mag(static_cast<size_t>(n_));
        for (int row = 0; row < m_; ++row) {
            std::fill(want.begin(), want.end(), 0.0);
            std::fill(mag.begin(), mag.end(), 0.0);
            for (int p = 0; p < k_; ++p) {
                const double av = double(float(a_[size_t(row) * k_ + p]));
                for (int col = 0; col < n_; ++col) {
                    const double prod = av * double(float(b_[size_t(p) * n_ + col]));
                    want[size_t(col)] += prod;
                    mag[size_t(col)] += std::fabs(prod);
                }
            }
            for (int col = 0; col < n_; ++col)
                record(r, size_t(row) * n_ + col, c[size_t(row) * n_ + col], want[size_t(col)],
                       bound(mag[size_t(col)]));
        }
        return r;
    }
    std::string tolerance() const override {
        return std::same_as<T, float> && via_ != Through::LibExact
                   ? "|got - want| <= (2^-9 + (k + 16) 2^-23) sum_p |a b| + 1e-6 (tensor cores "
                     "truncate each input to "
                     "tf32's 11 bits); "
                     "past 2^33 multiply-adds, per row of c x for 3 random +-1 vectors x"
                   : "|got - want| <= (k + 16) 2^-23 sum_p |a b| + 1e-6 (exact products, f32 "
                     "sums); "
                     "past 2^33 multiply-adds, per row of c x for 3 random +-1 vectors x";
    }
    double work() const override { return 2.0 * m_ * n_ * double(k_); }
    const char* unit() const override { return "GFLOP/s"; }
    std::optional<TuningReport> tune(Runtime& rt, const Target& t, bool retune) override {
        if (via_ != Through::Family)
            return rt.tune(t, gemm_family<T>(via_), {m_, n_, k_, 0, 0}, retune, ba_, bb_, bc_, m_,
                           n_, k_, 0, 0);
        return rt.tune(t, mma_family<T>(), {m_, n_, k_}, retune, ba_, bb_, bc_, m_, n_, k_);
    }

private:
    CheckResult check_rows(std::span<const float> c) const {
        const std::vector<float> a(a_.begin(), a_.end()), b(b_.begin(), b_.end());
        return check_matmul_rows(a, b, c, m_, n_, k_, [this](double mag) { return bound(mag); });
    }
    double bound(double mag) const {
        return matmul_mma_bound(k_, mag, std::same_as<T, float> && via_ != Through::LibExact);
    }
    int m_, n_, k_;
    Through via_;
    std::vector<T> a_, b_;
    Buffer<T> ba_, bb_;
    Buffer<float> bc_;
};

} // namespace

template <class T>
std::pair<Kernel<In<T>, In<T>, Out<float>, Int, Int, Int>, Grid>
mma_variant(const MmaFamily<T>& family, Runtime& rt, const Target& t, int64_t m, int64_t n,
            int64_t k) {
    const Shape shape = {m, n, k};
    const DeviceInfo* d = routed_device(rt, t, mma_portable(family));
    if (!d) throw Error(ErrorCode::NoBackend, "no device runs " + family.name());
    const std::string backend = t.backend;
    const FamilyContext ctx{backend, *d, shape};
    const Tuning v = family.def().heuristic(ctx);
    return {family.variant(v), family.def().grid(v, ctx)};
}
template std::pair<Kernel<In<half>, In<half>, Out<float>, Int, Int, Int>, Grid>
mma_variant(const MmaFamily<half>&, Runtime&, const Target&, int64_t, int64_t, int64_t);
template std::pair<Kernel<In<bf16>, In<bf16>, Out<float>, Int, Int, Int>, Grid>
mma_variant(const MmaFamily<bf16>&, Runtime&, const Target&, int64_t, int64_t, int64_t);

double matmul_mma_bound(int k, double mag, bool tf32) {
    // Tensor cores truncate each tf32 input (relative error below 2^-10 each, 2^-9 for a
    // product); k = 8 on the H100 met a product off by more than 2^-10.
    return (tf32 ? std::ldexp(mag, -9) : 0.0) + (k + 16) * std::ldexp(mag, -23) + 1e-6;
}

const std::vector<std::string>& mma_problem_names() {
    static const std::vector<std::string> names = {"matmul_f16", "matmul_bf16", "matmul_tf32",
                                                   "gemm_f32",   "gemm_tf32",   "gemm_f16",
                                                   "gemm_bf16"};
    return names;
}

namespace {
std::unique_ptr<Problem> make_shaped(const std::string& name, int m, int n, int k, Runtime& rt,
                                     std::mt19937& g) {
    if (name == "matmul_f16") return std::make_unique<MatmulMma<half>>(m, n, k, rt, g);
    if (name == "matmul_bf16") return std::make_unique<MatmulMma<bf16>>(m, n, k, rt, g);
    if (name == "matmul_tf32") return std::make_unique<MatmulMma<float>>(m, n, k, rt, g);
    if (name == "gemm_f32")
        return std::make_unique<MatmulMma<float>>(m, n, k, rt, g, Through::LibExact);
    if (name == "gemm_tf32")
        return std::make_unique<MatmulMma<float>>(m, n, k, rt, g, Through::Lib);
    if (name == "gemm_f16") return std::make_unique<MatmulMma<half>>(m, n, k, rt, g, Through::Lib);
    if (name == "gemm_bf16") return std::make_unique<MatmulMma<bf16>>(m, n, k, rt, g, Through::Lib);
    return nullptr;
}
} // namespace

// The shape of the other matmul samples: m = size, n = size - size/8, k = size + 3.
std::unique_ptr<Problem> make_mma_problem(const std::string& name, size_t size, Runtime& rt,
                                          std::mt19937& g) {
    return make_shaped(name, int(size), int(std::max<size_t>(1, size - size / 8)), int(size + 3),
                       rt, g);
}
std::unique_ptr<Problem> make_mma_problem(const std::string& name, int m, int n, int k, Runtime& rt,
                                          unsigned seed) {
    std::mt19937 g(seed);
    return make_shaped(name, m, n, k, rt, g);
}

} // namespace plexus::samples
