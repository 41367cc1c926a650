// The math functions of plexus/libm.def in f32 and f64 on every backend of this build tree:
// y = f(x) (or f(x, z)) on random inputs over each function's domain plus the edge values
// (+-0, +-inf, NaN, the smallest denormal, +-1, the largest finite), every element against the
// long double function rounded to the type, in ulp of that type. NaN must be NaN and an
// infinite or exact-zero reference must be met exactly; every other element within the stated
// bound of its function (the OpenCL 1.2 full-profile requirement, the loosest a conforming
// device may have; its "0 ulp" functions, correctly rounded, get 0.5 against the exact value;
// docs/kernel-language.md lists the errors measured per backend). A backend
// that cannot compile a function (CUDA without libdevice) says so and is skipped for it.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include "build_tree_config.hpp"
#include "plexus/plexus.hpp"

#include <cmath>
#include <limits>
#include <map>
#include <algorithm>
#include <random>

namespace px = plexus;

namespace {

struct Fn {
    const char* name;
    int arity;
    long double (*ref1)(long double);
    long double (*ref2)(long double, long double);
    double lo, hi;   // the random inputs' range (x; z for a binary function takes z_lo, z_hi)
    double z_lo, z_hi;
    double ulp32, ulp64; // stated bounds
};

#define U(f, lo, hi, b32, b64) Fn{#f, 1, [](long double x) { return std::f(x); }, nullptr, lo, hi, 0, 0, b32, b64}
#define B(f, lo, hi, zlo, zhi, b32, b64) \
    Fn{#f, 2, nullptr, [](long double x, long double z) { return std::f(x, z); }, lo, hi, zlo, zhi, b32, b64}
const std::vector<Fn>& functions() {
    static const std::vector<Fn> all = {
        U(erf, -5, 5, 16, 16),         U(erfc, -5, 10, 16, 16),       U(tanh, -10, 10, 5, 5),
        U(sinh, -20, 20, 4, 4),        U(cosh, -20, 20, 4, 4),        U(asinh, -1e4, 1e4, 4, 4),
        U(acosh, 1, 1e4, 4, 4),        U(atanh, -0.99, 0.99, 5, 5),   U(asin, -1, 1, 4, 4),
        U(acos, -1, 1, 4, 4),          U(atan, -1e4, 1e4, 5, 5),      U(expm1, -10, 10, 3, 3),
        U(log1p, -0.99, 1e4, 2, 2),    U(log10, 1e-6, 1e6, 3, 3),     U(cbrt, -1e6, 1e6, 2, 4) /* f64: glibc's cbrt, behind native and interp, measured 2.09 ulp */,
        U(lgamma, 2.5, 30, 16, 16),    U(tgamma, 0.1, 30, 16, 16),    U(round, -1e6, 1e6, 0.5, 0.5),
        U(trunc, -1e6, 1e6, 0.5, 0.5),     U(rint, -1e6, 1e6, 0.5, 0.5),
        B(atan2, -10, 10, -10, 10, 6, 6),  B(hypot, -1e3, 1e3, -1e3, 1e3, 4, 4),
        B(fmod, -1e3, 1e3, 0.1, 100, 0.5, 0.5), B(remainder, -1e3, 1e3, 0.1, 100, 0.5, 0.5),
        B(copysign, -1e3, 1e3, -1, 1, 0.5, 0.5), B(fdim, -1e3, 1e3, -1e3, 1e3, 0.5, 0.5),
    };
    return all;
}
#undef U
#undef B

template <class T> std::vector<T> inputs(double lo, double hi, unsigned seed) {
    std::mt19937 g(seed);
    std::uniform_real_distribution<double> d(lo, hi);
    std::vector<T> v = {T(0), T(-0.0), std::numeric_limits<T>::infinity(), -std::numeric_limits<T>::infinity(),
                        std::numeric_limits<T>::quiet_NaN(), std::numeric_limits<T>::denorm_min(), T(1), T(-1),
                        std::numeric_limits<T>::max()};
    while (v.size() < 4096) v.push_back(T(d(g)));
    return v;
}

// |got - want| in ulp of T at want (rounded to T); -1 when a special value is not met.
template <class T> long double ulp_error(T got, long double want) {
    if (std::isnan(want)) return std::isnan(got) ? 0 : -1;
    const T w = T(want);
    if (std::isinf(w)) return got == w ? 0 : -1; // overflow to inf is the rounded result
    if (std::isnan(got)) return -1;
    if (want == 0) return got == 0 ? 0 : -1;
    const T a = std::fabs(w);
    const long double ulp = (long double)std::nextafter(a, std::numeric_limits<T>::infinity()) - a;
    return std::fabs((long double)got - want) / ulp;
}

// The kernel language's function of that name, through the same list the catalog uses.
template <class T> px::Value<T> call1(const std::string& name, const px::Value<T>& x) {
#define PLX_LIBM1(fn) \
    if (name == #fn) return px::fn(x);
#define PLX_LIBM2(fn)
#include <plexus/libm.def>
#undef PLX_LIBM1
#undef PLX_LIBM2
    throw std::logic_error("no unary function " + name);
}
template <class T> px::Value<T> call2(const std::string& name, const px::Value<T>& x, const px::Value<T>& z) {
#define PLX_LIBM1(fn)
#define PLX_LIBM2(fn) \
    if (name == #fn) return px::fn(x, z);
#include <plexus/libm.def>
#undef PLX_LIBM1
#undef PLX_LIBM2
    throw std::logic_error("no binary function " + name);
}

// y = f(x) or f(x, z), as IR.
template <class T> std::shared_ptr<const px::ir::Kernel> kernel_for(const Fn& f) {
    const std::string name = std::string("math_") + f.name + (sizeof(T) == 4 ? "_f32" : "_f64");
    const std::string fn = f.name;
    if (f.arity == 1)
        return px::kernel(name, {"x", "y", "n"}, [fn](px::In<T> x, px::Out<T> y, px::Int n) {
                   px::Int i = px::global_id(0);
                   px::If(i < n, [&] { y[i] = call1<T>(fn, px::Value<T>(x[i])); });
               }).ir_ptr();
    return px::kernel(name, {"x", "z", "y", "n"}, [fn](px::In<T> x, px::In<T> z, px::Out<T> y, px::Int n) {
               px::Int i = px::global_id(0);
               px::If(i < n, [&] { y[i] = call2<T>(fn, px::Value<T>(x[i]), px::Value<T>(z[i])); });
           }).ir_ptr();
}

struct Measured {
    long double max_ulp = 0;
    size_t checked = 0, bad = 0;
    std::string first_bad;
};

template <class T> Measured measure(px::Runtime& rt, const std::string& backend, const Fn& f) {
    const std::vector<T> x = inputs<T>(f.lo, f.hi, 1);
    std::vector<T> z = f.arity == 2 ? inputs<T>(f.z_lo, f.z_hi, 2) : std::vector<T>();
    if (f.arity == 2) std::rotate(z.begin(), z.begin() + 3, z.end()); // pair each edge with others
    const size_t n = x.size();
    px::Buffer<T> bx(rt, x), bz(rt, f.arity == 2 ? z : std::vector<T>(1)), by(rt, n);
    std::vector<px::LaunchArg> args;
    args.emplace_back(bx);
    if (f.arity == 2) args.emplace_back(bz);
    args.emplace_back(by);
    args.push_back(px::LaunchArg::scalar<int32_t>(int32_t(n)));
    rt.launch_ir(px::Target{backend}, kernel_for<T>(f), px::Grid(n), args).wait();
    const std::vector<T> y = by.to_vector();
    const double bound = sizeof(T) == 4 ? f.ulp32 : f.ulp64;
    Measured m;
    for (size_t i = 0; i < n; ++i) {
        const long double want = f.arity == 1 ? f.ref1(x[i]) : f.ref2(x[i], z[i]);
        const long double e = ulp_error<T>(y[i], want);
        ++m.checked;
        if (e >= 0) m.max_ulp = std::max(m.max_ulp, e);
        if (e < 0 || e > bound) {
            if (m.bad++ == 0)
                m.first_bad = std::string(f.name) + "(" + std::to_string(double(x[i])) +
                              (f.arity == 2 ? ", " + std::to_string(double(z[i])) : std::string()) + ") = " +
                              std::to_string(double(y[i])) + ", want " + std::to_string(double(want)) +
                              (e < 0 ? " (special value)" : " (" + std::to_string(double(e)) + " ulp)");
        }
    }
    return m;
}

template <class T> void check_all(const char* type) {
    px::Config config = px::test::build_tree_config();
    config.cache_dir = "";
    config.fallback = false;
    px::Runtime rt(config);
    for (const px::Backend* b : rt.backends()) {
        if (sizeof(T) == 8 && !b->devices().at(0).fp64) continue;
        for (const Fn& f : functions()) {
            const std::string backend = b->name(), name = std::string(f.name) + "_" + type;
            CAPTURE(backend);
            CAPTURE(name);
            Measured m;
            try {
                m = measure<T>(rt, b->name(), f);
            } catch (const px::Error& e) {
                if (e.code() != px::ErrorCode::Unsupported) throw;
                MESSAGE(backend << " cannot run " << name << ": " << e.what());
                continue;
            }
            MESSAGE(backend << " " << name << ": max " << double(m.max_ulp) << " ulp over " << m.checked
                            << " inputs (bound " << (sizeof(T) == 4 ? f.ulp32 : f.ulp64) << ")");
            CHECK_MESSAGE(m.bad == 0, m.bad << " of " << m.checked << " outside the bound; first: " << m.first_bad);
        }
    }
}

} // namespace

TEST_CASE("libm functions in f32 on every backend, in ulp against long double") { check_all<float>("f32"); }
TEST_CASE("libm functions in f64 on every backend, in ulp against long double") { check_all<double>("f64"); }

namespace {

// y = ldexp(x, e) and the classification flags (isnan 1, isinf 2, signbit 4) of x, exactly as
// the C library on the host says, on the edge values and random ones.
template <class T> void check_exact_functions(const char* type) {
    px::Runtime rt(px::test::build_tree_config());
    const std::vector<T> x = inputs<T>(-1e3, 1e3, 3);
    std::vector<T> signed_x = x;
    signed_x.push_back(-std::numeric_limits<T>::quiet_NaN());
    signed_x.push_back(-std::numeric_limits<T>::denorm_min());
    std::vector<int32_t> e(x.size());
    std::mt19937 g(4);
    for (auto& v : e) v = int32_t(g() % 301) - 150;
    static const auto ldexp_k = px::kernel(std::string("ldexp_") + type, {"x", "e", "y", "n"},
        [](px::In<T> x, px::In<int32_t> e, px::Out<T> y, px::Int n) {
            px::Int i = px::global_id(0);
            px::If(i < n, [&] { y[i] = px::ldexp(px::Value<T>(x[i]), px::Value<int32_t>(e[i])); });
        });
    static const auto classify = px::kernel(std::string("classify_") + type, {"x", "flags", "n"},
        [](px::In<T> x, px::Out<uint32_t> flags, px::Int n) {
            px::Int i = px::global_id(0);
            px::If(i < n, [&] {
                px::Value<T> v = x[i];
                px::UInt f = 0u;
                px::If(px::isnan(v), [&] { f = f | 1u; });
                px::If(px::isinf(v), [&] { f = f | 2u; });
                px::If(px::signbit(v), [&] { f = f | 4u; });
                flags[i] = f;
            });
        });
    for (const px::Backend* b : rt.backends()) {
        if (sizeof(T) == 8 && !b->devices().at(0).fp64) continue;
        const std::string backend = b->name();
        CAPTURE(backend);
        CAPTURE(type);
        const int n = int(x.size()), m = int(signed_x.size());
        px::Buffer<T> bx(rt, x), by(rt, x.size()), bs(rt, signed_x);
        px::Buffer<int32_t> be(rt, e);
        px::Buffer<uint32_t> bf(rt, signed_x.size());
        try {
            rt.launch(px::Target{backend}, ldexp_k, px::Grid(size_t(n)), bx, be, by, n).wait();
        } catch (const px::Error& err) {
            if (err.code() != px::ErrorCode::Unsupported) throw;
            MESSAGE(backend << " cannot run ldexp: " << err.what());
            continue;
        }
        rt.launch(px::Target{backend}, classify, px::Grid(size_t(m)), bs, bf, m).wait();
        const std::vector<T> y = by.to_vector();
        const std::vector<uint32_t> flags = bf.to_vector();
        size_t bad = 0;
        for (size_t i = 0; i < x.size(); ++i) {
            const T want = std::ldexp(x[i], e[i]);
            const bool same = std::isnan(want) ? std::isnan(y[i]) : y[i] == want && std::signbit(y[i]) == std::signbit(want);
            if (!same && bad++ == 0)
                FAIL_CHECK("ldexp(" << double(x[i]) << ", " << e[i] << ") = " << double(y[i]) << ", want " << double(want));
        }
        for (size_t i = 0; i < signed_x.size(); ++i) {
            const T v = signed_x[i];
            const uint32_t want = (std::isnan(v) ? 1u : 0u) | (std::isinf(v) ? 2u : 0u) | (std::signbit(v) ? 4u : 0u);
            if (flags[i] != want && bad++ == 0)
                FAIL_CHECK("flags of " << double(v) << ": got " << flags[i] << ", want " << want);
        }
        CHECK_MESSAGE(bad == 0, bad << " wrong of " << x.size() + signed_x.size());
    }
}

} // namespace

TEST_CASE("ldexp, isnan, isinf and signbit, exactly, in f32 and f64 on every backend") {
    check_exact_functions<float>("f32");
    check_exact_functions<double>("f64");
}
