// The CUDA plugin over a driver on which nothing runs (stub_libcuda.c, PLEXUS_CUDA_LIBRARY): its
// launch events, which record nothing at the launch and must outlive their queue, what a
// launch costs the host in heap allocations, and library routines without cuBLAS
// (PLEXUS_CUBLAS_LIBRARY names one that is absent). Runs on any machine.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include "core/runtime/launch/counting_new.hpp"
#include "plugin_host.hpp"

#include <doctest/doctest.h>

#include <cstdlib>
#include <vector>

using plexus::test::contains;
using plexus::test::PluginHost;

namespace {

struct StubCounts {
    unsigned long launches, event_records, events_created;
};

// The stub driver's counters: the library the plugin opened, found again by its path.
const StubCounts& stub_counts() {
    void* stub = dlopen(std::getenv("PLEXUS_CUDA_LIBRARY"), RTLD_NOW | RTLD_NOLOAD);
    REQUIRE(stub != nullptr);
    auto counts = reinterpret_cast<const StubCounts* (*)()>(dlsym(stub, "cudastub_counts"));
    REQUIRE(bool(counts));
    return *counts();
}

struct Stub {
    PluginHost host{PLEXUS_CUDA_PLUGIN_PATH};
    const plx_plugin& p = host.plugin;
    plx_device device = nullptr;
    plx_module module = nullptr;
    plx_kernel kernel = nullptr;
    plx_launch_dims dims{};

    Stub() {
        REQUIRE_MESSAGE(host.library != nullptr, host.open_error);
        REQUIRE_MESSAGE(host.init() == PLX_OK, host.error());
        REQUIRE(p.device_get(0, &device) == PLX_OK);
        const char ptx[] = "// the stub driver links any text";
        REQUIRE_MESSAGE(p.module_load(device, PLX_LANG_PTX, ptx, sizeof ptx - 1, "", &module) ==
                            PLX_OK,
                        host.error());
        REQUIRE_MESSAGE(p.kernel_get(module, "empty", &kernel) == PLX_OK, host.error());
        dims.struct_size = sizeof dims;
        dims.dims = 1;
        dims.global_size[0] = dims.local_size[0] = 32;
        dims.global_size[1] = dims.global_size[2] = dims.local_size[1] = dims.local_size[2] = 1;
    }
    ~Stub() {
        p.module_unload(module);
        p.shutdown();
    }
    plx_queue queue(uint32_t flags = 0) {
        plx_queue q = nullptr;
        REQUIRE_MESSAGE(p.queue_create(device, flags, &q) == PLX_OK, host.error());
        return q;
    }
    plx_event launch(plx_queue q) {
        plx_event e = nullptr;
        REQUIRE_MESSAGE(p.launch(q, kernel, &dims, nullptr, 0, &e) == PLX_OK, host.error());
        REQUIRE(e != nullptr);
        return e;
    }
};

} // namespace

TEST_CASE(
    "launch events of a queue without profiling: nothing recorded or allocated at the launch") {
    Stub s;
    plx_queue q = s.queue();
    s.p.event_release(s.launch(q)); // the context and the queue's first use
    const StubCounts before = stub_counts();
    const unsigned long allocated = launch_test::allocations.load();
    for (int i = 0; i < 100; ++i)
        s.p.event_release(s.launch(q));
    CHECK(launch_test::allocations.load() - allocated == 0);
    CHECK(stub_counts().launches - before.launches == 100);
    CHECK(stub_counts().event_records == before.event_records);
    CHECK(stub_counts().events_created == before.events_created);

    // Waiting for one records one marker on the stream, then.
    plx_event e = s.launch(q);
    CHECK(s.p.event_wait(e) == PLX_OK);
    CHECK(stub_counts().event_records - before.event_records == 1);
    s.p.event_release(e);
    s.p.queue_destroy(q);
}

TEST_CASE("launch events outlive their queue, released in any order") {
    Stub s;
    plx_queue other = s.queue();
    for (bool oldest_first : {true, false}) {
        plx_queue q = s.queue();
        std::vector<plx_event> events;
        for (int i = 0; i < 5; ++i)
            events.push_back(s.launch(q));
        CHECK(s.p.event_wait(events[1]) == PLX_OK);
        CHECK(s.p.queue_wait_event(other, events[2]) == PLX_OK);
        s.p.event_release(oldest_first ? events.front() : events.back());
        s.p.queue_destroy(q); // its work is done: the events have nothing left to wait for
        const StubCounts before = stub_counts();
        for (int i = 1; i < 4; ++i) {
            CHECK(s.p.event_wait(events[size_t(i)]) == PLX_OK);
            CHECK(s.p.queue_wait_event(other, events[size_t(i)]) == PLX_OK);
        }
        CHECK(stub_counts().event_records == before.event_records); // no stream to record on
        for (int i = 1; i < 4; ++i)
            s.p.event_release(events[size_t(i)]);
        s.p.event_release(oldest_first ? events.back() : events.front());
    }
    s.p.queue_destroy(other);
}

TEST_CASE("launch events of a profiling queue are their own, timed") {
    Stub s;
    plx_queue q = s.queue(PLX_QUEUE_PROFILING);
    const StubCounts before = stub_counts();
    plx_event a = s.launch(q), b = s.launch(q);
    CHECK(a != b);
    CHECK(stub_counts().event_records - before.event_records == 4); // a start and an end each
    CHECK(s.p.event_wait(b) == PLX_OK);
    s.p.event_release(a);
    s.p.event_release(b);
    s.p.queue_destroy(q);
}

TEST_CASE("library routines without cuBLAS: PLX_ERROR_NOT_FOUND, saying why") {
    Stub s;
    const char* forced = std::getenv("PLEXUS_CUBLAS_LIBRARY");
    REQUIRE_MESSAGE(forced != nullptr, "meson sets PLEXUS_CUBLAS_LIBRARY for this test");
    for (int attempt = 0; attempt < 2; ++attempt) { // the failed lookup is remembered
        plx_module m = nullptr;
        CHECK(s.p.module_load(s.device, PLX_LANG_ROUTINE, "gemm_f32", 8, "", &m) ==
              PLX_ERROR_NOT_FOUND);
        CHECK(m == nullptr);
        const std::string e = s.host.error();
        INFO(e);
        CHECK(contains(e, "cuda: module_load of routine 'gemm_f32': cuBLAS was not found (tried " +
                              std::string(forced) + "): "));
        CHECK(contains(e, "install the CUDA toolkit's cuBLAS"));
    }
    // An unknown name is told apart from a missing library.
    plx_module m = nullptr;
    CHECK(s.p.module_load(s.device, PLX_LANG_ROUTINE, "sgemv", 5, "", &m) == PLX_ERROR_NOT_FOUND);
    CHECK(contains(s.host.error(), "offers no routine 'sgemv'; it offers gemm_f32, gemm_tf32"));
    // The plugin's own kernels still load and run.
    plx_queue q = s.queue();
    s.p.event_release(s.launch(q));
    s.p.queue_destroy(q);
}
