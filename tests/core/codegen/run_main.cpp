// main of the run tests: opens the first device of the run's backend (OpenCL or CUDA, see
// run_host.hpp) and runs every test on it. Exits 77 (SKIP) when there is none.
#define DOCTEST_CONFIG_IMPLEMENT
#include "run_host.hpp"

#include <cstdio>

namespace codegen_test {
Device* g_device = nullptr;
}

int main(int argc, char** argv) {
    using codegen_test::run_on_cuda;
    codegen_test::Device device;
    if (!device.open()) {
        std::printf("SKIP: no %s device found (%s)\n", run_on_cuda ? "CUDA" : "OpenCL",
                    device.why.c_str());
        return 77;
    }
    std::printf("%s device: %s; fp64: %s; 64-bit atomics: %s\n", run_on_cuda ? "CUDA" : "OpenCL",
                device.name.c_str(), device.has("fp64") ? "yes" : "no",
                device.has("int64_atomics") ? "yes" : "no");
    codegen_test::g_device = &device;
    doctest::Context ctx(argc, argv);
    return ctx.run();
}
