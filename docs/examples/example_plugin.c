/* The example backend of docs/writing-a-plugin.md: a complete, working, single-threaded Direct
 * plugin for the host CPU, in plain C99 against plexus/plugin.h alone. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plexus/plugin.h"

/* ---- errors: one message per thread, as last_error promises ---------------------------- */

static _Thread_local char g_error[512] = "";

static plx_status fail(plx_status status, const char* message) {
    snprintf(g_error, sizeof g_error, "%s", message);
    return status;
}

static const char* example_last_error(void) {
    return g_error;
}

/* ---- the one device: the host CPU -------------------------------------------------------- */

struct plx_device_s {
    int unused; /* a handle only needs an address */
};
static struct plx_device_s g_device;
static const plx_host_api* g_host;

static plx_status example_device_count(uint32_t* count) {
    if (count == NULL) return fail(PLX_ERROR_INVALID_ARGUMENT, "device_count: count is NULL");
    *count = 1;
    return PLX_OK;
}

static plx_status example_device_get(uint32_t index, plx_device* device) {
    if (device == NULL || index != 0)
        return fail(PLX_ERROR_INVALID_ARGUMENT, "device_get: the only device is index 0");
    *device = &g_device;
    return PLX_OK;
}

static plx_status example_device_info(plx_device device, plx_device_info* info) {
    if (device != &g_device || info == NULL)
        return fail(PLX_ERROR_INVALID_ARGUMENT, "device_info: not this plugin's device");
    /* Write only the fields that fit in the caller's struct_size: an older host has a smaller
     * struct. Building a full copy and copying the prefix does that in one place. */
    plx_device_info full;
    memset(&full, 0, sizeof full);
    full.struct_size = sizeof full;
    full.type = PLX_DEVICE_TYPE_CPU;
    snprintf(full.name, sizeof full.name, "example single-threaded CPU");
    snprintf(full.vendor, sizeof full.vendor, "plexus docs");
    full.compute_units = 1;
    full.max_work_group_size = 1024;
    full.max_work_group_dims[0] = full.max_work_group_dims[1] = full.max_work_group_dims[2] = 1024;
    full.subgroup_size = 1;
    full.memory_bytes = (uint64_t)1 << 30;
    full.max_alloc_bytes = (uint64_t)1 << 30;
    full.local_memory_bytes = 64 * 1024;
    full.fp64 = 1;
    full.subgroup_ops = PLX_SUBGROUP_KNOWN | PLX_SUBGROUP_ALL;
    full.matrix_ops = PLX_MATRIX_KNOWN | PLX_MATRIX_ALL | PLX_MATRIX_EMULATED;
    uint32_t size = info->struct_size < sizeof full ? info->struct_size : (uint32_t)sizeof full;
    memcpy((char*)info + sizeof info->struct_size, (const char*)&full + sizeof full.struct_size,
           size - sizeof info->struct_size);
    return PLX_OK;
}

/* ---- buffers: plain host memory ---------------------------------------------------------- */

struct plx_buffer_s {
    size_t bytes;
    unsigned char* data;
};

static plx_status example_buffer_alloc(plx_device device, size_t bytes, plx_buffer* buffer) {
    if (device != &g_device || bytes == 0 || buffer == NULL)
        return fail(PLX_ERROR_INVALID_ARGUMENT, "buffer_alloc: bad device, size 0 or NULL out");
    plx_buffer b = malloc(sizeof *b);
    if (b != NULL) b->data = malloc(bytes);
    if (b == NULL || b->data == NULL) {
        free(b);
        return fail(PLX_ERROR_OUT_OF_MEMORY, "buffer_alloc: malloc failed");
    }
    b->bytes = bytes;
    *buffer = b;
    return PLX_OK;
}

static void example_buffer_free(plx_buffer buffer) {
    if (buffer == NULL) return;
    free(buffer->data);
    free(buffer);
}

/* Every range is checked without overflow: offset + bytes could wrap. */
static int in_range(plx_buffer b, size_t offset, size_t bytes) {
    return b != NULL && offset <= b->bytes && bytes <= b->bytes - offset;
}

static plx_status example_buffer_write(plx_queue queue, plx_buffer buffer, size_t offset,
                                       const void* src, size_t bytes) {
    (void)queue; /* single-threaded: every command has finished when its call returns */
    if (!in_range(buffer, offset, bytes) || (src == NULL && bytes > 0))
        return fail(PLX_ERROR_INVALID_ARGUMENT, "buffer_write: range outside the buffer");
    if (bytes > 0) memcpy(buffer->data + offset, src, bytes);
    return PLX_OK;
}

static plx_status example_buffer_read(plx_queue queue, plx_buffer buffer, size_t offset, void* dst,
                                      size_t bytes) {
    (void)queue;
    if (!in_range(buffer, offset, bytes) || (dst == NULL && bytes > 0))
        return fail(PLX_ERROR_INVALID_ARGUMENT, "buffer_read: range outside the buffer");
    if (bytes > 0) memcpy(dst, buffer->data + offset, bytes);
    return PLX_OK;
}

static plx_status example_buffer_copy(plx_queue queue, plx_buffer dst, size_t dst_offset,
                                      plx_buffer src, size_t src_offset, size_t bytes) {
    (void)queue;
    if (!in_range(dst, dst_offset, bytes) || !in_range(src, src_offset, bytes))
        return fail(PLX_ERROR_INVALID_ARGUMENT, "buffer_copy: range outside a buffer");
    if (bytes > 0) memmove(dst->data + dst_offset, src->data + src_offset, bytes);
    return PLX_OK;
}

static plx_status example_buffer_fill(plx_queue queue, plx_buffer buffer, size_t offset,
                                      const void* pattern, size_t pattern_bytes, size_t bytes) {
    (void)queue;
    if (pattern == NULL ||
        (pattern_bytes != 1 && pattern_bytes != 2 && pattern_bytes != 4 && pattern_bytes != 8) ||
        bytes % pattern_bytes != 0)
        return fail(PLX_ERROR_INVALID_ARGUMENT, "buffer_fill: pattern of 1, 2, 4 or 8 bytes, "
                                                "bytes a multiple of it");
    if (!in_range(buffer, offset, bytes))
        return fail(PLX_ERROR_INVALID_ARGUMENT, "buffer_fill: range outside the buffer");
    for (size_t i = 0; i < bytes; i += pattern_bytes)
        memcpy(buffer->data + offset + i, pattern, pattern_bytes);
    return PLX_OK;
}

static void* example_buffer_host_ptr(plx_buffer buffer) {
    return buffer != NULL ? buffer->data : NULL;
}

/* ---- queues: nothing to order, since every command runs to completion in its call ------- */

struct plx_queue_s {
    plx_device device;
};

static plx_status example_queue_create(plx_device device, uint32_t flags, plx_queue* queue) {
    (void)flags; /* no profiling: event_profile is NULL */
    if (device != &g_device || queue == NULL)
        return fail(PLX_ERROR_INVALID_ARGUMENT, "queue_create: not this plugin's device");
    plx_queue q = malloc(sizeof *q);
    if (q == NULL) return fail(PLX_ERROR_OUT_OF_MEMORY, "queue_create: malloc failed");
    q->device = device;
    *queue = q;
    return PLX_OK;
}

static plx_status example_queue_sync(plx_queue queue) {
    if (queue == NULL) return fail(PLX_ERROR_INVALID_ARGUMENT, "queue_sync: queue is NULL");
    return PLX_OK;
}

static void example_queue_destroy(plx_queue queue) {
    free(queue);
}

/* ---- launch_host: run the core's work-group function once per group -------------------- */

static plx_status example_launch_host(plx_queue queue, plx_workgroup_fn fn, void* user,
                                      const plx_launch_dims* dims, plx_event* event) {
    if (queue == NULL || fn == NULL || dims == NULL || dims->dims < 1 || dims->dims > 3)
        return fail(PLX_ERROR_INVALID_ARGUMENT, "launch_host: NULL argument or dims not 1, 2 or 3");
    plx_workgroup_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.struct_size = sizeof ctx;
    ctx.dims = dims->dims;
    uint64_t local_items = 1;
    for (int d = 0; d < 3; ++d) {
        uint64_t global = d < (int)dims->dims ? dims->global_size[d] : 1;
        uint32_t local = d < (int)dims->dims ? dims->local_size[d] : 1;
        if (global == 0 || local == 0)
            return fail(PLX_ERROR_INVALID_ARGUMENT, "launch_host: a size of 0");
        ctx.global_size[d] = global;
        ctx.local_size[d] = local;
        ctx.num_groups[d] = (global + local - 1) / local; /* whole groups, as the ABI says */
        local_items *= local;
    }
    if (local_items > 1024)
        return fail(PLX_ERROR_OUT_OF_RESOURCES, "launch_host: more than 1024 work-items per group");
    if (dims->dynamic_local_bytes > 64 * 1024)
        return fail(PLX_ERROR_OUT_OF_RESOURCES, "launch_host: more than 64 KiB of local memory");
    /* 64-byte aligned, as plx_workgroup_ctx promises. */
    size_t local_bytes = ((size_t)dims->dynamic_local_bytes + 63) / 64 * 64;
    void* local_mem = NULL;
    if (local_bytes > 0 && (local_mem = aligned_alloc(64, local_bytes)) == NULL)
        return fail(PLX_ERROR_OUT_OF_MEMORY, "launch_host: no memory for local memory");
    ctx.local_mem = local_mem;
    ctx.local_mem_bytes = dims->dynamic_local_bytes;
    for (uint64_t z = 0; z < ctx.num_groups[2]; ++z)
        for (uint64_t y = 0; y < ctx.num_groups[1]; ++y)
            for (uint64_t x = 0; x < ctx.num_groups[0]; ++x) {
                ctx.group_id[0] = x;
                ctx.group_id[1] = y;
                ctx.group_id[2] = z;
                fn(&ctx, user);
            }
    free(local_mem);
    if (event != NULL) *event = NULL; /* done already: a NULL event is complete */
    return PLX_OK;
}

static plx_status example_event_wait(plx_event event) {
    (void)event;
    return PLX_OK;
}

static void example_event_release(plx_event event) {
    (void)event;
}

/* ---- the descriptor ---------------------------------------------------------------------- */

/* The core's host code generator emits every catalog intrinsic inline for a Direct backend,
 * so the table claims every capability class with PLX_INTRINSIC_INLINE, and the device states
 * every subgroup family (one work-item wide) and matrix type (emulated) in device_info. A
 * plugin claims only the classes it names: one that names none gets ABI 1.0's (core,
 * atomics, math), whatever a later header adds. */
#define PLX_CATALOG_CLASSES PLX_CLASS_ALL
static const plx_intrinsic g_intrinsics[] = {
#define PLX_INTRINSIC(id, signature, convergence, opencl_c, cuda_c, nvvm)                          \
    {.name = #id, .spelling = NULL, .host_fn = NULL, .flags = PLX_INTRINSIC_INLINE},
#include "plexus/intrinsics.def"
#undef PLX_INTRINSIC
};

static void example_shutdown(void) {
    if (g_host != NULL && g_host->log != NULL)
        g_host->log(g_host->host_ctx, PLX_LOG_DEBUG, "shut down");
    g_host = NULL;
}

PLX_EXPORT plx_status plx_plugin_init(uint32_t host_abi_version, const plx_host_api* host,
                                      plx_plugin* plugin) {
    if (PLX_VERSION_MAJOR(host_abi_version) != PLX_ABI_VERSION_MAJOR)
        return fail(PLX_ERROR_ABI_MISMATCH, "example plugin speaks plugin ABI 1.x");
    if (plugin == NULL) return fail(PLX_ERROR_INVALID_ARGUMENT, "plugin is NULL");
    /* Fill a full descriptor, then copy what fits in the host's struct_size. */
    plx_plugin d = {
        .struct_size = sizeof(plx_plugin),
        .abi_version = PLX_ABI_VERSION,
        .name = "example",
        .version = "1.0.0",
        .vendor = "plexus docs",
        .priority = 1,
        .execution_model = PLX_EXEC_DIRECT,
        .intrinsics = g_intrinsics,
        .num_intrinsics = sizeof g_intrinsics / sizeof g_intrinsics[0],
        .last_error = example_last_error,
        .shutdown = example_shutdown,
        .device_count = example_device_count,
        .device_get = example_device_get,
        .device_info = example_device_info,
        .buffer_alloc = example_buffer_alloc,
        .buffer_free = example_buffer_free,
        .buffer_write = example_buffer_write,
        .buffer_read = example_buffer_read,
        .buffer_copy = example_buffer_copy,
        .buffer_fill = example_buffer_fill,
        .buffer_host_ptr = example_buffer_host_ptr,
        .queue_create = example_queue_create,
        .queue_sync = example_queue_sync,
        .queue_destroy = example_queue_destroy,
        .launch_host = example_launch_host,
        .event_wait = example_event_wait,
        .event_release = example_event_release,
    };
    uint32_t size = plugin->struct_size < sizeof d ? plugin->struct_size : (uint32_t)sizeof d;
    d.struct_size = size;
    memcpy(plugin, &d, size);
    g_host = host;
    if (host != NULL && host->log != NULL) host->log(host->host_ctx, PLX_LOG_DEBUG, "initialized");
    return PLX_OK;
}
