// Native plugin: descriptor, intrinsic table, device info, options and init/shutdown cycles.
#include "plugin_fixture.hpp"

#include <doctest/doctest.h>

#include <sys/utsname.h>
#include <unistd.h>

#include <set>
#include <thread>

using native_test::contains;
using native_test::Plugin;

namespace {

#define PLX_CATALOG_CLASSES PLX_CLASS_ALL
const char* const kCatalog[] = {
#define PLX_INTRINSIC(id, signature, convergence, opencl_c, cuda_c, nvvm) #id,
#include <plexus/intrinsics.def>
#undef PLX_INTRINSIC
};

unsigned default_threads() {
    const unsigned hw = std::thread::hardware_concurrency();
    return hw == 0 ? 1 : hw;
}

} // namespace

TEST_SUITE("native") {

    TEST_CASE("descriptor identifies a Direct plugin and fills every Direct entry") {
        Plugin p;
        REQUIRE_MESSAGE(p.status == PLX_OK, p.error);
        const plx_plugin& d = p.desc;
        CHECK(d.struct_size == sizeof(plx_plugin));
        CHECK(d.abi_version == PLX_ABI_VERSION);
        CHECK(std::string(d.name) == "native");
        CHECK(std::string(d.version) == "1.0.0");
        CHECK(std::string(d.vendor) == "plexus");
        CHECK(d.priority == 50);
        CHECK(d.execution_model == PLX_EXEC_DIRECT);
        // Direct: nothing is compiled by the plugin; its one language is that of library
        // routines (1.4, routines_test.cpp), loaded by name.
        REQUIRE(d.num_languages == 1);
        CHECK(d.languages[0] == PLX_LANG_ROUTINE);
        CHECK_MESSAGE((d.module_load != nullptr), "module_load");
        CHECK_MESSAGE((d.module_unload != nullptr), "module_unload");
        CHECK_MESSAGE((d.module_get_binary == nullptr), "module_get_binary");
        CHECK_MESSAGE((d.kernel_get != nullptr), "kernel_get");
        CHECK_MESSAGE((d.launch != nullptr), "launch");
        CHECK_MESSAGE((d.last_error != nullptr), "last_error");
        CHECK_MESSAGE((d.shutdown != nullptr), "shutdown");
        CHECK_MESSAGE((d.device_count != nullptr), "device_count");
        CHECK_MESSAGE((d.device_get != nullptr), "device_get");
        CHECK_MESSAGE((d.device_info != nullptr), "device_info");
        CHECK_MESSAGE((d.buffer_alloc != nullptr), "buffer_alloc");
        CHECK_MESSAGE((d.buffer_free != nullptr), "buffer_free");
        CHECK_MESSAGE((d.buffer_write != nullptr), "buffer_write");
        CHECK_MESSAGE((d.buffer_read != nullptr), "buffer_read");
        CHECK_MESSAGE((d.buffer_copy != nullptr), "buffer_copy");
        CHECK_MESSAGE((d.buffer_fill != nullptr), "buffer_fill");
        CHECK_MESSAGE((d.buffer_host_ptr != nullptr), "buffer_host_ptr");
        CHECK_MESSAGE((d.queue_create != nullptr), "queue_create");
        CHECK_MESSAGE((d.queue_sync != nullptr), "queue_sync");
        CHECK_MESSAGE((d.queue_destroy != nullptr), "queue_destroy");
        CHECK_MESSAGE((d.launch_host != nullptr), "launch_host");
        CHECK_MESSAGE((d.event_wait != nullptr), "event_wait");
        CHECK_MESSAGE((d.event_profile != nullptr), "event_profile");
        CHECK_MESSAGE((d.event_release != nullptr), "event_release");
        CHECK(d.last_error() != nullptr);
    }

    TEST_CASE("intrinsic table lists the whole catalog, inline, in catalog order") {
        Plugin p;
        REQUIRE_MESSAGE(p.status == PLX_OK, p.error);
        const size_t n = sizeof kCatalog / sizeof kCatalog[0];
        REQUIRE(p.desc.num_intrinsics == n);
        REQUIRE(p.desc.intrinsics != nullptr);
        std::set<std::string> seen;
        for (size_t i = 0; i < n; ++i) {
            const plx_intrinsic& in = p.desc.intrinsics[i];
            CAPTURE(i);
            REQUIRE(in.name != nullptr);
            CHECK(std::string(in.name) == kCatalog[i]);
            CHECK(in.flags == PLX_INTRINSIC_INLINE);
            CHECK(in.host_fn == nullptr);
            CHECK(in.spelling != nullptr);
            seen.insert(in.name);
        }
        CHECK(seen.size() == n);
        CHECK(seen.count("global_id_x") == 1);
        CHECK(seen.count("barrier") == 1);
    }

    TEST_CASE("an older host's smaller descriptor is filled only as far as it reaches") {
        Plugin p; // loads the library; init below runs after its shutdown
        REQUIRE(p.status == PLX_OK);
        p.desc.shutdown();
        p.status = PLX_ERROR_INTERNAL;

        struct {
            plx_plugin desc;
            unsigned char canary[64];
        } old{};
        std::memset(&old, 0xAB, sizeof old);
        const uint32_t size = offsetof(plx_plugin, intrinsics);
        old.desc.struct_size = size;
        native_test::TestHost host("{}");
        REQUIRE(p.init_fn()(PLX_ABI_VERSION, &host.api, &old.desc) == PLX_OK);
        CHECK(old.desc.struct_size == size);
        CHECK(std::string(old.desc.name) == "native");
        CHECK(old.desc.num_languages == 1);
        const auto* bytes = reinterpret_cast<const unsigned char*>(&old.desc);
        for (size_t i = size; i < sizeof old; ++i) {
            CAPTURE(i);
            REQUIRE(bytes[i] == 0xAB);
        }
        // This instance has no shutdown pointer in its descriptor: use the one saved earlier.
        p.desc.shutdown();
    }

    TEST_CASE("a host of another ABI major is refused and the descriptor left alone") {
        Plugin p;
        REQUIRE(p.status == PLX_OK);
        plx_plugin other{};
        std::memset(&other, 0x5A, sizeof other);
        other.struct_size = sizeof other;
        native_test::TestHost host("{}");
        CHECK(p.init_fn()(PLX_MAKE_VERSION(PLX_ABI_VERSION_MAJOR + 1, 0), &host.api, &other) ==
              PLX_ERROR_ABI_MISMATCH);
        CHECK(contains(p.last_error(), "ABI"));
        const auto* bytes = reinterpret_cast<const unsigned char*>(&other);
        for (size_t i = sizeof(uint32_t); i < sizeof other; ++i)
            REQUIRE(bytes[i] == 0x5A);
        // A second init while loaded is refused too.
        CHECK(p.init_fn()(PLX_ABI_VERSION, &host.api, &other) == PLX_ERROR_INVALID_ARGUMENT);
        CHECK(contains(p.last_error(), "already initialized"));
    }

    TEST_CASE("one CPU device with sensible info") {
        Plugin p;
        REQUIRE_MESSAGE(p.status == PLX_OK, p.error);
        uint32_t count = 0;
        REQUIRE(p.desc.device_count(&count) == PLX_OK);
        CHECK(count == 1);
        plx_device dev = nullptr;
        CHECK(p.desc.device_get(1, &dev) == PLX_ERROR_INVALID_ARGUMENT);
        CHECK(contains(p.last_error(), "index 1"));
        REQUIRE(p.desc.device_get(0, &dev) == PLX_OK);
        REQUIRE(dev != nullptr);

        const plx_device_info info = p.info();
        CHECK(info.struct_size == sizeof(plx_device_info));
        CHECK(info.type == PLX_DEVICE_TYPE_CPU);
        CHECK(std::strlen(info.name) > 0);
        CHECK(std::strlen(info.vendor) > 0);
        utsname u{};
        REQUIRE(uname(&u) == 0);
        CHECK(std::string(info.arch).rfind(u.machine, 0) == 0); // "x86_64" or "x86_64-avx2", ...
        CHECK(info.compute_units == default_threads());
        CHECK(info.max_work_group_size == 4096);
        CHECK(info.max_work_group_dims[0] == 4096);
        CHECK(info.max_work_group_dims[1] == 4096);
        CHECK(info.max_work_group_dims[2] == 64);
        CHECK(info.subgroup_size == 1);
        const uint64_t phys = uint64_t(sysconf(_SC_PHYS_PAGES)) * uint64_t(sysconf(_SC_PAGE_SIZE));
        CHECK(info.memory_bytes == phys);
        CHECK(info.max_alloc_bytes == info.memory_bytes);
        CHECK(info.local_memory_bytes == 256 * 1024);
        CHECK(info.fp64 == 1);
        CHECK(info.compute_capability == 0);
    }

    TEST_CASE("device_info writes only the fields of a smaller struct") {
        Plugin p;
        REQUIRE(p.status == PLX_OK);
        struct {
            plx_device_info info;
            unsigned char tail[32];
        } small{};
        std::memset(&small, 0xCD, sizeof small);
        const uint32_t size = offsetof(plx_device_info, compute_units);
        small.info.struct_size = size;
        REQUIRE(p.desc.device_info(p.device(), &small.info) == PLX_OK);
        CHECK(small.info.struct_size == size);
        CHECK(small.info.type == PLX_DEVICE_TYPE_CPU);
        const auto* bytes = reinterpret_cast<const unsigned char*>(&small);
        for (size_t i = size; i < sizeof small; ++i)
            REQUIRE(bytes[i] == 0xCD);

        plx_device_info none{};
        CHECK(p.desc.device_info(p.device(), &none) == PLX_ERROR_INVALID_ARGUMENT);
        CHECK(p.desc.device_info(p.device(), nullptr) == PLX_ERROR_INVALID_ARGUMENT);
        CHECK(p.desc.device_info(nullptr, &small.info) == PLX_ERROR_INVALID_ARGUMENT);
        CHECK(contains(p.last_error(), "device_info"));
    }

    TEST_CASE("the threads option sets the pool size and compute_units") {
        for (uint32_t threads : {1u, 3u, 7u}) {
            CAPTURE(threads);
            Plugin p("{\"threads\": " + std::to_string(threads) + ", \"enabled\": true}");
            REQUIRE_MESSAGE(p.status == PLX_OK, p.error);
            CHECK(p.info().compute_units == threads);
        }
    }

    TEST_CASE("bad options are refused at init with a message that says why") {
        const std::pair<const char*, const char*> cases[] = {
            {"{\"threads\": 0}", "threads"},       {"{\"threads\": -2}", "threads"},
            {"{\"threads\": 2.5}", "threads"},     {"{\"threads\": \"4\"}", "threads"},
            {"{\"threads\": 100000}", "threads"},  {"{\"threads\": null}", "threads"},
            {"{\"threads\": 4", "not valid JSON"}, {"[1, 2]", "JSON object"},
        };
        for (const auto& [options, expected] : cases) {
            CAPTURE(options);
            Plugin p(options);
            CHECK(p.status == PLX_ERROR_INVALID_ARGUMENT);
            CHECK_MESSAGE(contains(p.error, expected), p.error);
            CHECK(contains(p.error, "native: init"));
            // A failed init still names the plugin and offers its message, nothing else.
            REQUIRE(p.desc.name != nullptr);
            CHECK(std::string(p.desc.name) == "native");
            CHECK((p.desc.shutdown == nullptr));
            CHECK((p.desc.launch_host == nullptr));
        }
        // A failed init leaves nothing behind: the next one works.
        Plugin good("{\"threads\": 2}");
        REQUIRE_MESSAGE(good.status == PLX_OK, good.error);
        CHECK(good.info().compute_units == 2);
    }

    TEST_CASE("a host without options or logging gets the defaults") {
        Plugin p;
        REQUIRE(p.status == PLX_OK);
        p.desc.shutdown();
        p.status = PLX_ERROR_INTERNAL;
        plx_host_api bare{};
        bare.struct_size = sizeof bare;
        plx_plugin desc{};
        desc.struct_size = sizeof desc;
        REQUIRE(p.init_fn()(PLX_ABI_VERSION, &bare, &desc) == PLX_OK);
        plx_device dev = nullptr;
        REQUIRE(desc.device_get(0, &dev) == PLX_OK);
        plx_device_info info{};
        info.struct_size = sizeof info;
        REQUIRE(desc.device_info(dev, &info) == PLX_OK);
        CHECK(info.compute_units == default_threads());
        desc.shutdown();
    }

    TEST_CASE("shutdown releases handles the host forgot, and init works again after it") {
        for (int round = 0; round < 3; ++round) {
            Plugin p("{\"threads\": 2}");
            REQUIRE_MESSAGE(p.status == PLX_OK, p.error);
            plx_buffer b = nullptr;
            REQUIRE(p.desc.buffer_alloc(p.device(), 1 << 20, &b) == PLX_OK);
            plx_queue q = p.queue();
            (void)q; // left for shutdown to release
            std::lock_guard lock(p.host().mutex);
            // Logging is optional; when the plugin does log, it goes through the host table.
            for (const auto& [level, msg] : p.host().messages)
                CHECK(contains(msg, "native"));
        }
    }

} // TEST_SUITE
