// Counts the calls of the global operator new in the program that includes this header (in one
// source file: it replaces the program's operator new and delete, which libplexus then uses
// too). Every form is replaced, plain, array, aligned and nothrow alike, so that whatever
// allocates (LLVM uses the nothrow form) frees through the matching form here, with malloc
// and free underneath: a sanitizer's runtime never sees a block of its own new freed by free.
// Plugins written in C allocate with malloc and are not counted.
#pragma once

#include <atomic>
#include <cstdlib>
#include <new>

namespace launch_test {
inline std::atomic<unsigned long> allocations{0};

inline void* counted(std::size_t n) noexcept {
    allocations.fetch_add(1, std::memory_order_relaxed);
    return std::malloc(n ? n : 1);
}
inline void* counted(std::size_t n, std::align_val_t a) noexcept {
    allocations.fetch_add(1, std::memory_order_relaxed);
    const std::size_t align = static_cast<std::size_t>(a);
    return std::aligned_alloc(align, (n + align - 1) / align * align);
}
} // namespace launch_test

// None is inlined: GCC would then pair malloc with operator delete, or operator new with
// free, and warn.
[[gnu::noinline]] void* operator new(std::size_t n) {
    if (void* p = launch_test::counted(n)) return p;
    throw std::bad_alloc();
}
[[gnu::noinline]] void* operator new[](std::size_t n) {
    if (void* p = launch_test::counted(n)) return p;
    throw std::bad_alloc();
}
[[gnu::noinline]] void* operator new(std::size_t n, std::align_val_t a) {
    if (void* p = launch_test::counted(n, a)) return p;
    throw std::bad_alloc();
}
[[gnu::noinline]] void* operator new[](std::size_t n, std::align_val_t a) {
    if (void* p = launch_test::counted(n, a)) return p;
    throw std::bad_alloc();
}
[[gnu::noinline]] void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
    return launch_test::counted(n);
}
[[gnu::noinline]] void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
    return launch_test::counted(n);
}
[[gnu::noinline]] void* operator new(std::size_t n, std::align_val_t a,
                                     const std::nothrow_t&) noexcept {
    return launch_test::counted(n, a);
}
[[gnu::noinline]] void* operator new[](std::size_t n, std::align_val_t a,
                                       const std::nothrow_t&) noexcept {
    return launch_test::counted(n, a);
}
[[gnu::noinline]] void operator delete(void* p) noexcept {
    std::free(p);
}
[[gnu::noinline]] void operator delete[](void* p) noexcept {
    std::free(p);
}
[[gnu::noinline]] void operator delete(void* p, std::size_t) noexcept {
    std::free(p);
}
[[gnu::noinline]] void operator delete[](void* p, std::size_t) noexcept {
    std::free(p);
}
[[gnu::noinline]] void operator delete(void* p, std::align_val_t) noexcept {
    std::free(p);
}
[[gnu::noinline]] void operator delete[](void* p, std::align_val_t) noexcept {
    std::free(p);
}
[[gnu::noinline]] void operator delete(void* p, std::size_t, std::align_val_t) noexcept {
    std::free(p);
}
[[gnu::noinline]] void operator delete[](void* p, std::size_t, std::align_val_t) noexcept {
    std::free(p);
}
[[gnu::noinline]] void operator delete(void* p, const std::nothrow_t&) noexcept {
    std::free(p);
}
[[gnu::noinline]] void operator delete[](void* p, const std::nothrow_t&) noexcept {
    std::free(p);
}
[[gnu::noinline]] void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept {
    std::free(p);
}
[[gnu::noinline]] void operator delete[](void* p, std::align_val_t,
                                         const std::nothrow_t&) noexcept {
    std::free(p);
}
