// Buffer<T>: an array that lives on the host and on any device a launch needs it on. It tracks
// which copies are current and moves data only when a launch or a host access needs it.
#pragma once

#include "plexus/error.hpp"
#include "plexus/kernel.hpp"

#include <cstring>
#include <memory>
#include <span>
#include <vector>

namespace plexus {

class Runtime;
struct Target;

// Where a buffer keeps its contents besides the devices that use it.
enum class Placement {
    HostMirrored, // a host copy, brought up to date when the host asks for it (the default)
    DeviceOnly,   // no host copy: read() and write() go straight between the caller's memory and
                  // the device, so a buffer larger than host memory works; host() throws
    Pinned,       // the host copy in page-locked memory of the home device's backend, which its
                  // transfers read and write at full speed
};

namespace detail {
struct BufferState; // core/src/runtime/buffer_state.hpp
}

class BufferBase {
public:
    BufferBase(Runtime& rt, ir::Type element, size_t count);
    // `home`: the device a DeviceOnly buffer is written to before any launch uses it, and whose
    // backend allocates a Pinned buffer's host copy; the highest-priority backend's device 0
    // when empty.
    BufferBase(Runtime& rt, ir::Type element, size_t count, Placement placement,
               const Target& home);
    // Wraps memory the caller owns and keeps owning: `native` is an allocation of the target's
    // device (CUDA: a CUdeviceptr; OpenCL: a cl_mem; native and interp: a host address) of at
    // least count elements. No copy is made; it is the buffer's current contents.
    BufferBase(Runtime& rt, ir::Type element, size_t count, const Target& target, uint64_t native);
    BufferBase(BufferBase&&) noexcept;
    BufferBase& operator=(BufferBase&&) noexcept;
    ~BufferBase();

    size_t size() const; // elements
    Placement placement() const;
    size_t bytes() const;
    const ir::Type& element() const;

    // Copies between the host and the buffer; `bytes` and `offset` in bytes, bounds-checked.
    void write_bytes(const void* src, size_t bytes, size_t offset = 0);
    void read_bytes(void* dst, size_t bytes, size_t offset = 0) const;
    // The host copy, brought up to date first. The mutable form makes it the only current
    // copy (device copies are refreshed at the next launch that needs them). A DeviceOnly
    // buffer has none: InvalidArgument.
    void* host_bytes();
    const void* host_bytes() const;

    // The buffer's allocation on the target's device (allocated and made current there first,
    // then waited for), as the plugin's handle: a CUdeviceptr, a cl_mem, a host address. It
    // stays valid while the buffer lives, for a vendor library to read or write; once the
    // library's work has finished (wait for it: plexus cannot see it), call modified_on(target)
    // so that plexus takes that copy as the current one.
    uint64_t native_handle(const Target& target);
    void modified_on(const Target& target);

    detail::BufferState& state() const { return *state_; }

private:
    std::unique_ptr<detail::BufferState> state_;
};

// A buffer of any type a kernel's buffer parameter may have: numbers (px::half, px::bf16 and
// the small integers too), px::Vec, records (PLEXUS_RECORD) and variants, each element in
// the C++ type's own layout, which is the IR's.
template <Storable T> class Buffer : public BufferBase {
public:
    using element_type = T;
    Buffer(Runtime& rt, size_t count) : BufferBase(rt, type_of<T>(), count) {}
    Buffer(Runtime& rt, std::span<const T> data) : BufferBase(rt, type_of<T>(), data.size()) {
        write(data);
    }
    Buffer(Runtime& rt, const std::vector<T>& data) : Buffer(rt, std::span<const T>(data)) {}
    Buffer(Runtime& rt, size_t count, Placement placement, const Target& home)
        : BufferBase(rt, type_of<T>(), count, placement, home) {}
    // See BufferBase's wrapping constructor: count elements at `native` on the target's device.
    static Buffer wrap(Runtime& rt, const Target& target, uint64_t native, size_t count) {
        return Buffer(rt, target, native, count);
    }

    void write(std::span<const T> data, size_t offset = 0) {
        write_bytes(data.data(), data.size_bytes(), offset * sizeof(T));
    }
    void read(std::span<T> out, size_t offset = 0) const {
        read_bytes(out.data(), out.size_bytes(), offset * sizeof(T));
    }
    std::vector<T> to_vector() const {
        std::vector<T> v(size());
        read(v);
        return v;
    }
    // Host access with implicit transfer; see BufferBase::host_bytes.
    std::span<T> host() { return {static_cast<T*>(host_bytes()), size()}; }
    std::span<const T> host() const { return {static_cast<const T*>(host_bytes()), size()}; }

private:
    Buffer(Runtime& rt, const Target& target, uint64_t native, size_t count)
        : BufferBase(rt, type_of<T>(), count, target, native) {}
};

} // namespace plexus
