// The source each run test compiles: the generator's output for the test kernel of that name,
// or, built with PLEXUS_RUN_GOLDEN_DIR (a copy of the tests that needs no libplexus, for a
// machine with a GPU), the golden file, which codegen_golden holds equal to that output.
#include "run_host.hpp"

#include <fstream>
#include <sstream>
#include <stdexcept>

#ifndef PLEXUS_RUN_GOLDEN_DIR
#include "kernels.hpp"

#include "plexus/codegen.hpp"
#endif

namespace codegen_test {

std::string kernel_source(const std::string& name) {
#ifdef PLEXUS_RUN_GOLDEN_DIR
    const std::string path =
        std::string(PLEXUS_RUN_GOLDEN_DIR) + "/" + name + (run_on_cuda ? ".cu" : ".cl");
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot read " + path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
#else
    for (auto& tk : all_kernels())
        if (tk.kernel.name == name) {
            auto gen = run_on_cuda ? plexus::codegen::make_cuda_c_codegen()
                                   : plexus::codegen::make_opencl_codegen();
            return gen->generate(tk.kernel, {run_on_cuda ? "cuda" : "opencl", {}, ""});
        }
    throw std::runtime_error("no test kernel named " + name);
#endif
}

} // namespace codegen_test
