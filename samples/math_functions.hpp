// The math library as data: every math function of the kernel language, the inputs it is
// checked on, its host reference and the error bound plexus states for it. The math_catalog
// sample and tests/core/kernel/math share this table, so each bound is written once
// (docs/kernel-language.md lists them with the errors measured per backend).
#pragma once

#include "plexus/kernel.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace plexus::samples {

// Where the random inputs of one argument lie: uniform in [lo, hi], or with a uniform binary
// exponent (Log: positive; SignedLog: either sign), which reaches every scale of a wide range.
struct MathRange {
    enum Scale { Linear, Log, SignedLog };
    double lo = 0, hi = 0;
    Scale scale = Linear;
};

// A function with a float result: y = f(x, y, z), the arguments it does not take ignored.
struct MathFunction {
    const char* name; // an identifier: "erf", "sincos_sin", "fast_exp"
    int arity;        // how many of x, y, z it takes
    Value<float> (*f32)(Value<float>, Value<float>, Value<float>) = nullptr;
    Value<double> (*f64)(Value<double>, Value<double>, Value<double>) = nullptr; // null: f32 only
    long double (*reference)(long double, long double, long double) = nullptr;
    MathRange range[3] = {};
    // Bit k: argument k also takes the edge values (+-0, +-inf, NaN, the smallest denormal,
    // +-1, the largest finite), whose results C99 defines; NaN must give NaN, and an infinite
    // or exactly zero reference must be met exactly.
    unsigned edges = 0;
    // The bound in ulp of the result's type at the reference (0.5: correctly rounded or exact),
    // plus growth(x, y) ulp where the error grows with the arguments (fast exp, exp10, pow).
    double ulp32 = 0, ulp64 = 0;
    double (*growth)(double x, double y) = nullptr;
    // Where x lies in [abs_lo, abs_hi] the bound is this absolute error instead (fast sin and
    // cos, and the fast logarithms near 1, where a result near 0 makes ulps meaningless).
    double abs = 0, abs_lo = 0, abs_hi = 0;
};
const std::vector<MathFunction>& math_functions();

// A function with an int result, compared exactly with the host's C library.
struct MathIntFunction {
    const char* name; // "frexp_exponent", "ilogb", "classify"
    Value<int32_t> (*f32)(Value<float>);
    Value<int32_t> (*f64)(Value<double>);
    int32_t (*ref32)(float);
    int32_t (*ref64)(double);
    MathRange range;
};
const std::vector<MathIntFunction>& math_int_functions();

// n inputs of argument `arg` (0, 1, 2) of a function: the edge values first where it takes
// them, then random ones from `seed`; argument k's list is rotated by 3k, so edges meet others.
template <class T>
std::vector<T> math_inputs(const MathRange& range, bool edges, int arg, size_t n, unsigned seed);

// The error of one result against the reference at its arguments.
struct MathError {
    double ulp = 0;      // in ulp of the type at the reference; inf: a special value missed
    double abs = 0;      // |got - reference|
    bool in_abs = false; // x is where the absolute bound applies
    double ratio = 0;    // error / bound (<= 1 passes)
    bool ok() const { return ratio <= 1; }
};
template <class T> MathError math_error(const MathFunction& f, T x, T y, T z, T got);

// The largest errors of one function over many results, and the first one out of bounds.
struct MathSummary {
    double max_ulp = 0, max_abs = 0, max_ratio = 0; // max_ulp outside, max_abs inside the abs range
    size_t checked = 0, bad = 0;
    std::string first_bad;
    template <class T> void add(const MathFunction& f, T x, T y, T z, T got);
    template <class T> void add_int(const MathIntFunction& f, T x, int32_t got);
};

} // namespace plexus::samples
