// Builders of the test kernels of the new types: the narrow integers, f16 and bf16, vectors,
// records, variants with match, private arrays and a shaped shared array. Each output slot's
// meaning is mirrored by the host reference in opencl_run_numbers.cpp / opencl_run_aggregates.cpp.
#include "kernels.hpp"

#include "ir_build.hpp"

namespace codegen_test {

using namespace plexus::ir;
using namespace build;

namespace {

// out[gid * per + slot] = value.
Stmt put(const std::string& out, int per, int slot, Expr value) {
    return gstore(out, bin(B::Add, bin(B::Mul, gid(), i32(per)), i32(slot)), std::move(value));
}

// The twelve slots of one narrow integer type: + - * / % (or ^ ~ when the divisor is not
// positive) << >> min max neg, then `extra` and the saturating cast of the float x.
std::vector<Stmt> narrow_slots(const std::string& out, Scalar t, Expr a, Expr b, Expr max_with,
                               Expr extra) {
    const Expr zero = int_const(t, 0);
    return {
        put(out, small_per, 0, bin(B::Add, a, b)),
        put(out, small_per, 1, bin(B::Sub, a, b)),
        put(out, small_per, 2, bin(B::Mul, a, b)),
        if_(bin(B::Gt, b, zero),
            {put(out, small_per, 3, bin(B::Div, a, b)), put(out, small_per, 4, bin(B::Rem, a, b))},
            {put(out, small_per, 3, bin(B::BitXor, a, b)), put(out, small_per, 4, bitnot(a))}),
        put(out, small_per, 5, bin(B::Shl, a, b)),
        put(out, small_per, 6, bin(B::Shr, a, b)),
        put(out, small_per, 7, bin(B::Min, a, b)),
        put(out, small_per, 8, bin(B::Max, a, std::move(max_with))),
        put(out, small_per, 9, neg(a)),
        put(out, small_per, 10, std::move(extra)),
        put(out, small_per, 11, cast(t, var("X", Scalar::F32)))};
}

} // namespace

// Per element: o8, ou8, o16, ou16 and oi hold small_per values each (see narrow_slots).
Kernel small_ints() {
    const auto I8 = Scalar::I8, U8 = Scalar::U8, I16 = Scalar::I16, U16 = Scalar::U16,
               I = Scalar::I32;
    auto A = var("A", I8), Bv = var("B", I8), C = var("C", U8), D = var("D", U8);
    auto E = var("E", I16), F = var("F", I16), G = var("G", U16), H = var("H", U16);
    std::vector<Stmt> body = {
        let("A", gload("a", I8, gid())),         let("B", gload("b", I8, gid())),
        let("C", gload("c", U8, gid())),         let("D", gload("d", U8, gid())),
        let("E", gload("e", I16, gid())),        let("F", gload("f", I16, gid())),
        let("G", gload("g", U16, gid())),        let("H", gload("h", U16, gid())),
        let("X", gload("x", Scalar::F32, gid()))};
    auto add = [&](std::vector<Stmt> s) { body.insert(body.end(), s.begin(), s.end()); };
    add(narrow_slots("o8", I8, A, Bv, var("s8", I8),
                     bin(B::BitOr, bin(B::BitAnd, A, Bv), bin(B::BitXor, A, int_const(I8, -128)))));
    add(narrow_slots("ou8", U8, C, D, int_const(U8, 200),
                     bin(B::BitXor, bin(B::BitOr, C, D), int_const(U8, 255))));
    add(narrow_slots("o16", I16, E, F, int_const(I16, -1000), cast(I16, A)));
    add(narrow_slots("ou16", U16, G, H, var("s16", U16), cast(U16, A)));
    auto oi = [&](int slot, Expr v) { return put("oi", small_per, slot, std::move(v)); };
    add({oi(0, cast(I, A)), oi(1, cast(I, C)), oi(2, cast(I, E)), oi(3, cast(I, G)),
         oi(4, cast(I, bin(B::Lt, A, Bv))), oi(5, cast(I, bin(B::Gt, G, H))),
         oi(6, cast(I, bin(B::Mul, cast(Scalar::F32, G), f32(0.5f)))), let("acc", int_const(I8, 0)),
         for_("j", int_const(I8, 0), int_const(I8, 5),
              {assign("acc", bin(B::Add, var("acc", I8), A))}),
         oi(7, cast(I, var("acc", I8))), oi(8, cast(I, cast(I8, E))), oi(9, cast(I, cast(I16, G))),
         oi(10, cast(I, cast(U8, E))), oi(11, cast(I, bin(B::Ne, Bv, int_const(I8, 0))))});
    return make("small_ints",
                {buffer("a", I8, Access::Read), buffer("b", I8, Access::Read),
                 buffer("c", U8, Access::Read), buffer("d", U8, Access::Read),
                 buffer("e", I16, Access::Read), buffer("f", I16, Access::Read),
                 buffer("g", U16, Access::Read), buffer("h", U16, Access::Read),
                 buffer("x", Scalar::F32, Access::Read), buffer("o8", I8, Access::Write),
                 buffer("ou8", U8, Access::Write), buffer("o16", I16, Access::Write),
                 buffer("ou16", U16, Access::Write), buffer("oi", I, Access::Write), scalar("n", I),
                 scalar("s8", I8), scalar("s16", U16)},
                {}, {gid_i32(), if_(bin(B::Lt, gid(), n_i32()), std::move(body))});
}

// Per element: oh and ob hold half_per values (a + b, a - b, a * b, a / b, min, max, -a,
// a * s + b, from x, then oh: from k plus the f16 constant 0.1, ob: from the f16 a); of
// half_f32_per, oi half_i32_per (see the host reference).
Kernel half_ops() {
    const auto H = Scalar::F16, BF = Scalar::BF16, F = Scalar::F32, I = Scalar::I32;
    std::vector<Stmt> body = {let("ha", gload("xa", H, gid())),  let("hb", gload("xb", H, gid())),
                              let("ba", gload("ya", BF, gid())), let("bb", gload("yb", BF, gid())),
                              let("X", gload("x", F, gid())),    let("K", gload("k", I, gid()))};
    auto arith = [&](const std::string& out, Scalar t, const std::string& a, const std::string& b,
                     const std::string& s, Expr slot9) {
        auto A = var(a, t), Bv = var(b, t);
        auto at = [&](int slot, Expr v) { body.push_back(put(out, half_per, slot, std::move(v))); };
        at(0, bin(B::Add, A, Bv));
        at(1, bin(B::Sub, A, Bv));
        at(2, bin(B::Mul, A, Bv));
        at(3, bin(B::Div, A, Bv));
        at(4, bin(B::Min, A, Bv));
        at(5, bin(B::Max, A, Bv));
        at(6, neg(A));
        at(7, bin(B::Add, bin(B::Mul, A, var(s, t)), Bv));
        at(8, cast(t, var("X", F)));
        at(9, std::move(slot9));
    };
    arith("oh", H, "ha", "hb", "hs", bin(B::Add, cast(H, var("K", I)), float_const(H, 0.1)));
    arith("ob", BF, "ba", "bb", "bs", cast(BF, var("ha", H)));
    auto ha = var("ha", H), hb = var("hb", H), ba = var("ba", BF), bb = var("bb", BF);
    auto of = [&](int slot, Expr v) {
        body.push_back(put("of", half_f32_per, slot, std::move(v)));
    };
    of(0, cast(F, ha));
    of(1, cast(F, ba));
    of(2, bin(B::Mul, cast(F, ha), cast(F, ba)));
    of(3, cast(F, cast(H, ba)));
    auto oi = [&](int slot, Expr v) {
        body.push_back(put("oi", half_i32_per, slot, std::move(v)));
    };
    oi(0, cast(I, ha));
    oi(1, cast(I, ba));
    oi(2, cast(I, bin(B::Lt, ha, hb)));
    oi(3, cast(I, bin(B::Eq, ba, bb)));
    oi(4, cast(I, cast(Scalar::U8, ha)));
    oi(5, cast(I, cast(Scalar::I16, ba)));
    return make("half_ops",
                {buffer("xa", H, Access::Read), buffer("xb", H, Access::Read),
                 buffer("ya", BF, Access::Read), buffer("yb", BF, Access::Read),
                 buffer("x", F, Access::Read), buffer("k", I, Access::Read),
                 buffer("oh", H, Access::Write), buffer("ob", BF, Access::Write),
                 buffer("of", F, Access::Write), buffer("oi", I, Access::Write), scalar("n", I),
                 scalar("hs", H), scalar("bs", BF)},
                {}, {gid_i32(), if_(bin(B::Lt, gid(), n_i32()), std::move(body))});
}

// Per element: oi holds the f32 x (slots 0 to 7) and the f64 y (8 to 15) converted to i8, u8,
// i16, u16, i32, u32, i64, u64 and widened to i64; oh and ob hold y and the i64 k converted to
// f16 and bf16 (through f32: two roundings).
Kernel conversions() {
    const auto F = Scalar::F32, D = Scalar::F64, L = Scalar::I64;
    std::vector<Stmt> body = {let("X", gload("x", F, gid())), let("Y", gload("y", D, gid())),
                              let("K", gload("k", L, gid()))};
    const Scalar targets[] = {Scalar::I8,  Scalar::U8,  Scalar::I16, Scalar::U16,
                              Scalar::I32, Scalar::U32, Scalar::I64, Scalar::U64};
    for (int t = 0; t < 8; ++t) {
        body.push_back(put("oi", 16, t, cast(L, cast(targets[t], var("X", F)))));
        body.push_back(put("oi", 16, 8 + t, cast(L, cast(targets[t], var("Y", D)))));
    }
    for (auto [out, type] : {std::pair{"oh", Scalar::F16}, std::pair{"ob", Scalar::BF16}}) {
        body.push_back(put(out, 2, 0, cast(type, var("Y", D))));
        body.push_back(put(out, 2, 1, cast(type, var("K", L))));
    }
    return make("conversions",
                {buffer("x", F, Access::Read), buffer("y", D, Access::Read),
                 buffer("k", L, Access::Read), buffer("oi", L, Access::Write),
                 buffer("oh", Scalar::F16, Access::Write),
                 buffer("ob", Scalar::BF16, Access::Write), scalar("n", Scalar::I32)},
                {}, {gid_i32(), if_(bin(B::Lt, gid(), n_i32()), std::move(body))});
}

// Combinations the other kernels leave out, built but not run: a record holding a variant
// and vectors of i16x3 and u64x2, a variant with an f16x4 and an f64 case, a match on a
// field, a select of variants and one of i16 broadcast, an f16x8 swizzled to 3 lanes, f64x4
// arithmetic.
Kernel combinations() {
    const auto D = Scalar::F64, H = Scalar::F16;
    const Type h4 = Type::vector(H, 4), h8 = Type::vector(H, 8), s3 = Type::vector(Scalar::I16, 3),
               w2 = Type::vector(Scalar::U64, 2), d4 = Type::vector(D, 4);
    const Type tagged = Type::aggregate(
        TypeDecl::make_variant("Tagged", {{"none", {}}, {"halves", h4}, {"wide", D}}));
    const Type holder =
        Type::aggregate(TypeDecl::make_record("Holder", {{"k", tagged}, {"s", s3}, {"w", w2}}));
    auto h = var("h", holder), v = var("v", h4);
    // The min of a select of narrow integers (C's ?: makes them int, and OpenCL's min wants
    // one type) and a constant, broadcast to a vector.
    auto pick =
        select(bin(B::Gt, gid(), i32(7)), int_const(Scalar::I16, 1), int_const(Scalar::I16, 2));
    auto step = bin(B::Min, pick, int_const(Scalar::I16, 3));
    auto halves = construct(
        h4, {float_const(H, 1.5), float_const(H, -2.0), float_const(H, 0.25), float_const(H, 8.0)});
    auto eight = construct(h8, {lanes(v, {0}), lanes(v, {1}), lanes(v, {2}), lanes(v, {3}),
                                lanes(v, {3}), lanes(v, {2}), lanes(v, {1}), lanes(v, {0})});
    return make(
        "combinations",
        {buffer("hs", holder, Access::ReadWrite), buffer("dv", d4, Access::ReadWrite),
         buffer("e3", Type::vector(H, 3), Access::Write), scalar("n", Scalar::I32)},
        {},
        {gid_i32(),
         if_(bin(B::Lt, gid(), n_i32()),
             {let("h", gload("hs", holder, gid())),
              ir::Match::make(field(h, 0),
                              {{1, "v",
                                block({assign("v", bin(B::Mul, v, splat(float_const(H, 2.0), 4))),
                                       gstore("e3", gid(), lanes(eight, {7, 0, 3}))})}},
                              block({assign("h", bin(B::Add, field(h, 1), splat(step, 3)), {1})})),
              assign("h", bin(B::Shl, field(h, 2), splat(u64(3), 2)), {2}),
              assign("h",
                     select(bin(B::Eq, bin(B::Rem, gid(), i32(2)), i32(0)),
                            make_variant(tagged, 1, halves), make_variant(tagged, 2, f64(0.5))),
                     {0}),
              gstore("hs", gid(), h),
              gstore("dv", gid(),
                     bin(B::Add, bin(B::Mul, gload("dv", d4, gid()), splat(f64(0.5), 4)),
                         gload("dv", d4, gid())))})});
}

} // namespace codegen_test
