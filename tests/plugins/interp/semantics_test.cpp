// The IR's scalar semantics on the interpreter, element by element against C++ on the host:
// wrapping integers, shifts modulo the width, signed/unsigned min/max, casts, every math
// intrinsic, and divergent control flow (break, continue, return, short-circuit and/or).
#include "elementwise.hpp"

#include <plexus/catalog.hpp>

#include <bit>
#include <cmath>
#include <functional>
#include <limits>
#include <map>

namespace interp_test {
namespace {

using B = ir::BinaryOp;

// add, sub, mul, div, rem, min, max, bit ops, shifts, neg, bitnot, comparisons on integer T,
// against C++ computed in an unsigned type (wrapping) with the IR's shift rule. U is at least
// 32 bits wide: u16 * u16 would otherwise be promoted to int and overflow.
template <class T> void check_integer_ops() {
    using U = std::conditional_t<(sizeof(T) < 4), uint32_t, std::make_unsigned_t<T>>;
    constexpr T lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
    constexpr U width = sizeof(T) * 8 - 1;
    auto b = [](B op) { return [op](E x, E y, E) { return bin(op, x, y); }; };
    auto as_t = [](bool v) { return T(v); };
    const Scalar t = scalar_of<T>();
    std::vector<Op<T, T>> ops = {
        {"add", b(B::Add), [](T x, T y, T) { return T(U(x) + U(y)); }},
        {"sub", b(B::Sub), [](T x, T y, T) { return T(U(x) - U(y)); }},
        {"mul", b(B::Mul), [](T x, T y, T) { return T(U(x) * U(y)); }},
        {"div", b(B::Div),
         [](T x, T y, T) { return std::is_signed_v<T> && y == T(-1) ? T(U(0) - U(x)) : T(x / y); }},
        {"rem", b(B::Rem),
         [](T x, T y, T) { return std::is_signed_v<T> && y == T(-1) ? T(0) : T(x % y); }},
        {"min", b(B::Min), [](T x, T y, T) { return std::min(x, y); }},
        {"max", b(B::Max), [](T x, T y, T) { return std::max(x, y); }},
        {"bitand", b(B::BitAnd), [](T x, T y, T) { return T(x & y); }},
        {"bitor", b(B::BitOr), [](T x, T y, T) { return T(x | y); }},
        {"bitxor", b(B::BitXor), [](T x, T y, T) { return T(x ^ y); }},
        {"shl", b(B::Shl), [](T x, T y, T) { return T(U(x) << (U(y) & width)); }},
        {"shr", b(B::Shr), [](T x, T y, T) { return T(x >> (U(y) & width)); }},
        {"neg", [](E x, E, E) { return ir::Unary::make(ir::UnaryOp::Neg, x); },
         [](T x, T, T) { return T(U(0) - U(x)); }},
        {"bitnot", [](E x, E, E) { return ir::Unary::make(ir::UnaryOp::BitNot, x); },
         [](T x, T, T) { return T(~x); }},
        {"lt", [t](E x, E y, E) { return cast(t, bin(B::Lt, x, y)); },
         [as_t](T x, T y, T) { return as_t(x < y); }},
        {"ge", [t](E x, E y, E) { return cast(t, bin(B::Ge, x, y)); },
         [as_t](T x, T y, T) { return as_t(x >= y); }},
        {"eq", [t](E x, E y, E) { return cast(t, bin(B::Eq, x, y)); },
         [as_t](T x, T y, T) { return as_t(x == y); }},
        {"select", [](E x, E y, E z) { return ir::Select::make(bin(B::Ne, x, z), x, y); },
         [](T x, T y, T z) { return x != z ? x : y; }},
    };
    const size_t n = 777;
    auto xs = with_specials(random_vector<T>(n, lo, hi), {lo, hi, T(0), T(-1), T(1), lo, T(7)});
    auto ys = with_specials(random_vector<T>(n, lo, hi), {T(-1), T(-1), T(3), hi, lo, T(1), T(7)});
    for (auto& y : ys)
        y = y == 0 ? T(5) : y; // division by zero is an error, tested elsewhere
    auto zs = xs;
    for (size_t i = 0; i < n; i += 2)
        zs[i] = random_vector<T>(1, lo, hi)[0];
    check_elementwise<T, T>(std::string("int_") + ir::to_string(t), ops, xs, ys, zs);
}

} // namespace

TEST_CASE("integer semantics: wrapping, shifts modulo the width, signedness of min/max/shr/div") {
    check_integer_ops<int32_t>();
    check_integer_ops<uint32_t>();
    check_integer_ops<int64_t>();
    check_integer_ops<uint64_t>();
}

TEST_CASE("i8, u8, i16, u16 wrap at their own width: nothing is promoted to int") {
    check_integer_ops<int8_t>();
    check_integer_ops<uint8_t>();
    check_integer_ops<int16_t>();
    check_integer_ops<uint16_t>();
}

TEST_CASE("casts: sign and zero extension, truncation, to and from bool and floats") {
    const Scalar I32 = Scalar::I32, U32 = Scalar::U32, I64 = Scalar::I64, F32 = Scalar::F32,
                 F64 = Scalar::F64, Bool = Scalar::Bool;
    std::vector<Op<int32_t, int64_t>> from_int = {
        {"i32->i64", [=](E x, E, E) { return cast(I64, x); },
         [](int32_t x, int32_t, int32_t) { return int64_t(x); }},
        {"i32->u32->i64", [=](E x, E, E) { return cast(I64, cast(U32, x)); },
         [](int32_t x, int32_t, int32_t) { return int64_t(uint32_t(x)); }},
        {"i64->i32",
         [=](E x, E y, E) { return cast(I64, cast(I32, bin(B::Mul, cast(I64, x), cast(I64, y)))); },
         [](int32_t x, int32_t y, int32_t) { return int64_t(int32_t(uint64_t(int64_t(x) * y))); }},
        {"i32->bool->i64", [=](E x, E, E) { return cast(I64, cast(Bool, x)); },
         [](int32_t x, int32_t, int32_t) { return int64_t(x != 0); }},
        {"i32->u64->i64", [=](E x, E, E) { return cast(I64, cast(Scalar::U64, x)); },
         [](int32_t x, int32_t, int32_t) { return int64_t(uint64_t(int64_t(x))); }},
    };
    auto xs =
        with_specials(random_vector<int32_t>(500, INT32_MIN, INT32_MAX), {0, -1, 1, INT32_MIN});
    auto ys = random_vector<int32_t>(500, INT32_MIN, INT32_MAX);
    check_elementwise<int32_t, int64_t>("casts_int", from_int, xs, ys, ys);

    // In range float -> integer truncates toward zero; out of range the interpreter saturates
    // and maps NaN to 0 (the IR leaves those undefined; this documents the interpreter's choice).
    std::vector<Op<float, int64_t>> from_float = {
        {"f32->i32", [=](E x, E, E) { return cast(I64, cast(I32, x)); },
         [](float x, float, float) -> int64_t {
             if (std::isnan(x)) return 0;
             if (x >= 2147483648.f) return INT32_MAX;
             if (x < -2147483648.f) return INT32_MIN;
             return int32_t(x);
         }},
        {"f32->u32", [=](E x, E, E) { return cast(I64, cast(U32, x)); },
         [](float x, float, float) -> int64_t {
             if (std::isnan(x) || x <= -1.f) return 0;
             if (x >= 4294967296.f) return UINT32_MAX;
             return uint32_t(x);
         }},
        {"f32->bool", [=](E x, E, E) { return cast(I64, cast(Bool, x)); },
         [](float x, float, float) { return int64_t(x != 0.f); }},
        {"f32->f64->i64", [=](E x, E, E) { return cast(I64, cast(F64, x)); },
         [](float x, float, float) -> int64_t {
             if (std::isnan(x)) return 0;
             if (x >= 9223372036854775808.f) return INT64_MAX;
             if (x < -9223372036854775808.f) return INT64_MIN;
             return int64_t(x);
         }},
    };
    const float nan = std::numeric_limits<float>::quiet_NaN(),
                inf = std::numeric_limits<float>::infinity();
    auto fx = with_specials(
        random_vector<float>(500, -1e6f, 1e6f),
        {nan, inf, -inf, 3e9f, -3e9f, 5e9f, -0.5f, 0.f, -0.f, 2.9999f, -2.9999f, 1e20f});
    check_elementwise<float, int64_t>("casts_float", from_float, fx, fx, fx);

    std::vector<Op<double, double>> to_float = {
        {"f64->f32", [=](E x, E, E) { return cast(F64, cast(F32, x)); },
         [](double x, double, double) { return double(float(x)); }},
        {"f64->i64->f32", [=](E x, E, E) { return cast(F64, cast(F32, cast(I64, x))); },
         [](double x, double, double) { return double(float(int64_t(x))); }},
        {"f64->u32->f64",
         [=](E x, E, E) { return cast(F64, cast(U32, ir::Unary::make(ir::UnaryOp::Neg, x))); },
         [](double x, double, double) { return -x <= -1 ? 0.0 : double(uint32_t(-x)); }},
    };
    check_elementwise<double, double>(
        "casts_to_float", to_float, random_vector<double>(500, -1e9, 1e9),
        random_vector<double>(500, 0, 1), random_vector<double>(500, 0, 1), 0.0);
}

// Every math intrinsic of the catalog in both precisions against <cmath> (float overloads for
// f32). Tolerance: 4e-7 relative (about 3 ulp) for f32 and 1e-15 for f64.
template <class T> void check_math(const char* suffix) {
    using F = std::function<T(T, T, T)>;
    std::map<std::string, F> host = {
        {"sqrt", [](T x, T, T) { return std::sqrt(x); }},
        {"rsqrt", [](T x, T, T) { return T(1) / std::sqrt(x); }},
        {"exp", [](T x, T, T) { return std::exp(x); }},
        {"exp2", [](T x, T, T) { return std::exp2(x); }},
        {"log", [](T x, T, T) { return std::log(x); }},
        {"log2", [](T x, T, T) { return std::log2(x); }},
        {"sin", [](T x, T, T) { return std::sin(x); }},
        {"cos", [](T x, T, T) { return std::cos(x); }},
        {"tan", [](T x, T, T) { return std::tan(x); }},
        {"pow", [](T x, T y, T) { return std::pow(x, y); }},
        {"fabs", [](T x, T, T) { return std::fabs(x); }},
        {"floor", [](T x, T, T) { return std::floor(x); }},
        {"ceil", [](T x, T, T) { return std::ceil(x); }},
        {"fma", [](T x, T y, T z) { return std::fma(x, y, z); }},
        {"min", [](T x, T y, T) { return std::fmin(x, y); }},
        {"max", [](T x, T y, T) { return std::fmax(x, y); }},
        {"clamp", [](T x, T y, T z) { return std::fmin(std::fmax(x, y), z); }},
#define PLX_LIBM1(fn) {#fn, [](T x, T, T) { return std::fn(x); }},
#define PLX_LIBM2(fn) {#fn, [](T x, T y, T) { return std::fn(x, y); }},
#include <plexus/libm.def>
#undef PLX_LIBM1
#undef PLX_LIBM2
    };
    // px::fast:: (f32 only): the interpreter computes the precise functions.
    if constexpr (std::is_same_v<T, float>) {
        for (const char* fn :
             {"exp", "exp2", "log", "log2", "log10", "sin", "cos", "tan", "pow", "sqrt", "rsqrt"})
            host.emplace(std::string("fast_") + fn, host.at(fn));
        host.emplace("fast_exp10", [](T x, T, T) { return std::pow(T(10), x); });
        host.emplace("fast_divide", [](T x, T y, T) { return x / y; });
        host.emplace("fast_recip", [](T x, T, T) { return T(1) / x; });
    }
    std::vector<Op<T, T>> ops;
    for (auto& info : plexus::intrinsic_catalog()) {
        const std::string& name = info.name;
        const std::string tail = std::string("_") + suffix;
        if (name.size() <= tail.size() ||
            name.compare(name.size() - tail.size(), tail.size(), tail) != 0 ||
            name.rfind("atomic_", 0) == 0 || name.rfind("subgroup_", 0) == 0 ||
            name.rfind("matrix_", 0) == 0)
            continue; // atomics, subgroup operations and fragments have suites of their own
        const std::string base = name.substr(0, name.size() - tail.size());
        if (base == "ldexp" || base == "ilogb")
            continue; // i32 operands: tests/core/kernel/math checks them
        CAPTURE(name);
        REQUIRE_MESSAGE(host.count(base), "a catalog math intrinsic has no host reference here");
        const size_t arity = info.args.size();
        ops.push_back({name,
                       [name, arity](E x, E y, E z) {
                           std::vector<E> args = {x, y, z};
                           args.resize(arity);
                           return call(name, args);
                       },
                       host.at(base)});
    }
    CHECK(ops.size() == host.size());
    const T nan = std::numeric_limits<T>::quiet_NaN(), inf = std::numeric_limits<T>::infinity();
    auto xs = with_specials(random_vector<T>(600, T(0.01), T(20)),
                            {nan, inf, T(-0.0), T(0), T(-2.5), T(1e-30)});
    auto ys =
        with_specials(random_vector<T>(600, T(-3), T(3)), {T(1), nan, T(2), nan, T(0.5), T(-1)});
    auto zs = random_vector<T>(600, T(-5), T(5));
    check_elementwise<T, T>(std::string("math_") + suffix, ops, xs, ys, zs,
                            std::is_same_v<T, float> ? 4e-7 : 1e-15);
}

TEST_CASE("math intrinsics: every catalog entry in f32 and f64 against <cmath>") {
    check_math<float>("f32");
    check_math<double>("f64");
}

TEST_CASE(
    "float min / max follow fmin / fmax: a NaN operand, even a signaling one, yields the other") {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const float snan = std::bit_cast<float>(0x7f800001u),
                negative_snan = std::bit_cast<float>(0xff812345u);
    std::vector<Op<float, float>> ops = {
        {"min", [](E x, E y, E) { return bin(B::Min, x, y); },
         [](float x, float y, float) { return ir_min(x, y); }},
        {"max", [](E x, E y, E) { return bin(B::Max, x, y); },
         [](float x, float y, float) { return ir_max(x, y); }},
        {"div", [](E x, E y, E) { return bin(B::Div, x, y); },
         [](float x, float y, float) { return x / y; }},
    };
    std::vector<float> xs = {nan, 1.f, nan, -0.f, 3.f, 2.f, 1.f, snan, 5.f, negative_snan};
    std::vector<float> ys = {2.f, nan, nan, 0.f, -3.f, 0.f, -0.f, 4.f, snan, snan};
    check_elementwise<float, float>("float_min_max", ops, xs, ys, ys, 0.0);
}

TEST_CASE(
    "divergent control flow: break, continue, return, for with per-item bounds, short-circuit") {
    using S = Scalar;
    auto gid = var("gid", S::I32), k = var("k", S::I32), acc = var("acc", S::I32);
    auto n = var("n", S::I32);
    auto pos = bin(B::LogicalAnd, bin(B::Lt, gid, n), bin(B::Gt, load("in", S::I32, gid), i32(0)));
    auto neg = bin(B::LogicalOr, bin(B::Ge, gid, n), bin(B::Le, load("in", S::I32, gid), i32(0)));
    const ir::Kernel kern = kernel(
        "control",
        {buffer("in", S::I32), buffer("out", S::I32, ir::Access::Write),
         buffer("flags", S::I32, ir::Access::Write), scalar("n", S::I32)},
        {let_gid(),
         // in[] has n elements: without short-circuit the padding work-items would read past it.
         let("f", bin(B::Add, cast(S::I32, pos), bin(B::Mul, i32(2), cast(S::I32, neg)))),
         if_(bin(B::Ge, gid, n), {ir::Return::make()}), store("flags", gid, var("f", S::I32)),
         let("acc", i32(0)), let("k", i32(0)),
         ir::While::make(
             ir::Const::make_bool(true),
             block({assign("k", bin(B::Add, k, i32(1))),
                    if_(bin(B::Gt, k, bin(B::Rem, gid, i32(7))), {ir::Break::make()}),
                    if_(bin(B::Eq, bin(B::Rem, k, i32(2)), i32(0)), {ir::Continue::make()}),
                    assign("acc", bin(B::Add, acc, k))})),
         ir::For::make(
             "j", i32(0), bin(B::Rem, gid, i32(9)), i32(2),
             block({if_(bin(B::Eq, var("j", S::I32), i32(4)), {ir::Continue::make()}),
                    assign("acc", bin(B::Add, acc, bin(B::Mul, var("j", S::I32), i32(100))))})),
         if_(bin(B::Eq, bin(B::Rem, gid, i32(5)), i32(0)), {ir::Return::make()}),
         store("out", gid, acc)});
    ir::validate(kern);
    const int count = 300;
    auto in = random_vector<int32_t>(count, -5, 5);
    Buffer bin_(in), bout(std::vector<int32_t>(count, -1)), bflags(std::vector<int32_t>(count, -1));
    Module m(kern);
    REQUIRE(m.status() == PLX_OK);
    REQUIRE(launch(m.kernel(), dims1(count, 32), {bin_, bout, bflags, count}) == PLX_OK);
    auto out = bout.read<int32_t>(), flags = bflags.read<int32_t>();
    for (int i = 0; i < count; ++i) {
        CAPTURE(i);
        REQUIRE(flags[i] == (in[i] > 0 ? 1 : 2));
        int a = 0;
        for (int kk = 1; kk <= i % 7; ++kk)
            if (kk % 2) a += kk;
        for (int j = 0; j < i % 9; j += 2)
            if (j != 4) a += j * 100;
        REQUIRE(out[i] == (i % 5 == 0 ? -1 : a));
    }
}

} // namespace interp_test
