/* A stand-in for libcuda with one device on which nothing runs: every function the CUDA plugin
 * requires succeeds, memory is host memory, streams and events are plain records and a launch
 * only counts itself. It lets the CPU suite drive the plugin's own code (queues, launch events
 * and their lifetimes) and lets a profiler count the plugin's host work per launch without a
 * GPU. cudastub_counts() says how many launches and event records the plugin made. */
#include <cuda.h>

#include <stdlib.h>
#include <string.h>

#define STUB_EXPORT __attribute__((visibility("default")))

struct cudastub_counts {
    unsigned long launches;
    unsigned long event_records;
    unsigned long events_created;
};
static struct cudastub_counts counts;
STUB_EXPORT const struct cudastub_counts* cudastub_counts(void) {
    return &counts;
}

static int the_context;
static __thread CUcontext current;
struct CUstream_st {
    int unused;
};
struct CUevent_st {
    int recorded;
};
struct CUmod_st {
    int unused;
};
struct CUfunc_st {
    int unused;
};
struct CUlinkState_st {
    int unused;
};
static struct CUfunc_st the_function;
static const char the_cubin[] = "stub cubin";

STUB_EXPORT CUresult cuInit(unsigned int flags) {
    (void)flags;
    return CUDA_SUCCESS;
}
STUB_EXPORT CUresult cuDriverGetVersion(int* v) {
    *v = 13000;
    return CUDA_SUCCESS;
}
STUB_EXPORT CUresult cuDeviceGetCount(int* n) {
    *n = 1;
    return CUDA_SUCCESS;
}
STUB_EXPORT CUresult cuDeviceGet(CUdevice* d, int ordinal) {
    if (ordinal != 0) return CUDA_ERROR_INVALID_DEVICE;
    *d = 0;
    return CUDA_SUCCESS;
}
STUB_EXPORT CUresult cuDeviceGetName(char* name, int len, CUdevice d) {
    (void)d;
    strncpy(name, "Stub GPU", (size_t)len);
    return CUDA_SUCCESS;
}
STUB_EXPORT CUresult cuDeviceGetAttribute(int* v, CUdevice_attribute a, CUdevice d) {
    (void)d;
    switch (a) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *v = 9; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *v = 0; break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *v = 132; break;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *v = 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X: *v = 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y: *v = 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z: *v = 64; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X: *v = 2147483647; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y: *v = 65535; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z: *v = 65535; break;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE: *v = 32; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: *v = 48 * 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: *v = 227 * 1024; break;
    default: *v = 0; break;
    }
    return CUDA_SUCCESS;
}
STUB_EXPORT CUresult cuDeviceTotalMem(size_t* bytes, CUdevice d) {
    (void)d;
    *bytes = (size_t)1 << 30;
    return CUDA_SUCCESS;
}
STUB_EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext* c, CUdevice d) {
    (void)d;
    *c = (CUcontext)&the_context;
    return CUDA_SUCCESS;
}
STUB_EXPORT CUresult cuDevicePrimaryCtxRelease(CUdevice d) {
    (void)d;
    return CUDA_SUCCESS;
}
STUB_EXPORT CUresult cuCtxGetCurrent(CUcontext* c) {
    *c = current;
    return CUDA_SUCCESS;
}
STUB_EXPORT CUresult cuCtxSetCurrent(CUcontext c) {
    current = c;
    return CUDA_SUCCESS;
}

STUB_EXPORT CUresult cuMemGetInfo(size_t* free_bytes, size_t* total) {
    *free_bytes = *total = (size_t)1 << 30;
    return CUDA_SUCCESS;
}
STUB_EXPORT CUresult cuMemAlloc(CUdeviceptr* p, size_t n) {
    void* m = malloc(n);
    if (m == NULL) return CUDA_ERROR_OUT_OF_MEMORY;
    *p = (CUdeviceptr)m;
    return CUDA_SUCCESS;
}
STUB_EXPORT CUresult cuMemFree(CUdeviceptr p) {
    free((void*)p);
    return CUDA_SUCCESS;
}
STUB_EXPORT CUresult cuMemAllocHost(void** p, size_t n) {
    *p = malloc(n);
    return *p != NULL ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}
STUB_EXPORT CUresult cuMemFreeHost(void* p) {
    free(p);
    return CUDA_SUCCESS;
}
STUB_EXPORT CUresult cuMemcpyHtoDAsync(CUdeviceptr dst, const void* src, size_t n, CUstream s) {
    (void)s;
    memcpy((void*)dst, src, n);
    return CUDA_SUCCESS;
}
STUB_EXPORT CUresult cuMemcpyDtoHAsync(void* dst, CUdeviceptr src, size_t n, CUstream s) {
    (void)s;
    memcpy(dst, (const void*)src, n);
    return CUDA_SUCCESS;
}
STUB_EXPORT CUresult cuMemcpyDtoDAsync(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s) {
    (void)s;
    memmove((void*)dst, (const void*)src, n);
    return CUDA_SUCCESS;
}
STUB_EXPORT CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char v, size_t n, CUstream s) {
    (void)s;
    memset((void*)dst, v, n);
    return CUDA_SUCCESS;
}
STUB_EXPORT CUresult cuMemsetD16Async(CUdeviceptr dst, unsigned short v, size_t n, CUstream s) {
    (void)s;
    for (size_t i = 0; i < n; ++i)
        ((unsigned short*)dst)[i] = v;
    return CUDA_SUCCESS;
}
STUB_EXPORT CUresult cuMemsetD32Async(CUdeviceptr dst, unsigned int v, size_t n, CUstream s) {
    (void)s;
    for (size_t i = 0; i < n; ++i)
        ((unsigned int*)dst)[i] = v;
    return CUDA_SUCCESS;
}

STUB_EXPORT CUresult cuStreamCreate(CUstream* s, unsigned int flags) {
    (void)flags;
    *s = calloc(1, sizeof(struct CUstream_st));
    return *s != NULL ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}
STUB_EXPORT CUresult cuStreamDestroy(CUstream s) {
    free(s);
    return CUDA_SUCCESS;
}
STUB_EXPORT CUresult cuStreamSynchronize(CUstream s) {
    (void)s;
    return CUDA_SUCCESS;
}
STUB_EXPORT CUresult cuStreamWaitEvent(CUstream s, CUevent e, unsigned int flags) {
    (void)s, (void)flags;
    return e->recorded ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

STUB_EXPORT CUresult cuEventCreate(CUevent* e, unsigned int flags) {
    (void)flags;
    *e = calloc(1, sizeof(struct CUevent_st));
    if (*e == NULL) return CUDA_ERROR_OUT_OF_MEMORY;
    ++counts.events_created;
    return CUDA_SUCCESS;
}
STUB_EXPORT CUresult cuEventDestroy(CUevent e) {
    free(e);
    return CUDA_SUCCESS;
}
STUB_EXPORT CUresult cuEventRecord(CUevent e, CUstream s) {
    (void)s;
    e->recorded = 1;
    ++counts.event_records;
    return CUDA_SUCCESS;
}
STUB_EXPORT CUresult cuEventSynchronize(CUevent e) {
    (void)e;
    return CUDA_SUCCESS;
}

STUB_EXPORT CUresult cuLinkCreate(unsigned int n, CUjit_option* o, void** v, CUlinkState* l) {
    (void)n, (void)o, (void)v;
    *l = calloc(1, sizeof(struct CUlinkState_st));
    return *l != NULL ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}
STUB_EXPORT CUresult cuLinkAddData(CUlinkState l, CUjitInputType t, void* data, size_t size,
                                   const char* name, unsigned int n, CUjit_option* o, void** v) {
    (void)l, (void)t, (void)data, (void)size, (void)name, (void)n, (void)o, (void)v;
    return CUDA_SUCCESS;
}
STUB_EXPORT CUresult cuLinkComplete(CUlinkState l, void** cubin, size_t* size) {
    (void)l;
    *cubin = (void*)the_cubin;
    *size = sizeof the_cubin;
    return CUDA_SUCCESS;
}
STUB_EXPORT CUresult cuLinkDestroy(CUlinkState l) {
    free(l);
    return CUDA_SUCCESS;
}
STUB_EXPORT CUresult cuModuleLoadDataEx(CUmodule* m, const void* image, unsigned int n,
                                        CUjit_option* o, void** v) {
    (void)image, (void)n, (void)o, (void)v;
    *m = calloc(1, sizeof(struct CUmod_st));
    return *m != NULL ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}
STUB_EXPORT CUresult cuModuleLoadData(CUmodule* m, const void* image) {
    return cuModuleLoadDataEx(m, image, 0, NULL, NULL);
}
STUB_EXPORT CUresult cuModuleUnload(CUmodule m) {
    free(m);
    return CUDA_SUCCESS;
}
STUB_EXPORT CUresult cuModuleGetFunction(CUfunction* f, CUmodule m, const char* name) {
    (void)m, (void)name;
    *f = &the_function;
    return CUDA_SUCCESS;
}
STUB_EXPORT CUresult cuFuncGetAttribute(int* v, CUfunction_attribute a, CUfunction f) {
    (void)f;
    *v = a == CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK ? 1024 : 0;
    return CUDA_SUCCESS;
}
STUB_EXPORT CUresult cuFuncSetAttribute(CUfunction f, CUfunction_attribute a, int v) {
    (void)f, (void)a, (void)v;
    return CUDA_SUCCESS;
}
STUB_EXPORT CUresult cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                                    unsigned int bx, unsigned int by, unsigned int bz,
                                    unsigned int shared, CUstream s, void** params, void** extra) {
    (void)f, (void)gx, (void)gy, (void)gz, (void)bx, (void)by, (void)bz, (void)shared, (void)s,
        (void)params, (void)extra;
    ++counts.launches;
    return CUDA_SUCCESS;
}
