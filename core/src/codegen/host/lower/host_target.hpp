// What the lowering and the JIT know of the CPU the host code is built for: its triple, CPU,
// features and data layout, and the vector widths the work-item loops are shaped for.
#pragma once

#include <llvm/IR/DataLayout.h>

#include <string>

namespace plexus::codegen::host {

struct HostTarget {
    std::string triple;
    std::string cpu;
    std::string features;
    llvm::DataLayout data_layout;
    bool f16c = false;        // the CPU converts f16 itself (vcvtps2ph, vcvtph2ps)
    unsigned vector_bits = 0; // the widest vector registers (prefer-vector-width); 0: LLVM's choice
    // W: the work-items of a chunk, one 32-bit lane each (0 where LLVM chooses the width).
    unsigned lanes() const { return vector_bits / 32; }
    // The widest vectors the CPU computes at full rate: vector_bits, but 256 on Zen 4, whose
    // 512-bit operations each take two passes through 256-bit units (per_item_region).
    unsigned full_rate_bits = 0;
    unsigned full_rate_lanes() const { return full_rate_bits / 32; }
    unsigned vector_registers = 16; // how many: 32 with AVX-512 and on AArch64, else 16
    bool libmvec = false; // glibc's vector math library is loaded: vector exp, log, sin, ...
};

} // namespace plexus::codegen::host
