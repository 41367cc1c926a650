/* Shared body of the fake plugins of the abi suite: a minimal working Direct backend (one fake
 * CPU device, malloc'ed buffers) whose descriptor each fake then bends to its purpose.
 * FAKE_MARKER_DIR, when set, receives NAME.log with one line per init / shutdown. */
#ifndef FAKE_COMMON_H
#define FAKE_COMMON_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plexus/plugin.h"

/* Each fake uses only part of this header. */
#define FAKE_STATIC static __attribute__((unused))

FAKE_STATIC __thread char fake_error[256] = "";
FAKE_STATIC const char* fake_name_for_marker = "unnamed";

FAKE_STATIC plx_status fake_fail(plx_status s, const char* msg) {
    snprintf(fake_error, sizeof fake_error, "%s", msg);
    return s;
}
FAKE_STATIC const char* fake_last_error(void) {
    return fake_error;
}

/* Whether this is a validation child (plexus-plugin-check, as the kernel shortens it). */
FAKE_STATIC int fake_in_validation_child(void) {
    char comm[32] = "";
    FILE* f = fopen("/proc/self/comm", "r");
    if (f == NULL) return 0;
    if (fgets(comm, sizeof comm, f) == NULL) comm[0] = '\0';
    fclose(f);
    return strncmp(comm, "plexus-plugin-c", 15) == 0;
}

/* Appends a line to NAME.log; a validation child's lines start with "child ". */
FAKE_STATIC void fake_mark(const char* event) {
    const char* dir = getenv("FAKE_MARKER_DIR");
    if (dir == NULL) return;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.log", dir, fake_name_for_marker);
    FILE* f = fopen(path, "a");
    if (f == NULL) return;
    fprintf(f, "%s%s\n", fake_in_validation_child() ? "child " : "", event);
    fclose(f);
}

FAKE_STATIC void fake_shutdown(void) {
    fake_mark("shutdown");
}

struct plx_device_s {
    int index;
};
FAKE_STATIC struct plx_device_s fake_devices[4] = {{0}, {1}, {2}, {3}};
FAKE_STATIC uint32_t fake_num_devices = 1;

FAKE_STATIC plx_status fake_device_count(uint32_t* n) {
    *n = fake_num_devices;
    return PLX_OK;
}
FAKE_STATIC plx_status fake_device_get(uint32_t i, plx_device* d) {
    if (i >= fake_num_devices) return fake_fail(PLX_ERROR_INVALID_ARGUMENT, "bad device index");
    *d = &fake_devices[i];
    return PLX_OK;
}
FAKE_STATIC plx_status fake_device_info(plx_device d, plx_device_info* info) {
    if (info->struct_size < sizeof *info) return fake_fail(PLX_ERROR_INVALID_ARGUMENT, "old host");
    info->type = PLX_DEVICE_TYPE_CPU;
    snprintf(info->name, sizeof info->name, "Fake CPU %d", d->index);
    snprintf(info->vendor, sizeof info->vendor, "fakes inc.");
    snprintf(info->platform, sizeof info->platform, "fake platform");
    info->compute_units = 3;
    info->max_work_group_size = 256;
    info->max_work_group_dims[0] = info->max_work_group_dims[1] = info->max_work_group_dims[2] =
        256;
    info->subgroup_size = 1;
    info->memory_bytes = 1u << 20;
    info->max_alloc_bytes = 1u << 20;
    info->local_memory_bytes = 1024;
    info->fp64 = 1;
    return PLX_OK;
}

struct plx_buffer_s {
    size_t bytes;
    unsigned char data[];
};
FAKE_STATIC plx_status fake_buffer_alloc(plx_device d, size_t bytes, plx_buffer* b) {
    (void)d;
    plx_buffer p = malloc(sizeof *p + bytes);
    if (p == NULL) return fake_fail(PLX_ERROR_OUT_OF_MEMORY, "malloc failed");
    p->bytes = bytes;
    *b = p;
    return PLX_OK;
}
FAKE_STATIC void fake_buffer_free(plx_buffer b) {
    free(b);
}
FAKE_STATIC plx_status fake_buffer_write(plx_queue q, plx_buffer b, size_t off, const void* src,
                                         size_t n) {
    (void)q;
    if (off > b->bytes || n > b->bytes - off)
        return fake_fail(PLX_ERROR_INVALID_ARGUMENT, "out of range");
    memcpy(b->data + off, src, n);
    return PLX_OK;
}
FAKE_STATIC plx_status fake_buffer_read(plx_queue q, plx_buffer b, size_t off, void* dst,
                                        size_t n) {
    (void)q;
    if (off > b->bytes || n > b->bytes - off)
        return fake_fail(PLX_ERROR_INVALID_ARGUMENT, "out of range");
    memcpy(dst, b->data + off, n);
    return PLX_OK;
}
FAKE_STATIC void* fake_buffer_host_ptr(plx_buffer b) {
    return b->data;
}

struct plx_queue_s {
    int unused;
};
FAKE_STATIC struct plx_queue_s fake_queue;
FAKE_STATIC plx_status fake_queue_create(plx_device d, uint32_t flags, plx_queue* q) {
    (void)d;
    (void)flags;
    *q = &fake_queue;
    return PLX_OK;
}
FAKE_STATIC plx_status fake_queue_sync(plx_queue q) {
    (void)q;
    return PLX_OK;
}
FAKE_STATIC void fake_queue_destroy(plx_queue q) {
    (void)q;
}

FAKE_STATIC plx_status fake_launch_host(plx_queue q, plx_workgroup_fn fn, void* user,
                                        const plx_launch_dims* dims, plx_event* event) {
    (void)q;
    plx_workgroup_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.struct_size = sizeof ctx;
    ctx.dims = 1;
    ctx.global_size[0] = dims->global_size[0];
    ctx.local_size[0] = dims->local_size[0];
    ctx.num_groups[0] = (dims->global_size[0] + dims->local_size[0] - 1) / dims->local_size[0];
    ctx.global_size[1] = ctx.global_size[2] = ctx.num_groups[1] = ctx.num_groups[2] = 1;
    ctx.local_size[1] = ctx.local_size[2] = 1;
    for (uint64_t g = 0; g < ctx.num_groups[0]; ++g) {
        ctx.group_id[0] = g;
        fn(&ctx, user);
    }
    if (event != NULL) *event = NULL;
    return PLX_OK;
}

FAKE_STATIC const plx_intrinsic fake_intrinsics[] = {
    {.name = "global_id_x", .spelling = NULL, .host_fn = NULL, .flags = PLX_INTRINSIC_INLINE},
    {.name = "barrier", .spelling = NULL, .host_fn = NULL, .flags = PLX_INTRINSIC_INLINE},
};

/* A descriptor that keeps the whole contract; the fakes break it on purpose afterwards. */
FAKE_STATIC void fake_fill(plx_plugin* p, const char* name) {
    uint32_t size = p->struct_size;
    memset(p, 0, size);
    plx_plugin d = {
        .struct_size = sizeof(plx_plugin),
        .abi_version = PLX_ABI_VERSION,
        .name = name,
        .version = "0.0.1",
        .vendor = "fakes inc.",
        .priority = 10,
        .execution_model = PLX_EXEC_DIRECT,
        .intrinsics = fake_intrinsics,
        .num_intrinsics = 2,
        .last_error = fake_last_error,
        .shutdown = fake_shutdown,
        .device_count = fake_device_count,
        .device_get = fake_device_get,
        .device_info = fake_device_info,
        .buffer_alloc = fake_buffer_alloc,
        .buffer_free = fake_buffer_free,
        .buffer_write = fake_buffer_write,
        .buffer_read = fake_buffer_read,
        .buffer_host_ptr = fake_buffer_host_ptr,
        .queue_create = fake_queue_create,
        .queue_sync = fake_queue_sync,
        .queue_destroy = fake_queue_destroy,
        .launch_host = fake_launch_host,
    };
    memcpy(p, &d, size < sizeof d ? size : sizeof d);
    fake_name_for_marker = name;
    fake_mark("init");
}

#endif
