// Matrix fragments of the kernel language: tiles of a matrix held jointly by the work-items
// of one subgroup, multiplied and accumulated by the device's matrix units (tensor cores on
// CUDA) or, where a device has none, by plain arithmetic with the same results
// (docs/kernel-language.md, "Matrix fragments"). Every operation is collective: the whole
// subgroup reaches it with the same operands, which the validator checks like a subgroup
// operation.
//
//   px::Fragment<px::half, 16, 16, 16, px::MatrixA> a;            // A: 16 x 16, row-major loads
//   px::Fragment<px::half, 16, 16, 16, px::MatrixB, px::ColMajor> b;
//   px::Fragment<float, 16, 16, 16, px::Accumulator> acc;
//   px::fill_fragment(acc, 0.0f);
//   px::load_fragment(a, tile_a, row, col);       // a 2-D shared array: the tile at [row][col]
//   px::load_fragment(b, B, index, ld);           // a buffer: element index, ld elements per
//   column px::mma(acc, a, b);                           // acc = a x b + acc
//   px::store_fragment(acc, C, index, ldc);       // row-major (px::ColMajor{} to transpose)
#pragma once

#include "plexus/kernel.hpp"

#include <string>

namespace plexus {

struct MatrixA {};
struct MatrixB {};
struct Accumulator {};
struct RowMajor {};
struct ColMajor {};

namespace detail {
std::string declare_fragment(ir::FragmentDecl f);

template <class U> constexpr ir::MatrixUse matrix_use() {
    if constexpr (std::same_as<U, MatrixA>)
        return ir::MatrixUse::A;
    else if constexpr (std::same_as<U, MatrixB>)
        return ir::MatrixUse::B;
    else
        return ir::MatrixUse::Acc;
}
template <class L> constexpr ir::MatrixLayout matrix_layout() {
    return std::same_as<L, ColMajor> ? ir::MatrixLayout::Col : ir::MatrixLayout::Row;
}
// The shapes and types some device runs (ir::FragmentDecl::check says the same at run time).
template <class T, uint32_t M, uint32_t N, uint32_t K, class Use>
constexpr bool fragment_supported() {
    if constexpr (M == 64) // a warpgroup accumulator
        return std::same_as<Use, Accumulator> && std::same_as<T, float> && K == 16 && N % 64 == 0 &&
               N && N <= 256;
    constexpr bool k16 = M == 16 && N == 16 && K == 16, k8 = M == 16 && N == 16 && K == 8;
    if constexpr (std::same_as<Use, Accumulator>)
        return std::same_as<T, float> ? (k16 || k8) : (std::same_as<T, half> && k16);
    else
        return k16 ? (std::same_as<T, half> || std::same_as<T, bf16>)
                   : (k8 && std::same_as<T, float>);
}
} // namespace detail

// A fragment of a matrix: an A operand (M x K), a B operand (K x N) or an accumulator (M x N).
// A and B declare the layout their loads read (RowMajor: consecutive elements of a row are
// consecutive in memory); an accumulator's loads and stores name it. A and B of float hold
// tf32 values (m16n16k8): a device with tf32 units rounds them to 10 mantissa bits, one
// without keeps all 23.
template <class T, uint32_t M, uint32_t N, uint32_t K, class Use, class Layout = RowMajor>
class Fragment {
    static_assert(std::same_as<Use, MatrixA> || std::same_as<Use, MatrixB> ||
                      std::same_as<Use, Accumulator>,
                  "a fragment's use is px::MatrixA, px::MatrixB or px::Accumulator");
    static_assert(std::same_as<Layout, RowMajor> || std::same_as<Layout, ColMajor>,
                  "a fragment's layout is px::RowMajor or px::ColMajor");
    static_assert(!std::same_as<Use, Accumulator> || std::same_as<Layout, RowMajor>,
                  "an accumulator has no layout of its own: px::load_fragment and "
                  "px::store_fragment name one");
    static_assert(
        detail::fragment_supported<T, M, N, K, Use>(),
        "fragments are m16n16k16 with half or bf16 A and B and a float (or, for half, a half) "
        "accumulator, m16n16k8 with float (tf32) A and B and a float accumulator, or m64nNk16 "
        "float accumulators (N 64, 128, 192 or 256) held by a warpgroup");

public:
    using element = T;
    static constexpr uint32_t m = M, n = N, k = K;
    static constexpr bool is_accumulator = std::same_as<Use, Accumulator>;
    static constexpr bool is_warpgroup = M == 64;
    static constexpr ir::MatrixLayout layout = detail::matrix_layout<Layout>();

    Fragment() {
        ir::FragmentDecl d;
        d.use = detail::matrix_use<Use>();
        d.m = M, d.n = N, d.k = K;
        d.type = scalar_v<T>;
        d.layout = detail::matrix_layout<Layout>();
        name_ = detail::declare_fragment(d);
    }
    Fragment(const Fragment&) = delete; // a fragment is a place, like a shared array
    Fragment& operator=(const Fragment&) = delete;
    const std::string& name() const { return name_; }

private:
    std::string name_;
};

namespace detail {
// The layout of a load or store: an accumulator's is the one named there, A's and B's the
// declared one.
template <class F, class L> ir::MatrixLayout access_layout() {
    static_assert(
        F::is_accumulator || std::same_as<L, RowMajor>,
        "A and B fragments load in the layout they declare; only accumulators name one here");
    if constexpr (F::is_accumulator)
        return matrix_layout<L>();
    else
        return F::layout;
}
template <class F, class M> constexpr void check_memory() {
    static_assert(std::same_as<typename F::element, typename M::element>,
                  "a fragment loads from and stores to memory of its own element type");
}
inline void emit_matrix(ir::Stmt s) {
    Tracer::current().emit(std::move(s));
}
} // namespace detail

// Every element of the fragment = value (converted to the fragment's type).
template <class T, uint32_t M, uint32_t N, uint32_t K, class U, class L, class V>
    requires(IsValue<V> || Literal<V>)
void fill_fragment(const Fragment<T, M, N, K, U, L>& f, const V& value) {
    ir::Expr v;
    if constexpr (IsValue<V>)
        v = value.expr();
    else
        v = detail::lift<T>(value).expr();
    detail::emit_matrix(ir::Matrix::fill(f.name(), v));
}

namespace detail {
// A Load or Store of fragment f at mem[index], rows (or columns) `stride` elements apart.
template <class F, class Mem, class Layout>
void fragment_memory(ir::MatrixOp op, const F& f, const Mem& mem, const ir::Expr& index,
                     const ir::Expr& stride) {
    check_memory<F, Mem>();
    ir::Space space = ir::Space::Global;
    if constexpr (requires { mem.space(); }) space = mem.space();
    auto make = op == ir::MatrixOp::Load ? &ir::Matrix::load : &ir::Matrix::store;
    emit_matrix(make(f.name(), mem.name(), space, index, stride, access_layout<F, Layout>()));
}
// The flat index of tile[row][col] in a 2-D shared array, as i64.
template <class T, class R, class C>
ir::Expr tile_index(const LocalArray<T, 2>& tile, const R& row, const C& col) {
    return ir::Cast::make(ir::Scalar::I64, tile.index_of(index_expr(row), index_expr(col)));
}
} // namespace detail

// Loads the tile whose first element is src[index], rows (or, column-major, columns) `stride`
// elements apart, from a buffer or a 1-D shared array.
template <class F, class Src, IndexLike I, IndexLike S, class Layout = RowMajor>
    requires requires(const Src& s) { s.name(); }
void load_fragment(const F& f, const Src& src, const I& index, const S& stride, Layout = {}) {
    detail::fragment_memory<F, Src, Layout>(ir::MatrixOp::Load, f, src, detail::index_expr(index),
                                            detail::index_expr(stride));
}
// Loads the tile at tile[row][col] of a 2-D shared array (rows one row pitch apart).
template <class F, class T, IndexLike R, IndexLike C, class Layout = RowMajor>
void load_fragment(const F& f, const LocalArray<T, 2>& tile, const R& row, const C& col,
                   Layout = {}) {
    detail::fragment_memory<F, LocalArray<T, 2>, Layout>(ir::MatrixOp::Load, f, tile,
                                                         detail::tile_index(tile, row, col),
                                                         detail::index_expr(tile.row_pitch()));
}

// Stores an accumulator to the tile whose first element is dst[index], rows (or columns)
// `stride` elements apart; or at tile[row][col] of a 2-D shared array.
template <class F, class Dst, IndexLike I, IndexLike S, class Layout = RowMajor>
    requires requires(const Dst& d) { d.name(); }
void store_fragment(const F& f, const Dst& dst, const I& index, const S& stride, Layout = {}) {
    static_assert(F::is_accumulator, "only accumulators are stored");
    detail::fragment_memory<F, Dst, Layout>(ir::MatrixOp::Store, f, dst, detail::index_expr(index),
                                            detail::index_expr(stride));
}
template <class F, class T, IndexLike R, IndexLike C, class Layout = RowMajor>
void store_fragment(const F& f, const LocalArray<T, 2>& tile, const R& row, const C& col,
                    Layout = {}) {
    static_assert(F::is_accumulator, "only accumulators are stored");
    detail::fragment_memory<F, LocalArray<T, 2>, Layout>(ir::MatrixOp::Store, f, tile,
                                                         detail::tile_index(tile, row, col),
                                                         detail::index_expr(tile.row_pitch()));
}

// Stores only the elements (r, c) of a warpgroup accumulator's 64 x N tile with r < rows and
// c < cols, row-major at dst[index + r * stride + c]: each subgroup its own 16 rows.
template <class F, class Dst, IndexLike I, IndexLike S, IndexLike R, IndexLike C>
    requires requires(const Dst& d) { d.name(); }
void store_fragment(const F& f, const Dst& dst, const I& index, const S& stride, const R& rows,
                    const C& cols) {
    static_assert(F::is_warpgroup, "a bounded store is of a warpgroup accumulator (m64)");
    detail::check_memory<F, Dst>();
    ir::Space space = ir::Space::Global;
    if constexpr (requires { dst.space(); }) space = dst.space();
    detail::emit_matrix(ir::Matrix::store_bounded(
        f.name(), dst.name(), space, detail::index_expr(index), detail::index_expr(stride),
        detail::index_expr(rows), detail::index_expr(cols)));
}

// acc += A x B on the tensor cores of a warpgroup (the four subgroups 4q .. 4q + 3 of the
// group, which reach it together with the same operands): A is the 64 x K tile of the
// swizzled shared array `a` at [row_a][col_a], B the K x N tile of `b` at [row_b][col_b]; K is
// a multiple of 16. row_a and row_b are multiples of 8, col_a of 16, col_b of 64. wgmma on
// sm_90, ldmatrix and mma.sync on sm_80 .. 89 and past sm_90; plain arithmetic on the other
// backends, each subgroup computing its 16 rows. With in_flight n, the tensor cores may still be
// reading the tiles of the n latest mma_shared when this returns (sm_90: the next one's loads
// overlap them); the tiles of earlier ones are done. The results are in acc for its next store.
template <uint32_t K, class F, class T, IndexLike RA, IndexLike CA, IndexLike RB, IndexLike CB>
void mma_shared(const F& acc, const LocalArray<T, 2>& a, const RA& row_a, const CA& col_a,
                const LocalArray<T, 2>& b, const RB& row_b, const CB& col_b, int in_flight = 0) {
    static_assert(F::is_warpgroup, "px::mma_shared accumulates into a warpgroup accumulator (m64)");
    static_assert(std::same_as<T, half> || std::same_as<T, bf16>,
                  "px::mma_shared multiplies half or bf16 tiles");
    static_assert(K % 16 == 0 && K > 0 && K <= 1024, "px::mma_shared's depth is a multiple of 16");
    detail::emit_matrix(ir::Matrix::mma_shared(
        acc.name(), a.name(), detail::index_expr(row_a), detail::index_expr(col_a), b.name(),
        detail::index_expr(row_b), detail::index_expr(col_b), K / 16, uint32_t(in_flight)));
}

// d = a x b + c; mma(acc, a, b) is acc = a x b + acc.
template <class D, class A, class B, class C>
void mma(const D& d, const A& a, const B& b, const C& c) {
    static_assert(D::is_accumulator && C::is_accumulator && !A::is_accumulator &&
                      !B::is_accumulator,
                  "px::mma(d, a, b, c): d and c accumulators, a and b the A and B fragments");
    static_assert(A::m == D::m && A::n == D::n && A::k == D::k && B::k == D::k && C::m == D::m,
                  "px::mma of fragments of one shape");
    static_assert(std::same_as<typename A::element, typename B::element>,
                  "A and B of one element type");
    static_assert(std::same_as<typename C::element, typename D::element>,
                  "c and d of one element type");
    detail::emit_matrix(ir::Matrix::mma(d.name(), a.name(), b.name(), c.name()));
}
template <class D, class A, class B> void mma(const D& acc, const A& a, const B& b) {
    mma(acc, a, b, acc);
}

} // namespace plexus
