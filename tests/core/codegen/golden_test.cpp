// Golden tests: the OpenCL C and CUDA C text of every test kernel equals the checked-in file
// in tests/core/codegen/golden/ (NAME.cl, NAME.cu). After an intended change of the generated
// text, rewrite them with
//     PLEXUS_UPDATE_GOLDEN=1 meson test -C BUILD codegen_golden
// and review the diff of tests/core/codegen/golden/ before committing it.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include "kernels.hpp"

#include "plexus/codegen.hpp"

#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace {

using namespace plexus;

bool update_golden() {
    const char* v = std::getenv("PLEXUS_UPDATE_GOLDEN");
    return v && std::string(v) == "1";
}

void check_golden(const std::string& file, const std::string& text) {
    const std::string path = std::string(PLEXUS_GOLDEN_DIR) + "/" + file;
    if (update_golden()) {
        std::ofstream(path, std::ios::binary) << text;
        MESSAGE("rewrote " << path);
        return;
    }
    std::ifstream in(path, std::ios::binary);
    if (!in)
        FAIL(path << " is missing: run with PLEXUS_UPDATE_GOLDEN=1 to write it, then review it");
    std::stringstream golden;
    golden << in.rdbuf();
    INFO("generated text differs from " << path << " (PLEXUS_UPDATE_GOLDEN=1 rewrites it)\n"
                                        << "---- generated ----\n"
                                        << text);
    CHECK(golden.str() == text);
}

} // namespace

TEST_CASE("generated OpenCL C and CUDA C equal the golden files") {
    auto ocl = codegen::make_opencl_codegen();
    auto cuda = codegen::make_cuda_c_codegen();
    for (auto& tk : codegen_test::all_kernels()) {
        SUBCASE(tk.kernel.name.c_str()) {
            check_golden(tk.kernel.name + ".cl", ocl->generate(tk.kernel, {"opencl", {}, ""}));
            check_golden(tk.kernel.name + ".cu", cuda->generate(tk.kernel, {"cuda", {}, ""}));
        }
    }
}

TEST_CASE("generation is deterministic") {
    for (auto& tk : codegen_test::all_kernels()) {
        auto first = codegen::make_opencl_codegen()->generate(tk.kernel, {"opencl", {}, ""});
        auto gen = codegen::make_opencl_codegen();
        CHECK(gen->generate(tk.kernel, {"opencl", {}, ""}) == first);
        CHECK(gen->generate(tk.kernel, {"opencl", {}, ""}) == first);
        auto cu = codegen::make_cuda_c_codegen();
        CHECK(cu->generate(tk.kernel, {"cuda", {}, ""}) ==
              cu->generate(tk.kernel, {"cuda", {}, ""}));
    }
}
