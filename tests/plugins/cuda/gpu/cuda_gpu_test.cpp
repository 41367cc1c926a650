// Suite gpu: the CUDA plugin on a real GPU, through its C ABI only. Hand-checked kernels from
// kernels.cu (embedded as PTX) run on random inputs and every output element is compared with
// a host reference. Exits 77 (skip) when no CUDA device is found.
#define DOCTEST_CONFIG_IMPLEMENT
#include "plugins/cuda/plugin_host.hpp"

#include "kernels_ptx.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <thread>

using plexus::test::contains;
using plexus::test::PluginHost;

namespace {

PluginHost* g_host = nullptr;
const plx_plugin* P = nullptr;
plx_device g_device = nullptr;
plx_device_info g_info{};

std::string err() {
    return g_host->error();
}

#define PLX_REQUIRE_OK(expr)                                                                       \
    do {                                                                                           \
        plx_status plx_s_ = (expr);                                                                \
        REQUIRE_MESSAGE(plx_s_ == PLX_OK, #expr " -> " << int(plx_s_) << ": " << err());           \
    } while (0)

struct Buffer {
    plx_buffer handle = nullptr;
    explicit Buffer(size_t bytes) { PLX_REQUIRE_OK(P->buffer_alloc(g_device, bytes, &handle)); }
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
};

struct Module {
    plx_module handle = nullptr;
    Module(plx_language language, const void* source, size_t bytes, const char* options = "") {
        PLX_REQUIRE_OK(P->module_load(g_device, language, static_cast<const char*>(source), bytes,
                                      options, &handle));
    }
    Module() : Module(PLX_LANG_PTX, kKernelsPtx, sizeof kKernelsPtx) {}
    ~Module() { P->module_unload(handle); }
    plx_kernel kernel(const char* name) const {
        plx_kernel k = nullptr;
        PLX_REQUIRE_OK(P->kernel_get(handle, name, &k));
        return k;
    }
};

plx_arg buf(const Buffer& b) {
    return plx_arg{sizeof(plx_arg), PLX_ARG_BUFFER, b.handle, nullptr, 0};
}
template <class T> plx_arg val(const T& v) {
    return plx_arg{sizeof(plx_arg), PLX_ARG_SCALAR, nullptr, &v, sizeof v};
}

plx_launch_dims dims1(uint64_t global, uint32_t local, uint32_t dynamic_bytes = 0) {
    plx_launch_dims d{};
    d.struct_size = sizeof d;
    d.dims = 1;
    d.global_size[0] = global;
    d.global_size[1] = d.global_size[2] = 1;
    d.local_size[0] = local;
    d.local_size[1] = d.local_size[2] = 1;
    d.dynamic_local_bytes = dynamic_bytes;
    return d;
}

std::vector<float> random_floats(size_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(lo, hi);
    std::vector<float> v(n);
    for (float& x : v)
        x = dist(rng);
    return v;
}

template <class T>
void write(plx_queue q, const Buffer& b, const std::vector<T>& v, size_t offset = 0) {
    PLX_REQUIRE_OK(P->buffer_write(q, b.handle, offset, v.data(), v.size() * sizeof(T)));
}
template <class T> std::vector<T> read(plx_queue q, const Buffer& b, size_t n, size_t offset = 0) {
    std::vector<T> v(n);
    PLX_REQUIRE_OK(P->buffer_read(q, b.handle, offset, v.data(), n * sizeof(T)));
    return v;
}

// c = a + b on n random floats; checked exactly (one IEEE addition on both sides).
void check_vadd(plx_queue q, plx_kernel vadd, size_t n, uint32_t local, uint32_t seed) {
    const auto a = random_floats(n, seed), b = random_floats(n, seed + 1);
    Buffer da(n * 4), db(n * 4), dc(n * 4);
    write(q, da, a);
    write(q, db, b);
    const uint64_t count = n;
    const plx_arg args[] = {buf(da), buf(db), buf(dc), val(count)};
    const plx_launch_dims d = dims1(n, local);
    PLX_REQUIRE_OK(P->launch(q, vadd, &d, args, 4, nullptr));
    const auto c = read<float>(q, dc, n);
    size_t wrong = 0;
    for (size_t i = 0; i < n; ++i)
        wrong += c[i] != a[i] + b[i];
    CHECK_MESSAGE(wrong == 0, wrong << " of " << n << " sums differ (local " << local << ")");
}

} // namespace

TEST_CASE("device info") {
    CHECK(g_info.type == PLX_DEVICE_TYPE_GPU);
    CHECK(std::strlen(g_info.name) > 0);
    CHECK(std::string(g_info.vendor) == "NVIDIA");
    CHECK(std::string(g_info.platform) == "CUDA");
    CHECK(std::string(g_info.arch) == "sm_" + std::to_string(g_info.compute_capability));
    CHECK(g_info.compute_capability >= 50);
    CHECK(g_info.compute_units > 0);
    CHECK(g_info.max_work_group_size >= 1024);
    CHECK(g_info.max_work_group_dims[0] >= 1024);
    CHECK(g_info.subgroup_size == 32);
    CHECK(g_info.memory_bytes > (uint64_t(1) << 30));
    CHECK(g_info.max_alloc_bytes == g_info.memory_bytes);
    CHECK(g_info.local_memory_bytes >= 48 * 1024);
    CHECK(g_info.fp64 == 1);

    // A caller with a shorter struct gets only its prefix.
    plx_device_info small;
    std::memset(&small, 0x5a, sizeof small);
    small.struct_size = offsetof(plx_device_info, arch);
    PLX_REQUIRE_OK(P->device_info(g_device, &small));
    CHECK(small.struct_size == offsetof(plx_device_info, arch));
    CHECK(std::string(small.name) == g_info.name);
    CHECK(static_cast<unsigned char>(small.arch[0]) == 0x5a);
    CHECK(small.fp64 == 0x5a5a5a5au);
}

TEST_CASE("vector add on random floats at non-multiple sizes") {
    Queue q;
    Module m;
    const plx_kernel vadd = m.kernel("vadd");
    plx_kernel again = nullptr;
    PLX_REQUIRE_OK(P->kernel_get(m.handle, "vadd", &again));
    CHECK(again == vadd);
    uint32_t seed = 1;
    for (size_t n : {size_t(1), size_t(255), size_t(1000), size_t(1) << 20 | 7})
        for (uint32_t local : {32u, 128u, 256u, 1024u})
            check_vadd(q.handle, vadd, n, local, seed += 2);
}

TEST_CASE("reduction in dynamic shared memory, below and above 48 KiB") {
    Queue q;
    Module m;
    const plx_kernel block_sum = m.kernel("block_sum");
    struct Case {
        size_t n;
        uint32_t threads, items;
    };
    for (const Case c : {Case{100000, 256, 4}, Case{1000003, 1024, 16}, Case{777, 128, 1}}) {
        const uint32_t per_block = c.threads * c.items;
        const uint32_t shared = per_block * 4; // 64 KiB for the second case
        if (shared > g_info.local_memory_bytes) continue;
        const size_t blocks = (c.n + per_block - 1) / per_block;
        const auto x = random_floats(c.n, 77 + c.items);
        Buffer in(c.n * 4), out(blocks * 4);
        write(q.handle, in, x);
        const uint64_t n64 = c.n;
        const plx_arg args[] = {buf(in), buf(out), val(n64), val(c.items)};
        const plx_launch_dims d = dims1(blocks * c.threads, c.threads, shared);
        PLX_REQUIRE_OK(P->launch(q.handle, block_sum, &d, args, 4, nullptr));
        const auto sums = read<float>(q.handle, out, blocks);
        for (size_t b = 0; b < blocks; ++b) {
            double ref = 0, mag = 0;
            for (size_t i = b * per_block; i < std::min(c.n, (b + 1) * per_block); ++i) {
                ref += x[i];
                mag += std::fabs(x[i]);
            }
            // A float tree sum of k terms errs by at most about log2(k) ulps of the magnitude.
            const double tol = 1e-6 * mag + 1e-6;
            REQUIRE_MESSAGE(std::fabs(sums[b] - ref) <= tol,
                            "block " << b << " of " << blocks << ": " << sums[b] << " vs " << ref);
        }
    }
}

TEST_CASE("scalar arguments of mixed widths and a 2D launch") {
    Queue q;
    Module m;
    const int n = 1000;
    const size_t cap = 1024;
    std::vector<double> x(cap), y(cap);
    std::mt19937 rng(5);
    std::uniform_real_distribution<double> dist(-10, 10);
    for (size_t i = 0; i < cap; ++i)
        x[i] = dist(rng), y[i] = dist(rng);
    Buffer dx(cap * 8), dy(cap * 8);
    write(q.handle, dx, x);
    write(q.handle, dy, y);
    const double a = 1.75;
    const float bias = 0.5f;
    const plx_arg args[] = {val(a), buf(dx), buf(dy), val(n), val(bias)};
    const plx_launch_dims d = dims1(n, 96);
    PLX_REQUIRE_OK(P->launch(q.handle, m.kernel("axpy_f64"), &d, args, 5, nullptr));
    const auto out = read<double>(q.handle, dy, cap);
    for (size_t i = 0; i < cap; ++i) {
        const double want = i < size_t(n) ? a * x[i] + y[i] + 0.5 : y[i]; // elements >= n untouched
        REQUIRE_MESSAGE(std::fabs(out[i] - want) <= 1e-12 * (std::fabs(want) + 1), "element " << i);
    }

    const uint32_t w = 100, h = 37;
    const float v = 0.25f;
    auto mat = random_floats(size_t(w) * h, 9);
    Buffer dm(mat.size() * 4);
    write(q.handle, dm, mat);
    plx_launch_dims d2{};
    d2.struct_size = sizeof d2;
    d2.dims = 2;
    d2.global_size[0] = w, d2.global_size[1] = h, d2.global_size[2] = 1;
    d2.local_size[0] = 16, d2.local_size[1] = 8, d2.local_size[2] = 1;
    const plx_arg args2[] = {buf(dm), val(w), val(h), val(v)};
    PLX_REQUIRE_OK(P->launch(q.handle, m.kernel("add2d"), &d2, args2, 4, nullptr));
    const auto got = read<float>(q.handle, dm, mat.size());
    for (uint32_t yy = 0; yy < h; ++yy)
        for (uint32_t xx = 0; xx < w; ++xx) {
            const float want = mat[yy * w + xx] + (v + float(xx) * 1000.0f + float(yy));
            REQUIRE_MESSAGE(std::fabs(got[yy * w + xx] - want) <= 1e-6f * std::fabs(want),
                            "(" << xx << ", " << yy << ")");
        }
}

TEST_CASE("buffer write, read, copy and fill") {
    Queue q;
    // Larger than the two 8 MiB staging buffers together, at odd offsets.
    const size_t bytes = (size_t(20) << 20) + 123, size = size_t(21) << 20;
    std::vector<unsigned char> src(bytes);
    std::mt19937 rng(11);
    for (auto& c : src)
        c = static_cast<unsigned char>(rng());
    Buffer big(size);
    write(q.handle, big, src, 5);
    CHECK(read<unsigned char>(q.handle, big, bytes, 5) == src);
    const auto part = read<unsigned char>(q.handle, big, 3 << 20, 1001);
    CHECK(std::equal(part.begin(), part.end(), src.begin() + 996));

    Buffer other(size);
    PLX_REQUIRE_OK(P->buffer_copy(q.handle, other.handle, 7, big.handle, 5, bytes));
    CHECK(read<unsigned char>(q.handle, other, bytes, 7) == src);

    // Every pattern width, aligned and not; the whole buffer is compared with a host model.
    const size_t fsize = 4096;
    std::vector<unsigned char> model(fsize);
    for (auto& c : model)
        c = static_cast<unsigned char>(rng());
    Buffer f(fsize);
    write(q.handle, f, model);
    struct Fill {
        size_t width, offset, bytes;
    };
    const uint64_t pattern = 0x8877665544332211ull;
    for (const Fill c :
         {Fill{1, 3, 100}, Fill{2, 200, 64}, Fill{2, 301, 62}, Fill{4, 512, 128}, Fill{4, 702, 40},
          Fill{8, 1024, 256}, Fill{8, 1403, 64}, Fill{8, 2048, 2048}}) {
        PLX_REQUIRE_OK(P->buffer_fill(q.handle, f.handle, c.offset, &pattern, c.width, c.bytes));
        for (size_t i = 0; i < c.bytes; ++i)
            model[c.offset + i] = static_cast<unsigned char>(pattern >> (8 * (i % c.width)));
        const auto got = read<unsigned char>(q.handle, f, fsize);
        for (size_t i = 0; i < fsize; ++i)
            REQUIRE_MESSAGE(got[i] == model[i], "byte " << i << " after a fill of width " << c.width
                                                        << " at " << c.offset);
    }

    // Bounds and argument checks name what was wrong.
    unsigned char one = 0;
    CHECK(P->buffer_write(q.handle, f.handle, fsize - 1, &pattern, 2) ==
          PLX_ERROR_INVALID_ARGUMENT);
    CHECK(contains(err(), "exceeds the buffer's 4096 bytes"));
    CHECK(P->buffer_read(q.handle, f.handle, fsize + 1, &one, 0) == PLX_ERROR_INVALID_ARGUMENT);
    CHECK(P->buffer_fill(q.handle, f.handle, 0, &pattern, 4, 6) == PLX_ERROR_INVALID_ARGUMENT);
    CHECK(contains(err(), "not a multiple of pattern_bytes"));
    CHECK(P->buffer_fill(q.handle, f.handle, 0, &pattern, 3, 6) == PLX_ERROR_INVALID_ARGUMENT);
    CHECK(P->buffer_copy(q.handle, f.handle, 0, big.handle, size - 10, 11) ==
          PLX_ERROR_INVALID_ARGUMENT);
    CHECK(contains(err(), "source range"));
    CHECK(P->buffer_alloc(g_device, 0, &f.handle) == PLX_ERROR_INVALID_ARGUMENT);
}

TEST_CASE("events: waiting and profiling") {
    Queue plain, timed(PLX_QUEUE_PROFILING);
    Module m;
    const plx_kernel vadd = m.kernel("vadd");
    const size_t n = size_t(1) << 24;
    Buffer a(n * 4), b(n * 4), c(n * 4);
    const uint64_t count = n;
    const plx_arg args[] = {buf(a), buf(b), buf(c), val(count)};
    const plx_launch_dims d = dims1(n, 256);
    plx_event e1 = nullptr, e2 = nullptr, e3 = nullptr;
    PLX_REQUIRE_OK(P->launch(timed.handle, vadd, &d, args, 4, &e1));
    PLX_REQUIRE_OK(P->launch(timed.handle, vadd, &d, args, 4, &e2));
    PLX_REQUIRE_OK(P->launch(plain.handle, vadd, &d, args, 4, &e3));
    PLX_REQUIRE_OK(P->event_wait(e2));
    uint64_t s1, t1, s2, t2;
    PLX_REQUIRE_OK(P->event_profile(e1, &s1, &t1));
    PLX_REQUIRE_OK(P->event_profile(e2, &s2, &t2));
    MESSAGE("vadd of 2^24 floats: " << (t1 - s1) << " ns, then " << (t2 - s2) << " ns");
    CHECK(t1 > s1);  // 200 MB of traffic takes measurable time
    CHECK(s2 >= t1); // in order on the queue
    CHECK(t2 > s2);
    CHECK(t2 - s1 < uint64_t(10e9));
    PLX_REQUIRE_OK(P->event_wait(e3));
    CHECK(P->event_profile(e3, &s1, &t1) == PLX_ERROR_UNSUPPORTED);
    CHECK(contains(err(), "PLX_QUEUE_PROFILING"));
    P->event_release(e1);
    P->event_release(e2);
    P->event_release(e3);
    PLX_REQUIRE_OK(P->queue_sync(plain.handle));
}

TEST_CASE("module binary round trip") {
    Queue q;
    Module m;
    plx_language language = PLX_LANG_UNSET;
    size_t bytes = 0;
    PLX_REQUIRE_OK(P->module_get_binary(m.handle, &language, nullptr, &bytes));
    CHECK(language == PLX_LANG_CUDA_BINARY);
    REQUIRE(bytes > 4);
    std::vector<char> binary(bytes);
    size_t small = bytes - 1;
    CHECK(P->module_get_binary(m.handle, &language, binary.data(), &small) ==
          PLX_ERROR_INVALID_ARGUMENT);
    PLX_REQUIRE_OK(P->module_get_binary(m.handle, &language, binary.data(), &bytes));
    CHECK(bytes == binary.size());
    CHECK(std::memcmp(binary.data(),
                      "\x7f"
                      "ELF",
                      4) == 0);
    Module reloaded(PLX_LANG_CUDA_BINARY, binary.data(), binary.size());
    check_vadd(q.handle, reloaded.kernel("vadd"), 12345, 256, 99);
    // The reloaded module hands back the same cubin.
    size_t again = 0;
    PLX_REQUIRE_OK(P->module_get_binary(reloaded.handle, &language, nullptr, &again));
    CHECK(again == bytes);
}

TEST_CASE("compile errors, options and missing kernels") {
    const std::string bad = ".version 7.0\n.target sm_52\n.address_size 64\n"
                            ".visible .entry broken()\n{\n  add.u32 %r1, %r2, 1;\n  ret;\n}\n";
    plx_module mod = nullptr;
    CHECK(P->module_load(g_device, PLX_LANG_PTX, bad.data(), bad.size(), "", &mod) ==
          PLX_ERROR_COMPILE);
    const std::string log = err();
    INFO(log);
    CHECK(contains(log, "PTX compilation failed"));
    CHECK(contains(log, "cuLinkAddData_v2"));
    CHECK(contains(log, "%r1")); // the JIT log names the undeclared register
    CHECK(P->module_load(g_device, PLX_LANG_PTX, "garbage", 7, "", &mod) == PLX_ERROR_COMPILE);
    CHECK(P->module_load(g_device, PLX_LANG_CUDA_BINARY, "not an ELF image", 16, "", &mod) ==
          PLX_ERROR_COMPILE);
    CHECK(contains(err(), "cuModuleLoadDataEx"));
    CHECK(P->module_load(g_device, PLX_LANG_PTX, kKernelsPtx, sizeof kKernelsPtx, "-fast", &mod) ==
          PLX_ERROR_INVALID_ARGUMENT);
    CHECK(contains(err(), "unknown PTX option '-fast'"));
    CHECK(P->module_load(g_device, PLX_LANG_OPENCL_C, "x", 1, "", &mod) ==
          PLX_ERROR_INVALID_ARGUMENT);

    Module tuned(PLX_LANG_PTX, kKernelsPtx, sizeof kKernelsPtx, "-lineinfo -O3 -maxrregcount=64");
    plx_kernel k = nullptr;
    CHECK(P->kernel_get(tuned.handle, "no_such_kernel", &k) == PLX_ERROR_NOT_FOUND);
    CHECK(contains(err(), "no_such_kernel"));
    Queue q;
    check_vadd(q.handle, tuned.kernel("vadd"), 4097, 64, 3);
}

TEST_CASE("out of device memory, then the plugin keeps working") {
    plx_buffer huge = nullptr;
    CHECK(P->buffer_alloc(g_device, g_info.memory_bytes * 2, &huge) == PLX_ERROR_OUT_OF_MEMORY);
    const std::string e = err();
    INFO(e);
    CHECK(contains(e, "cannot allocate " + std::to_string(g_info.memory_bytes * 2) + " bytes"));
    CHECK(contains(e, "CUDA_ERROR_OUT_OF_MEMORY"));
    CHECK(contains(e, "bytes free of"));
    Queue q;
    Module m;
    check_vadd(q.handle, m.kernel("vadd"), 5000, 128, 21);
}

TEST_CASE("launches beyond the limits are refused before launching") {
    Queue q;
    Module m;
    Buffer out(size_t(1) << 20);
    const plx_arg one[] = {buf(out)};
    plx_launch_dims d = dims1(4096, 2048);
    CHECK(P->launch(q.handle, m.kernel("bounded"), &d, one, 1, nullptr) ==
          PLX_ERROR_OUT_OF_RESOURCES);
    CHECK(contains(err(), "maximum block dimension"));
    d.dims = 3;
    d.local_size[0] = 32, d.local_size[1] = 32, d.local_size[2] = 2;
    d.global_size[0] = 32, d.global_size[1] = 32, d.global_size[2] = 2;
    CHECK(P->launch(q.handle, m.kernel("vadd"), &d, one, 1, nullptr) == PLX_ERROR_OUT_OF_RESOURCES);
    CHECK(contains(err(), "2048 threads per group exceed the device's maximum"));
    d = dims1(4096, 512);
    CHECK(P->launch(q.handle, m.kernel("bounded"), &d, one, 1, nullptr) ==
          PLX_ERROR_OUT_OF_RESOURCES);
    CHECK(contains(err(), "exceed the kernel's maximum of 256"));

    // Static (32 KiB) plus dynamic shared memory past the device's opt-in maximum.
    const uint32_t too_much = g_info.local_memory_bytes - 32 * 1024 + 4;
    d = dims1(1024, 1024, too_much);
    CHECK(P->launch(q.handle, m.kernel("big_static"), &d, one, 1, nullptr) ==
          PLX_ERROR_OUT_OF_RESOURCES);
    CHECK(contains(err(), "32768 bytes of static"));

    // Argument lists that do not match the kernel (needs a driver with cuFuncGetParamInfo).
    const uint64_t n = 1;
    const plx_arg three[] = {buf(out), buf(out), buf(out)};
    d = dims1(1, 1);
    CHECK(P->launch(q.handle, m.kernel("vadd"), &d, three, 3, nullptr) ==
          PLX_ERROR_INVALID_ARGUMENT);
    CHECK(contains(err(), "takes 4 parameters, the launch passes 3"));
    const uint32_t narrow = 1;
    const plx_arg wrong[] = {buf(out), buf(out), buf(out), val(narrow)};
    CHECK(P->launch(q.handle, m.kernel("vadd"), &d, wrong, 4, nullptr) ==
          PLX_ERROR_INVALID_ARGUMENT);
    CHECK(contains(err(), "argument 3 is a scalar of 4 bytes"));
    const plx_arg null_buffer[] = {
        buf(out), buf(out), plx_arg{sizeof(plx_arg), PLX_ARG_BUFFER, nullptr, nullptr, 0}, val(n)};
    CHECK(P->launch(q.handle, m.kernel("vadd"), &d, null_buffer, 4, nullptr) ==
          PLX_ERROR_INVALID_ARGUMENT);
    CHECK(contains(err(), "argument 2 is a NULL buffer"));

    // Within the limits the same kernels run, and give the right answers.
    d = dims1(256, 256);
    PLX_REQUIRE_OK(P->launch(q.handle, m.kernel("bounded"), &d, one, 1, nullptr));
    const auto ones = read<float>(q.handle, out, 256);
    for (float v : ones)
        REQUIRE(v == 1.0f);
    d = dims1(1024, 1024, 16 * 1024);
    PLX_REQUIRE_OK(P->launch(q.handle, m.kernel("big_static"), &d, one, 1, nullptr));
    const auto mirrored = read<float>(q.handle, out, 1024);
    for (uint32_t t = 0; t < 1024; ++t)
        REQUIRE(mirrored[t] == float(8191 - t));
    check_vadd(q.handle, m.kernel("vadd"), 3000, 256, 41);
}

TEST_CASE("queues on several threads") {
    Module m;
    const plx_kernel vadd = m.kernel("vadd");
    std::vector<std::thread> threads;
    std::vector<int> ok(4, 0);
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&, t] {
            // doctest assertions are not used off the main thread; results are checked below.
            plx_queue q = nullptr;
            if (P->queue_create(g_device, 0, &q) != PLX_OK) return;
            const size_t n = (size_t(3) << 20) + size_t(t) * 17; // 12 MiB: the copy pool is shared
            const auto a = random_floats(n, 300 + t), b = random_floats(n, 400 + t);
            plx_buffer da, db, dc;
            P->buffer_alloc(g_device, n * 4, &da);
            P->buffer_alloc(g_device, n * 4, &db);
            P->buffer_alloc(g_device, n * 4, &dc);
            std::vector<float> c(n);
            const uint64_t count = n;
            const plx_arg args[] = {{sizeof(plx_arg), PLX_ARG_BUFFER, da, nullptr, 0},
                                    {sizeof(plx_arg), PLX_ARG_BUFFER, db, nullptr, 0},
                                    {sizeof(plx_arg), PLX_ARG_BUFFER, dc, nullptr, 0},
                                    {sizeof(plx_arg), PLX_ARG_SCALAR, nullptr, &count, 8}};
            const plx_launch_dims d = dims1(n, 128);
            bool good = P->buffer_write(q, da, 0, a.data(), n * 4) == PLX_OK &&
                        P->buffer_write(q, db, 0, b.data(), n * 4) == PLX_OK &&
                        P->launch(q, vadd, &d, args, 4, nullptr) == PLX_OK &&
                        P->buffer_read(q, dc, 0, c.data(), n * 4) == PLX_OK;
            for (size_t i = 0; good && i < n; ++i)
                good = c[i] == a[i] + b[i];
            ok[t] = good;
            P->buffer_free(da), P->buffer_free(db), P->buffer_free(dc);
            P->queue_destroy(q);
        });
    for (auto& th : threads)
        th.join();
    for (int t = 0; t < 4; ++t)
        CHECK_MESSAGE(ok[t] == 1, "thread " << t);
}

TEST_CASE("CUDA C through NVRTC") {
    const std::string source = R"(
extern "C" __global__ void scale(float* x, float s, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= s;
})";
    plx_module mod = nullptr;
    const plx_status s =
        P->module_load(g_device, PLX_LANG_CUDA_C, source.data(), source.size(), "", &mod);
    if (s == PLX_ERROR_UNSUPPORTED) {
        CHECK(contains(err(), "NVRTC"));
        MESSAGE("NVRTC is not installed here, CUDA C not run: " << err());
        return;
    }
    REQUIRE_MESSAGE(s == PLX_OK, err());
    plx_kernel k = nullptr;
    PLX_REQUIRE_OK(P->kernel_get(mod, "scale", &k));
    Queue q;
    const unsigned n = 3333;
    const float factor = -2.5f;
    const auto x = random_floats(n, 8);
    Buffer dx(n * 4);
    write(q.handle, dx, x);
    const plx_arg args[] = {buf(dx), val(factor), val(n)};
    const plx_launch_dims d = dims1(n, 256);
    PLX_REQUIRE_OK(P->launch(q.handle, k, &d, args, 3, nullptr));
    const auto y = read<float>(q.handle, dx, n);
    for (unsigned i = 0; i < n; ++i)
        REQUIRE(y[i] == x[i] * factor);
    P->module_unload(mod);

    const std::string broken = "extern \"C\" __global__ void f() { undeclared_name = 1; }";
    CHECK(P->module_load(g_device, PLX_LANG_CUDA_C, broken.data(), broken.size(), "", &mod) ==
          PLX_ERROR_COMPILE);
    CHECK(contains(err(), "undeclared_name"));
}

TEST_CASE("CUDA C with NVRTC absent") {
    REQUIRE_MESSAGE(std::getenv("PLEXUS_NVRTC_LIBRARY") != nullptr,
                    "meson sets PLEXUS_NVRTC_LIBRARY here");
    const char source[] = "extern \"C\" __global__ void f() {}";
    plx_module mod = nullptr;
    CHECK(P->module_load(g_device, PLX_LANG_CUDA_C, source, sizeof source - 1, "", &mod) ==
          PLX_ERROR_UNSUPPORTED);
    CHECK(contains(err(), "NVRTC"));
    CHECK(contains(err(), "is not installed"));
    Queue q; // PTX still works
    Module m;
    check_vadd(q.handle, m.kernel("vadd"), 100, 32, 1);
}

int main(int argc, char** argv) {
    // Always 77 when there is nothing to test: this program is only ever run as a meson test.
    int skip_code = 77;
    std::vector<char*> args;
    PluginHost host(PLEXUS_CUDA_PLUGIN_PATH);
    if (std::optional<int> status = start_gpu_test(host, argc, argv, args, skip_code))
        return *status;
    g_host = &host;
    P = &host.plugin;
    if (P->device_get(0, &g_device) != PLX_OK) return 1;
    g_info.struct_size = sizeof g_info;
    if (P->device_info(g_device, &g_info) != PLX_OK) return 1;
    std::printf("device 0: %s (%s, %u SMs, %llu bytes)\n", g_info.name, g_info.arch,
                g_info.compute_units, static_cast<unsigned long long>(g_info.memory_bytes));
    doctest::Context context(static_cast<int>(args.size()), args.data());
    const int result = context.run();
    P->shutdown();
    return result;
}
