// The CUDA plugin's library routines (ABI 1.4, PLX_LANG_ROUTINE: gemm_f32, gemm_tf32, gemm_f16,
// gemm_bf16 with cuBLAS) through its C ABI only: every routine with every transposition at an
// odd and a larger shape, every element of c against a double-precision host reference; empty
// sizes; arguments that are not the routine's; several threads at once.
//
// Suite gpu runs it on a real GPU with the real cuBLAS; without a driver, a device or cuBLAS
// it prints "SKIP: ..." and exits with --skip-exit-code=N (meson passes 77, its "skipped").
// Suite unit runs it over stub_libcuda.c and stub_libcublas.c (PLEXUS_CUDA_LIBRARY,
// PLEXUS_CUBLAS_LIBRARY), which compute on the host, and then also checks what the plugin
// asked of cuBLAS and how it reports a cuBLAS failure.
#define DOCTEST_CONFIG_IMPLEMENT
#include "plugin_host.hpp"
#include "plugins/common/plx_args.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

using plexus::test::contains;
using plexus::test::PluginHost;

namespace {

// stub_libcublas.c's record of the plugin's calls (the same layout).
struct StubState {
    unsigned long creates, destroys, set_streams, gemms;
    int math_mode;
    void* stream;
    int transa, transb, m, n, k, lda, ldb, ldc, atype, btype, ctype, compute, algo;
    int fail_next;
};

PluginHost* g_host = nullptr;
const plx_plugin* P = nullptr;
plx_device g_device = nullptr;
StubState* g_stub = nullptr; // running over the stubs

std::string err() {
    return g_host->error();
}

#define PLX_REQUIRE_OK(expr)                                                                       \
    do {                                                                                           \
        plx_status plx_s_ = (expr);                                                                \
        REQUIRE_MESSAGE(plx_s_ == PLX_OK, #expr " -> " << int(plx_s_) << ": " << err());           \
    } while (0)

// The stub cuBLAS the plugin opened, found again by its path; null over the real one.
StubState* find_stub() {
    const char* path = std::getenv("PLEXUS_CUBLAS_LIBRARY");
    if (path == nullptr || path[0] == '\0') return nullptr;
    void* lib = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
    if (lib == nullptr) return nullptr;
    auto state = reinterpret_cast<StubState* (*)()>(dlsym(lib, "cublasstub_state"));
    return state != nullptr ? state() : nullptr;
}

// ---- 16-bit floats, rounded to nearest even as cuBLAS's callers round them --------------------

uint32_t bits_of(float f) {
    uint32_t b;
    std::memcpy(&b, &f, sizeof b);
    return b;
}
float float_of(uint32_t b) {
    float f;
    std::memcpy(&f, &b, sizeof f);
    return f;
}

uint16_t half_bits(float f) {
    const uint32_t x = bits_of(f), sign = (x >> 16) & 0x8000u, ax = x & 0x7fffffffu;
    if (ax >= 0x7f800000u) return uint16_t(sign | 0x7c00u | (ax > 0x7f800000u ? 0x200u : 0u));
    if (ax >= 0x477ff000u) return uint16_t(sign | 0x7c00u); // 65520 and up round to infinity
    if (ax < 0x38800000u) // below 2^-14: a subnormal half, in units of 2^-24 (exact scaling)
        return uint16_t(sign | uint32_t(std::nearbyint(float_of(ax) * 16777216.0f)));
    uint32_t h = ((((ax >> 23) - 127 + 15) << 10) | ((ax & 0x7fffffu) >> 13));
    const uint32_t rest = ax & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h; // a carry moves the exponent
    return uint16_t(sign | h);
}
float half_value(uint16_t h) {
    const int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    const float v = e == 0 ? std::ldexp(float(m), -24) : std::ldexp(float(1024 + m), e - 25);
    return (h & 0x8000) ? -v : v;
}
uint16_t bf16_bits(float f) {
    const uint32_t x = bits_of(f);
    return uint16_t((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}
float bf16_value(uint16_t b) {
    return float_of(uint32_t(b) << 16);
}

// ---- the routines ----------------------------------------------------------------------------

enum class Type { F32, TF32, F16, BF16 };
struct RoutineCase {
    const char* name;
    Type type;
};
constexpr RoutineCase kRoutines[] = {{"gemm_f32", Type::F32},
                                     {"gemm_tf32", Type::TF32},
                                     {"gemm_f16", Type::F16},
                                     {"gemm_bf16", Type::BF16}};

size_t input_bytes(Type t) {
    return t == Type::F16 || t == Type::BF16 ? 2 : 4;
}

struct Buffer {
    plx_buffer handle = nullptr;
    size_t bytes = 0;
    explicit Buffer(size_t n) : bytes(n) { PLX_REQUIRE_OK(P->buffer_alloc(g_device, n, &handle)); }
    ~Buffer() { P->buffer_free(handle); }
    Buffer(const Buffer&) = delete;
    Buffer& operator=(const Buffer&) = delete;
};

struct Queue {
    plx_queue handle = nullptr;
    explicit Queue(uint32_t flags = 0) {
        PLX_REQUIRE_OK(P->queue_create(g_device, flags, &handle));
    }
    ~Queue() { P->queue_destroy(handle); }
    Queue(const Queue&) = delete;
    Queue& operator=(const Queue&) = delete;
};

struct Routine {
    plx_module module = nullptr;
    plx_kernel kernel = nullptr;
    explicit Routine(const char* name) {
        PLX_REQUIRE_OK(
            P->module_load(g_device, PLX_LANG_ROUTINE, name, std::strlen(name), "", &module));
        PLX_REQUIRE_OK(P->kernel_get(module, name, &kernel));
    }
    ~Routine() { P->module_unload(module); }
    Routine(const Routine&) = delete;
    Routine& operator=(const Routine&) = delete;
};

using plexus::test::buffer_arg;
using plexus::test::scalar_arg;

// The arguments of one gemm launch, in plugin.h's order; the scalars live here.
struct GemmArgs {
    int32_t values[5];
    plx_arg args[8];
    GemmArgs(plx_buffer a, plx_buffer b, plx_buffer c, int32_t m, int32_t n, int32_t k,
             int32_t trans_a, int32_t trans_b)
        : values{m, n, k, trans_a, trans_b} {
        args[0] = buffer_arg(a);
        args[1] = buffer_arg(b);
        args[2] = buffer_arg(c);
        for (int i = 0; i < 5; ++i)
            args[3 + i] = scalar_arg(values[i]);
    }
};

plx_launch_dims any_dims() { // ignored by routines
    plx_launch_dims d{};
    d.struct_size = sizeof d;
    d.dims = 1;
    d.global_size[0] = d.global_size[1] = d.global_size[2] = 1;
    d.local_size[0] = d.local_size[1] = d.local_size[2] = 1;
    return d;
}

// Random values in [-1, 1], rounded to the routine's input type: `values` as the reference
// sees them, `bytes` as the device gets them.
struct Input {
    std::vector<float> values;
    std::vector<unsigned char> bytes;
    Input(size_t n, Type t, std::mt19937& rng) : values(n), bytes(n * input_bytes(t)) {
        std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
        for (size_t i = 0; i < n; ++i) {
            const float x = dist(rng);
            if (t == Type::F16 || t == Type::BF16) {
                const uint16_t h = t == Type::F16 ? half_bits(x) : bf16_bits(x);
                values[i] = t == Type::F16 ? half_value(h) : bf16_value(h);
                std::memcpy(&bytes[i * 2], &h, 2);
            } else {
                values[i] = x;
                std::memcpy(&bytes[i * 4], &x, 4);
            }
        }
    }
};

const uint32_t kNanBits = 0x7fc00000u; // what c holds before a launch: every element must change

void upload(plx_queue q, const Buffer& b, const void* data, size_t bytes) {
    if (bytes > 0) PLX_REQUIRE_OK(P->buffer_write(q, b.handle, 0, data, bytes));
}
void poison(plx_queue q, const Buffer& c) {
    PLX_REQUIRE_OK(P->buffer_fill(q, c.handle, 0, &kNanBits, 4, c.bytes));
}
std::vector<float> download(plx_queue q, const Buffer& c, size_t count) {
    std::vector<float> out(count);
    if (count > 0) PLX_REQUIRE_OK(P->buffer_read(q, c.handle, 0, out.data(), count * 4));
    return out;
}

// Compares every element of c (m x n, row-major) with the double product of op(a) op(b), within
// |got - want| <= (k + 16) 2^-23 sum|a b| + 1e-6 (exact products, f32 sums), plus 2^-9 sum|a b|
// for tf32 (each input rounded to 10 bits of mantissa). Returns "" or the first mismatches.
std::string check_product(const std::vector<float>& a, const std::vector<float>& b,
                          const std::vector<float>& c, int m, int n, int k, int trans_a,
                          int trans_b, Type t) {
    size_t bad = 0;
    std::string first;
    for (int i = 0; i < m; ++i)
        for (int j = 0; j < n; ++j) {
            double want = 0, scale = 0;
            for (int p = 0; p < k; ++p) {
                const double x = trans_a ? a[size_t(p) * m + i] : a[size_t(i) * k + p];
                const double y = trans_b ? b[size_t(j) * k + p] : b[size_t(p) * n + j];
                want += x * y;
                scale += std::fabs(x * y);
            }
            double tolerance = (k + 16) * std::ldexp(1.0, -23) * scale + 1e-6;
            if (t == Type::TF32) tolerance += std::ldexp(1.0, -9) * scale;
            const double got = c[size_t(i) * n + j];
            if (!(std::fabs(got - want) <= tolerance)) {
                if (++bad <= 3)
                    first += " c[" + std::to_string(i) + "][" + std::to_string(j) +
                             "] = " + std::to_string(got) + ", want " + std::to_string(want) +
                             " (tolerance " + std::to_string(tolerance) + ");";
            }
        }
    return bad == 0 ? "" : std::to_string(bad) + " wrong elements:" + first;
}

// One gemm of the routine on random inputs, checked; `profiling` also checks its event's times.
void run_gemm(const RoutineCase& rc, plx_kernel kernel, plx_queue q, int m, int n, int k,
              int trans_a, int trans_b, uint32_t seed, bool profiling) {
    CAPTURE(rc.name);
    CAPTURE(m);
    CAPTURE(n);
    CAPTURE(k);
    CAPTURE(trans_a);
    CAPTURE(trans_b);
    std::mt19937 rng(seed);
    const Input a(size_t(m) * k, rc.type, rng), b(size_t(k) * n, rc.type, rng);
    Buffer da(std::max<size_t>(a.bytes.size(), 1)), db(std::max<size_t>(b.bytes.size(), 1));
    Buffer dc(std::max<size_t>(size_t(m) * n * 4, 4));
    upload(q, da, a.bytes.data(), a.bytes.size());
    upload(q, db, b.bytes.data(), b.bytes.size());
    poison(q, dc);
    GemmArgs args(da.handle, db.handle, dc.handle, m, n, k, trans_a, trans_b);
    const plx_launch_dims dims = any_dims();
    plx_event e = nullptr;
    PLX_REQUIRE_OK(P->launch(q, kernel, &dims, args.args, 8, &e));
    REQUIRE(e != nullptr);
    if (g_stub != nullptr && m > 0 && n > 0 && k > 0) {
        // What cuBLAS was asked: column-major c^T = op(b)^T op(a)^T on the queue's stream.
        uint64_t stream = 0;
        PLX_REQUIRE_OK(P->queue_native(q, &stream));
        CHECK(g_stub->stream == reinterpret_cast<void*>(stream));
        CHECK(g_stub->transa == trans_b);
        CHECK(g_stub->transb == trans_a);
        CHECK(g_stub->m == n);
        CHECK(g_stub->n == m);
        CHECK(g_stub->k == k);
        CHECK(g_stub->compute ==
              (rc.type == Type::TF32 ? 77 : 68)); // CUBLAS_COMPUTE_32F[_FAST_TF32]
        CHECK(g_stub->atype == (rc.type == Type::F16 ? 2 : rc.type == Type::BF16 ? 14 : 0));
        CHECK(g_stub->ctype == 0);
        CHECK(g_stub->math_mode == 0); // CUBLAS_DEFAULT_MATH: no TF32 for gemm_f32
    }
    PLX_REQUIRE_OK(P->event_wait(e));
    if (profiling && g_stub == nullptr) {
        uint64_t start = 0, end = 0;
        PLX_REQUIRE_OK(P->event_profile(e, &start, &end));
        CHECK(end >= start);
    }
    P->event_release(e);
    const std::vector<float> c = download(q, dc, size_t(m) * n);
    const std::string wrong =
        check_product(a.values, b.values, c, m, n, k, trans_a, trans_b, rc.type);
    CHECK_MESSAGE(wrong.empty(), wrong);
}

} // namespace

TEST_CASE("every routine, every transposition, every element of c") {
    struct Shape {
        int m, n, k;
        bool profiling; // the larger one on a profiling queue: its events carry times
    };
    const Shape shapes[] = {{67, 45, 33, false}, {256, 320, 200, true}};
    uint32_t seed = 1;
    for (const Shape& s : shapes) {
        Queue q(s.profiling ? PLX_QUEUE_PROFILING : 0u);
        for (const RoutineCase& rc : kRoutines) {
            Routine r(rc.name);
            for (int trans_a : {0, 1})
                for (int trans_b : {0, 1})
                    run_gemm(rc, r.kernel, q.handle, s.m, s.n, s.k, trans_a, trans_b, seed++,
                             s.profiling);
        }
    }
}

TEST_CASE("k of 0 gives zeros, m or n of 0 writes nothing") {
    Queue q;
    for (const RoutineCase& rc : kRoutines) {
        CAPTURE(rc.name);
        Routine r(rc.name);
        const unsigned long gemms = g_stub != nullptr ? g_stub->gemms : 0;
        run_gemm(rc, r.kernel, q.handle, 5, 7, 0, 0, 0, 11, false); // c: zeros, not NaN
        run_gemm(rc, r.kernel, q.handle, 5, 7, 0, 1, 1, 12, false);
        // m or n of 0: c has no element; the sentinel after it stays.
        Buffer a(256), b(256), c(64);
        poison(q.handle, c);
        const plx_launch_dims dims = any_dims();
        for (auto [m, n] : {std::pair{0, 7}, std::pair{5, 0}, std::pair{0, 0}}) {
            GemmArgs args(a.handle, b.handle, c.handle, m, n, 3, 0, 0);
            plx_event e = nullptr;
            PLX_REQUIRE_OK(P->launch(q.handle, r.kernel, &dims, args.args, 8, &e));
            PLX_REQUIRE_OK(P->event_wait(e));
            P->event_release(e);
        }
        for (float x : download(q.handle, c, 16))
            CHECK(bits_of(x) == kNanBits);
        if (g_stub != nullptr) CHECK(g_stub->gemms == gemms); // cuBLAS was not asked
    }
}

TEST_CASE("arguments that are not the routine's are PLX_ERROR_INVALID_ARGUMENT") {
    Queue q;
    Routine r("gemm_f32");
    const int m = 4, n = 3, k = 2;
    Buffer a(m * k * 4), b(k * n * 4), c(m * n * 4), small(4);
    const plx_launch_dims dims = any_dims();
    auto expect_invalid = [&](const plx_arg* args, uint32_t num, const std::string& part) {
        CAPTURE(part);
        const plx_status s = P->launch(q.handle, r.kernel, &dims, args, num, nullptr);
        CHECK(s == PLX_ERROR_INVALID_ARGUMENT);
        CHECK_MESSAGE(contains(err(), part), err());
        CHECK(contains(err(), "cuda: launch of routine 'gemm_f32'"));
    };
    GemmArgs good(a.handle, b.handle, c.handle, m, n, k, 0, 0);
    expect_invalid(good.args, 7, "takes 8 arguments");
    plx_arg nine[9];
    std::copy(std::begin(good.args), std::end(good.args), nine);
    nine[8] = good.args[7];
    expect_invalid(nine, 9, "the launch passes 9");
    expect_invalid(nullptr, 8, "args is NULL");
    {
        GemmArgs g(a.handle, b.handle, c.handle, m, n, k, 0, 0);
        g.args[3] = buffer_arg(a.handle); // a buffer where m belongs
        expect_invalid(g.args, 8, "argument 3 (m) must be an int32 scalar");
    }
    {
        GemmArgs g(a.handle, b.handle, c.handle, m, n, k, 0, 0);
        g.args[0] = scalar_arg(g.values[0]); // a scalar where a belongs
        expect_invalid(g.args, 8, "argument 0 (a) must be a buffer");
    }
    {
        GemmArgs g(a.handle, b.handle, c.handle, m, n, k, 0, 0);
        const int64_t wide = k;
        g.args[5].value = &wide;
        g.args[5].size = sizeof wide;
        expect_invalid(g.args, 8, "argument 5 (k) is a scalar of 8 bytes");
    }
    {
        GemmArgs g(a.handle, b.handle, c.handle, m, n, k, 0, 0);
        g.args[1].buffer = nullptr;
        expect_invalid(g.args, 8, "argument 1 (b) is a NULL buffer");
    }
    {
        GemmArgs g(a.handle, b.handle, c.handle, m, -1, k, 0, 0);
        expect_invalid(g.args, 8, "argument 4 (n) is -1");
    }
    {
        GemmArgs g(a.handle, b.handle, c.handle, m, n, k, 0, 2);
        expect_invalid(g.args, 8, "argument 7 (trans_b) is 2");
    }
    {
        GemmArgs g(a.handle, b.handle, small.handle, m, n, k, 0, 0);
        expect_invalid(g.args, 8, "argument 2 (c) holds 4 bytes");
    }
    {
        GemmArgs g(a.handle, b.handle, a.handle, 2, 2, 2, 0, 0); // c is a
        expect_invalid(g.args, 8, "c overlaps a");
    }
    // After all of that, the routine still runs.
    run_gemm(kRoutines[0], r.kernel, q.handle, m, n, k, 0, 0, 5, false);
}

TEST_CASE("routine modules: names, options, kernels and binaries") {
    CHECK(P->languages[0] == PLX_LANG_PTX); // what the core generates stays first
    CHECK(P->languages[P->num_languages - 1] == PLX_LANG_ROUTINE);

    plx_module m = nullptr;
    const char unknown[] = "gemm_f64";
    CHECK(P->module_load(g_device, PLX_LANG_ROUTINE, unknown, sizeof unknown - 1, "", &m) ==
          PLX_ERROR_NOT_FOUND);
    CHECK(contains(err(), "offers no routine 'gemm_f64'; it offers gemm_f32, gemm_tf32, "
                          "gemm_f16, gemm_bf16"));
    CHECK(P->module_load(g_device, PLX_LANG_ROUTINE, "gemm_f32", 8, "-O3", &m) ==
          PLX_ERROR_INVALID_ARGUMENT);
    CHECK(contains(err(), "routines take no options"));
    CHECK(P->module_load(g_device, PLX_LANG_ROUTINE, "gemm_f32", 4, "", &m) ==
          PLX_ERROR_NOT_FOUND); // "gemm" is no routine

    // A NUL counted in source_bytes is not part of the name.
    const char with_nul[] = "gemm_bf16";
    PLX_REQUIRE_OK(P->module_load(g_device, PLX_LANG_ROUTINE, with_nul, sizeof with_nul, "", &m));
    plx_kernel k1 = nullptr, k2 = nullptr;
    PLX_REQUIRE_OK(P->kernel_get(m, "gemm_bf16", &k1));
    PLX_REQUIRE_OK(P->kernel_get(m, "any name at all", &k2));
    CHECK(k1 == k2);
    plx_language lang = PLX_LANG_UNSET;
    size_t bytes = 0;
    CHECK(P->module_get_binary(m, &lang, nullptr, &bytes) == PLX_ERROR_UNSUPPORTED);
    CHECK(contains(err(), "has no binary"));
    P->module_unload(m);
}

TEST_CASE("routines launched from several threads at once") {
    // Each thread its own queue; the device's one cuBLAS handle serves them all in turn.
    constexpr int kThreads = 4, kLaunches = 6;
    Routine f32("gemm_f32"), bf16("gemm_bf16");
    std::vector<std::string> failures(kThreads);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
        threads.emplace_back([&, t] {
            // No doctest assertion off the test's thread: a failure is kept, checked after.
            std::string& failure = failures[size_t(t)];
            auto ok = [&](plx_status s, const char* call) {
                if (s != PLX_OK && failure.empty())
                    failure = std::string(call) + " -> " + std::to_string(int(s)) + ": " + err();
                return s == PLX_OK;
            };
            const RoutineCase& rc = kRoutines[t % 2 == 0 ? 0 : 3];
            const plx_kernel kernel = t % 2 == 0 ? f32.kernel : bf16.kernel;
            const int m = 33 + t, n = 17 + 2 * t, k = 29 + 3 * t;
            const size_t in_bytes = input_bytes(rc.type);
            plx_queue q = nullptr;
            plx_buffer a = nullptr, b = nullptr, c = nullptr;
            if (ok(P->queue_create(g_device, 0, &q), "queue_create") &&
                ok(P->buffer_alloc(g_device, size_t(m) * k * in_bytes, &a), "buffer_alloc") &&
                ok(P->buffer_alloc(g_device, size_t(k) * n * in_bytes, &b), "buffer_alloc") &&
                ok(P->buffer_alloc(g_device, size_t(m) * n * 4, &c), "buffer_alloc")) {
                const plx_launch_dims dims = any_dims();
                for (int i = 0; i < kLaunches && failure.empty(); ++i) {
                    std::mt19937 rng(uint32_t(1000 + t * 100 + i));
                    const Input ha(size_t(m) * k, rc.type, rng), hb(size_t(k) * n, rc.type, rng);
                    std::vector<float> hc(size_t(m) * n);
                    GemmArgs args(a, b, c, m, n, k, i % 2, (i / 2) % 2);
                    plx_event e = nullptr;
                    if (ok(P->buffer_write(q, a, 0, ha.bytes.data(), ha.bytes.size()), "write") &&
                        ok(P->buffer_write(q, b, 0, hb.bytes.data(), hb.bytes.size()), "write") &&
                        ok(P->buffer_fill(q, c, 0, &kNanBits, 4, hc.size() * 4), "fill") &&
                        ok(P->launch(q, kernel, &dims, args.args, 8, &e), "launch") &&
                        ok(P->event_wait(e), "event_wait") &&
                        ok(P->buffer_read(q, c, 0, hc.data(), hc.size() * 4), "buffer_read")) {
                        const std::string wrong = check_product(ha.values, hb.values, hc, m, n, k,
                                                                i % 2, (i / 2) % 2, rc.type);
                        if (!wrong.empty())
                            failure = std::string(rc.name) + " launch " + std::to_string(i) + ": " +
                                      wrong;
                    }
                    P->event_release(e);
                }
            }
            P->buffer_free(a);
            P->buffer_free(b);
            P->buffer_free(c);
            P->queue_destroy(q);
        });
    for (std::thread& th : threads)
        th.join();
    for (int t = 0; t < kThreads; ++t)
        CHECK_MESSAGE(failures[size_t(t)].empty(), "thread " << t << ": " << failures[size_t(t)]);
}

TEST_CASE("a cuBLAS failure is a launch error naming its status") {
    if (g_stub == nullptr) {
        MESSAGE("only over the stub cuBLAS, which can be told to fail");
        return;
    }
    Queue q;
    Routine r("gemm_f16");
    Buffer a(64), b(64), c(64);
    GemmArgs args(a.handle, b.handle, c.handle, 2, 2, 2, 0, 0);
    const plx_launch_dims dims = any_dims();
    plx_event e = nullptr;
    g_stub->fail_next = 13; // CUBLAS_STATUS_EXECUTION_FAILED
    CHECK(P->launch(q.handle, r.kernel, &dims, args.args, 8, &e) == PLX_ERROR_LAUNCH);
    CHECK(e == nullptr);
    CHECK_MESSAGE(contains(err(), "cuda: launch of routine 'gemm_f16': cublasGemmEx returned "
                                  "CUBLAS_STATUS_EXECUTION_FAILED (13"),
                  err());
    g_stub->fail_next = 3; // CUBLAS_STATUS_ALLOC_FAILED
    CHECK(P->launch(q.handle, r.kernel, &dims, args.args, 8, &e) == PLX_ERROR_OUT_OF_MEMORY);
    // One handle for the device, whatever the number of modules and launches.
    CHECK(g_stub->creates == 1);
}

int main(int argc, char** argv) {
    int skip_code = 0;
    std::vector<char*> args;
    PluginHost host(PLEXUS_CUDA_PLUGIN_PATH);
    if (std::optional<int> status = start_gpu_test(host, argc, argv, args, skip_code))
        return *status;
    g_host = &host;
    P = &host.plugin;
    plx_device_info info{};
    info.struct_size = sizeof info;
    if (P->device_get(0, &g_device) != PLX_OK || P->device_info(g_device, &info) != PLX_OK) {
        std::fprintf(stderr, "device 0: %s\n", host.error().c_str());
        return 1;
    }
    // cuBLAS is opened at the first routine: without it there is nothing to run.
    plx_module probe = nullptr;
    const plx_status loaded = P->module_load(g_device, PLX_LANG_ROUTINE, "gemm_f32", 8, "", &probe);
    if (loaded == PLX_ERROR_NOT_FOUND && contains(err(), "cuBLAS was not found")) {
        std::printf("SKIP: cuBLAS is not installed: %s\n", err().c_str());
        P->shutdown();
        return skip_code;
    }
    if (loaded != PLX_OK) {
        std::fprintf(stderr, "module_load of gemm_f32 failed (%d): %s\n", int(loaded),
                     err().c_str());
        return 1;
    }
    P->module_unload(probe);
    g_stub = find_stub();
    std::printf("device 0: %s (%s)%s\n", info.name, info.arch,
                g_stub != nullptr ? ", over the stub driver and the stub cuBLAS" : "");
    doctest::Context context(static_cast<int>(args.size()), args.data());
    int result = context.run();
    const bool stub = g_stub != nullptr;
    const unsigned long creates = stub ? g_stub->creates : 0;
    P->shutdown();
    // The device's handle is destroyed at shutdown, once.
    if (stub && (creates != 1 || g_stub->destroys != 1)) {
        std::fprintf(stderr, "the stub cuBLAS saw %lu handles created and %lu destroyed, not 1\n",
                     creates, g_stub->destroys);
        result = result != 0 ? result : 1;
    }
    return result;
}
