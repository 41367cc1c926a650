// The entry point of the lowering (IR -> LLVM IR) for a work-group function, built only with
// LLVM: lower(), and the names the JIT finds the function and its attribute by.
#pragma once

#include "codegen/host/analysis/layout.hpp"
#include "codegen/host/lower/host_target.hpp"
#include "plexus/codegen.hpp"

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <memory>
#include <string>

namespace plexus::codegen::host {

// The name of the work-group function of a kernel; the validator keeps user names off plx_.
inline std::string function_name(const ir::Kernel& k) {
    return "plx_wg_" + k.name;
}

// The attribute of a work-group function whose lock-step lane loops hold vector values (a
// float3 position): the JIT splits each vector operation into one per lane before
// LoopVectorize, which vectorizes scalar code only (jit.cpp, SplitVectors).
inline constexpr const char* split_vectors_attribute = "plexus-split-vectors";

// Builds the unoptimized module holding `void plx_wg_NAME(const plx_workgroup_ctx*, void*)`.
// Throws InvalidKernel for a native block it cannot compile, Internal for an inconsistency.
std::unique_ptr<llvm::Module> lower(const ir::Kernel& kernel, const Options& options,
                                    const Layout& layout, const HostTarget& target,
                                    llvm::LLVMContext& context);

} // namespace plexus::codegen::host
