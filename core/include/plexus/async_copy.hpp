// Asynchronous copies of the kernel language: a work-item copies a few consecutive elements of
// a buffer into a shared array without passing them through its registers (cp.async on CUDA
// from sm_80; every other backend copies at once, which the semantics allow), so a kernel can
// fetch its next tile while it computes on the current one (docs/kernel-language.md,
// "Asynchronous copies"). Per work-item, not collective.
//
//   px::copy_async<8>(tile, t * 8, a, src, valid);  // tile[t*8 + i] = i < valid ? a[src + i] : 0
//   px::copy_async<8>(tile2d, row, col, a, src, valid); // the same into tile2d[row][col ..]
//   px::copy_async_commit();                        // closes this work-item's group of copies
//   px::copy_async_wait(1);                         // at most 1 committed group still in flight
//   px::barrier();                                  // then the whole group sees the data
#pragma once

#include "plexus/kernel.hpp"

namespace plexus {

namespace detail {
// What cp.async moves: 4, 8 or 16 bytes of scalars of 2, 4 or 8 bytes.
template <class T, uint32_t N> constexpr bool async_copy_supported() {
    constexpr bool number = (std::is_arithmetic_v<T> && !std::same_as<T, bool>) ||
                            std::same_as<T, half> || std::same_as<T, bf16>;
    constexpr uint64_t bytes = uint64_t(N) * sizeof(T);
    return number && (sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8) &&
           (bytes == 4 || bytes == 8 || bytes == 16);
}
template <class B>
concept BufferLike = requires(const B& b) {
    typename B::element;
    B::access;
    b.name();
};
template <uint32_t N, class T, class B>
void emit_async_copy(const std::string& array, const ir::Expr& index, const B& src,
                     const ir::Expr& src_index, const ir::Expr& valid) {
    static_assert(std::same_as<T, typename B::element>,
                  "px::copy_async copies between a shared array and a buffer of one element type");
    static_assert(
        async_copy_supported<T, N>(),
        "px::copy_async<N> copies 4, 8 or 16 bytes (N * sizeof(T)) of numbers of 2, 4 or 8 bytes");
    Tracer::current().emit(ir::AsyncCopy::copy(array, index, src.name(), src_index, N, valid));
}
} // namespace detail

// dst[dst_index + i] = i < valid ? src[src_index + i] : 0 for i < N, done by the time of a
// later copy_async_wait that leaves this copy's group no longer in flight. Only the `valid`
// first elements are read (0 <= valid <= N); dst_index and src_index must be multiples of N
// (cp.async's alignment: N * sizeof(T) bytes). dst is a shared array.
template <uint32_t N, class T, class B, IndexLike DI, IndexLike SI, IndexLike V>
    requires detail::BufferLike<B>
void copy_async(const LocalArray<T, 1>& dst, const DI& dst_index, const B& src, const SI& src_index,
                const V& valid) {
    detail::emit_async_copy<N, T>(dst.name(), detail::index_expr(dst_index), src,
                                  detail::index_expr(src_index), detail::index_expr(valid));
}
// The same into dst[row][col ...] of a 2-D shared array: the elements of one row from col on
// (the row pitch, padding included, keeps each row's start aligned when it is a multiple of N).
template <uint32_t N, class T, class B, IndexLike R, IndexLike C, IndexLike SI, IndexLike V>
    requires detail::BufferLike<B>
void copy_async(const LocalArray<T, 2>& dst, const R& row, const C& col, const B& src,
                const SI& src_index, const V& valid) {
    const ir::Expr flat = dst.index_of(detail::index_expr(row), detail::index_expr(col));
    detail::emit_async_copy<N, T>(dst.name(), flat, src, detail::index_expr(src_index),
                                  detail::index_expr(valid));
}

// Closes the work-item's current group of copies: a later copy_async_wait counts it.
inline void copy_async_commit() {
    detail::Tracer::current().emit(ir::AsyncCopy::commit());
}

// Waits until at most `pending` of the work-item's committed groups are still in flight: the
// data of the others is then visible to this work-item, and to the rest of its group after a
// barrier ("wait, then barrier").
inline void copy_async_wait(int pending) {
    if (pending < 0)
        detail::Tracer::current().fail("px::copy_async_wait(" + std::to_string(pending) +
                                       "): a count of groups is not negative");
    detail::Tracer::current().emit(ir::AsyncCopy::wait(uint32_t(pending)));
}

} // namespace plexus
