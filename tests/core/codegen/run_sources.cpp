// The source each run test compiles: the generator's output for the test kernel of that name,
// or, built with PLEXUS_RUN_GOLDEN_DIR (a copy of the tests that needs no libplexus, for a
// machine with a GPU), the golden file, which codegen_golden holds equal to that output.
#include "run_host.hpp"

#include <filesystem>
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

std::vector<KernelNeeds> test_kernels() {
    std::vector<KernelNeeds> out;
#ifdef PLEXUS_RUN_GOLDEN_DIR
    // Every golden file of the run's language; a device of the CUDA C targets has it all.
    for (auto& entry : std::filesystem::directory_iterator(PLEXUS_RUN_GOLDEN_DIR))
        if (entry.path().extension() == (run_on_cuda ? ".cu" : ".cl"))
            out.push_back({entry.path().stem().string()});
#else
    for (auto& tk : all_kernels())
        out.push_back({tk.kernel.name, tk.fp64, tk.int64_atomics});
#endif
    return out;
}

} // namespace codegen_test
