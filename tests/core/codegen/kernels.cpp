// Builders of the scalar test kernels with the IR's make() factories (through ir_build.hpp).
#include "kernels.hpp"

#include "ir_build.hpp"

#include <cmath>
#include <limits>

namespace codegen_test {

using namespace plexus::ir;
using namespace build;

// c[i] = a[i] + b[i] for i < n.
Kernel vector_add() {
    const auto F = Scalar::F32;
    return make(
        "vector_add",
        {buffer("a", F, Access::Read), buffer("b", F, Access::Read), buffer("c", F, Access::Write),
         scalar("n", Scalar::I32)},
        {},
        {gid_i32(),
         if_(bin(B::Lt, gid(), n_i32()),
             {gstore("c", gid(), bin(B::Add, gload("a", F, gid()), gload("b", F, gid())))})});
}

// A barrier tree in a uniform while loop, then one atomic add of the group's sum to out[0].
Kernel reduce_sum() {
    const auto F = Scalar::F32, U = Scalar::U32;
    auto lid = var("lid", U), s = var("s", U);
    return make("reduce_sum",
                {buffer("in", F, Access::Read), buffer("out", F, Access::ReadWrite),
                 scalar("n", Scalar::I32)},
                {{"sh", F, reduce_group}},
                {let("lid", call("local_id_x")), let("g", call("global_id_x")), let("v", f32(0.0f)),
                 if_(bin(B::Lt, var("g", Scalar::U64), cast(Scalar::U64, n_i32())),
                     {assign("v", gload("in", F, var("g", Scalar::U64)))}),
                 lstore("sh", lid, var("v", F)), Barrier::make(),
                 let("s", bin(B::Shr, call("local_size_x"), u32(1))),
                 While::make(bin(B::Gt, s, u32(0)),
                             block({if_(bin(B::Lt, lid, s),
                                        {lstore("sh", lid,
                                                bin(B::Add, lload("sh", F, lid),
                                                    lload("sh", F, bin(B::Add, lid, s))))}),
                                    Barrier::make(), assign("s", bin(B::Shr, s, u32(1)))})),
                 if_(bin(B::Eq, lid, u32(0)), {eval(atomic(AtomicOp::Add, "out", Space::Global, F,
                                                           i32(0), lload("sh", F, i32(0))))})});
}

// C[M x N] = A[M x K] * B[K x N], row-major, through two shared 16x16 tiles.
Kernel matmul_tiled() {
    const auto F = Scalar::F32, U = Scalar::U32, I = Scalar::I32;
    auto tx = var("tx", U), ty = var("ty", U), row = var("row", I), col = var("col", I);
    auto M = var("M", I), N = var("N", I), K = var("K", I), t = var("t", I), kk = var("k", I);
    auto tile_index = bin(B::Add, bin(B::Mul, ty, u32(matmul_tile)), tx);
    auto tile_loop = block({
        let("ak", bin(B::Add, bin(B::Mul, t, i32(matmul_tile)), cast(I, tx))),
        if_(bin(B::LogicalAnd, bin(B::Lt, row, M), bin(B::Lt, var("ak", I), K)),
            {lstore("ta", tile_index,
                    gload("A", F, bin(B::Add, bin(B::Mul, row, K), var("ak", I))))},
            {lstore("ta", tile_index, f32(0.0f))}),
        let("bk", bin(B::Add, bin(B::Mul, t, i32(matmul_tile)), cast(I, ty))),
        if_(bin(B::LogicalAnd, bin(B::Lt, var("bk", I), K), bin(B::Lt, col, N)),
            {lstore("tb", tile_index,
                    gload("B", F, bin(B::Add, bin(B::Mul, var("bk", I), N), col)))},
            {lstore("tb", tile_index, f32(0.0f))}),
        Barrier::make(),
        For::make(
            "k", i32(0), i32(matmul_tile), i32(1),
            block({assign(
                "acc",
                bin(B::Add, var("acc", F),
                    bin(B::Mul,
                        lload("ta", F, bin(B::Add, bin(B::Mul, ty, u32(matmul_tile)), cast(U, kk))),
                        lload("tb", F,
                              bin(B::Add, bin(B::Mul, cast(U, kk), u32(matmul_tile)), tx)))))})),
        Barrier::make(),
    });
    return make("matmul_tiled",
                {buffer("A", F, Access::Read), buffer("B", F, Access::Read),
                 buffer("C", F, Access::Write), scalar("M", I), scalar("N", I), scalar("K", I)},
                {{"ta", F, matmul_tile * matmul_tile}, {"tb", F, matmul_tile * matmul_tile}},
                {let("tx", call("local_id_x")), let("ty", call("local_id_y")),
                 let("col", cast(I, call("global_id_x"))), let("row", cast(I, call("global_id_y"))),
                 let("acc", f32(0.0f)),
                 let("tiles", bin(B::Div, bin(B::Add, K, i32(matmul_tile - 1)), i32(matmul_tile))),
                 For::make("t", i32(0), var("tiles", I), i32(1), tile_loop),
                 if_(bin(B::LogicalAnd, bin(B::Lt, row, M), bin(B::Lt, col, N)),
                     {gstore("C", bin(B::Add, bin(B::Mul, row, N), col), var("acc", F))})});
}

// hist[data[i] % bins] += 1 with a global u32 atomic.
Kernel histogram() {
    const auto U = Scalar::U32;
    return make("histogram",
                {buffer("data", U, Access::Read), buffer("hist", U, Access::ReadWrite),
                 scalar("n", Scalar::I32), scalar("bins", U)},
                {},
                {gid_i32(), if_(bin(B::Lt, gid(), n_i32()),
                                {eval(atomic(AtomicOp::Add, "hist", Space::Global, U,
                                             bin(B::Rem, gload("data", U, gid()), var("bins", U)),
                                             u32(1)))})});
}

namespace {
// y[i] = a sum of math calls on x[i]; one builder for both precisions (suffix "f32"/"f64").
Kernel math_kernel(const std::string& name, Scalar F, const std::string& sfx) {
    auto c = [&](double v) { return F == Scalar::F32 ? f32(float(v)) : f64(v); };
    auto fn = [&](const std::string& f, std::vector<Expr> args) {
        return call(f + "_" + sfx, std::move(args));
    };
    auto v = var("v", F), r = var("r", F);
    auto add = [&](Expr e) { return assign("r", bin(B::Add, var("r", F), std::move(e))); };
    auto absv = fn("fabs", {v});
    return make(
        name,
        {buffer("x", F, Access::Read), buffer("y", F, Access::Write), scalar("n", Scalar::I32)}, {},
        {gid_i32(),
         if_(bin(B::Lt, gid(), n_i32()),
             {let("v", gload("x", F, gid())),
              let("r", fn("fma", {fn("sin", {v}), fn("cos", {v}), fn("sqrt", {absv})})),
              add(bin(B::Mul, fn("exp2", {fn("floor", {v})}), c(0.25))),
              add(Unary::make(UnaryOp::Neg, fn("log2", {bin(B::Add, absv, c(1.0))}))),
              add(fn("pow", {absv, c(1.5)})),
              add(Unary::make(UnaryOp::Neg, fn("tan", {bin(B::Mul, v, c(0.3))}))),
              add(bin(B::Mul, fn("exp", {Unary::make(UnaryOp::Neg, v)}), c(0.125))),
              add(fn("log", {bin(B::Add, absv, c(0.5))})),
              add(fn("rsqrt", {bin(B::Add, absv, c(1.0))})), add(bin(B::Min, v, c(0.5))),
              // fmax semantics: a NaN operand yields the other one.
              add(bin(B::Max, v, c(std::numeric_limits<double>::quiet_NaN()))),
              add(fn("clamp", {v, c(-1.0), c(1.0)})), add(fn("ceil", {v})),
              add(fn("min", {v, c(0.1)})), add(fn("max", {v, c(-0.1)})),
              assign("r", select(bin(B::Lt, v, c(-3.5)), c(-0.0), r)), gstore("y", gid(), r)})});
}
} // namespace

Kernel math_f32() {
    return math_kernel("math_f32", Scalar::F32, "f32");
}
Kernel math_f64() {
    return math_kernel("math_f64", Scalar::F64, "f64");
}

// Integer semantics: shift masking, signedness of shifts / min / max, wrapping, division,
// casts to and from bool and float, 64-bit arithmetic and the most negative constants.
Kernel int_ops() {
    const auto I = Scalar::I32, U = Scalar::U32, L = Scalar::I64, UL = Scalar::U64;
    auto x = var("x", I), y = var("y", I), xl = var("xl", L);
    auto at = [&](int k) { return bin(B::Add, var("base", I), i32(k)); };
    return make(
        "int_ops",
        {buffer("a", I, Access::Read), buffer("b", I, Access::Read), buffer("o", I, Access::Write),
         buffer("ol", L, Access::Write), scalar("n", I)},
        {},
        {gid_i32(),
         if_(bin(B::Lt, gid(), n_i32()),
             {let("x", gload("a", I, gid())), let("y", gload("b", I, gid())),
              let("base", bin(B::Mul, gid(), i32(8))), gstore("o", at(0), bin(B::Shl, x, y)),
              gstore("o", at(1), bin(B::Shr, x, y)),
              gstore("o", at(2), cast(I, bin(B::Shr, cast(U, x), cast(U, y)))),
              gstore("o", at(3), bin(B::Min, x, y)),
              gstore("o", at(4), cast(I, bin(B::Max, cast(U, x), cast(U, y)))),
              gstore("o", at(5),
                     bin(B::Add, bin(B::Mul, x, y), i32(std::numeric_limits<int32_t>::min()))),
              if_(bin(B::LogicalAnd, bin(B::Ne, y, i32(0)), bin(B::Ne, y, i32(-1))),
                  {gstore("o", at(6), bin(B::Add, bin(B::Div, x, y), bin(B::Rem, x, y)))},
                  {gstore("o", at(6), Unary::make(UnaryOp::BitNot, x))}),
              gstore("o", at(7),
                     bin(B::Add,
                         select(bin(B::Gt, x, y),
                                cast(I, bin(B::Mul, cast(Scalar::F32, x), f32(0.5f))),
                                cast(I, bin(B::BitAnd, cast(U, x), u32(255)))),
                         cast(I, cast(Scalar::Bool, bin(B::BitAnd, x, i32(1)))))),
              let("xl", cast(L, x)),
              gstore("ol", bin(B::Mul, gid(), i32(2)),
                     bin(B::BitXor, bin(B::Shr, bin(B::Mul, xl, cast(L, y)), cast(L, y)),
                         i64(std::numeric_limits<int64_t>::min()))),
              gstore(
                  "ol", bin(B::Add, bin(B::Mul, gid(), i32(2)), i32(1)),
                  cast(L, bin(B::Add,
                              bin(B::BitXor, bin(B::Mul, cast(UL, xl), u64(0x9E3779B97F4A7C15ull)),
                                  Unary::make(UnaryOp::BitNot, cast(UL, cast(L, y)))),
                              bin(B::Max, cast(UL, xl), u64(0xFFFFFFFF00000000ull)))))})});
}

// Float atomics in both address spaces, a select whose arm is an atomic (both arms run, so
// cnt ends at n), signed min and unsigned max on 32 bits, and a compare-exchange.
Kernel atomics32() {
    const auto F = Scalar::F32, U = Scalar::U32, I = Scalar::I32;
    return make(
        "atomics32",
        {buffer("x", F, Access::Read), buffer("k", I, Access::Read),
         buffer("sum", F, Access::ReadWrite), buffer("cnt", U, Access::ReadWrite),
         buffer("tickets", U, Access::Write), buffer("imin", I, Access::ReadWrite),
         buffer("umax", U, Access::ReadWrite), buffer("flag", U, Access::ReadWrite),
         scalar("n", I)},
        {{"acc", F, 1}},
        {let("lid", call("local_id_x")), gid_i32(),
         if_(bin(B::Eq, var("lid", U), u32(0)), {lstore("acc", i32(0), f32(0.0f))}),
         Barrier::make(),
         if_(bin(B::Lt, gid(), n_i32()),
             {eval(atomic(AtomicOp::Add, "acc", Space::Local, F, i32(0), gload("x", F, gid()))),
              let("t", select(bin(B::Gt, gload("k", I, gid()), i32(0)),
                              atomic(AtomicOp::Add, "cnt", Space::Global, U, i32(0), u32(1)),
                              u32(0xFFFFFFFFu))),
              gstore("tickets", gid(), var("t", U)),
              eval(atomic(AtomicOp::Min, "imin", Space::Global, I, i32(0), gload("k", I, gid()))),
              eval(atomic(AtomicOp::Max, "umax", Space::Global, U, i32(0),
                          cast(U, gload("k", I, gid())))),
              eval(atomic(AtomicOp::CmpXchg, "flag", Space::Global, U, i32(0),
                          bin(B::Add, cast(U, gid()), u32(1)), u32(0)))}),
         Barrier::make(),
         if_(bin(B::Eq, var("lid", U), u32(0)), {eval(atomic(AtomicOp::Add, "sum", Space::Global, F,
                                                             i32(0), lload("acc", F, i32(0))))})});
}

// 64-bit atomics: signed add / sub / min, unsigned max / xor, and a compare-exchange whose
// old value is used (exactly one work-item sees 0 and counts itself in bits[1]).
Kernel atomics64() {
    const auto L = Scalar::I64, UL = Scalar::U64;
    auto v = [] { return gload("v", Scalar::I64, gid()); };
    return make(
        "atomics64",
        {buffer("v", L, Access::Read), buffer("sum", L, Access::ReadWrite),
         buffer("mn", L, Access::ReadWrite), buffer("mx", UL, Access::ReadWrite),
         buffer("bits", UL, Access::ReadWrite), scalar("n", Scalar::I32)},
        {},
        {gid_i32(),
         if_(bin(B::Lt, gid(), n_i32()),
             {eval(atomic(AtomicOp::Add, "sum", Space::Global, L, i32(0), v())),
              eval(atomic(AtomicOp::Sub, "sum", Space::Global, L, i32(1), v())),
              eval(atomic(AtomicOp::Min, "mn", Space::Global, L, i32(0), v())),
              eval(atomic(AtomicOp::Max, "mx", Space::Global, UL, i32(0), cast(UL, v()))),
              eval(atomic(AtomicOp::Xor, "bits", Space::Global, UL, i32(0), cast(UL, v()))),
              let("old", atomic(AtomicOp::CmpXchg, "mn", Space::Global, L, i32(1), v(), i64(0))),
              if_(bin(B::Eq, var("old", L), i64(0)),
                  {eval(atomic(AtomicOp::Add, "bits", Space::Global, UL, i32(1), u64(1)))})})});
}

// The float atomics beyond f32 add, in both spaces: f64 add (discarded, and with its old value
// used: each work-item takes a ticket dsum[1] += 1), f32 add discarded, f32 / f64 min and max.
// Each group's shared results go to groups[5 g ...]: f32 min, max, f64 min, max, sum.
Kernel atomics_float() {
    const auto F = Scalar::F32, D = Scalar::F64, I = Scalar::I32;
    const auto G = Space::Global, L = Space::Local;
    auto x = [] { return gload("x", Scalar::F32, gid()); };
    auto y = [] { return gload("y", Scalar::F64, gid()); };
    auto lid0 = [] { return bin(B::Eq, var("lid", Scalar::U32), u32(0)); };
    auto out = [](int j) {
        return bin(B::Add, bin(B::Mul, cast(Scalar::I32, call("group_id_x")), i32(5)), i32(j));
    };
    const float inf = std::numeric_limits<float>::infinity();
    return make(
        "atomics_float",
        {buffer("x", F, Access::Read), buffer("y", D, Access::Read),
         buffer("fsum", F, Access::ReadWrite), buffer("fmm", F, Access::ReadWrite),
         buffer("dmm", D, Access::ReadWrite), buffer("dsum", D, Access::ReadWrite),
         buffer("tickets", D, Access::Write), buffer("groups", D, Access::Write), scalar("n", I)},
        {{"sf", F, 2}, {"sd", D, 3}},
        {let("lid", call("local_id_x")), gid_i32(),
         if_(lid0(), {lstore("sf", i32(0), f32(inf)), lstore("sf", i32(1), f32(-inf)),
                      lstore("sd", i32(0), f64(inf)), lstore("sd", i32(1), f64(-inf)),
                      lstore("sd", i32(2), f64(0.0))}),
         Barrier::make(),
         if_(bin(B::Lt, gid(), n_i32()),
             {eval(atomic(AtomicOp::Add, "fsum", G, F, i32(0), cast(F, y()))),
              eval(atomic(AtomicOp::Add, "dsum", G, D, i32(0), y())),
              gstore("tickets", gid(), atomic(AtomicOp::Add, "dsum", G, D, i32(1), f64(1.0))),
              eval(atomic(AtomicOp::Min, "fmm", G, F, i32(0), x())),
              eval(atomic(AtomicOp::Max, "fmm", G, F, i32(1), x())),
              eval(atomic(AtomicOp::Min, "dmm", G, D, i32(0), y())),
              eval(atomic(AtomicOp::Max, "dmm", G, D, i32(1), y())),
              eval(atomic(AtomicOp::Min, "sf", L, F, i32(0), x())),
              eval(atomic(AtomicOp::Max, "sf", L, F, i32(1), x())),
              eval(atomic(AtomicOp::Min, "sd", L, D, i32(0), y())),
              eval(atomic(AtomicOp::Max, "sd", L, D, i32(1), y())),
              eval(atomic(AtomicOp::Add, "sd", L, D, i32(2), y()))}),
         Barrier::make(),
         if_(lid0(), {gstore("groups", out(0), cast(D, lload("sf", F, i32(0)))),
                      gstore("groups", out(1), cast(D, lload("sf", F, i32(1)))),
                      gstore("groups", out(2), lload("sd", D, i32(0))),
                      gstore("groups", out(3), lload("sd", D, i32(1))),
                      gstore("groups", out(4), lload("sd", D, i32(2)))})});
}

// Control flow: an early return, a for loop with a run-time end and step, continue and
// break, a work-item-dependent while, an else-if chain, a native block and a fence.
Kernel control() {
    const auto I = Scalar::I32;
    auto acc = var("acc", I), j = var("j", I), w = var("w", I);
    return make(
        "control",
        {buffer("x", I, Access::Read), buffer("y", I, Access::Write), scalar("n", I),
         scalar("steps", I)},
        {},
        {gid_i32(), if_(bin(B::Ge, gid(), n_i32()), {Return::make()}), let("acc", i32(0)),
         For::make("j", i32(0), var("steps", I),
                   bin(B::Add, i32(1), bin(B::Rem, var("steps", I), i32(2))),
                   block({if_(bin(B::Eq, bin(B::Rem, j, i32(3)), i32(0)), {Continue::make()}),
                          assign("acc", bin(B::Add, acc, bin(B::Mul, j, gload("x", I, gid())))),
                          if_(bin(B::Gt, acc, i32(1000)), {Break::make()})})),
         let("w", bin(B::BitAnd, gload("x", I, gid()), i32(7))),
         While::make(bin(B::Ne, w, i32(0)),
                     block({assign("w", bin(B::Sub, w, i32(1))),
                            assign("acc", bin(B::BitXor, acc, bin(B::Shl, w, i32(4))))})),
         If::make(bin(B::Lt, acc, i32(0)), block({assign("acc", Unary::make(UnaryOp::Neg, acc))}),
                  If::make(bin(B::Gt, acc, i32(5000)),
                           block({assign("acc", bin(B::Sub, acc, i32(5000)))}),
                           block({assign("acc", bin(B::Add, acc, i32(1)))}))),
         Native::make({{"opencl", "acc += 3;"}, {"cuda", "acc += 3;"}},
                      block({assign("acc", bin(B::Add, acc, i32(3)))})),
         Fence::make(FenceScope::WorkGroup), gstore("y", gid(), acc)});
}

// Loops with unroll hints (ir::For::unroll): by 4 over a run-time trip count, completely over
// a constant one of step 2, by 2 around a loop kept rolled, and a loop without one; a private
// array indexed by the loop variable.
Kernel loops() {
    const auto I = Scalar::I32;
    const auto P = Space::Private;
    auto acc = var("acc", I), j = var("j", I), q = var("q", I);
    auto x_at = [&](Expr e) {
        return gload("x", I, bin(B::Rem, bin(B::Add, gid(), std::move(e)), n_i32()));
    };
    auto add = [&](Expr e) { return assign("acc", bin(B::Add, acc, std::move(e))); };
    return make(
        "loops", {buffer("x", I, Access::Read), buffer("y", I, Access::Write), scalar("n", I)}, {},
        {gid_i32(), if_(bin(B::Ge, gid(), n_i32()), {Return::make()}), let("acc", i32(0)),
         For::make("j", i32(0), n_i32(), i32(1), block({add(x_at(j))}), 4),
         For::make("j", i32(0), i32(8), i32(2), block({store("t", P, j, x_at(j))}),
                   For::unroll_full),
         For::make(
             "j", i32(0), i32(3), i32(1),
             block({For::make("q", j, n_i32(), i32(1), block({add(bin(B::Mul, x_at(q), j))}), 1)}),
             2),
         for_("j", i32(0), i32(8), {add(load("t", P, I, bin(B::BitAnd, j, i32(6))))}),
         gstore("y", gid(), acc)},
        {{"t", I, 8}});
}

std::vector<TestKernel> all_kernels() {
    return {{vector_add()},
            {reduce_sum()},
            {matmul_tiled()},
            {histogram()},
            {math_f32()},
            {math_f64(), true},
            {int_ops()},
            {atomics32()},
            {atomics64(), false, true},
            {atomics_float(), true, true},
            {control()},
            {small_ints()},
            {half_ops()},
            {vectors()},
            {records()},
            {variants()},
            {arrays()},
            {conversions(), true},
            {combinations(), true},
            {loops()}};
}

} // namespace codegen_test
