// Buffer residency: the host copy and one allocation per device, each marked current or not;
// data moves only when a launch or a host access needs it there.
#include "config/log.hpp"
#include "plexus/runtime.hpp"
#include "runtime/executor.hpp"
#include "runtime/runtime_impl.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace plexus {
namespace detail {

BufferState::~BufferState() {
    // A buffer is freed only when idle: wait for every command that uses a copy.
    for (auto& c : copies) {
        try {
            for (auto& r : c.use.reads)
                r->wait();
            if (c.use.write) c.use.write->wait();
        } catch (const std::exception& e) {
            // A destructor cannot throw; the failure belongs to an earlier command, so say so.
            log().warn("freeing a buffer used on {}: {}", c.ctx->label, e.what());
        }
        c.use = {};
        c.ctx->backend->api().buffer_free(c.buffer);
    }
}

DeviceCopy* BufferState::copy_on(DeviceContext* ctx) {
    for (auto& c : copies)
        if (c.ctx == ctx) return &c;
    return nullptr;
}

DeviceCopy& BufferState::allocation_on(DeviceContext* ctx) {
    if (DeviceCopy* mine = copy_on(ctx)) return *mine;
    const Backend& b = *ctx->backend;
    plx_buffer buf = nullptr;
    b.check(b.api().buffer_alloc(ctx->device, bytes, &buf), "buffer_alloc", ctx->label);
    copies.push_back({ctx, buf, false});
    return copies.back();
}

const DeviceCopy* BufferState::valid_copy() const {
    for (auto& c : copies)
        if (c.valid) return &c;
    return nullptr;
}

namespace {

// Orders `lane` after `e` when `e` is another lane's: on the device where the plugin can,
// otherwise by waiting here.
void follow(Lane& lane, const std::shared_ptr<EventState>& e) {
    if (!e || e->lane.get() == &lane) return;
    const Backend& b = *lane.ctx->backend;
    if (e->lane->ctx->backend == lane.ctx->backend && e->event && b.api().queue_wait_event) {
        std::lock_guard lock(lane.mutex);
        b.check(b.api().queue_wait_event(lane.queue, e->event), "queue_wait_event", lane.label);
    } else {
        e->wait();
    }
}

} // namespace

void BufferState::before(DeviceCopy& copy, Lane& lane, bool write) {
    follow(lane, copy.use.write);
    if (write)
        for (auto& r : copy.use.reads)
            follow(lane, r);
}

void BufferState::after(DeviceCopy& copy, const std::shared_ptr<EventState>& event, bool write) {
    if (write) {
        copy.use.write = event;
        copy.use.reads.clear();
        return;
    }
    for (auto& r : copy.use.reads)
        if (r->lane == event->lane) {
            r = event;
            return;
        }
    copy.use.reads.push_back(event);
}

unsigned char* BufferState::host_data() {
    if (placement == Placement::DeviceOnly)
        throw Error(ErrorCode::InvalidArgument, "a device-only buffer of " + std::to_string(bytes) +
                                                    " bytes (Placement::DeviceOnly) has no host "
                                                    "copy: read() and write() it, or use a Queue");
    if (!host.data()) {
        if (placement == Placement::Pinned) {
            host = exec->host_memory(*home, bytes);
        } else {
            host = aligned_host_memory(bytes, "the host copy of a buffer");
        }
    }
    return static_cast<unsigned char*>(host.data());
}

void BufferState::read_copy(const DeviceCopy& c, void* dst, size_t offset, size_t n) {
    if (c.use.write) c.use.write->wait(); // the last command that wrote it
    Lane& lane = *c.ctx->lane;
    std::lock_guard lock(lane.mutex);
    const Backend& b = *c.ctx->backend;
    TraceSpan span(c.ctx->trace, lane.label, "read to host", "transfer");
    span.args["bytes"] = n;
    b.check(b.api().buffer_read(lane.queue, c.buffer, offset, dst, n), "buffer_read", lane.label);
}

std::shared_ptr<EventState> transfer(const std::shared_ptr<Lane>& lane, plx_buffer buffer,
                                     size_t offset, void* host, size_t bytes, bool write,
                                     bool blocking) {
    const Backend& b = *lane->ctx->backend;
    const plx_plugin& api = b.api();
    std::lock_guard ql(lane->mutex);
    TraceSpan span(lane->ctx->trace, lane->label, write ? "write" : "read", "transfer");
    span.args["bytes"] = bytes;
    if (write && api.buffer_write_async && !blocking)
        b.check(api.buffer_write_async(lane->queue, buffer, offset, host, bytes),
                "buffer_write_async", lane->label);
    else if (write)
        b.check(api.buffer_write(lane->queue, buffer, offset, host, bytes), "buffer_write",
                lane->label);
    else if (api.buffer_read_async && !blocking)
        b.check(api.buffer_read_async(lane->queue, buffer, offset, host, bytes),
                "buffer_read_async", lane->label);
    else
        b.check(api.buffer_read(lane->queue, buffer, offset, host, bytes), "buffer_read",
                lane->label);
    return lane_marker(lane);
}

HostMemory aligned_host_memory(size_t bytes, const std::string& what) {
    void* p = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
    if (!p) throw Error(ErrorCode::OutOfMemory, what + ": " + std::to_string(bytes) + " bytes");
    return HostMemory(std::shared_ptr<void>(p, std::free), bytes, false);
}

void BufferState::refresh_host() {
    if (host_valid) return;
    unsigned char* data = host_data();
    if (const DeviceCopy* c = valid_copy())
        read_copy(*c, data, 0, bytes);
    else
        std::memset(data, 0, bytes);
    host_valid = true;
}

namespace {

// A buffer never written holds zeros. buffer_fill is optional: without it the zeros are
// written from a host block, a chunk at a time so that a large buffer costs little memory.
void zero_fill(Lane& lane, plx_buffer buffer, size_t bytes) {
    const Backend& b = *lane.ctx->backend;
    if (b.api().buffer_fill) {
        const uint32_t zero = 0;
        size_t pattern = bytes % 4 == 0 ? 4 : 1;
        b.check(b.api().buffer_fill(lane.queue, buffer, 0, &zero, pattern, bytes), "buffer_fill",
                lane.label);
        return;
    }
    static const std::vector<unsigned char> zeros(size_t(1) << 20);
    for (size_t offset = 0; offset < bytes; offset += zeros.size()) {
        const size_t n = std::min(zeros.size(), bytes - offset);
        b.check(b.api().buffer_write(lane.queue, buffer, offset, zeros.data(), n),
                "buffer_write (zeroing a new buffer, the plugin has no buffer_fill)", lane.label);
    }
}

} // namespace

Moved BufferState::make_resident(Lane& lane) {
    DeviceContext* ctx = lane.ctx;
    const Backend& b = *ctx->backend;
    DeviceCopy& mine = allocation_on(ctx);
    if (mine.valid) return {};
    before(mine, lane, true);
    DeviceCopy* other = nullptr;
    for (auto& c : copies)
        if (c.valid) other = &c;
    // The only current copy is on another device of this backend: device to device when the
    // plugin can.
    if (!host_valid && other && other->ctx->backend == &b && b.api().buffer_copy_peer) {
        before(*other, lane, false);
        std::lock_guard lock(lane.mutex);
        TraceSpan span(ctx->trace, lane.label, "copy from " + other->ctx->label, "transfer");
        span.args["bytes"] = bytes;
        plx_status s =
            b.api().buffer_copy_peer(lane.queue, mine.buffer, 0, other->buffer, 0, bytes);
        if (s == PLX_OK) {
            mine.valid = true;
            return {other->ctx, true};
        }
        if (s != PLX_ERROR_UNSUPPORTED) b.check(s, "buffer_copy_peer", lane.label);
    }
    // Otherwise through the host: its copy, or for a device-only buffer a staging block.
    HostMemory staging;
    const unsigned char* from = nullptr;
    if (!host_valid && other && placement == Placement::DeviceOnly) {
        staging = exec->host_memory(*ctx, bytes);
        read_copy(*other, staging.data(), 0, bytes);
        from = static_cast<const unsigned char*>(staging.data());
    } else if (other || host_valid) {
        refresh_host();
        from = host_data();
    }
    std::lock_guard lock(lane.mutex);
    TraceSpan span(ctx->trace, lane.label, from ? "write from host" : "zero fill", "transfer");
    span.args["bytes"] = bytes;
    if (from)
        b.check(b.api().buffer_write(lane.queue, mine.buffer, 0, from, bytes), "buffer_write",
                lane.label);
    else
        zero_fill(lane, mine.buffer, bytes);
    mine.valid = true;
    return {nullptr, true};
}

void BufferState::used(const Moved& moved, const std::shared_ptr<EventState>& event, bool write) {
    DeviceContext* here = event->lane->ctx;
    if (write) written_on(here);
    after(*copy_on(here), event, write || moved.wrote);
    if (moved.from)
        if (DeviceCopy* from = copy_on(moved.from)) after(*from, event, false);
}

void BufferState::written_on(DeviceContext* ctx) {
    for (auto& c : copies)
        c.valid = c.ctx == ctx;
    host_valid = false;
}

} // namespace detail

BufferBase::BufferBase(Runtime& rt, ir::Type element, size_t count)
    : state_(std::make_unique<detail::BufferState>()) {
    if (!ir::is_storable(element))
        throw Error(ErrorCode::InvalidArgument,
                    "a buffer of " + to_string(element) +
                        " (buffers hold numbers, "
                        "vectors, records and variants; use u8 for flags)");
    state_->exec = &rt.impl().executor();
    state_->element = element;
    state_->count = count;
    state_->bytes = count * ir::size_of(element);
}
BufferBase::BufferBase(Runtime& rt, ir::Type element, size_t count, Placement placement,
                       const Target& home)
    : BufferBase(rt, element, count) {
    auto& s = *state_;
    s.placement = placement;
    if (placement != Placement::HostMirrored)
        s.home = &s.exec->context_for(home, "a buffer's home device");
}

BufferBase::BufferBase(Runtime& rt, ir::Type element, size_t count, const Target& target,
                       uint64_t native)
    : BufferBase(rt, element, count) {
    auto& s = *state_;
    detail::DeviceContext& ctx = s.exec->context_for(target, "Buffer::wrap");
    const Backend& b = *ctx.backend;
    if (!b.api().buffer_wrap)
        throw Error(ErrorCode::Unsupported,
                    "backend '" + b.name() + "' cannot wrap memory it did not allocate",
                    {b.name(), ctx.info->name, "", "", "", ""});
    if (native == 0 || count == 0)
        throw Error(ErrorCode::InvalidArgument,
                    "Buffer::wrap on " + ctx.label + ": " +
                        (native == 0 ? "the handle is 0" : "the count is 0"),
                    {b.name(), ctx.info->name, "", "", "", ""});
    plx_buffer buf = nullptr;
    b.check(b.api().buffer_wrap(ctx.device, native, s.bytes, &buf), "buffer_wrap", ctx.label);
    s.copies.push_back({&ctx, buf, true});
}

uint64_t BufferBase::native_handle(const Target& target) {
    auto& s = *state_;
    detail::DeviceContext& ctx = s.exec->context_for(target, "Buffer::native_handle");
    const Backend& b = *ctx.backend;
    if (!b.api().buffer_native)
        throw Error(ErrorCode::Unsupported,
                    "backend '" + b.name() + "' gives no native handle for its buffers",
                    {b.name(), ctx.info->name, "", "", "", ""});
    std::lock_guard lock(s.mutex);
    auto& lane = ctx.lane;
    detail::Moved moved = s.make_resident(*lane);
    detail::DeviceCopy* copy = s.copy_on(&ctx);
    // The caller may write through the handle: after every command that uses this copy.
    detail::BufferState::before(*copy, *lane, true);
    std::shared_ptr<detail::EventState> e;
    {
        std::lock_guard ql(lane->mutex);
        e = detail::lane_marker(lane);
    }
    s.used(moved, e, false);
    e->wait();
    uint64_t handle = 0;
    b.check(b.api().buffer_native(copy->buffer, &handle), "buffer_native", ctx.label);
    return handle;
}

void BufferBase::modified_on(const Target& target) {
    auto& s = *state_;
    detail::DeviceContext& ctx = s.exec->context_for(target, "Buffer::modified_on");
    std::lock_guard lock(s.mutex);
    if (!s.copy_on(&ctx))
        throw Error(ErrorCode::InvalidArgument,
                    "Buffer::modified_on: the buffer has no allocation on " + ctx.label +
                        " (ask for its native_handle there first)",
                    {ctx.backend->name(), ctx.info->name, "", "", "", ""});
    s.written_on(&ctx);
}

BufferBase::BufferBase(BufferBase&&) noexcept = default;
BufferBase& BufferBase::operator=(BufferBase&&) noexcept = default;
BufferBase::~BufferBase() = default;

size_t BufferBase::size() const {
    return state_->count;
}
size_t BufferBase::bytes() const {
    return state_->bytes;
}
Placement BufferBase::placement() const {
    return state_->placement;
}
const ir::Type& BufferBase::element() const {
    return state_->element;
}

void detail::check_range(size_t offset, size_t bytes, size_t size, const char* what) {
    if (offset > size || bytes > size - offset)
        throw Error(ErrorCode::InvalidArgument, std::string(what) + " of " + std::to_string(bytes) +
                                                    " bytes at offset " + std::to_string(offset) +
                                                    " is outside the buffer of " +
                                                    std::to_string(size) + " bytes");
}

void BufferBase::write_bytes(const void* src, size_t bytes, size_t offset) {
    auto& s = *state_;
    detail::check_range(offset, bytes, s.bytes, "write");
    std::lock_guard lock(s.mutex);
    if (s.placement == Placement::DeviceOnly) {
        // Straight to the home device (or where the buffer is current), blocking.
        const detail::DeviceCopy* current = s.valid_copy();
        detail::DeviceContext* ctx = current ? current->ctx : s.home;
        detail::Lane& lane = *ctx->lane;
        detail::Moved moved;
        if (offset != 0 || bytes != s.bytes) moved = s.make_resident(lane);
        detail::DeviceCopy& copy = s.allocation_on(ctx);
        detail::BufferState::before(copy, lane, true);
        // Blocking, since src is the caller's; the event still says when the device is done.
        s.used(moved,
               detail::transfer(ctx->lane, copy.buffer, offset, const_cast<void*>(src), bytes, true,
                                true),
               true);
        return;
    }
    if (offset == 0 && bytes == s.bytes) {
        s.host_data();
        s.host_valid = true;
    } else {
        s.refresh_host();
    }
    std::memcpy(s.host_data() + offset, src, bytes);
    for (auto& c : s.copies)
        c.valid = false;
}

void BufferBase::read_bytes(void* dst, size_t bytes, size_t offset) const {
    auto& s = *state_;
    detail::check_range(offset, bytes, s.bytes, "read");
    std::lock_guard lock(s.mutex);
    if (s.placement == Placement::DeviceOnly) {
        if (const detail::DeviceCopy* c = s.valid_copy())
            s.read_copy(*c, dst, offset, bytes);
        else
            std::memset(dst, 0, bytes);
        return;
    }
    s.refresh_host();
    std::memcpy(dst, s.host_data() + offset, bytes);
}

void* BufferBase::host_bytes() {
    auto& s = *state_;
    std::lock_guard lock(s.mutex);
    s.refresh_host();
    for (auto& c : s.copies)
        c.valid = false;
    return s.host_data();
}

const void* BufferBase::host_bytes() const {
    auto& s = *state_;
    std::lock_guard lock(s.mutex);
    s.refresh_host();
    return s.host_data();
}

} // namespace plexus
