// The interpreter's descriptor, device, buffers, queues and events through the C ABI.
#include "fixture.hpp"

#include <plexus/catalog.hpp>

#include <set>

namespace interp_test {

TEST_CASE("descriptor: Custom, IR JSON, priority 5, and every catalog intrinsic") {
    const plx_plugin& d = api();
    CHECK(d.struct_size == sizeof(plx_plugin));
    CHECK(d.abi_version == PLX_ABI_VERSION);
    CHECK(std::string(d.name) == "interp");
    CHECK(std::string(d.version) == "1.0.0");
    CHECK(std::string(d.vendor) == "plexus");
    CHECK(d.priority == 5);
    CHECK(d.execution_model == PLX_EXEC_CUSTOM);
    REQUIRE(d.num_languages == 2);
    CHECK(d.languages[0] == PLX_LANG_PLEXUS_IR2_JSON);
    CHECK(d.languages[1] == PLX_LANG_PLEXUS_IR_JSON);
    // doctest cannot print function pointers, so compare booleans.
    const bool has_launch = d.launch, has_launch_host = d.launch_host,
               has_host_ptr = d.buffer_host_ptr;
    CHECK(has_launch);
    CHECK_FALSE(has_launch_host);
    CHECK_FALSE(has_host_ptr);

    std::set<std::string> table;
    for (uint32_t i = 0; i < d.num_intrinsics; ++i) {
        CHECK(d.intrinsics[i].spelling == nullptr);
        CHECK(d.intrinsics[i].host_fn == nullptr);
        table.insert(d.intrinsics[i].name);
    }
    std::set<std::string> catalog;
    for (auto& info : plexus::intrinsic_catalog())
        catalog.insert(info.name);
    CHECK(table == catalog);
    CHECK(table.size() == d.num_intrinsics);
}

TEST_CASE("device: one CPU device with the documented limits") {
    uint32_t count = 0;
    REQUIRE(api().device_count(&count) == PLX_OK);
    CHECK(count == 1);
    plx_device dev = nullptr;
    CHECK(api().device_get(1, &dev) == PLX_ERROR_INVALID_ARGUMENT);
    plx_device_info info{};
    info.struct_size = sizeof info;
    REQUIRE(api().device_info(Plugin::get().device, &info) == PLX_OK);
    CHECK(info.type == PLX_DEVICE_TYPE_CPU);
    CHECK(std::string(info.name) == "plexus reference interpreter");
    CHECK(info.compute_units == 1);
    CHECK(info.max_work_group_size == 1024);
    CHECK(info.local_memory_bytes == 64 * 1024);
    CHECK(info.fp64 == 1);
    CHECK(info.memory_bytes > 0);
    // A host with an older, shorter struct gets only what fits.
    plx_device_info small{};
    small.struct_size = offsetof(plx_device_info, name);
    small.compute_units = 77;
    REQUIRE(api().device_info(Plugin::get().device, &small) == PLX_OK);
    CHECK(small.type == PLX_DEVICE_TYPE_CPU);
    CHECK(small.compute_units == 77);
}

TEST_CASE("buffers: bounds-checked write, read, copy and fill") {
    plx_queue q = Plugin::get().queue;
    Buffer b(std::vector<uint32_t>{1, 2, 3, 4});
    uint32_t x = 0;
    CHECK(api().buffer_write(q, b.handle(), 16, &x, 4) == PLX_ERROR_INVALID_ARGUMENT);
    CHECK(contains(last_error(), "outside the buffer of 16 bytes"));
    CHECK(api().buffer_read(q, b.handle(), 13, &x, 4) == PLX_ERROR_INVALID_ARGUMENT);
    CHECK(api().buffer_read(q, b.handle(), SIZE_MAX, &x, 4) == PLX_ERROR_INVALID_ARGUMENT);
    REQUIRE(api().buffer_read(q, b.handle(), 8, &x, 4) == PLX_OK);
    CHECK(x == 3);

    const uint16_t pattern = 0xabcd;
    CHECK(api().buffer_fill(q, b.handle(), 0, &pattern, 3, 6) == PLX_ERROR_INVALID_ARGUMENT);
    CHECK(api().buffer_fill(q, b.handle(), 0, &pattern, 2, 5) == PLX_ERROR_INVALID_ARGUMENT);
    REQUIRE(api().buffer_fill(q, b.handle(), 4, &pattern, 2, 4) == PLX_OK);
    CHECK(b.read<uint32_t>() == std::vector<uint32_t>{1, 0xabcdabcd, 3, 4});

    Buffer c(std::vector<uint32_t>{0, 0, 0});
    CHECK(api().buffer_copy(q, c.handle(), 4, b.handle(), 4, 12) == PLX_ERROR_INVALID_ARGUMENT);
    REQUIRE(api().buffer_copy(q, c.handle(), 4, b.handle(), 8, 8) == PLX_OK);
    CHECK(c.read<uint32_t>() == std::vector<uint32_t>{0, 3, 4});
    // Overlapping copy within one buffer.
    REQUIRE(api().buffer_copy(q, b.handle(), 4, b.handle(), 0, 12) == PLX_OK);
    CHECK(b.read<uint32_t>() == std::vector<uint32_t>{1, 1, 0xabcdabcd, 3});

    plx_buffer none = nullptr;
    CHECK(api().buffer_alloc(Plugin::get().device, 0, &none) == PLX_ERROR_INVALID_ARGUMENT);
    api().buffer_free(nullptr);
}

TEST_CASE("events: profiling only on a profiling queue") {
    plx_queue plain = nullptr;
    REQUIRE(api().queue_create(Plugin::get().device, 0, &plain) == PLX_OK);
    Module m(vector_add_kernel());
    REQUIRE(m.status() == PLX_OK);
    Buffer a(std::vector<float>(4, 1.f)), c(4 * sizeof(float));
    plx_launch_dims d{};
    d.struct_size = sizeof d;
    d.dims = 1;
    d.global_size[0] = 4;
    d.local_size[0] = 4;
    const int32_t n = 4;
    plx_arg args[4] = {};
    for (int i = 0; i < 3; ++i) {
        args[i].struct_size = sizeof(plx_arg);
        args[i].kind = PLX_ARG_BUFFER;
        args[i].buffer = i == 2 ? c.handle() : a.handle();
    }
    args[3].struct_size = sizeof(plx_arg);
    args[3].kind = PLX_ARG_SCALAR;
    args[3].value = &n;
    args[3].size = sizeof n;
    plx_event ev = nullptr;
    REQUIRE(api().launch(plain, m.kernel(), &d, args, 4, &ev) == PLX_OK);
    CHECK(api().event_wait(ev) == PLX_OK);
    uint64_t s = 0, e = 0;
    CHECK(api().event_profile(ev, &s, &e) == PLX_ERROR_UNSUPPORTED);
    api().event_release(ev);
    CHECK(api().queue_sync(plain) == PLX_OK);
    api().queue_destroy(plain);
    CHECK(c.read<float>() == std::vector<float>(4, 2.f));
}

} // namespace interp_test
