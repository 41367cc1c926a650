// The OpenCL plugin's ABI 1.1 functions: non-blocking transfers, markers and waits between
// queues of one device and of two, page-locked host memory, wrapped and native cl_mem and
// cl_command_queue handles (used here with OpenCL calls of the test's own), uuid / PCI fields.
// Every transfer is checked element by element on random data.
//
// The cases named "... two devices ..." need a second OpenCL device; with PoCL,
// POCL_DEVICES="pthread pthread" gives one (the meson test opencl_plugin_two_devices runs them
// so). Without one they pass with a message, unless OCLTEST_REQUIRE_TWO_DEVICES is set and the
// platform is PoCL, where a missing second device is a failure.
#include "fixture.hpp"

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>

using namespace ocltest;

namespace {

// The few OpenCL calls the interop checks make themselves, from the ICD loader the plugin
// opened (dlopen of the same name gives the same library).
struct ClApi {
    decltype(&::clGetCommandQueueInfo) GetCommandQueueInfo = nullptr;
    decltype(&::clCreateBuffer) CreateBuffer = nullptr;
    decltype(&::clReleaseMemObject) ReleaseMemObject = nullptr;
    decltype(&::clEnqueueReadBuffer) EnqueueReadBuffer = nullptr;
    decltype(&::clEnqueueCopyBuffer) EnqueueCopyBuffer = nullptr;
    decltype(&::clFinish) Finish = nullptr;
};

const ClApi& cl_api() {
    static const ClApi api = [] {
        ClApi a;
        void* lib = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
        if (lib == nullptr) lib = dlopen("libOpenCL.so", RTLD_NOW | RTLD_LOCAL);
        if (lib == nullptr) return a;
#define OCLTEST_RESOLVE(name) a.name = reinterpret_cast<decltype(a.name)>(dlsym(lib, "cl" #name));
        OCLTEST_RESOLVE(GetCommandQueueInfo)
        OCLTEST_RESOLVE(CreateBuffer)
        OCLTEST_RESOLVE(ReleaseMemObject)
        OCLTEST_RESOLVE(EnqueueReadBuffer)
        OCLTEST_RESOLVE(EnqueueCopyBuffer)
        OCLTEST_RESOLVE(Finish)
#undef OCLTEST_RESOLVE
        return a;
    }();
    REQUIRE((api.GetCommandQueueInfo != nullptr));
    REQUIRE((api.CreateBuffer != nullptr));
    REQUIRE((api.ReleaseMemObject != nullptr));
    REQUIRE((api.EnqueueReadBuffer != nullptr));
    REQUIRE((api.EnqueueCopyBuffer != nullptr));
    REQUIRE((api.Finish != nullptr));
    return api;
}

// Each iteration is a full-period LCG step, so that a skipped or partial run shows.
const char* kAffine = R"CL(
__kernel void affine(__global uint* data, uint n, uint rounds) {
    size_t i = get_global_id(0);
    if (i >= n) return;
    uint x = data[i];
    for (uint r = 0; r < rounds; ++r) x = x * 1664525u + 1013904223u;
    data[i] = x;
}
)CL";

std::vector<uint32_t> affine_reference(std::vector<uint32_t> v, uint32_t rounds) {
    for (auto& x : v)
        for (uint32_t r = 0; r < rounds; ++r)
            x = x * 1664525u + 1013904223u;
    return v;
}

std::vector<uint32_t> random_u32(size_t n, uint32_t seed) {
    std::mt19937 rng(seed);
    std::vector<uint32_t> v(n);
    for (auto& x : v)
        x = static_cast<uint32_t>(rng());
    return v;
}

// Every element, reporting how many differ and the first one.
void check_all(const uint32_t* got, const std::vector<uint32_t>& want) {
    size_t wrong = 0, first = want.size();
    for (size_t i = 0; i < want.size(); ++i) {
        if (got[i] != want[i]) {
            if (wrong == 0) first = i;
            ++wrong;
        }
    }
    INFO("first wrong element: " << first << " of " << want.size());
    CHECK(wrong == 0);
}
void check_all(const std::vector<uint32_t>& got, const std::vector<uint32_t>& want) {
    REQUIRE(got.size() == want.size());
    check_all(got.data(), want);
}

struct QueueOn {
    explicit QueueOn(plx_device d, uint32_t flags = 0) {
        OCL_REQUIRE_OK(P().queue_create(d, flags, &q));
    }
    ~QueueOn() { P().queue_destroy(q); }
    QueueOn(const QueueOn&) = delete;
    QueueOn& operator=(const QueueOn&) = delete;
    cl_command_queue native() const {
        uint64_t h = 0;
        OCL_REQUIRE_OK(P().queue_native(q, &h));
        REQUIRE(h != 0);
        return reinterpret_cast<cl_command_queue>(static_cast<uintptr_t>(h));
    }
    plx_queue q = nullptr;
};

struct BufferOn {
    BufferOn(plx_device d, size_t bytes) { OCL_REQUIRE_OK(P().buffer_alloc(d, bytes, &b)); }
    ~BufferOn() { P().buffer_free(b); }
    BufferOn(const BufferOn&) = delete;
    BufferOn& operator=(const BufferOn&) = delete;
    cl_mem native() const {
        uint64_t h = 0;
        OCL_REQUIRE_OK(P().buffer_native(b, &h));
        REQUIRE(h != 0);
        return reinterpret_cast<cl_mem>(static_cast<uintptr_t>(h));
    }
    plx_buffer b = nullptr;
};

struct HostMem {
    HostMem(plx_device d, size_t bytes) : device(d) {
        void* p = nullptr;
        OCL_REQUIRE_OK(P().host_alloc(d, bytes, &p));
        REQUIRE(p != nullptr);
        ptr = static_cast<uint32_t*>(p);
    }
    ~HostMem() { P().host_free(device, ptr); }
    HostMem(const HostMem&) = delete;
    HostMem& operator=(const HostMem&) = delete;
    plx_device device;
    uint32_t* ptr = nullptr;
};

struct Event {
    Event() = default;
    ~Event() { P().event_release(e); }
    Event(const Event&) = delete;
    Event& operator=(const Event&) = delete;
    plx_event e = nullptr;
};

struct ModuleOn {
    ModuleOn(plx_device d, const char* source) {
        OCL_REQUIRE_OK(P().module_load(d, PLX_LANG_OPENCL_C, source, std::strlen(source), "", &m));
    }
    ~ModuleOn() { P().module_unload(m); }
    ModuleOn(const ModuleOn&) = delete;
    ModuleOn& operator=(const ModuleOn&) = delete;
    plx_kernel kernel(const char* name) {
        plx_kernel k = nullptr;
        OCL_REQUIRE_OK(P().kernel_get(m, name, &k));
        return k;
    }
    plx_module m = nullptr;
};

// Enqueues affine(data, n, rounds) on q; event may be NULL.
void launch_affine(plx_queue q, plx_kernel k, plx_buffer data, uint32_t n, uint32_t rounds,
                   plx_event* event) {
    const plx_arg args[] = {buffer_arg(data), scalar_arg(n), scalar_arg(rounds)};
    const plx_launch_dims d = dims1(n, 64);
    OCL_REQUIRE_OK(P().launch(q, k, &d, args, 3, event));
}

// Device 1, or nullptr (after a MESSAGE, or a failure where two devices are required).
plx_device second_device() {
    uint32_t count = 0;
    OCL_REQUIRE_OK(P().device_count(&count));
    if (count >= 2) {
        plx_device d = nullptr;
        OCL_REQUIRE_OK(P().device_get(1, &d));
        return d;
    }
    const char* require = std::getenv("OCLTEST_REQUIRE_TWO_DEVICES");
    const bool pocl = contains(info().platform, "Portable Computing Language");
    if (require != nullptr && require[0] != '\0' && pocl)
        FAIL("OCLTEST_REQUIRE_TWO_DEVICES is set but PoCL lists " << count
                                                                  << " device(s): is POCL_DEVICES "
                                                                     "\"pthread pthread\"?");
    MESSAGE("only " << count << " OpenCL device(s): the two-device checks are skipped");
    return nullptr;
}

std::string device_name(plx_device d) {
    plx_device_info i{};
    i.struct_size = sizeof i;
    OCL_REQUIRE_OK(P().device_info(d, &i));
    return i.name;
}

} // namespace

TEST_CASE("the descriptor offers every ABI 1.1 function") {
    const plx_plugin& p = P();
    CHECK(p.struct_size == sizeof(plx_plugin));
    CHECK(p.abi_version == PLX_ABI_VERSION);
    CHECK((p.queue_marker != nullptr));
    CHECK((p.queue_wait_event != nullptr));
    CHECK((p.buffer_write_async != nullptr));
    CHECK((p.buffer_read_async != nullptr));
    CHECK((p.buffer_copy_peer != nullptr));
    CHECK((p.host_alloc != nullptr));
    CHECK((p.host_free != nullptr));
    CHECK((p.buffer_wrap != nullptr));
    CHECK((p.buffer_native != nullptr));
    CHECK((p.queue_native != nullptr));
}

TEST_CASE("async write, marker, event_wait and async read round trip every element") {
    Queue q;
    const size_t n = (size_t{1} << 20) + 37;
    const auto in = random_u32(n, 11);
    Buffer b(n * sizeof(uint32_t));
    OCL_REQUIRE_OK(P().buffer_write_async(q.q, b.b, 0, in.data(), n * sizeof(uint32_t)));
    {
        Event written;
        OCL_REQUIRE_OK(P().queue_marker(q.q, &written.e));
        REQUIRE(written.e != nullptr);
        OCL_REQUIRE_OK(P().event_wait(written.e));
    }
    std::vector<uint32_t> out(n, 0xdeadbeefu);
    OCL_REQUIRE_OK(P().buffer_read_async(q.q, b.b, 0, out.data(), n * sizeof(uint32_t)));
    {
        Event read;
        OCL_REQUIRE_OK(P().queue_marker(q.q, &read.e));
        OCL_REQUIRE_OK(P().event_wait(read.e));
    }
    check_all(out, in);

    // A part at an odd byte offset, then the whole buffer again: both ordered on the queue,
    // the host waiting only at the end.
    const auto patch = random_u32(5000, 12);
    const size_t patch_offset = 4001 * sizeof(uint32_t) + 3;
    OCL_REQUIRE_OK(P().buffer_write_async(q.q, b.b, patch_offset, patch.data(),
                                          patch.size() * sizeof(uint32_t)));
    std::vector<uint32_t> out2(n, 0);
    OCL_REQUIRE_OK(P().buffer_read_async(q.q, b.b, 0, out2.data(), n * sizeof(uint32_t)));
    Event done;
    OCL_REQUIRE_OK(P().queue_marker(q.q, &done.e));
    OCL_REQUIRE_OK(P().event_wait(done.e));
    std::vector<uint32_t> want = in;
    std::memcpy(reinterpret_cast<unsigned char*>(want.data()) + patch_offset, patch.data(),
                patch.size() * sizeof(uint32_t));
    check_all(out2, want);

    // Argument errors.
    CHECK(P().buffer_write_async(q.q, b.b, n * sizeof(uint32_t) - 3, in.data(), 4) ==
          PLX_ERROR_INVALID_ARGUMENT);
    CHECK(contains(host().error(), "outside the buffer"));
    CHECK(P().buffer_read_async(q.q, b.b, 0, nullptr, 4) == PLX_ERROR_INVALID_ARGUMENT);
    CHECK(contains(host().error(), "buffer_read_async"));
    CHECK(P().buffer_write_async(nullptr, b.b, 0, in.data(), 4) == PLX_ERROR_INVALID_ARGUMENT);
    CHECK(P().queue_marker(q.q, nullptr) == PLX_ERROR_INVALID_ARGUMENT);
    CHECK(P().queue_wait_event(q.q, nullptr) == PLX_ERROR_INVALID_ARGUMENT);
    CHECK(contains(host().error(), "queue_wait_event"));
}

TEST_CASE("two queues on one device: B waits for A's marker and for A's launch event") {
    Queue a, b;
    Module module(kAffine);
    plx_kernel k = module.kernel("affine");
    const uint32_t n = (1u << 18) + 5;
    const uint32_t rounds = 300;
    const size_t bytes = n * sizeof(uint32_t);

    // A: write, transform; B: waits for A's marker, then reads.
    const auto in = random_u32(n, 21);
    Buffer buf(bytes);
    OCL_REQUIRE_OK(P().buffer_write_async(a.q, buf.b, 0, in.data(), bytes));
    launch_affine(a.q, k, buf.b, n, rounds, nullptr);
    Event ea;
    OCL_REQUIRE_OK(P().queue_marker(a.q, &ea.e));
    OCL_REQUIRE_OK(P().queue_wait_event(b.q, ea.e));
    std::vector<uint32_t> out(n, 0);
    OCL_REQUIRE_OK(P().buffer_read_async(b.q, buf.b, 0, out.data(), bytes));
    OCL_REQUIRE_OK(P().queue_sync(b.q));
    check_all(out, affine_reference(in, rounds));

    // The event a launch returned serves the same way.
    const auto in2 = random_u32(n, 22);
    Buffer buf2(bytes);
    OCL_REQUIRE_OK(P().buffer_write_async(a.q, buf2.b, 0, in2.data(), bytes));
    Event launched;
    launch_affine(a.q, k, buf2.b, n, rounds, &launched.e);
    REQUIRE(launched.e != nullptr);
    OCL_REQUIRE_OK(P().queue_wait_event(b.q, launched.e));
    std::vector<uint32_t> out2(n, 0);
    OCL_REQUIRE_OK(P().buffer_read_async(b.q, buf2.b, 0, out2.data(), bytes));
    Event eb;
    OCL_REQUIRE_OK(P().queue_marker(b.q, &eb.e));
    OCL_REQUIRE_OK(P().event_wait(eb.e));
    check_all(out2, affine_reference(in2, rounds));

    // A queue may wait for its own marker.
    Event own;
    OCL_REQUIRE_OK(P().queue_marker(a.q, &own.e));
    OCL_REQUIRE_OK(P().queue_wait_event(a.q, own.e));
    OCL_REQUIRE_OK(P().queue_sync(a.q));
}

TEST_CASE("host_alloc'd memory as source and destination of transfers") {
    Queue q;
    const size_t n = (size_t{1} << 19) + 3;
    const size_t bytes = n * sizeof(uint32_t);
    HostMem src(device(), bytes), dst(device(), bytes), dst2(device(), bytes);
    CHECK(src.ptr != dst.ptr);
    const auto in = random_u32(n, 31);
    std::memcpy(src.ptr, in.data(), bytes);
    std::memset(dst.ptr, 0, bytes);
    std::memset(dst2.ptr, 0, bytes);

    Buffer b(bytes), b2(bytes);
    OCL_REQUIRE_OK(P().buffer_write_async(q.q, b.b, 0, src.ptr, bytes));
    OCL_REQUIRE_OK(P().buffer_read_async(q.q, b.b, 0, dst.ptr, bytes));
    Event e;
    OCL_REQUIRE_OK(P().queue_marker(q.q, &e.e));
    OCL_REQUIRE_OK(P().event_wait(e.e));
    check_all(dst.ptr, in);

    // The blocking transfers take it too.
    OCL_REQUIRE_OK(P().buffer_write(q.q, b2.b, 0, dst.ptr, bytes));
    OCL_REQUIRE_OK(P().buffer_read(q.q, b2.b, 0, dst2.ptr, bytes));
    check_all(dst2.ptr, in);

    // Argument errors, and frees of what host_alloc did not give.
    void* p = nullptr;
    CHECK(P().host_alloc(device(), 0, &p) == PLX_ERROR_INVALID_ARGUMENT);
    CHECK(P().host_alloc(device(), 16, nullptr) == PLX_ERROR_INVALID_ARGUMENT);
    CHECK(P().host_alloc(device(), static_cast<size_t>(info().max_alloc_bytes) + 1, &p) ==
          PLX_ERROR_OUT_OF_MEMORY);
    CHECK(contains(host().error(), "CL_DEVICE_MAX_MEM_ALLOC_SIZE"));
    CHECK(p == nullptr);
    P().host_free(device(), nullptr); // a no-op
    const size_t warnings = host().count_log("is not live memory of host_alloc");
    int not_ours = 0;
    P().host_free(device(), &not_ours);
    CHECK(host().count_log("is not live memory of host_alloc") == warnings + 1);

    // Many small allocations come and go.
    for (int round = 0; round < 3; ++round) {
        std::vector<void*> ptrs(16, nullptr);
        for (auto& ptr : ptrs) {
            OCL_REQUIRE_OK(P().host_alloc(device(), 4096, &ptr));
            std::memset(ptr, round, 4096);
        }
        for (void* ptr : ptrs)
            P().host_free(device(), ptr);
    }
}

TEST_CASE("buffer_wrap uses a cl_mem the caller made in the plugin's context") {
    const ClApi& cl = cl_api();
    Queue q;
    uint64_t handle = 0;
    OCL_REQUIRE_OK(P().queue_native(q.q, &handle));
    auto cq = reinterpret_cast<cl_command_queue>(static_cast<uintptr_t>(handle));
    REQUIRE(cq != nullptr);
    cl_context ctx = nullptr;
    REQUIRE(cl.GetCommandQueueInfo(cq, CL_QUEUE_CONTEXT, sizeof ctx, &ctx, nullptr) == CL_SUCCESS);
    REQUIRE(ctx != nullptr);

    const size_t n = (size_t{1} << 18) + 11;
    const size_t bytes = n * sizeof(uint32_t);
    cl_int err = CL_SUCCESS;
    cl_mem mem = cl.CreateBuffer(ctx, CL_MEM_READ_WRITE, bytes, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    REQUIRE(mem != nullptr);

    plx_buffer wrapped = nullptr;
    OCL_REQUIRE_OK(P().buffer_wrap(device(), reinterpret_cast<uintptr_t>(mem), bytes, &wrapped));
    uint64_t back = 0;
    OCL_REQUIRE_OK(P().buffer_native(wrapped, &back));
    CHECK(back == reinterpret_cast<uintptr_t>(mem));

    // Written through the plugin, read with OpenCL directly.
    const auto in = random_u32(n, 41);
    OCL_REQUIRE_OK(P().buffer_write(q.q, wrapped, 0, in.data(), bytes));
    std::vector<uint32_t> out(n, 0);
    REQUIRE(cl.EnqueueReadBuffer(cq, mem, CL_TRUE, 0, bytes, out.data(), 0, nullptr, nullptr) ==
            CL_SUCCESS);
    check_all(out, in);

    // A kernel of the plugin runs on it in place.
    Module module(kAffine);
    launch_affine(q.q, module.kernel("affine"), wrapped, static_cast<uint32_t>(n), 3, nullptr);
    std::vector<uint32_t> out2(n, 0);
    OCL_REQUIRE_OK(P().buffer_read(q.q, wrapped, 0, out2.data(), bytes));
    check_all(out2, affine_reference(in, 3));

    // buffer_free releases the wrapper's reference only: the cl_mem still reads.
    P().buffer_free(wrapped);
    std::vector<uint32_t> out3(n, 0);
    REQUIRE(cl.EnqueueReadBuffer(cq, mem, CL_TRUE, 0, bytes, out3.data(), 0, nullptr, nullptr) ==
            CL_SUCCESS);
    check_all(out3, affine_reference(in, 3));

    // A wrapper of fewer bytes than the cl_mem holds is bounded by its own size.
    plx_buffer half = nullptr;
    OCL_REQUIRE_OK(P().buffer_wrap(device(), reinterpret_cast<uintptr_t>(mem), bytes / 2, &half));
    CHECK(P().buffer_write(q.q, half, bytes / 2, in.data(), 4) == PLX_ERROR_INVALID_ARGUMENT);
    P().buffer_free(half);
    cl.ReleaseMemObject(mem);

    // Refusals: too small a cl_mem, no cl_mem at all.
    cl_mem small = cl.CreateBuffer(ctx, CL_MEM_READ_WRITE, 64, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    plx_buffer refused = nullptr;
    CHECK(P().buffer_wrap(device(), reinterpret_cast<uintptr_t>(small), 128, &refused) ==
          PLX_ERROR_INVALID_ARGUMENT);
    const std::string error = host().error();
    INFO(error);
    CHECK(contains(error, "CL_MEM_SIZE"));
    CHECK(contains(error, "64"));
    CHECK(contains(error, "128"));
    CHECK(contains(error, info().name));
    CHECK(refused == nullptr);
    cl.ReleaseMemObject(small);
    CHECK(P().buffer_wrap(device(), 0, 16, &refused) == PLX_ERROR_INVALID_ARGUMENT);
    CHECK(P().buffer_native(nullptr, &back) == PLX_ERROR_INVALID_ARGUMENT);
    CHECK(P().queue_native(nullptr, &back) == PLX_ERROR_INVALID_ARGUMENT);
}

TEST_CASE("clEnqueueCopyBuffer on two plexus buffers' cl_mem, read back through the plugin") {
    const ClApi& cl = cl_api();
    QueueOn q(device());
    const size_t n = (size_t{1} << 18) + 7;
    const size_t bytes = n * sizeof(uint32_t);
    BufferOn a(device(), bytes), b(device(), bytes);
    const auto in = random_u32(n, 51);
    OCL_REQUIRE_OK(P().buffer_write(q.q, a.b, 0, in.data(), bytes));
    // The copy goes on the plugin's own queue: the in-order queue orders it before the read.
    REQUIRE(cl.EnqueueCopyBuffer(q.native(), a.native(), b.native(), 0, 0, bytes, 0, nullptr,
                                 nullptr) == CL_SUCCESS);
    std::vector<uint32_t> out(n, 0);
    OCL_REQUIRE_OK(P().buffer_read(q.q, b.b, 0, out.data(), bytes));
    check_all(out, in);
    // Each handle is its own.
    CHECK(a.native() != b.native());
    QueueOn other(device());
    CHECK(other.native() != q.native());
}

TEST_CASE("device_info writes uuid and pci_bus_id, whole fields only") {
    const plx_device_info i = info();
    REQUIRE(std::memchr(i.pci_bus_id, '\0', sizeof i.pci_bus_id) != nullptr);
    const size_t pci_len = std::strlen(i.pci_bus_id);
    if (pci_len > 0) {
        unsigned domain = 0, bus = 0, dev = 0, fn = 0;
        CHECK(std::sscanf(i.pci_bus_id, "%4x:%2x:%2x.%1x", &domain, &bus, &dev, &fn) == 4);
        CHECK(pci_len == 12);
    }
    char uuid[33] = {};
    for (int k = 0; k < 16; ++k)
        std::snprintf(uuid + 2 * k, 3, "%02x", i.uuid[k]);
    MESSAGE("device '" << i.name << "': uuid " << uuid << ", pci_bus_id '" << i.pci_bus_id << "'");

    // A 1.0 host's struct ends before uuid: nothing of 1.1 is written.
    plx_device_info old{};
    std::memset(&old, 0x5a, sizeof old);
    old.struct_size = offsetof(plx_device_info, uuid);
    OCL_REQUIRE_OK(P().device_info(device(), &old));
    CHECK(old.struct_size == offsetof(plx_device_info, uuid));
    CHECK(old.compute_capability == i.compute_capability);
    CHECK(old.uuid[0] == 0x5a);
    CHECK(static_cast<unsigned char>(old.pci_bus_id[0]) == 0x5a);

    // A struct ending inside pci_bus_id gets uuid but no piece of the string.
    plx_device_info cut{};
    std::memset(&cut, 0x5a, sizeof cut);
    cut.struct_size = offsetof(plx_device_info, pci_bus_id) + 5;
    OCL_REQUIRE_OK(P().device_info(device(), &cut));
    CHECK(cut.struct_size == offsetof(plx_device_info, pci_bus_id));
    CHECK(std::memcmp(cut.uuid, i.uuid, sizeof i.uuid) == 0);
    CHECK(static_cast<unsigned char>(cut.pci_bus_id[0]) == 0x5a);

    plx_device_info tiny{};
    tiny.struct_size = 2;
    CHECK(P().device_info(device(), &tiny) == PLX_ERROR_INVALID_ARGUMENT);
}

TEST_CASE("two devices: buffer_copy_peer says the host must stage, and the staging works") {
    plx_device d1 = second_device();
    if (d1 == nullptr) return;
    const plx_device d0 = device();
    const std::string name0 = device_name(d0), name1 = device_name(d1);
    QueueOn q0(d0), q1(d1);
    const size_t n = (size_t{1} << 18) + 9;
    const size_t bytes = n * sizeof(uint32_t);
    BufferOn b0(d0, bytes), b1(d1, bytes), other0(d0, bytes);

    CHECK(P().buffer_copy_peer(q1.q, b1.b, 0, b0.b, 0, bytes) == PLX_ERROR_UNSUPPORTED);
    std::string error = host().error();
    INFO(error);
    CHECK(contains(error, "buffer_copy_peer"));
    CHECK(contains(error, "stages the copy through host memory"));
    CHECK(contains(error, name0));
    CHECK(contains(error, name1));
    CHECK(P().buffer_copy_peer(q0.q, b1.b, 0, b0.b, 0, bytes) == PLX_ERROR_UNSUPPORTED);
    // Argument errors come first.
    CHECK(P().buffer_copy_peer(q0.q, other0.b, 0, b0.b, 0, bytes) == PLX_ERROR_INVALID_ARGUMENT);
    CHECK(contains(host().error(), "use buffer_copy"));
    CHECK(P().buffer_copy_peer(q0.q, b1.b, 8, b0.b, 0, bytes) == PLX_ERROR_INVALID_ARGUMENT);
    CHECK(P().buffer_copy_peer(q0.q, b1.b, 0, nullptr, 0, bytes) == PLX_ERROR_INVALID_ARGUMENT);

    // The host's staging: device 0 -> page-locked memory -> device 1, ordered by events.
    const auto in = random_u32(n, 61);
    HostMem staging(d0, bytes);
    OCL_REQUIRE_OK(P().buffer_write_async(q0.q, b0.b, 0, in.data(), bytes));
    OCL_REQUIRE_OK(P().buffer_read_async(q0.q, b0.b, 0, staging.ptr, bytes));
    Event read;
    OCL_REQUIRE_OK(P().queue_marker(q0.q, &read.e));
    OCL_REQUIRE_OK(P().queue_wait_event(q1.q, read.e));
    OCL_REQUIRE_OK(P().buffer_write_async(q1.q, b1.b, 0, staging.ptr, bytes));
    std::vector<uint32_t> out(n, 0);
    OCL_REQUIRE_OK(P().buffer_read(q1.q, b1.b, 0, out.data(), bytes));
    check_all(out, in);
}

TEST_CASE("two devices: queue_wait_event on another device's marker and launch event") {
    plx_device d1 = second_device();
    if (d1 == nullptr) return;
    const plx_device d0 = device();
    QueueOn q0(d0), q1(d1);
    ModuleOn module(d0, kAffine);
    plx_kernel k = module.kernel("affine");
    const uint32_t n = (1u << 18) + 13;
    const uint32_t rounds = 400;
    const size_t bytes = n * sizeof(uint32_t);
    BufferOn b0(d0, bytes), b1(d1, bytes);
    HostMem staging(d1, bytes);
    std::memset(staging.ptr, 0, bytes);

    // Device 0: write, transform, read into host memory, marker. Device 1's queue waits for
    // the marker, then takes the host memory: only right if the wait covered all of it.
    const auto in = random_u32(n, 71);
    OCL_REQUIRE_OK(P().buffer_write_async(q0.q, b0.b, 0, in.data(), bytes));
    launch_affine(q0.q, k, b0.b, n, rounds, nullptr);
    OCL_REQUIRE_OK(P().buffer_read_async(q0.q, b0.b, 0, staging.ptr, bytes));
    Event e0;
    OCL_REQUIRE_OK(P().queue_marker(q0.q, &e0.e));
    OCL_REQUIRE_OK(P().queue_wait_event(q1.q, e0.e));
    OCL_REQUIRE_OK(P().buffer_write_async(q1.q, b1.b, 0, staging.ptr, bytes));
    Event e1;
    OCL_REQUIRE_OK(P().queue_marker(q1.q, &e1.e));
    OCL_REQUIRE_OK(P().event_wait(e1.e));
    std::vector<uint32_t> out(n, 0);
    OCL_REQUIRE_OK(P().buffer_read(q1.q, b1.b, 0, out.data(), bytes));
    const auto want = affine_reference(in, rounds);
    check_all(out, want);

    // A launch event of device 0: after the wait returns, its result is there to read.
    Event launched;
    launch_affine(q0.q, k, b0.b, n, 1, &launched.e);
    OCL_REQUIRE_OK(P().queue_wait_event(q1.q, launched.e));
    std::vector<uint32_t> out0(n, 0);
    OCL_REQUIRE_OK(P().buffer_read(q0.q, b0.b, 0, out0.data(), bytes));
    check_all(out0, affine_reference(want, 1));
    // And the other way round: device 0's queue waits for device 1's marker.
    Event e2;
    OCL_REQUIRE_OK(P().queue_marker(q1.q, &e2.e));
    OCL_REQUIRE_OK(P().queue_wait_event(q0.q, e2.e));
    OCL_REQUIRE_OK(P().queue_sync(q0.q));
}

TEST_CASE("two devices: buffer_wrap refuses a cl_mem of the other device's context") {
    plx_device d1 = second_device();
    if (d1 == nullptr) return;
    BufferOn b1(d1, 256);
    plx_buffer refused = nullptr;
    CHECK(P().buffer_wrap(device(), reinterpret_cast<uintptr_t>(b1.native()), 256, &refused) ==
          PLX_ERROR_INVALID_ARGUMENT);
    const std::string error = host().error();
    INFO(error);
    CHECK(contains(error, "CL_MEM_CONTEXT"));
    CHECK(contains(error, info().name));
    CHECK(refused == nullptr);
    // Its own device takes it.
    plx_buffer wrapped = nullptr;
    OCL_REQUIRE_OK(P().buffer_wrap(d1, reinterpret_cast<uintptr_t>(b1.native()), 256, &wrapped));
    P().buffer_free(wrapped);
}
