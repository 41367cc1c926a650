/* A stand-in for cuBLAS beside stub_libcuda.c, whose device memory is host memory: its
 * cublasGemmEx checks its arguments as cuBLAS does and computes the column-major product on the
 * host, so the CUDA plugin's routines (argument checks, the row-major to column-major mapping,
 * the handle's life) run on any machine. cublasstub_state() says what the plugin asked for last
 * and lets a test make the next gemm fail. Declared here from cuBLAS's C ABI: no CUDA header. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define STUB_EXPORT __attribute__((visibility("default")))

enum {
    STATUS_SUCCESS = 0,
    STATUS_NOT_INITIALIZED = 1,
    STATUS_ALLOC_FAILED = 3,
    STATUS_INVALID_VALUE = 7,
    STATUS_EXECUTION_FAILED = 13,
    STATUS_NOT_SUPPORTED = 15
};
enum { R_32F = 0, R_16F = 2, R_16BF = 14 };
enum { COMPUTE_32F = 68, COMPUTE_32F_FAST_TF32 = 77 };

/* Mirrored by tests/plugins/cuda/cuda_routines_test.cpp. */
struct cublasstub_state {
    unsigned long creates, destroys, set_streams, gemms;
    int math_mode;
    void* stream; /* the stream of the last gemm */
    int transa, transb, m, n, k, lda, ldb, ldc, atype, btype, ctype, compute, algo;
    int fail_next; /* a status the next cublasGemmEx returns instead of computing */
};
static struct cublasstub_state state = {.math_mode = -1};
STUB_EXPORT struct cublasstub_state* cublasstub_state(void) {
    return &state;
}

struct cublasContext {
    void* stream;
    int math_mode;
};

STUB_EXPORT int cublasCreate_v2(struct cublasContext** handle) {
    *handle = calloc(1, sizeof(struct cublasContext));
    if (*handle == NULL) return STATUS_ALLOC_FAILED;
    ++state.creates;
    return STATUS_SUCCESS;
}
STUB_EXPORT int cublasDestroy_v2(struct cublasContext* handle) {
    if (handle == NULL) return STATUS_NOT_INITIALIZED;
    free(handle);
    ++state.destroys;
    return STATUS_SUCCESS;
}
STUB_EXPORT int cublasSetStream_v2(struct cublasContext* handle, void* stream) {
    if (handle == NULL) return STATUS_NOT_INITIALIZED;
    handle->stream = stream;
    ++state.set_streams;
    return STATUS_SUCCESS;
}
STUB_EXPORT int cublasSetMathMode(struct cublasContext* handle, int mode) {
    if (handle == NULL) return STATUS_NOT_INITIALIZED;
    handle->math_mode = mode;
    state.math_mode = mode;
    return STATUS_SUCCESS;
}
STUB_EXPORT const char* cublasGetStatusName(int status) {
    switch (status) {
    case STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    default: return "CUBLAS_STATUS_UNKNOWN";
    }
}
STUB_EXPORT const char* cublasGetStatusString(int status) {
    return status == STATUS_SUCCESS ? "success" : "the stub was told to fail";
}

static float from_bits(uint32_t bits) {
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

/* Element i of a matrix of type `type`, as cuBLAS reads it; FAST_TF32 rounds f32 to 10 bits of
 * mantissa (to nearest), as tensor cores may. */
static double element(const void* p, int type, size_t i, int compute) {
    if (type == R_16BF) return from_bits((uint32_t)((const uint16_t*)p)[i] << 16);
    if (type == R_16F) {
        const uint16_t h = ((const uint16_t*)p)[i];
        const int e = (h >> 10) & 0x1f, m = h & 0x3ff;
        const double v = e == 0 ? ldexp(m, -24) : ldexp(1024 + m, e - 25);
        return (h & 0x8000) ? -v : v;
    }
    float f = ((const float*)p)[i];
    if (compute == COMPUTE_32F_FAST_TF32) {
        uint32_t bits;
        memcpy(&bits, &f, sizeof bits);
        bits = (bits + 0xfffu + ((bits >> 13) & 1u)) & ~0x1fffu;
        f = from_bits(bits);
    }
    return f;
}

static int max1(int x) {
    return x > 1 ? x : 1;
}

STUB_EXPORT int cublasGemmEx(struct cublasContext* handle, int transa, int transb, int m, int n,
                             int k, const void* alpha, const void* a, int atype, int lda,
                             const void* b, int btype, int ldb, const void* beta, void* c,
                             int ctype, int ldc, int compute, int algo) {
    if (handle == NULL) return STATUS_NOT_INITIALIZED;
    state.stream = handle->stream;
    state.transa = transa, state.transb = transb, state.m = m, state.n = n, state.k = k;
    state.lda = lda, state.ldb = ldb, state.ldc = ldc;
    state.atype = atype, state.btype = btype, state.ctype = ctype, state.compute = compute;
    state.algo = algo;
    ++state.gemms;
    /* cuBLAS's own checks (its documentation of cublasGemmEx). */
    if (m < 0 || n < 0 || k < 0 || transa < 0 || transa > 1 || transb < 0 || transb > 1 ||
        lda < max1(transa == 0 ? m : k) || ldb < max1(transb == 0 ? k : n) || ldc < max1(m))
        return STATUS_INVALID_VALUE;
    if (atype != btype || (atype != R_32F && atype != R_16F && atype != R_16BF) || ctype != R_32F ||
        (compute != COMPUTE_32F && compute != COMPUTE_32F_FAST_TF32) ||
        (compute == COMPUTE_32F_FAST_TF32 && atype != R_32F))
        return STATUS_NOT_SUPPORTED;
    if (state.fail_next != 0) {
        const int status = state.fail_next;
        state.fail_next = 0;
        return status;
    }
    const float al = *(const float*)alpha, be = *(const float*)beta;
    float* out = c;
    for (int j = 0; j < n; ++j)
        for (int i = 0; i < m; ++i) {
            double sum = 0;
            for (int p = 0; p < k; ++p) {
                const size_t ia =
                    transa == 0 ? (size_t)i + (size_t)p * lda : (size_t)p + (size_t)i * lda;
                const size_t ib =
                    transb == 0 ? (size_t)p + (size_t)j * ldb : (size_t)j + (size_t)p * ldb;
                sum += element(a, atype, ia, compute) * element(b, btype, ib, compute);
            }
            float* o = &out[(size_t)i + (size_t)j * ldc];
            /* beta 0: c is not read (BLAS's rule), so garbage in c never shows. */
            *o = (float)(al * sum + (be != 0.0f ? be * *o : 0.0));
        }
    return STATUS_SUCCESS;
}
