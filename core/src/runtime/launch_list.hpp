// LaunchList: the per-argument lists of one launch (buffers, plugin arguments, host pointers)
// without a heap allocation for launches of up to N arguments. Internal to libplexus.
#pragma once

#include <cstddef>
#include <memory>
#include <new>
#include <type_traits>

namespace plexus::detail {

// At most `capacity` elements, fixed when it is made: inline up to N, on the heap beyond. Only
// for trivially copyable T, so that nothing needs constructing up front or destroying after.
template <class T, size_t N> class LaunchList {
    static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>);

public:
    explicit LaunchList(size_t capacity) {
        if (capacity > N) {
            heap_.reset(new T[capacity]);
            data_ = heap_.get();
        }
    }
    LaunchList(const LaunchList&) = delete; // data_ may point into the object itself
    LaunchList& operator=(const LaunchList&) = delete;

    // The caller never adds more than the capacity it asked for.
    T& push_back(const T& v) { return *::new (static_cast<void*>(data_ + size_++)) T(v); }
    T& operator[](size_t i) { return data_[i]; }
    const T& operator[](size_t i) const { return data_[i]; }
    size_t size() const { return size_; }
    T* data() { return data_; }
    T* begin() { return data_; }
    T* end() { return data_ + size_; }

private:
    alignas(T) std::byte inline_[N * sizeof(T)];
    std::unique_ptr<T[]> heap_;
    T* data_ = reinterpret_cast<T*>(inline_);
    size_t size_ = 0;
};

} // namespace plexus::detail
