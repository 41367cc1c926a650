// Library routines of the CUDA backend (ABI 1.4, PLX_LANG_ROUTINE): plugin.h's gemms, run by
// cuBLAS's cublasGemmEx on the queue's stream. cuBLAS is opened at run time, once, like the
// driver, and nothing of it is needed to build: the few types it takes are declared here.
#include "cuda_plugin.hpp"

#include <dlfcn.h>
#include <link.h>

#include <cstdlib>
#include <cstring>
#include <type_traits>

// Only to check the declarations below against the real header where the build has it.
#if __has_include(<cublas_api.h>)
#include <cublas_api.h>
#define PLX_CUDA_HAVE_CUBLAS_H 1
#else
#define PLX_CUDA_HAVE_CUBLAS_H 0
#endif

namespace plx_cuda {

// cuBLAS's C ABI as far as the routines use it: its enums are ints of fixed values.
namespace blas {
using Handle = cublasContext*;
using Status = int; // cublasStatus_t
constexpr Status kSuccess = 0, kNotInitialized = 1, kAllocFailed = 3, kArchMismatch = 8,
                 kNotSupported = 15;
using Operation = int; // cublasOperation_t
constexpr Operation kOpN = 0, kOpT = 1;
using DataType = int; // cudaDataType
constexpr DataType kR32F = 0, kR16F = 2, kR16BF = 14;
using ComputeType = int; // cublasComputeType_t
constexpr ComputeType kCompute32F = 68, kCompute32FFastTF32 = 77;
using Math = int;                // cublasMath_t
constexpr Math kDefaultMath = 0; // no TF32: CUBLAS_COMPUTE_32F stays f32
using GemmAlgo = int;            // cublasGemmAlgo_t
constexpr GemmAlgo kGemmDefault = -1;
} // namespace blas

#if PLX_CUDA_HAVE_CUBLAS_H
static_assert(std::is_same_v<blas::Handle, cublasHandle_t>);
static_assert(sizeof(cublasStatus_t) == sizeof(int) && sizeof(cudaDataType) == sizeof(int) &&
              sizeof(cublasComputeType_t) == sizeof(int));
static_assert(blas::kSuccess == CUBLAS_STATUS_SUCCESS &&
              blas::kNotInitialized == CUBLAS_STATUS_NOT_INITIALIZED &&
              blas::kAllocFailed == CUBLAS_STATUS_ALLOC_FAILED &&
              blas::kArchMismatch == CUBLAS_STATUS_ARCH_MISMATCH &&
              blas::kNotSupported == CUBLAS_STATUS_NOT_SUPPORTED);
static_assert(blas::kOpN == CUBLAS_OP_N && blas::kOpT == CUBLAS_OP_T);
static_assert(blas::kR32F == CUDA_R_32F && blas::kR16F == CUDA_R_16F &&
              blas::kR16BF == CUDA_R_16BF);
static_assert(blas::kCompute32F == CUBLAS_COMPUTE_32F &&
              blas::kCompute32FFastTF32 == CUBLAS_COMPUTE_32F_FAST_TF32);
static_assert(blas::kDefaultMath == CUBLAS_DEFAULT_MATH &&
              blas::kGemmDefault == CUBLAS_GEMM_DEFAULT);
#endif

// What a routine is: the element type of a and b and how cuBLAS sums (c is always f32).
struct Routine {
    const char* name;
    blas::DataType inputs;
    size_t input_bytes;
    blas::ComputeType compute;
};

namespace {

constexpr Routine kRoutines[] = {
    {"gemm_f32", blas::kR32F, 4, blas::kCompute32F},
    {"gemm_tf32", blas::kR32F, 4, blas::kCompute32FFastTF32},
    {"gemm_f16", blas::kR16F, 2, blas::kCompute32F},
    {"gemm_bf16", blas::kR16BF, 2, blas::kCompute32F},
};

// Every function used, listed once; cuBLAS's ABI symbols are the _v2 names cublas_v2.h maps
// the plain ones to. The status-name functions only improve messages.
// clang-format off
#define PLX_CUBLAS_REQUIRED_FUNCTIONS(X)                                                        \
    X(cublasCreate_v2) X(cublasDestroy_v2) X(cublasSetStream_v2) X(cublasSetMathMode)         \
    X(cublasGemmEx)
#define PLX_CUBLAS_OPTIONAL_FUNCTIONS(X) X(cublasGetStatusName) X(cublasGetStatusString)
// clang-format on

struct Cublas {
    blas::Status (*cublasCreate_v2)(blas::Handle*) = nullptr;
    blas::Status (*cublasDestroy_v2)(blas::Handle) = nullptr;
    blas::Status (*cublasSetStream_v2)(blas::Handle, CUstream) = nullptr;
    blas::Status (*cublasSetMathMode)(blas::Handle, blas::Math) = nullptr;
    blas::Status (*cublasGemmEx)(blas::Handle, blas::Operation, blas::Operation, int, int, int,
                                 const void* alpha, const void* a, blas::DataType, int lda,
                                 const void* b, blas::DataType, int ldb, const void* beta, void* c,
                                 blas::DataType, int ldc, blas::ComputeType,
                                 blas::GemmAlgo) = nullptr;
    const char* (*cublasGetStatusName)(blas::Status) = nullptr;
    const char* (*cublasGetStatusString)(blas::Status) = nullptr;
};

Cublas g_blas;
std::once_flag g_blas_once;
std::string g_blas_missing; // why cuBLAS cannot be used; empty once it can

std::string join(const std::vector<std::string>& names) {
    std::string out;
    for (const std::string& n : names)
        out += (out.empty() ? "" : ", ") + n;
    return out;
}

void open_cublas() {
    // PLEXUS_CUBLAS_LIBRARY names the one library to open (tests use it to force absence or
    // a stub); secure_getenv ignores it in setuid programs. A cuBLAS of a newer CUDA major than
    // the driver's would load and then fail at every call, so it is not tried.
    const char* forced = secure_getenv("PLEXUS_CUBLAS_LIBRARY");
    std::vector<std::string> names;
    std::string skipped;
    if (forced != nullptr && forced[0] != '\0') {
        names.emplace_back(forced);
    } else {
        int version = 0;
        if (drv().cuDriverGetVersion(&version) != CUDA_SUCCESS) version = 0;
        for (int major : {13, 12}) {
            if (version != 0 && version / 1000 < major)
                skipped += std::string(skipped.empty() ? "" : ", ") + "libcublas.so." +
                           std::to_string(major);
            else
                names.push_back("libcublas.so." + std::to_string(major));
        }
        names.emplace_back("libcublas.so");
        if (!skipped.empty())
            skipped = "; skipped " + skipped + ", newer than the driver's CUDA " +
                      std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
    }
    void* handle = nullptr;
    std::string opened, first_error;
    for (const std::string& name : names) {
        if ((handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL)) != nullptr) {
            opened = name;
            break;
        }
        const char* why = dlerror();
        if (first_error.empty()) first_error = why != nullptr ? why : name + ": dlopen failed";
    }
    if (handle == nullptr) {
        g_blas_missing = "cuBLAS was not found (tried " + join(names) + skipped +
                         "): " + first_error +
                         "; install the CUDA toolkit's cuBLAS (12 or 13) to run library routines";
        return;
    }
    link_map* map = nullptr;
    if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_name != nullptr &&
        map->l_name[0] != '\0')
        opened = map->l_name;
    std::string missing;
    auto resolve = [&](const char* symbol, bool required) {
        void* fn = dlsym(handle, symbol);
        if (fn == nullptr && required)
            missing += (missing.empty() ? "" : ", ") + std::string(symbol);
        return fn;
    };
#define PLX_CUBLAS_RESOLVE_REQUIRED(fn)                                                            \
    g_blas.fn = reinterpret_cast<decltype(g_blas.fn)>(resolve(#fn, true));
#define PLX_CUBLAS_RESOLVE_OPTIONAL(fn)                                                            \
    g_blas.fn = reinterpret_cast<decltype(g_blas.fn)>(resolve(#fn, false));
    PLX_CUBLAS_REQUIRED_FUNCTIONS(PLX_CUBLAS_RESOLVE_REQUIRED)
    PLX_CUBLAS_OPTIONAL_FUNCTIONS(PLX_CUBLAS_RESOLVE_OPTIONAL)
#undef PLX_CUBLAS_RESOLVE_REQUIRED
#undef PLX_CUBLAS_RESOLVE_OPTIONAL
    if (!missing.empty()) {
        g_blas_missing = "the cuBLAS library " + opened + " lacks " + missing +
                         ": it is too old (cuBLAS 11 or newer is needed)";
        g_blas = Cublas{};
        dlclose(handle);
        return;
    }
    // Never closed: cuBLAS brings the CUDA runtime, which registers exit handlers.
    log(PLX_LOG_DEBUG, "cuda: opened cuBLAS " + opened);
}

// "cublasGemmEx returned CUBLAS_STATUS_EXECUTION_FAILED (13: the GPU program failed to execute)"
std::string describe_blas(const char* call, blas::Status s) {
    const char* name = g_blas.cublasGetStatusName ? g_blas.cublasGetStatusName(s) : nullptr;
    const char* text = g_blas.cublasGetStatusString ? g_blas.cublasGetStatusString(s) : nullptr;
    std::string out = std::string(call) + " returned " + (name ? name : "cublasStatus_t") + " (" +
                      std::to_string(s);
    if (text != nullptr) out += std::string(": ") + text;
    return out + ")";
}

// The one mapping of a cuBLAS status to the ABI's.
plx_status status_of_blas(blas::Status s) {
    switch (s) {
    case blas::kSuccess: return PLX_OK;
    case blas::kAllocFailed: return PLX_ERROR_OUT_OF_MEMORY;
    case blas::kArchMismatch:
    case blas::kNotSupported: return PLX_ERROR_UNSUPPORTED;
    default: return PLX_ERROR_LAUNCH;
    }
}

const Routine* find_routine(const std::string& name) {
    for (const Routine& r : kRoutines)
        if (name == r.name) return &r;
    return nullptr;
}

std::string routine_names() {
    std::string out;
    for (const Routine& r : kRoutines)
        out += std::string(out.empty() ? "" : ", ") + r.name;
    return out;
}

// The device's cuBLAS handle, created once; the caller holds blas_mutex and made the device's
// context current, so cuBLAS binds the handle to it.
plx_status ensure_handle(plx_device_s* d, const std::string& what) {
    if (d->blas != nullptr) return PLX_OK;
    blas::Handle h = nullptr;
    blas::Status s = g_blas.cublasCreate_v2(&h);
    const char* call = "cublasCreate_v2";
    if (s == blas::kSuccess) {
        // The default already, but said here: gemm_f32 must never round to TF32.
        s = g_blas.cublasSetMathMode(h, blas::kDefaultMath);
        call = "cublasSetMathMode";
        if (s != blas::kSuccess) g_blas.cublasDestroy_v2(h);
    }
    if (s != blas::kSuccess) {
        // A device this cuBLAS cannot serve (too old an architecture, a driver older than the
        // library) does not offer the routines: plugin.h's NOT_FOUND.
        const plx_status st =
            s == blas::kAllocFailed ? PLX_ERROR_OUT_OF_MEMORY : PLX_ERROR_NOT_FOUND;
        return fail(st, what + ": cuBLAS cannot serve device " + std::to_string(d->index) + " (" +
                            d->info.name + ", " + d->info.arch + "): " + describe_blas(call, s));
    }
    d->blas = h;
    log(PLX_LOG_DEBUG, "cuda: device " + std::to_string(d->index) + ": cuBLAS handle created");
    return PLX_OK;
}

const char* kind_name(plx_arg_kind kind) {
    switch (kind) {
    case PLX_ARG_BUFFER: return "a buffer";
    case PLX_ARG_SCALAR: return "a scalar";
    default: return "of no known kind";
    }
}

} // namespace

plx_status routine_load(plx_device_s* d, const char* source, size_t bytes, const char* options,
                        plx_module* module) {
    // A NUL the caller counted in bytes is not part of the name.
    while (bytes > 0 && source[bytes - 1] == '\0')
        --bytes;
    const std::string name(source, bytes);
    const Routine* r = find_routine(name);
    if (r == nullptr) {
        const std::string shown = name.size() > 64 ? name.substr(0, 64) + "..." : name;
        return fail(PLX_ERROR_NOT_FOUND, "cuda: module_load: the CUDA plugin offers no routine '" +
                                             shown + "'; it offers " + routine_names());
    }
    const std::string what = "cuda: module_load of routine '" + name + "'";
    for (const char* c = options != nullptr ? options : ""; *c != '\0'; ++c)
        if (*c != ' ' && *c != '\t' && *c != '\n')
            return fail(PLX_ERROR_INVALID_ARGUMENT,
                        what + ": routines take no options, got '" + options + "'");
    std::call_once(g_blas_once, open_cublas);
    if (!g_blas_missing.empty()) return fail(PLX_ERROR_NOT_FOUND, what + ": " + g_blas_missing);
    if (plx_status s = make_current(d); s != PLX_OK) return s;
    {
        std::lock_guard lock(d->blas_mutex);
        if (plx_status s = ensure_handle(d, what); s != PLX_OK) return s;
    }
    auto m = std::make_unique<plx_module_s>();
    m->device = d;
    m->routine = r;
    m->routine_kernel = std::make_unique<plx_kernel_s>();
    m->routine_kernel->module = m.get();
    m->routine_kernel->routine = r;
    m->routine_kernel->name = r->name;
    *module = m.release();
    return PLX_OK;
}

plx_status routine_launch(plx_queue queue, plx_kernel_s* k, const plx_arg* args, uint32_t num_args,
                          plx_event* event) {
    const Routine& r = *k->routine;
    plx_device_s* d = queue->device;
    auto invalid = [&](const std::string& what) {
        return fail(PLX_ERROR_INVALID_ARGUMENT,
                    "cuda: launch of routine '" + k->name + "': " + what);
    };
    if (k->module->device != d)
        return invalid("it was loaded on device " + std::to_string(k->module->device->index) +
                       ", the queue is on device " + std::to_string(d->index));
    static constexpr const char* kArgs[] = {"a", "b", "c", "m", "n", "k", "trans_a", "trans_b"};
    constexpr uint32_t kNumArgs = sizeof kArgs / sizeof kArgs[0];
    if (num_args != kNumArgs || args == nullptr)
        return invalid("it takes 8 arguments (buffers a, b, c; int32 scalars m, n, k, trans_a, "
                       "trans_b), the launch passes " +
                       std::to_string(num_args) + (args == nullptr ? " (args is NULL)" : ""));
    auto which = [&](uint32_t i) {
        return "argument " + std::to_string(i) + " (" + kArgs[i] + ")";
    };

    plx_buffer_s* buffers[3] = {nullptr, nullptr, nullptr};
    for (uint32_t i = 0; i < 3; ++i) {
        const plx_arg& a = args[i];
        if (a.kind != PLX_ARG_BUFFER)
            return invalid(which(i) + " must be a buffer (PLX_ARG_BUFFER), not " +
                           kind_name(a.kind));
        if (a.buffer == nullptr) return invalid(which(i) + " is a NULL buffer");
        if (a.buffer->device != d)
            return invalid(which(i) + " is a buffer of device " +
                           std::to_string(a.buffer->device->index) + ", the launch is on device " +
                           std::to_string(d->index));
        buffers[i] = a.buffer;
    }
    int32_t values[5] = {0, 0, 0, 0, 0};
    for (uint32_t i = 3; i < kNumArgs; ++i) {
        const plx_arg& a = args[i];
        if (a.kind != PLX_ARG_SCALAR)
            return invalid(which(i) + " must be an int32 scalar (PLX_ARG_SCALAR of 4 bytes), not " +
                           kind_name(a.kind));
        if (a.value == nullptr) return invalid(which(i) + " is a scalar with no value");
        if (a.size != sizeof(int32_t))
            return invalid(which(i) + " is a scalar of " + std::to_string(a.size) +
                           " bytes, not 4 (int32)");
        std::memcpy(&values[i - 3], a.value, sizeof(int32_t));
    }
    const int32_t m = values[0], n = values[1], kk = values[2];
    const int32_t trans_a = values[3], trans_b = values[4];
    for (uint32_t i = 3; i < 6; ++i)
        if (values[i - 3] < 0)
            return invalid(which(i) + " is " + std::to_string(values[i - 3]) +
                           ", a size cannot be negative");
    for (uint32_t i = 6; i < 8; ++i)
        if (values[i - 3] != 0 && values[i - 3] != 1)
            return invalid(which(i) + " is " + std::to_string(values[i - 3]) +
                           ", expected 0 (as stored) or 1 (transposed)");

    // Each matrix must fit its buffer, and c must not overlap what a gemm reads.
    const uint64_t need[3] = {uint64_t(m) * uint64_t(kk) * r.input_bytes,
                              uint64_t(kk) * uint64_t(n) * r.input_bytes,
                              uint64_t(m) * uint64_t(n) * sizeof(float)};
    static constexpr const char* kShapes[] = {"m x k", "k x n", "m x n"};
    for (uint32_t i = 0; i < 3; ++i)
        if (need[i] > buffers[i]->bytes)
            return invalid(which(i) + " holds " + std::to_string(buffers[i]->bytes) +
                           " bytes, fewer than its " + kShapes[i] + " = " +
                           std::to_string(i == 0   ? m
                                          : i == 1 ? kk
                                                   : m) +
                           " x " + std::to_string(i == 0 ? kk : n) + " elements of " +
                           std::to_string(i == 2 ? sizeof(float) : r.input_bytes) +
                           " bytes need (" + std::to_string(need[i]) + ")");
    const CUdeviceptr c = buffers[2]->ptr;
    for (uint32_t i = 0; i < 2; ++i) {
        const CUdeviceptr in = buffers[i]->ptr;
        if (need[2] > 0 && need[i] > 0 && in < c + need[2] && c < in + need[i])
            return invalid("c overlaps " + std::string(kArgs[i]) +
                           ", which the routine reads while it writes c");
    }

    if (plx_status s = make_current(d); s != PLX_OK) return s;
    plx_event_s* pending = nullptr;
    if (plx_status s = event_begin(queue, event, &pending); s != PLX_OK) return s;
    plx_status status = PLX_OK;
    const std::string what = "launch of routine '" + k->name + "'";
    if (m == 0 || n == 0) {
        // c has no element: nothing to do, and the event still completes.
    } else if (kk == 0) {
        // An empty sum: c is zeros, which cuBLAS is not asked to produce.
        CUresult res = drv().cuMemsetD32Async(c, 0, size_t(m) * size_t(n), queue->stream);
        if (res != CUDA_SUCCESS)
            status = cu_error(status_of(res), what.c_str(), PLX_CUDA_NAME(cuMemsetD32Async), res);
    } else {
        // cuBLAS is column-major, and a row-major matrix read column-major is its transpose:
        // row-major c = op(a) op(b) is column-major c^T = op(b)^T op(a)^T, so b goes first,
        // then a, each with its own transposition; a leading dimension is the length of a
        // stored row.
        const float alpha = 1.0f, beta = 0.0f;
        const blas::Operation op_a = trans_a ? blas::kOpT : blas::kOpN;
        const blas::Operation op_b = trans_b ? blas::kOpT : blas::kOpN;
        const int lda = trans_a ? m : kk, ldb = trans_b ? kk : n;
        const void* a = reinterpret_cast<const void*>(buffers[0]->ptr);
        const void* b = reinterpret_cast<const void*>(buffers[1]->ptr);
        std::lock_guard lock(d->blas_mutex);
        if (d->blas == nullptr) { // routine_load made it, and only shutdown unmakes it
            status =
                fail(PLX_ERROR_INTERNAL, "cuda: " + what + ": the device has no cuBLAS handle");
        } else {
            const char* call = "cublasSetStream_v2";
            blas::Status s = g_blas.cublasSetStream_v2(d->blas, queue->stream);
            if (s == blas::kSuccess) {
                call = "cublasGemmEx";
                s = g_blas.cublasGemmEx(d->blas, op_b, op_a, n, m, kk, &alpha, b, r.inputs, ldb, a,
                                        r.inputs, lda, &beta, reinterpret_cast<void*>(c),
                                        blas::kR32F, n, r.compute, blas::kGemmDefault);
            }
            if (s != blas::kSuccess)
                status = fail(status_of_blas(s), "cuda: " + what + ": " + describe_blas(call, s));
        }
    }
    if (status != PLX_OK) {
        event_release(pending);
        return status;
    }
    return event_end(queue, pending, event);
}

void release_routines(plx_device_s* d) {
    std::lock_guard lock(d->blas_mutex);
    if (d->blas == nullptr) return;
    g_blas.cublasDestroy_v2(d->blas);
    d->blas = nullptr;
}

} // namespace plx_cuda
