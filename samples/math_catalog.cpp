// The math_catalog sample: one kernel per precision evaluates every function of the math table
// (math_functions.cpp) on its own inputs, and the host checks each result against the long
// double reference within the function's stated bound (the int ones exactly).
#include "math_catalog.hpp"

#include "kernels.hpp"
#include "math_functions.hpp"
#include "problem_util.hpp"

namespace plexus::samples {
namespace {

template <class T> auto form_of(const MathFunction& f) {
    if constexpr (std::is_same_v<T, float>)
        return f.f32;
    else
        return f.f64;
}
template <class T> auto form_of(const MathIntFunction& f) {
    if constexpr (std::is_same_v<T, float>)
        return f.f32;
    else
        return f.f64;
}
// The table's functions that exist in T, in table order: function j's inputs and results are
// elements j * n ... j * n + n - 1; the int functions' inputs follow in x.
template <class T> std::vector<const MathFunction*> functions_in() {
    std::vector<const MathFunction*> v;
    for (const MathFunction& f : math_functions())
        if (form_of<T>(f)) v.push_back(&f);
    return v;
}

template <class T> MathCatalogKernel<T> trace(const char* name) {
    return plexus::kernel(
        name, {"x", "y", "z", "out", "iout", "n"},
        [](In<T> x, In<T> y, In<T> z, Out<T> out, Out<int32_t> iout, Int n) {
            Int i = global_id(0);
            If(i < n, [&] {
                const auto fns = functions_in<T>();
                for (size_t j = 0; j < fns.size(); ++j) {
                    Value<int32_t> k = int32_t(j) * n + i;
                    out[k] = form_of<T>(*fns[j])(Value<T>(x[k]), Value<T>(y[k]), Value<T>(z[k]));
                }
                const auto& ints = math_int_functions();
                for (size_t m = 0; m < ints.size(); ++m)
                    iout[int32_t(m) * n + i] =
                        form_of<T>(ints[m])(Value<T>(x[int32_t(fns.size() + m) * n + i]));
            });
        });
}

// The inputs, buffers and results of one precision.
template <class T> class Precision {
public:
    Precision(size_t n, Runtime& rt, std::mt19937& g)
        : n_(n), fns_(functions_in<T>()), x_(input(0, g)), y_(input(1, g)), z_(input(2, g)),
          bx_(rt, x_), by_(rt, y_), bz_(rt, z_), out_(rt, fns_.size() * n),
          iout_(rt, math_int_functions().size() * n) {}
    void run(Runtime& rt, const Target& t) {
        rt.launch(t, math_catalog<T>(), Grid(n_), bx_, by_, bz_, out_, iout_, int(n_)).wait();
        ran_ = true;
    }
    void check(CheckResult& r) {
        if (!ran_) return;
        auto out = out_.host();
        auto iout = iout_.host();
        for (size_t j = 0; j < fns_.size(); ++j) {
            MathSummary s;
            for (size_t i = j * n_; i < (j + 1) * n_; ++i)
                s.add(*fns_[j], x_[i], y_[i], z_[i], out[i]);
            add(r, s);
        }
        const auto& ints = math_int_functions();
        for (size_t m = 0; m < ints.size(); ++m) {
            MathSummary s;
            for (size_t i = 0; i < n_; ++i)
                s.add_int(ints[m], x_[(fns_.size() + m) * n_ + i], iout[m * n_ + i]);
            add(r, s);
        }
    }
    size_t calls() const { return (fns_.size() + math_int_functions().size()) * n_; }

private:
    // Argument `arg` of every function (x also of the int functions), each from its own seed.
    std::vector<T> input(int arg, std::mt19937& g) const {
        std::vector<T> v;
        for (const MathFunction* f : fns_) {
            auto part = math_inputs<T>(f->range[arg], (f->edges >> arg) & 1, arg, n_, g());
            v.insert(v.end(), part.begin(), part.end());
        }
        if (arg == 0)
            for (const MathIntFunction& f : math_int_functions()) {
                auto part = math_inputs<T>(f.range, true, 0, n_, g());
                v.insert(v.end(), part.begin(), part.end());
            }
        return v;
    }
    static void add(CheckResult& r, const MathSummary& s) {
        r.checked += s.checked;
        if (s.bad && !r.bad) r.first_bad = s.first_bad;
        r.bad += s.bad;
        r.max_error = std::max(r.max_error, s.max_ratio);
    }
    size_t n_;
    std::vector<const MathFunction*> fns_;
    std::vector<T> x_, y_, z_;
    Buffer<T> bx_, by_, bz_, out_;
    Buffer<int32_t> iout_;
    bool ran_ = false;
};

class MathCatalog final : public Problem {
public:
    MathCatalog(size_t n, Runtime& rt, std::mt19937& g) : n_(n), f32_(n, rt, g), f64_(n, rt, g) {}
    std::string kernel() const override { return "math_catalog"; }
    std::string size_text() const override { return "n=" + std::to_string(n_) + " per function"; }
    void run(Runtime& rt, const Target& t) override {
        f32_.run(rt, t);
        if (device_of(rt, t).fp64) f64_.run(rt, t);
    }
    CheckResult check() override {
        CheckResult r;
        f32_.check(r);
        f64_.check(r);
        return r;
    }
    std::string tolerance() const override {
        return "each function within its stated bound (samples/math_functions.cpp), int results "
               "exactly";
    }
    double work() const override { return double(f32_.calls() + f64_.calls()); }
    const char* unit() const override { return "Gcalls/s"; }

private:
    size_t n_;
    Precision<float> f32_;
    Precision<double> f64_;
};

} // namespace

template <class T> const MathCatalogKernel<T>& math_catalog() {
    static const auto k =
        trace<T>(std::is_same_v<T, float> ? "math_catalog_f32" : "math_catalog_f64");
    return k;
}
template const MathCatalogKernel<float>& math_catalog<float>();
template const MathCatalogKernel<double>& math_catalog<double>();

std::unique_ptr<Problem> make_math_catalog(size_t size, Runtime& rt, std::mt19937& g) {
    return std::make_unique<MathCatalog>(size, rt, g);
}

} // namespace plexus::samples
