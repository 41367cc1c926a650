// Regions whose For loops run W work-items in lock step (codegen/host/lower/lockstep.cpp): trip
// counts that differ per work-item, loops nested in branches that differ per work-item, a loop
// whose step differs per work-item (its variable then lives in a lane frame), branches and
// loops on values every lane shares, and local sizes that leave a partial chunk, at 512, 256
// and 128 bits; every output element against a host reference.
#include "host_test.hpp"

using namespace host_test;

namespace {

using plexus::codegen::Options;

// out[g] for work-item g of a launch of n work-items (local id l, group size L):
//   acc = 0
//   for j in [l, 3 l % 17 + 5) step 2:            trip count per work-item, induction visible
//       acc += in[(g + j) % n] * j
//   if (g % 3 == 0)                                a branch that differs per work-item
//       for k in [0, m): acc += k                  a uniform loop under a mask
//   for q in [0, 12) step l % 4 + 1: acc += q      a step per work-item: a lane frame
//   if (m > 2) for r in [0, 3): acc += in[r]       uniform control
//   out[g] = acc
ir::Kernel divergent() {
    Expr g = gid(), l = cast(Scalar::I32, lid()), n = var("n"), m = var("m");
    Stmt first = for_(
        "j", l, add(bin(BinaryOp::Rem, mul(l, ci(3)), ci(17)), ci(5)), ci(2),
        block({assign(
            "acc", add(var("acc", Scalar::F32),
                       mul(load("in", Scalar::F32, bin(BinaryOp::Rem, add(var("g"), var("j")), n)),
                           cast(Scalar::F32, var("j")))))}));
    Stmt second = if_(
        eq(bin(BinaryOp::Rem, var("g"), ci(3)), ci(0)),
        for_("k", ci(0), m, ci(1),
             block({assign("acc", add(var("acc", Scalar::F32), cast(Scalar::F32, var("k"))))})));
    Stmt third =
        for_("q", ci(0), ci(12), add(bin(BinaryOp::Rem, l, ci(4)), ci(1)),
             block({assign("acc", add(var("acc", Scalar::F32), cast(Scalar::F32, var("q"))))}));
    Stmt fourth = if_(bin(BinaryOp::Gt, m, ci(2)),
                      for_("r", ci(0), ci(3), ci(1),
                           block({assign("acc", add(var("acc", Scalar::F32),
                                                    load("in", Scalar::F32, var("r"))))})));
    return kernel("divergent",
                  {buf("in", Scalar::F32), buf("out", Scalar::F32, ir::Access::Write),
                   scalar("n", Scalar::I32), scalar("m", Scalar::I32)},
                  {let("g", g),
                   if_(lt(var("g"), n), block({let("acc", cf(0.0)), first, second, third, fourth,
                                               store("out", var("g"), var("acc", Scalar::F32))}))});
}

float reference(const std::vector<float>& in, int g, int l, int n, int m) {
    float acc = 0;
    for (int j = l; j < l * 3 % 17 + 5; j += 2)
        acc += in[size_t((g + j) % n)] * float(j);
    if (g % 3 == 0)
        for (int k = 0; k < m; ++k)
            acc += float(k);
    for (int q = 0; q < 12; q += l % 4 + 1)
        acc += float(q);
    if (m > 2)
        for (int r = 0; r < 3; ++r)
            acc += in[size_t(r)];
    return acc;
}

} // namespace

TEST_CASE("lock step: loops whose trip counts, steps and branches differ per work-item") {
    const ir::Kernel k = divergent();
    for (const std::string& features : feature_sets()) {
        const plexus::codegen::Options o = native_options(features);
        auto hk = plexus::codegen::host::compile_with_features(k, o, {});
        // The paths this is about, as lowered: loops while any lane is active, the induction
        // of the For with a uniform step, the lane frames of the one whose step varies.
        const std::string lowered = plexus::codegen::host_llvm_ir(k, o, false);
        if (plexus::codegen::host::vector_bits(o) >= 64) {
            CHECK(lowered.find("lockstep.head") != std::string::npos);
            CHECK(lowered.find("for.trips") != std::string::npos);
            CHECK(lowered.find("for.step.lanes") != std::string::npos);
        }
        for (uint32_t local : {1u, 7u, 16u, 37u, 64u}) {
            const int n = 301;
            for (int m : {0, 5}) {
                CAPTURE(features);
                CAPTURE(local);
                CAPTURE(m);
                std::vector<float> in(static_cast<size_t>(n)), out(static_cast<size_t>(n), -1.0f);
                for (int i = 0; i < n; ++i)
                    in[size_t(i)] = float(i % 13) * 0.25f - 1.0f;
                int nn = n, mm = m;
                run(*hk, k, {in.data(), out.data(), &nn, &mm}, grid1(uint64_t(n), local));
                int bad = 0;
                for (int g = 0; g < n; ++g) {
                    const float want = reference(in, g, g % int(local), n, m);
                    if (out[size_t(g)] != want && ++bad <= 5)
                        FAIL_CHECK("out[" << g << "] = " << out[size_t(g)] << ", want " << want);
                }
                CHECK(bad == 0);
            }
        }
    }
}

TEST_CASE("lock step: a Let that reads another Let of the same lock-stepped run") {
    // for i in [0, 4):
    //     if (i + 1 < 4) { a = l + i; b = a * 2; for e in [0, 2): sh[b + e] = in[e] + i }
    //     barrier
    //     if (i < 3) out[3 g + i] = sh[2 (l + i)]
    //     barrier
    // b reads a before the run that declares both is lowered: it holds one value per lane
    // (host codegen once threw "'a' is not declared here" on it).
    Scalar I = Scalar::I32, F = Scalar::F32;
    Expr l = cast(I, lid()), i = var("i");
    Stmt fill = block({let("a", add(l, i)), let("b", mul(var("a"), ci(2))),
                       for_("e", ci(0), ci(2), ci(1),
                            block({lstore("sh", add(var("b"), var("e")),
                                          add(load("in", F, var("e")), cast(F, i)))}))});
    const ir::Kernel k =
        kernel("let_reads_let", {buf("in", F), buf("out", F, ir::Access::Write)},
               {for_("i", ci(0), ci(4), ci(1),
                     block({if_(lt(add(i, ci(1)), ci(4)), fill), barrier(),
                            if_(lt(i, ci(3)), store("out", add(mul(gid(), ci(3)), i),
                                                    lload("sh", F, mul(add(l, i), ci(2))))),
                            barrier()}))},
               {{"sh", F, 80}});
    for (const std::string& features : feature_sets()) {
        CAPTURE(features);
        auto hk = compile(k, features);
        const uint32_t local = 32, n = 64;
        std::vector<float> in = {1.5f, -2.0f}, out(3 * n, -1.0f);
        run(*hk, k, {in.data(), out.data()}, grid1(n, local));
        for (uint32_t g = 0; g < n; ++g)
            for (int it = 0; it < 3; ++it)
                REQUIRE(out[3 * g + uint32_t(it)] == 1.5f + float(it));
    }
}

TEST_CASE("lock step: a short loop in a barrier loop stores through a group-level let") {
    // for i in [0, 6):
    //     s = i % 2
    //     for e in [0, 4): sh[(1 - s) 128 + 4 l + e] = in[4 (i n + g) + e]
    //     barrier
    //     for e in [0, 4): out[4 (i n + g) + e] = sh[(1 - s) 128 + 4 ((l + 1) % 32) + e]
    //     barrier
    // s lives across the barrier (one copy per work-item), yet the lock-stepped fill region
    // recomputed it per lane and never stored it: the drain read garbage and crashed.
    Scalar I = Scalar::I32, F = Scalar::F32;
    Expr l = cast(I, lid()), i = var("i"), n = var("n");
    Expr half = mul(sub(ci(1), var("s")), ci(128));
    Expr item = add(mul(i, n), gid());
    Stmt fill = for_("e", ci(0), ci(4), ci(1),
                     block({lstore("sh", add(add(half, mul(l, ci(4))), var("e")),
                                   load("in", F, add(mul(item, ci(4)), var("e"))))}));
    Stmt drain = for_(
        "e", ci(0), ci(4), ci(1),
        block({store("out", add(mul(item, ci(4)), var("e")),
                     lload("sh", F,
                           add(add(half, mul(bin(BinaryOp::Rem, add(l, ci(1)), ci(32)), ci(4))),
                               var("e"))))}));
    const ir::Kernel k = kernel(
        "double_buffer", {buf("in", F), buf("out", F, ir::Access::Write), scalar("n", I)},
        {for_("i", ci(0), ci(6), ci(1),
              block({let("s", bin(BinaryOp::Rem, i, ci(2))), fill, barrier(), drain, barrier()}))},
        {{"sh", F, 256}});
    for (const std::string& features : feature_sets()) {
        CAPTURE(features);
        auto hk = compile(k, features);
        const int local = 32, nn = 128;
        std::vector<float> in = random_vec<float>(size_t(6 * nn * 4), -1.f, 1.f),
                           out(in.size(), -7.f);
        int n_arg = nn;
        run(*hk, k, {in.data(), out.data(), &n_arg}, grid1(uint64_t(nn), uint32_t(local)));
        int bad = 0;
        for (int it = 0; it < 6; ++it)
            for (int g = 0; g < nn; ++g)
                for (int e = 0; e < 4; ++e) {
                    const int from = g / local * local + (g % local + 1) % local;
                    const float want = in[size_t((it * nn + from) * 4 + e)];
                    const float got = out[size_t((it * nn + g) * 4 + e)];
                    if (got != want && ++bad <= 5)
                        FAIL_CHECK("i " << it << " g " << g << " e " << e << ": " << got
                                        << ", want " << want);
                }
        CHECK(bad == 0);
    }
}

TEST_CASE("lock step: temporaries each region assigns before reading are one copy, not one per "
          "work-item") {
    // t = 0; u = 2 l; w = 1; c = 0               u: recomputable per lane, w: uniform at its Let
    // for j in [0, 2): t = t + in[(g + j) % n]   (a loop: the region runs in lock step)
    // sh[l] = t + u + w; c = t
    // barrier
    // for s in [0, 4):
    //     t = sh[(s % 2) 64 + (l + 1) % 64] * 0.5 + s;  u = l + s;  w = t * 0.25
    //     for j in [0, 2): c = c + t * u + w           c: read before it is assigned
    //     sh[(1 - s % 2) 64 + l] = c
    //     barrier
    // if (g < n) out[g] = c
    // t, u and w carry nothing across a barrier, so the layout gives them no copy per
    // work-item; the lock-stepped regions must still take the values each one assigns, not
    // u's Let recomputed per lane or w's as one value for all lanes.
    Scalar I = Scalar::I32, F = Scalar::F32;
    Expr l = var("l"), s = var("s"), t = var("t", F), u = var("u"), w = var("w", F),
         c = var("c", F);
    auto rem = [](Expr a, int b) { return bin(BinaryOp::Rem, std::move(a), ci(b)); };
    Stmt gather = for_(
        "j", ci(0), ci(2), ci(1),
        block({assign(
            "t", add(t, load("in", F, bin(BinaryOp::Rem, add(var("g"), var("j")), var("n")))))}));
    Stmt step = block(
        {assign("t", add(mul(lload("sh", F, add(mul(rem(s, 2), ci(64)), rem(add(l, ci(1)), 64))),
                             cf(0.5)),
                         cast(F, s))),
         assign("u", add(l, s)), assign("w", mul(t, cf(0.25))),
         for_("j", ci(0), ci(2), ci(1), block({assign("c", add(add(c, mul(t, cast(F, u))), w))})),
         lstore("sh", add(mul(sub(ci(1), rem(s, 2)), ci(64)), l), c), barrier()});
    const ir::Kernel k = kernel(
        "temporaries", {buf("in", F), buf("out", F, ir::Access::Write), scalar("n", I)},
        {let("l", cast(I, lid())), let("g", gid()), let("t", cf(0.0)), let("u", mul(l, ci(2))),
         let("w", cf(1.0)), let("c", cf(0.0)), gather, lstore("sh", l, add(add(t, cast(F, u)), w)),
         assign("c", t), barrier(), for_("s", ci(0), ci(4), ci(1), step),
         if_(lt(var("g"), var("n")), store("out", var("g"), c))},
        {{"sh", F, 128}});
    // Declarations: in, out, n, then l, g, t, u, w, c, j, s, j.
    const auto layout = plexus::codegen::host::analyze(k);
    using plexus::codegen::host::Storage;
    REQUIRE(layout.region_local.size() == 12);
    for (size_t d : {5, 6, 7}) {
        CAPTURE(d);
        CHECK(layout.region_local[d]);
        CHECK(layout.decls[d] == Storage::Private);
    }
    CHECK_FALSE(layout.region_local[8]);
    CHECK(layout.decls[8] == Storage::PerItem);

    const int n = 1000, local = 64;
    std::vector<float> in = random_vec<float>(size_t(n), -1.f, 1.f), want(in.size());
    for (int base = 0; base < n; base += local) {
        std::vector<float> sh(2 * local), acc(local);
        for (int i = 0; i < local; ++i) {
            float t0 = 0.f;
            for (int j = 0; j < 2; ++j)
                t0 = t0 + in[size_t((base + i + j) % n)];
            sh[size_t(i)] = t0 + float(2 * i) + 1.f;
            acc[size_t(i)] = t0;
        }
        for (int st = 0; st < 4; ++st) {
            const int from = st % 2 * local, to = (1 - st % 2) * local;
            for (int i = 0; i < local; ++i) {
                const float tt = sh[size_t(from + (i + 1) % local)] * 0.5f + float(st),
                            ww = tt * 0.25f;
                for (int j = 0; j < 2; ++j)
                    acc[size_t(i)] = acc[size_t(i)] + tt * float(i + st) + ww;
            }
            for (int i = 0; i < local; ++i)
                sh[size_t(to + i)] = acc[size_t(i)];
        }
        for (int i = 0; i < local && base + i < n; ++i)
            want[size_t(base + i)] = acc[size_t(i)];
    }
    for (const std::string& features : feature_sets()) {
        CAPTURE(features);
        auto hk = compile(k, features);
        std::vector<float> out(in.size(), -7.f);
        int n_arg = n;
        run(*hk, k, {in.data(), out.data(), &n_arg}, grid1(uint64_t(n), uint32_t(local)));
        // The same operations in the same order as the reference (no contraction): exact.
        int bad = 0;
        for (int g = 0; g < n; ++g)
            if (out[size_t(g)] != want[size_t(g)] && ++bad <= 5)
                FAIL_CHECK("g " << g << ": " << out[size_t(g)] << ", want " << want[size_t(g)]);
        CHECK(bad == 0);
    }
}
