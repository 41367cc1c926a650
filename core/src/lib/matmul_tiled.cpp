// matmul_tiled: a register-blocked SGEMM in the kernel language (see plexus/lib.hpp for the
// launch): the plexus variant of px::lib::gemm_f32 and the sample of that name. The tile sizes are
// those of the classic CUDA SGEMM kernels: big enough that each value read from shared memory feeds
// 8 FMAs, small enough that the 64 accumulators, the fragments and the prefetched tile fit in
// registers with two groups per GPU multiprocessor.
#include "lib/gemm.hpp"

#include <vector>

namespace plexus::lib {

namespace px = plexus;

namespace {

// The SGEMM of one group: a BM x BN block of c (what matmul_tiled and gemm_f32 trace).
void tiled_trace(const px::In<float>& a, const px::In<float>& b, const px::Out<float>& c,
                 const px::Int& m, const px::Int& n, const px::Int& kk) {
    // A group computes a BM x BN block of c, walking k in slices of BK. Each of its
    // 256 work-items owns a TM x TN micro-tile of the block (the block is a 16 x 16
    // grid of them): per k it reads TM values of a and TN of b from shared memory and
    // does TM * TN FMAs into accumulators that stay in registers. The C++ loops below
    // run while the kernel is traced, so a step of the micro-kernel is straight-line
    // code over named accumulators; the steps of a slice are an IR loop the backends
    // unroll (px::unroll_full). The FMAs are explicit because the generators never
    // contract a * b + c.
    constexpr int BM = matmul_block, BN = matmul_block, BK = 8;
    constexpr int TM = 8, TN = 8;
    constexpr int cols = BN / TN; // work-items along a row of the block: 16
    static_assert((BM / TM) * cols == matmul_group_size);
    px::require_work_group_size(matmul_group_size);
    // The micro-tile is two 4 x 4 quads per dimension, 64 rows (columns) apart: the 4
    // values a work-item reads are contiguous (one 128-bit shared load), and the 16
    // work-items of a half warp read 16 consecutive quads of a row of b (no bank
    // conflicts).
    constexpr int Q = 4, half = BM / 2;
    auto offset = [](int i) { return i / Q * half + i % Q; }; // i-th row (column) of a tile

    // Shared memory holds two stages, so the slice for step t + 1 is written while
    // step t's is read and one barrier per step is enough. a is stored transposed
    // (as[k][m]), so a work-item's rows are contiguous too; its rows are padded by
    // 4 floats so the transposing stores below do not hit one bank twice (4, not 1,
    // keeps the quads 16-byte aligned).
    constexpr int AS = BM + 4;
    constexpr int a_stage = BK * AS, b_stage = BK * BN;
    auto as = px::shared<float>(2 * a_stage);
    auto bs = px::shared<float>(2 * b_stage);

    px::Int tid = px::local_id(0);
    px::Int tx = tid % cols; // which micro-tile column of the block
    px::Int ty = tid / cols; // which micro-tile row
    px::Int row0 = px::group_id(1) * BM;
    px::Int col0 = px::group_id(0) * BN;

    // The copy of a slice: BM x BK of a and BK x BN of b are 1024 floats each, four per
    // work-item. For a, two work-items share a row and take 4 consecutive k each (a
    // warp reads 16 rows x 32 bytes); for b, a warp reads 128 consecutive floats of
    // one row. Out-of-range elements read as 0 from clamped addresses (`select`
    // evaluates both arms), so any m, n, k works and the arithmetic needs no guard.
    px::Int a_row = row0 + tid / 2;
    px::Int a_k = (tid % 2) * Q;
    px::Bool a_row_ok = a_row < m;
    px::Int a_base = px::min(a_row, m - 1) * kk;
    px::Int b_k = tid / (BN / Q);
    px::Int b_col = col0 + (tid % (BN / Q)) * Q;
    // The values of the next slice, loaded before the arithmetic on this one so that
    // their latency hides behind it.
    std::vector<px::Float> next_a(Q), next_b(Q);
    auto fetch = [&](const px::Value<int32_t>& t) {
        for (int i = 0; i < Q; ++i) {
            px::Int ka = t * BK + a_k + i;
            next_a[i] = px::select(a_row_ok && ka < kk, a[a_base + px::min(ka, kk - 1)], 0.0f);
            px::Int kb = t * BK + b_k;
            px::Int col = b_col + i;
            next_b[i] = px::select(kb < kk && col < n,
                                   b[px::min(kb, kk - 1) * n + px::min(col, n - 1)], 0.0f);
        }
    };
    auto stash = [&](const px::Value<int32_t>& stage) {
        px::Int at = stage * a_stage + a_k * AS + tid / 2;
        px::Int bt = stage * b_stage + b_k * BN + (tid % (BN / Q)) * Q;
        for (int i = 0; i < Q; ++i) {
            as[at + i * AS] = next_a[i];
            bs[bt + i] = next_b[i];
        }
    };

    std::vector<px::Float> acc;
    for (int i = 0; i < TM * TN; ++i)
        acc.emplace_back(0.0f);
    fetch(0);
    stash(0);
    px::barrier();
    px::Int steps = (kk + BK - 1) / BK;
    px::For(0, steps, [&](px::Int t) {
        fetch(t + 1); // past the end it reads zeros, harmlessly
        px::Int stage = t % 2;
        px::Int ar = stage * a_stage + ty * Q;
        px::Int br = stage * b_stage + tx * Q;
        // The step sums into copies of the accumulators that live only inside it. A
        // CPU backend keeps the variables that live across a barrier in per-work-item
        // memory, where every FMA would load and store its accumulator; the copies
        // are registers there, and on a GPU they cost nothing. The FMAs are written in
        // the order p, i, j; the native backend computes them in 4 x 4 blocks of sums
        // so that a block's sums fit its vector registers (host::schedule_by_output).
        std::vector<px::Float> sum(acc.begin(), acc.end());
        // The slice's BK steps are one IR loop that the backends unroll: the kernel
        // stays small (a step is 80 statements) and the code the same as written out.
        px::For(
            0, BK,
            [&](px::Int p) {
                std::vector<px::Float> fa, fb;
                for (int i = 0; i < TM; ++i)
                    fa.emplace_back(as[ar + (p * AS + offset(i))]);
                for (int j = 0; j < TN; ++j)
                    fb.emplace_back(bs[br + (p * BN + offset(j))]);
                for (int i = 0; i < TM; ++i)
                    for (int j = 0; j < TN; ++j)
                        sum[i * TN + j] = px::fma(fa[i], fb[j], sum[i * TN + j]);
            },
            px::unroll_full());
        for (int i = 0; i < TM * TN; ++i)
            acc[i] = sum[i];
        stash(1 - stage);
        px::barrier();
    });

    std::vector<px::Int> col;
    for (int j = 0; j < TN; ++j)
        col.emplace_back(col0 + tx * Q + offset(j));
    for (int i = 0; i < TM; ++i) {
        px::Int row = row0 + ty * Q + offset(i);
        px::If(row < m, [&] {
            for (int j = 0; j < TN; ++j)
                px::If(col[j] < n, [&] { c[row * n + col[j]] = acc[i * TN + j]; });
        });
    }
}

} // namespace

const Kernel<In<float>, In<float>, Out<float>, Int, Int, Int>& matmul_tiled() {
    static const auto k =
        px::kernel("matmul_tiled", {"a", "b", "c", "m", "n", "k"},
                   [](px::In<float> a, px::In<float> b, px::Out<float> c, px::Int m, px::Int n,
                      px::Int kk) { tiled_trace(a, b, c, m, n, kk); });
    return k;
}

Grid matmul_tiled_grid(size_t m, size_t n) {
    const size_t blocks_x = (n + matmul_block - 1) / matmul_block;
    const size_t blocks_y = (m + matmul_block - 1) / matmul_block;
    return Grid(blocks_x * matmul_group_size, blocks_y).local_size(matmul_group_size, 1);
}

const GemmFamily<float>& gemm_f32() {
    static const auto f = detail::make_gemm<float>(
        "gemm_f32", "gemm_f32",
        {[](const Tuning&, const In<float>& a, const In<float>& b, const Out<float>& c,
            const Int& m, const Int& n, const Int& k) { tiled_trace(a, b, c, m, n, k); },
         {},
         [](const Tuning&, const FamilyContext&) { return std::string(); },
         [](const Tuning&, const FamilyContext& c) {
             return matmul_tiled_grid(size_t(c.shape.at(0)), size_t(c.shape.at(1)));
         },
         [](const FamilyContext&) { return Tuning(); }});
    return f;
}

} // namespace plexus::lib
