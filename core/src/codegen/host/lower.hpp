// IR -> LLVM IR for a work-group function (built only with LLVM).
#pragma once

#include "codegen/host/host.hpp"
#include "plexus/codegen.hpp"

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <memory>
#include <string>

namespace plexus::codegen::host {

struct Target {
    std::string triple;
    std::string cpu;
    std::string features;
    llvm::DataLayout data_layout;
    bool f16c = false; // the CPU converts f16 itself (vcvtps2ph, vcvtph2ps)
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

// The name of the work-group function of a kernel; the validator keeps user names off plx_.
inline std::string function_name(const ir::Kernel& k) { return "plx_wg_" + k.name; }

// The attribute of a work-group function whose lock-step lane loops hold vector values (a
// float3 position): the JIT splits each vector operation into one per lane before
// LoopVectorize, which vectorizes scalar code only (jit.cpp, SplitVectors).
inline constexpr const char* split_vectors_attribute = "plexus-split-vectors";

// Builds the unoptimized module holding `void plx_wg_NAME(const plx_workgroup_ctx*, void*)`.
// Throws InvalidKernel for a native block it cannot compile, Internal for an inconsistency.
std::unique_ptr<llvm::Module> lower(const ir::Kernel& kernel, const Options& options,
                                    const Layout& layout, const Target& target,
                                    llvm::LLVMContext& context);

} // namespace plexus::codegen::host
