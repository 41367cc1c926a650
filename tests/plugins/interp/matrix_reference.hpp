// What the matrix-fragment tests share: a kernel that computes d = a x b + c with one tile per
// subgroup in global memory, random inputs, and the host reference of docs/ir.md (the core's
// lower_matrix): per element, from c, the f32 products added in the order kk = 0 .. K-1, each
// sum rounded to f32 (these tests build with -ffp-contract=off), rounded once to the
// accumulator's type.
#pragma once

#include <plexus/half.hpp>
#include <plexus/plexus.hpp>

#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace matrix_test {

namespace px = plexus;

// Groups of 24 work-items: 3 subgroups of 8 on the interpreter, each its own tile.
constexpr int kGroups = 3, kLocal = 24, kTiles = kGroups * kLocal / 8;

// Elements from one row (column) to the next: 48 bytes for 2-byte types, 80 for f32, so
// neither equals the tile's width and every stride is a multiple of 16 bytes.
template <class T> constexpr int leading() {
    return sizeof(T) == 2 ? 24 : 20;
}

// d = a x b + c, tile t < tiles of each at t * 16 * ld: A and B in their declared layouts,
// the accumulator loaded in LC and stored in LD. The tile index is uniform over each subgroup,
// and numbers the subgroups of the launch whatever their width (8 on the interpreter, 1 on
// the host backend: there the first kTiles work-items compute the tiles).
template <class TA, class TC, uint32_t K, class LA, class LB, class LC, class LD>
auto global_kernel(const std::string& name) {
    return px::kernel(name, {"a", "b", "c", "d", "lda", "ldc", "tiles"},
                      [](px::In<TA> a, px::In<TA> b, px::In<TC> c, px::Out<TC> d, px::Int lda,
                         px::Int ldc, px::Int tiles) {
                          px::Fragment<TA, 16, 16, K, px::MatrixA, LA> fa;
                          px::Fragment<TA, 16, 16, K, px::MatrixB, LB> fb;
                          px::Fragment<TC, 16, 16, K, px::Accumulator> acc;
                          px::Int per_group =
                              (px::local_size(0) + px::subgroup_size() - 1) / px::subgroup_size();
                          px::Int t = px::group_id(0) * per_group + px::subgroup_id();
                          px::If(t < tiles, [&] {
                              px::load_fragment(fa, a, t * 16 * lda, lda);
                              px::load_fragment(fb, b, t * 16 * lda, lda);
                              px::load_fragment(acc, c, t * 16 * ldc, ldc, LC{});
                              px::mma(acc, fa, fb);
                              px::store_fragment(acc, d, t * 16 * ldc, ldc, LD{});
                          });
                      });
}

template <class T> std::vector<T> random_numbers(size_t n, std::mt19937_64& g) {
    std::uniform_real_distribution<float> d(-2.f, 2.f); // every f32 bit: tf32 inputs use them all
    std::vector<T> out;
    for (size_t i = 0; i < n; ++i)
        out.push_back(T(d(g))); // f16 / bf16 round
    return out;
}

// Element (r, c) of the tile at `base`, rows (col: columns) `ld` apart.
template <class T>
float tile_at(const std::vector<T>& v, size_t base, int ld, bool col, int r, int c) {
    return float(v[base + size_t(col ? c * ld + r : r * ld + c)]);
}

template <class TC, class A, class B, class C>
TC reference(int K, A&& a, B&& b, C&& c, int i, int j) {
    float sum = c(i, j);
    for (int kk = 0; kk < K; ++kk)
        sum = sum + a(i, kk) * b(kk, j);
    return TC(sum);
}

// global_kernel's inputs, and its whole output d: the tiles computed, the rest d0 unchanged.
template <class TA, class TC> struct Problem {
    int lda = leading<TA>(), ldc = leading<TC>();
    std::vector<TA> a, b;
    std::vector<TC> c, d0, want;
};
template <class TA, class TC, uint32_t K, class LA, class LB, class LC, class LD>
Problem<TA, TC> make_problem(std::mt19937_64& g) {
    constexpr bool a_col = std::same_as<LA, px::ColMajor>, b_col = std::same_as<LB, px::ColMajor>;
    constexpr bool c_col = std::same_as<LC, px::ColMajor>, d_col = std::same_as<LD, px::ColMajor>;
    Problem<TA, TC> p;
    const size_t tile_a = size_t(16 * p.lda), tile_c = size_t(16 * p.ldc);
    p.a = random_numbers<TA>(kTiles * tile_a, g), p.b = random_numbers<TA>(kTiles * tile_a, g);
    p.c = random_numbers<TC>(kTiles * tile_c, g), p.d0 = random_numbers<TC>(kTiles * tile_c, g);
    p.want = p.d0;
    for (size_t t = 0; t < size_t(kTiles); ++t)
        for (int i = 0; i < 16; ++i)
            for (int j = 0; j < 16; ++j)
                p.want[t * tile_c + size_t(d_col ? j * p.ldc + i : i * p.ldc + j)] = reference<TC>(
                    int(K),
                    [&](int r, int kk) { return tile_at(p.a, t * tile_a, p.lda, a_col, r, kk); },
                    [&](int kk, int cc) { return tile_at(p.b, t * tile_a, p.lda, b_col, kk, cc); },
                    [&](int r, int cc) { return tile_at(p.c, t * tile_c, p.ldc, c_col, r, cc); }, i,
                    j);
    return p;
}

// How many elements differ in their bits; `first` then names the first of them.
template <class T>
size_t mismatches(const std::vector<T>& got, const std::vector<T>& want, std::string& first) {
    if (got.size() != want.size()) {
        first = "got " + std::to_string(got.size()) + " elements, expected " +
                std::to_string(want.size());
        return 1;
    }
    size_t bad = 0;
    for (size_t i = 0; i < got.size(); ++i)
        if (std::memcmp(&got[i], &want[i], sizeof(T)) != 0 && bad++ == 0) {
            char text[96];
            std::snprintf(text, sizeof text, "[%zu] is %a, expected %a", i, double(float(got[i])),
                          double(float(want[i])));
            first = text;
        }
    return bad;
}

} // namespace matrix_test
