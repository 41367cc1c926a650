// Builders of the test kernels of vectors, records, variants and arrays. Each output slot's
// meaning is mirrored by the host reference in opencl_run_aggregates.cpp.
#include "kernels.hpp"

#include "ir_build.hpp"

namespace codegen_test {

using namespace plexus::ir;
using namespace build;

namespace {

Expr at(int per, int slot) {
    return bin(B::Add, bin(B::Mul, gid(), i32(per)), i32(slot));
}
Type vec(Scalar t, uint32_t n) {
    return Type::vector(t, n);
}

} // namespace

Type particle_type() {
    static const Type t =
        Type::aggregate(TypeDecl::make_record("Particle", {{"pos", vec(Scalar::F32, 3)},
                                                           {"vel", vec(Scalar::F32, 3)},
                                                           {"mass", Scalar::F32},
                                                           {"charge", Scalar::BF16}}));
    return t;
}
Type cell_type() {
    static const Type t = Type::aggregate(TypeDecl::make_record(
        "Cell",
        {{"p", particle_type()}, {"id", Scalar::U16}, {"h", Scalar::F16}, {"flag", Scalar::U8}}));
    return t;
}
Type pair_type() {
    static const Type t = Type::aggregate(
        TypeDecl::make_record("Pair", {{"a", Scalar::I32}, {"short", Scalar::I16}}));
    return t;
}
Type kind_type() {
    static const Type t =
        Type::aggregate(TypeDecl::make_variant("Kind", {{"free", {}},
                                                        {"charged", Scalar::F16},
                                                        {"anchored", vec(Scalar::F32, 3)},
                                                        {"boxed", pair_type()}}));
    return t;
}

// Per element: of[4], o3[2], oi[4], oc[2], oh[2], os[2], ob[1] (see the host reference).
Kernel vectors() {
    const auto F = Scalar::F32, I = Scalar::I32;
    const Type f4 = vec(F, 4), f3 = vec(F, 3), i4 = vec(I, 4), c8 = vec(Scalar::U8, 8),
               h4 = vec(Scalar::F16, 4), s4 = vec(Scalar::I8, 4), b8 = vec(Scalar::BF16, 8);
    auto VA = var("VA", f4), VB = var("VB", f4), V3 = var("V3", f3), IA = var("IA", i4),
         IB = var("IB", i4);
    auto CA = var("CA", c8), CB = var("CB", c8), HA = var("HA", h4), HB = var("HB", h4),
         BH = var("BH", b8);
    std::vector<Stmt> body = {
        let("VA", gload("va", f4, gid())),
        let("VB", gload("vb", f4, gid())),
        let("V3", gload("v3", f3, gid())),
        let("IA", gload("ia", i4, gid())),
        let("IB", gload("ib", i4, gid())),
        let("CA", gload("ca", c8, gid())),
        let("CB", gload("cb", c8, gid())),
        let("HA", gload("ha", h4, gid())),
        let("HB", gload("hb", h4, gid())),
        let("BH", gload("bh", b8, gid())),
        gstore("of", at(4, 0), bin(B::Add, bin(B::Mul, VA, VB), splat(f32(2.0f), 4))),
        gstore("of", at(4, 1),
               select(bin(B::Lt, lanes(VA, {0}), lanes(VB, {0})), bin(B::Min, VA, VB),
                      bin(B::Max, VA, VB))),
        gstore("of", at(4, 2), bin(B::Max, VA, lanes(VB, {3, 2, 1, 0}))),
        gstore("of", at(4, 3),
               construct(f4, {lanes(VA, {0}), lanes(VB, {1}), lanes(V3, {2}),
                              lanes(bin(B::Div, VA, VB), {3})})),
        gstore("o3", at(2, 0), bin(B::Add, lanes(V3, {2, 1, 0}), V3)),
        let("t", V3),
        assign("t", f32(5.0f), {1}),
        gstore("o3", at(2, 1), var("t", f3)),
        gstore("o3", at(2, 1), lanes(VA, {3}), {0}),
        gstore("oi", at(4, 0), bin(B::Add, IA, IB)),
        gstore("oi", at(4, 1),
               bin(B::BitXor, bin(B::Mul, IA, IB), bin(B::BitXor, neg(IA), bitnot(IB)))),
        gstore(
            "oi", at(4, 2),
            bin(B::Add, bin(B::BitXor, bin(B::Shl, IA, IB), bin(B::Shr, IA, IB)),
                bin(B::Add, bin(B::Min, IA, IB),
                    bin(B::Div, IA,
                        bin(B::BitOr, bin(B::BitAnd, IB, splat(i32(255), 4)), splat(i32(1), 4)))))),
        gstore("oi", at(4, 3), cast(i4, bin(B::Mul, VA, splat(f32(1e9f), 4)))),
        gstore("oi", at(4, 3), i32(7), {3}),
        gstore("oc", at(2, 0), bin(B::BitXor, bin(B::Add, CA, CB), bin(B::Mul, CA, CB))),
        gstore("oc", at(2, 1),
               bin(B::Sub, lanes(bin(B::Shr, CA, CB), {7, 6, 5, 4, 3, 2, 1, 0}),
                   bin(B::Max, CA, splat(int_const(Scalar::U8, 100), 8)))),
        gstore("oh", at(2, 0), bin(B::Add, bin(B::Mul, HA, HB), HA)),
        gstore("oh", at(2, 1),
               bin(B::Sub, cast(h4, VA),
                   bin(B::Mul, lanes(HB, {0, 0, 1, 1}), splat(float_const(Scalar::F16, 0.1), 4)))),
        gstore("os", at(2, 0), cast(s4, VA)),
        gstore("os", at(2, 1), cast(s4, IA)),
        gstore("ob", gid(),
               bin(B::Mul, bin(B::Max, BH, splat(float_const(Scalar::BF16, -1.0), 8)), BH)),
    };
    return make("vectors",
                {buffer("va", f4, Access::Read), buffer("vb", f4, Access::Read),
                 buffer("v3", f3, Access::Read), buffer("ia", i4, Access::Read),
                 buffer("ib", i4, Access::Read), buffer("ca", c8, Access::Read),
                 buffer("cb", c8, Access::Read), buffer("ha", h4, Access::Read),
                 buffer("hb", h4, Access::Read), buffer("bh", b8, Access::Read),
                 buffer("of", f4, Access::Write), buffer("o3", f3, Access::Write),
                 buffer("oi", i4, Access::Write), buffer("oc", c8, Access::Write),
                 buffer("oh", h4, Access::Write), buffer("os", s4, Access::Write),
                 buffer("ob", b8, Access::Write), scalar("n", I)},
                {}, {gid_i32(), if_(bin(B::Lt, gid(), n_i32()), std::move(body))});
}

// Groups of records_group particles: each is copied to shared memory, then updated from its
// neighbour in the group (the next one, wrapping), written back whole and field by field,
// packed into a Cell, and the heavier of it and its neighbour picked with a select.
Kernel records() {
    const auto F = Scalar::F32, U = Scalar::U32;
    const Type P = particle_type(), C = cell_type();
    auto p = var("p", P), q = var("q", P), lid = var("lid", U);
    auto mass = [](Expr r) { return field(std::move(r), 2); };
    return make(
        "records",
        {buffer("parts", P, Access::ReadWrite), buffer("cells", C, Access::Write),
         buffer("pick", P, Access::Write), scalar("n", Scalar::I32), scalar("dt", F)},
        {{"sh", P, uint32_t(records_group)}},
        {let("lid", call("local_id_x")), gid_i32(),
         let("p", gload("parts", P, bin(B::Min, gid(), bin(B::Sub, n_i32(), i32(1))))),
         lstore("sh", lid, p), ir::Barrier::make(),
         let("q", lload("sh", P, bin(B::Rem, bin(B::Add, lid, u32(1)), u32(records_group)))),
         if_(bin(B::Lt, gid(), n_i32()),
             {assign("p", bin(B::Sub, lanes(field(p, 1), {1}), var("dt", F)), {1, 1}),
              assign("p", bin(B::Add, field(p, 0), bin(B::Mul, field(p, 1), splat(f32(0.5f), 3))),
                     {0}),
              assign("p", cast(Scalar::BF16, mass(q)), {3}), gstore("parts", gid(), p),
              gstore("parts", gid(), bin(B::Mul, mass(p), f32(2.0f)), {2}),
              gstore("cells", gid(),
                     construct(C, {q, cast(Scalar::U16, gid()), cast(Scalar::F16, mass(p)),
                                   cast(Scalar::U8, bin(B::BitAnd, lid, u32(1)))})),
              gstore("cells", gid(), f32(1.5f), {0, 0, 2}),
              gstore("cells", gid(), cast(Scalar::BF16, bin(B::Mul, mass(p), f32(3.0f))), {0, 3}),
              gstore("pick", gid(), select(bin(B::Gt, mass(p), mass(q)), p, q))})});
}

// Each work-item walks counts[gid] variants from kinds[gid] on (wrapping at n) with a match
// in the loop, whose arms break, continue and assign their payload variable; res[2 * gid]
// gets the sum, res[2 * gid + 1] a second match's anchored z or -1 (otherwise); out[gid] a
// variant chosen by the sum.
Kernel variants() {
    const auto F = Scalar::F32, I = Scalar::I32, H = Scalar::F16;
    const Type K = kind_type();
    auto acc = var("acc", F);
    auto add = [&](Expr e) { return assign("acc", bin(B::Add, acc, std::move(e))); };
    auto q = var("q", H), v = var("v", vec(F, 3)), pr = var("pr", pair_type());
    std::vector<MatchCase> walk = {
        {0, "", block({add(f32(1.0f))})},
        {1, "q",
         block({assign("q", bin(B::Mul, q, float_const(H, 2.0))),
                if_(bin(B::Lt, q, float_const(H, 0.0)), {ir::Break::make()}), add(cast(F, q))})},
        {2, "v", block({add(lanes(v, {0})), add(lanes(v, {1}))})},
        {3, "pr",
         block({if_(bin(B::Gt, field(pr, 0), i32(0)), {ir::Continue::make()}),
                add(cast(F, field(pr, 1)))})}};
    auto item = bin(B::Rem, bin(B::Add, gid(), var("j", I)), n_i32());
    // out[gid]: charged above 10, anchored below 0, boxed at 0, free otherwise.
    auto out = [&](Expr v) { return block({gstore("out", gid(), std::move(v))}); };
    auto anchored = make_variant(K, 2, construct(vec(F, 3), {acc, cast(F, gid()), f32(0.5f)}));
    auto boxed = make_variant(
        K, 3, construct(pair_type(), {gid(), cast(Scalar::I16, gload("counts", I, gid()))}));
    auto choose = If::make(
        bin(B::Gt, acc, f32(10.0f)), out(make_variant(K, 1, cast(H, acc))),
        If::make(bin(B::Lt, acc, f32(0.0f)), out(anchored),
                 If::make(bin(B::Eq, acc, f32(0.0f)), out(boxed), out(make_variant(K, 0)))));
    return make(
        "variants",
        {buffer("kinds", K, Access::Read), buffer("counts", I, Access::Read),
         buffer("out", K, Access::Write), buffer("res", F, Access::Write), scalar("n", I)},
        {},
        {gid_i32(),
         if_(bin(B::Lt, gid(), n_i32()),
             {let("acc", f32(0.0f)),
              for_("j", i32(0), gload("counts", I, gid()),
                   {ir::Match::make(gload("kinds", K, item), walk)}),
              gstore("res", at(2, 0), acc), let("k", gload("kinds", K, gid())),
              ir::Match::make(
                  var("k", K),
                  {{2, "w", block({gstore("res", at(2, 1), lanes(var("w", vec(F, 3)), {2}))})}},
                  block({gstore("res", at(2, 1), f32(-1.0f))})),
              choose})});
}

// A group of arrays_group work-items transposes its 8 x 8 block of tin through a shared tile
// [8][8] pad 1; each work-item sorts arrays_sorted values of vin in a private array, sums four
// f16 values kept in a private f16 array, and adds two f32x4 of a private array, one lane of
// which is stored on its own.
Kernel arrays() {
    const auto F = Scalar::F32, I = Scalar::I32, U = Scalar::U32, H = Scalar::F16;
    const Type f4 = vec(F, 4);
    const auto P = Space::Private;
    auto lid = var("lid", U), i = var("i", I), j = var("j", I);
    auto vals = [&](Expr k) { return load("vals", P, I, std::move(k)); };
    auto hs = [&](int k) { return load("hs", P, H, i32(k)); };
    auto sorted_at = [&](Expr k) {
        return bin(B::Add, bin(B::Mul, gid(), i32(arrays_sorted)), std::move(k));
    };
    auto tin = gload("tin", F, gid());
    return make(
        "arrays",
        {buffer("vin", I, Access::Read), buffer("vout", I, Access::Write),
         buffer("tin", F, Access::Read), buffer("tout", F, Access::Write),
         buffer("hsum", H, Access::Write), buffer("acc4", f4, Access::Write), scalar("n", I)},
        {{"tile", F, 72, {8, 8}, 1}},
        {let("lid", call("local_id_x")), gid_i32(), let("r", bin(B::Div, lid, u32(8))),
         let("c", bin(B::Rem, lid, u32(8))),
         lstore("tile", bin(B::Add, bin(B::Mul, var("r", U), u32(9)), var("c", U)),
                gload("tin", F, bin(B::Min, gid(), bin(B::Sub, n_i32(), i32(1))))),
         ir::Barrier::make(),
         if_(bin(B::Lt, gid(), n_i32()),
             {gstore("tout", gid(),
                     lload("tile", F, bin(B::Add, bin(B::Mul, var("c", U), u32(9)), var("r", U)))),
              for_("i", i32(0), i32(arrays_sorted),
                   {store("vals", P, i, gload("vin", I, sorted_at(i)))}),
              for_("i", i32(1), i32(arrays_sorted),
                   {let("v", vals(i)), let("j", bin(B::Sub, i, i32(1))),
                    While::make(
                        bin(B::LogicalAnd, bin(B::Ge, j, i32(0)), bin(B::Gt, vals(j), var("v", I))),
                        block({store("vals", P, bin(B::Add, j, i32(1)), vals(j)),
                               assign("j", bin(B::Sub, j, i32(1)))})),
                    store("vals", P, bin(B::Add, j, i32(1)), var("v", I))}),
              for_("i", i32(0), i32(arrays_sorted), {gstore("vout", sorted_at(i), vals(i))}),
              for_("i", i32(0), i32(4),
                   {store("hs", P, i, cast(H, bin(B::Add, cast(F, vals(i)), tin)))}),
              gstore("hsum", gid(),
                     bin(B::Add, bin(B::Add, bin(B::Add, hs(0), hs(1)), hs(2)), hs(3))),
              store("acc", P, i32(0), splat(tin, 4)),
              store("acc", P, i32(1), construct(f4, {f32(1.0f), f32(2.0f), f32(3.0f), f32(4.0f)})),
              store("acc", P, i32(1), bin(B::Mul, tin, f32(2.0f)), {2}),
              gstore("acc4", gid(),
                     bin(B::Add, load("acc", P, f4, i32(0)), load("acc", P, f4, i32(1))))})},
        {{"vals", I, uint32_t(arrays_sorted)}, {"hs", H, 4}, {"acc", f4, 2}});
}

} // namespace codegen_test
