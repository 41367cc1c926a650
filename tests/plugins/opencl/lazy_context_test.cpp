// Listing the OpenCL plugin's devices creates no OpenCL context: a device's context is made
// at its first queue, buffer, module or host_alloc, once (the plugin logs each one it creates).
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include "host.hpp"

#include <cstring>

TEST_CASE("contexts are created at first use, once per device") {
    ocltest::Host host(PLEXUS_OPENCL_PLUGIN);
    REQUIRE(host.init_status == PLX_OK);
    const plx_plugin& p = host.plugin;
    uint32_t count = 0;
    REQUIRE(p.device_count(&count) == PLX_OK);
    if (count == 0) {
        MESSAGE("no OpenCL device: nothing to check");
        return;
    }
    for (uint32_t i = 0; i < count; ++i) {
        plx_device d = nullptr;
        REQUIRE(p.device_get(i, &d) == PLX_OK);
        plx_device_info info{};
        info.struct_size = sizeof info;
        REQUIRE(p.device_info(d, &info) == PLX_OK);
    }
    CHECK(host.count_log("created the context") == 0);

    plx_device d0 = nullptr;
    REQUIRE(p.device_get(0, &d0) == PLX_OK);
    plx_queue q1 = nullptr, q2 = nullptr;
    REQUIRE(p.queue_create(d0, 0, &q1) == PLX_OK);
    CHECK(host.count_log("created the context") == 1);
    REQUIRE(p.queue_create(d0, 0, &q2) == PLX_OK);
    plx_buffer b = nullptr;
    REQUIRE(p.buffer_alloc(d0, 1024, &b) == PLX_OK);
    CHECK(host.count_log("created the context") == 1);
    // The context works: a buffer written and read back through it.
    std::vector<unsigned char> in(1024), out(1024, 0);
    for (size_t i = 0; i < in.size(); ++i)
        in[i] = static_cast<unsigned char>(i * 7 + 3);
    REQUIRE(p.buffer_write(q1, b, 0, in.data(), in.size()) == PLX_OK);
    REQUIRE(p.buffer_read(q2, b, 0, out.data(), out.size()) == PLX_OK);
    CHECK(out == in);
    p.buffer_free(b);
    p.queue_destroy(q1);
    p.queue_destroy(q2);
}

TEST_CASE("host_alloc uses the same lazy context, and shutdown frees what the host left") {
    ocltest::Host host(PLEXUS_OPENCL_PLUGIN);
    REQUIRE(host.init_status == PLX_OK);
    const plx_plugin& p = host.plugin;
    uint32_t count = 0;
    REQUIRE(p.device_count(&count) == PLX_OK);
    if (count == 0) {
        MESSAGE("no OpenCL device: nothing to check");
        return;
    }
    plx_device d0 = nullptr;
    REQUIRE(p.device_get(0, &d0) == PLX_OK);
    const size_t before = host.count_log("created the context");
    void* kept = nullptr;
    void* freed = nullptr;
    REQUIRE(p.host_alloc(d0, 1 << 16, &kept) == PLX_OK);
    CHECK(host.count_log("created the context") == before + 1);
    REQUIRE(p.host_alloc(d0, 1 << 16, &freed) == PLX_OK);
    plx_queue q = nullptr;
    REQUIRE(p.queue_create(d0, 0, &q) == PLX_OK);
    CHECK(host.count_log("created the context") == before + 1);
    std::memset(kept, 0x3c, 1 << 16);
    std::memset(freed, 0xc3, 1 << 16);
    p.host_free(d0, freed);
    p.queue_destroy(q);
    // `kept` is left for shutdown (the Host's destructor) to unmap and release.
}
