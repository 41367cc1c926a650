// Loading the CUDA plugin without a usable driver: the descriptor, the ABI check, a missing
// libcuda and a fake libcuda that lacks required functions. The driver is opened once per
// process, so meson runs each scenario in its own process (--test-case=...).
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include "plugin_host.hpp"

#include <doctest/doctest.h>

#include <cstddef>
#include <cstring>

using plexus::test::contains;
using plexus::test::PluginHost;

namespace {

#define PLX_CATALOG_CLASSES PLX_CLASS_ALL
const char* const kCatalog[] = {
#define PLX_INTRINSIC(name, signature, convergence, opencl_c, cuda_c, nvvm) #name,
#include <plexus/intrinsics.def>
#undef PLX_INTRINSIC
};

bool system_has_libcuda() {
    void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (h == nullptr) h = dlopen("libcuda.so", RTLD_NOW | RTLD_LOCAL);
    if (h == nullptr) return false;
    dlclose(h);
    return true;
}

} // namespace

TEST_CASE("descriptor, ABI check and the default driver lookup") {
    PluginHost host(PLEXUS_CUDA_PLUGIN_PATH);
    REQUIRE_MESSAGE(host.library != nullptr, host.open_error);
    REQUIRE(bool(host.entry()));

    // A host of another major version is refused before anything is loaded.
    CHECK(host.init(PLX_MAKE_VERSION(PLX_ABI_VERSION_MAJOR + 1, 0)) == PLX_ERROR_ABI_MISMATCH);
    CHECK(contains(host.error(),
                   "ABI 1." + std::to_string(PLX_ABI_VERSION_MINOR) + ", the host 2.0"));
    CHECK(std::strcmp(host.plugin.name, "cuda") == 0);

    // A host with a shorter descriptor gets only the fields it has.
    plx_plugin small;
    std::memset(&small, 0xab, sizeof small);
    small.struct_size = offsetof(plx_plugin, languages);
    CHECK(host.entry()(PLX_MAKE_VERSION(2, 0), &host.api, &small) == PLX_ERROR_ABI_MISMATCH);
    CHECK(small.struct_size == offsetof(plx_plugin, languages));
    CHECK(std::strcmp(small.name, "cuda") == 0);
    const unsigned char* tail =
        reinterpret_cast<const unsigned char*>(&small) + offsetof(plx_plugin, languages);
    for (size_t i = 0; i < sizeof small - offsetof(plx_plugin, languages); ++i)
        REQUIRE(tail[i] == 0xab);

    // A 1.0 host's descriptor ends before the 1.1 functions: they are not written.
    plx_plugin v10;
    std::memset(&v10, 0xab, sizeof v10);
    v10.struct_size = offsetof(plx_plugin, queue_marker);
    host.entry()(PLX_MAKE_VERSION(2, 0), &host.api, &v10);
    CHECK(v10.struct_size == offsetof(plx_plugin, queue_marker));
    CHECK(bool(v10.event_release));
    const unsigned char* v11 =
        reinterpret_cast<const unsigned char*>(&v10) + offsetof(plx_plugin, queue_marker);
    for (size_t i = 0; i < sizeof v10 - offsetof(plx_plugin, queue_marker); ++i)
        REQUIRE(v11[i] == 0xab);

    const plx_status status = host.init();
    const plx_plugin& p = host.plugin;
    CHECK(p.struct_size == sizeof(plx_plugin));
    CHECK(p.abi_version == PLX_ABI_VERSION);
    CHECK(std::strcmp(p.name, "cuda") == 0);
    CHECK(std::strcmp(p.version, "1.0.0") == 0);
    CHECK(std::strcmp(p.vendor, "plexus") == 0);
    CHECK(p.priority == 100);
    CHECK(p.execution_model == PLX_EXEC_JIT);
    REQUIRE(p.num_languages == 4);
    CHECK(p.languages[0] == PLX_LANG_PTX);
    CHECK(p.languages[1] == PLX_LANG_CUDA_C);
    CHECK(p.languages[2] == PLX_LANG_CUDA_BINARY);
    CHECK(p.languages[3] == PLX_LANG_ROUTINE); // last: the core generates the first it can
    REQUIRE(p.num_intrinsics == sizeof kCatalog / sizeof kCatalog[0]);
    for (uint32_t i = 0; i < p.num_intrinsics; ++i) {
        CHECK(std::strcmp(p.intrinsics[i].name, kCatalog[i]) == 0);
        CHECK(p.intrinsics[i].spelling == nullptr); // the catalog's standard spelling
        CHECK(p.intrinsics[i].host_fn == nullptr);
    }
    CHECK(bool(p.launch));
    CHECK_FALSE(bool(p.launch_host));
    CHECK_FALSE(bool(p.buffer_host_ptr));
    CHECK(bool(p.module_get_binary));
    // ABI 1.1: all of them, whatever the driver (a driver lacking what one needs makes it
    // answer PLX_ERROR_UNSUPPORTED).
    CHECK(bool(p.queue_marker));
    CHECK(bool(p.queue_wait_event));
    CHECK(bool(p.buffer_write_async));
    CHECK(bool(p.buffer_read_async));
    CHECK(bool(p.buffer_copy_peer));
    CHECK(bool(p.host_alloc));
    CHECK(bool(p.host_free));
    CHECK(bool(p.buffer_wrap));
    CHECK(bool(p.buffer_native));
    CHECK(bool(p.queue_native));

    if (!system_has_libcuda()) {
        CHECK(status == PLX_ERROR_NO_DRIVER);
        const std::string e = host.error();
        CHECK(e.rfind("libcuda.so.1 not found (", 0) == 0);
        CHECK(contains(e, "): install the NVIDIA driver to use the cuda backend"));
        // Loading is remembered: a second init answers the same without crashing.
        CHECK(host.init() == PLX_ERROR_NO_DRIVER);
        CHECK(host.error() == e);
    } else {
        // With a driver, init succeeds even when it reports no GPU.
        REQUIRE_MESSAGE(status == PLX_OK, host.error());
        uint32_t count = 99;
        CHECK(p.device_count(&count) == PLX_OK);
        CHECK(count < 99);
        plx_device device = nullptr;
        CHECK(p.device_get(count, &device) == PLX_ERROR_INVALID_ARGUMENT);
        CHECK(contains(host.error(), "out of range"));
        p.shutdown();
    }
}

TEST_CASE("a missing driver library named by PLEXUS_CUDA_LIBRARY") {
    const char* forced = std::getenv("PLEXUS_CUDA_LIBRARY");
    REQUIRE_MESSAGE(forced != nullptr, "meson sets PLEXUS_CUDA_LIBRARY for this test");
    PluginHost host(PLEXUS_CUDA_PLUGIN_PATH);
    REQUIRE_MESSAGE(host.library != nullptr, host.open_error);
    CHECK(host.init() == PLX_ERROR_NO_DRIVER);
    const std::string e = host.error();
    CHECK(e.rfind(std::string(forced) + " not found (", 0) == 0);
    CHECK(contains(e, "cannot open shared object file"));
    CHECK(contains(e, "install the NVIDIA driver to use the cuda backend"));
    CHECK(std::strcmp(host.plugin.name, "cuda") == 0);
}

TEST_CASE("a fake driver that exports only cuInit") {
    const char* forced = std::getenv("PLEXUS_CUDA_LIBRARY");
    REQUIRE_MESSAGE(forced != nullptr, "meson sets PLEXUS_CUDA_LIBRARY for this test");
    PluginHost host(PLEXUS_CUDA_PLUGIN_PATH);
    REQUIRE_MESSAGE(host.library != nullptr, host.open_error);
    CHECK(host.init() == PLX_ERROR_NO_DRIVER);
    const std::string e = host.error();
    INFO(e);
    CHECK(contains(e, "fakecuda"));
    CHECK(contains(e, "lacks required driver functions: cuDriverGetVersion, cuDeviceGetCount"));
    // Versioned names: the ABI symbol, not the plain API name.
    CHECK(contains(e, "cuMemAlloc_v2"));
    CHECK(contains(e, "cuDevicePrimaryCtxRelease_v2"));
    CHECK(contains(e, "cuLaunchKernel"));
    CHECK_FALSE(contains(e, "cuInit,"));
    CHECK(contains(e, "too old"));
    CHECK(host.init() == PLX_ERROR_NO_DRIVER);
}
