// What the passes over the optimized module (streaming.cpp, widen.cpp) call a buffer.
#pragma once

#include <llvm/Analysis/ValueTracking.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/Instructions.h>

namespace plexus::codegen::host {

// The first element of a buffer parameter: a pointer the work-group function loads from its
// HostArgs table, which it loads from its `user` argument (work_group.cpp, bind_params).
inline bool is_buffer(const llvm::Value* base, const llvm::Function& f) {
    auto* elements = llvm::dyn_cast<llvm::LoadInst>(base);
    if (!elements) return false;
    auto* table =
        llvm::dyn_cast<llvm::LoadInst>(llvm::getUnderlyingObject(elements->getPointerOperand()));
    return table && table->getPointerOperand() == f.getArg(1);
}

} // namespace plexus::codegen::host
