// The kernels the codegen suite generates, compiles and runs, built with the IR's make()
// factories; each is described beside its builder in kernels.cpp.
#pragma once

#include "plexus/ir.hpp"

#include <string>
#include <vector>

namespace codegen_test {

struct TestKernel {
    plexus::ir::Kernel kernel;
    bool fp64 = false;          // needs cl_khr_fp64
    bool int64_atomics = false; // needs cl_khr_int64_base_atomics and _extended_atomics
};

plexus::ir::Kernel vector_add();
plexus::ir::Kernel reduce_sum();   // one group of 256 sums its part into out[0]
plexus::ir::Kernel matmul_tiled(); // 16x16 tiles, local size (16, 16)
plexus::ir::Kernel histogram();
plexus::ir::Kernel math_f32();
plexus::ir::Kernel math_f64();
plexus::ir::Kernel int_ops();   // o: 8 i32 per element, ol: 2 i64 per element
plexus::ir::Kernel atomics32(); // f32 atomics in both spaces, a select with an atomic arm
plexus::ir::Kernel atomics64();
plexus::ir::Kernel control(); // for / while / break / continue / else-if / native / fence

// Every kernel above, in this order.
std::vector<TestKernel> all_kernels();

constexpr int reduce_group = 256;
constexpr int matmul_tile = 16;

} // namespace codegen_test
