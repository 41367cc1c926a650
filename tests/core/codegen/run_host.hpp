// The harness of the run tests: the same tests run the generated OpenCL C on the first OpenCL
// device (codegen_opencl_run) and the generated CUDA C on the first CUDA device
// (codegen_cuda_run); each backend's file gives Device, Program, Buffer and launch.
#pragma once

#include <doctest/doctest.h>

#include <string>
#include <vector>

namespace codegen_test {

#ifdef PLEXUS_RUN_CUDA
inline constexpr bool run_on_cuda = true;
#else
inline constexpr bool run_on_cuda = false;
#endif

// The generated source of the test kernel `name` in the language of the run, and every test
// kernel with what it needs of the device (run_sources.cpp).
std::string kernel_source(const std::string& name);
struct KernelNeeds {
    std::string name;
    bool fp64 = false, int64_atomics = false;
};
std::vector<KernelNeeds> test_kernels();

// Counts elements outside tolerance, reporting the first few; every element is checked.
struct Mismatches {
    int count = 0;
    template <class A, class B> void add(size_t i, const A& got, const B& want, const char* what) {
        if (++count <= 5)
            MESSAGE(std::string(what) << "[" << i << "]: got " << got << ", want " << want);
    }
};

} // namespace codegen_test

#ifdef PLEXUS_RUN_CUDA
#include "cuda_host.hpp"
#else
#include "opencl_host.hpp"
#endif
