// Compiles the generated CUDA C of every test kernel with nvcc (-cubin, sm_80 and sm_90), all
// kernels in one file per architecture to keep it fast (each in a namespace of its own, since
// each defines its own helpers), and checks each kernel is in the cubin. Exits 77 (SKIP) when
// nvcc was not found at configure time.
#define DOCTEST_CONFIG_IMPLEMENT
#include "kernels.hpp"
#include "tools.hpp"

#include "plexus/codegen.hpp"

#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace fs = std::filesystem;

using codegen_test::run;
using codegen_test::TempDir;

TEST_CASE("nvcc compiles the generated CUDA C of every test kernel") {
    auto gen = plexus::codegen::make_cuda_c_codegen();
    std::string all;
    auto kernels = codegen_test::all_kernels();
    for (auto& tk : kernels)
        all += "namespace " + tk.kernel.name + "_unit {\n" +
               gen->generate(tk.kernel, {"cuda", {}, ""}) + "}\n";
    TempDir dir;
    const fs::path source = dir.path / "kernels.cu";
    std::ofstream(source) << all;
    for (const char* arch : {"sm_80", "sm_90"}) {
        SUBCASE(arch) {
            const fs::path cubin = dir.path / (std::string(arch) + ".cubin");
            std::string output;
            std::string cmd = std::string("'") + PLEXUS_NVCC + "' -cubin -arch=" + arch + " -o '" +
                              cubin.string() + "' '" + source.string() + "'";
            int status = run(cmd, output);
            INFO(cmd << "\n" << output);
            REQUIRE(status == 0);
            CHECK(output.find("warning") == std::string::npos);
            std::ifstream in(cubin, std::ios::binary);
            std::stringstream bytes;
            bytes << in.rdbuf();
            for (auto& tk : kernels) {
                INFO("kernel " << tk.kernel.name << " is missing from the cubin");
                CHECK(bytes.str().find(tk.kernel.name) != std::string::npos);
            }
        }
    }
}

int main(int argc, char** argv) {
    if (std::string(PLEXUS_NVCC).empty() || access(PLEXUS_NVCC, X_OK) != 0) {
        std::printf("SKIP: nvcc was not found when plexus was configured\n");
        return 77;
    }
    doctest::Context ctx(argc, argv);
    return ctx.run();
}
