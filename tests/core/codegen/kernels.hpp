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
plexus::ir::Kernel atomics_float(); // f64 add, f32 / f64 min / max in both spaces (fp64, int64)
plexus::ir::Kernel control();       // for / while / break / continue / else-if / native / fence

// The new types (kernels_types.cpp, kernels_aggregates.cpp), described beside their builders.
plexus::ir::Kernel small_ints();  // i8 / u8 / i16 / u16 arithmetic, shifts, casts, literals, params
plexus::ir::Kernel half_ops();    // f16 and bf16 arithmetic, conversions, comparisons, params
plexus::ir::Kernel conversions(); // f32 / f64 to every integer, f64 / i64 to f16 and bf16 (fp64)
plexus::ir::Kernel combinations(); // built, not run: nested variants, odd vectors (fp64)
plexus::ir::Kernel
vectors(); // f32x4, f32x3, i32x4, u8x8, f16x4, i8x4, bf16x8: ops, swizzles, lanes
plexus::ir::Kernel records();  // Particle / Cell records: fields, paths, construct, shared, select
plexus::ir::Kernel variants(); // the Kind variant: match (break / continue inside), make_variant
plexus::ir::Kernel arrays();   // private arrays (i32, f16, f32x4 with lane stores), a shaped tile
plexus::ir::Kernel loops();    // loop unroll hints of each kind, nested, over a private array

// The records and variant of those kernels.
plexus::ir::Type particle_type(); // Particle { f32x3 pos, vel; f32 mass; bf16 charge }: 48 bytes
plexus::ir::Type cell_type();     // Cell { Particle p; u16 id; f16 h; u8 flag }: 64 bytes
plexus::ir::Type pair_type();     // Pair { i32 a; i16 short }: `short` is renamed in C
plexus::ir::Type kind_type();     // Kind: free | charged f16 | anchored f32x3 | boxed Pair

// Every kernel above, in this order.
std::vector<TestKernel> all_kernels();

constexpr int reduce_group = 256;
constexpr int matmul_tile = 16;
// Outputs per element of the kernels above.
constexpr int small_per = 12, half_per = 10, half_f32_per = 4, half_i32_per = 6;
constexpr int records_group = 64, arrays_group = 64, arrays_sorted = 6;

} // namespace codegen_test
