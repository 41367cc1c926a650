// A pass over the optimized module: each work-group function whose loops write buffers as
// contiguous runs of vectors gets a twin that writes them with non-temporal (streaming)
// stores (streaming.cpp says when the runtime calls it).
#pragma once

#include <llvm/IR/PassManager.h>

#include <string>

namespace plexus::codegen::host {

// The name of the streaming twin of a work-group function.
inline std::string streaming_name(const std::string& function) {
    return function + ".stream";
}

// x86-64 only (the twin ends in sfence): adds plx_wg_NAME.stream beside each plx_wg_NAME that
// has at least one such store and no atomic operation or fence.
struct StreamingStores : llvm::PassInfoMixin<StreamingStores> {
    llvm::PreservedAnalyses run(llvm::Module& m, llvm::ModuleAnalysisManager& mam);
};

} // namespace plexus::codegen::host
