// BlockCache and CachedAllocator: a per-thread free list of same-sized blocks, for the event
// state that every launch makes and its caller usually drops at once. glibc's malloc and free
// of that block cost about 140 instructions a launch; taking it from and giving it back to a
// thread's list costs a tenth of that. Internal to libplexus.
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>

namespace plexus::detail {

// Blocks of `Size` bytes aligned to `Align`. A block freed on another thread than the one
// that took it joins that thread's list; a list keeps at most kKept blocks and gives the rest
// back to the heap, so a thread that only frees (events handed to it) holds little. When a
// thread ends, its list goes back to the heap; blocks freed later in its end go straight there.
template <size_t Size, size_t Align> class BlockCache {
public:
    static void* take() {
        List& l = list;
        if (Node* n = l.head) {
            l.head = n->next;
            --l.count;
            return n;
        }
        return ::operator new(Size, std::align_val_t(Align));
    }
    static void give(void* p) {
        List& l = list;
        if (l.count >= kKept || l.gone) return ::operator delete(p, Size, std::align_val_t(Align));
        if (!l.drain_registered) {
            // The first block kept on this thread: make the thread give its list back when it
            // ends. Only here, so that take and give pay no thread_local guard.
            l.drain_registered = true;
            (void)&drain;
        }
        l.head = ::new (p) Node{l.head};
        ++l.count;
    }

private:
    static_assert(Size >= sizeof(void*) && Align >= alignof(void*));
    static constexpr uint32_t kKept = 64;
    struct Node {
        Node* next;
    };
    // Trivially destructible, constant-initialized: its storage lasts as long as the thread.
    struct List {
        Node* head = nullptr;
        uint32_t count = 0;
        bool drain_registered = false;
        bool gone = false; // the thread is ending: give blocks straight back to the heap
    };
    struct Drain {
        ~Drain() {
            List& l = list;
            l.gone = true;
            while (Node* n = l.head) {
                l.head = n->next;
                ::operator delete(n, Size, std::align_val_t(Align));
            }
            l.count = 0;
        }
    };
    static inline thread_local List list;
    static inline thread_local Drain drain;
};

// An allocator for std::allocate_shared that takes its one block (the control block with the
// object in it) from a BlockCache. Under AddressSanitizer it is the plain heap, so that a use
// of a freed event is still reported.
template <class T> struct CachedAllocator {
    using value_type = T;
    CachedAllocator() = default;
    template <class U> CachedAllocator(const CachedAllocator<U>&) {}
    T* allocate(size_t n) {
#if !defined(__SANITIZE_ADDRESS__)
        if (n == 1) return static_cast<T*>(BlockCache<sizeof(T), alignof(T)>::take());
#endif
        return static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t(alignof(T))));
    }
    void deallocate(T* p, size_t n) {
#if !defined(__SANITIZE_ADDRESS__)
        if (n == 1) return BlockCache<sizeof(T), alignof(T)>::give(p);
#endif
        ::operator delete(p, n * sizeof(T), std::align_val_t(alignof(T)));
    }
    template <class U> bool operator==(const CachedAllocator<U>&) const { return true; }
};

} // namespace plexus::detail
