// plexus::Queue: commands enqueued on one lane without waiting; buffers used on several lanes
// are ordered through the commands that use each device copy (BufferState::before / after).
#include "plexus/queue.hpp"
#include "plexus/runtime.hpp"
#include "runtime/executor.hpp"
#include "runtime/runtime_impl.hpp"

#include <cstring>

namespace plexus {

using detail::BufferState;
using detail::DeviceCopy;
using detail::EventState;
using detail::Lane;

Queue Runtime::queue(const Target& target) {
    return Queue(impl_->exec.get(), impl_->exec->new_lane(target));
}

HostMemory Runtime::host_memory(const Target& target, size_t bytes) {
    return impl_->exec->host_memory(impl_->exec->context_for(target, "host_memory"), bytes);
}

HostMemory detail::Executor::host_memory(DeviceContext& ctx, size_t bytes) {
    if (bytes == 0)
        throw Error(ErrorCode::InvalidArgument, "host_memory of 0 bytes for " + ctx.label);
    const Backend& b = *ctx.backend;
    if (b.api().host_alloc && b.api().host_free) {
        void* p = nullptr;
        b.check(b.api().host_alloc(ctx.device, bytes, &p), "host_alloc", ctx.label);
        const plx_plugin* api = &b.api();
        plx_device device = ctx.device;
        return HostMemory(
            std::shared_ptr<void>(p, [api, device](void* q) { api->host_free(device, q); }), bytes,
            true);
    }
    return aligned_host_memory(bytes, "host_memory for " + ctx.label);
}

Lane& Queue::lane() const {
    if (!lane_)
        throw Error(
            ErrorCode::InvalidArgument,
            "a default-constructed plexus::Queue has no device: make one with Runtime::queue");
    return *lane_;
}

namespace {

ErrorContext where(const Lane& lane) {
    return {lane.ctx->backend->name(), lane.ctx->info->name, "", "", "", ""};
}

// The buffer's state, checked to belong to this queue's Runtime.
BufferState& mine(const BufferBase& buffer, const Lane& lane, detail::Executor* exec,
                  const char* what) {
    BufferState& s = buffer.state();
    if (s.exec != exec)
        throw Error(ErrorCode::InvalidArgument,
                    std::string(what) + " on " + lane.label + ": the buffer of " +
                        std::to_string(s.bytes) + " bytes belongs to another plexus::Runtime",
                    where(lane));
    return s;
}

} // namespace

Event Queue::launch_ir(const std::shared_ptr<const ir::Kernel>& kernel, const Grid& grid,
                       std::span<const LaunchArg> args) {
    lane();
    return exec_->launch(Target{}, kernel, grid, args, lane_);
}

Event Queue::write_bytes(BufferBase& buffer, const void* src, size_t bytes, size_t offset) {
    Lane& l = lane();
    BufferState& s = mine(buffer, l, exec_, "write");
    detail::check_range(offset, bytes, s.bytes, ("write on " + l.label).c_str());
    if (bytes == 0) return Event();
    std::lock_guard lock(s.mutex);
    // A partial write needs the rest of the buffer current here first.
    detail::Moved moved;
    if (offset == 0 && bytes == s.bytes)
        s.allocation_on(l.ctx);
    else
        moved = s.make_resident(l);
    DeviceCopy* copy = s.copy_on(l.ctx);
    BufferState::before(*copy, l, true);
    std::shared_ptr<EventState> e =
        detail::transfer(lane_, copy->buffer, offset, const_cast<void*>(src), bytes, true, false);
    s.used(moved, e, true);
    return Event(e);
}

Event Queue::read_bytes(const BufferBase& buffer, void* dst, size_t bytes, size_t offset) {
    Lane& l = lane();
    BufferState& s = mine(buffer, l, exec_, "read");
    detail::check_range(offset, bytes, s.bytes, ("read on " + l.label).c_str());
    if (bytes == 0) return Event();
    std::lock_guard lock(s.mutex);
    if (s.host_valid) {
        // The host copy is current: nothing to move.
        std::memcpy(dst, s.host_data() + offset, bytes);
        return Event();
    }
    detail::Moved moved = s.make_resident(l);
    DeviceCopy* copy = s.copy_on(l.ctx);
    BufferState::before(*copy, l, false);
    std::shared_ptr<EventState> e =
        detail::transfer(lane_, copy->buffer, offset, dst, bytes, false, false);
    s.used(moved, e, false);
    return Event(e);
}

Event Queue::prefetch(const BufferBase& buffer) {
    Lane& l = lane();
    BufferState& s = mine(buffer, l, exec_, "prefetch");
    std::lock_guard lock(s.mutex);
    if (const DeviceCopy* here = s.copy_on(l.ctx); here && here->valid) return Event();
    detail::Moved moved = s.make_resident(l);
    std::shared_ptr<EventState> e;
    {
        std::lock_guard ql(l.mutex);
        e = detail::lane_marker(lane_);
    }
    s.used(moved, e, false);
    return Event(e);
}

Event Queue::copy_bytes(const BufferBase& src_buffer, BufferBase& dst_buffer) {
    Lane& l = lane();
    BufferState& src = mine(src_buffer, l, exec_, "copy");
    BufferState& dst = mine(dst_buffer, l, exec_, "copy");
    if (&src == &dst)
        throw Error(ErrorCode::InvalidArgument,
                    "copy on " + l.label + ": source and destination are one buffer", where(l));
    if (src.bytes != dst.bytes)
        throw Error(ErrorCode::InvalidArgument,
                    "copy on " + l.label + ": the source has " + std::to_string(src.bytes) +
                        " bytes, the destination " + std::to_string(dst.bytes),
                    where(l));
    if (src.bytes == 0) return Event();
    const Backend& b = *l.ctx->backend;
    std::scoped_lock lock(src.mutex, dst.mutex);
    detail::Moved moved = src.make_resident(l);
    DeviceCopy* from = src.copy_on(l.ctx);
    BufferState::before(*from, l, false);
    DeviceCopy& to = dst.allocation_on(l.ctx);
    BufferState::before(to, l, true);
    std::shared_ptr<EventState> e;
    {
        std::lock_guard ql(l.mutex);
        detail::TraceSpan span(l.ctx->trace, l.label, "copy", "transfer");
        span.args["bytes"] = src.bytes;
        if (b.api().buffer_copy) {
            b.check(b.api().buffer_copy(l.queue, to.buffer, 0, from->buffer, 0, src.bytes),
                    "buffer_copy", l.label);
        } else {
            // Without buffer_copy, through host memory: read the source, then write it.
            std::vector<unsigned char> staging(src.bytes);
            b.check(b.api().buffer_read(l.queue, from->buffer, 0, staging.data(), src.bytes),
                    "buffer_read", l.label);
            b.check(b.api().buffer_write(l.queue, to.buffer, 0, staging.data(), src.bytes),
                    "buffer_write", l.label);
        }
        e = detail::lane_marker(lane_);
    }
    src.used(moved, e, false);
    dst.used({}, e, true);
    return Event(e);
}

void Queue::wait(const Event& event) {
    Lane& l = lane();
    const std::shared_ptr<EventState>& e = event.state();
    if (!e || !e->lane || e->lane.get() == &l) return; // complete, or earlier on this queue
    if (e->lane->ctx->backend != l.ctx->backend)
        throw Error(ErrorCode::InvalidArgument,
                    "queue " + l.label + " cannot wait for an event of " + e->lane->label +
                        ": an event orders only queues of its own backend (wait for it on the host "
                        "with Event::wait)",
                    where(l));
    const Backend& b = *l.ctx->backend;
    if (e->event && b.api().queue_wait_event) {
        std::lock_guard ql(l.mutex);
        b.check(b.api().queue_wait_event(l.queue, e->event), "queue_wait_event", l.label);
    } else {
        e->wait(); // the plugin cannot order queues: wait here
    }
}

Event Queue::marker() {
    Lane& l = lane();
    std::lock_guard ql(l.mutex);
    return Event(detail::lane_marker(lane_));
}

void Queue::finish() {
    lane().sync();
}

const std::string& Queue::backend() const {
    return lane().ctx->backend->name();
}
int Queue::device() const {
    return int(lane().ctx->index);
}
const std::string& Queue::label() const {
    return lane().label;
}

uint64_t Queue::native_handle() const {
    Lane& l = lane();
    const Backend& b = *l.ctx->backend;
    if (!b.api().queue_native)
        throw Error(ErrorCode::Unsupported,
                    "backend '" + b.name() + "' gives no native handle for its queues", where(l));
    uint64_t handle = 0;
    b.check(b.api().queue_native(l.queue, &handle), "queue_native", l.label);
    return handle;
}

} // namespace plexus
