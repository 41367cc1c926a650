// Counts the calls of the global operator new in the program that includes this header (in one
// source file: it replaces the program's operator new and delete, which libplexus then uses
// too; libstdc++'s array and nothrow forms call these). Plugins written in C allocate with
// malloc and are not counted.
#pragma once

#include <atomic>
#include <cstdlib>
#include <new>

namespace launch_test {
inline std::atomic<unsigned long> allocations{0};
}

// None is inlined: GCC would then pair malloc with operator delete, or operator new with
// free, and warn.
[[gnu::noinline]] void* operator new(std::size_t n) {
    launch_test::allocations.fetch_add(1, std::memory_order_relaxed);
    if (void* p = std::malloc(n ? n : 1)) return p;
    throw std::bad_alloc();
}
[[gnu::noinline]] void* operator new(std::size_t n, std::align_val_t a) {
    launch_test::allocations.fetch_add(1, std::memory_order_relaxed);
    const std::size_t align = static_cast<std::size_t>(a);
    if (void* p = std::aligned_alloc(align, (n + align - 1) / align * align)) return p;
    throw std::bad_alloc();
}
[[gnu::noinline]] void operator delete(void* p) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete(void* p, std::size_t) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
