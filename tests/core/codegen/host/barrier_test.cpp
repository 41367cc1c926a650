// Host code with barriers: a reduction tree in a uniform while loop, a tiled matmul with
// barriers in a for loop, a histogram in local memory, and values live across barriers.
#include "host_test.hpp"

#include <cmath>

using namespace host_test;

namespace {

// Each group of 256 sums its part into shared memory, halving in a while loop with a barrier
// per step, then adds the group's sum into out[0] atomically.
ir::Kernel reduce(Scalar t) {
    return kernel(
        t == Scalar::I32 ? "reduce_i32" : "reduce_f32",
        {buf("in", t), buf("out", t, ir::Access::ReadWrite), scalar("n", Scalar::I32)},
        {let("l", lid()), let("i", gid()), let("v", t == Scalar::I32 ? ci(0) : cf(0.0)),
         if_(lt(var("i"), var("n")), assign("v", load("in", t, var("i")))),
         lstore("sh", var("l", Scalar::U32), var("v", t)), barrier(),
         let("s", bin(BinaryOp::Div, call("local_size_x"), ci(2, Scalar::U32))),
         while_(
             bin(BinaryOp::Gt, var("s", Scalar::U32), ci(0, Scalar::U32)),
             block({if_(lt(var("l", Scalar::U32), var("s", Scalar::U32)),
                        lstore("sh", var("l", Scalar::U32),
                               add(lload("sh", t, var("l", Scalar::U32)),
                                   lload("sh", t,
                                         add(var("l", Scalar::U32), var("s", Scalar::U32)))))),
                    barrier(),
                    assign("s", bin(BinaryOp::Shr, var("s", Scalar::U32), ci(1, Scalar::U32)))})),
         if_(eq(var("l", Scalar::U32), ci(0, Scalar::U32)),
             eval(ir::Atomic::make(ir::AtomicOp::Add, "out", Space::Global, t, ci(0),
                                   lload("sh", t, ci(0)))))},
        {{"sh", t, 256}});
}

} // namespace

TEST_CASE("reduction: shared tree in a uniform while loop, atomic add per group (i32 exact)") {
    auto k = reduce(Scalar::I32);
    auto hk = compile(k);
    for (int n : {1, 256, 10007, 65537}) {
        auto in = random_vec<int32_t>(n, -1000, 1000);
        int32_t out = 0, nn = n;
        run(*hk, k, {in.data(), &out, &nn}, grid1(n, 256));
        int64_t want = 0;
        for (int v : in)
            want += v;
        CHECK(out == want);
    }
}

TEST_CASE("reduction: f32 with atomic fadd (relative tolerance 1e-5)") {
    auto k = reduce(Scalar::F32);
    auto hk = compile(k);
    const int n = 30001;
    auto in = random_vec<float>(n, 0.f, 1.f);
    float out = 0.f;
    int32_t nn = n;
    run(*hk, k, {in.data(), &out, &nn}, grid1(n, 256));
    double want = 0;
    for (float v : in)
        want += v;
    CHECK(std::fabs(out - want) <= 1e-5 * want);
}

TEST_CASE("reduction without the group-local memory the rule asks for: heap fallback") {
    auto k = reduce(Scalar::I32);
    auto hk = compile(k);
    const int n = 4099;
    auto in = random_vec<int32_t>(n, -50, 50);
    int32_t out = 0, nn = n;
    run(*hk, k, {in.data(), &out, &nn}, grid1(n, 256), LocalMem::None);
    int64_t want = 0;
    for (int v : in)
        want += v;
    CHECK(out == want);
}

TEST_CASE("tiled matmul: two shared tiles, barriers inside a uniform for loop (rel. 1e-5)") {
    constexpr int T = 8;
    Scalar F = Scalar::F32;
    auto I = [](const char* n) { return var(n); };
    auto k = kernel(
        "matmul",
        {buf("A", F), buf("B", F), buf("C", F, ir::Access::Write), scalar("M", Scalar::I32),
         scalar("N", Scalar::I32), scalar("K", Scalar::I32)},
        {let("row", gid('y')), let("col", gid('x')), let("tx", cast(Scalar::I32, lid('x'))),
         let("ty", cast(Scalar::I32, lid('y'))), let("acc", cf(0.0)),
         for_("t", ci(0), bin(BinaryOp::Div, add(I("K"), ci(T - 1)), ci(T)), ci(1),
              block(
                  {let("ac", add(mul(I("t"), ci(T)), I("tx"))),
                   if_(land(lt(I("row"), I("M")), lt(I("ac"), I("K"))),
                       lstore("As", add(mul(I("ty"), ci(T)), I("tx")),
                              load("A", F, add(mul(I("row"), I("K")), I("ac")))),
                       lstore("As", add(mul(I("ty"), ci(T)), I("tx")), cf(0.0))),
                   let("br", add(mul(I("t"), ci(T)), I("ty"))),
                   if_(land(lt(I("br"), I("K")), lt(I("col"), I("N"))),
                       lstore("Bs", add(mul(I("ty"), ci(T)), I("tx")),
                              load("B", F, add(mul(I("br"), I("N")), I("col")))),
                       lstore("Bs", add(mul(I("ty"), ci(T)), I("tx")), cf(0.0))),
                   barrier(),
                   for_("kk", ci(0), ci(T), ci(1),
                        assign("acc", add(var("acc", F),
                                          mul(lload("As", F, add(mul(I("ty"), ci(T)), I("kk"))),
                                              lload("Bs", F, add(mul(I("kk"), ci(T)), I("tx"))))))),
                   barrier()})),
         if_(land(lt(I("row"), I("M")), lt(I("col"), I("N"))),
             store("C", add(mul(I("row"), I("N")), I("col")), var("acc", F)))},
        {{"As", F, T * T}, {"Bs", F, T * T}});
    auto hk = compile(k);
    int32_t M = 37, N = 29, K = 45;
    auto A = random_vec<float>(M * K, -1.f, 1.f), B = random_vec<float>(K * N, -1.f, 1.f);
    std::vector<float> C(M * N, NAN);
    run(*hk, k, {A.data(), B.data(), C.data(), &M, &N, &K},
        Grid{2, {uint64_t(N), uint64_t(M), 1}, {T, T, 1}});
    for (int r = 0; r < M; ++r)
        for (int c = 0; c < N; ++c) {
            double want = 0, mag = 0;
            for (int i = 0; i < K; ++i) {
                want += double(A[r * K + i]) * B[i * N + c];
                mag += std::fabs(double(A[r * K + i]) * B[i * N + c]);
            }
            INFO("C[" << r << "][" << c << "]");
            REQUIRE(std::fabs(C[r * N + c] - want) <= 1e-5 * mag + 1e-6);
        }
}

TEST_CASE("histogram: local atomics, barriers, then global atomic_add_u32 (exact)") {
    const uint32_t bins = 50;
    Scalar U = Scalar::U32;
    auto U0 = ci(0, U);
    auto k =
        kernel("histogram",
               {buf("in", U), buf("hist", U, ir::Access::ReadWrite), scalar("n", Scalar::I32)},
               {for_("b", lid(), ci(bins, U), call("local_size_x"), lstore("h", var("b", U), U0)),
                barrier(), let("i", gid()),
                if_(lt(var("i"), var("n")),
                    eval(ir::Atomic::make(ir::AtomicOp::Add, "h", Space::Local, U,
                                          bin(BinaryOp::Rem, load("in", U, var("i")), ci(bins, U)),
                                          ci(1, U)))),
                barrier(),
                for_("b", lid(), ci(bins, U), call("local_size_x"),
                     eval(ir::Atomic::make(ir::AtomicOp::Add, "hist", Space::Global, U, var("b", U),
                                           lload("h", U, var("b", U)))))},
               {{"h", U, bins}});
    auto hk = compile(k);
    const int n = 20011;
    auto in = random_vec<uint32_t>(n, 0, 1u << 31);
    std::vector<uint32_t> hist(bins, 0), want(bins, 0);
    for (uint32_t v : in)
        ++want[v % bins];
    int32_t nn = n;
    run(*hk, k, {in.data(), hist.data(), &nn}, grid1(n, 32));
    for (uint32_t b = 0; b < bins; ++b)
        REQUIRE(hist[b] == want[b]);
}

TEST_CASE("values live across barriers are kept per work-item") {
    // v and the assigned parameter p cross barriers, also inside a uniform loop; w is private.
    Scalar I = Scalar::I32;
    auto k = kernel(
        "live", {buf("out", I, ir::Access::Write), scalar("p", I), scalar("n", I)},
        {let("v", add(mul(cast(I, lid()), ci(3)), gid())),
         assign("p", add(var("p"), cast(I, lid()))), barrier(),
         for_("t", ci(0), ci(4), ci(1),
              block({let("w", mul(var("t"), var("v"))), assign("v", add(var("v"), var("w"))),
                     barrier()})),
         if_(lt(gid(), var("n")), block({store("out", mul(gid(), ci(2)), var("v")),
                                         store("out", add(mul(gid(), ci(2)), ci(1)), var("p"))}))});
    auto layout = plexus::codegen::host::analyze(k);
    CHECK(layout.per_item_bytes == 8); // v and p
    auto hk = compile(k);
    const int n = 1001;
    const uint32_t local = 64;
    std::vector<int32_t> out(2 * n, 0);
    int32_t p = 1000, nn = n;
    run(*hk, k, {out.data(), &p, &nn}, grid1(n, local));
    for (int i = 0; i < n; ++i) {
        int l = i % local;
        int v = l * 3 + i;
        for (int t = 0; t < 4; ++t)
            v += t * v;
        REQUIRE(out[2 * i] == v);
        REQUIRE(out[2 * i + 1] == 1000 + l);
    }
}

TEST_CASE("group control: break out of a barrier loop on a uniform condition, continue too") {
    // while (true) { if (s >= lim) break; s += 1; if (s % 2 == 1) continue; sh[lid] += s; barrier }
    Scalar I = Scalar::I32;
    auto k = kernel(
        "uniform_break", {buf("out", I, ir::Access::Write), scalar("lim", I)},
        {let("l", cast(I, lid())), lstore("sh", var("l"), var("l")), let("s", ci(0)),
         while_(
             cb(true),
             block({if_(bin(BinaryOp::Ge, var("s"), var("lim")), ir::Break::make()),
                    assign("s", add(var("s"), ci(1))),
                    if_(eq(bin(BinaryOp::Rem, var("s"), ci(2)), ci(1)), ir::Continue::make()),
                    lstore("sh", var("l"), add(lload("sh", I, var("l")), var("s"))), barrier()})),
         barrier(),
         store("out", gid(),
               lload("sh", I, sub(sub(cast(I, call("local_size_x")), ci(1)), var("l"))))},
        {{"sh", I, 128}});
    auto hk = compile(k);
    int32_t lim = 7;
    const uint32_t local = 128;
    std::vector<int32_t> out(3 * local, 0);
    run(*hk, k, {out.data(), &lim}, grid1(out.size(), local));
    for (size_t i = 0; i < out.size(); ++i) {
        int mirror = int(local - 1 - i % local);
        REQUIRE(out[i] == mirror + 2 + 4 + 6); // the even steps up to lim
    }
}

TEST_CASE(
    "a required work-group shape is a constant of the host code; another shape runs nothing") {
    // out[gid] = lid + local_size_x * 1000 after a barrier through shared memory: the shape
    // comes from the declaration, and a launch of another shape (possible only through the
    // plugin's C ABI: the Runtime refuses it) leaves the output alone.
    Scalar I = Scalar::I32;
    auto k =
        kernel("required_shape", {buf("out", I, ir::Access::Write)},
               {let("l", cast(I, lid())), lstore("sh", var("l"), var("l")), barrier(),
                store("out", gid(),
                      add(lload("sh", I, var("l")), mul(cast(I, call("local_size_x")), ci(1000))))},
               {{"sh", I, 64}});
    k.work_group.required = {64, 1, 1};
    auto hk = compile(k);
    std::vector<int32_t> out(256, -1);
    run(*hk, k, {out.data()}, grid1(out.size(), 64));
    for (size_t i = 0; i < out.size(); ++i)
        REQUIRE(out[i] == int32_t(i % 64) + 64000);
    std::fill(out.begin(), out.end(), -1);
    run(*hk, k, {out.data()}, grid1(out.size(), 32));
    for (int32_t v : out)
        REQUIRE(v == -1);
}
