// Host code semantics element by element: math intrinsics in f32 and f64, integer operators,
// casts, control flow with short-circuit and select, and every atomic in both spaces.
#include "host_test.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <functional>
#include <limits>
#include <map>

using namespace host_test;

namespace {

template <class T> constexpr Scalar scalar_of() {
    if constexpr (std::is_same_v<T, int8_t>)
        return Scalar::I8;
    else if constexpr (std::is_same_v<T, uint8_t>)
        return Scalar::U8;
    else if constexpr (std::is_same_v<T, int16_t>)
        return Scalar::I16;
    else if constexpr (std::is_same_v<T, uint16_t>)
        return Scalar::U16;
    else if constexpr (std::is_same_v<T, float>)
        return Scalar::F32;
    else if constexpr (std::is_same_v<T, double>)
        return Scalar::F64;
    else if constexpr (std::is_same_v<T, int32_t>)
        return Scalar::I32;
    else if constexpr (std::is_same_v<T, uint32_t>)
        return Scalar::U32;
    else if constexpr (std::is_same_v<T, int64_t>)
        return Scalar::I64;
    else
        return Scalar::U64;
}

// f(x, y, z) for each math intrinsic; x > 0, y and z any (z is NaN now and then).
template <class T> struct MathCase {
    const char* name;
    std::vector<int> args; // 0: x, 1: y, 2: z
    std::function<T(T, T, T)> ref;
};
template <class T> std::vector<MathCase<T>> math_cases() {
    return {
        {"sqrt", {0}, [](T x, T, T) { return std::sqrt(x); }},
        {"rsqrt", {0}, [](T x, T, T) { return T(1) / std::sqrt(x); }},
        {"exp", {1}, [](T, T y, T) { return std::exp(y); }},
        {"exp2", {1}, [](T, T y, T) { return std::exp2(y); }},
        {"log", {0}, [](T x, T, T) { return std::log(x); }},
        {"log2", {0}, [](T x, T, T) { return std::log2(x); }},
        {"sin", {1}, [](T, T y, T) { return std::sin(y); }},
        {"cos", {1}, [](T, T y, T) { return std::cos(y); }},
        {"tan", {1}, [](T, T y, T) { return std::tan(y); }},
        {"pow", {0, 1}, [](T x, T y, T) { return std::pow(x, y); }},
        {"fabs", {1}, [](T, T y, T) { return std::fabs(y); }},
        {"floor", {1}, [](T, T y, T) { return std::floor(y); }},
        {"ceil", {1}, [](T, T y, T) { return std::ceil(y); }},
        {"fma", {0, 1, 2}, [](T x, T y, T z) { return std::fma(x, y, z); }},
        {"min", {1, 2}, [](T, T y, T z) { return std::fmin(y, z); }},
        {"max", {1, 2}, [](T, T y, T z) { return std::fmax(y, z); }},
        {"clamp", {2, 3, 4}, [](T, T, T z) { return std::fmin(std::fmax(z, T(-0.5)), T(0.75)); }}};
}

template <class T> void check_math() {
    Scalar F = scalar_of<T>();
    const char* suffix = F == Scalar::F32 ? "_f32" : "_f64";
    auto cases = math_cases<T>();
    const int nf = int(cases.size());
    std::vector<Stmt> then;
    Expr in[5] = {load("x", F, var("i")), load("y", F, var("i")), load("z", F, var("i")),
                  cf(-0.5, F), cf(0.75, F)};
    for (int j = 0; j < nf; ++j) {
        std::vector<Expr> args;
        for (int a : cases[j].args)
            args.push_back(in[a]);
        then.push_back(store("out", add(mul(var("i"), ci(nf)), ci(j)),
                             call(cases[j].name + std::string(suffix), args)));
    }
    auto k = kernel(std::string("math") + suffix,
                    {buf("x", F), buf("y", F), buf("z", F), buf("out", F, ir::Access::Write),
                     scalar("n", Scalar::I32)},
                    {let("i", gid()), if_(lt(var("i"), var("n")), block(then))});
    auto hk = compile(k);
    const int n = 1237;
    auto x = random_vec<T>(n, T(0.01), T(8)), y = random_vec<T>(n, T(-4), T(4)),
         z = random_vec<T>(n, T(-4), T(4));
    for (int i = 0; i < n; i += 17)
        z[i] = std::numeric_limits<T>::quiet_NaN(); // fmin/fmax keep the number
    std::vector<T> out(size_t(n) * nf);
    int32_t nn = n;
    run(*hk, k, {x.data(), y.data(), z.data(), out.data(), &nn}, grid1(n, 64));
    // Both sides call the same libm for the transcendental functions; allow 4 ulp anyway.
    const T eps = std::numeric_limits<T>::epsilon();
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < nf; ++j) {
            T want = cases[j].ref(x[i], y[i], z[i]), got = out[size_t(i) * nf + j];
            INFO(cases[j].name << suffix << " at " << i << ": x=" << x[i] << " y=" << y[i]
                               << " z=" << z[i] << " got " << got << " want " << want);
            if (std::isnan(want))
                REQUIRE(std::isnan(got));
            else
                REQUIRE(std::fabs(got - want) <=
                        4 * eps * std::max(std::fabs(want), std::numeric_limits<T>::min()));
        }
}

} // namespace

TEST_CASE("math intrinsics f32 against <cmath> (4 ulp)") {
    check_math<float>();
}
TEST_CASE("math intrinsics f64 against <cmath> (4 ulp)") {
    check_math<double>();
}

namespace {

template <class T> void check_int_ops() {
    using U = std::make_unsigned_t<T>;
    Scalar S = scalar_of<T>();
    constexpr int bits = int(sizeof(T) * 8);
    auto A = [&] { return load("a", S, var("i")); };
    auto B = [&] { return load("b", S, var("i")); };
    auto as_t = [&](Expr b) { return cast(S, std::move(b)); };
    std::vector<std::pair<Expr, std::function<T(T, T)>>> ops = {
        {add(A(), B()), [](T a, T b) { return T(U(a) + U(b)); }},
        {sub(A(), B()), [](T a, T b) { return T(U(a) - U(b)); }},
        {mul(A(), B()), [](T a, T b) { return T(U(a) * U(b)); }},
        {bin(BinaryOp::Div, A(), B()), [](T a, T b) { return T(a / b); }},
        {bin(BinaryOp::Rem, A(), B()), [](T a, T b) { return T(a % b); }},
        {bin(BinaryOp::Min, A(), B()), [](T a, T b) { return std::min(a, b); }},
        {bin(BinaryOp::Max, A(), B()), [](T a, T b) { return std::max(a, b); }},
        {bin(BinaryOp::BitAnd, A(), B()), [](T a, T b) { return T(a & b); }},
        {bin(BinaryOp::BitOr, A(), B()), [](T a, T b) { return T(a | b); }},
        {bin(BinaryOp::BitXor, A(), B()), [](T a, T b) { return T(a ^ b); }},
        {bin(BinaryOp::Shl, A(), B()), [](T a, T b) { return T(U(a) << (U(b) % bits)); }},
        {bin(BinaryOp::Shr, A(), B()),
         [](T a, T b) { return T(a >> (U(b) % bits)); }}, // C++20: arithmetic for signed
        {ir::Unary::make(ir::UnaryOp::Neg, A()), [](T a, T) { return T(U(0) - U(a)); }},
        {ir::Unary::make(ir::UnaryOp::BitNot, A()), [](T a, T) { return T(~a); }},
        {sel(lt(A(), B()), A(), B()), [](T a, T b) { return a < b ? a : b; }},
        {as_t(bin(BinaryOp::Le, A(), B())), [](T a, T b) { return T(a <= b); }},
        {as_t(bin(BinaryOp::Gt, A(), B())), [](T a, T b) { return T(a > b); }},
        {as_t(bin(BinaryOp::Ge, A(), B())), [](T a, T b) { return T(a >= b); }},
        {as_t(eq(A(), B())), [](T a, T b) { return T(a == b); }},
        {as_t(bin(BinaryOp::Ne, A(), B())), [](T a, T b) { return T(a != b); }},
        {as_t(ir::Unary::make(ir::UnaryOp::Not, lt(A(), B()))),
         [](T a, T b) { return T(!(a < b)); }},
    };
    const int no = int(ops.size());
    std::vector<Stmt> then;
    for (int j = 0; j < no; ++j)
        then.push_back(store("out", add(mul(var("i"), ci(no)), ci(j)), ops[j].first));
    auto k = kernel(
        std::string("int_ops_") + ir::to_string(S),
        {buf("a", S), buf("b", S), buf("out", S, ir::Access::Write), scalar("n", Scalar::I32)},
        {let("i", gid()), if_(lt(var("i"), var("n")), block(then))});
    auto hk = compile(k);
    const int n = 3001;
    auto a = random_vec<T>(n, std::numeric_limits<T>::min(), std::numeric_limits<T>::max());
    auto b = random_vec<T>(n, std::numeric_limits<T>::min(), std::numeric_limits<T>::max());
    for (int i = 0; i < n; ++i) {
        if (i % 3 == 0) b[i] = T(i % 200); // shift amounts below, at and above the width
        if (i % 7 == 0) b[i] = a[i];
        if (b[i] == 0 || (std::is_signed_v<T> && T(b[i] + 1) == 0)) b[i] = 3; // division is defined
    }
    std::vector<T> out(size_t(n) * no);
    int32_t nn = n;
    run(*hk, k, {a.data(), b.data(), out.data(), &nn}, grid1(n, 100));
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < no; ++j) {
            INFO(ir::to_string(S) << " op " << j << " a=" << +a[i] << " b=" << +b[i]);
            REQUIRE(out[size_t(i) * no + j] == ops[j].second(a[i], b[i]));
        }
}

} // namespace

TEST_CASE("integer operators, exact: i32 u32 i64 u64") {
    check_int_ops<int32_t>();
    check_int_ops<uint32_t>();
    check_int_ops<int64_t>();
    check_int_ops<uint64_t>();
}

TEST_CASE("integer operators, exact: i8 u8 i16 u16 wrap at their width, nothing promoted") {
    check_int_ops<int8_t>();
    check_int_ops<uint8_t>();
    check_int_ops<int16_t>();
    check_int_ops<uint16_t>();
}

TEST_CASE("integer division by zero or INT_MIN / -1 does not trap") {
    Scalar I = Scalar::I32;
    auto k = kernel(
        "div_edge",
        {buf("a", I), buf("b", I), buf("q", I, ir::Access::Write), buf("r", I, ir::Access::Write)},
        {let("i", gid()),
         store("q", var("i"), bin(BinaryOp::Div, load("a", I, var("i")), load("b", I, var("i")))),
         store("r", var("i"), bin(BinaryOp::Rem, load("a", I, var("i")), load("b", I, var("i"))))});
    auto hk = compile(k);
    std::vector<int32_t> a = {7, INT32_MIN, INT32_MIN, -9}, b = {0, -1, 0, -1}, q(4), r(4);
    run(*hk, k, {a.data(), b.data(), q.data(), r.data()}, grid1(4, 4));
    // Undefined in the IR; what the host code gives is a / 1 and wrapping, without a signal.
    CHECK(q == std::vector<int32_t>{7, INT32_MIN, INT32_MIN, 9});
    CHECK(r == std::vector<int32_t>{0, 0, 0, 0});
}

namespace {

// Every pair of the values (a divisor neither 0 nor -1) divided and taken modulo: the host code
// divides by a varying divisor in doubles (hooks.cpp, int_divide), which must give C's
// truncated quotient for all 32-bit operands, the largest and the nearest to a whole quotient
// included, in W-wide chunks.
template <class T> void check_division_extremes(const std::vector<T>& values) {
    const Scalar S = std::is_signed_v<T> ? Scalar::I32 : Scalar::U32;
    auto k = kernel(
        std::string("div_extremes_") + ir::to_string(S),
        {buf("a", S), buf("b", S), buf("q", S, ir::Access::Write), buf("r", S, ir::Access::Write)},
        {let("i", gid()),
         store("q", var("i"), bin(BinaryOp::Div, load("a", S, var("i")), load("b", S, var("i")))),
         store("r", var("i"), bin(BinaryOp::Rem, load("a", S, var("i")), load("b", S, var("i"))))});
    std::vector<T> a, b;
    for (T x : values)
        for (T y : values)
            if (y != 0 && !(std::is_signed_v<T> && y == T(-1))) a.push_back(x), b.push_back(y);
    while (a.size() % 64)
        a.push_back(T(a.size())), b.push_back(T(3)); // whole groups of 64
    const size_t n = a.size();
    for (const std::string& features : feature_sets()) {
        CAPTURE(features);
        auto hk = compile(k, features);
        std::vector<T> q(n), r(n);
        run(*hk, k, {a.data(), b.data(), q.data(), r.data()}, grid1(n, 64));
        for (size_t i = 0; i < n; ++i) {
            INFO(ir::to_string(S) << " a=" << a[i] << " b=" << b[i]);
            CHECK(q[i] == T(a[i] / b[i]));
            CHECK(r[i] == T(a[i] % b[i]));
        }
    }
}

} // namespace

TEST_CASE("integer division by a varying divisor: extreme 32-bit operands, exact at each width") {
    const int32_t lo = std::numeric_limits<int32_t>::min(),
                  hi = std::numeric_limits<int32_t>::max();
    check_division_extremes<int32_t>(
        {lo, lo + 1, lo + 2, -(1 << 30) - 1, -65537, -65536,        -7,     -3,     -2, -1, 0, 1,
         2,  3,      7,      65535,          65536,  (1 << 30) + 1, hi - 2, hi - 1, hi});
    const uint32_t top = std::numeric_limits<uint32_t>::max();
    check_division_extremes<uint32_t>({0u, 1u, 2u, 3u, 7u, 65535u, 65536u, 65537u, 0x7fffffffu,
                                       0x80000000u, 0x80000001u, top - 3, top - 2, top - 1, top});
}

TEST_CASE("casts with C semantics, exact") {
    Scalar I64 = Scalar::I64, F64 = Scalar::F64;
    auto D = [&] { return load("d", F64, var("i")); };
    auto E = [&] { return load("e", F64, var("i")); };
    auto Q = [&] { return load("q", I64, var("i")); };
    std::vector<Expr> oi = {
        cast(I64, cast(Scalar::I32, Q())),
        cast(I64, cast(Scalar::U32, Q())),
        cast(I64, D()),
        cast(I64, cast(Scalar::I32, cast(Scalar::F32, D()))),
        cast(I64, cast(Scalar::Bool, E())),
        cast(I64, cast(Scalar::U64, Q())),
        cast(I64, cast(Scalar::Bool, Q())),
        cast(I64, cast(Scalar::U32, ir::Call::make("fabs_f64", {D()}))),
        sel(bin(BinaryOp::Gt, D(), cf(0, F64)), Q(), ir::Unary::make(ir::UnaryOp::Neg, Q()))};
    std::vector<Expr> of = {cast(F64, cast(Scalar::F32, D())), cast(F64, Q()),
                            cast(F64, cast(Scalar::U64, Q())), cast(F64, cast(Scalar::I32, Q())),
                            cast(F64, cast(Scalar::U32, Q())), cast(F64, cast(Scalar::Bool, Q())),
                            cast(F64, cast(Scalar::F32, Q()))};
    std::vector<Stmt> then;
    for (size_t j = 0; j < oi.size(); ++j)
        then.push_back(store("oi", add(mul(var("i"), ci(int(oi.size()))), ci(int(j))), oi[j]));
    for (size_t j = 0; j < of.size(); ++j)
        then.push_back(store("of", add(mul(var("i"), ci(int(of.size()))), ci(int(j))), of[j]));
    auto k = kernel("casts",
                    {buf("d", F64), buf("e", F64), buf("q", I64), buf("oi", I64, ir::Access::Write),
                     buf("of", F64, ir::Access::Write), scalar("n", Scalar::I32)},
                    {let("i", gid()), if_(lt(var("i"), var("n")), block(then))});
    auto hk = compile(k);
    const int n = 2003;
    auto d = random_vec<double>(n, -2e9, 2e9), e = random_vec<double>(n, -1, 1);
    auto q = random_vec<int64_t>(n, INT64_MIN, INT64_MAX);
    for (int i = 0; i < n; i += 5)
        e[i] = 0.0;
    for (int i = 2; i < n; i += 11)
        e[i] = NAN; // NaN is != 0, so true
    for (int i = 0; i < n; i += 13)
        q[i] = 0;
    for (int i = 1; i < n; i += 4)
        d[i] = std::trunc(d[i]) + 0.5 * (i % 3 == 0 ? -1 : 1) * (i % 2);
    std::vector<int64_t> gi(n * oi.size());
    std::vector<double> gf(n * of.size());
    int32_t nn = n;
    run(*hk, k, {d.data(), e.data(), q.data(), gi.data(), gf.data(), &nn}, grid1(n, 128));
    for (int i = 0; i < n; ++i) {
        int64_t wi[] = {int64_t(int32_t(q[i])),
                        int64_t(uint32_t(q[i])),
                        int64_t(d[i]),
                        int64_t(int32_t(float(d[i]))),
                        int64_t(e[i] != 0),
                        q[i],
                        int64_t(q[i] != 0),
                        int64_t(uint32_t(std::fabs(d[i]))),
                        d[i] > 0 ? q[i] : int64_t(0ull - uint64_t(q[i]))};
        double wf[] = {double(float(d[i])),   double(q[i]),           double(uint64_t(q[i])),
                       double(int32_t(q[i])), double(uint32_t(q[i])), double(q[i] != 0),
                       double(float(q[i]))};
        for (size_t j = 0; j < oi.size(); ++j) {
            INFO("integer cast " << j << " at " << i << " d=" << d[i] << " q=" << q[i]);
            REQUIRE(gi[i * oi.size() + j] == wi[j]);
        }
        for (size_t j = 0; j < of.size(); ++j) {
            INFO("float cast " << j << " at " << i << " d=" << d[i] << " q=" << q[i]);
            REQUIRE(gf[i * of.size() + j] == wf[j]);
        }
    }
}

TEST_CASE("control flow: return, while/break/continue, for with step, short-circuit, select") {
    Scalar I = Scalar::I32;
    auto A = [&] { return load("a", I, var("i")); };
    auto bump = [&](const char* counter) {
        return ir::Atomic::make(ir::AtomicOp::Add, "cnt", Space::Global, I, ci(counter[0] - '0'),
                                ci(1));
    };
    auto k = kernel(
        "control",
        {buf("a", I), buf("lim", I), buf("out", I, ir::Access::Write),
         buf("cnt", I, ir::Access::ReadWrite), scalar("n", I)},
        {let("i", gid()), if_(bin(BinaryOp::Ge, var("i"), var("n")), ir::Return::make()),
         let("acc", ci(0)), let("k", ci(0)),
         while_(
             cb(true),
             block({assign("k", add(var("k"), ci(1))),
                    if_(bin(BinaryOp::Gt, var("k"), load("lim", I, var("i"))), ir::Break::make()),
                    if_(eq(bin(BinaryOp::Rem, var("k"), ci(3)), ci(0)), ir::Continue::make()),
                    assign("acc", add(var("acc"), var("k")))})),
         for_("j", ci(0), ci(10), ci(1),
              block({if_(eq(var("j"), ci(5)), ir::Continue::make()),
                     if_(eq(var("j"), ci(8)), ir::Break::make()),
                     assign("acc", add(var("acc"), mul(var("j"), A())))})),
         for_("j", ci(0), ci(20), ci(7), assign("acc", add(var("acc"), var("j")))),
         for_("j", ci(5), ci(5), ci(1), assign("acc", ci(-99999))),
         // cnt[0] counts a <= 0 (the right side of || runs only then), cnt[1] counts a > 0
         // (&&), cnt[2] counts everyone (select evaluates both arms).
         if_(bin(BinaryOp::LogicalOr, bin(BinaryOp::Gt, A(), ci(0)),
                 bin(BinaryOp::Gt, bump("0"), ci(-1))),
             assign("acc", add(var("acc"), ci(1000)))),
         if_(land(bin(BinaryOp::Gt, A(), ci(0)), bin(BinaryOp::Gt, bump("1"), ci(-1))),
             assign("acc", add(var("acc"), ci(100)))),
         assign("acc",
                add(var("acc"), sel(bin(BinaryOp::Gt, A(), ci(0)), mul(ci(0), bump("2")), ci(0)))),
         store("out", var("i"), var("acc"))});
    auto hk = compile(k);
    const int n = 777;
    auto a = random_vec<int32_t>(n, -20, 20), lim = random_vec<int32_t>(n, 0, 30);
    std::vector<int32_t> out(n + 64, 12345), cnt(3, 0);
    int32_t nn = n;
    run(*hk, k, {a.data(), lim.data(), out.data(), cnt.data(), &nn}, grid1(n, 64));
    int pos = 0;
    for (int i = 0; i < n; ++i) {
        int acc = 0;
        for (int kk = 1; kk <= lim[i]; ++kk)
            if (kk % 3) acc += kk;
        for (int j = 0; j < 8; ++j)
            if (j != 5) acc += j * a[i];
        acc += 0 + 7 + 14 + 1100 * (a[i] > 0) + 1000 * (a[i] <= 0);
        pos += a[i] > 0;
        REQUIRE(out[i] == acc);
    }
    for (int i = n; i < n + 64; ++i)
        REQUIRE(out[i] == 12345); // the padding items returned
    CHECK(cnt == std::vector<int32_t>{n - pos, pos, n});
}

namespace {

// Every atomic op of type T on cells in `space`; each work-item applies its value v[i].
// a + b and a - b wrapping like the IR's integers; in T itself a signed overflow would be
// undefined behaviour in the reference (UBSan stops there).
template <class T> T wrap_add(T a, T b) {
    if constexpr (std::is_integral_v<T>)
        return T(std::make_unsigned_t<T>(a) + std::make_unsigned_t<T>(b));
    else
        return a + b;
}
template <class T> T wrap_sub(T a, T b) {
    if constexpr (std::is_integral_v<T>)
        return T(std::make_unsigned_t<T>(a) - std::make_unsigned_t<T>(b));
    else
        return a - b;
}

template <class T> void check_atomics(Space space) {
    Scalar S = scalar_of<T>();
    using Op = ir::AtomicOp;
    const std::vector<Op> ops =
        std::is_floating_point_v<T>
            ? std::vector<Op>{Op::Add, Op::Min, Op::Max}
            : std::vector<Op>{Op::Add, Op::Sub, Op::Min,  Op::Max,    Op::And,
                              Op::Or,  Op::Xor, Op::Xchg, Op::CmpXchg};
    const int no = int(ops.size());
    bool local = space == Space::Local;
    std::string cells = local ? "sc" : "cells";
    std::vector<Stmt> body = {let("i", gid())};
    if (local) {
        body.push_back(if_(eq(lid(), ci(0, Scalar::U32)), block([&] {
                               std::vector<Stmt> s;
                               for (int j = 0; j < no; ++j)
                                   s.push_back(lstore("sc", ci(j), load("cells", S, ci(j))));
                               return s;
                           }())));
        body.push_back(barrier());
    }
    for (int j = 0; j < no; ++j) {
        Expr v = load("v", S, var("i"));
        Expr e = ops[j] == Op::CmpXchg ? ir::Atomic::make(Op::CmpXchg, cells, space, S, ci(j),
                                                          add(v, ir::Const::make_int(S, 1)),
                                                          ir::Const::make_int(S, 0))
                                       : ir::Atomic::make(ops[j], cells, space, S, ci(j), v);
        body.push_back(store("old", add(mul(var("i"), ci(no)), ci(j)), e));
    }
    if (local) {
        body.push_back(barrier());
        for (int j = 0; j < no; ++j)
            body.push_back(
                if_(eq(lid(), ci(0, Scalar::U32)),
                    store("res", add(mul(cast(Scalar::I32, call("group_id_x")), ci(no)), ci(j)),
                          lload("sc", S, ci(j)))));
    }
    std::vector<ir::Param> params = {buf("v", S), buf("cells", S, ir::Access::ReadWrite),
                                     buf("old", S, ir::Access::Write),
                                     buf("res", S, ir::Access::Write)};
    auto k = kernel(std::string("atomics_") + ir::to_string(S) + "_" + ir::to_string(space), params,
                    body,
                    local ? std::vector<ir::SharedArray>{{"sc", S, uint32_t(no)}}
                          : std::vector<ir::SharedArray>{});
    auto hk = compile(k);
    const uint32_t group = 64, groups = local ? 5 : 7;
    const size_t n = group * groups;
    std::vector<T> v(n);
    for (size_t i = 0; i < n; ++i) {
        if constexpr (std::is_floating_point_v<T>)
            v[i] = T(int(rng()() % 41) - 20) * T(0.5); // sums are exact
        else
            v[i] = T(rng()());
        if (wrap_add(v[i], T(1)) == T(0))
            v[i] = T(5); // the cmpxchg winner must not store the 0 it looks for
    }
    auto init = [&](Op op) -> T {
        if constexpr (std::is_integral_v<T>)
            if (op == Op::And) return T(~T(0));
        return op == Op::Min   ? std::numeric_limits<T>::max()
               : op == Op::Max ? std::numeric_limits<T>::lowest()
                               : T(0);
    };
    std::vector<T> cells_v(no), old(n * no), res(groups * no);
    for (int j = 0; j < no; ++j)
        cells_v[j] = init(ops[j]);
    run(*hk, k, {v.data(), cells_v.data(), old.data(), res.data()}, grid1(n, group));
    // Final values per set of work-items (the whole launch, or each group in local memory).
    for (uint32_t g = 0; g < (local ? groups : 1u); ++g) {
        size_t first = local ? g * group : 0, last = local ? first + group : n;
        for (int j = 0; j < no; ++j) {
            T want = init(ops[j]);
            std::vector<T> seen = {want};
            for (size_t i = first; i < last; ++i) {
                T x = v[i];
                if (ops[j] == Op::Add) want = wrap_add(want, x);
                if constexpr (std::is_integral_v<T>) {
                    switch (ops[j]) {
                    case Op::Sub: want = wrap_sub(want, x); break;
                    case Op::Min: want = std::min(want, x); break;
                    case Op::Max: want = std::max(want, x); break;
                    case Op::And: want = T(want & x); break;
                    case Op::Or: want = T(want | x); break;
                    case Op::Xor: want = T(want ^ x); break;
                    default: break;
                    }
                } else if (ops[j] != Op::Add) {
                    want = ops[j] == Op::Min ? std::fmin(want, x) : std::fmax(want, x);
                }
            }
            T final_v = local ? res[g * no + j] : cells_v[j];
            INFO(ir::to_string(S) << " " << ir::to_string(space) << " op " << ir::to_string(ops[j])
                                  << " group " << g);
            if (ops[j] == Op::Xchg) {
                // The old values and the final one are the initial value and every operand.
                std::vector<T> got = {final_v}, exp = {init(ops[j])};
                for (size_t i = first; i < last; ++i) {
                    got.push_back(old[i * no + j]);
                    exp.push_back(v[i]);
                }
                std::sort(got.begin(), got.end());
                std::sort(exp.begin(), exp.end());
                REQUIRE(got == exp);
            } else if (ops[j] == Op::CmpXchg) {
                // Exactly one work-item saw 0 and stored v + 1; all others saw that value.
                size_t winners = 0;
                for (size_t i = first; i < last; ++i) {
                    if (old[i * no + j] == T(0)) {
                        ++winners;
                        REQUIRE(final_v == wrap_add(v[i], T(1)));
                    } else {
                        REQUIRE(old[i * no + j] == final_v);
                    }
                }
                REQUIRE(winners == 1);
            } else {
                REQUIRE(final_v == want);
            }
        }
    }
}

} // namespace

TEST_CASE(
    "atomics: every op, global and local, i32 u32 i64 u64, add / min / max on f32 f64 (exact)") {
    for (Space s : {Space::Global, Space::Local}) {
        check_atomics<int32_t>(s);
        check_atomics<uint32_t>(s);
        check_atomics<int64_t>(s);
        check_atomics<uint64_t>(s);
        check_atomics<float>(s);
        check_atomics<double>(s);
    }
}
