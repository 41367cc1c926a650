// plexus::Queue: an in-order queue of one device. Its launches, transfers and copies return
// at once with an Event; later commands of the queue run after earlier ones, and wait() orders
// the queue after another queue's event. A buffer used on two queues is ordered for you: a
// command that uses a buffer waits for the last command of another queue that used it.
#pragma once

#include "plexus/buffer.hpp"
#include "plexus/launch.hpp"

#include <memory>
#include <span>
#include <string>
#include <vector>

namespace plexus {

namespace detail {
struct Lane;
class Executor;
} // namespace detail

// A Queue belongs to the Runtime that made it: use and destroy it while that Runtime lives.
// Destroying it waits for its commands.
class Queue {
public:
    Queue() = default; // no queue: every call throws
    Queue(detail::Executor* exec, std::shared_ptr<detail::Lane> lane)
        : exec_(exec), lane_(std::move(lane)) {}

    // Launches on the queue's device (no other backend is tried); see Runtime::launch.
    template <class... P, class... A>
    Event launch(const Kernel<P...>& kernel, const Grid& grid, A&&... args) {
        auto list = detail::launch_args<P...>(args...);
        return launch_ir(kernel.ir_ptr(), grid, list);
    }
    Event launch_ir(const std::shared_ptr<const ir::Kernel>& kernel, const Grid& grid,
                    std::span<const LaunchArg> args);

    // Host -> buffer (on this queue's device), and buffer -> host. `data` / `out` must stay
    // valid, and `data` unchanged, until the Event has completed. Offsets in elements.
    template <Storable T>
    Event write(Buffer<T>& buffer, std::span<const T> data, size_t offset = 0) {
        return write_bytes(buffer, data.data(), data.size_bytes(), offset * sizeof(T));
    }
    template <Storable T> Event read(const Buffer<T>& buffer, std::span<T> out, size_t offset = 0) {
        return read_bytes(buffer, out.data(), out.size_bytes(), offset * sizeof(T));
    }
    // The whole of src into dst on this queue's device (from another device of the backend
    // first where src is current there).
    template <Storable T> Event copy(const Buffer<T>& src, Buffer<T>& dst) {
        return copy_bytes(src, dst);
    }

    // Makes the buffer current on this queue's device (device to device from another device of
    // the backend where it is current there, through the host otherwise); nothing when it is.
    Event prefetch(const BufferBase& buffer);

    Event write_bytes(BufferBase& buffer, const void* src, size_t bytes, size_t offset = 0);
    Event read_bytes(const BufferBase& buffer, void* dst, size_t bytes, size_t offset = 0);
    Event copy_bytes(const BufferBase& src, BufferBase& dst);

    // Later commands of this queue start after `event` (of a queue of the same backend, any
    // device) has completed.
    void wait(const Event& event);
    // An event for everything enqueued so far.
    Event marker();
    // Waits for every command of the queue; throws plexus::Error if one failed.
    void finish();

    const std::string& backend() const;
    int device() const;               // index in the backend
    const std::string& label() const; // "cuda:0 (NVIDIA H100 80GB HBM3) queue 3"
    // The plugin's handle (CUstream, cl_command_queue); throws Unsupported when it has none.
    uint64_t native_handle() const;

private:
    detail::Executor* exec_ = nullptr;
    std::shared_ptr<detail::Lane> lane_;
    detail::Lane& lane() const;
};

} // namespace plexus
