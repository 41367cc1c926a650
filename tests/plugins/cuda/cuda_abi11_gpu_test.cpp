// Suite gpu: the ABI 1.1 functions of the CUDA plugin on a real GPU, through its C ABI only
// (markers, cross-queue and cross-device waits, asynchronous transfers, pinned host memory,
// peer copies, wrapped allocations, native handles, the device's UUID and PCI address). Every
// element of every result is compared with a host reference.
//
// Without a driver or a GPU it prints "SKIP: ..." and exits 0, or the status given by
// --skip-exit-code=N (meson passes 77, its "skipped" status).
#define DOCTEST_CONFIG_IMPLEMENT
#include "plugin_host.hpp"

#include <cuda.h>

#include <doctest/doctest.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <random>
#include <vector>

using plexus::test::contains;
using plexus::test::PluginHost;

namespace {

// y[i] = x[i] after `steps` steps of the LCG v = v * 1664525 + 1013904223 (mod 2^32): as slow
// as one likes on the device, O(1) per element on the host (the steps compose to one a*v + c).
constexpr char kLcgPtx[] = R"PTX(
.version 6.0
.target sm_50
.address_size 64

.visible .entry lcg_steps(.param .u64 y_param, .param .u64 x_param, .param .u32 steps_param, .param .u64 n_param)
{
    .reg .pred %p<3>;
    .reg .b32 %r<8>;
    .reg .b64 %rd<10>;
    ld.param.u64 %rd1, [y_param];
    ld.param.u64 %rd2, [x_param];
    ld.param.u32 %r1, [steps_param];
    ld.param.u64 %rd3, [n_param];
    cvta.to.global.u64 %rd1, %rd1;
    cvta.to.global.u64 %rd2, %rd2;
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mov.u32 %r4, %tid.x;
    mov.u32 %r5, %nctaid.x;
    mul.wide.u32 %rd4, %r2, %r3;
    cvt.u64.u32 %rd5, %r4;
    add.u64 %rd4, %rd4, %rd5;
    mul.wide.u32 %rd6, %r5, %r3;
$L_loop:
    setp.ge.u64 %p1, %rd4, %rd3;
    @%p1 bra $L_done;
    shl.b64 %rd7, %rd4, 2;
    add.u64 %rd8, %rd2, %rd7;
    ld.global.u32 %r6, [%rd8];
    mov.u32 %r7, 0;
$L_step:
    setp.ge.u32 %p2, %r7, %r1;
    @%p2 bra $L_store;
    mad.lo.u32 %r6, %r6, 1664525, 1013904223;
    add.u32 %r7, %r7, 1;
    bra.uni $L_step;
$L_store:
    add.u64 %rd9, %rd1, %rd7;
    st.global.u32 [%rd9], %r6;
    add.u64 %rd4, %rd4, %rd6;
    bra.uni $L_loop;
$L_done:
    ret;
}
)PTX";

// The driver functions the test calls itself, typed by cuda.h and looked up under the
// versioned names cuda.h maps them to (cuMemAlloc -> cuMemAlloc_v2), as the plugin does.
// clang-format off
#define CU_TEST_FUNCTIONS(X)                                                                    \
    X(cuDeviceGetCount) X(cuDeviceGet) X(cuDeviceGetUuid) X(cuDeviceGetPCIBusId)                \
    X(cuDevicePrimaryCtxRetain) X(cuDevicePrimaryCtxRelease) X(cuCtxSetCurrent) X(cuMemAlloc)   \
    X(cuMemFree) X(cuMemcpyHtoD) X(cuMemcpyDtoH) X(cuMemHostGetFlags) X(cuStreamSynchronize)
// clang-format on
#define CU_STR_(x) #x
#define CU_STR(x) CU_STR_(x)

struct Cu {
#define CU_MEMBER(fn) decltype(&::fn) fn = nullptr;
    CU_TEST_FUNCTIONS(CU_MEMBER)
#undef CU_MEMBER
    std::string missing;
    bool load() {
        void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
        if (lib == nullptr) lib = dlopen("libcuda.so", RTLD_NOW | RTLD_LOCAL);
        if (lib == nullptr) {
            missing = "libcuda";
            return false;
        }
#define CU_LOAD(fn)                                                                                \
    fn = reinterpret_cast<decltype(fn)>(dlsym(lib, CU_STR(fn)));                                   \
    if (fn == nullptr) missing += std::string(missing.empty() ? "" : ", ") + CU_STR(fn);
        CU_TEST_FUNCTIONS(CU_LOAD)
#undef CU_LOAD
        if (cuDeviceGetUuid == nullptr) { // before CUDA 11.4: the unversioned symbol
            cuDeviceGetUuid =
                reinterpret_cast<decltype(cuDeviceGetUuid)>(dlsym(lib, "cuDeviceGetUuid"));
            if (cuDeviceGetUuid != nullptr) missing.clear();
        }
        return missing.empty();
    }
};

PluginHost* g_host = nullptr;
const plx_plugin* P = nullptr;
Cu g_cu;
std::vector<plx_device> g_devices;
std::vector<plx_device_info> g_infos;
std::vector<CUdevice> g_ordinals; // the CUDA device of each plugin device (matched by UUID)

std::string err() {
    return g_host->error();
}

#define PLX_REQUIRE_OK(expr)                                                                       \
    do {                                                                                           \
        plx_status plx_s_ = (expr);                                                                \
        REQUIRE_MESSAGE(plx_s_ == PLX_OK, #expr " -> " << int(plx_s_) << ": " << err());           \
    } while (0)
#define CU_REQUIRE_OK(expr)                                                                        \
    do {                                                                                           \
        CUresult cu_r_ = (expr);                                                                   \
        REQUIRE_MESSAGE(cu_r_ == CUDA_SUCCESS, #expr " -> CUresult " << int(cu_r_));               \
    } while (0)

struct Buffer {
    plx_buffer handle = nullptr;
    Buffer(size_t device, size_t bytes) {
        PLX_REQUIRE_OK(P->buffer_alloc(g_devices[device], bytes, &handle));
    }
    ~Buffer() { P->buffer_free(handle); }
    Buffer(const Buffer&) = delete;
    Buffer& operator=(const Buffer&) = delete;
};

struct Queue {
    plx_queue handle = nullptr;
    explicit Queue(size_t device, uint32_t flags = 0) {
        PLX_REQUIRE_OK(P->queue_create(g_devices[device], flags, &handle));
    }
    ~Queue() { P->queue_destroy(handle); }
    Queue(const Queue&) = delete;
    Queue& operator=(const Queue&) = delete;
};

struct Event {
    plx_event handle = nullptr;
    Event() = default;
    ~Event() { P->event_release(handle); }
    Event(const Event&) = delete;
    Event& operator=(const Event&) = delete;
};

// Page-locked memory from host_alloc, as an array of T.
template <class T> struct Pinned {
    size_t device = 0;
    T* data = nullptr;
    size_t count = 0;
    Pinned(size_t dev, size_t n) : device(dev), count(n) {
        void* p = nullptr;
        PLX_REQUIRE_OK(P->host_alloc(g_devices[device], n * sizeof(T), &p));
        REQUIRE(p != nullptr);
        data = static_cast<T*>(p);
    }
    ~Pinned() { P->host_free(g_devices[device], data); }
    Pinned(const Pinned&) = delete;
    Pinned& operator=(const Pinned&) = delete;
    size_t bytes() const { return count * sizeof(T); }
};

struct Module {
    plx_module handle = nullptr;
    plx_kernel kernel = nullptr;
    explicit Module(size_t device) {
        PLX_REQUIRE_OK(P->module_load(g_devices[device], PLX_LANG_PTX, kLcgPtx, sizeof kLcgPtx - 1,
                                      "", &handle));
        PLX_REQUIRE_OK(P->kernel_get(handle, "lcg_steps", &kernel));
    }
    ~Module() { P->module_unload(handle); }
    Module(const Module&) = delete;
    Module& operator=(const Module&) = delete;
};

std::vector<uint32_t> random_words(size_t n, uint32_t seed) {
    std::mt19937 rng(seed);
    std::vector<uint32_t> v(n);
    for (uint32_t& x : v)
        x = static_cast<uint32_t>(rng());
    return v;
}

void fill_random(uint32_t* p, size_t n, uint32_t seed) {
    std::mt19937 rng(seed);
    for (size_t i = 0; i < n; ++i)
        p[i] = static_cast<uint32_t>(rng());
}

// The LCG after `steps` steps, composed: v -> a * v + c.
std::vector<uint32_t> lcg_reference(const uint32_t* x, size_t n, uint32_t steps) {
    uint32_t a = 1, c = 0;
    for (uint32_t s = 0; s < steps; ++s) {
        a = a * 1664525u;
        c = c * 1664525u + 1013904223u;
    }
    std::vector<uint32_t> y(n);
    for (size_t i = 0; i < n; ++i)
        y[i] = a * x[i] + c;
    return y;
}

// Every element; reports the count of mismatches and the first one.
void require_equal(const uint32_t* got, const uint32_t* want, size_t n, const char* what) {
    size_t bad = 0, first = n;
    for (size_t i = 0; i < n; ++i)
        if (got[i] != want[i]) {
            if (bad++ == 0) first = i;
        }
    REQUIRE_MESSAGE(bad == 0, what << ": " << bad << " of " << n << " elements differ, first at "
                                   << first << " (got " << (bad ? got[first] : 0) << ", want "
                                   << (bad ? want[first] : 0) << ")");
}

// Launches lcg_steps over n words: y = lcg^steps(x).
void launch_lcg(plx_queue q, const Module& m, const Buffer& y, const Buffer& x, uint32_t steps,
                uint64_t n, plx_event* event) {
    plx_launch_dims d{};
    d.struct_size = sizeof d;
    d.dims = 1;
    d.global_size[0] = n;
    d.global_size[1] = d.global_size[2] = 1;
    d.local_size[0] = 256;
    d.local_size[1] = d.local_size[2] = 1;
    const plx_arg args[] = {
        {sizeof(plx_arg), PLX_ARG_BUFFER, y.handle, nullptr, 0},
        {sizeof(plx_arg), PLX_ARG_BUFFER, x.handle, nullptr, 0},
        {sizeof(plx_arg), PLX_ARG_SCALAR, nullptr, &steps, sizeof steps},
        {sizeof(plx_arg), PLX_ARG_SCALAR, nullptr, &n, sizeof n},
    };
    PLX_REQUIRE_OK(P->launch(q, m.kernel, &d, args, 4, event));
}

void wait_marker(plx_queue q) {
    Event m;
    PLX_REQUIRE_OK(P->queue_marker(q, &m.handle));
    REQUIRE(m.handle != nullptr);
    PLX_REQUIRE_OK(P->event_wait(m.handle));
}

// Long enough on the device (tens of ms) that a missing wait would read unfinished results.
constexpr uint32_t kSlowSteps = 100000;
constexpr size_t kSlowWords = size_t(1) << 22;

} // namespace

TEST_CASE("the descriptor has every 1.1 function") {
    CHECK(P->abi_version == PLX_ABI_VERSION);
    CHECK(bool(P->queue_marker));
    CHECK(bool(P->queue_wait_event));
    CHECK(bool(P->buffer_write_async));
    CHECK(bool(P->buffer_read_async));
    CHECK(bool(P->buffer_copy_peer));
    CHECK(bool(P->host_alloc));
    CHECK(bool(P->host_free));
    CHECK(bool(P->buffer_wrap));
    CHECK(bool(P->buffer_native));
    CHECK(bool(P->queue_native));
}

TEST_CASE("device_info: UUID and PCI bus id, as the driver reports them") {
    for (size_t i = 0; i < g_devices.size(); ++i) {
        const plx_device_info& info = g_infos[i];
        INFO("device " << i << ": " << info.name);
        CHECK(std::any_of(std::begin(info.uuid), std::end(info.uuid),
                          [](uint8_t b) { return b != 0; }));
        const std::string bus = info.pci_bus_id;
        CHECK_FALSE(bus.empty());
        // "0000:41:00.0": domain:bus:device.function, lower-case hex.
        CHECK(std::count(bus.begin(), bus.end(), ':') == 2);
        CHECK(bus.find('.') != std::string::npos);
        CHECK(std::none_of(bus.begin(), bus.end(),
                           [](char c) { return std::isupper(static_cast<unsigned char>(c)); }));
        // Matches the driver's own answer for the same device.
        char driver_bus[64] = {0};
        CU_REQUIRE_OK(g_cu.cuDeviceGetPCIBusId(driver_bus, sizeof driver_bus, g_ordinals[i]));
        std::string lowered = driver_bus;
        for (char& c : lowered)
            c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        CHECK(bus == lowered);
    }
    // Every pair of devices distinct in both identities.
    for (size_t i = 0; i < g_devices.size(); ++i)
        for (size_t j = i + 1; j < g_devices.size(); ++j) {
            CHECK(std::memcmp(g_infos[i].uuid, g_infos[j].uuid, 16) != 0);
            CHECK(std::string(g_infos[i].pci_bus_id) != std::string(g_infos[j].pci_bus_id));
        }

    // A 1.0 caller's struct ends before uuid: nothing past its struct_size is written.
    unsigned char raw[sizeof(plx_device_info) + 64];
    std::memset(raw, 0xcd, sizeof raw);
    auto* old = reinterpret_cast<plx_device_info*>(raw);
    old->struct_size = offsetof(plx_device_info, uuid);
    PLX_REQUIRE_OK(P->device_info(g_devices[0], old));
    CHECK(old->struct_size == offsetof(plx_device_info, uuid));
    CHECK(std::strcmp(old->name, g_infos[0].name) == 0);
    for (size_t i = offsetof(plx_device_info, uuid); i < sizeof raw; ++i)
        REQUIRE(raw[i] == 0xcd);
}

TEST_CASE("async write, marker, event_wait, async read: a round trip") {
    Queue q(0);
    const size_t n = (size_t(48) << 20) / 4 + 3; // 48 MiB and 12 bytes
    Buffer b(0, n * 4);

    SUBCASE("pageable host memory, in pieces at offsets") {
        const auto src = random_words(n, 11);
        std::vector<uint32_t> dst(n, 0);
        const size_t pieces[] = {0, 1, 4097, n / 3, n - 5, n};
        for (size_t k = 0; k + 1 < std::size(pieces); ++k)
            PLX_REQUIRE_OK(P->buffer_write_async(q.handle, b.handle, pieces[k] * 4,
                                                 src.data() + pieces[k],
                                                 (pieces[k + 1] - pieces[k]) * 4));
        wait_marker(q.handle);
        for (size_t k = std::size(pieces) - 1; k-- > 0;)
            PLX_REQUIRE_OK(P->buffer_read_async(q.handle, b.handle, pieces[k] * 4,
                                                dst.data() + pieces[k],
                                                (pieces[k + 1] - pieces[k]) * 4));
        wait_marker(q.handle);
        require_equal(dst.data(), src.data(), n, "pageable round trip");
    }
    SUBCASE("host_alloc memory as source and destination") {
        Pinned<uint32_t> src(0, n), dst(0, n);
        fill_random(src.data, n, 12);
        std::fill(dst.data, dst.data + n, 0u);
        PLX_REQUIRE_OK(P->buffer_write_async(q.handle, b.handle, 0, src.data, src.bytes()));
        Event written;
        PLX_REQUIRE_OK(P->queue_marker(q.handle, &written.handle));
        PLX_REQUIRE_OK(P->buffer_read_async(q.handle, b.handle, 0, dst.data, dst.bytes()));
        Event read;
        PLX_REQUIRE_OK(P->queue_marker(q.handle, &read.handle));
        PLX_REQUIRE_OK(P->event_wait(written.handle));
        PLX_REQUIRE_OK(P->event_wait(read.handle));
        require_equal(dst.data, src.data, n, "pinned round trip");
        // Twice: the marker events go back to a pool and are recorded again.
        PLX_REQUIRE_OK(P->event_wait(read.handle));
    }
    SUBCASE("host_alloc memory with the blocking transfers") {
        Pinned<uint32_t> src(0, n), dst(0, n);
        fill_random(src.data, n, 13);
        std::fill(dst.data, dst.data + n, 0u);
        PLX_REQUIRE_OK(P->buffer_write(q.handle, b.handle, 0, src.data, src.bytes()));
        PLX_REQUIRE_OK(P->buffer_read(q.handle, b.handle, 0, dst.data, dst.bytes()));
        require_equal(dst.data, src.data, n, "pinned blocking round trip");
    }
    SUBCASE("the pinned memory is portable page-locked memory") {
        Pinned<uint32_t> p(0, 1000);
        unsigned int flags = 0;
        CU_REQUIRE_OK(g_cu.cuMemHostGetFlags(&flags, p.data));
        CHECK((flags & CU_MEMHOSTALLOC_PORTABLE) != 0);
    }
    SUBCASE("argument errors") {
        uint32_t word = 0;
        CHECK(P->buffer_write_async(q.handle, b.handle, n * 4 - 2, &word, 4) ==
              PLX_ERROR_INVALID_ARGUMENT);
        CHECK(contains(err(), "buffer_write_async"));
        CHECK(P->buffer_read_async(q.handle, b.handle, 0, nullptr, 4) ==
              PLX_ERROR_INVALID_ARGUMENT);
        CHECK(contains(err(), "buffer_read_async"));
        CHECK(P->buffer_read_async(q.handle, b.handle, n * 4, &word, 0) == PLX_OK);
        void* p = nullptr;
        CHECK(P->host_alloc(g_devices[0], 0, &p) == PLX_ERROR_INVALID_ARGUMENT);
        CHECK(P->host_alloc(g_devices[0], size_t(1) << 62, &p) == PLX_ERROR_OUT_OF_MEMORY);
        CHECK(contains(err(), "cuMemHostAlloc"));
        P->host_free(g_devices[0], nullptr);
    }
}

TEST_CASE("queue_marker covers only earlier commands, and reports on a profiling queue") {
    Module m(0);
    Queue q(0, PLX_QUEUE_PROFILING);
    const auto x = random_words(kSlowWords, 21);
    Buffer bx(0, kSlowWords * 4), by(0, kSlowWords * 4);
    PLX_REQUIRE_OK(P->buffer_write(q.handle, bx.handle, 0, x.data(), kSlowWords * 4));
    Event before;
    PLX_REQUIRE_OK(P->queue_marker(q.handle, &before.handle));
    launch_lcg(q.handle, m, by, bx, kSlowSteps, kSlowWords, nullptr);
    Event after;
    PLX_REQUIRE_OK(P->queue_marker(q.handle, &after.handle));
    PLX_REQUIRE_OK(P->event_wait(before.handle));
    PLX_REQUIRE_OK(P->event_wait(after.handle));
    uint64_t s0 = 0, e0 = 0, s1 = 0, e1 = 0;
    PLX_REQUIRE_OK(P->event_profile(before.handle, &s0, &e0));
    PLX_REQUIRE_OK(P->event_profile(after.handle, &s1, &e1));
    CHECK(s0 == e0); // a marker is an instant
    CHECK(s1 == e1);
    CHECK(s1 > s0); // the slow launch lies between them
    MESSAGE("the slow launch: " << double(s1 - s0) * 1e-6 << " ms between the markers");
    std::vector<uint32_t> y(kSlowWords);
    PLX_REQUIRE_OK(P->buffer_read(q.handle, by.handle, 0, y.data(), kSlowWords * 4));
    const auto want = lcg_reference(x.data(), kSlowWords, kSlowSteps);
    require_equal(y.data(), want.data(), kSlowWords, "lcg");

    Queue plain(0);
    Event e;
    PLX_REQUIRE_OK(P->queue_marker(plain.handle, &e.handle));
    PLX_REQUIRE_OK(P->event_wait(e.handle));
    CHECK(P->event_profile(e.handle, &s0, &e0) == PLX_ERROR_UNSUPPORTED);
}

TEST_CASE("queue_wait_event: queue B waits for queue A") {
    Queue a(0), b(0);

    SUBCASE("on a marker after an async write") {
        const size_t n = (size_t(256) << 20) / 4; // long enough to still run when B reads
        Pinned<uint32_t> src(0, n), dst(0, n);
        fill_random(src.data, n, 31);
        std::fill(dst.data, dst.data + n, 0u);
        Buffer buf(0, n * 4);
        PLX_REQUIRE_OK(P->buffer_write_async(a.handle, buf.handle, 0, src.data, src.bytes()));
        Event written;
        PLX_REQUIRE_OK(P->queue_marker(a.handle, &written.handle));
        PLX_REQUIRE_OK(P->queue_wait_event(b.handle, written.handle));
        // Last chunk first: a read that did not wait would overtake the write at once.
        const size_t chunk = n / 8;
        for (size_t k = 8; k-- > 0;)
            PLX_REQUIRE_OK(P->buffer_read_async(b.handle, buf.handle, k * chunk * 4,
                                                dst.data + k * chunk,
                                                (k == 7 ? n - k * chunk : chunk) * 4));
        wait_marker(b.handle);
        require_equal(dst.data, src.data, n, "read on B after A's write");
    }

    Module m(0);
    const auto x = random_words(kSlowWords, 32);
    const auto want = lcg_reference(x.data(), kSlowWords, kSlowSteps);
    Buffer bx(0, kSlowWords * 4), by(0, kSlowWords * 4);
    PLX_REQUIRE_OK(P->buffer_write(a.handle, bx.handle, 0, x.data(), kSlowWords * 4));
    const uint32_t zero = 0;
    PLX_REQUIRE_OK(P->buffer_fill(a.handle, by.handle, 0, &zero, 4, kSlowWords * 4));
    PLX_REQUIRE_OK(P->queue_sync(a.handle));
    Pinned<uint32_t> y(0, kSlowWords);

    SUBCASE("on a launch event of a non-profiling queue (recorded only when waited for)") {
        Event launched;
        launch_lcg(a.handle, m, by, bx, kSlowSteps, kSlowWords, &launched.handle);
        PLX_REQUIRE_OK(P->queue_wait_event(b.handle, launched.handle));
        PLX_REQUIRE_OK(P->buffer_read_async(b.handle, by.handle, 0, y.data, y.bytes()));
        wait_marker(b.handle);
        require_equal(y.data, want.data(), kSlowWords, "read on B after A's launch");
        PLX_REQUIRE_OK(P->event_wait(launched.handle));
    }
    SUBCASE("on a launch event of a profiling queue") {
        Queue prof(0, PLX_QUEUE_PROFILING);
        Event launched;
        launch_lcg(prof.handle, m, by, bx, kSlowSteps, kSlowWords, &launched.handle);
        PLX_REQUIRE_OK(P->queue_wait_event(b.handle, launched.handle));
        PLX_REQUIRE_OK(P->buffer_read_async(b.handle, by.handle, 0, y.data, y.bytes()));
        wait_marker(b.handle);
        require_equal(y.data, want.data(), kSlowWords, "read on B after a profiling launch");
    }
    SUBCASE("on a launch event whose queue is gone") {
        Event launched;
        {
            Queue gone(0);
            launch_lcg(gone.handle, m, by, bx, 10, kSlowWords, &launched.handle);
        } // queue_destroy waits for the launch
        PLX_REQUIRE_OK(P->queue_wait_event(b.handle, launched.handle));
        PLX_REQUIRE_OK(P->event_wait(launched.handle));
        PLX_REQUIRE_OK(P->buffer_read_async(b.handle, by.handle, 0, y.data, y.bytes()));
        wait_marker(b.handle);
        const auto want10 = lcg_reference(x.data(), kSlowWords, 10);
        require_equal(y.data, want10.data(), kSlowWords, "read after a destroyed queue's launch");
    }
    SUBCASE("argument errors") {
        CHECK(P->queue_wait_event(b.handle, nullptr) == PLX_ERROR_INVALID_ARGUMENT);
        CHECK(contains(err(), "queue_wait_event"));
        CHECK(P->queue_marker(b.handle, nullptr) == PLX_ERROR_INVALID_ARGUMENT);
        CHECK(contains(err(), "queue_marker"));
    }
}

TEST_CASE("buffer_copy_peer between two devices") {
    // One device suffices for the refusal of same-device buffers.
    {
        Queue q(0);
        Buffer b1(0, 64), b2(0, 64);
        CHECK(P->buffer_copy_peer(q.handle, b1.handle, 0, b2.handle, 0, 64) ==
              PLX_ERROR_INVALID_ARGUMENT);
        CHECK(contains(err(), "buffer_copy_peer"));
        CHECK(contains(err(), "buffer_copy"));
    }
    if (g_devices.size() < 2) {
        MESSAGE("skipped: buffer_copy_peer needs two CUDA devices, this machine has "
                << g_devices.size());
        return;
    }
    const size_t n = (size_t(64) << 20) / 4 + 5;
    const auto x = random_words(n, 41);
    Queue q0(0), q1(1);
    Buffer d0(0, n * 4), d1(1, n * 4);
    PLX_REQUIRE_OK(P->buffer_write(q0.handle, d0.handle, 0, x.data(), n * 4));
    const uint32_t zero = 0;
    PLX_REQUIRE_OK(P->buffer_fill(q1.handle, d1.handle, 0, &zero, 4, n * 4));
    PLX_REQUIRE_OK(P->queue_sync(q1.handle));
    std::vector<uint32_t> got(n);

    SUBCASE("pulled on the destination's queue") {
        PLX_REQUIRE_OK(P->buffer_copy_peer(q1.handle, d1.handle, 0, d0.handle, 0, n * 4));
        PLX_REQUIRE_OK(P->buffer_read(q1.handle, d1.handle, 0, got.data(), n * 4));
        require_equal(got.data(), x.data(), n, "device 0 -> device 1 on device 1's queue");
    }
    SUBCASE("pushed on the source's queue, at offsets, then back") {
        // d1[0, 4) stays zero; d1[4, n) = x[1, n - 3).
        PLX_REQUIRE_OK(P->buffer_copy_peer(q0.handle, d1.handle, 16, d0.handle, 4, (n - 4) * 4));
        Event copied;
        PLX_REQUIRE_OK(P->queue_marker(q0.handle, &copied.handle));
        PLX_REQUIRE_OK(P->queue_wait_event(q1.handle, copied.handle)); // a cross-device wait
        PLX_REQUIRE_OK(P->buffer_read_async(q1.handle, d1.handle, 0, got.data(), n * 4));
        wait_marker(q1.handle);
        std::vector<uint32_t> want(n, 0);
        std::copy(x.begin() + 1, x.begin() + (n - 3), want.begin() + 4);
        require_equal(got.data(), want.data(), n, "device 0 -> device 1 on device 0's queue");
        // And back, on device 1's queue (device 1 -> device 0).
        PLX_REQUIRE_OK(P->buffer_copy_peer(q1.handle, d0.handle, 0, d1.handle, 0, n * 4));
        PLX_REQUIRE_OK(P->queue_sync(q1.handle));
        PLX_REQUIRE_OK(P->buffer_read(q0.handle, d0.handle, 0, got.data(), n * 4));
        require_equal(got.data(), want.data(), n, "device 1 -> device 0");
    }
    SUBCASE("a launch on device 1, waited for by device 0's queue, then pulled") {
        Module m(1);
        Buffer y1(1, n * 4), y0(0, n * 4);
        PLX_REQUIRE_OK(P->buffer_copy_peer(q1.handle, d1.handle, 0, d0.handle, 0, n * 4));
        Event launched;
        launch_lcg(q1.handle, m, y1, d1, 20000, n, &launched.handle);
        PLX_REQUIRE_OK(P->queue_wait_event(q0.handle, launched.handle));
        PLX_REQUIRE_OK(P->buffer_copy_peer(q0.handle, y0.handle, 0, y1.handle, 0, n * 4));
        PLX_REQUIRE_OK(P->buffer_read(q0.handle, y0.handle, 0, got.data(), n * 4));
        const auto want = lcg_reference(x.data(), n, 20000);
        require_equal(got.data(), want.data(), n, "launch on device 1 read on device 0");
    }
    SUBCASE("what the plugin logged about peer access") {
        PLX_REQUIRE_OK(P->buffer_copy_peer(q0.handle, d1.handle, 0, d0.handle, 0, 4));
        PLX_REQUIRE_OK(P->buffer_copy_peer(q1.handle, d0.handle, 0, d1.handle, 0, 4));
        PLX_REQUIRE_OK(P->queue_sync(q0.handle));
        PLX_REQUIRE_OK(P->queue_sync(q1.handle));
        std::string peer_lines;
        const std::string logs = g_host->all_logs();
        for (size_t at = 0, end; at < logs.size(); at = end + 1) {
            end = logs.find('\n', at);
            if (end == std::string::npos) end = logs.size();
            const std::string line = logs.substr(at, end - at);
            if (!contains(line, " -> device ")) continue;
            peer_lines += line + "\n";
            // Detected and used where the hardware has it; the driver's own "no" otherwise.
            CHECK_MESSAGE((contains(line, "peer access enabled") ||
                           contains(line, "no peer access between these GPUs")),
                          line);
        }
        CHECK(contains(peer_lines, "device 0 -> device 1"));
        CHECK(contains(peer_lines, "device 1 -> device 0"));
        MESSAGE(peer_lines);
    }
    SUBCASE("argument errors") {
        CHECK(P->buffer_copy_peer(q0.handle, d1.handle, 8, d0.handle, 0, n * 4) ==
              PLX_ERROR_INVALID_ARGUMENT);
        CHECK(contains(err(), "destination"));
        if (g_devices.size() >= 3) {
            Queue q2(2);
            CHECK(P->buffer_copy_peer(q2.handle, d1.handle, 0, d0.handle, 0, 4) ==
                  PLX_ERROR_INVALID_ARGUMENT);
        }
    }
}

TEST_CASE("buffer_wrap of a cuMemAlloc allocation, buffer_native and queue_native") {
    CUcontext ctx = nullptr;
    CU_REQUIRE_OK(g_cu.cuDevicePrimaryCtxRetain(&ctx, g_ordinals[0]));
    CU_REQUIRE_OK(g_cu.cuCtxSetCurrent(ctx));
    const size_t n = (size_t(16) << 20) / 4 + 7;
    CUdeviceptr ptr = 0;
    CU_REQUIRE_OK(g_cu.cuMemAlloc(&ptr, n * 4));
    const auto x = random_words(n, 51);
    CU_REQUIRE_OK(g_cu.cuMemcpyHtoD(ptr, x.data(), n * 4));

    Queue q(0);
    {
        plx_buffer wrapped = nullptr;
        PLX_REQUIRE_OK(P->buffer_wrap(g_devices[0], ptr, n * 4, &wrapped));
        uint64_t native = 0;
        PLX_REQUIRE_OK(P->buffer_native(wrapped, &native));
        CHECK(native == ptr);
        std::vector<uint32_t> got(n, 0);
        PLX_REQUIRE_OK(P->buffer_read(q.handle, wrapped, 0, got.data(), n * 4));
        require_equal(got.data(), x.data(), n, "wrapped allocation read through the plugin");

        // Written through the plugin, read through the driver.
        const auto z = random_words(n, 52);
        PLX_REQUIRE_OK(P->buffer_write_async(q.handle, wrapped, 0, z.data(), n * 4));
        wait_marker(q.handle);
        std::vector<uint32_t> back(n, 0);
        CU_REQUIRE_OK(g_cu.cuCtxSetCurrent(ctx));
        CU_REQUIRE_OK(g_cu.cuMemcpyDtoH(back.data(), ptr, n * 4));
        require_equal(back.data(), z.data(), n, "written through the plugin");
        P->buffer_free(wrapped);
    }
    {
        // Inside the allocation: what is left from there is the limit.
        plx_buffer inner = nullptr;
        PLX_REQUIRE_OK(P->buffer_wrap(g_devices[0], ptr + 400, n * 4 - 400, &inner));
        P->buffer_free(inner);
        CHECK(P->buffer_wrap(g_devices[0], ptr + 400, n * 4, &inner) == PLX_ERROR_INVALID_ARGUMENT);
        CHECK(contains(err(), "buffer_wrap"));
        CHECK(contains(err(), "bytes"));
        CHECK(P->buffer_wrap(g_devices[0], ptr, n * 4 + 1, &inner) == PLX_ERROR_INVALID_ARGUMENT);
        // Not device memory at all.
        static uint32_t host_word = 0;
        CHECK(P->buffer_wrap(g_devices[0], reinterpret_cast<uint64_t>(&host_word), 4, &inner) ==
              PLX_ERROR_INVALID_ARGUMENT);
        CHECK(contains(err(), "buffer_wrap"));
        CHECK(P->buffer_wrap(g_devices[0], 0, 4, &inner) == PLX_ERROR_INVALID_ARGUMENT);
        Pinned<uint32_t> pinned(0, 16);
        CHECK(P->buffer_wrap(g_devices[0], reinterpret_cast<uint64_t>(pinned.data), 64, &inner) ==
              PLX_ERROR_INVALID_ARGUMENT);
        CHECK(contains(err(), "host memory"));
        if (g_devices.size() >= 2) {
            // Memory of device 0 is not device 1's.
            CHECK(P->buffer_wrap(g_devices[1], ptr, n * 4, &inner) == PLX_ERROR_INVALID_ARGUMENT);
            CHECK(contains(err(), "not of device 1"));
        }
    }
    // buffer_free released only the wrapper: the allocation is still the caller's.
    CU_REQUIRE_OK(g_cu.cuCtxSetCurrent(ctx));
    std::vector<uint32_t> last(4, 0);
    CU_REQUIRE_OK(g_cu.cuMemcpyDtoH(last.data(), ptr, 16));
    CU_REQUIRE_OK(g_cu.cuMemFree(ptr));

    // Natives of the plugin's own handles.
    Buffer b(0, 256);
    uint64_t native = 0;
    PLX_REQUIRE_OK(P->buffer_native(b.handle, &native));
    CHECK(native != 0);
    uint64_t stream = 0;
    PLX_REQUIRE_OK(P->queue_native(q.handle, &stream));
    CHECK(stream != 0);
    CU_REQUIRE_OK(g_cu.cuCtxSetCurrent(ctx));
    CHECK(g_cu.cuStreamSynchronize(reinterpret_cast<CUstream>(stream)) == CUDA_SUCCESS);
    CHECK(P->queue_native(q.handle, nullptr) == PLX_ERROR_INVALID_ARGUMENT);
    CHECK(P->buffer_native(nullptr, &native) == PLX_ERROR_INVALID_ARGUMENT);
    CU_REQUIRE_OK(g_cu.cuDevicePrimaryCtxRelease(g_ordinals[0]));
}

int main(int argc, char** argv) {
    int skip_code = 0;
    std::vector<char*> args;
    PluginHost host(PLEXUS_CUDA_PLUGIN_PATH);
    if (std::optional<int> status = start_gpu_test(host, argc, argv, args, skip_code))
        return *status;
    uint32_t count = 0;
    host.plugin.device_count(&count);
    if (!g_cu.load()) {
        std::fprintf(stderr, "the driver lacks functions this test calls: %s\n",
                     g_cu.missing.c_str());
        return 1;
    }
    g_host = &host;
    P = &host.plugin;
    int cu_count = 0;
    g_cu.cuDeviceGetCount(&cu_count);
    for (uint32_t i = 0; i < count; ++i) {
        plx_device d = nullptr;
        plx_device_info info{};
        info.struct_size = sizeof info;
        if (P->device_get(i, &d) != PLX_OK || P->device_info(d, &info) != PLX_OK) {
            std::fprintf(stderr, "device %u: %s\n", i, host.error().c_str());
            return 1;
        }
        // The CUDA device with the same UUID (the plugin may have skipped a device).
        CUdevice ordinal = -1;
        for (int c = 0; c < cu_count && ordinal < 0; ++c) {
            CUdevice dev = 0;
            CUuuid uuid{};
            if (g_cu.cuDeviceGet(&dev, c) == CUDA_SUCCESS &&
                g_cu.cuDeviceGetUuid(&uuid, dev) == CUDA_SUCCESS &&
                std::memcmp(uuid.bytes, info.uuid, sizeof info.uuid) == 0)
                ordinal = dev;
        }
        if (ordinal < 0) {
            std::fprintf(stderr, "device %u (%s): no CUDA device has its UUID\n", i, info.name);
            return 1;
        }
        std::printf("device %u: %s (%s), CUDA device %d, PCI %s\n", i, info.name, info.arch,
                    int(ordinal), info.pci_bus_id);
        g_devices.push_back(d);
        g_infos.push_back(info);
        g_ordinals.push_back(ordinal);
    }
    doctest::Context context(static_cast<int>(args.size()), args.data());
    const int result = context.run();
    P->shutdown();
    return result;
}
