// The OpenCL plugin's descriptor, device description, error paths (each with the message it
// must carry), program cache, buffer copy / fill and events.
#include "fixture.hpp"

#include <cstring>
#include <random>

using namespace ocltest;

namespace {

const char* kFill = R"CL(
__kernel void fill(__global int* out, int value, uint n) {
    size_t i = get_global_id(0);
    if (i < n) out[i] = value;
}
)CL";

} // namespace

TEST_CASE("descriptor and device description") {
    const plx_plugin& p = P();
    CHECK(std::strcmp(p.name, "opencl") == 0);
    CHECK(std::strcmp(p.version, "1.0.0") == 0);
    CHECK(p.priority == 90);
    CHECK(p.execution_model == PLX_EXEC_JIT);
    REQUIRE(p.num_languages == 1);
    CHECK(p.languages[0] == PLX_LANG_OPENCL_C);
    // The catalog, every class of it, counted independently of the plugin's table.
    uint32_t catalog = 0;
#define PLX_CATALOG_CLASSES PLX_CLASS_ALL
#define PLX_INTRINSIC(...) ++catalog;
#include <plexus/intrinsics.def>
#undef PLX_INTRINSIC
    CHECK(p.num_intrinsics == catalog);
    bool has_barrier = false;
    for (uint32_t i = 0; i < p.num_intrinsics; ++i) {
        CHECK(p.intrinsics[i].spelling == nullptr);
        if (std::strcmp(p.intrinsics[i].name, "barrier") == 0) has_barrier = true;
    }
    CHECK(has_barrier);

    const plx_device_info i = info();
    CHECK(i.struct_size == sizeof i);
    CHECK(std::strlen(i.name) > 0);
    CHECK(std::strncmp(i.arch, "OpenCL ", 7) == 0);
    CHECK(i.type != PLX_DEVICE_TYPE_UNSET);
    CHECK(i.compute_units > 0);
    CHECK(i.max_work_group_size > 0);
    CHECK(i.max_work_group_dims[0] > 0);
    CHECK(i.subgroup_size >= 1);
    CHECK(i.memory_bytes > 0);
    CHECK(i.max_alloc_bytes > 0);
    CHECK(i.max_alloc_bytes <= i.memory_bytes);
    CHECK(i.local_memory_bytes > 0);

    // An older host's smaller struct gets only the fields that fit.
    plx_device_info small{};
    std::memset(&small, 0x5a, sizeof small);
    small.struct_size = offsetof(plx_device_info, vendor);
    OCL_REQUIRE_OK(p.device_info(device(), &small));
    CHECK(small.struct_size == offsetof(plx_device_info, vendor));
    CHECK(std::strcmp(small.name, i.name) == 0);
    CHECK(static_cast<unsigned char>(small.vendor[0]) == 0x5a);

    plx_device none = nullptr;
    uint32_t count = 0;
    OCL_REQUIRE_OK(p.device_count(&count));
    CHECK(p.device_get(count, &none) == PLX_ERROR_INVALID_ARGUMENT);
    CHECK(contains(host().error(), "out of range"));
}

TEST_CASE("a syntax error gives PLX_ERROR_COMPILE with the build log") {
    const std::string source = "__kernel void broken(__global float* a) { a[0] = 1.0f }\n";
    plx_module m = nullptr;
    CHECK(P().module_load(device(), PLX_LANG_OPENCL_C, source.data(), source.size(), "", &m) ==
          PLX_ERROR_COMPILE);
    CHECK(m == nullptr);
    const std::string log = host().error();
    INFO(log);
    CHECK(contains(log, info().name));
    CHECK(contains(log, "CL_BUILD_PROGRAM_FAILURE"));
    CHECK(contains(log, "error"));
    CHECK(contains(log, "expected ';'"));
    // The failure is not cached: a corrected source builds.
    Module good(kFill);
}

TEST_CASE("module_load refuses other languages and empty source") {
    plx_module m = nullptr;
    CHECK(P().module_load(device(), PLX_LANG_PTX, kFill, std::strlen(kFill), "", &m) ==
          PLX_ERROR_UNSUPPORTED);
    CHECK(contains(host().error(), "OpenCL C"));
    CHECK(P().module_load(device(), PLX_LANG_OPENCL_C, kFill, 0, "", &m) ==
          PLX_ERROR_INVALID_ARGUMENT);
}

TEST_CASE("an unknown kernel name gives PLX_ERROR_NOT_FOUND") {
    Module module(kFill);
    plx_kernel k = nullptr;
    CHECK(P().kernel_get(module.m, "no_such_kernel", &k) == PLX_ERROR_NOT_FOUND);
    const std::string error = host().error();
    CHECK(contains(error, "no_such_kernel"));
    CHECK(contains(error, "fill")); // lists what the module does have
    // The same name twice gives the same handle.
    CHECK(module.kernel("fill") == module.kernel("fill"));
}

TEST_CASE("the program cache builds a (source, options) pair once") {
    // A source no other test uses, so that its first load must build.
    const std::string source =
        std::string(kFill) + "\n__kernel void cache_probe(__global int* p) { p[0] = 12345; }\n";
    const size_t builds = host().count_log("built program");
    const size_t hits = host().count_log("program cache hit");
    {
        Module first(source);
        CHECK(host().count_log("built program") == builds + 1);
        Module second(source);
        CHECK(host().count_log("built program") == builds + 1);
        CHECK(host().count_log("program cache hit") == hits + 1);
        CHECK(first.m != second.m);
        // Both modules run: the shared program serves two sets of kernels.
        Queue queue;
        Buffer out(sizeof(int));
        const plx_arg args[] = {buffer_arg(out.b)};
        const plx_launch_dims d = dims1(1, 1);
        OCL_REQUIRE_OK(P().launch(queue.q, second.kernel("cache_probe"), &d, args, 1, nullptr));
        CHECK(out.read<int>(queue.q, 1)[0] == 12345);
    }
    // Unloading both keeps the program; other options build anew.
    Module third(source);
    CHECK(host().count_log("built program") == builds + 1);
    Module other_options(source, "-cl-fast-relaxed-math");
    CHECK(host().count_log("built program") == builds + 2);
}

TEST_CASE("an allocation beyond max_alloc gives OUT_OF_MEMORY and the plugin keeps working") {
    const plx_device_info i = info();
    plx_buffer b = nullptr;
    CHECK(P().buffer_alloc(device(), static_cast<size_t>(i.max_alloc_bytes) + 1, &b) ==
          PLX_ERROR_OUT_OF_MEMORY);
    CHECK(b == nullptr);
    const std::string error = host().error();
    INFO(error);
    CHECK(contains(error, std::to_string(i.max_alloc_bytes + 1)));
    CHECK(contains(error, std::to_string(i.max_alloc_bytes)));
    CHECK(P().buffer_alloc(device(), 0, &b) == PLX_ERROR_INVALID_ARGUMENT);

    // Still working: a kernel fills a fresh buffer.
    Queue queue;
    Module module(kFill);
    const uint32_t n = 1000;
    const int value = -77;
    Buffer out(n * sizeof(int));
    const plx_arg args[] = {buffer_arg(out.b), scalar_arg(value), scalar_arg(n)};
    const plx_launch_dims d = dims1(n, 64);
    OCL_REQUIRE_OK(P().launch(queue.q, module.kernel("fill"), &d, args, 3, nullptr));
    const auto v = out.read<int>(queue.q, n);
    for (uint32_t k = 0; k < n; ++k)
        REQUIRE(v[k] == value);
}

TEST_CASE("launches beyond the device's limits give OUT_OF_RESOURCES naming the limit") {
    const plx_device_info i = info();
    Queue queue;
    Module module(kFill);
    plx_kernel kernel = module.kernel("fill");
    const uint32_t n = 16;
    const int value = 1;
    Buffer out(n * sizeof(int));
    const plx_arg args[] = {buffer_arg(out.b), scalar_arg(value), scalar_arg(n)};

    plx_launch_dims d = dims1(n, i.max_work_group_dims[0] + 1);
    CHECK(P().launch(queue.q, kernel, &d, args, 3, nullptr) == PLX_ERROR_OUT_OF_RESOURCES);
    CHECK(contains(host().error(), "CL_DEVICE_MAX_WORK_ITEM_SIZES"));

    // Within each dimension's limit, over the group total.
    d = dims1(n, i.max_work_group_dims[0]);
    d.dims = 2;
    d.local_size[1] = 2;
    if (i.max_work_group_dims[1] >= 2 &&
        static_cast<uint64_t>(i.max_work_group_dims[0]) * 2 > i.max_work_group_size) {
        CHECK(P().launch(queue.q, kernel, &d, args, 3, nullptr) == PLX_ERROR_OUT_OF_RESOURCES);
        CHECK(contains(host().error(), "CL_DEVICE_MAX_WORK_GROUP_SIZE"));
    }

    Module reduce(R"CL(
__kernel void uses_local(__global int* out, __local uchar* plx_dynamic_local) {
    plx_dynamic_local[get_local_id(0)] = 1;
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = plx_dynamic_local[0];
})CL");
    const plx_arg one[] = {buffer_arg(out.b)};
    d = dims1(1, 1, static_cast<uint32_t>(i.local_memory_bytes) + 1);
    CHECK(P().launch(queue.q, reduce.kernel("uses_local"), &d, one, 1, nullptr) ==
          PLX_ERROR_OUT_OF_RESOURCES);
    CHECK(contains(host().error(), "CL_DEVICE_LOCAL_MEM_SIZE"));

    // Nothing was left broken: a valid launch still runs.
    d = dims1(n, 4);
    OCL_REQUIRE_OK(P().launch(queue.q, kernel, &d, args, 3, nullptr));
    for (int x : out.read<int>(queue.q, n))
        REQUIRE(x == value);
}

TEST_CASE("bad launch arguments are refused with a message naming the argument") {
    Queue queue;
    Module module(kFill);
    plx_kernel kernel = module.kernel("fill");
    const uint32_t n = 8;
    Buffer out(n * sizeof(int));
    const plx_launch_dims d = dims1(n, 8);

    const int value = 3;
    const plx_arg too_few[] = {buffer_arg(out.b), scalar_arg(value)};
    CHECK(P().launch(queue.q, kernel, &d, too_few, 2, nullptr) == PLX_ERROR_INVALID_ARGUMENT);
    CHECK(contains(host().error(), "takes 3 argument(s), 2 given"));

    const uint64_t wide = 3; // the kernel's `int value` is 4 bytes
    const plx_arg wrong_size[] = {buffer_arg(out.b), scalar_arg(wide), scalar_arg(n)};
    CHECK(P().launch(queue.q, kernel, &d, wrong_size, 3, nullptr) == PLX_ERROR_INVALID_ARGUMENT);
    CHECK(contains(host().error(), "argument 1"));

    plx_launch_dims bad = d;
    bad.dims = 4;
    const plx_arg ok[] = {buffer_arg(out.b), scalar_arg(value), scalar_arg(n)};
    CHECK(P().launch(queue.q, kernel, &bad, ok, 3, nullptr) == PLX_ERROR_INVALID_ARGUMENT);
    bad = d;
    bad.local_size[0] = 0;
    CHECK(P().launch(queue.q, kernel, &bad, ok, 3, nullptr) == PLX_ERROR_INVALID_ARGUMENT);
}

TEST_CASE("buffer bounds are checked") {
    Queue queue;
    Buffer a(64), b(64);
    std::vector<unsigned char> host_bytes(128);
    CHECK(P().buffer_read(queue.q, a.b, 0, host_bytes.data(), 65) == PLX_ERROR_INVALID_ARGUMENT);
    CHECK(contains(host().error(), "outside the buffer of 64 bytes"));
    CHECK(P().buffer_write(queue.q, a.b, 60, host_bytes.data(), 8) == PLX_ERROR_INVALID_ARGUMENT);
    CHECK(P().buffer_read(queue.q, a.b, SIZE_MAX, host_bytes.data(), 2) ==
          PLX_ERROR_INVALID_ARGUMENT);
    CHECK(P().buffer_copy(queue.q, a.b, 32, b.b, 0, 33) == PLX_ERROR_INVALID_ARGUMENT);
    CHECK(P().buffer_copy(queue.q, a.b, 8, a.b, 0, 16) == PLX_ERROR_INVALID_ARGUMENT);
    CHECK(contains(host().error(), "overlap"));
    const uint32_t pattern = 1;
    CHECK(P().buffer_fill(queue.q, a.b, 0, &pattern, 3, 12) == PLX_ERROR_INVALID_ARGUMENT);
    CHECK(P().buffer_fill(queue.q, a.b, 0, &pattern, 4, 10) == PLX_ERROR_INVALID_ARGUMENT);
    CHECK(P().buffer_write(queue.q, nullptr, 0, host_bytes.data(), 1) ==
          PLX_ERROR_INVALID_ARGUMENT);
}

TEST_CASE("fill and copy, aligned and unaligned, checked byte by byte") {
    Queue queue;
    const size_t bytes = 4099;
    std::mt19937 rng(5);
    std::vector<unsigned char> init(bytes);
    for (auto& x : init)
        x = static_cast<unsigned char>(rng());
    Buffer a(bytes), b(bytes);
    a.write(queue.q, init);
    b.write(queue.q, init);
    std::vector<unsigned char> ref = init;

    const uint32_t p4 = 0xdeadbeef;
    OCL_REQUIRE_OK(P().buffer_fill(queue.q, a.b, 8, &p4, 4, 400)); // aligned: clEnqueueFillBuffer
    for (size_t i = 0; i < 400; ++i)
        ref[8 + i] = reinterpret_cast<const unsigned char*>(&p4)[i % 4];
    const uint16_t p2 = 0x1234;
    OCL_REQUIRE_OK(P().buffer_fill(queue.q, a.b, 1001, &p2, 2, 300)); // unaligned offset
    for (size_t i = 0; i < 300; ++i)
        ref[1001 + i] = reinterpret_cast<const unsigned char*>(&p2)[i % 2];
    const uint64_t p8 = 0x0102030405060708ull;
    OCL_REQUIRE_OK(P().buffer_fill(queue.q, a.b, 2000, &p8, 8, 80));
    for (size_t i = 0; i < 80; ++i)
        ref[2000 + i] = reinterpret_cast<const unsigned char*>(&p8)[i % 8];
    CHECK(a.read<unsigned char>(queue.q, bytes) == ref);

    OCL_REQUIRE_OK(P().buffer_copy(queue.q, b.b, 3, a.b, 7, 2500));
    std::vector<unsigned char> ref_b = init;
    std::memcpy(ref_b.data() + 3, ref.data() + 7, 2500);
    CHECK(b.read<unsigned char>(queue.q, bytes) == ref_b);

    // Partial reads at an offset.
    std::vector<unsigned char> part(100);
    OCL_REQUIRE_OK(P().buffer_read(queue.q, b.b, 1000, part.data(), part.size()));
    CHECK(std::memcmp(part.data(), ref_b.data() + 1000, part.size()) == 0);
}

TEST_CASE("events: wait, profiling timestamps, UNSUPPORTED without profiling") {
    Module module(kFill);
    plx_kernel kernel = module.kernel("fill");
    const uint32_t n = 1 << 16;
    const int value = 9;
    Buffer out(n * sizeof(int));
    const plx_arg args[] = {buffer_arg(out.b), scalar_arg(value), scalar_arg(n)};
    const plx_launch_dims d = dims1(n, 64);
    {
        Queue queue(PLX_QUEUE_PROFILING);
        plx_event ev = nullptr;
        OCL_REQUIRE_OK(P().launch(queue.q, kernel, &d, args, 3, &ev));
        REQUIRE(ev != nullptr);
        OCL_REQUIRE_OK(P().event_wait(ev));
        uint64_t start = 0, end = 0;
        OCL_REQUIRE_OK(P().event_profile(ev, &start, &end));
        CHECK(start > 0);
        CHECK(end >= start);
        P().event_release(ev);
        OCL_REQUIRE_OK(P().queue_sync(queue.q));
    }
    {
        Queue queue;
        plx_event ev = nullptr;
        OCL_REQUIRE_OK(P().launch(queue.q, kernel, &d, args, 3, &ev));
        OCL_REQUIRE_OK(P().event_wait(ev));
        uint64_t start = 0, end = 0;
        CHECK(P().event_profile(ev, &start, &end) == PLX_ERROR_UNSUPPORTED);
        CHECK(contains(host().error(), "PLX_QUEUE_PROFILING"));
        P().event_release(ev);
        // An empty launch still yields an event that completes.
        const plx_launch_dims empty = dims1(0, 64);
        OCL_REQUIRE_OK(P().launch(queue.q, kernel, &empty, args, 3, &ev));
        OCL_REQUIRE_OK(P().event_wait(ev));
        P().event_release(ev);
        for (int x : out.read<int>(queue.q, n))
            REQUIRE(x == value);
    }
    P().event_release(nullptr);
    P().buffer_free(nullptr);
    P().queue_destroy(nullptr);
    P().module_unload(nullptr);
}
