// matmul_f16 / matmul_bf16 / matmul_tf32: GEMMs on the matrix units, any m, n, k, as kernel
// families of px::lib (plexus/lib.hpp), and the plexus side of the gemm_f16 / bf16 / tf32
// families. f16 and bf16 with k and n multiples of 8 run on warpgroup accumulators (wgmma on
// sm_90, warpgroup_block), with n alone a multiple of 8 the same with a loaded through
// registers, every other case on m16 fragments (fragment_blocks).
#include "lib/gemm.hpp"

#include "plexus/async_copy.hpp"
#include "plexus/matrix.hpp"
#include "plexus/subgroup.hpp"

#include <functional>
#include <memory>
#include <vector>

namespace plexus::lib {

namespace {

namespace px = plexus;

template <class T> const char* mma_name() {
    if constexpr (std::same_as<T, px::half>)
        return "matmul_f16";
    else if constexpr (std::same_as<T, px::bf16>)
        return "matmul_bf16";
    else
        return "matmul_tf32";
}

// The m16 fragment GEMM of `blocks` 128 x 128 blocks of c side by side, from column
// group_id(0) * 128 * blocks on, in a group of 8 subgroups: each subgroup a 64 x 32 part of a
// block, as 4 x 2 accumulator fragments of 16 x 16 that stay in registers (tensor-core registers
// on CUDA) while the group walks k in slices of 32. Each slice of a and b is copied into
// shared memory with zeros past the edges, so any m, n, k works and every fragment load is
// aligned. Groups of 256 (NVIDIA) load the next slice into registers while the tensor cores
// work on this one. The results go out through shared memory too, one fragment per subgroup
// at a time, with the edge guards.
template <class T>
void fragment_blocks(const px::In<T>& a, const px::In<T>& b, const px::Out<float>& c,
                     const px::Int& m, const px::Int& n, const px::Int& kk, int blocks, bool wide) {
    constexpr int BM = mma_block, BN = mma_block, BK = 32;
    constexpr int K = std::same_as<T, float> ? 8 : 16; // the fragment's k
    constexpr int WM = 64, WN = 32;                    // a subgroup's part of the block
    constexpr int FM = WM / 16, FN = WN / 16;          // its fragments: 4 x 2
    static_assert((BM / WM) * (BN / WN) == mma_subgroups);
    // Rows padded by 16 bytes: fragment loads of consecutive rows then start in
    // different banks, and every row stays 16-byte aligned (what wmma asks).
    constexpr uint32_t pad = 16 / sizeof(T);
    auto as = px::shared<T>(BM, BK, px::Pad{pad});
    auto bs = px::shared<T>(BK, BN, px::Pad{pad});
    auto cs = px::shared<float>(mma_subgroups * 16, 16, px::Pad{4});

    px::Int tid = px::local_id(1) * px::local_size(0) + px::local_id(0);
    px::Int items = px::local_size(0) * px::local_size(1);
    px::Int sg = px::subgroup_id();
    px::Int wm = sg / (BN / WN) * WM; // the subgroup's part: rows wm.., columns wn..
    px::Int wn = sg % (BN / WN) * WN;
    px::Int row0 = px::group_id(1) * BM; // groups: x along n, y along m
    px::Var<int32_t> col0 = px::group_id(0) * (BN * blocks);

    std::vector<std::unique_ptr<px::Fragment<float, 16, 16, K, px::Accumulator>>> acc;
    for (int i = 0; i < FM * FN; ++i)
        acc.push_back(std::make_unique<px::Fragment<float, 16, 16, K, px::Accumulator>>());
    px::Fragment<T, 16, 16, K, px::MatrixA> fa[FM];
    px::Fragment<T, 16, 16, K, px::MatrixB> fb[FN];

    // The blocks of c this group computes, one after the other: `blocks` side by side.
    auto block = [&] {
        for (auto& f : acc)
            px::fill_fragment(*f, 0.0f);
        px::Int slices = (kk + BK - 1) / BK;
        // The tensor-core work on the slice in as and bs.
        // The k-steps are a loop GPUs unroll (the host keeps it: each emulated operation is
        // a loop of its own there).
        auto compute = [&] {
            px::For(
                0, BK / K,
                [&](px::Int step) {
                    px::Int p = step * K;
                    for (int i = 0; i < FM; ++i)
                        px::load_fragment(fa[i], as, wm + 16 * i, p);
                    for (int j = 0; j < FN; ++j)
                        px::load_fragment(fb[j], bs, p, wn + 16 * j);
                    for (int i = 0; i < FM; ++i)
                        for (int j = 0; j < FN; ++j)
                            px::mma(*acc[i * FN + j], fa[i], fb[j]);
                },
                px::unroll_full());
        };
        // a[gr][gk] and b[gk][gc], or 0 outside the matrices, read from clamped addresses.
        const px::Value<T> zero(T(0.0f));
        auto a_at = [&](const px::Int& gr, const px::Int& gk) {
            return px::select(gr < m && gk < kk, a[px::min(gr, m - 1) * kk + px::min(gk, kk - 1)],
                              zero);
        };
        auto b_at = [&](const px::Int& gk, const px::Int& gc) {
            return px::select(gk < kk && gc < n, b[px::min(gk, kk - 1) * n + px::min(gc, n - 1)],
                              zero);
        };

        // Groups of 256 work-items (8 subgroups of 32: NVIDIA GPUs) copy with a fixed
        // number of elements per work-item, in loops the backends unroll: the next
        // slice is loaded into registers while the tensor cores work on this one, and a
        // block inside the matrices loads without guards. Elements are consecutive along
        // the rows of a and b across consecutive work-items.
        constexpr int G = 256, EA = BM * BK / G, EB = BK * BN / G;
        auto register_copies = [&] {
            if (wide) {
                px::Int ar = tid / BK, ac = tid % BK, br = tid / BN, bc = tid % BN;
                // The next slice's elements in per-work-item arrays, indexed by loops the
                // backends unroll: registers, as if each element were its own variable.
                auto ra = px::private_array<T>(EA);
                auto rb = px::private_array<T>(EB);
                px::Bool inside = row0 + BM <= m && col0 + BN <= n;
                auto each = [&](int count, const std::function<void(const px::Int&)>& body) {
                    px::For(0, count, [&](px::Int j) { body(j); }, px::unroll_full());
                };
                auto fetch = [&](const px::Value<int32_t>& k0) {
                    px::If(inside && k0 + BK <= kk, [&] {
                        each(EA, [&](const px::Int& j) {
                            ra[j] = a[(row0 + ar + j * (G / BK)) * kk + k0 + ac];
                        });
                        each(EB, [&](const px::Int& j) {
                            rb[j] = b[(k0 + br + j * (G / BN)) * n + col0 + bc];
                        });
                    }).Else([&] { // an edge block, or past the last slice: zeros outside
                        each(EA, [&](const px::Int& j) {
                            ra[j] = a_at(row0 + ar + j * (G / BK), k0 + ac);
                        });
                        each(EB, [&](const px::Int& j) {
                            rb[j] = b_at(k0 + br + j * (G / BN), col0 + bc);
                        });
                    });
                };
                auto stash = [&] {
                    each(EA, [&](const px::Int& j) { as[ar + j * (G / BK)][ac] = ra[j]; });
                    each(EB, [&](const px::Int& j) { bs[br + j * (G / BN)][bc] = rb[j]; });
                };
                px::If(0 < slices, [&] { fetch(0); }); // k = 0 reads nothing
                stash();
                px::barrier();
                px::For(0, slices, [&](px::Int t) {
                    fetch((t + 1) * BK);
                    compute();
                    px::barrier();
                    stash();
                    px::barrier();
                });
            } else {
                // Any other group size: a loop over the slice's elements, guarded.
                px::For(0, slices, [&](px::Int t) {
                    px::Int k0 = t * BK;
                    px::For(tid, BM * BK, items, [&](px::Int e) {
                        px::Int r = e / BK, col = e % BK;
                        px::Int gr = row0 + r, gk = k0 + col;
                        as[r][col] = a_at(gr, gk);
                    });
                    px::For(tid, BK * BN, items, [&](px::Int e) {
                        px::Int r = e / BN, col = e % BN;
                        px::Int gk = k0 + r, gc = col0 + col;
                        bs[r][col] = b_at(gk, gc);
                    });
                    px::barrier();
                    compute();
                    px::barrier();
                });
            }
        };

        register_copies();

        // Out through shared memory: each subgroup stores one fragment into its own 16 x 16
        // tile of cs, then the whole group copies the 8 tiles to c, guarded.
        for (int f = 0; f < FM * FN; ++f) {
            px::store_fragment(*acc[f], cs, sg * 16, 0);
            px::barrier();
            px::For(tid, mma_subgroups * 256, items, [&](px::Int e) {
                px::Int s = e / 256, r = e % 256 / 16, col = e % 16;
                px::Int gr = row0 + s / (BN / WN) * WM + 16 * (f / FN) + r;
                px::Int gc = col0 + s % (BN / WN) * WN + 16 * (f % FN) + col;
                px::If(gr < m && gc < n, [&] { c[gr * n + gc] = cs[s * 16 + r][col]; });
            });
            px::barrier();
        }
    };
    if (blocks == 1)
        block();
    else
        px::For(0, blocks, [&](px::Int) {
            block();
            col0 = col0 + BN;
        });
}

// A group of two warpgroups (8 subgroups) computes a 128 x 256 block of c, each warpgroup 64 x
// 256 in one warpgroup accumulator (wgmma on sm_90). Slices of 64 of k go into four stages of
// swizzled shared arrays, zeros past the edges, and the multiply of slice t is left in flight
// while slice t + 1 arrives. How a slice arrives: matmul_f16 / bf16 (k and n multiples of 8,
// rows of a and b on 16 bytes) by px::copy_async, two slices ahead; matmul_f16_rows / bf16_rows
// (`a_rows`: any k) a by registers one slice ahead (groups of 256: 32 elements a work-item) and
// b by px::copy_async where n is a multiple of 8, else each slice by guarded loops, waited for.
// The two are separate kernels: the registers a needs cost the copy_async path 0.70 -> 0.56
// of cuBLAS at 8192^3 when both were in one kernel (docs/benchmarks.md).
template <class T>
void warpgroup_block(const px::In<T>& a, const px::In<T>& b, const px::Out<float>& c,
                     const px::Int& m, const px::Int& n, const px::Int& kk, bool a_rows, bool wide,
                     int S) {
    constexpr int BM = mma_block, BN = 2 * mma_block, BK = 64, V = 8, G = 256, EA = BM * BK / G;
    auto as = px::shared<T>(S * BM, BK, px::Swizzle128{});
    auto bs = px::shared<T>(S * BK, BN, px::Swizzle128{});
    px::Fragment<float, 64, BN, 16, px::Accumulator> acc;
    px::fill_fragment(acc, 0.0f);

    px::Int tid = px::local_id(1) * px::local_size(0) + px::local_id(0);
    auto items = [] { return px::Int(px::local_size(0) * px::local_size(1)); }; // loops only
    px::Int rows = px::subgroup_id() / 4 * 64; // the warpgroup's rows of the block
    px::Int row0 = px::group_id(1) * BM, col0 = px::group_id(0) * BN;
    px::Int slices = (kk + BK - 1) / BK;
    // a[gr][gk] and b[gk][gc], or 0 outside the matrices, read from clamped addresses.
    const px::Value<T> zero(T(0.0f));
    auto a_at = [&](const px::Int& gr, const px::Int& gk) {
        return px::select(gr < m && gk < kk, a[px::min(gr, m - 1) * kk + px::min(gk, kk - 1)],
                          zero);
    };
    auto b_at = [&](const px::Int& gk, const px::Int& gc) {
        return px::select(gk < kk && gc < n, b[px::min(gk, kk - 1) * n + px::min(gc, n - 1)], zero);
    };
    // Slice t of a or b into stage `stage`, in copies of 8 elements; past the edges they read
    // nothing and write zeros.
    // body(r, col) for each chunk of 8 elements of a rows x (per_row * 8) tile: groups of 256
    // take a fixed count a work-item, in a loop the backends unroll (its rows 256 / per_row
    // apart, so the swizzle's row bits are the same for all), other groups loop.
    auto chunks = [&](int count, int per_row,
                      const std::function<void(const px::Int&, const px::Int&)>& body) {
        if (wide) {
            px::Int r0 = tid / per_row, col = tid % per_row * V;
            px::For(
                0, count / G, [&](px::Int j) { body(r0 + j * (G / per_row), col); },
                px::unroll_full());
        } else {
            px::For(tid, count, items(), [&](px::Int e) { body(e / per_row, e % per_row * V); });
        }
    };
    auto copy_a = [&](const px::Value<int32_t>& t, const px::Value<int32_t>& stage) {
        chunks(BM * BK / V, BK / V, [&](const px::Int& r, const px::Int& col) {
            px::Int gr = row0 + r, gk = t * BK + col;
            px::Int valid = px::select(gr < m && gk < kk, px::Int(V), px::Int(0));
            px::copy_async<V>(as, stage * BM + r, col, a, px::select(valid > 0, gr * kk + gk, 0),
                              valid);
        });
    };
    auto copy_b = [&](const px::Value<int32_t>& t, const px::Value<int32_t>& stage) {
        chunks(BK * BN / V, BN / V, [&](const px::Int& r, const px::Int& col) {
            px::Int gk = t * BK + r, gc = col0 + col;
            px::Int valid = px::select(gk < kk && gc < n, px::Int(V), px::Int(0));
            px::copy_async<V>(bs, stage * BK + r, col, b, px::select(valid > 0, gk * n + gc, 0),
                              valid);
        });
    };
    // The multiply of the slice in `stage`, left in flight: the stages it and the one before
    // read are refilled only after later barriers.
    auto multiply = [&](const px::Value<int32_t>& stage) {
        px::mma_shared<BK>(acc, as, stage * BM + rows, 0, bs, stage * BK, 0, 1);
    };
    // Two slices ahead of the multiply, by copy_async (`with_a`: a too).
    auto pipeline = [&](bool with_a, const std::function<void(const px::Int&)>& before) {
        for (int p = 0; p + 2 < S; ++p) {
            px::If(p < slices, [&] {
                if (with_a) copy_a(p, p);
                copy_b(p, p);
            });
            px::copy_async_commit();
        }
        px::For(0, slices, [&](px::Int t) {
            before(t);
            px::copy_async_wait(S - 3); // this work-item's copies of slice t are in
            px::barrier(); // and everyone's; every warpgroup is done reading slice t - 2
            px::If(t + S - 2 < slices, [&] {
                if (with_a) copy_a(t + S - 2, (t + S - 2) % S);
                copy_b(t + S - 2, (t + S - 2) % S);
            });
            px::copy_async_commit();
            multiply(t % S);
        });
    };
    if (!a_rows) {
        pipeline(true, [](const px::Int&) {});
    } else if (wide) {
        // a by registers: slice t + 1's elements are loaded while slice t is multiplied, and
        // stored into their stage at the start of the next step (the multiply that read that
        // stage last, t - 4, is done). Straight-line code, as the C++ loops trace: with the
        // stores, or the loads and the stores, as IR loops over a private array (87 and 27 KB
        // of JSON instead of 198), it ran 8 % slower on the H200 (0.568 - 0.571 ms against
        // 0.494 - 0.529 at 4096 x 3584 x 4099), and with the column's bound and clamp said
        // once per slice (150 KB) 7 % slower.
        px::Int ar = tid / BK, ac = tid % BK;
        std::vector<px::Var<T>> ra(EA);
        auto fetch = [&](const px::Value<int32_t>& t) {
            for (int j = 0; j < EA; ++j)
                ra[j] = a_at(row0 + ar + j * (G / BK), t * BK + ac);
        };
        px::If(0 < slices, [&] { fetch(0); }); // k = 0 reads nothing
        pipeline(false, [&](const px::Int& t) {
            for (int j = 0; j < EA; ++j)
                as[t % S * BM + ar + j * (G / BK)][ac] = ra[j];
            px::If(t + 1 < slices, [&] { fetch(t + 1); });
        });
    } else {
        // Any group size: each slice by guarded loops, waited for.
        px::For(0, slices, [&](px::Int t) {
            px::For(tid, BM * BK, items(),
                    [&](px::Int e) { as[e / BK][e % BK] = a_at(row0 + e / BK, t * BK + e % BK); });
            px::For(tid, BK * BN, items(),
                    [&](px::Int e) { bs[e / BN][e % BN] = b_at(t * BK + e / BN, col0 + e % BN); });
            px::barrier();
            px::mma_shared<BK>(acc, as, rows, 0, bs, 0, 0);
            px::barrier();
        });
    }
    px::store_fragment(acc, c, (row0 + rows) * n + col0, n, m - row0 - rows, n - col0);
}

// The family of matmul_f16 / matmul_bf16 (tuning parameters `path`, `wide`, `stages`,
// `blocks`) and of matmul_tf32 (`wide`, `blocks`): see mma_space() and mma_check().
//  path 0: warpgroup_block, a and b by copy_async (k and n multiples of 8);
//  path 1: warpgroup_block, a by registers (n a multiple of 8);
//  path 2: fragment_blocks on `blocks` 128 x 128 blocks side by side;
//  wide 1: groups of 256 (8 subgroups of 32: NVIDIA GPUs) copy with a fixed count per
//          work-item; wide 0: any group size, by loops;
//  stages: the warpgroup paths' shared-memory stages (4: 192 KiB of f16, 3: 144 KiB).
// The grid of an m x n c in blocks of 128 x (128 * blocks): a group is 8 rows of the device's
// subgroup width (32 on NVIDIA GPUs, 1 on the host), 8 subgroups where subgroups are
// consecutive work-items, and where they are rows of the group's x dimension (PoCL) as well.
Grid mma_grid(uint32_t width, size_t m, size_t n, size_t blocks) {
    const size_t block_n = blocks * mma_block;
    const size_t blocks_x = (n + block_n - 1) / block_n;
    const size_t blocks_y = (m + mma_block - 1) / mma_block;
    return Grid(blocks_x * width, blocks_y * mma_subgroups).local_size(width, mma_subgroups);
}

template <class T>
void mma_trace(const px::Tuning& v, const px::In<T>& a, const px::In<T>& b, const px::Out<float>& c,
               const px::Int& m, const px::Int& n, const px::Int& kk) {
    const bool wide = v["wide"] == 1;
    // 8 subgroups of at most 32 work-items (32 on NVIDIA GPUs, 1 on the host): two
    // warpgroups. A device whose subgroups are wider refuses the launch, naming it.
    if (wide)
        px::require_work_group_size(32, mma_subgroups);
    else
        px::max_work_group_size(mma_subgroups * 32);
    if constexpr (sizeof(T) == 4) {
        fragment_blocks<T>(a, b, c, m, n, kk, int(v["blocks"]), wide);
    } else {
        const int64_t path = v["path"];
        if (path == 2)
            fragment_blocks<T>(a, b, c, m, n, kk, int(v["blocks"]), wide);
        else
            warpgroup_block<T>(a, b, c, m, n, kk, path == 1, wide, int(v["stages"]));
    }
}

template <class T> std::vector<std::pair<std::string, std::vector<int64_t>>> mma_space() {
    if constexpr (sizeof(T) == 4)
        return {{"wide", {1, 0}}, {"blocks", {1, 2}}};
    else
        return {{"path", {0, 1, 2}}, {"wide", {1, 0}}, {"stages", {4, 3}}, {"blocks", {1, 2}}};
}

template <class T> std::string mma_check(const px::Tuning& v, const px::FamilyContext& c) {
    const int64_t path = sizeof(T) == 4 ? 2 : v["path"];
    const int64_t n = c.shape.at(1), k = c.shape.at(2);
    if (sizeof(T) != 4) {
        if (path == 0 && (k % 8 || n % 8))
            return "path 0 (copy_async) needs k and n multiples of 8";
        if (path == 1 && n % 8) return "path 1 (b by copy_async) needs n a multiple of 8";
        if (path < 2 && v["blocks"] != 1) return "blocks applies to path 2 only";
        if (path == 2 && v["stages"] != 4) return "stages applies to paths 0 and 1 only";
    }
    if (v["wide"] == 1 && c.device.subgroup_size != 32)
        return "wide 1 needs subgroups of 32 (the device's are " +
               std::to_string(c.device.subgroup_size) + ")";
    return "";
}

template <class T> Grid mma_grid_of(const px::Tuning& v, const px::FamilyContext& c) {
    const bool warpgroup = sizeof(T) != 4 && v["path"] < 2;
    return mma_grid(c.device.subgroup_size, size_t(c.shape.at(0)), size_t(c.shape.at(1)),
                    warpgroup ? 2 : size_t(v["blocks"]));
}

// Where matrix operations are emulated (a CPU, PoCL) accumulators are arrays in memory, and
// the m16 fragments run much faster there than the warpgroup paths' 64 x 256 tiles
// (docs/benchmarks.md, "What the figures taught").
template <class T> px::Tuning mma_heuristic(const px::FamilyContext& c) {
    const bool emulated = !c.device.matrix_ops || (*c.device.matrix_ops & PLX_MATRIX_EMULATED) != 0;
    const int64_t n = c.shape.at(1), k = c.shape.at(2);
    const int64_t wide = c.device.subgroup_size == 32 ? 1 : 0;
    if constexpr (sizeof(T) == 4) {
        return px::Tuning{{"wide", wide}, {"blocks", 1}};
    } else {
        const int64_t path = emulated ? 2 : k % 8 == 0 && n % 8 == 0 ? 0 : n % 8 == 0 ? 1 : 2;
        return px::Tuning{
            {"path", path}, {"wide", wide}, {"stages", 4}, {"blocks", path == 2 ? 2 : 1}};
    }
}

template <class T> MmaFamily<T> make_matmul_mma() {
    auto f =
        px::family(mma_name<T>(), {"a", "b", "c", "m", "n", "k"},
                   [](const px::Tuning& v, px::In<T> a, px::In<T> b, px::Out<float> c, px::Int m,
                      px::Int n, px::Int kk) { mma_trace<T>(v, a, b, c, m, n, kk); });
    for (const auto& [param, values] : mma_space<T>())
        f.tune(param, values);
    f.check(mma_check<T>);
    f.grid(mma_grid_of<T>);
    f.heuristic(mma_heuristic<T>);
    return f;
}

template <class T> GemmFamily<T> make_gemm_mma(const char* name, const char* routine) {
    return detail::make_gemm<T>(
        name, routine,
        {mma_trace<T>, mma_space<T>(), mma_check<T>, mma_grid_of<T>, mma_heuristic<T>});
}

} // namespace

const MmaFamily<half>& matmul_f16() {
    static const auto f = make_matmul_mma<half>();
    return f;
}
const MmaFamily<bf16>& matmul_bf16() {
    static const auto f = make_matmul_mma<bf16>();
    return f;
}
const MmaFamily<float>& matmul_tf32() {
    static const auto f = make_matmul_mma<float>();
    return f;
}
const GemmFamily<half>& gemm_f16() {
    static const auto f = make_gemm_mma<half>("gemm_f16", "gemm_f16");
    return f;
}
const GemmFamily<bf16>& gemm_bf16() {
    static const auto f = make_gemm_mma<bf16>("gemm_bf16", "gemm_bf16");
    return f;
}
const GemmFamily<float>& gemm_tf32() {
    static const auto f = make_gemm_mma<float>("gemm_tf32", "gemm_tf32");
    return f;
}

template <class T> const ir::Kernel& mma_portable(const MmaFamily<T>& family) {
    const Tuning v = sizeof(T) == 4
                         ? Tuning{{"wide", 0}, {"blocks", 2}}
                         : Tuning{{"path", 2}, {"wide", 0}, {"stages", 4}, {"blocks", 2}};
    return *family.def().kernel(v);
}
template const ir::Kernel& mma_portable(const MmaFamily<half>&);
template const ir::Kernel& mma_portable(const MmaFamily<bf16>&);
template const ir::Kernel& mma_portable(const MmaFamily<float>&);

} // namespace plexus::lib
