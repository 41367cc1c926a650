/* A stand-in CBLAS library for the native plugin's routine tests: cblas_sgemm and cblas_sbgemm,
 * row-major only, plain loops. Distributions' OpenBLAS is built without bfloat16 (no
 * cblas_sbgemm), so this is how gemm_bf16 is run at all where no such OpenBLAS is installed.
 * Like the reference CBLAS it aborts on an argument BLAS forbids (a leading dimension below
 * max(1, the stored row length)), so a plugin that passes one fails the test. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kRowMajor = 101, kNoTrans = 111, kTrans = 112 };

static void check(const char* routine, int order, int ta, int tb, int m, int n, int k, int lda,
                  int ldb, int ldc) {
    const int row_a = ta == kTrans ? m : k, row_b = tb == kTrans ? k : n;
    const char* bad = NULL;
    if (order != kRowMajor)
        bad = "order (only CblasRowMajor is faked)";
    else if ((ta != kNoTrans && ta != kTrans) || (tb != kNoTrans && tb != kTrans))
        bad = "a transpose";
    else if (m < 0 || n < 0 || k < 0)
        bad = "a size";
    else if (lda < (row_a > 1 ? row_a : 1))
        bad = "lda";
    else if (ldb < (row_b > 1 ? row_b : 1))
        bad = "ldb";
    else if (ldc < (n > 1 ? n : 1))
        bad = "ldc";
    if (!bad) return;
    fprintf(stderr, "fake %s: invalid %s (m %d n %d k %d lda %d ldb %d ldc %d)\n", routine, bad, m,
            n, k, lda, ldb, ldc);
    abort();
}

static float bf16_value(uint16_t bits) {
    const uint32_t wide = (uint32_t)bits << 16;
    float f;
    memcpy(&f, &wide, sizeof f);
    return f;
}

/* c = alpha op(a) op(b) + beta c, with op(a)[i][p] = a at (ta ? p * lda + i : i * lda + p). */
#define FAKE_GEMM(load)                                                                            \
    for (int i = 0; i < m; ++i)                                                                    \
        for (int j = 0; j < n; ++j) {                                                              \
            float sum = 0.0f;                                                                      \
            for (int p = 0; p < k; ++p)                                                            \
                sum += load(a[ta == kTrans ? (long)p * lda + i : (long)i * lda + p]) *             \
                       load(b[tb == kTrans ? (long)j * ldb + p : (long)p * ldb + j]);              \
            float* out = &c[(long)i * ldc + j];                                                    \
            *out = alpha * sum + (beta == 0.0f ? 0.0f : beta * *out);                              \
        }

#define FAKE_AS_IS(x) (x)

void cblas_sgemm(int order, int ta, int tb, int m, int n, int k, float alpha, const float* a,
                 int lda, const float* b, int ldb, float beta, float* c, int ldc) {
    check("cblas_sgemm", order, ta, tb, m, n, k, lda, ldb, ldc);
    FAKE_GEMM(FAKE_AS_IS)
}

void cblas_sbgemm(int order, int ta, int tb, int m, int n, int k, float alpha, const uint16_t* a,
                  int lda, const uint16_t* b, int ldb, float beta, float* c, int ldc) {
    check("cblas_sbgemm", order, ta, tb, m, n, k, lda, ldb, ldc);
    FAKE_GEMM(bf16_value)
}
