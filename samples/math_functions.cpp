// The table of math_functions.hpp: each function's call in the kernel language, its long
// double reference, its inputs and its stated bound. Precise functions carry OpenCL 1.2's
// full-profile bounds (the loosest a conforming device may have); px::fast:: functions the
// bounds plexus states for them (docs/kernel-language.md, "Fast functions").
#include "math_functions.hpp"

#include "plexus/kernel_math.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <random>

namespace plexus::samples {
namespace {

using R = MathRange;
constexpr unsigned X = 1, XY = 3; // which arguments take the edge values
constexpr double pi = std::numbers::pi;

// A function in f32 and f64, and one in f32 only (px::fast::); `call` is a generic lambda.
template <class C> MathFunction both(MathFunction f, C call) {
    f.f32 = call;
    f.f64 = call;
    return f;
}
template <class C> MathFunction f32_only(MathFunction f, C call) {
    f.f32 = call;
    return f;
}

#define CALL1(expr) [](auto x, auto, auto) { return expr; }
#define CALL2(expr) [](auto x, auto y, auto) { return expr; }
#define REF(expr)                                                                                  \
    [](long double x, [[maybe_unused]] long double y,                                              \
       [[maybe_unused]] long double z) -> long double { return expr; }
// A libm function of one or two arguments, its bounds in f32 and f64.
#define LIBM1(fn, lo, hi, b32, b64)                                                                \
    both({#fn, 1, {}, {}, REF(std::fn(x)), {{lo, hi}}, X, b32, b64}, CALL1(plexus::fn(x)))
#define LIBM2(fn, lo, hi, ylo, yhi, b32, b64)                                                      \
    both({#fn, 2, {}, {}, REF(std::fn(x, y)), {{lo, hi}, {ylo, yhi}}, XY, b32, b64},               \
         CALL2(plexus::fn(x, y)))
// A px::fast:: function, its reference, its stated range and bound.
#define FAST1(fn, ref, range, ulp, ...)                                                            \
    f32_only({"fast_" #fn, 1, {}, {}, REF(ref), {range}, 0, ulp, 0 __VA_OPT__(, ) __VA_ARGS__},    \
             CALL1(plexus::fast::fn(x)))

double exp_growth(double x, double) {
    return 2 * std::fabs(x);
}
double exp10_growth(double x, double) {
    return 4 * std::fabs(x);
}
double pow_growth(double x, double y) {
    return 8 * (std::fabs(y) + std::fabs(y * std::log2(x)));
}

} // namespace

const std::vector<MathFunction>& math_functions() {
    static const std::vector<MathFunction> all =
        {
            // The first functions of the language: sqrt ... clamp.
            both({"sqrt", 1, {}, {}, REF(std::sqrt(x)), {{1e-30, 1e30, R::Log}}, X, 3, 0.5},
                 CALL1(plexus::sqrt(x))),
            both({"rsqrt", 1, {}, {}, REF(1 / std::sqrt(x)), {{1e-30, 1e30, R::Log}}, X, 2, 2},
                 CALL1(plexus::rsqrt(x))),
            LIBM1(exp, -80, 80, 3, 3),
            LIBM1(exp2, -120, 120, 3, 3),
            both({"log", 1, {}, {}, REF(std::log(x)), {{1e-30, 1e30, R::Log}}, X, 3, 3},
                 CALL1(plexus::log(x))),
            both({"log2", 1, {}, {}, REF(std::log2(x)), {{1e-30, 1e30, R::Log}}, X, 3, 3},
                 CALL1(plexus::log2(x))),
            LIBM1(sin, -100, 100, 4, 4),
            LIBM1(cos, -100, 100, 4, 4),
            LIBM1(tan, -10, 10, 5, 5),
            LIBM2(pow, 0, 100, -10, 10, 16, 16),
            LIBM1(fabs, -1e6, 1e6, 0.5, 0.5),
            LIBM1(floor, -1e6, 1e6, 0.5, 0.5),
            LIBM1(ceil, -1e6, 1e6, 0.5, 0.5),
            both({"fma",
                  3,
                  {},
                  {},
                  REF(std::fma(x, y, z)),
                  {{-1e3, 1e3}, {-1e3, 1e3}, {-1e3, 1e3}},
                  7,
                  0.5,
                  0.5},
                 [](auto x, auto y, auto z) { return plexus::fma(x, y, z); }),
            both({"min", 2, {}, {}, REF(std::fmin(x, y)), {{-1e3, 1e3}, {-1e3, 1e3}}, XY, 0.5, 0.5},
                 CALL2(plexus::min(x, y))),
            both({"max", 2, {}, {}, REF(std::fmax(x, y)), {{-1e3, 1e3}, {-1e3, 1e3}}, XY, 0.5, 0.5},
                 CALL2(plexus::max(x, y))),
            // clamp(x, lo, hi) is defined for lo <= hi only: the edges go to x alone.
            both({"clamp",
                  3,
                  {},
                  {},
                  REF(std::fmin(std::fmax(x, y), z)),
                  {{-10, 10}, {-5, 0}, {0, 5}},
                  X,
                  0.5,
                  0.5},
                 [](auto x, auto y, auto z) { return plexus::clamp(x, y, z); }),
            // libm.def. cbrt in f64: glibc's, behind native and interp, measured 2.09 ulp.
            LIBM1(erf, -5, 5, 16, 16),
            LIBM1(erfc, -5, 10, 16, 16),
            LIBM1(tanh, -10, 10, 5, 5),
            LIBM1(sinh, -20, 20, 4, 4),
            LIBM1(cosh, -20, 20, 4, 4),
            LIBM1(asinh, -1e4, 1e4, 4, 4),
            LIBM1(acosh, 1, 1e4, 4, 4),
            LIBM1(atanh, -0.99, 0.99, 5, 5),
            LIBM1(asin, -1, 1, 4, 4),
            LIBM1(acos, -1, 1, 4, 4),
            LIBM1(atan, -1e4, 1e4, 5, 5),
            LIBM1(expm1, -10, 10, 3, 3),
            LIBM1(log1p, -0.99, 1e4, 2, 2),
            LIBM1(log10, 1e-6, 1e6, 3, 3),
            LIBM1(cbrt, -1e6, 1e6, 2, 4),
            LIBM1(lgamma, 2.5, 30, 16, 16),
            LIBM1(tgamma, 0.1, 30, 16, 16),
            LIBM1(round, -1e6, 1e6, 0.5, 0.5),
            LIBM1(trunc, -1e6, 1e6, 0.5, 0.5),
            LIBM1(rint, -1e6, 1e6, 0.5, 0.5),
            LIBM2(atan2, -10, 10, -10, 10, 6, 6),
            LIBM2(hypot, -1e3, 1e3, -1e3, 1e3, 4, 4),
            LIBM2(fmod, -1e3, 1e3, 0.1, 100, 0.5, 0.5),
            LIBM2(remainder, -1e3, 1e3, 0.1, 100, 0.5, 0.5),
            LIBM2(copysign, -1e3, 1e3, -1, 1, 0.5, 0.5),
            LIBM2(fdim, -1e3, 1e3, -1e3, 1e3, 0.5, 0.5),
            // ldexp: y is the exponent (truncated to an int), which takes no edge values.
            both({"ldexp",
                  2,
                  {},
                  {},
                  REF(std::ldexp(x, int(y))),
                  {{-1e3, 1e3}, {-160, 160}},
                  X,
                  0.5,
                  0.5},
                 CALL2(plexus::ldexp(x, cast<int32_t>(y)))),
            // sincos: the bounds of sin and cos; frexp's mantissa: exact.
            both({"sincos_sin", 1, {}, {}, REF(std::sin(x)), {{-100, 100}}, X, 4, 4},
                 CALL1(plexus::sincos(x).sin)),
            both({"sincos_cos", 1, {}, {}, REF(std::cos(x)), {{-100, 100}}, X, 4, 4},
                 CALL1(plexus::sincos(x).cos)),
            both({"frexp_mantissa",
                  1,
                  {},
                  {},
                  REF(
                      [&] {
                          int e;
                          return std::frexp(x, &e);
                      }()),
                  {{1e-44, 1e38, R::SignedLog}},
                  X,
                  0,
                  0},
                 CALL1(plexus::frexp(x).mantissa)),
            // px::fast:: (f32): the ranges keep arguments and results normal, since GPUs' fast
            // instructions may flush denormals to zero.
            FAST1(exp, std::exp(x), R(-87, 88), 4, exp_growth),
            FAST1(exp2, std::exp2(x), R(-125, 127), 3),
            FAST1(exp10, std::pow(10.0L, x), R(-37, 38), 4, exp10_growth),
            FAST1(log, std::log(x), R(1e-37, 1e38, R::Log), 4, nullptr, 0x1p-21, 0.5, 2),
            FAST1(log2, std::log2(x), R(1e-37, 1e38, R::Log), 3, nullptr, 0x1p-21, 0.5, 2),
            FAST1(log10, std::log10(x), R(1e-37, 1e38, R::Log), 4, nullptr, 0x1p-21, 0.5, 2),
            FAST1(sin, std::sin(x), R(-pi, pi), 0, nullptr, 0x1p-20, -pi, pi),
            FAST1(cos, std::cos(x), R(-pi, pi), 0, nullptr, 0x1p-20, -pi, pi),
            FAST1(tan, std::tan(x), R(-pi / 4, pi / 4), 0, nullptr, 0x1p-18, -pi / 4, pi / 4),
            FAST1(sqrt, std::sqrt(x), R(1e-37, 1e38, R::Log), 3),
            FAST1(rsqrt, 1 / std::sqrt(x), R(1e-37, 1e37, R::Log), 3),
            FAST1(recip, 1 / x, R(1e-37, 1e37, R::SignedLog), 3),
            // powr: x > 0, with |y log2 x| <= 80 so that the result stays normal.
            f32_only({"fast_pow",
                      2,
                      {},
                      {},
                      REF(std::pow(x, y)),
                      {{0x1p-20, 0x1p20, R::Log}, {-4, 4}},
                      0,
                      4,
                      0,
                      pow_growth},
                     CALL2(plexus::fast::pow(x, y))),
            f32_only({"fast_divide",
                      2,
                      {},
                      {},
                      REF(x / y),
                      {{1e-18, 1e18, R::SignedLog}, {1e-18, 1e18, R::SignedLog}},
                      0,
                      3,
                      0},
                     CALL2(plexus::fast::divide(x, y))),
        };
    return all;
}
#undef CALL1
#undef CALL2
#undef REF
#undef LIBM1
#undef LIBM2
#undef FAST1

namespace {
// The same kernel-language call and host reference in f32 and f64 (generic lambdas).
template <class C, class Ref>
MathIntFunction int_function(const char* name, C call, Ref ref, MathRange range) {
    return {name, call, call, ref, ref, range};
}
} // namespace

const std::vector<MathIntFunction>& math_int_functions() {
    static const std::vector<MathIntFunction> all = {
        // C leaves frexp's exponent of an infinity or NaN unspecified; plexus gives 0.
        int_function(
            "frexp_exponent", [](auto x) { return plexus::frexp(x).exponent; },
            [](auto x) {
                int e = 0;
                if (std::isfinite(x)) std::frexp(x, &e);
                return int32_t(e);
            },
            {1e-44, 1e38, R::SignedLog}),
        int_function(
            "ilogb", [](auto x) { return plexus::ilogb(x); },
            [](auto x) { return int32_t(std::ilogb(x)); }, {1e-44, 1e38, R::SignedLog}),
        // isnan 1, isinf 2, signbit 4.
        int_function(
            "classify",
            [](auto x) {
                return cast<int32_t>(plexus::isnan(x)) | cast<int32_t>(plexus::isinf(x)) << 1 |
                       cast<int32_t>(plexus::signbit(x)) << 2;
            },
            [](auto x) {
                return int32_t(std::isnan(x) | std::isinf(x) << 1 | std::signbit(x) << 2);
            },
            {-1e3, 1e3}),
    };
    return all;
}

template <class T>
std::vector<T> math_inputs(const MathRange& range, bool edges, int arg, size_t n, unsigned seed) {
    using L = std::numeric_limits<T>;
    std::vector<T> v;
    if (edges)
        v = {T(0), T(-0.0), L::infinity(), -L::infinity(), L::quiet_NaN(), L::denorm_min(),
             T(1), T(-1),   L::max()};
    std::mt19937 g(seed);
    const bool log = range.scale != MathRange::Linear;
    std::uniform_real_distribution<double> d(log ? std::log(range.lo) : range.lo,
                                             log ? std::log(range.hi) : range.hi);
    while (v.size() < n) {
        const double r = d(g);
        if (!log)
            v.push_back(T(r));
        else
            v.push_back(
                T(range.scale == MathRange::SignedLog && g() % 2 ? -std::exp(r) : std::exp(r)));
    }
    v.resize(n);
    if (n > 0) std::rotate(v.begin(), v.begin() + (3 * size_t(arg)) % n, v.end());
    return v;
}

namespace {

// |got - want| in ulp of T at want (rounded to T); inf when a special value is not met: NaN
// must be NaN, an infinite or exactly zero reference must be met exactly.
template <class T> double ulp_error(T got, long double want) {
    constexpr double inf = std::numeric_limits<double>::infinity();
    if (std::isnan(want)) return std::isnan(got) ? 0 : inf;
    const T w = T(want);
    if (std::isinf(w)) return got == w ? 0 : inf; // overflow to inf is the rounded result
    if (std::isnan(got)) return inf;
    if (want == 0) return got == 0 ? 0 : inf;
    const T a = std::fabs(w);
    const long double ulp = (long double)std::nextafter(a, std::numeric_limits<T>::infinity()) - a;
    return double(std::fabs((long double)got - want) / ulp);
}

// The reference is a long double, good to about 2^-64 relative: that much of a double's ulp
// (2^-11, a few times over for long double functions that are not correctly rounded) is the
// reference's, not the backend's.
template <class T> constexpr double reference_slack = std::is_same_v<T, float> ? 0 : 0x1p-9;

template <class T> std::string text(T v) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.9g", double(v));
    return buf;
}

} // namespace

template <class T> MathError math_error(const MathFunction& f, T x, T y, T z, T got) {
    const long double want = f.reference(x, y, z);
    MathError e;
    e.abs = std::isnan(want) && std::isnan(got) ? 0 : double(std::fabs((long double)got - want));
    if (std::isnan(e.abs)) e.abs = std::numeric_limits<double>::infinity();
    e.in_abs = f.abs > 0 && x >= f.abs_lo && x <= f.abs_hi;
    if (e.in_abs) {
        e.ratio = e.abs / f.abs;
        return e;
    }
    e.ulp = ulp_error<T>(got, want);
    const double limit =
        (sizeof(T) == 4 ? f.ulp32 : f.ulp64) + (f.growth ? f.growth(x, y) : 0) + reference_slack<T>;
    e.ratio = e.ulp == 0 ? 0 : limit > 0 ? e.ulp / limit : std::numeric_limits<double>::infinity();
    return e;
}

template <class T> void MathSummary::add(const MathFunction& f, T x, T y, T z, T got) {
    const MathError e = math_error(f, x, y, z, got);
    ++checked;
    if (e.in_abs)
        max_abs = std::max(max_abs, e.abs);
    else if (std::isfinite(e.ulp))
        max_ulp = std::max(max_ulp, e.ulp);
    max_ratio = std::max(max_ratio, e.ratio);
    if (e.ok()) return;
    if (bad++ > 0) return; // the first one is reported
    std::string args = text(x);
    if (f.arity > 1) args += ", " + text(y);
    if (f.arity > 2) args += ", " + text(z);
    first_bad = std::string(f.name) + (sizeof(T) == 4 ? "_f32(" : "_f64(") + args +
                ") = " + text(got) + ", want " + text(f.reference(x, y, z)) +
                (e.in_abs               ? " (absolute error " + text(e.abs) + ")"
                 : std::isfinite(e.ulp) ? " (" + text(e.ulp) + " ulp)"
                                        : " (special value)");
}

template <class T> void MathSummary::add_int(const MathIntFunction& f, T x, int32_t got) {
    int32_t want;
    if constexpr (sizeof(T) == 4)
        want = f.ref32(x);
    else
        want = f.ref64(x);
    ++checked;
    if (got == want) return;
    max_ratio = std::numeric_limits<double>::infinity();
    if (bad++ == 0)
        first_bad = std::string(f.name) + (sizeof(T) == 4 ? "_f32(" : "_f64(") + text(x) +
                    ") = " + std::to_string(got) + ", want " + std::to_string(want);
}

template std::vector<float> math_inputs<float>(const MathRange&, bool, int, size_t, unsigned);
template std::vector<double> math_inputs<double>(const MathRange&, bool, int, size_t, unsigned);
template MathError math_error<float>(const MathFunction&, float, float, float, float);
template MathError math_error<double>(const MathFunction&, double, double, double, double);
template void MathSummary::add<float>(const MathFunction&, float, float, float, float);
template void MathSummary::add<double>(const MathFunction&, double, double, double, double);
template void MathSummary::add_int<float>(const MathIntFunction&, float, int32_t);
template void MathSummary::add_int<double>(const MathIntFunction&, double, int32_t);

} // namespace plexus::samples
