// Runs in its own process because the plugin opens the ICD loader once per process:
//   missing-library: PLEXUS_OPENCL_LIBRARY names a library that does not exist -> NO_DRIVER;
//   no-platform:     the real loader with an empty OCL_ICD_VENDORS -> init OK, 0 devices.
#define DOCTEST_CONFIG_IMPLEMENT
#include "host.hpp"

#include <doctest/doctest.h>

#include <cstdlib>
#include <cstring>
#include <string>

namespace {
std::string g_mode;
std::string g_empty_dir;

bool contains(const std::string& text, const char* needle) {
    return text.find(needle) != std::string::npos;
}
} // namespace

TEST_CASE("the plugin reports a missing ICD loader or an empty one") {
    ocltest::Host host(PLEXUS_OPENCL_PLUGIN);
    REQUIRE(host.load_error.empty());
    if (g_mode == "missing-library") {
        CHECK(host.init_status == PLX_ERROR_NO_DRIVER);
        INFO(host.init_error);
        CHECK(contains(host.init_error, "libplexus-no-such-opencl.so.1"));
        CHECK(contains(host.init_error, "PLEXUS_OPENCL_LIBRARY"));
        CHECK(contains(host.init_error, "cannot open shared object file")); // the dlerror text
        // The descriptor is filled even though init failed.
        REQUIRE(host.plugin.name != nullptr);
        CHECK(std::strcmp(host.plugin.name, "opencl") == 0);
        CHECK(host.count_log("libplexus-no-such-opencl.so.1") >= 1);
    } else {
        REQUIRE(host.init_status == PLX_OK);
        uint32_t count = 99;
        REQUIRE(host.plugin.device_count(&count) == PLX_OK);
        CHECK(count == 0);
        const std::string why = host.error();
        INFO(why);
        CHECK(contains(why, "clGetPlatformIDs"));
        CHECK(contains(why, "CL_PLATFORM_NOT_FOUND_KHR (-1001)"));
        CHECK(contains(why, "no OpenCL platform is installed"));
        plx_device d = nullptr;
        CHECK(host.plugin.device_get(0, &d) == PLX_ERROR_INVALID_ARGUMENT);
    }
}

int main(int argc, char** argv) {
    if (argc < 2 || (std::strcmp(argv[1], "missing-library") != 0 &&
                     std::strcmp(argv[1], "no-platform") != 0)) {
        std::fprintf(stderr, "usage: %s missing-library|no-platform [doctest options]\n", argv[0]);
        return 2;
    }
    g_mode = argv[1];
    if (g_mode == "missing-library") {
        setenv("PLEXUS_OPENCL_LIBRARY", "libplexus-no-such-opencl.so.1", 1);
    } else {
        // The ocl-icd and Khronos loaders read vendor ICDs from OCL_ICD_VENDORS when set.
        char dir[] = "/tmp/plexus-ocl-empty-XXXXXX";
        if (mkdtemp(dir) == nullptr) return 1;
        g_empty_dir = dir;
        setenv("OCL_ICD_VENDORS", dir, 1);
        unsetenv("PLEXUS_OPENCL_LIBRARY");
    }
    doctest::Context context;
    context.applyCommandLine(argc - 1, argv + 1);
    const int result = context.run();
    if (!g_empty_dir.empty()) rmdir(g_empty_dir.c_str());
    return result;
}
