// Device buffers of the CUDA backend: allocation, pipelined host transfers through two pinned
// staging buffers per queue, device copies and pattern fills.
#include "cuda_plugin.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace plx_cuda {
namespace {

// Fill kernels for what cuMemsetD*Async cannot do: 8-byte patterns, and 2 / 4 byte patterns at
// an address not aligned to the pattern. Hand-written PTX, JIT-compiled for the device once.
constexpr char kFillPtx[] = R"PTX(
.version 6.0
.target sm_50
.address_size 64

.visible .entry plx_fill_u64(.param .u64 dst_param, .param .u64 value_param, .param .u64 count_param)
{
    .reg .pred %p<2>;
    .reg .b32 %r<5>;
    .reg .b64 %rd<9>;
    ld.param.u64 %rd1, [dst_param];
    ld.param.u64 %rd2, [value_param];
    ld.param.u64 %rd3, [count_param];
    cvta.to.global.u64 %rd1, %rd1;
    mov.u32 %r1, %ctaid.x;
    mov.u32 %r2, %ntid.x;
    mov.u32 %r3, %tid.x;
    mov.u32 %r4, %nctaid.x;
    mul.wide.u32 %rd4, %r1, %r2;
    cvt.u64.u32 %rd5, %r3;
    add.u64 %rd4, %rd4, %rd5;
    mul.wide.u32 %rd6, %r4, %r2;
$L_loop:
    setp.ge.u64 %p1, %rd4, %rd3;
    @%p1 bra $L_done;
    shl.b64 %rd7, %rd4, 3;
    add.u64 %rd8, %rd1, %rd7;
    st.global.u64 [%rd8], %rd2;
    add.u64 %rd4, %rd4, %rd6;
    bra.uni $L_loop;
$L_done:
    ret;
}

.visible .entry plx_fill_bytes(.param .u64 dst_param, .param .u64 pattern_param, .param .u64 width_param, .param .u64 count_param)
{
    .reg .pred %p<2>;
    .reg .b16 %rs<2>;
    .reg .b32 %r<6>;
    .reg .b64 %rd<12>;
    ld.param.u64 %rd1, [dst_param];
    ld.param.u64 %rd2, [pattern_param];
    ld.param.u64 %rd9, [width_param];
    ld.param.u64 %rd3, [count_param];
    cvta.to.global.u64 %rd1, %rd1;
    mov.u32 %r1, %ctaid.x;
    mov.u32 %r2, %ntid.x;
    mov.u32 %r3, %tid.x;
    mov.u32 %r4, %nctaid.x;
    mul.wide.u32 %rd4, %r1, %r2;
    cvt.u64.u32 %rd5, %r3;
    add.u64 %rd4, %rd4, %rd5;
    mul.wide.u32 %rd6, %r4, %r2;
$L_loop:
    setp.ge.u64 %p1, %rd4, %rd3;
    @%p1 bra $L_done;
    rem.u64 %rd7, %rd4, %rd9;
    cvt.u32.u64 %r5, %rd7;
    shl.b32 %r5, %r5, 3;
    shr.b64 %rd10, %rd2, %r5;
    cvt.u16.u64 %rs1, %rd10;
    add.u64 %rd8, %rd1, %rd4;
    st.global.u8 [%rd8], %rs1;
    add.u64 %rd4, %rd4, %rd6;
    bra.uni $L_loop;
$L_done:
    ret;
}
)PTX";

plx_status check_range(const char* fn, plx_buffer buffer, size_t offset, size_t bytes,
                       const char* which = "buffer") {
    if (offset > buffer->bytes || bytes > buffer->bytes - offset)
        return fail(PLX_ERROR_INVALID_ARGUMENT,
                    std::string("cuda: ") + fn + ": " + which + " range [" +
                        std::to_string(offset) + ", " + std::to_string(offset) + " + " +
                        std::to_string(bytes) + ") exceeds the buffer's " +
                        std::to_string(buffer->bytes) + " bytes");
    return PLX_OK;
}

plx_status check_queue_buffer(const char* fn, plx_queue queue, plx_buffer buffer) {
    if (queue == nullptr || buffer == nullptr)
        return fail(PLX_ERROR_INVALID_ARGUMENT,
                    std::string("cuda: ") + fn + ": queue or buffer is NULL");
    if (queue->device != buffer->device)
        return fail(PLX_ERROR_INVALID_ARGUMENT,
                    std::string("cuda: ") + fn + ": the buffer belongs to device " +
                        std::to_string(buffer->device->index) + ", the queue to device " +
                        std::to_string(queue->device->index));
    return PLX_OK;
}

plx_status ensure_staging(plx_queue q) {
    if (q->staging[0] != nullptr) return PLX_OK;
    for (int s = 0; s < 2; ++s) {
        PLX_CU_TRY("allocating a pinned staging buffer", cuMemAllocHost, &q->staging[s],
                   plx_queue_s::kStagingBytes);
        PLX_CU_TRY("creating a staging event", cuEventCreate, &q->staging_done[s],
                   CU_EVENT_DISABLE_TIMING);
    }
    return PLX_OK;
}

plx_status load_fill_kernels(plx_device_s* d) {
    std::call_once(d->fill_once, [d] {
        std::vector<char> cubin;
        plx_status s = load_ptx_to_cubin(kFillPtx, sizeof kFillPtx - 1, "", &cubin);
        if (s == PLX_OK) s = load_cubin(cubin, &d->fill_module);
        if (s == PLX_OK) {
            CUresult r = drv().cuModuleGetFunction(&d->fill_u64, d->fill_module, "plx_fill_u64");
            if (r == CUDA_SUCCESS)
                r = drv().cuModuleGetFunction(&d->fill_bytes, d->fill_module, "plx_fill_bytes");
            if (r != CUDA_SUCCESS)
                s = cu_error(PLX_ERROR_INTERNAL, "finding the fill kernels",
                             PLX_CUDA_NAME(cuModuleGetFunction), r);
        }
        d->fill_status = s;
        if (s != PLX_OK)
            d->fill_error = std::string("cuda: loading the fill kernels: ") + last_error_text();
    });
    if (d->fill_status != PLX_OK) return fail(d->fill_status, d->fill_error);
    return PLX_OK;
}

plx_status run_fill_kernel(plx_queue q, CUfunction fn, CUdeviceptr dst, uint64_t value,
                           uint64_t width, uint64_t count, bool with_width) {
    constexpr unsigned kThreads = 256;
    // A grid-stride loop: enough blocks to fill every SM, no more.
    uint64_t blocks = std::min<uint64_t>((count + kThreads - 1) / kThreads,
                                         uint64_t(q->device->info.compute_units) * 16);
    blocks = std::max<uint64_t>(blocks, 1);
    void* params4[] = {&dst, &value, &width, &count};
    void* params3[] = {&dst, &value, &count};
    PLX_CU_TRY("launching the fill kernel", cuLaunchKernel, fn, static_cast<unsigned>(blocks), 1, 1,
               kThreads, 1, 1, 0, q->stream, with_width ? params4 : params3, nullptr);
    return PLX_OK;
}

} // namespace

void release_fill_module(plx_device_s* d) {
    if (d->fill_module != nullptr) drv().cuModuleUnload(d->fill_module);
    d->fill_module = nullptr;
}

plx_status buffer_alloc(plx_device device, size_t bytes, plx_buffer* buffer) {
    if (device == nullptr || buffer == nullptr)
        return fail(PLX_ERROR_INVALID_ARGUMENT, "cuda: buffer_alloc: device or buffer is NULL");
    if (bytes == 0) return fail(PLX_ERROR_INVALID_ARGUMENT, "cuda: buffer_alloc: bytes is 0");
    if (plx_status s = make_current(device); s != PLX_OK) return s;
    CUdeviceptr ptr = 0;
    CUresult r = drv().cuMemAlloc(&ptr, bytes);
    if (r != CUDA_SUCCESS) {
        std::string msg = "cuda: cannot allocate " + std::to_string(bytes) + " bytes on device " +
                          std::to_string(device->index) + " (" + device->info.name +
                          "): " + describe(PLX_CUDA_NAME(cuMemAlloc), r);
        size_t free_bytes = 0, total_bytes = 0;
        if (drv().cuMemGetInfo(&free_bytes, &total_bytes) == CUDA_SUCCESS)
            msg +=
                "; " + std::to_string(free_bytes) + " bytes free of " + std::to_string(total_bytes);
        return fail(
            status_of(r) == PLX_ERROR_OUT_OF_MEMORY ? PLX_ERROR_OUT_OF_MEMORY : status_of(r), msg);
    }
    auto* b = new (std::nothrow) plx_buffer_s{device, ptr, bytes};
    if (b == nullptr) {
        drv().cuMemFree(ptr);
        return fail(PLX_ERROR_OUT_OF_MEMORY, "cuda: buffer_alloc: out of host memory");
    }
    *buffer = b;
    return PLX_OK;
}

void buffer_free(plx_buffer buffer) {
    if (buffer == nullptr) return;
    // A failure here leaves nothing the caller could do; the memory goes with the context.
    if (buffer->owned && make_current(buffer->device) == PLX_OK) drv().cuMemFree(buffer->ptr);
    delete buffer;
}

namespace {

// Whether the driver knows `p` as page-locked host memory (cuMemHostAlloc'd or registered):
// cuPointerGetAttribute fails for ordinary pageable memory.
bool page_locked(const void* p) {
    if (drv().cuPointerGetAttribute == nullptr) return false;
    unsigned int type = 0;
    return drv().cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                       reinterpret_cast<CUdeviceptr>(p)) == CUDA_SUCCESS &&
           type == CU_MEMORYTYPE_HOST;
}

} // namespace

plx_status buffer_write(plx_queue queue, plx_buffer buffer, size_t offset, const void* src,
                        size_t bytes) {
    if (plx_status s = check_queue_buffer("buffer_write", queue, buffer); s != PLX_OK) return s;
    if (plx_status s = check_range("buffer_write", buffer, offset, bytes); s != PLX_OK) return s;
    if (bytes == 0) return PLX_OK;
    if (src == nullptr) return fail(PLX_ERROR_INVALID_ARGUMENT, "cuda: buffer_write: src is NULL");
    if (plx_status s = make_current(queue->device); s != PLX_OK) return s;
    if (page_locked(src)) { // the copy engine reads it directly
        PLX_CU_TRY("buffer_write", cuMemcpyHtoDAsync, buffer->ptr + offset, src, bytes,
                   queue->stream);
        PLX_CU_TRY("buffer_write: waiting for the queue", cuStreamSynchronize, queue->stream);
        return PLX_OK;
    }
    if (plx_status s = ensure_staging(queue); s != PLX_OK) return s;

    // While the copy engine moves one staging buffer to the device, the host fills the other.
    const char* from = static_cast<const char*>(src);
    bool in_flight[2] = {false, false};
    int slot = 0;
    for (size_t done = 0; done < bytes; slot ^= 1) {
        size_t n = std::min(plx_queue_s::kStagingBytes, bytes - done);
        if (in_flight[slot])
            PLX_CU_TRY("buffer_write: waiting for a staging buffer", cuEventSynchronize,
                       queue->staging_done[slot]);
        host_copy(queue->staging[slot], from + done, n);
        PLX_CU_TRY("buffer_write", cuMemcpyHtoDAsync, buffer->ptr + offset + done,
                   queue->staging[slot], n, queue->stream);
        PLX_CU_TRY("buffer_write", cuEventRecord, queue->staging_done[slot], queue->stream);
        in_flight[slot] = true;
        done += n;
    }
    PLX_CU_TRY("buffer_write: waiting for the queue", cuStreamSynchronize, queue->stream);
    return PLX_OK;
}

plx_status buffer_read(plx_queue queue, plx_buffer buffer, size_t offset, void* dst, size_t bytes) {
    if (plx_status s = check_queue_buffer("buffer_read", queue, buffer); s != PLX_OK) return s;
    if (plx_status s = check_range("buffer_read", buffer, offset, bytes); s != PLX_OK) return s;
    if (dst == nullptr) return fail(PLX_ERROR_INVALID_ARGUMENT, "cuda: buffer_read: dst is NULL");
    if (plx_status s = make_current(queue->device); s != PLX_OK) return s;
    if (bytes == 0) {
        // Still a read: it waits for the queue and reports its failures.
        PLX_CU_TRY("buffer_read: waiting for the queue", cuStreamSynchronize, queue->stream);
        return PLX_OK;
    }
    if (page_locked(dst)) { // the copy engine writes it directly
        PLX_CU_TRY("buffer_read", cuMemcpyDtoHAsync, dst, buffer->ptr + offset, bytes,
                   queue->stream);
        PLX_CU_TRY("buffer_read: waiting for the queue", cuStreamSynchronize, queue->stream);
        return PLX_OK;
    }
    if (plx_status s = ensure_staging(queue); s != PLX_OK) return s;

    // The copy engine fills one staging buffer while the host empties the other.
    char* to = static_cast<char*>(dst);
    size_t pending_at = 0, pending_n = 0;
    int pending_slot = -1;
    int slot = 0;
    auto drain = [&]() -> plx_status {
        PLX_CU_TRY("buffer_read: waiting for the copy", cuEventSynchronize,
                   queue->staging_done[pending_slot]);
        host_copy(to + pending_at, queue->staging[pending_slot], pending_n);
        return PLX_OK;
    };
    for (size_t done = 0; done < bytes; slot ^= 1) {
        size_t n = std::min(plx_queue_s::kStagingBytes, bytes - done);
        PLX_CU_TRY("buffer_read", cuMemcpyDtoHAsync, queue->staging[slot],
                   buffer->ptr + offset + done, n, queue->stream);
        PLX_CU_TRY("buffer_read", cuEventRecord, queue->staging_done[slot], queue->stream);
        if (pending_slot >= 0)
            if (plx_status s = drain(); s != PLX_OK) return s;
        pending_slot = slot;
        pending_at = done;
        pending_n = n;
        done += n;
    }
    return drain();
}

plx_status buffer_copy(plx_queue queue, plx_buffer dst, size_t dst_offset, plx_buffer src,
                       size_t src_offset, size_t bytes) {
    if (plx_status s = check_queue_buffer("buffer_copy", queue, dst); s != PLX_OK) return s;
    if (plx_status s = check_queue_buffer("buffer_copy", queue, src); s != PLX_OK) return s;
    if (plx_status s = check_range("buffer_copy", dst, dst_offset, bytes, "destination");
        s != PLX_OK)
        return s;
    if (plx_status s = check_range("buffer_copy", src, src_offset, bytes, "source"); s != PLX_OK)
        return s;
    if (bytes == 0) return PLX_OK;
    if (plx_status s = make_current(queue->device); s != PLX_OK) return s;
    PLX_CU_TRY("buffer_copy", cuMemcpyDtoDAsync, dst->ptr + dst_offset, src->ptr + src_offset,
               bytes, queue->stream);
    return PLX_OK;
}

plx_status buffer_fill(plx_queue queue, plx_buffer buffer, size_t offset, const void* pattern,
                       size_t pattern_bytes, size_t bytes) {
    if (plx_status s = check_queue_buffer("buffer_fill", queue, buffer); s != PLX_OK) return s;
    if (pattern == nullptr)
        return fail(PLX_ERROR_INVALID_ARGUMENT, "cuda: buffer_fill: pattern is NULL");
    if (plx_status s = plx_support::check_fill_pattern("cuda: buffer_fill: ", pattern_bytes, bytes);
        s != PLX_OK)
        return s;
    if (plx_status s = check_range("buffer_fill", buffer, offset, bytes); s != PLX_OK) return s;
    if (bytes == 0) return PLX_OK;
    if (plx_status s = make_current(queue->device); s != PLX_OK) return s;

    uint64_t value = 0; // the pattern's bytes, little-endian, as the kernels read them
    std::memcpy(&value, pattern, pattern_bytes);
    const CUdeviceptr dst = buffer->ptr + offset;
    const bool aligned = dst % pattern_bytes == 0;
    const size_t count = bytes / pattern_bytes;
    if (pattern_bytes == 1) {
        PLX_CU_TRY("buffer_fill", cuMemsetD8Async, dst, static_cast<unsigned char>(value), count,
                   queue->stream);
    } else if (pattern_bytes == 2 && aligned) {
        PLX_CU_TRY("buffer_fill", cuMemsetD16Async, dst, static_cast<unsigned short>(value), count,
                   queue->stream);
    } else if (pattern_bytes == 4 && aligned) {
        PLX_CU_TRY("buffer_fill", cuMemsetD32Async, dst, static_cast<unsigned int>(value), count,
                   queue->stream);
    } else {
        if (plx_status s = load_fill_kernels(queue->device); s != PLX_OK) return s;
        if (pattern_bytes == 8 && aligned)
            return run_fill_kernel(queue, queue->device->fill_u64, dst, value, 0, count, false);
        return run_fill_kernel(queue, queue->device->fill_bytes, dst, value, pattern_bytes, bytes,
                               true);
    }
    return PLX_OK;
}

// ---- ABI 1.1 ------------------------------------------------------------------------------

plx_status buffer_write_async(plx_queue queue, plx_buffer buffer, size_t offset, const void* src,
                              size_t bytes) {
    if (plx_status s = check_queue_buffer("buffer_write_async", queue, buffer); s != PLX_OK)
        return s;
    if (plx_status s = check_range("buffer_write_async", buffer, offset, bytes); s != PLX_OK)
        return s;
    if (bytes == 0) return PLX_OK;
    if (src == nullptr)
        return fail(PLX_ERROR_INVALID_ARGUMENT, "cuda: buffer_write_async: src is NULL");
    if (plx_status s = make_current(queue->device); s != PLX_OK) return s;
    // From page-locked memory the copy engine reads src later, without the host. Pageable
    // memory goes through buffer_write's double-buffered staging, whose parallel host copy
    // is faster than the driver's own staging; it returns when done, which the contract allows.
    if (!page_locked(src)) return buffer_write(queue, buffer, offset, src, bytes);
    PLX_CU_TRY("buffer_write_async", cuMemcpyHtoDAsync, buffer->ptr + offset, src, bytes,
               queue->stream);
    return PLX_OK;
}

plx_status buffer_read_async(plx_queue queue, plx_buffer buffer, size_t offset, void* dst,
                             size_t bytes) {
    if (plx_status s = check_queue_buffer("buffer_read_async", queue, buffer); s != PLX_OK)
        return s;
    if (plx_status s = check_range("buffer_read_async", buffer, offset, bytes); s != PLX_OK)
        return s;
    if (bytes == 0) return PLX_OK;
    if (dst == nullptr)
        return fail(PLX_ERROR_INVALID_ARGUMENT, "cuda: buffer_read_async: dst is NULL");
    if (plx_status s = make_current(queue->device); s != PLX_OK) return s;
    // Pageable memory: buffer_read's staging, done on return (see buffer_write_async).
    if (!page_locked(dst)) return buffer_read(queue, buffer, offset, dst, bytes);
    PLX_CU_TRY("buffer_read_async", cuMemcpyDtoHAsync, dst, buffer->ptr + offset, bytes,
               queue->stream);
    return PLX_OK;
}

namespace {

// Enables peer access from `accessor`'s context to `peer`'s memory once per ordered pair, where
// the hardware allows it. The caller has made accessor's context current. Never fails: without
// peer access cuMemcpyPeerAsync stages through the host, which is slower but correct.
void enable_peer_access(plx_device_s* accessor, plx_device_s* peer) {
    std::lock_guard lock(accessor->peer_mutex);
    if (accessor->peer_state.size() < devices().size())
        accessor->peer_state.resize(devices().size(), 0);
    uint8_t& state = accessor->peer_state[peer->index];
    if (state != 0) return;
    state = 2;
    const std::string pair = "cuda: device " + std::to_string(accessor->index) + " -> device " +
                             std::to_string(peer->index) + ": ";
    if (drv().cuDeviceCanAccessPeer == nullptr || drv().cuCtxEnablePeerAccess == nullptr) {
        log(PLX_LOG_INFO, pair + "the driver has no peer access functions; peer copies are staged");
        return;
    }
    int can = 0;
    CUresult r = drv().cuDeviceCanAccessPeer(&can, accessor->dev, peer->dev);
    if (r != CUDA_SUCCESS) {
        log(PLX_LOG_WARN,
            pair + describe(PLX_CUDA_NAME(cuDeviceCanAccessPeer), r) + "; peer copies are staged");
        return;
    }
    if (can == 0) {
        log(PLX_LOG_INFO,
            pair + "no peer access between these GPUs; peer copies are staged by the driver");
        return;
    }
    r = drv().cuCtxEnablePeerAccess(peer->ctx, 0);
    if (r != CUDA_SUCCESS && r != CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED) {
        log(PLX_LOG_WARN,
            pair + describe(PLX_CUDA_NAME(cuCtxEnablePeerAccess), r) + "; peer copies are staged");
        return;
    }
    state = 1;
    log(PLX_LOG_DEBUG, pair + "peer access enabled");
}

} // namespace

plx_status buffer_copy_peer(plx_queue queue, plx_buffer dst, size_t dst_offset, plx_buffer src,
                            size_t src_offset, size_t bytes) {
    if (queue == nullptr || dst == nullptr || src == nullptr)
        return fail(PLX_ERROR_INVALID_ARGUMENT,
                    "cuda: buffer_copy_peer: queue, dst or src is NULL");
    if (dst->device == src->device)
        return fail(PLX_ERROR_INVALID_ARGUMENT,
                    "cuda: buffer_copy_peer: both buffers are on device " +
                        std::to_string(dst->device->index) +
                        " (buffer_copy copies within one device)");
    if (queue->device != dst->device && queue->device != src->device)
        return fail(PLX_ERROR_INVALID_ARGUMENT, "cuda: buffer_copy_peer: the queue is on device " +
                                                    std::to_string(queue->device->index) +
                                                    ", the buffers on devices " +
                                                    std::to_string(dst->device->index) + " and " +
                                                    std::to_string(src->device->index));
    if (plx_status s = check_range("buffer_copy_peer", dst, dst_offset, bytes, "destination");
        s != PLX_OK)
        return s;
    if (plx_status s = check_range("buffer_copy_peer", src, src_offset, bytes, "source");
        s != PLX_OK)
        return s;
    if (bytes == 0) return PLX_OK;
    PLX_CU_NEED("buffer_copy_peer", cuMemcpyPeerAsync);
    plx_device_s* peer = queue->device == dst->device ? src->device : dst->device;
    if (plx_status s = retain_context(peer); s != PLX_OK) return s;
    if (plx_status s = make_current(queue->device); s != PLX_OK) return s;
    // The queue's context runs the copy and so accesses the other device's memory.
    enable_peer_access(queue->device, peer);
    PLX_CU_TRY("buffer_copy_peer", cuMemcpyPeerAsync, dst->ptr + dst_offset, dst->device->ctx,
               src->ptr + src_offset, src->device->ctx, bytes, queue->stream);
    return PLX_OK;
}

plx_status host_alloc(plx_device device, size_t bytes, void** ptr) {
    if (device == nullptr || ptr == nullptr)
        return fail(PLX_ERROR_INVALID_ARGUMENT, "cuda: host_alloc: device or ptr is NULL");
    if (bytes == 0) return fail(PLX_ERROR_INVALID_ARGUMENT, "cuda: host_alloc: bytes is 0");
    PLX_CU_NEED("host_alloc", cuMemHostAlloc);
    if (plx_status s = make_current(device); s != PLX_OK) return s;
    void* p = nullptr;
    // Portable: pinned for every context, so transfers of any device read it at full speed.
    CUresult r = drv().cuMemHostAlloc(&p, bytes, CU_MEMHOSTALLOC_PORTABLE);
    if (r != CUDA_SUCCESS) {
        return fail(status_of(r),
                    "cuda: host_alloc: cannot pin " + std::to_string(bytes) +
                        " bytes of host memory: " + describe(PLX_CUDA_NAME(cuMemHostAlloc), r));
    }
    *ptr = p;
    return PLX_OK;
}

void host_free(plx_device device, void* ptr) {
    if (ptr == nullptr) return;
    // cuMemFreeHost needs a context; any works for portable memory, the device's is at hand.
    if (device != nullptr && make_current(device) != PLX_OK) return;
    drv().cuMemFreeHost(ptr);
}

plx_status buffer_wrap(plx_device device, uint64_t native, size_t bytes, plx_buffer* buffer) {
    if (device == nullptr || buffer == nullptr)
        return fail(PLX_ERROR_INVALID_ARGUMENT, "cuda: buffer_wrap: device or buffer is NULL");
    if (native == 0)
        return fail(PLX_ERROR_INVALID_ARGUMENT, "cuda: buffer_wrap: the CUdeviceptr is 0");
    if (bytes == 0) return fail(PLX_ERROR_INVALID_ARGUMENT, "cuda: buffer_wrap: bytes is 0");
    if (plx_status s = make_current(device); s != PLX_OK) return s;
    const CUdeviceptr ptr = static_cast<CUdeviceptr>(native);
    char hex[32];
    std::snprintf(hex, sizeof hex, "0x%llx", static_cast<unsigned long long>(native));
    const std::string what = std::string("cuda: buffer_wrap: ") + hex;
    // Checked where the driver can tell: CUDA memory, on this device, long enough.
    if (drv().cuPointerGetAttribute != nullptr) {
        unsigned int type = 0;
        CUresult r = drv().cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, ptr);
        if (r != CUDA_SUCCESS)
            return fail(PLX_ERROR_INVALID_ARGUMENT,
                        what + " is not an allocation the CUDA driver knows (" +
                            describe(PLX_CUDA_NAME(cuPointerGetAttribute), r) + ")");
        // Managed memory is any device's and the host's; its type and ordinal say little.
        int managed = 0;
        if (drv().cuPointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, ptr) !=
            CUDA_SUCCESS)
            managed = 0;
        if (!managed && type == CU_MEMORYTYPE_HOST)
            return fail(PLX_ERROR_INVALID_ARGUMENT,
                        what + " is host memory, not device memory of device " +
                            std::to_string(device->index));
        int ordinal = -1;
        r = drv().cuPointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, ptr);
        if (!managed && r == CUDA_SUCCESS && ordinal != static_cast<int>(device->dev))
            return fail(PLX_ERROR_INVALID_ARGUMENT,
                        what + " is memory of CUDA device " + std::to_string(ordinal) +
                            ", not of device " + std::to_string(device->index) + " (CUDA device " +
                            std::to_string(device->dev) + ")");
        CUdeviceptr start = 0;
        size_t range = 0;
        r = drv().cuPointerGetAttribute(&start, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, ptr);
        if (r == CUDA_SUCCESS)
            r = drv().cuPointerGetAttribute(&range, CU_POINTER_ATTRIBUTE_RANGE_SIZE, ptr);
        if (r == CUDA_SUCCESS && start <= ptr && ptr - start <= range) {
            const size_t available = range - static_cast<size_t>(ptr - start);
            if (bytes > available)
                return fail(PLX_ERROR_INVALID_ARGUMENT,
                            what + ": " + std::to_string(bytes) +
                                " bytes asked, but its allocation has only " +
                                std::to_string(available) + " bytes from there");
        }
    }
    auto* b = new (std::nothrow) plx_buffer_s{device, ptr, bytes, false};
    if (b == nullptr) return fail(PLX_ERROR_OUT_OF_MEMORY, "cuda: buffer_wrap: out of host memory");
    *buffer = b;
    return PLX_OK;
}

plx_status buffer_native(plx_buffer buffer, uint64_t* native) {
    if (buffer == nullptr || native == nullptr)
        return fail(PLX_ERROR_INVALID_ARGUMENT, "cuda: buffer_native: buffer or native is NULL");
    *native = static_cast<uint64_t>(buffer->ptr);
    return PLX_OK;
}

} // namespace plx_cuda
