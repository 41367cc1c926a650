// Runs the OpenCL plugin tests against the built plugin, or skips (exit 77) when this machine
// has no OpenCL device.
#define DOCTEST_CONFIG_IMPLEMENT
#include "fixture.hpp"

#include <cstdio>
#include <memory>

namespace ocltest {
namespace {
std::unique_ptr<Host> g_host;
plx_device g_device = nullptr;
} // namespace

Host& host() {
    return *g_host;
}
plx_device device() {
    return g_device;
}
plx_device_info info() {
    plx_device_info i{};
    i.struct_size = sizeof i;
    OCL_REQUIRE_OK(P().device_info(g_device, &i));
    return i;
}

} // namespace ocltest

int main(int argc, char** argv) {
    using namespace ocltest;
    g_host = std::make_unique<Host>(PLEXUS_OPENCL_PLUGIN);
    if (!g_host->load_error.empty()) {
        std::fprintf(stderr, "cannot load the plugin: %s\n", g_host->load_error.c_str());
        return 1;
    }
    if (g_host->init_status == PLX_ERROR_NO_DRIVER) {
        std::printf("SKIP: no OpenCL ICD loader: %s\n", g_host->init_error.c_str());
        return 77;
    }
    if (g_host->init_status != PLX_OK) {
        std::fprintf(stderr, "plugin init failed (%d): %s\n", g_host->init_status,
                     g_host->init_error.c_str());
        return 1;
    }
    uint32_t count = 0;
    if (g_host->plugin.device_count(&count) != PLX_OK) return 1;
    if (count == 0) {
        std::printf("SKIP: no OpenCL device found: %s\n", g_host->error().c_str());
        return 77;
    }
    g_host->plugin.device_get(0, &g_device);
    plx_device_info i{};
    i.struct_size = sizeof i;
    g_host->plugin.device_info(g_device, &i);
    std::printf("testing on OpenCL device '%s' (platform '%s', %s)\n", i.name, i.platform, i.arch);

    doctest::Context context;
    context.applyCommandLine(argc, argv);
    const int result = context.run();
    g_host.reset();
    return result;
}
