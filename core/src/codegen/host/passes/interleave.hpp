// A pass over the optimized module: the loops that run one work-item at a time get their
// floating-point chains interleaved (interleave.cpp says why and how).
#pragma once

#include <llvm/IR/Metadata.h>
#include <llvm/IR/PassManager.h>

namespace plexus::codegen::host {

// The loop hint (an operand of llvm.loop) that marks a loop over work-items run one at a time.
llvm::MDNode* item_loop_hint(llvm::LLVMContext& context);

// Reorders each block of a marked loop: the same computation, bit for bit, in an order where
// the chains of floating-point arithmetic advance level by level and every other instruction
// sits just before its first user.
struct InterleaveChains : llvm::PassInfoMixin<InterleaveChains> {
    llvm::PreservedAnalyses run(llvm::Function& f, llvm::FunctionAnalysisManager& fam);
};

} // namespace plexus::codegen::host
