// The kernels the PTX tests generate and ptx_dump prints, built with the IR's make() factories.
#pragma once

#include "plexus/ir.hpp"

#include <string>
#include <vector>

namespace ptxtest {

using plexus::ir::Kernel;

Kernel vector_add();    // c[gid] = a[gid] + b[gid] for gid < n
Kernel reduce_sum();    // shared-memory tree per group, barrier in a uniform while, atomic f32 add
Kernel matmul_tiled();  // C = A * B (n x n), two shared 16x16 tiles, barriers in a uniform for
Kernel histogram();     // bins[data[i] % nbins] += 1 with u32 atomics on global memory
Kernel atomics64();     // i64 min/max, u64 add/xor, cmpxchg and xchg, global and shared
Kernel atomics_all();   // every atomic of the catalog, on a buffer or a shared array
Kernel float_atomics(); // f64 add, f32 / f64 min and max, global and shared
Kernel math(plexus::ir::Scalar type); // every precise math intrinsic of the catalog in f32 or f64
Kernel math_each(
    plexus::ir::Scalar type); // out[j*n + i]: the precise math function j of gpu_check.py of in[i]
Kernel fast_math();           // every fast_ intrinsic (f32)
Kernel ilogb();               // ilogb_f32 and ilogb_f64 of in[gid]
Kernel
one_call_f32(const std::string& intrinsic); // out[gid] = intrinsic(in[gid]), a unary f32 intrinsic
Kernel int_ops();      // integer arithmetic, shifts, comparisons, logic, and every cast
Kernel indices_2d();   // every index intrinsic, 2-D and 3-D
Kernel control_flow(); // for with break/continue, while, early return, nested ifs
Kernel native_with_fallback();
Kernel native_without_fallback();

struct Named {
    std::string name;
    Kernel kernel;
};
// Every kernel above that the PTX generator must accept, in a fixed order.
std::vector<Named> all_kernels();

} // namespace ptxtest
