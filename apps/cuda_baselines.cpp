// CUDA baselines for `plexus bench` (see cuda_baselines.hpp). libcuda, cuBLAS and NVRTC are
// opened with dlopen, so nothing of CUDA is linked; the kernels come from an embedded fatbin.
#include "cuda_baselines.hpp"

#include "plexus/half.hpp"

#if PLEXUS_CB_HAVE_CUDA_H

#include <cublas_api.h>
#include <cuda.h>
#include <dlfcn.h>
#include <glob.h>
#include <nvrtc.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#if PLEXUS_CB_HAVE_FATBIN
#include "cuda_baselines_fatbin.hpp"
#endif

namespace plexus::app::cuda_baseline {
namespace {

using clock_type = std::chrono::steady_clock;

// Thrown only inside this file; every public entry point turns it into an error string.
struct Failure {
    std::string what;
};

// Runs body; returns why it threw, or "" (no exception leaves this file's public functions).
template <class F> std::string failure_of(F&& body) {
    try {
        body();
        return {};
    } catch (const Failure& e) {
        return e.what;
    } catch (const std::exception& e) {
        return e.what();
    }
}

double ms_since(clock_type::time_point t0) {
    return std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
}

// ---- function tables of the libraries opened at run time -----------------------------------

// Every function used, listed once per library. Members are typed decltype(&fn), so the CUDA
// headers check each signature. cuda.h maps plain driver names to the versioned ABI symbols
// (cuMemAlloc -> cuMemAlloc_v2), so member and dlsym name are both the symbol libcuda exports;
// cuBLAS's ABI symbols are the _v2 names that cublas_v2.h would map to, so those are listed.
// clang-format off
#define CB_DRIVER_FUNCTIONS(X)                                                                  \
    X(cuInit) X(cuDeviceGet) X(cuDeviceGetAttribute)                                           \
    X(cuDevicePrimaryCtxRetain) X(cuDevicePrimaryCtxRelease) X(cuCtxSetCurrent) X(cuMemAlloc) \
    X(cuMemFree) X(cuMemcpyHtoD) X(cuMemcpyDtoH) X(cuMemsetD32Async) X(cuStreamCreate)        \
    X(cuStreamDestroy) X(cuStreamSynchronize) X(cuModuleLoadData) X(cuModuleUnload)           \
    X(cuModuleGetFunction) X(cuLaunchKernel) X(cuMemAllocHost) X(cuMemFreeHost) X(cuMemcpyPeer)    \
    X(cuDeviceCanAccessPeer) X(cuCtxEnablePeerAccess) X(cuMemcpyHtoDAsync) X(cuMemcpyDtoHAsync)   \
    X(cuCtxSynchronize) X(cuMemHostRegister) X(cuMemHostUnregister) X(cuMemcpyDtoD)
#define CB_CUBLAS_FUNCTIONS(X)                                                                  \
    X(cublasCreate_v2) X(cublasDestroy_v2) X(cublasSetStream_v2) X(cublasSetMathMode)         \
    X(cublasSgemm_v2)
#define CB_NVRTC_FUNCTIONS(X)                                                                   \
    X(nvrtcGetErrorString) X(nvrtcCreateProgram) X(nvrtcDestroyProgram) X(nvrtcCompileProgram) \
    X(nvrtcGetProgramLogSize) X(nvrtcGetProgramLog) X(nvrtcGetPTXSize) X(nvrtcGetPTX)
// clang-format on
#define CB_STR_(x) #x
#define CB_NAME(fn) CB_STR_(fn)
#define CB_MEMBER(fn) decltype(&::fn) fn = nullptr;
#define CB_REQUIRED(fn) resolve(lib, CB_NAME(fn), t.fn, missing);
#define CB_OPTIONAL(fn) t.fn = reinterpret_cast<decltype(t.fn)>(dlsym(lib, CB_NAME(fn)));

// The error-name functions are optional: they only improve messages.
struct Driver {
    CB_DRIVER_FUNCTIONS(CB_MEMBER) CB_MEMBER(cuGetErrorName) std::string error;
};
// cublasGemmEx has a C++ overload in cublas_api.h, so its member is spelled out: the C one.
using CublasGemmEx = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int,
                                        int, int, const void*, const void*, cudaDataType, int,
                                        const void*, cudaDataType, int, const void*, void*,
                                        cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t);
struct Cublas {
    CB_CUBLAS_FUNCTIONS(CB_MEMBER)
    CB_MEMBER(cublasGetStatusName) CublasGemmEx cublasGemmEx = nullptr;
    std::string error;
};
struct Nvrtc {
    CB_NVRTC_FUNCTIONS(CB_MEMBER) std::string error;
};

template <class Fn> void resolve(void* lib, const char* symbol, Fn& fn, std::string& missing) {
    fn = reinterpret_cast<Fn>(dlsym(lib, symbol));
    if (fn == nullptr) missing += (missing.empty() ? "" : ", ") + std::string(symbol);
}

// A toolkit library's names: the CUDA 13 and 12 sonames, the dev link, then whatever
// /usr/local/cuda/lib64 holds, for a toolkit that is not on the loader's path.
std::vector<std::string> toolkit_names(const std::string& stem) {
    std::vector<std::string> names = {stem + ".so.13", stem + ".so.12", stem + ".so"};
    glob_t g{};
    if (glob(("/usr/local/cuda/lib64/" + stem + ".so*").c_str(), 0, nullptr, &g) == 0)
        names.insert(names.end(), g.gl_pathv, g.gl_pathv + g.gl_pathc);
    globfree(&g);
    return names;
}

// Opens the first of `names` that loads and fills a table from it (fill(lib, table, missing));
// table.error says why when nothing loads or a required function is missing.
template <class Table, class Fill>
Table load(const std::vector<std::string>& names, const std::string& what, Fill fill) {
    Table t;
    std::string why, missing;
    for (const std::string& name : names) {
        // RTLD_LOCAL keeps these symbols away from the plexus plugins, which open their own.
        if (void* lib = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL)) {
            fill(lib, t, missing);
            if (!missing.empty()) t.error = what + " (" + name + ") lacks " + missing;
            return t; // never closed: CUDA libraries start threads and register exit handlers
        }
        const char* e = dlerror();
        if (why.empty()) why = e != nullptr ? e : name + ": dlopen failed";
    }
    t.error = what + " was not found (" + why + ")";
    return t;
}

// Each table is loaded once per process (a function-local static is initialized thread-safely).
const Driver& drv() {
    static const Driver table =
        load<Driver>({"libcuda.so.1", "libcuda.so"}, "libcuda.so.1 (the NVIDIA driver)",
                     [](void* lib, Driver& t, std::string& missing) {
                         CB_DRIVER_FUNCTIONS(CB_REQUIRED) CB_OPTIONAL(cuGetErrorName)
                     });
    return table;
}
const Cublas& blas() {
    static const Cublas table = load<Cublas>(
        toolkit_names("libcublas"), "cuBLAS", [](void* lib, Cublas& t, std::string& missing) {
            CB_CUBLAS_FUNCTIONS(CB_REQUIRED)
            CB_OPTIONAL(cublasGetStatusName) CB_REQUIRED(cublasGemmEx)
        });
    return table;
}
const Nvrtc& rtc() {
    static const Nvrtc table = load<Nvrtc>(
        toolkit_names("libnvrtc"), "NVRTC",
        [](void* lib, Nvrtc& t, std::string& missing) { CB_NVRTC_FUNCTIONS(CB_REQUIRED) });
    return table;
}

// ---- checked calls ----------------------------------------------------------------------

// "cuMemAlloc_v2 returned CUDA_ERROR_OUT_OF_MEMORY (2)", or "... returned status 2" unnamed.
template <class Status> std::string describe(const char* call, Status s, const char* name) {
    const std::string code = std::to_string(static_cast<int>(s));
    return std::string(call) + " returned " +
           (name != nullptr ? std::string(name) + " (" + code + ")" : "status " + code);
}
void check(CUresult r, const char* call) {
    if (r == CUDA_SUCCESS) return;
    const char* name = nullptr;
    if (drv().cuGetErrorName == nullptr || drv().cuGetErrorName(r, &name) != CUDA_SUCCESS)
        name = nullptr;
    throw Failure{describe(call, r, name)};
}
void check(cublasStatus_t s, const char* call) {
    const auto name = blas().cublasGetStatusName;
    if (s != CUBLAS_STATUS_SUCCESS) throw Failure{describe(call, s, name ? name(s) : nullptr)};
}
void check(nvrtcResult r, const char* call, const std::string& log = {}) {
    if (r != NVRTC_SUCCESS)
        throw Failure{describe(call, r, rtc().nvrtcGetErrorString(r)) + (log.empty() ? "" : ":\n") +
                      log};
}

// Calls a function through its table; anything but success throws, naming the call.
#define CB_CU(fn, ...) check(drv().fn(__VA_ARGS__), CB_NAME(fn))
#define CB_BLAS(fn, ...) check(blas().fn(__VA_ARGS__), CB_NAME(fn))
#define CB_RTC(fn, ...) check(rtc().fn(__VA_ARGS__), CB_NAME(fn))

// ---- driver objects, released on scope exit -----------------------------------------------

// A retained primary context, made current on this thread on construction.
class PrimaryContext {
public:
    explicit PrimaryContext(int ordinal) {
        if (!drv().error.empty()) throw Failure{drv().error};
        CB_CU(cuInit, 0);                   // CUDA_ERROR_NO_DEVICE when there is none
        CB_CU(cuDeviceGet, &dev_, ordinal); // CUDA_ERROR_INVALID_DEVICE for a bad ordinal
        CB_CU(cuDevicePrimaryCtxRetain, &ctx_, dev_);
        // A throwing constructor runs no destructor, so release here.
        if (CUresult r = drv().cuCtxSetCurrent(ctx_); r != CUDA_SUCCESS) {
            drv().cuDevicePrimaryCtxRelease(dev_);
            check(r, CB_NAME(cuCtxSetCurrent));
        }
    }
    ~PrimaryContext() { drv().cuDevicePrimaryCtxRelease(dev_); }
    PrimaryContext(const PrimaryContext&) = delete;
    PrimaryContext& operator=(const PrimaryContext&) = delete;

    // Each entry point calls this: plexus's own backend may have made another context current.
    void make_current() const { CB_CU(cuCtxSetCurrent, ctx_); }
    CUcontext context() const { return ctx_; }
    CUdevice device() const { return dev_; }
    int attribute(CUdevice_attribute a) const {
        int v = 0;
        CB_CU(cuDeviceGetAttribute, &v, a, dev_);
        return v;
    }

private:
    CUdevice dev_ = 0;
    CUcontext ctx_ = nullptr;
};

// Device floats. Freed while their context is current: buffers live inside one entry point.
struct DeviceBuffer {
    CUdeviceptr ptr = 0;

    explicit DeviceBuffer(size_t n) { CB_CU(cuMemAlloc, &ptr, n * sizeof(float)); }
    explicit DeviceBuffer(const std::vector<float>& v) : DeviceBuffer(v.size()) {
        CB_CU(cuMemcpyHtoD, ptr, v.data(), v.size() * sizeof(float));
    }
    ~DeviceBuffer() { drv().cuMemFree(ptr); }
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;

    float* floats() const { return reinterpret_cast<float*>(static_cast<uintptr_t>(ptr)); }
    std::vector<float> download(size_t n) const {
        std::vector<float> v(n);
        CB_CU(cuMemcpyDtoH, v.data(), ptr, n * sizeof(float));
        return v;
    }
};

struct Module {
    CUmodule mod = nullptr;

    explicit Module(const void* image) { CB_CU(cuModuleLoadData, &mod, image); }
    ~Module() { drv().cuModuleUnload(mod); }
    Module(const Module&) = delete;
    Module& operator=(const Module&) = delete;
    CUfunction function(const char* name) const {
        CUfunction f = nullptr;
        CB_CU(cuModuleGetFunction, &f, mod, name);
        return f;
    }
};

// A blocking stream (not CU_STREAM_NON_BLOCKING): the synchronous cuMemcpyHtoD / DtoH run on
// the legacy default stream, and only a blocking stream is ordered after them.
struct Stream {
    CUstream s = nullptr;

    Stream() { CB_CU(cuStreamCreate, &s, CU_STREAM_DEFAULT); }
    ~Stream() { drv().cuStreamDestroy(s); }
    Stream(const Stream&) = delete;
    Stream& operator=(const Stream&) = delete;
    void sync() const { CB_CU(cuStreamSynchronize, s); }
};

void launch(CUfunction f, unsigned blocks, unsigned threads, CUstream s, void** args) {
    CB_CU(cuLaunchKernel, f, blocks, 1, 1, threads, 1, 1, 0, s, args, nullptr);
}

// ---- measuring and checking ---------------------------------------------------------------

std::vector<float> random_floats(size_t n, unsigned seed) {
    std::mt19937 g(seed);
    std::uniform_real_distribution<float> d(-1.0f, 1.0f);
    std::vector<float> v(n);
    for (float& x : v)
        x = d(g);
    return v;
}

// `plexus bench`'s rule: median wall-clock seconds of `reps` runs, after one untimed run.
template <class F> double median_seconds(int reps, F&& run) {
    run();
    std::vector<double> t;
    for (int i = 0; i < reps; ++i) {
        const auto t0 = clock_type::now();
        run();
        t.push_back(std::chrono::duration<double>(clock_type::now() - t0).count());
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

// Runs body(f) to measure and check; any exception becomes f.error, with value 0 and verified
// false (a wrong result's speed is kept only in the message: it measured nothing useful).
template <class F> Figure measure(const char* name, F&& body) {
    Figure f;
    f.name = name;
    f.error = failure_of([&] { body(f); });
    if (f.error.empty()) return f;
    if (f.value > 0) f.error += " (measured " + std::to_string(f.value) + ")";
    f.value = 0;
    f.verified = false;
    return f;
}

Failure wrong(const std::string& what, double got, double expected) {
    return Failure{"wrong result: " + what + " = " + std::to_string(got) + ", expected " +
                   std::to_string(expected)};
}

// c[i] == a[i] + b[i] for every i, exactly: the device and the host both add in IEEE single.
void check_sum(const std::vector<float>& a, const std::vector<float>& b,
               const std::vector<float>& c) {
    for (size_t i = 0; i < c.size(); ++i)
        if (c[i] != a[i] + b[i]) throw wrong("c[" + std::to_string(i) + "]", c[i], a[i] + b[i]);
}

// ---- the first launch by hand -------------------------------------------------------------

// One element per thread, as a programmer writes a first kernel.
constexpr const char* kRawVaddSource = R"(
extern "C" __global__ void vadd(const float* a, const float* b, float* c, unsigned long long n) {
    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
})";

std::string compile_to_ptx(int compute_capability) {
    nvrtcProgram prog = nullptr;
    CB_RTC(nvrtcCreateProgram, &prog, kRawVaddSource, "raw_vadd.cu", 0, nullptr, nullptr);
    struct Destroy {
        nvrtcProgram& prog;
        ~Destroy() { rtc().nvrtcDestroyProgram(&prog); }
    } destroy{prog};
    const std::string arch = "--gpu-architecture=compute_" + std::to_string(compute_capability);
    const char* options[] = {arch.c_str()};
    if (nvrtcResult r = rtc().nvrtcCompileProgram(prog, 1, options); r != NVRTC_SUCCESS) {
        size_t size = 0;
        std::string log;
        if (rtc().nvrtcGetProgramLogSize(prog, &size) == NVRTC_SUCCESS && size > 1) {
            log.resize(size);
            if (rtc().nvrtcGetProgramLog(prog, log.data()) != NVRTC_SUCCESS) log.clear();
            while (!log.empty() && (log.back() == '\0' || log.back() == '\n'))
                log.pop_back();
        }
        check(r, "nvrtcCompileProgram", log);
    }
    size_t size = 0;
    CB_RTC(nvrtcGetPTXSize, prog, &size);
    std::string ptx(size, '\0'); // size counts the terminating NUL
    CB_RTC(nvrtcGetPTX, prog, ptx.data());
    return ptx;
}

// Runs the NVRTC vector add on 1M elements and checks every one.
void run_raw_vadd(CUfunction vadd) {
    unsigned long long n = 1 << 20;
    const auto ha = random_floats(n, 5), hb = random_floats(n, 6);
    DeviceBuffer a(ha), b(hb), c(n);
    void* args[] = {&a.ptr, &b.ptr, &c.ptr, &n};
    launch(vadd, unsigned((n + 255) / 256), 256, nullptr, args);
    CB_CU(cuStreamSynchronize, nullptr);
    check_sum(ha, hb, c.download(n));
}

const void* kernels_image() {
#if PLEXUS_CB_HAVE_FATBIN
    return kCudaBaselinesFatbin;
#else
    throw Failure{"no nvcc at build time: the CUDA baseline kernels were not compiled (put nvcc "
                  "in /usr/local/cuda/bin or on PATH, then reconfigure)"};
#endif
}

} // namespace

// ---- Session ------------------------------------------------------------------------------

struct Session::State {
    PrimaryContext ctx; // first: released last, after everything that lives in it
    Stream stream;
    Module module;
    CUfunction vadd4, reduce_sum, empty;
    bool empty_warm = false; // `empty` has run once
    int sm_count;
    cublasHandle_t cublas = nullptr; // created by the first sgemm

    State(int ordinal, const void* image)
        : ctx(ordinal), module(image), vadd4(module.function("vadd4")),
          reduce_sum(module.function("reduce_sum")), empty(module.function("empty")),
          sm_count(ctx.attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)) {}
    ~State() {
        try { // the members' destructors need this context current; the thread may have another
            ctx.make_current();
            if (cublas != nullptr) blas().cublasDestroy_v2(cublas);
        } catch (const Failure&) {
        }
    }

    // Every entry point: arguments checked, then this session's context made current.
    State& enter(bool args_ok, const char* usage) {
        if (!args_ok) throw Failure{usage};
        ctx.make_current();
        return *this;
    }

    void ensure_cublas() {
        if (cublas != nullptr) return;
        if (!blas().error.empty()) throw Failure{blas().error + ": no cuBLAS sgemm baseline"};
        CB_BLAS(cublasCreate_v2, &cublas);
        CB_BLAS(cublasSetStream_v2, cublas, stream.s);
        // Said explicitly: FP32 arithmetic, never TF32 tensor cores.
        CB_BLAS(cublasSetMathMode, cublas, CUBLAS_DEFAULT_MATH);
    }
};

Session::Session(std::unique_ptr<State> state) : state_(std::move(state)) {}
Session::~Session() = default;

std::unique_ptr<Session> Session::open(int ordinal, std::string& why) {
    std::unique_ptr<Session> session;
    why = failure_of([&] {
        const void* image = kernels_image();
        session.reset(new Session(std::make_unique<State>(ordinal, image)));
    });
    return session;
}

Figure Session::vector_add(size_t n, int reps) {
    return measure("CUDA by hand: vadd4 (nvcc -O3, float4, grid-stride)", [&](Figure& f) {
        State& s = state_->enter(n > 0 && reps > 0, "vector_add needs n > 0 and reps > 0");
        const auto ha = random_floats(n, 1), hb = random_floats(n, 2);
        DeviceBuffer a(ha), b(hb), c(n);
        // One float4 per thread, and at least one thread for the tail when n < 4.
        const size_t blocks = std::min<size_t>((std::max<size_t>(n / 4, 1) + 255) / 256, 1u << 30);
        void* args[] = {&a.ptr, &b.ptr, &c.ptr, &n};
        const double sec = median_seconds(reps, [&] {
            launch(s.vadd4, unsigned(blocks), 256, s.stream.s, args);
            s.stream.sync();
        });
        f.value = 12.0 * double(n) / sec / 1e9;
        check_sum(ha, hb, c.download(n));
        f.verified = true;
    });
}

Figure Session::reduce(size_t n, int reps) {
    return measure("CUDA by hand: reduce_sum (nvcc -O3, float4, shuffles)", [&](Figure& f) {
        State& s = state_->enter(n > 0 && reps > 0, "reduce needs n > 0 and reps > 0");
        const auto hx = random_floats(n, 3);
        DeviceBuffer x(hx), out(1);
        const unsigned blocks = unsigned(s.sm_count) * 8; // one full wave: see the kernel
        void* args[] = {&x.ptr, &n, &out.ptr};
        const double sec = median_seconds(reps, [&] {
            CB_CU(cuMemsetD32Async, out.ptr, 0u, 1, s.stream.s);
            launch(s.reduce_sum, blocks, 256, s.stream.s, args);
            s.stream.sync();
        });
        f.value = 4.0 * double(n) / sec / 1e9;
        const double got = out.download(1)[0];
        double sum = 0, magnitude = 0;
        for (float v : hx) {
            sum += v;
            magnitude += std::fabs(v);
        }
        // Float rounding grows with sum |x|, not with the (cancelling) sum itself.
        if (!(std::fabs(got - sum) <= 1e-5 * magnitude)) throw wrong("sum", got, sum);
        f.verified = true;
    });
}

// 256 random elements of row-major C = A B, each within tolerance * sum_p |a b| of the double
// product; throws naming the first that is not.
void check_product(const std::vector<float>& ha, const std::vector<float>& hb,
                   const std::vector<float>& hc, int m, int n, int k, double tolerance) {
    std::mt19937 g(9);
    for (int t = 0; t < 256; ++t) {
        const size_t i = g() % unsigned(m), j = g() % unsigned(n);
        double dot = 0, scale = 0;
        for (size_t p = 0; p < size_t(k); ++p) {
            const double term = double(ha[i * k + p]) * hb[p * n + j];
            dot += term;
            scale += std::fabs(term);
        }
        if (!(std::fabs(hc[i * n + j] - dot) <= tolerance * scale))
            throw wrong("C[" + std::to_string(i) + "][" + std::to_string(j) + "]", hc[i * n + j],
                        dot);
    }
}

Figure Session::gemm_ex(const std::string& inputs, int m, int n, int k, int reps) {
    const bool tf32 = inputs == "tf32", bf16 = inputs == "bf16";
    const std::string name = "cuBLAS cublasGemmEx " + inputs +
                             (tf32 ? " (f32 in memory, CUBLAS_COMPUTE_32F_FAST_TF32)" : "") +
                             " x " + inputs + " -> f32, f32 accumulate";
    return measure(name.c_str(), [&](Figure& f) {
        State& s =
            state_->enter(m > 0 && n > 0 && k > 0 && reps > 0 && (tf32 || bf16 || inputs == "f16"),
                          "gemm_ex needs m, n, k, reps > 0 and inputs f16, bf16 or tf32");
        s.ensure_cublas();
        // The inputs rounded to their type; uploaded as its bits (tf32: plain floats).
        auto rounded = [&](std::vector<float> v) {
            for (float& x : v)
                x = tf32 ? x : bf16 ? float(plexus::bf16(x)) : float(plexus::half(x));
            return v;
        };
        const auto ha = rounded(random_floats(size_t(m) * k, 7)),
                   hb = rounded(random_floats(size_t(k) * n, 8));
        auto upload = [&](const std::vector<float>& v) {
            if (tf32) return std::make_unique<DeviceBuffer>(v);
            std::vector<uint16_t> bits(v.size());
            for (size_t i = 0; i < v.size(); ++i)
                bits[i] = bf16 ? plexus::bf16(v[i]).bits : plexus::half(v[i]).bits;
            auto d = std::make_unique<DeviceBuffer>((v.size() + 1) / 2);
            CB_CU(cuMemcpyHtoD, d->ptr, bits.data(), bits.size() * sizeof(uint16_t));
            return d;
        };
        const auto a = upload(ha), b = upload(hb);
        DeviceBuffer c(size_t(m) * n);
        const cudaDataType in = tf32 ? CUDA_R_32F : bf16 ? CUDA_R_16BF : CUDA_R_16F;
        const cublasComputeType_t compute =
            tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
        const float alpha = 1, beta = 0;
        // Row-major C = A B as column-major C^T = B^T A^T (see sgemm).
        const double sec = median_seconds(reps, [&] {
            CB_BLAS(cublasGemmEx, s.cublas, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &alpha, b->floats(),
                    in, n, a->floats(), in, k, &beta, c.floats(), CUDA_R_32F, n, compute,
                    CUBLAS_GEMM_DEFAULT);
            s.stream.sync();
        });
        f.value = 2.0 * m * double(n) * k / sec / 1e9;
        check_product(ha, hb, c.download(size_t(m) * n), m, n, k, tf32 ? 2e-3 : 1e-4);
        f.verified = true;
    });
}

Figure Session::sgemm(int m, int n, int k, int reps) {
    return measure("cuBLAS cublasSgemm_v2 FP32 (default math, no TF32)", [&](Figure& f) {
        State& s =
            state_->enter(m > 0 && n > 0 && k > 0 && reps > 0, "sgemm needs m, n, k, reps > 0");
        s.ensure_cublas();
        const auto ha = random_floats(size_t(m) * k, 7), hb = random_floats(size_t(k) * n, 8);
        DeviceBuffer a(ha), b(hb), c(size_t(m) * n);
        const float alpha = 1, beta = 0;
        // cuBLAS is column-major, and a row-major matrix read column-major is its transpose:
        // row-major C = A B is column-major C^T = B^T A^T, so B goes first, then A.
        const double sec = median_seconds(reps, [&] {
            CB_BLAS(cublasSgemm_v2, s.cublas, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &alpha, b.floats(),
                    n, a.floats(), k, &beta, c.floats(), n);
            s.stream.sync();
        });
        f.value = 2.0 * m * double(n) * k / sec / 1e9;
        check_product(ha, hb, c.download(size_t(m) * n), m, n, k, 1e-3);
        f.verified = true;
    });
}

Figure Session::empty_launch_round_us(int launches) {
    return measure("cuLaunchKernel of an empty kernel, 1 block of 32, host us", [&](Figure& f) {
        State& s = state_->enter(launches > 0, "empty_launch_round_us needs launches > 0");
        if (!s.empty_warm) { // the first launch loads the code
            launch(s.empty, 1, 32, s.stream.s, nullptr);
            s.stream.sync();
            s.empty_warm = true;
        }
        const auto t0 = clock_type::now();
        for (int i = 0; i < launches; ++i)
            launch(s.empty, 1, 32, s.stream.s, nullptr);
        f.value = ms_since(t0) * 1e3 / launches;
        s.stream.sync(); // outside the timed part; a failed launch surfaces here
        f.verified = true;
    });
}

Figure Session::memcpy_gbps(size_t bytes, bool upload, int reps) {
    return measure(
        upload ? "cuMemcpyHtoD from cuMemAllocHost memory"
               : "cuMemcpyDtoH into cuMemAllocHost memory",
        [&](Figure& f) {
            state_->enter(bytes > 0 && reps > 0, "memcpy_gbps needs bytes > 0 and reps > 0");
            void* host = nullptr;
            CB_CU(cuMemAllocHost, &host, bytes);
            std::unique_ptr<void, void (*)(void*)> free_host(
                host, [](void* p) { drv().cuMemFreeHost(p); });
            const size_t n = bytes / sizeof(float);
            DeviceBuffer dev(n);
            auto* words = static_cast<float*>(host);
            for (size_t i = 0; i < n; ++i)
                words[i] = float(i % 1000);
            CB_CU(cuMemcpyHtoD, dev.ptr, host, n * sizeof(float));
            const double sec = median_seconds(reps, [&] {
                if (upload)
                    CB_CU(cuMemcpyHtoD, dev.ptr, host, n * sizeof(float));
                else
                    CB_CU(cuMemcpyDtoH, host, dev.ptr, n * sizeof(float));
            });
            f.value = double(n * sizeof(float)) / sec / 1e9;
            // Both directions moved the same words: check them all, once back on the host.
            if (upload) {
                std::memset(host, 0, n * sizeof(float));
                CB_CU(cuMemcpyDtoH, host, dev.ptr, n * sizeof(float));
            }
            for (size_t i = 0; i < n; ++i)
                if (words[i] != float(i % 1000))
                    throw Failure{"memcpy_gbps: word " + std::to_string(i) + " is wrong"};
            f.verified = true;
        });
}

Figure Session::host_copy_gbps(size_t bytes, bool upload, int reps) {
    const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
    const std::string name =
        std::string(upload ? "memcpy from ordinary into cuMemAllocHost memory"
                           : "memcpy from cuMemAllocHost into ordinary memory") +
        ", " + std::to_string(threads) + " threads";
    return measure(name.c_str(), [&](Figure& f) {
        state_->enter(bytes > 0 && reps > 0, "host_copy_gbps needs bytes > 0 and reps > 0");
        void* pinned = nullptr;
        CB_CU(cuMemAllocHost, &pinned, bytes);
        std::unique_ptr<void, void (*)(void*)> free_pinned(pinned,
                                                           [](void* p) { drv().cuMemFreeHost(p); });
        std::vector<unsigned char> pageable(bytes);
        auto* from = upload ? pageable.data() : static_cast<unsigned char*>(pinned);
        auto* to = upload ? static_cast<unsigned char*>(pinned) : pageable.data();
        for (size_t i = 0; i < bytes; ++i)
            from[i] = static_cast<unsigned char>(i * 13 + (i >> 12));
        std::memset(to, 0, bytes);
        const double sec = median_seconds(reps, [&] {
            std::vector<std::thread> team;
            const size_t share = (bytes / threads + 63) & ~size_t(63);
            for (unsigned t = 0; t < threads; ++t) {
                const size_t at = std::min(bytes, t * share), n = std::min(share, bytes - at);
                team.emplace_back([=] { std::memcpy(to + at, from + at, n); });
            }
            for (std::thread& t : team)
                t.join();
        });
        f.value = double(bytes) / sec / 1e9;
        if (std::memcmp(to, from, bytes) != 0) throw Failure{"host_copy_gbps: the copy differs"};
        f.verified = true;
    });
}

Figure Session::registered_copy_gbps(size_t bytes, bool upload, int reps) {
    return measure(upload
                       ? "cuMemHostRegister of ordinary memory, cuMemcpyHtoD, cuMemHostUnregister"
                       : "cuMemHostRegister of ordinary memory, cuMemcpyDtoH, cuMemHostUnregister",
                   [&](Figure& f) {
                       state_->enter(bytes > 0 && reps > 0,
                                     "registered_copy_gbps needs bytes > 0 and reps > 0");
                       // Page-aligned ordinary memory, as a large malloc would give.
                       const size_t n = bytes / sizeof(float),
                                    size = (n * sizeof(float) + 4095) & ~size_t(4095);
                       std::unique_ptr<float, void (*)(void*)> memory(
                           static_cast<float*>(std::aligned_alloc(4096, size)), std::free);
                       if (!memory) throw Failure{"registered_copy_gbps: out of host memory"};
                       float* words = memory.get();
                       std::vector<float> want(n);
                       for (size_t i = 0; i < n; ++i)
                           want[i] = words[i] = float(i % 983);
                       DeviceBuffer dev(n);
                       CB_CU(cuMemcpyHtoD, dev.ptr, words, n * sizeof(float));
                       const double sec = median_seconds(reps, [&] {
                           CB_CU(cuMemHostRegister, words, n * sizeof(float), 0u);
                           CUresult r = upload
                                            ? drv().cuMemcpyHtoD(dev.ptr, words, n * sizeof(float))
                                            : drv().cuMemcpyDtoH(words, dev.ptr, n * sizeof(float));
                           CB_CU(cuMemHostUnregister, words);
                           check(r, upload ? "cuMemcpyHtoD" : "cuMemcpyDtoH");
                       });
                       f.value = double(n * sizeof(float)) / sec / 1e9;
                       if (!upload) std::fill(words, words + n, 0.0f);
                       CB_CU(cuMemcpyDtoH, words, dev.ptr, n * sizeof(float));
                       if (!std::equal(want.begin(), want.end(), words))
                           throw Failure{"registered_copy_gbps: the words differ"};
                       f.verified = true;
                   });
}

Figure Session::duplex_gbps(size_t bytes, int reps) {
    return measure(
        "cuMemcpyHtoDAsync and cuMemcpyDtoHAsync at once on two streams, page-locked memory",
        [&](Figure& f) {
            state_->enter(bytes > 0 && reps > 0, "duplex_gbps needs bytes > 0 and reps > 0");
            void* up = nullptr;
            void* down = nullptr;
            CB_CU(cuMemAllocHost, &up, bytes);
            std::unique_ptr<void, void (*)(void*)> free_up(up,
                                                           [](void* p) { drv().cuMemFreeHost(p); });
            CB_CU(cuMemAllocHost, &down, bytes);
            std::unique_ptr<void, void (*)(void*)> free_down(
                down, [](void* p) { drv().cuMemFreeHost(p); });
            const size_t n = bytes / sizeof(float);
            DeviceBuffer to(n), from(n);
            auto* words = static_cast<float*>(up);
            for (size_t i = 0; i < n; ++i)
                words[i] = float(i % 991);
            Stream s1, s2;
            const double sec = median_seconds(reps, [&] {
                CB_CU(cuMemcpyHtoDAsync, to.ptr, up, n * sizeof(float), s1.s);
                CB_CU(cuMemcpyDtoHAsync, down, from.ptr, n * sizeof(float), s2.s);
                s1.sync();
                s2.sync();
            });
            f.value = 2.0 * double(n * sizeof(float)) / sec / 1e9;
            if (to.download(n) != std::vector<float>(words, words + n))
                throw Failure{"duplex_gbps: the upload differs"};
            f.verified = true;
        });
}

Figure Session::peer_copy_gbps(int other, size_t bytes, int reps) {
    const std::string name =
        "cuMemcpyPeer from device " + std::to_string(other) + ", peer access on where possible";
    return measure(name.c_str(), [&](Figure& f) {
        State& s = state_->enter(bytes > 0 && reps > 0 && other >= 0,
                                 "peer_copy_gbps needs bytes, reps > 0");
        const size_t n = bytes / sizeof(float);
        std::vector<float> words(n);
        for (size_t i = 0; i < n; ++i)
            words[i] = float(i % 997);
        PrimaryContext peer(other); // current now: the source lives there
        DeviceBuffer src(words);
        s.ctx.make_current();
        int can = 0;
        CB_CU(cuDeviceCanAccessPeer, &can, s.ctx.device(), peer.device());
        if (can) {
            CUresult r = drv().cuCtxEnablePeerAccess(peer.context(), 0);
            if (r != CUDA_SUCCESS && r != CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED)
                check(r, "cuCtxEnablePeerAccess");
        }
        DeviceBuffer dst(n);
        // A copy between devices returns before it ends: the context is synchronized too.
        const double sec = median_seconds(reps, [&] {
            CB_CU(cuMemcpyPeer, dst.ptr, s.ctx.context(), src.ptr, peer.context(),
                  n * sizeof(float));
            CB_CU(cuCtxSynchronize);
        });
        f.value = double(n * sizeof(float)) / sec / 1e9;
        if (dst.download(n) != words)
            throw Failure{"peer_copy_gbps: the copy differs from the source"};
        f.verified = true;
        peer.make_current(); // src is freed in its own context
    });
}

Figure Session::d2d_copy_gbps(size_t bytes, int reps) {
    return measure("cuMemcpyDtoD, bytes read + written", [&](Figure& f) {
        state_->enter(bytes >= sizeof(float) && reps > 0, "d2d_copy_gbps needs bytes, reps > 0");
        const size_t n = bytes / sizeof(float);
        std::vector<float> words(n);
        for (size_t i = 0; i < n; ++i)
            words[i] = float(i % 1009);
        DeviceBuffer src(words), dst(n);
        const double sec = median_seconds(reps, [&] {
            CB_CU(cuMemcpyDtoD, dst.ptr, src.ptr, n * sizeof(float));
            CB_CU(cuCtxSynchronize);
        });
        f.value = 2.0 * double(n * sizeof(float)) / sec / 1e9;
        if (dst.download(n) != words)
            throw Failure{"d2d_copy_gbps: the copy differs from the source"};
        f.verified = true;
    });
}

Figure duplex_every_device_gbps(int devices, size_t bytes, int reps) {
    return measure(
        "cuMemcpyHtoDAsync and cuMemcpyDtoHAsync at once on two streams of every device, "
        "page-locked memory",
        [&](Figure& f) {
            if (devices < 1 || reps < 1 || bytes < sizeof(float) * size_t(devices))
                throw Failure{
                    "duplex_every_device_gbps needs devices, reps > 0 and bytes for every device"};
            // Each device's share of the bytes, both ways, its memory allocated in its own context.
            const size_t n = bytes / sizeof(float) / size_t(devices);
            struct Lane {
                explicit Lane(int ordinal, size_t n) : ctx(ordinal), to(n), from(n) {
                    CB_CU(cuMemAllocHost, &up, n * sizeof(float));
                    CB_CU(cuMemAllocHost, &down, n * sizeof(float));
                }
                ~Lane() {
                    drv().cuMemFreeHost(up);
                    drv().cuMemFreeHost(down);
                }
                PrimaryContext ctx;
                DeviceBuffer to, from;
                Stream s1, s2;
                void* up = nullptr;
                void* down = nullptr;
            };
            std::vector<std::unique_ptr<Lane>> lanes;
            for (int d = 0; d < devices; ++d) {
                lanes.push_back(std::make_unique<Lane>(d, n));
                auto* words = static_cast<float*>(lanes.back()->up);
                for (size_t i = 0; i < n; ++i)
                    words[i] = float((i + size_t(d)) % 991);
            }
            const double sec = median_seconds(reps, [&] {
                for (auto& l : lanes) {
                    l->ctx.make_current();
                    CB_CU(cuMemcpyHtoDAsync, l->to.ptr, l->up, n * sizeof(float), l->s1.s);
                    CB_CU(cuMemcpyDtoHAsync, l->down, l->from.ptr, n * sizeof(float), l->s2.s);
                }
                for (auto& l : lanes) {
                    l->s1.sync();
                    l->s2.sync();
                }
            });
            f.value = 2.0 * double(n * sizeof(float)) * devices / sec / 1e9;
            for (auto& l : lanes) {
                l->ctx.make_current();
                const auto* words = static_cast<const float*>(l->up);
                if (l->to.download(n) != std::vector<float>(words, words + n))
                    throw Failure{"duplex_every_device_gbps: an upload differs"};
            }
            f.verified = true;
            // Each lane's memory is freed in its own context: the last made current first.
            while (!lanes.empty()) {
                lanes.back()->ctx.make_current();
                lanes.pop_back();
            }
        });
}

RawFirstLaunch raw_first_launch(int ordinal) {
    RawFirstLaunch r;
    r.error = failure_of([&] {
        auto t0 = clock_type::now();
        PrimaryContext ctx(ordinal);
        r.init_ms = ms_since(t0);
        const int cc = 10 * ctx.attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) +
                       ctx.attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
        t0 = clock_type::now();
        if (!rtc().error.empty()) throw Failure{rtc().error};
        r.nvrtc_open_ms = ms_since(t0);
        t0 = clock_type::now();
        const std::string ptx = compile_to_ptx(cc);
        r.nvrtc_ms = ms_since(t0);
        t0 = clock_type::now();
        Module module(ptx.c_str());
        r.module_load_ms = ms_since(t0);
        run_raw_vadd(module.function("vadd"));
        r.verified = true;
    });
    return r;
}

} // namespace plexus::app::cuda_baseline

#else // built without cuda.h: the same API, saying why there is nothing to measure

namespace plexus::app::cuda_baseline {
namespace {
const char* const kNoCudaH = "built without cuda.h: no CUDA baselines (install the CUDA toolkit "
                             "in /usr/local/cuda, then reconfigure)";
Figure absent() {
    Figure f;
    f.error = kNoCudaH;
    return f;
}
} // namespace

struct Session::State {};
Session::Session(std::unique_ptr<State> state) : state_(std::move(state)) {}
Session::~Session() = default;
std::unique_ptr<Session> Session::open(int, std::string& why) {
    why = kNoCudaH;
    return nullptr;
}
Figure Session::vector_add(size_t, int) {
    return absent();
}
Figure Session::reduce(size_t, int) {
    return absent();
}
Figure Session::sgemm(int, int, int, int) {
    return absent();
}
Figure Session::gemm_ex(const std::string&, int, int, int, int) {
    return absent();
}
Figure Session::empty_launch_round_us(int) {
    return absent();
}
Figure Session::memcpy_gbps(size_t, bool, int) {
    return absent();
}
Figure Session::peer_copy_gbps(int, size_t, int) {
    return absent();
}
Figure Session::duplex_gbps(size_t, int) {
    return absent();
}
Figure Session::d2d_copy_gbps(size_t, int) {
    return absent();
}
Figure Session::host_copy_gbps(size_t, bool, int) {
    return absent();
}
Figure Session::registered_copy_gbps(size_t, bool, int) {
    return absent();
}
Figure duplex_every_device_gbps(int, size_t, int) {
    return absent();
}
RawFirstLaunch raw_first_launch(int) {
    RawFirstLaunch r;
    r.error = kNoCudaH;
    return r;
}

} // namespace plexus::app::cuda_baseline

#endif
