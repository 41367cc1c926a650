// The math library on every backend of this build tree, one kernel per function: every function
// of the shared table (samples/math_functions.cpp: sqrt ... clamp, libm.def, ldexp, sincos,
// frexp's mantissa, px::fast::) in f32 and f64 (fast: f32) on random inputs over its range,
// plus the edge values (+-0, +-inf, NaN, the smallest denormal, +-1, the largest finite) where
// the function defines them, each result against the long double reference within the
// function's stated bound; then ldexp, frexp, ilogb and the classification exactly as the
// host's C library gives them, bit for bit. docs/kernel-language.md lists the errors measured
// per backend. A backend that cannot compile a function (CUDA without libdevice) says so and
// is skipped for it.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include "build_tree_config.hpp"
#include "math_functions.hpp"
#include "plexus/plexus.hpp"

#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <sstream>

namespace px = plexus;
using px::samples::MathFunction;
using px::samples::MathIntFunction;
using px::samples::MathSummary;

namespace {

constexpr size_t kInputs = 4096;

template <class T> auto form_of(const MathFunction& f) {
    if constexpr (std::is_same_v<T, float>)
        return f.f32;
    else
        return f.f64;
}
template <class T> const char* type_name() {
    return std::is_same_v<T, float> ? "f32" : "f64";
}

px::Config test_config() {
    px::Config config = px::test::build_tree_config();
    config.cache_dir = "";
    config.fallback = false;
    return config;
}

// y = f(x, y, z), as IR.
template <class T> auto kernel_for(const MathFunction& f) {
    const auto call = form_of<T>(f);
    return px::kernel(
        std::string("math_") + f.name + "_" + type_name<T>(), {"x", "y", "z", "out", "n"},
        [call](px::In<T> x, px::In<T> y, px::In<T> z, px::Out<T> out, px::Int n) {
            px::Int i = px::global_id(0);
            px::If(i < n, [&] {
                out[i] = call(px::Value<T>(x[i]), px::Value<T>(y[i]), px::Value<T>(z[i]));
            });
        });
}

template <class T>
MathSummary measure(px::Runtime& rt, const std::string& backend, const MathFunction& f) {
    std::vector<T> in[3];
    for (int a = 0; a < 3; ++a)
        in[a] = px::samples::math_inputs<T>(f.range[a], (f.edges >> a) & 1, a, kInputs, a + 1);
    px::Buffer<T> bx(rt, in[0]), by(rt, in[1]), bz(rt, in[2]), out(rt, kInputs);
    rt.launch(px::Target{backend}, kernel_for<T>(f), px::Grid(kInputs), bx, by, bz, out,
              int(kInputs))
        .wait();
    const std::vector<T> got = out.to_vector();
    MathSummary s;
    for (size_t i = 0; i < kInputs; ++i)
        s.add(f, in[0][i], in[1][i], in[2][i], got[i]);
    return s;
}

template <class T> void check_all() {
    px::Runtime rt(test_config());
    for (const px::Backend* b : rt.backends()) {
        if (sizeof(T) == 8 && !b->devices().at(0).fp64) continue;
        for (const MathFunction& f : px::samples::math_functions()) {
            if (!form_of<T>(f)) continue;
            const std::string backend = b->name(),
                              name = std::string(f.name) + "_" + type_name<T>();
            CAPTURE(backend);
            CAPTURE(name);
            MathSummary s;
            try {
                s = measure<T>(rt, backend, f);
            } catch (const px::Error& e) {
                if (e.code() != px::ErrorCode::Unsupported) throw;
                MESSAGE(backend << " cannot run " << name << ": " << e.what());
                continue;
            }
            std::ostringstream abs;
            if (f.abs > 0) abs << ", absolute " << s.max_abs << " where that bound applies";
            MESSAGE(backend << " " << name << ": max " << s.max_ulp << " ulp" << abs.str()
                            << " over " << s.checked << " inputs (" << s.max_ratio
                            << " of the bound)");
            CHECK_MESSAGE(s.bad == 0, s.bad << " of " << s.checked
                                            << " outside the bound; first: " << s.first_bad);
        }
    }
}

} // namespace

TEST_CASE("every math function in f32 on every backend, in ulp against long double") {
    check_all<float>();
}
TEST_CASE("every math function in f64 on every backend, in ulp against long double") {
    check_all<double>();
}

namespace {

// Edge values, NaNs of both signs and negative denormals, random ones in [-1e3, 1e3], and
// random ones over the type's whole range with a uniform exponent (denormals included).
template <class T> std::vector<T> exact_inputs() {
    using L = std::numeric_limits<T>;
    std::vector<T> x = px::samples::math_inputs<T>({-1e3, 1e3}, true, 0, 2048, 3);
    for (T v :
         {-L::quiet_NaN(), -L::denorm_min(), -L::max(), L::min(), -L::min(), T(0.5), T(-0.75)})
        x.push_back(v);
    const auto wide = px::samples::math_inputs<T>(
        {double(L::denorm_min()), double(L::max()), px::samples::MathRange::SignedLog}, false, 0,
        2048, 4);
    x.insert(x.end(), wide.begin(), wide.end());
    return x;
}

// Bit for bit, any NaN matching any NaN.
template <class T> bool same_bits(T got, T want) {
    using U = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
    return std::isnan(want) ? std::isnan(got) : std::bit_cast<U>(got) == std::bit_cast<U>(want);
}

// y = ldexp(x, e), m = frexp(x).mantissa and every int function of the table (frexp's exponent,
// ilogb, the classification) of x, against the host's C library.
template <class T> void check_exact() {
    px::Runtime rt(test_config());
    const std::vector<T> x = exact_inputs<T>();
    const int n = int(x.size());
    std::vector<int32_t> e(x.size());
    std::mt19937 g(5);
    for (auto& v : e)
        v = int32_t(g() % 2301) - 1150; // past both ends of f64's exponents
    const auto& ints = px::samples::math_int_functions();
    static const auto k =
        px::kernel(std::string("exact_") + type_name<T>(), {"x", "e", "y", "m", "ints", "n"},
                   [](px::In<T> x, px::In<int32_t> e, px::Out<T> y, px::Out<T> m,
                      px::Out<int32_t> ints, px::Int n) {
                       px::Int i = px::global_id(0);
                       px::If(i < n, [&] {
                           const px::Value<T> v = x[i];
                           y[i] = px::ldexp(v, px::Value<int32_t>(e[i]));
                           auto [mantissa, exponent] = px::frexp(v);
                           m[i] = mantissa;
                           const auto& fns = px::samples::math_int_functions();
                           for (size_t f = 0; f < fns.size(); ++f) {
                               if constexpr (std::is_same_v<T, float>)
                                   ints[int32_t(f) * n + i] = fns[f].f32(v);
                               else
                                   ints[int32_t(f) * n + i] = fns[f].f64(v);
                           }
                       });
                   });
    for (const px::Backend* b : rt.backends()) {
        if (sizeof(T) == 8 && !b->devices().at(0).fp64) continue;
        const std::string backend = b->name();
        CAPTURE(backend);
        CAPTURE(type_name<T>());
        px::Buffer<T> bx(rt, x), by(rt, x.size()), bm(rt, x.size());
        px::Buffer<int32_t> be(rt, e), bi(rt, ints.size() * x.size());
        try {
            rt.launch(px::Target{backend}, k, px::Grid(x.size()), bx, be, by, bm, bi, n).wait();
        } catch (const px::Error& err) {
            if (err.code() != px::ErrorCode::Unsupported) throw;
            MESSAGE(backend << " cannot run ldexp / frexp: " << err.what());
            continue;
        }
        const std::vector<T> y = by.to_vector(), m = bm.to_vector();
        const std::vector<int32_t> got = bi.to_vector();
        size_t bad = 0;
        for (size_t i = 0; i < x.size(); ++i) {
            int exponent;
            const T want_y = std::ldexp(x[i], e[i]), want_m = std::frexp(x[i], &exponent);
            if (!same_bits(y[i], want_y) && bad++ == 0)
                FAIL_CHECK("ldexp(" << x[i] << ", " << e[i] << ") = " << y[i] << ", want "
                                    << want_y);
            if (!same_bits(m[i], want_m) && bad++ == 0)
                FAIL_CHECK("frexp(" << x[i] << ") has the mantissa " << m[i] << ", want "
                                    << want_m);
        }
        for (size_t f = 0; f < ints.size(); ++f) {
            MathSummary s;
            for (size_t i = 0; i < x.size(); ++i)
                s.add_int(ints[f], x[i], got[f * x.size() + i]);
            CHECK_MESSAGE(s.bad == 0,
                          s.bad << " of " << s.checked << " wrong; first: " << s.first_bad);
        }
        CHECK_MESSAGE(bad == 0, bad << " wrong ldexp and frexp results of " << 2 * x.size());
    }
}

} // namespace

TEST_CASE("ldexp, frexp, ilogb, isnan, isinf and signbit, bit for bit as the host's C library, on "
          "every backend") {
    check_exact<float>();
    check_exact<double>();
}

TEST_CASE("a fast function exists in f32 only: the IR refuses its f64 name") {
    const px::ir::Expr x = px::ir::Const::make_float(px::ir::Scalar::F64, 1.0);
    try {
        px::ir::Call::make("fast_exp_f64", {x});
        FAIL("fast_exp_f64 was accepted");
    } catch (const px::Error& e) {
        CHECK(std::string(e.what()).find("unknown intrinsic 'fast_exp_f64'") != std::string::npos);
    }
}
