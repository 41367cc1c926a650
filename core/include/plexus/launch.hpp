// What a launch needs besides the kernel: the grid, the target, typed arguments, the event.
#pragma once

#include "plexus/buffer.hpp"
#include "plexus/kernel.hpp"

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace plexus {

// Work-items per dimension, and optionally the work-group size (0: chosen by plexus:
// 256 in 1-D (4096 on a CPU device for a kernel with no barrier and no shared array), 16 x 16
// in 2-D, 8 x 8 x 4 in 3-D, clamped to the device's limits).
struct Grid {
    uint32_t dims = 1;
    std::array<uint64_t, 3> global{1, 1, 1};
    std::array<uint32_t, 3> local{0, 0, 0};

    Grid(uint64_t x) : dims(1), global{x, 1, 1} {}
    Grid(uint64_t x, uint64_t y) : dims(2), global{x, y, 1} {}
    Grid(uint64_t x, uint64_t y, uint64_t z) : dims(3), global{x, y, z} {}
    Grid& local_size(uint32_t x, uint32_t y = 1, uint32_t z = 1) {
        local = {x, y, z};
        return *this;
    }
};

// Where to run: empty backend = the router's choice; device -1 = the best of that backend.
struct Target {
    std::string backend;
    int device = -1;
};

// One launch argument, type-erased after the compile-time check.
struct LaunchArg {
    BufferBase* buffer = nullptr;
    ir::Type type; // a buffer's element type, or a scalar's type
    std::array<unsigned char, 8> bytes{};
    size_t size = 0;

    LaunchArg(BufferBase& b) : buffer(&b), type(b.element()) {}
    template <Number T> static LaunchArg scalar(T v) {
        static_assert(sizeof(T) <= sizeof(bytes));
        LaunchArg a;
        a.type = scalar_v<T>;
        a.size = sizeof(T);
        std::memcpy(a.bytes.data(), &v, sizeof(T));
        return a;
    }

private:
    LaunchArg() = default;
};

namespace detail {
struct EventState;
}

// A launch or transfer in flight on one queue. It belongs to the Runtime that made it: use
// and destroy it while that Runtime lives. A default-constructed Event is complete.
class Event {
public:
    Event() = default;
    explicit Event(std::shared_ptr<detail::EventState> s) : state_(std::move(s)) {}
    // Returns once the command (and everything before it on its queue) has finished; throws
    // plexus::Error if it failed.
    void wait() const;
    // Device time of the kernel in seconds with "profiling" on; otherwise std::nullopt.
    std::optional<double> seconds() const;
    const std::string& backend() const; // "" for a complete default Event
    const std::string& device() const;  // the device's name
    int device_index() const;           // the device's index in its backend; -1 for a default Event
    const std::shared_ptr<detail::EventState>& state() const { return state_; }

private:
    std::shared_ptr<detail::EventState> state_;
};

namespace detail {
// Whether a C++ argument of type A may be passed for a kernel parameter of type P.
template <class P, class A> struct arg_ok : std::false_type {};
template <Storable T, ir::Access X> struct arg_ok<BufferParam<T, X>, Buffer<T>> : std::true_type {};
template <Number T, class A>
    requires Literal<A>
struct arg_ok<Var<T>, A> : std::true_type {};

template <class P, class A> LaunchArg to_arg(A& a) {
    if constexpr (Literal<std::remove_cvref_t<A>>)
        return LaunchArg::scalar<typename P::type>(static_cast<typename P::type>(a));
    else
        return LaunchArg(a);
}

// The type-erased arguments of a launch of Kernel<P...>, checked at compile time; on the
// caller's stack, since a launch copies what it needs from them.
template <class... P, class... A> std::array<LaunchArg, sizeof...(P)> launch_args(A&... args) {
    static_assert(sizeof...(P) == sizeof...(A),
                  "plexus: the number of launch arguments is not the kernel's");
    static_assert((arg_ok<P, std::remove_cvref_t<A>>::value && ...),
                  "plexus: a launch argument does not fit its parameter "
                  "(In/Out/InOut<T> take a Buffer<T>, scalar parameters take a number)");
    return {to_arg<P>(args)...};
}
} // namespace detail

} // namespace plexus
