// One kernel applying K operations to the elements of three buffers, every output checked against
// a host reference: shared by the scalar, small-integer and f16 / bf16 tests.
#pragma once

#include "fixture.hpp"

#include <plexus/kernel_types.hpp>

#include <cmath>
#include <functional>

namespace interp_test {

using E = ir::Expr;

template <class T, class R> struct Op {
    std::string name;
    std::function<E(E, E, E)> build;
    std::function<R(T, T, T)> host;
};

template <class T> Scalar scalar_of() {
    return plexus::scalar_v<T>;
}

// What a test prints of a value: f16 and bf16 as their float, small integers as numbers.
template <class T> auto shown(T x) {
    if constexpr (std::is_same_v<T, plexus::half> || std::is_same_v<T, plexus::bf16>)
        return float(x);
    else if constexpr (std::is_integral_v<T> && sizeof(T) == 1)
        return int(x);
    else
        return x;
}

// Whether `got` is `want`: integers exactly; f16 and bf16 bit for bit (their rounding is
// specified exactly), any NaN matching NaN; f32 / f64 within `tolerance` relative to
// max(1, |want|), NaN matching NaN.
template <class R> bool matches(R want, R got, double tolerance) {
    if constexpr (std::is_same_v<R, plexus::half> || std::is_same_v<R, plexus::bf16>) {
        if (std::isnan(float(want))) return std::isnan(float(got));
        return want.bits == got.bits;
    } else if constexpr (std::is_floating_point_v<R>) {
        if (std::isnan(want)) return std::isnan(got);
        if (std::isinf(want)) return got == want;
        return std::fabs(got - want) <= tolerance * std::max<double>(1, std::fabs(want));
    } else {
        return got == want;
    }
}

// min / max as docs/ir.md states them: a NaN operand yields the other, a signaling one too
// (std::fmin alone returns a NaN for that on glibc).
template <class F> F ir_min(F x, F y) {
    return std::isnan(x) ? y : std::isnan(y) ? x : std::fmin(x, y);
}
template <class F> F ir_max(F x, F y) {
    return std::isnan(x) ? y : std::isnan(y) ? x : std::fmax(x, y);
}

// Runs out[i * K + j] = op_j(x[i], y[i], z[i]) for K ops and compares each element.
template <class T, class R>
void check_elementwise(const std::string& name, const std::vector<Op<T, R>>& ops,
                       const std::vector<T>& xs, const std::vector<T>& ys, const std::vector<T>& zs,
                       double tolerance = 0) {
    const Scalar t = scalar_of<T>(), r = scalar_of<R>();
    const int n = static_cast<int>(xs.size()), K = static_cast<int>(ops.size());
    auto gid = var("gid", Scalar::I32);
    std::vector<ir::Stmt> then = {let("x", load("X", t, gid)), let("y", load("Y", t, gid)),
                                  let("z", load("Z", t, gid))};
    for (int j = 0; j < K; ++j)
        then.push_back(store("out",
                             bin(ir::BinaryOp::Add, bin(ir::BinaryOp::Mul, gid, i32(K)), i32(j)),
                             ops[j].build(var("x", t), var("y", t), var("z", t))));
    const ir::Kernel k =
        kernel(name,
               {buffer("X", t), buffer("Y", t), buffer("Z", t), buffer("out", r, ir::Access::Write),
                scalar("n", Scalar::I32)},
               {let_gid(), if_(bin(ir::BinaryOp::Lt, gid, var("n", Scalar::I32)), then)});
    ir::validate(k);
    Buffer bx(xs), by(ys), bz(zs), out(size_t(n) * K * sizeof(R));
    Module m(k);
    REQUIRE(m.status() == PLX_OK);
    REQUIRE(launch(m.kernel(), dims1(n, 64), {bx, by, bz, out, n}) == PLX_OK);
    const auto got = out.read<R>();
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < K; ++j) {
            const R want = ops[j].host(xs[i], ys[i], zs[i]);
            const R g = got[size_t(i) * K + j];
            CAPTURE(ops[j].name);
            CAPTURE(shown(xs[i]));
            CAPTURE(shown(ys[i]));
            CAPTURE(shown(zs[i]));
            CAPTURE(shown(want));
            CAPTURE(shown(g));
            REQUIRE(matches(want, g, tolerance));
        }
}

template <class T>
std::vector<T> with_specials(std::vector<T> v, std::initializer_list<T> specials) {
    size_t i = 0;
    for (T s : specials)
        v[i++ % v.size()] = s;
    return v;
}

} // namespace interp_test
