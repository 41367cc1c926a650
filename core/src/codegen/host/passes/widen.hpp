// A pass over the optimized module: buffer indices that advance by a step in their loop become
// 64-bit inductions (widen.cpp says why that is exact).
#pragma once

#include <llvm/IR/PassManager.h>

namespace plexus::codegen::host {

// In each loop of a work-group function, each sign-extended i32 index that is an affine
// recurrence of the loop, read by an access at that very index which runs on every trip, is
// replaced by a 64-bit recurrence where that access precedes the use.
struct WidenIndices : llvm::PassInfoMixin<WidenIndices> {
    llvm::PreservedAnalyses run(llvm::Function& f, llvm::FunctionAnalysisManager& fam);
};

} // namespace plexus::codegen::host
