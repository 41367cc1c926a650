/* A third party's JIT plugin over OpenCL, written from docs/writing-a-plugin.md and plugin.h
 * alone, as an author outside plexus would write it: OpenCL C handed to the ICD loader, every
 * call synchronous, no events, only the functions ABI 1.0 requires plus module_unload. The abi
 * suite builds it once against each frozen public header of an earlier ABI minor
 * (tests/abi/frozen/1.N, never edited) and once against today's, so that a binary of every
 * released minor is loaded by this host and runs the samples (tests/abi/test_frozen.cpp).
 *
 * CLP_NAME names the plugin. Its table is the whole catalog of the header it was built
 * against, as the guide's X-macro pattern gives; against today's header that is the classes
 * the plugin names in PLX_CATALOG_CLASSES. CLP_OVERCLAIM (headers of 1.2 on) makes a plugin
 * that claims more than it has: every device "has" every subgroup operation and matrix type,
 * and atomic_add_i32_global is spelled wrong (it adds one too many), which is what
 * `plexus doctor --plugin` must catch before the plugin is ever routed to. CLP_REFUSE makes its
 * compiler reject every program (a routed launch must then go on to the next candidate). */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plexus/plugin.h"

#ifndef CLP_NAME
#error "CLP_NAME names the plugin"
#endif

/* ---- errors ------------------------------------------------------------------------------ */

static __thread char g_error[16384];

static plx_status fail(plx_status status, const char* what, cl_int err) {
    snprintf(g_error, sizeof g_error, "%s: %s (OpenCL error %d)", CLP_NAME, what, (int)err);
    return status;
}

static plx_status fail_cl(const char* what, cl_int err) {
    plx_status s = err == CL_MEM_OBJECT_ALLOCATION_FAILURE || err == CL_OUT_OF_HOST_MEMORY ||
                           err == CL_INVALID_BUFFER_SIZE
                       ? PLX_ERROR_OUT_OF_MEMORY
                   : err == CL_INVALID_WORK_GROUP_SIZE || err == CL_OUT_OF_RESOURCES ? PLX_ERROR_OUT_OF_RESOURCES
                                                                                      : PLX_ERROR_DEVICE;
    return fail(s, what, err);
}

static const char* clp_last_error(void) { return g_error; }

/* ---- devices: every device of every platform, one context each -------------------------- */

#define CLP_MAX_DEVICES 16

struct plx_device_s {
    cl_device_id id;
    cl_context context;
    plx_device_info info; /* as this plugin's header defines it */
};

static struct plx_device_s g_devices[CLP_MAX_DEVICES];
static uint32_t g_count;

static int has_extension(cl_device_id id, const char* name) {
    size_t bytes = 0;
    if (clGetDeviceInfo(id, CL_DEVICE_EXTENSIONS, 0, NULL, &bytes) != CL_SUCCESS || bytes == 0) return 0;
    char* list = malloc(bytes + 1);
    int found = 0;
    if (list != NULL && clGetDeviceInfo(id, CL_DEVICE_EXTENSIONS, bytes, list, NULL) == CL_SUCCESS) {
        list[bytes] = '\0';
        size_t n = strlen(name);
        for (const char* p = strstr(list, name); p != NULL && !found; p = strstr(p + 1, name))
            found = (p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0');
    }
    free(list);
    return found;
}

static void describe(struct plx_device_s* d, cl_platform_id platform) {
    plx_device_info* info = &d->info;
    memset(info, 0, sizeof *info);
    info->struct_size = sizeof *info;
    cl_device_type type = 0;
    clGetDeviceInfo(d->id, CL_DEVICE_TYPE, sizeof type, &type, NULL);
    info->type = (type & CL_DEVICE_TYPE_GPU)           ? PLX_DEVICE_TYPE_GPU
                 : (type & CL_DEVICE_TYPE_CPU)         ? PLX_DEVICE_TYPE_CPU
                 : (type & CL_DEVICE_TYPE_ACCELERATOR) ? PLX_DEVICE_TYPE_ACCELERATOR
                                                       : PLX_DEVICE_TYPE_OTHER;
    clGetDeviceInfo(d->id, CL_DEVICE_NAME, sizeof info->name - 1, info->name, NULL);
    clGetDeviceInfo(d->id, CL_DEVICE_VENDOR, sizeof info->vendor - 1, info->vendor, NULL);
    clGetPlatformInfo(platform, CL_PLATFORM_NAME, sizeof info->platform - 1, info->platform, NULL);
    cl_uint units = 0, dims = 0;
    size_t group = 0, sizes[3] = {1, 1, 1};
    cl_ulong memory = 0, alloc = 0, local = 0;
    clGetDeviceInfo(d->id, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof units, &units, NULL);
    clGetDeviceInfo(d->id, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof group, &group, NULL);
    clGetDeviceInfo(d->id, CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS, sizeof dims, &dims, NULL);
    if (dims >= 3) clGetDeviceInfo(d->id, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof sizes, sizes, NULL);
    clGetDeviceInfo(d->id, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof memory, &memory, NULL);
    clGetDeviceInfo(d->id, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof alloc, &alloc, NULL);
    clGetDeviceInfo(d->id, CL_DEVICE_LOCAL_MEM_SIZE, sizeof local, &local, NULL);
    info->compute_units = units;
    info->max_work_group_size = (uint32_t)group;
    for (int i = 0; i < 3; ++i) info->max_work_group_dims[i] = (uint32_t)sizes[i];
    info->subgroup_size = 1;
    info->memory_bytes = memory;
    info->max_alloc_bytes = alloc;
    info->local_memory_bytes = local;
    info->fp64 = (uint32_t)has_extension(d->id, "cl_khr_fp64");
#if defined(CLP_OVERCLAIM) && defined(PLX_SUBGROUP_KNOWN)
    info->subgroup_ops = PLX_SUBGROUP_KNOWN | PLX_SUBGROUP_ALL;
#endif
#if defined(CLP_OVERCLAIM) && defined(PLX_MATRIX_KNOWN)
    info->matrix_ops = PLX_MATRIX_KNOWN | PLX_MATRIX_ALL;
#endif
}

static plx_status clp_device_count(uint32_t* count) {
    if (count == NULL) return fail(PLX_ERROR_INVALID_ARGUMENT, "device_count: count is NULL", 0);
    *count = g_count;
    return PLX_OK;
}

static plx_status clp_device_get(uint32_t index, plx_device* device) {
    if (device == NULL || index >= g_count)
        return fail(PLX_ERROR_INVALID_ARGUMENT, "device_get: no such device", (cl_int)index);
    *device = &g_devices[index];
    return PLX_OK;
}

static plx_status clp_device_info(plx_device device, plx_device_info* info) {
    if (device == NULL || info == NULL) return fail(PLX_ERROR_INVALID_ARGUMENT, "device_info: NULL", 0);
    uint32_t size = info->struct_size < sizeof device->info ? info->struct_size : (uint32_t)sizeof device->info;
    memcpy((char*)info + sizeof info->struct_size, (const char*)&device->info + sizeof info->struct_size,
           size - sizeof info->struct_size);
    return PLX_OK;
}

/* ---- memory and queues ------------------------------------------------------------------- */

struct plx_buffer_s {
    cl_mem mem;
};

struct plx_queue_s {
    cl_command_queue queue;
};

static plx_status clp_buffer_alloc(plx_device device, size_t bytes, plx_buffer* buffer) {
    if (device == NULL || bytes == 0 || buffer == NULL)
        return fail(PLX_ERROR_INVALID_ARGUMENT, "buffer_alloc: NULL device or out, or 0 bytes", 0);
    cl_int err = CL_SUCCESS;
    cl_mem mem = clCreateBuffer(device->context, CL_MEM_READ_WRITE, bytes, NULL, &err);
    if (err != CL_SUCCESS) return fail_cl("clCreateBuffer", err);
    plx_buffer b = malloc(sizeof *b);
    if (b == NULL) {
        clReleaseMemObject(mem);
        return fail(PLX_ERROR_OUT_OF_MEMORY, "buffer_alloc: out of host memory", 0);
    }
    b->mem = mem;
    *buffer = b;
    return PLX_OK;
}

static void clp_buffer_free(plx_buffer buffer) {
    if (buffer == NULL) return;
    clReleaseMemObject(buffer->mem);
    free(buffer);
}

static plx_status clp_buffer_write(plx_queue queue, plx_buffer buffer, size_t offset, const void* src, size_t bytes) {
    if (queue == NULL || buffer == NULL || src == NULL)
        return fail(PLX_ERROR_INVALID_ARGUMENT, "buffer_write: NULL argument", 0);
    cl_int err = clEnqueueWriteBuffer(queue->queue, buffer->mem, CL_TRUE, offset, bytes, src, 0, NULL, NULL);
    return err == CL_SUCCESS ? PLX_OK : fail_cl("clEnqueueWriteBuffer", err);
}

static plx_status clp_buffer_read(plx_queue queue, plx_buffer buffer, size_t offset, void* dst, size_t bytes) {
    if (queue == NULL || buffer == NULL || dst == NULL)
        return fail(PLX_ERROR_INVALID_ARGUMENT, "buffer_read: NULL argument", 0);
    cl_int err = clEnqueueReadBuffer(queue->queue, buffer->mem, CL_TRUE, offset, bytes, dst, 0, NULL, NULL);
    return err == CL_SUCCESS ? PLX_OK : fail_cl("clEnqueueReadBuffer", err);
}

static plx_status clp_queue_create(plx_device device, uint32_t flags, plx_queue* queue) {
    (void)flags; /* no profiling: events are not provided */
    if (device == NULL || queue == NULL) return fail(PLX_ERROR_INVALID_ARGUMENT, "queue_create: NULL argument", 0);
    cl_int err = CL_SUCCESS;
    cl_command_queue q = clCreateCommandQueue(device->context, device->id, 0, &err);
    if (err != CL_SUCCESS) return fail_cl("clCreateCommandQueue", err);
    plx_queue out = malloc(sizeof *out);
    if (out == NULL) {
        clReleaseCommandQueue(q);
        return fail(PLX_ERROR_OUT_OF_MEMORY, "queue_create: out of host memory", 0);
    }
    out->queue = q;
    *queue = out;
    return PLX_OK;
}

static plx_status clp_queue_sync(plx_queue queue) {
    if (queue == NULL) return fail(PLX_ERROR_INVALID_ARGUMENT, "queue_sync: NULL queue", 0);
    cl_int err = clFinish(queue->queue);
    return err == CL_SUCCESS ? PLX_OK : fail_cl("clFinish", err);
}

static void clp_queue_destroy(plx_queue queue) {
    if (queue == NULL) return;
    clFinish(queue->queue);
    clReleaseCommandQueue(queue->queue);
    free(queue);
}

/* ---- modules, kernels, launches ---------------------------------------------------------- */

struct plx_kernel_s {
    cl_kernel kernel;
    pthread_mutex_t lock; /* clSetKernelArg + enqueue of one kernel object is not thread-safe */
    struct plx_kernel_s* next;
};

struct plx_module_s {
    cl_program program;
    struct plx_kernel_s* kernels;
};

static const plx_language g_languages[] = {PLX_LANG_OPENCL_C};

static plx_status clp_module_load(plx_device device, plx_language language, const char* source, size_t bytes,
                                  const char* options, plx_module* module) {
    if (device == NULL || source == NULL || module == NULL || language != PLX_LANG_OPENCL_C)
        return fail(PLX_ERROR_INVALID_ARGUMENT, "module_load: NULL argument or not OpenCL C", 0);
#ifdef CLP_REFUSE
    return fail(PLX_ERROR_COMPILE, "module_load: this build rejects every program (CLP_REFUSE)", CL_BUILD_PROGRAM_FAILURE);
#endif
    cl_int err = CL_SUCCESS;
    cl_program program = clCreateProgramWithSource(device->context, 1, &source, &bytes, &err);
    if (err != CL_SUCCESS) return fail_cl("clCreateProgramWithSource", err);
    err = clBuildProgram(program, 1, &device->id, options != NULL ? options : "", NULL, NULL);
    if (err != CL_SUCCESS) {
        size_t n = 0;
        int at = snprintf(g_error, sizeof g_error, "%s: clBuildProgram failed (%d):\n", CLP_NAME, (int)err);
        clGetProgramBuildInfo(program, device->id, CL_PROGRAM_BUILD_LOG, sizeof g_error - (size_t)at - 1,
                              g_error + at, &n);
        g_error[sizeof g_error - 1] = '\0';
        clReleaseProgram(program);
        return err == CL_BUILD_PROGRAM_FAILURE ? PLX_ERROR_COMPILE : fail_cl("clBuildProgram", err);
    }
    plx_module m = malloc(sizeof *m);
    if (m == NULL) {
        clReleaseProgram(program);
        return fail(PLX_ERROR_OUT_OF_MEMORY, "module_load: out of host memory", 0);
    }
    m->program = program;
    m->kernels = NULL;
    *module = m;
    return PLX_OK;
}

static void clp_module_unload(plx_module module) {
    if (module == NULL) return;
    while (module->kernels != NULL) {
        struct plx_kernel_s* k = module->kernels;
        module->kernels = k->next;
        clReleaseKernel(k->kernel);
        pthread_mutex_destroy(&k->lock);
        free(k);
    }
    clReleaseProgram(module->program);
    free(module);
}

static plx_status clp_kernel_get(plx_module module, const char* name, plx_kernel* kernel) {
    if (module == NULL || name == NULL || kernel == NULL)
        return fail(PLX_ERROR_INVALID_ARGUMENT, "kernel_get: NULL argument", 0);
    cl_int err = CL_SUCCESS;
    cl_kernel k = clCreateKernel(module->program, name, &err);
    if (err == CL_INVALID_KERNEL_NAME) return fail(PLX_ERROR_NOT_FOUND, "kernel_get: no such kernel", err);
    if (err != CL_SUCCESS) return fail_cl("clCreateKernel", err);
    struct plx_kernel_s* out = malloc(sizeof *out);
    if (out == NULL) {
        clReleaseKernel(k);
        return fail(PLX_ERROR_OUT_OF_MEMORY, "kernel_get: out of host memory", 0);
    }
    out->kernel = k;
    pthread_mutex_init(&out->lock, NULL);
    out->next = module->kernels; /* kernel_get is never called concurrently on one module by the host */
    module->kernels = out;
    *kernel = out;
    return PLX_OK;
}

static plx_status clp_launch(plx_queue queue, plx_kernel kernel, const plx_launch_dims* dims, const plx_arg* args,
                             uint32_t num_args, plx_event* event) {
    if (event != NULL) *event = NULL; /* synchronous: a NULL event is a finished command */
    if (queue == NULL || kernel == NULL || dims == NULL || (num_args > 0 && args == NULL) || dims->dims < 1 ||
        dims->dims > 3)
        return fail(PLX_ERROR_INVALID_ARGUMENT, "launch: NULL argument or bad dims", 0);
    if (dims->dynamic_local_bytes != 0)
        return fail(PLX_ERROR_UNSUPPORTED, "launch: dynamic local memory is not supported", 0);
    size_t global[3], local[3];
    for (uint32_t d = 0; d < dims->dims; ++d) {
        local[d] = dims->local_size[d];
        global[d] = (dims->global_size[d] + local[d] - 1) / local[d] * local[d];
    }
    cl_int err = CL_SUCCESS;
    pthread_mutex_lock(&kernel->lock);
    for (uint32_t i = 0; i < num_args && err == CL_SUCCESS; ++i)
        err = args[i].kind == PLX_ARG_BUFFER
                  ? clSetKernelArg(kernel->kernel, i, sizeof(cl_mem), &args[i].buffer->mem)
                  : clSetKernelArg(kernel->kernel, i, args[i].size, args[i].value);
    if (err == CL_SUCCESS)
        err = clEnqueueNDRangeKernel(queue->queue, kernel->kernel, dims->dims, NULL, global, local, 0, NULL, NULL);
    pthread_mutex_unlock(&kernel->lock);
    if (err != CL_SUCCESS) return fail_cl("launch", err);
    err = clFinish(queue->queue);
    return err == CL_SUCCESS ? PLX_OK : fail(PLX_ERROR_LAUNCH, "launch: clFinish", err);
}

/* ---- the table and the entry point ------------------------------------------------------- */

#ifdef PLX_CLASS_ALL /* a header that has capability classes: claim what OpenCL C 1.2 always has */
#define PLX_CATALOG_CLASSES (PLX_CLASS_CORE | PLX_CLASS_ATOMICS | PLX_CLASS_MATH)
#endif
static plx_intrinsic g_table[] = {
#define PLX_INTRINSIC(id, signature, convergence, opencl_c, cuda_c, nvvm) {#id, NULL, NULL, 0},
#include "plexus/intrinsics.def"
#undef PLX_INTRINSIC
};

static void clp_shutdown(void) {
    for (uint32_t i = 0; i < g_count; ++i) clReleaseContext(g_devices[i].context);
    g_count = 0;
}

PLX_EXPORT plx_status plx_plugin_init(uint32_t host_abi_version, const plx_host_api* host, plx_plugin* plugin) {
    (void)host;
    if (PLX_VERSION_MAJOR(host_abi_version) != PLX_ABI_VERSION_MAJOR) return PLX_ERROR_ABI_MISMATCH;
#ifdef CLP_OVERCLAIM
    for (size_t i = 0; i < sizeof g_table / sizeof g_table[0]; ++i)
        if (strcmp(g_table[i].name, "atomic_add_i32_global") == 0) g_table[i].spelling = "atomic_add($0, ($1) + 1)";
#endif
    plx_plugin d;
    memset(&d, 0, sizeof d);
    d.struct_size = sizeof d;
    d.abi_version = PLX_ABI_VERSION;
    d.name = CLP_NAME;
    d.version = "1.0.0";
    d.vendor = "a third party (tests/abi/frozen)";
    d.priority = 95; /* above plexus's own OpenCL plugin, as a vendor's plugin might rank itself */
    d.execution_model = PLX_EXEC_JIT;
    d.languages = g_languages;
    d.num_languages = 1;
    d.intrinsics = g_table;
    d.num_intrinsics = (uint32_t)(sizeof g_table / sizeof g_table[0]);
    d.last_error = clp_last_error;
    d.shutdown = clp_shutdown;
    d.device_count = clp_device_count;
    d.device_get = clp_device_get;
    d.device_info = clp_device_info;
    d.buffer_alloc = clp_buffer_alloc;
    d.buffer_free = clp_buffer_free;
    d.buffer_write = clp_buffer_write;
    d.buffer_read = clp_buffer_read;
    d.queue_create = clp_queue_create;
    d.queue_sync = clp_queue_sync;
    d.queue_destroy = clp_queue_destroy;
    d.module_load = clp_module_load;
    d.module_unload = clp_module_unload;
    d.kernel_get = clp_kernel_get;
    d.launch = clp_launch;

    g_count = 0;
    cl_platform_id platforms[8];
    cl_uint num_platforms = 0;
    /* No ICD, or one without platforms (CL_PLATFORM_NOT_FOUND_KHR): no device, which the host
     * reports as no_devices. */
    if (clGetPlatformIDs(8, platforms, &num_platforms) != CL_SUCCESS) num_platforms = 0;
    for (cl_uint p = 0; p < num_platforms && p < 8; ++p) {
        cl_device_id ids[CLP_MAX_DEVICES];
        cl_uint n = 0;
        if (clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, CLP_MAX_DEVICES, ids, &n) != CL_SUCCESS) continue;
        for (cl_uint i = 0; i < n && g_count < CLP_MAX_DEVICES; ++i) {
            struct plx_device_s* dev = &g_devices[g_count];
            cl_int made = CL_SUCCESS;
            dev->id = ids[i];
            dev->context = clCreateContext(NULL, 1, &ids[i], NULL, NULL, &made);
            if (made != CL_SUCCESS) continue;
            describe(dev, platforms[p]);
            ++g_count;
        }
    }
    uint32_t size = plugin->struct_size < sizeof d ? plugin->struct_size : (uint32_t)sizeof d;
    d.struct_size = size;
    memcpy(plugin, &d, size);
    return PLX_OK;
}
