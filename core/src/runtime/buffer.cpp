// Buffer residency: the host copy and one allocation per device, each marked current or not;
// data moves only when a launch or a host access needs it there.
#include "plexus/runtime.hpp"
#include "runtime/executor.hpp"
#include "runtime/runtime_impl.hpp"

#include <algorithm>
#include <cstring>
#include <spdlog/spdlog.h>

namespace plexus {
namespace detail {

BufferState::~BufferState() {
    for (auto& c : copies) {
        // A buffer is freed only when idle: wait for the queue that may still use it.
        try {
            c.ctx->sync();
        } catch (const std::exception& e) {
            // A destructor cannot throw; the failure belongs to an earlier launch, so say so.
            spdlog::warn("plexus: freeing a buffer on {}: {}", c.ctx->label, e.what());
        }
        c.ctx->backend->api().buffer_free(c.buffer);
    }
}

DeviceCopy* BufferState::copy_on(DeviceContext* ctx) {
    for (auto& c : copies)
        if (c.ctx == ctx) return &c;
    return nullptr;
}

const DeviceCopy* BufferState::valid_copy() const {
    for (auto& c : copies)
        if (c.valid) return &c;
    return nullptr;
}

void BufferState::refresh_host() {
    if (host_valid) return;
    host.resize(bytes);
    if (const DeviceCopy* c = valid_copy()) {
        std::lock_guard lock(c->ctx->mutex);
        const Backend& b = *c->ctx->backend;
        TraceSpan span(c->ctx->trace, c->ctx->label, "read to host", "transfer");
        span.args["bytes"] = bytes;
        b.check(b.api().buffer_read(c->ctx->queue, c->buffer, 0, host.data(), bytes), "buffer_read",
                c->ctx->label);
    } else {
        std::memset(host.data(), 0, bytes);
    }
    host_valid = true;
}

namespace {

// A buffer never written holds zeros. buffer_fill is optional: without it the zeros are
// written from a host block, a chunk at a time so that a large buffer costs little memory.
void zero_fill(DeviceContext& ctx, plx_buffer buffer, size_t bytes) {
    const Backend& b = *ctx.backend;
    if (b.api().buffer_fill) {
        const uint32_t zero = 0;
        size_t pattern = bytes % 4 == 0 ? 4 : 1;
        b.check(b.api().buffer_fill(ctx.queue, buffer, 0, &zero, pattern, bytes), "buffer_fill", ctx.label);
        return;
    }
    static const std::vector<unsigned char> zeros(size_t(1) << 20);
    for (size_t offset = 0; offset < bytes; offset += zeros.size()) {
        const size_t n = std::min(zeros.size(), bytes - offset);
        b.check(b.api().buffer_write(ctx.queue, buffer, offset, zeros.data(), n),
                "buffer_write (zeroing a new buffer, the plugin has no buffer_fill)", ctx.label);
    }
}

} // namespace

void BufferState::make_resident(DeviceContext* ctx) {
    const Backend& b = *ctx->backend;
    DeviceCopy* mine = copy_on(ctx);
    if (mine && mine->valid) return;
    if (!mine) {
        plx_buffer buf = nullptr;
        b.check(b.api().buffer_alloc(ctx->device, bytes, &buf), "buffer_alloc", ctx->label);
        copies.push_back({ctx, buf, false});
        mine = &copies.back();
    }
    // The only current copy is on another device: go through the host.
    if (!host_valid && valid_copy()) refresh_host();
    std::lock_guard lock(ctx->mutex);
    TraceSpan span(ctx->trace, ctx->label, host_valid ? "write from host" : "zero fill", "transfer");
    span.args["bytes"] = bytes;
    if (host_valid) {
        b.check(b.api().buffer_write(ctx->queue, mine->buffer, 0, host.data(), bytes), "buffer_write",
                ctx->label);
    } else {
        zero_fill(*ctx, mine->buffer, bytes);
    }
    mine->valid = true;
}

void BufferState::written_on(DeviceContext* ctx) {
    for (auto& c : copies) c.valid = c.ctx == ctx;
    host_valid = false;
}

} // namespace detail

BufferBase::BufferBase(Runtime& rt, ir::Type element, size_t count)
    : state_(std::make_unique<detail::BufferState>()) {
    if (!ir::is_storable(element))
        throw Error(ErrorCode::InvalidArgument, "a buffer of " + to_string(element) + " (buffers hold numbers, "
                                                "vectors, records and variants; use u8 for flags)");
    state_->exec = &rt.impl().executor();
    state_->element = element;
    state_->count = count;
    state_->bytes = count * ir::size_of(element);
}
BufferBase::BufferBase(BufferBase&&) noexcept = default;
BufferBase& BufferBase::operator=(BufferBase&&) noexcept = default;
BufferBase::~BufferBase() = default;

size_t BufferBase::size() const { return state_->count; }
size_t BufferBase::bytes() const { return state_->bytes; }
const ir::Type& BufferBase::element() const { return state_->element; }

static void check_range(size_t offset, size_t bytes, size_t size, const char* what) {
    if (offset > size || bytes > size - offset)
        throw Error(ErrorCode::InvalidArgument,
                    std::string(what) + " of " + std::to_string(bytes) + " bytes at offset " +
                        std::to_string(offset) + " is outside the buffer of " + std::to_string(size) + " bytes");
}

void BufferBase::write_bytes(const void* src, size_t bytes, size_t offset) {
    auto& s = *state_;
    check_range(offset, bytes, s.bytes, "write");
    std::lock_guard lock(s.mutex);
    if (offset == 0 && bytes == s.bytes) {
        s.host.resize(s.bytes);
        s.host_valid = true;
    } else {
        s.refresh_host();
    }
    std::memcpy(s.host.data() + offset, src, bytes);
    for (auto& c : s.copies) c.valid = false;
}

void BufferBase::read_bytes(void* dst, size_t bytes, size_t offset) const {
    auto& s = *state_;
    check_range(offset, bytes, s.bytes, "read");
    std::lock_guard lock(s.mutex);
    s.refresh_host();
    std::memcpy(dst, s.host.data() + offset, bytes);
}

void* BufferBase::host_bytes() {
    auto& s = *state_;
    std::lock_guard lock(s.mutex);
    s.refresh_host();
    for (auto& c : s.copies) c.valid = false;
    return s.host.data();
}

const void* BufferBase::host_bytes() const {
    auto& s = *state_;
    std::lock_guard lock(s.mutex);
    s.refresh_host();
    return s.host.data();
}

} // namespace plexus
