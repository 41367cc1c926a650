// The sample problems of the IR's types: random inputs, launches, and host references that
// compute what docs/ir.md specifies (f16 and bf16 rounded after each operation, as half.hpp
// does), so most checks are exact.
#include "typed_problems.hpp"
#include "kernels.hpp"
#include "problem_util.hpp"

#include <cmath>

namespace plexus::samples {
namespace {

class VectorAdd4 final : public Problem {
public:
    VectorAdd4(size_t n, Runtime& rt, std::mt19937& g)
        : n4_((n + 3) / 4), a_(vectors(g)), b_(vectors(g)), ba_(rt, a_), bb_(rt, b_), bc_(rt, n4_) {
    }
    std::string kernel() const override { return "vector_add_float4"; }
    std::string size_text() const override { return "n=" + std::to_string(4 * n4_); }
    void run(Runtime& rt, const Target& t) override {
        rt.launch(t, vector_add_float4(), Grid(n4_).local_size(256), ba_, bb_, bc_, int(n4_))
            .wait();
    }
    CheckResult check() override {
        CheckResult r;
        auto c = bc_.host();
        for (size_t i = 0; i < n4_; ++i)
            for (int l = 0; l < 4; ++l)
                record(r, 4 * i + l, c[i][l], a_[i][l] + b_[i][l], 0);
        return r;
    }
    std::string tolerance() const override { return "exact (one f32 addition per lane)"; }
    double work() const override { return 3.0 * 16 * n4_; }
    const char* unit() const override { return "GB/s"; }

private:
    std::vector<Vec4> vectors(std::mt19937& g) const {
        std::vector<float> f = random_floats(4 * n4_, g);
        std::vector<Vec4> v(n4_);
        for (size_t i = 0; i < n4_; ++i)
            v[i] = {{f[4 * i], f[4 * i + 1], f[4 * i + 2], f[4 * i + 3]}};
        return v;
    }
    size_t n4_;
    std::vector<Vec4> a_, b_;
    Buffer<Vec4> ba_, bb_, bc_;
};

class Gelu final : public Problem {
public:
    Gelu(size_t n, Runtime& rt, std::mt19937& g) : n_(n), x_(inputs(g)), bx_(rt, x_), by_(rt, n) {}
    std::string kernel() const override { return "gelu_f32"; }
    std::string size_text() const override { return "n=" + std::to_string(n_); }
    void run(Runtime& rt, const Target& t) override {
        rt.launch(t, gelu_f32(), Grid(n_), bx_, by_, int(n_)).wait();
    }
    CheckResult check() override {
        CheckResult r;
        auto y = by_.host();
        for (size_t i = 0; i < n_; ++i) {
            const double v = x_[i];
            const double want =
                0.5 * v * (1 + std::tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)));
            record(r, i, y[i], want, 1e-6 * (1 + std::fabs(v)));
        }
        return r;
    }
    std::string tolerance() const override {
        return "1e-6 (1 + |x|) of the f64 formula (tanh's 5 ulp and the f32 roundings allow about "
               "2.5e-7 (1 + |x|))";
    }
    double work() const override { return 2.0 * 4 * double(n_); }
    const char* unit() const override { return "GB/s"; }

private:
    std::vector<float> inputs(std::mt19937& g) const {
        std::uniform_real_distribution<float> d(-6.0f, 6.0f);
        std::vector<float> v(n_);
        for (float& x : v)
            x = d(g);
        return v;
    }
    size_t n_;
    std::vector<float> x_;
    Buffer<float> bx_, by_;
};

class SaxpyF16 final : public Problem {
public:
    SaxpyF16(size_t n, Runtime& rt, std::mt19937& g)
        : n_(n), x_(halves(g)), y_(halves(g)), bx_(rt, x_), by_(rt, n) {
        a_ = std::uniform_real_distribution<float>(-3, 3)(g);
    }
    std::string kernel() const override { return "saxpy_f16"; }
    std::string size_text() const override { return "n=" + std::to_string(n_); }
    void run(Runtime& rt, const Target& t) override {
        by_.write(y_);
        rt.launch(t, saxpy_f16(), Grid(n_), bx_, by_, a_, int(n_)).wait();
    }
    CheckResult check() override {
        CheckResult r;
        auto y = by_.host();
        const float a = round_to_f16(a_);
        for (size_t i = 0; i < n_; ++i) {
            float want = round_to_f16(round_to_f16(a * float(x_[i])) + float(y_[i]));
            record(r, i, float(y[i]), want, 0);
        }
        return r;
    }
    std::string tolerance() const override {
        return "exact (each f16 operation rounded to nearest even)";
    }
    double work() const override { return 3.0 * 2 * n_; }
    const char* unit() const override { return "GB/s"; }

private:
    std::vector<half> halves(std::mt19937& g) const {
        std::vector<half> v(n_);
        std::uniform_real_distribution<float> d(-40,
                                                40); // products up to about 120: well inside f16
        for (auto& x : v)
            x = half(d(g));
        return v;
    }
    size_t n_;
    float a_ = 0;
    std::vector<half> x_, y_;
    Buffer<half> bx_, by_;
};

class DequantInt8 final : public Problem {
public:
    DequantInt8(size_t size, Runtime& rt, std::mt19937& g)
        : rows_(int(std::max<size_t>(1, size / 64))),
          cols4_(int((std::min<size_t>(size, 64) + 3) / 4)), w_(size_t(rows_) * cols4_),
          scale_(random_floats(size_t(rows_), g)), bw_(rt, size_t(rows_) * cols4_), bs_(rt, scale_),
          bo_(rt, size_t(rows_) * cols4_) {
        std::uniform_int_distribution<int> d(-128, 127);
        for (auto& v : w_)
            for (int l = 0; l < 4; ++l)
                v[l] = int8_t(d(g));
        bw_.write(w_);
    }
    std::string kernel() const override { return "dequant_int8"; }
    std::string size_text() const override {
        return "rows=" + std::to_string(rows_) + " cols=" + std::to_string(4 * cols4_);
    }
    void run(Runtime& rt, const Target& t) override {
        rt.launch(t, dequant_int8(), Grid(w_.size()), bw_, bs_, bo_, rows_, cols4_).wait();
    }
    CheckResult check() override {
        CheckResult r;
        auto out = bo_.host();
        for (size_t i = 0; i < w_.size(); ++i)
            for (int l = 0; l < 4; ++l)
                record(r, 4 * i + l, out[i][l], float(w_[i][l]) * scale_[i / size_t(cols4_)], 0);
        return r;
    }
    std::string tolerance() const override {
        return "exact (an int8 is exact in f32, then one f32 product)";
    }
    double work() const override { return double(w_.size()) * (4 + 16); }
    const char* unit() const override { return "GB/s"; }

private:
    int rows_, cols4_;
    std::vector<Vec<int8_t, 4>> w_;
    std::vector<float> scale_;
    Buffer<Vec<int8_t, 4>> bw_;
    Buffer<float> bs_;
    Buffer<Vec4> bo_;
};

// Softmax of rows x cols values of T; the reference in double, rounded to T at the end.
template <class T> class Softmax final : public Problem {
public:
    Softmax(int rows, int cols, Runtime& rt, std::mt19937& g)
        : rows_(rows), cols_(cols), x_(size_t(rows_) * cols_), bx_(rt, x_.size()),
          by_(rt, x_.size()) {
        std::uniform_real_distribution<float> d(-8, 8);
        for (auto& v : x_)
            v = T(d(g));
        bx_.write(x_);
    }
    std::string kernel() const override {
        return std::is_same_v<T, float> ? "softmax_f32" : "softmax_bf16";
    }
    std::string size_text() const override {
        return "rows=" + std::to_string(rows_) + " cols=" + std::to_string(cols_);
    }
    void run(Runtime& rt, const Target& t) override {
        const auto& family = [] {
            if constexpr (std::is_same_v<T, float>)
                return softmax_f32();
            else
                return softmax_bf16();
        }();
        rt.launch(t, family, Shape{rows_, cols_}, bx_, by_, rows_, cols_).wait();
    }
    std::optional<TuningReport> tune(Runtime& rt, const Target& t, bool retune) override {
        if constexpr (std::is_same_v<T, float>)
            return rt.tune(t, softmax_f32(), {rows_, cols_}, retune, bx_, by_, rows_, cols_);
        else
            return rt.tune(t, softmax_bf16(), {rows_, cols_}, retune, bx_, by_, rows_, cols_);
    }
    CheckResult check() override {
        CheckResult r;
        auto y = by_.host();
        for (int row = 0; row < rows_; ++row) {
            const T* x = &x_[size_t(row) * cols_];
            double m = -INFINITY, sum = 0;
            for (int c = 0; c < cols_; ++c)
                m = std::max(m, double(float(x[c])));
            for (int c = 0; c < cols_; ++c)
                sum += std::exp(double(float(x[c])) - m);
            for (int c = 0; c < cols_; ++c) {
                const size_t i = size_t(row) * cols_ + c;
                const double exact = std::exp(double(float(x[c])) - m) / sum;
                const double want = float(T(float(exact)));
                // f32: a few ulps of exp and the division; bf16: that, and then one bf16 ulp
                // (2^-7 relative at most) where the f32 value lands near a rounding boundary.
                const double rel = std::is_same_v<T, float> ? 1e-5 : std::ldexp(1.0, -7);
                record(r, i, float(y[i]), want, rel * std::max(want, 1e-30) + 1e-30);
            }
        }
        return r;
    }
    std::string tolerance() const override {
        return std::is_same_v<T, float>
                   ? "|got - want| <= 1e-5 want (want in double)"
                   : "|got - want| <= 2^-7 want: one bf16 ulp (want in double, rounded to bf16)";
    }
    double work() const override { return 2.0 * sizeof(T) * x_.size(); }
    const char* unit() const override { return "GB/s"; }

private:
    int rows_, cols_;
    std::vector<T> x_;
    Buffer<T> bx_, by_;
};

class Particles final : public Problem {
public:
    Particles(size_t n, Runtime& rt, std::mt19937& g)
        : n_(int(n)), p_(n), bin_(rt, n), bout_(rt, n) {
        std::uniform_real_distribution<float> u(-1, 1), m(0.5f, 1.5f);
        std::uniform_int_distribution<int> kind(0, 2);
        for (auto& p : p_) {
            p.pos = {{u(g), u(g), u(g)}};
            p.vel = {{0.1f * u(g), 0.1f * u(g), 0.1f * u(g)}};
            p.mass = m(g);
            p.charge = bf16(u(g));
            switch (kind(g)) {
            case 0: p.kind = ParticleKind::make<"free">(); break;
            case 1: p.kind = ParticleKind::make<"charged">(2.0f * u(g)); break;
            default: p.kind = ParticleKind::make<"anchored">(Vec3{{u(g), u(g), u(g)}}); break;
            }
        }
        bin_.write(p_);
    }
    std::string kernel() const override { return "particles"; }
    std::string size_text() const override { return "n=" + std::to_string(n_); }
    void run(Runtime& rt, const Target& t) override {
        rt.launch(t, particles(), Grid(size_t(n_)).local_size(particles_tile), bin_, bout_, n_, dt_)
            .wait();
    }
    CheckResult check() override;
    std::string tolerance() const override {
        return "per component |got - want| <= 1e-4 (|want| + dt sum_j |force_j|) (want in double)";
    }
    double work() const override { return 20.0 * double(n_) * n_; }
    const char* unit() const override { return "GFLOP/s"; }

private:
    int n_;
    float dt_ = 0.01f;
    std::vector<Particle> p_;
    Buffer<Particle> bin_, bout_;
};

CheckResult Particles::check() {
    CheckResult r;
    auto out = bout_.host();
    for (int i = 0; i < n_; ++i) {
        const Particle& p = p_[size_t(i)];
        double force[3] = {0, 0, 0}, scale = 0;
        for (const Particle& q : p_) {
            double d[3], r2 = particles_softening;
            for (int c = 0; c < 3; ++c)
                d[c] = double(q.pos[c]) - p.pos[c], r2 += d[c] * d[c];
            const double f = q.mass / (r2 * std::sqrt(r2));
            for (int c = 0; c < 3; ++c)
                force[c] += d[c] * f;
            scale += std::sqrt(r2) * f;
        }
        double vel[3], dt = dt_;
        for (int c = 0; c < 3; ++c) {
            if (p.kind.holds<"free">())
                vel[c] = p.vel[c] + force[c] * dt;
            else if (p.kind.holds<"charged">())
                vel[c] = p.vel[c] + (force[c] + particles_field[c] * double(float(p.charge)) *
                                                    p.kind.get<"charged">()) *
                                        dt;
            else
                vel[c] = (double(p.kind.get<"anchored">()[c]) - p.pos[c]) * particles_spring;
        }
        const Particle& got = out[size_t(i)];
        for (int c = 0; c < 3; ++c) {
            const double tol = 1e-4 * (std::fabs(vel[c]) + scale * dt + 1e-3);
            record(r, size_t(i) * 6 + c, got.vel[c], vel[c], tol);
            record(r, size_t(i) * 6 + 3 + c, got.pos[c], p.pos[c] + vel[c] * dt,
                   tol * dt + 1e-6 * (1 + std::fabs(p.pos[c])));
        }
        // The rest of the record is copied through unchanged: mass, charge and the kind (its
        // tag and the active case's values; padding bytes are nobody's).
        bool same =
            got.mass == p.mass && got.charge.bits == p.charge.bits && got.kind.tag == p.kind.tag;
        if (same && p.kind.holds<"charged">())
            same = got.kind.get<"charged">() == p.kind.get<"charged">();
        if (same && p.kind.holds<"anchored">())
            for (int c = 0; c < 3; ++c)
                same = same && got.kind.get<"anchored">()[c] == p.kind.get<"anchored">()[c];
        record(r, size_t(n_) * 6 + size_t(i), same ? 0 : 1, 0, 0);
    }
    return r;
}

// Layer normalization of rows x cols values of T with random gamma and beta; the reference
// in double, rounded to T at the end.
template <class T> class LayerNorm final : public Problem {
public:
    LayerNorm(int rows, int cols, Runtime& rt, std::mt19937& g)
        : rows_(rows), cols_(cols), x_(size_t(rows_) * cols_), gamma_(size_t(cols)),
          beta_(size_t(cols)), bx_(rt, x_.size()), bgamma_(rt, gamma_.size()),
          bbeta_(rt, beta_.size()), by_(rt, x_.size()) {
        std::uniform_real_distribution<float> d(-4, 4), w(-1, 1);
        for (auto& v : x_)
            v = T(d(g));
        for (size_t c = 0; c < gamma_.size(); ++c) {
            gamma_[c] = w(g);
            beta_[c] = w(g);
        }
        bx_.write(x_);
        bgamma_.write(gamma_);
        bbeta_.write(beta_);
    }
    std::string kernel() const override {
        return std::is_same_v<T, float> ? "layernorm_f32" : "layernorm_bf16";
    }
    std::string size_text() const override {
        return "rows=" + std::to_string(rows_) + " cols=" + std::to_string(cols_);
    }
    void run(Runtime& rt, const Target& t) override {
        lib::layernorm(rt, bx_, bgamma_, bbeta_, by_, rows_, cols_, kEps, t).wait();
    }
    std::optional<TuningReport> tune(Runtime& rt, const Target& t, bool retune) override {
        if constexpr (std::is_same_v<T, float>)
            return rt.tune(t, layernorm_f32(), {rows_, cols_}, retune, bx_, bgamma_, bbeta_, by_,
                           rows_, cols_, kEps);
        else
            return rt.tune(t, layernorm_bf16(), {rows_, cols_}, retune, bx_, bgamma_, bbeta_, by_,
                           rows_, cols_, kEps);
    }
    CheckResult check() override {
        CheckResult r;
        auto y = by_.host();
        for (int row = 0; row < rows_; ++row) {
            const T* x = &x_[size_t(row) * cols_];
            double mean = 0, var = 0;
            for (int c = 0; c < cols_; ++c)
                mean += double(float(x[c]));
            mean /= cols_;
            for (int c = 0; c < cols_; ++c)
                var += (double(float(x[c])) - mean) * (double(float(x[c])) - mean);
            var /= cols_;
            const double inv = 1 / std::sqrt(var + kEps);
            for (int c = 0; c < cols_; ++c) {
                const size_t i = size_t(row) * cols_ + c;
                const double exact = (double(float(x[c])) - mean) * inv * gamma_[c] + beta_[c];
                const double want = float(T(float(exact)));
                // f32 sums of up to a few thousand values: 1e-4 of the terms' size; bf16: and
                // one bf16 ulp of the result (2^-7 relative at most).
                const double terms =
                    std::fabs((double(float(x[c])) - mean) * inv * gamma_[c]) + std::fabs(beta_[c]);
                const double bound =
                    1e-4 * (terms + 1) +
                    (std::is_same_v<T, float> ? 0 : std::ldexp(std::fabs(want), -7));
                record(r, i, float(y[i]), want, bound);
            }
        }
        return r;
    }
    std::string tolerance() const override {
        return std::is_same_v<T, float>
                   ? "|got - want| <= 1e-4 (|xhat gamma| + |beta| + 1) (want in double)"
                   : "that, plus one bf16 ulp of want (2^-7 |want|)";
    }
    double work() const override {
        return double(sizeof(T)) * 2.0 * double(x_.size()) + 8.0 * double(cols_);
    }
    const char* unit() const override { return "GB/s"; }

private:
    static constexpr float kEps = 1e-5f;
    int rows_, cols_;
    std::vector<T> x_;
    std::vector<float> gamma_, beta_;
    Buffer<T> bx_;
    Buffer<float> bgamma_, bbeta_;
    Buffer<T> by_;
};

} // namespace

std::unique_ptr<Problem> make_typed_problem(const std::string& name, size_t size, Runtime& rt,
                                            std::mt19937& g) {
    if (name == "vector_add_float4") return std::make_unique<VectorAdd4>(size, rt, g);
    if (name == "saxpy_f16") return std::make_unique<SaxpyF16>(size, rt, g);
    if (name == "gelu_f32") return std::make_unique<Gelu>(size, rt, g);
    if (name == "dequant_int8") return std::make_unique<DequantInt8>(size, rt, g);
    // size / 1000 rows of min(size, 1000)
    const int rows = int(std::max<size_t>(1, size / 1000)),
              cols = int(std::min<size_t>(size, 1000));
    if (name == "softmax_bf16") return std::make_unique<Softmax<bf16>>(rows, cols, rt, g);
    if (name == "softmax_f32") return std::make_unique<Softmax<float>>(rows, cols, rt, g);
    if (name == "layernorm_bf16") return std::make_unique<LayerNorm<bf16>>(rows, cols, rt, g);
    if (name == "layernorm_f32") return std::make_unique<LayerNorm<float>>(rows, cols, rt, g);
    if (name == "particles") return std::make_unique<Particles>(size, rt, g);
    return nullptr;
}

std::unique_ptr<Problem> make_row_problem(const std::string& name, int rows, int cols, Runtime& rt,
                                          unsigned seed) {
    std::mt19937 g(seed);
    if (rows < 1 || cols < 1)
        throw Error(ErrorCode::InvalidArgument, name + ": rows and cols must be positive");
    if (name == "softmax_bf16") return std::make_unique<Softmax<bf16>>(rows, cols, rt, g);
    if (name == "softmax_f32") return std::make_unique<Softmax<float>>(rows, cols, rt, g);
    if (name == "layernorm_bf16") return std::make_unique<LayerNorm<bf16>>(rows, cols, rt, g);
    if (name == "layernorm_f32") return std::make_unique<LayerNorm<float>>(rows, cols, rt, g);
    throw Error(ErrorCode::InvalidArgument, "not a row sample: '" + name + "'");
}

const std::vector<std::string>& typed_problem_names() {
    static const std::vector<std::string> names = {
        "vector_add_float4", "saxpy_f16",     "gelu_f32",       "dequant_int8", "softmax_bf16",
        "softmax_f32",       "layernorm_f32", "layernorm_bf16", "particles"};
    return names;
}

} // namespace plexus::samples
