// Whole kernels on the interpreter against host references, on random inputs whose sizes are
// not multiples of the group size: vector_add, reductions, tiled matmul, histogram, indices,
// a transpose through a shaped shared tile.
#include "fixture.hpp"

#include <plexus/kernel.hpp>

#include <nlohmann/json.hpp>

#include <cmath>
#include <numeric>

namespace interp_test {

using B = ir::BinaryOp;
constexpr Scalar I32 = Scalar::I32, U32 = Scalar::U32, U64 = Scalar::U64, F32 = Scalar::F32;

ir::Kernel vector_add_kernel(const std::string& name) {
    auto gid = var("gid", I32);
    return kernel(
        name,
        {buffer("a", F32), buffer("b", F32), buffer("c", F32, ir::Access::Write), scalar("n", I32)},
        {let_gid(), if_(bin(B::Lt, gid, var("n", I32)),
                        {store("c", gid, bin(B::Add, load("a", F32, gid), load("b", F32, gid)))})});
}

void check_vector_add_works() {
    const int n = 1000;
    auto a = random_vector<float>(n, -10.f, 10.f), b = random_vector<float>(n, -10.f, 10.f);
    Buffer ba(a), bb(b), bc(n * sizeof(float));
    Module m(vector_add_kernel());
    REQUIRE(m.status() == PLX_OK);
    REQUIRE(launch(m.kernel(), dims1(n, 64), {ba, bb, bc, n}) == PLX_OK);
    auto c = bc.read<float>();
    for (int i = 0; i < n; ++i)
        REQUIRE(c[i] == a[i] + b[i]); // one f32 add: exact
}

TEST_CASE("vector_add: every element equals the host sum; the padding work-items stay inside") {
    const ir::Kernel k = vector_add_kernel();
    ir::validate(k);
    for (int n : {1, 63, 1000, 4099}) {
        CAPTURE(n);
        auto a = random_vector<float>(n, -100.f, 100.f), b = random_vector<float>(n, -100.f, 100.f);
        // One element more than n in c, holding a sentinel the kernel must not overwrite.
        std::vector<float> sentinel(n + 1, -7.5f);
        Buffer ba(a), bb(b), bc(sentinel);
        Module m(k);
        REQUIRE(m.status() == PLX_OK);
        plx_event ev = nullptr;
        REQUIRE(launch(m.kernel(), dims1(n, 64), {ba, bb, bc, n}, &ev) == PLX_OK);
        REQUIRE(api().event_wait(ev) == PLX_OK);
        uint64_t start = 0, end = 0;
        REQUIRE(api().event_profile(ev, &start, &end) == PLX_OK);
        CHECK(start <= end);
        api().event_release(ev);
        auto c = bc.read<float>();
        for (int i = 0; i < n; ++i)
            REQUIRE(c[i] == a[i] + b[i]);
        CHECK(c[n] == -7.5f);
    }
}

// sum(in[0..n)) per group through a shared-memory tree in a uniform while loop, then one
// atomic add per group.
ir::Kernel reduction_kernel(Scalar t) {
    auto lid = var("lid", U32), gid = var("gid", U64), s = var("s", U32);
    auto zero = t == F32 ? f32(0) : i32(0);
    return kernel(
        std::string("reduce_") + ir::to_string(t),
        {buffer("in", t), buffer("out", t, ir::Access::ReadWrite), scalar("n", I32)},
        {let("lid", call("local_id_x")), let("gid", call("global_id_x")), let("v", zero),
         if_(bin(B::Lt, gid, cast(U64, var("n", I32))), {assign("v", load("in", t, gid))}),
         store("sh", lid, var("v", t), Space::Local), ir::Barrier::make(),
         let("s", bin(B::Shr, call("local_size_x"), u32(1))),
         ir::While::make(bin(B::Gt, s, u32(0)),
                         block({if_(bin(B::Lt, lid, s),
                                    {store("sh", lid,
                                           bin(B::Add, load("sh", t, lid, Space::Local),
                                               load("sh", t, bin(B::Add, lid, s), Space::Local)),
                                           Space::Local)}),
                                ir::Barrier::make(), assign("s", bin(B::Shr, s, u32(1)))})),
         if_(bin(B::Eq, lid, u32(0)),
             {ir::Eval::make(ir::Atomic::make(ir::AtomicOp::Add, "out", Space::Global, t, u32(0),
                                              load("sh", t, u32(0), Space::Local)))})},
        {{"sh", t, 256}});
}

TEST_CASE(
    "reduction: shared-memory barrier tree and atomic add (i32 exact, f32 within 1e-5 relative)") {
    for (Scalar t : {I32, F32}) {
        const ir::Kernel k = reduction_kernel(t);
        ir::validate(k);
        Module m(k);
        REQUIRE(m.status() == PLX_OK);
        for (int n : {1, 255, 5000}) {
            CAPTURE(n);
            CAPTURE(ir::to_string(t));
            if (t == I32) {
                auto in = random_vector<int32_t>(n, -1000, 1000);
                Buffer bin_(in), bout(std::vector<int32_t>{5});
                REQUIRE(launch(m.kernel(), dims1(n, 256), {bin_, bout, n}) == PLX_OK);
                CHECK(bout.read<int32_t>()[0] == 5 + std::accumulate(in.begin(), in.end(), 0));
            } else {
                auto in = random_vector<float>(n, 0.f, 1.f);
                Buffer bin_(in), bout(std::vector<float>{0.f});
                REQUIRE(launch(m.kernel(), dims1(n, 256), {bin_, bout, n}) == PLX_OK);
                double want = 0;
                for (float x : in)
                    want += x;
                CHECK(std::fabs(bout.read<float>()[0] - want) <= 1e-5 * want + 1e-6);
            }
        }
    }
}

// C[M x N] = A[M x K] * B[K x N] with T x T tiles in shared memory, barriers in a for loop.
ir::Kernel matmul_kernel(int T) {
    auto v = [](const char* n) { return var(n, I32); };
    auto add = [](ir::Expr a, ir::Expr b) { return bin(B::Add, a, b); };
    auto mul = [](ir::Expr a, ir::Expr b) { return bin(B::Mul, a, b); };
    auto lt = [](ir::Expr a, ir::Expr b) { return bin(B::Lt, a, b); };
    auto land = [](ir::Expr a, ir::Expr b) { return bin(B::LogicalAnd, a, b); };
    auto tile_at = add(mul(v("ly"), i32(T)), v("lx"));
    return kernel(
        "matmul",
        {buffer("A", F32), buffer("B", F32), buffer("C", F32, ir::Access::Write), scalar("M", I32),
         scalar("N", I32), scalar("K", I32)},
        {let("row", cast(I32, call("global_id_y"))), let("col", cast(I32, call("global_id_x"))),
         let("ly", cast(I32, call("local_id_y"))), let("lx", cast(I32, call("local_id_x"))),
         let("acc", f32(0)),
         ir::For::make(
             "t", i32(0), ir::Binary::make(B::Div, add(v("K"), i32(T - 1)), i32(T)), i32(1),
             block({let("ka", add(mul(v("t"), i32(T)), v("lx"))),
                    if_(land(lt(v("row"), v("M")), lt(v("ka"), v("K"))),
                        {store("ta", tile_at, load("A", F32, add(mul(v("row"), v("K")), v("ka"))),
                               Space::Local)},
                        {store("ta", tile_at, f32(0), Space::Local)}),
                    let("kb", add(mul(v("t"), i32(T)), v("ly"))),
                    if_(land(lt(v("kb"), v("K")), lt(v("col"), v("N"))),
                        {store("tb", tile_at, load("B", F32, add(mul(v("kb"), v("N")), v("col"))),
                               Space::Local)},
                        {store("tb", tile_at, f32(0), Space::Local)}),
                    ir::Barrier::make(),
                    ir::For::make(
                        "k", i32(0), i32(T), i32(1),
                        block({assign("acc",
                                      add(var("acc", F32),
                                          mul(load("ta", F32, add(mul(v("ly"), i32(T)), v("k")),
                                                   Space::Local),
                                              load("tb", F32, add(mul(v("k"), i32(T)), v("lx")),
                                                   Space::Local))))})),
                    ir::Barrier::make()})),
         if_(land(lt(v("row"), v("M")), lt(v("col"), v("N"))),
             {store("C", add(mul(v("row"), v("N")), v("col")), var("acc", F32))})},
        {{"ta", F32, uint32_t(T * T)}, {"tb", F32, uint32_t(T * T)}});
}

TEST_CASE("tiled matmul: barriers in a for loop over tiles, 2-D grid, within 1e-5 relative") {
    const int T = 8, M = 37, N = 29, K = 45;
    const ir::Kernel k = matmul_kernel(T);
    ir::validate(k);
    auto a = random_vector<float>(M * K, -1.f, 1.f), b = random_vector<float>(K * N, -1.f, 1.f);
    Buffer ba(a), bb(b), bc(std::vector<float>(M * N, 0.f));
    Module m(k);
    REQUIRE(m.status() == PLX_OK);
    Dims d{2, {uint64_t(N), uint64_t(M), 1}, {T, T, 1}};
    REQUIRE(launch(m.kernel(), d, {ba, bb, bc, M, N, K}) == PLX_OK);
    auto c = bc.read<float>();
    for (int r = 0; r < M; ++r)
        for (int col = 0; col < N; ++col) {
            double want = 0, magnitude = 0;
            for (int i = 0; i < K; ++i) {
                want += double(a[r * K + i]) * b[i * N + col];
                magnitude += std::fabs(double(a[r * K + i]) * b[i * N + col]);
            }
            CAPTURE(r);
            CAPTURE(col);
            REQUIRE(std::fabs(c[r * N + col] - want) <= 1e-5 * magnitude + 1e-6);
        }
}

TEST_CASE("histogram: atomic_add_u32 on global memory counts every element exactly") {
    auto gid = var("gid", I32);
    const ir::Kernel k = kernel(
        "histogram",
        {buffer("data", U32), buffer("hist", U32, ir::Access::ReadWrite), scalar("n", I32),
         scalar("bins", U32)},
        {let_gid(), if_(bin(B::Lt, gid, var("n", I32)),
                        {ir::Eval::make(ir::Atomic::make(
                            ir::AtomicOp::Add, "hist", Space::Global, U32,
                            bin(B::Rem, load("data", U32, gid), var("bins", U32)), u32(1)))})});
    ir::validate(k);
    const int n = 10007;
    const uint32_t bins = 37;
    auto data = random_vector<uint32_t>(n, 0, 1u << 30);
    Buffer bd(data), bh(std::vector<uint32_t>(bins, 0));
    Module m(k);
    REQUIRE(m.status() == PLX_OK);
    REQUIRE(launch(m.kernel(), dims1(n, 128), {bd, bh, n, bins}) == PLX_OK);
    std::vector<uint32_t> want(bins, 0);
    for (uint32_t x : data)
        ++want[x % bins];
    CHECK(bh.read<uint32_t>() == want);
}

TEST_CASE("index intrinsics on a 3-D grid with rounded-up groups, for every work-item") {
    // Each work-item writes its 15 index values at its linear global position.
    const char* names[] = {"global_id_x",  "global_id_y",  "global_id_z",  "local_id_x",
                           "local_id_y",   "local_id_z",   "group_id_x",   "group_id_y",
                           "group_id_z",   "local_size_x", "local_size_y", "local_size_z",
                           "num_groups_x", "num_groups_y", "num_groups_z"};
    const char* sizes[] = {"global_size_x", "global_size_y", "global_size_z"};
    auto gx = call("global_id_x"), gy = call("global_id_y"), gz = call("global_id_z");
    auto linear = bin(B::Add, gx,
                      bin(B::Mul, call("global_size_x"),
                          bin(B::Add, gy, bin(B::Mul, call("global_size_y"), gz))));
    std::vector<ir::Stmt> body = {let("at", bin(B::Mul, linear, ir::Const::make_int(U64, 18)))};
    for (int i = 0; i < 15; ++i)
        body.push_back(store("out", bin(B::Add, var("at", U64), ir::Const::make_int(U64, i)),
                             cast(U64, call(names[i]))));
    for (int i = 0; i < 3; ++i)
        body.push_back(store("out", bin(B::Add, var("at", U64), ir::Const::make_int(U64, 15 + i)),
                             call(sizes[i])));
    const ir::Kernel k = kernel("indices", {buffer("out", U64, ir::Access::Write)}, body);
    ir::validate(k);
    const uint64_t global[3] = {5, 3, 2};
    const uint32_t local[3] = {2, 2, 2};
    const uint64_t groups[3] = {3, 2, 1}, padded[3] = {6, 4, 2};
    Buffer out(std::vector<uint64_t>(padded[0] * padded[1] * padded[2] * 18, ~0ull));
    Module m(k);
    REQUIRE(m.status() == PLX_OK);
    Dims d{3, {global[0], global[1], global[2]}, {local[0], local[1], local[2]}};
    REQUIRE(launch(m.kernel(), d, {out}) == PLX_OK);
    auto got = out.read<uint64_t>();
    for (uint64_t z = 0; z < padded[2]; ++z)
        for (uint64_t y = 0; y < padded[1]; ++y)
            for (uint64_t x = 0; x < padded[0]; ++x) {
                const uint64_t g[3] = {x, y, z};
                const uint64_t* row = &got[(x + padded[0] * (y + padded[1] * z)) * 18];
                for (int dim = 0; dim < 3; ++dim) {
                    CAPTURE(x);
                    CAPTURE(y);
                    CAPTURE(z);
                    CAPTURE(dim);
                    CHECK(row[dim] == g[dim]);
                    CHECK(row[3 + dim] == g[dim] % local[dim]);
                    CHECK(row[6 + dim] == g[dim] / local[dim]);
                    CHECK(row[9 + dim] == local[dim]);
                    CHECK(row[12 + dim] == groups[dim]);
                    CHECK(row[15 + dim] == padded[dim]);
                }
            }
}

constexpr int kTile = 16; // the transpose's tile size

TEST_CASE("transpose through a shaped shared tile: [16][16] with rows padded to 17") {
    namespace px = plexus;
    auto k =
        px::kernel("transpose", {"in", "out", "rows", "cols"},
                   [](px::In<float> in, px::Out<float> out, px::Int rows, px::Int cols) {
                       auto tile = px::shared<float>(kTile, kTile, px::Pad{1});
                       px::Int tx = px::local_id(0), ty = px::local_id(1);
                       px::Int x = px::group_id(0) * kTile + tx, y = px::group_id(1) * kTile + ty;
                       px::If(x < cols && y < rows, [&] { tile[ty][tx] = in[y * cols + x]; });
                       px::barrier();
                       // The tile is read down its columns: tx * 17 + ty, every row's pad skipped.
                       px::Int ox = px::group_id(1) * kTile + tx, oy = px::group_id(0) * kTile + ty;
                       px::If(ox < rows && oy < cols, [&] { out[oy * rows + ox] = tile[tx][ty]; });
                   });
    const nlohmann::json shared = nlohmann::json::parse(ir::to_json(k.ir()))["shared"][0];
    CHECK(shared["dims"] == nlohmann::json({kTile, kTile}));
    CHECK(shared["pad"] == 1);
    CHECK(shared["count"] == kTile * (kTile + 1));
    const int rows = 37, cols = 50;
    auto in = random_vector<float>(rows * cols, -1.f, 1.f);
    Buffer bin(in), bout(std::vector<float>(rows * cols, 0.f));
    Module m(k.ir());
    REQUIRE(m.status() == PLX_OK);
    REQUIRE(launch(m.kernel(), Dims{2, {cols, rows, 1}, {kTile, kTile, 1}},
                   {bin, bout, rows, cols}) == PLX_OK);
    const auto out = bout.read<float>();
    for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c) {
            CAPTURE(r);
            CAPTURE(c);
            REQUIRE(out[c * rows + r] == in[r * cols + c]);
        }
}

} // namespace interp_test

namespace interp_test {

// out[g] = sum of in[(g + j) % 64] over j in [0, n) (by a loop unrolled by 4) and over j in
// [0, 8) step 2 (unrolled fully), an integer sum: exact.
ir::Kernel hinted_sum_kernel() {
    auto gid = var("gid", I32), j = var("j", I32), acc = var("acc", I32);
    auto add = [&](ir::Expr i) {
        return block({assign("acc", bin(B::Add, acc, load("in", I32, bin(B::Rem, i, i32(64)))))});
    };
    return kernel("hinted_sum",
                  {buffer("in", I32), buffer("out", I32, ir::Access::Write), scalar("n", I32)},
                  {let_gid(), let("acc", i32(0)),
                   ir::For::make("j", i32(0), var("n", I32), i32(1), add(bin(B::Add, gid, j)), 4),
                   ir::For::make("j", i32(0), i32(8), i32(2), add(j), ir::For::unroll_full),
                   store("out", gid, acc)});
}

} // namespace interp_test

TEST_CASE("loop hints: read from a plexus-ir/2.1 document and ignored; refused in a /2 one") {
    using namespace interp_test;
    const ir::Kernel k = hinted_sum_kernel();
    ir::validate(k);
    const std::string text = ir::to_json(k);
    REQUIRE(nlohmann::json::parse(text)["schema"] == "plexus-ir/2.1");
    const int n = 13, items = 128; // whole groups of 32: no work-item past out
    const std::vector<int32_t> in = random_vector<int32_t>(64, -1000, 1000);
    Buffer bin_(in), bout(items * sizeof(int32_t));
    Module m(text);
    REQUIRE_MESSAGE(m.status() == PLX_OK, m.error());
    REQUIRE(launch(m.kernel("hinted_sum"), dims1(items, 32), {bin_, bout, n}) == PLX_OK);
    const std::vector<int32_t> out = bout.read<int32_t>();
    for (int g = 0; g < items; ++g) {
        int32_t want = 0;
        for (int j = 0; j < n; ++j)
            want += in[size_t((g + j) % 64)];
        for (int j = 0; j < 8; j += 2)
            want += in[size_t(j)];
        REQUIRE(out[size_t(g)] == want);
    }
    nlohmann::json doc = nlohmann::json::parse(text);
    doc["schema"] = "plexus-ir/2";
    Module old(doc.dump());
    CHECK(old.status() == PLX_ERROR_COMPILE);
    CHECK(contains(old.error(), "body.body[2].unroll: a loop hint needs schema plexus-ir/2.1"));
    doc["schema"] = "plexus-ir/2.1";
    doc["body"]["body"][3]["unroll"] = 0;
    Module zero(doc.dump());
    CHECK(zero.status() == PLX_ERROR_COMPILE);
    CHECK(contains(zero.error(), "body.body[3].unroll: expected an unroll count from 1 to 1024"));
}
