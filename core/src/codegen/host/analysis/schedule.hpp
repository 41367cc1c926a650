// The order of a block's straight-line statements for a CPU's vector registers
// (schedule.cpp), an IR-to-IR rewrite run before the layout analysis.
#pragma once

#include "plexus/ir.hpp"

namespace plexus::codegen::host {

// The kernel with each run of Lets and Assigns (no store, atomic or control flow between
// them) that computes more than B values read after it reordered so that the values are
// computed in blocks of B, each from start to finish before the next, a block being outputs
// that share inputs; B is half the target's `vector_registers` (with 32, matmul's 8 x 8
// micro-tile in p, i, j order becomes four 4 x 4 blocks; with 16, eight 2 x 4 blocks).
// The same statements in an order their dependences allow: the same results, bit for bit.
// A CPU runs W work-items as one vector per value; written in p, i, j order all 64
// accumulators would be live at once, twice AVX-512's 32 registers.
// Regions run per work-item (per_item_region, for chunks of `lanes`) keep their order: there
// SLP makes vectors of a work-item's values (8 accumulators of matmul's 8 x 8 micro-tile are
// one vector) and blocks of outputs would split those vectors.
ir::Kernel schedule_by_output(const ir::Kernel& kernel, unsigned vector_registers, unsigned lanes,
                              unsigned full_rate_lanes = 0);

} // namespace plexus::codegen::host
