// Kernels of the IR's newer types (small integers, f16 / bf16, vectors, records, variants,
// private arrays) in the kernel language: the host tests run them against references, the PTX
// tests check their PTX and assemble it. Each states what it computes per element.
#pragma once

#include "plexus/kernel.hpp"

#include <string>
#include <vector>

namespace typek {

namespace px = plexus;
namespace ir = plexus::ir;

struct Particle {
    px::Vec<float, 3> pos, vel;
    float mass;
    px::bf16 charge;
};
PLEXUS_RECORD(Particle, pos, vel, mass, charge);

// Fields of every size, a nested record and padding: offsets 0, 2, 16, 64, size 80.
struct Cell {
    int8_t flag;
    px::half h;
    Particle p;
    uint16_t count;
};
PLEXUS_RECORD(Cell, flag, h, p, count);

// Payloads at offset 16 (Particle's alignment), 64 bytes in all.
using Shape = px::Variant<"Shape", px::Case<"none">, px::Case<"circle", float>,
                          px::Case<"rect", px::Vec<float, 2>>, px::Case<"blob", Particle>>;

// T = i8, u8, i16 or u16; per i < n: o[8i..8i+7] = a+b, a*b, a/b, a%b, a<<b, a>>b, -a, max(a,b);
// w[2i] = i32(a) + i32(b), w[2i+1] = i32(T(big[i])) (wrapping); f[2i] = f32(a), f[2i+1] = a
// from big[i] as f32 (saturating).
const ir::Kernel& small_ints(ir::Scalar t);
// T = f16 or bf16; per i < n: o[8i..8i+7] = a+b, a-b, a*b, a/b, min, max, -a, a*s (s a scalar
// parameter of type T).
const ir::Kernel& half_arith(ir::Scalar t);
// T = f16 or bf16; per i < n: o[4i..4i+3] = T(f), T(d), T(n32), T(n64); wide[2i] = f32(h),
// wide[2i+1] = f64(h); whole[i] = i32(h); other[i] = h as the other 16-bit float.
const ir::Kernel& half_convert(ir::Scalar t);
// c[i] = a[i] + b[i] on Vec<float, 4>, for i < n.
const ir::Kernel& vector_add4();
// Lane-wise operations, swizzles, broadcasts, constructors, lane writes and vector casts on
// f32x3, i32x4, u8x8 and f16x8 (see type_kernels.cpp for the list, in output order).
const ir::Kernel& vector_ops();
// Per i < n: o[3i..3i+2] = a+b, a*b, bf16(f32(a) / 3) on bf16x3 (6 bytes in 8).
const ir::Kernel& bf16_vectors();
// Records whole and by path: in a variable, a buffer, shared memory and a private array that
// lives across a barrier (type_kernels.cpp says what each output holds).
const ir::Kernel& records();
// out[i] = parts[i].mass + parts[i].vel.y: two fields of a buffer element, loaded alone.
const ir::Kernel& record_fields();
// Variants matched from a buffer and from a variable, made, stored with a known and an unknown
// case (through a private array), and a match with break and continue inside a loop.
const ir::Kernel& variants();
// A match on a uniform variant as group control: a barrier inside a case, a payload that the
// case's work-items assign, and a break inside a match inside a loop with barriers.
const ir::Kernel& variant_group();
// Private arrays: one live across a barrier (a copy per work-item), one within one region.
const ir::Kernel& private_barrier();
// Vectors in a loop whose trip count differs per work-item (a region run in lock step on the
// host), some of them living across barriers (type_kernels.cpp says what it computes).
const ir::Kernel& vectors_lockstep();

struct Named {
    std::string name;
    const ir::Kernel* kernel;
};
// Every kernel above, in a fixed order.
std::vector<Named> all();

} // namespace typek
