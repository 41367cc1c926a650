// The PTX generator's internals: the cached NVPTX target machines, libdevice, and the lowering
// of an ir::Kernel to LLVM IR. Private to core/src/codegen/ptx.
#pragma once

#include "plexus/codegen.hpp"

#include <llvm/IR/DataLayout.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/MemoryBuffer.h>

#include <memory>
#include <mutex>
#include <string>

namespace llvm {
class TargetMachine;
}

namespace plexus::codegen::ptx {

inline constexpr const char* nvptx_triple = "nvptx64-nvidia-cuda";

// One NVPTX TargetMachine per architecture, made once per process and kept. A TargetMachine
// caches subtargets without locking, so optimize_and_emit holds the target's mutex.
class PtxTarget {
public:
    // "" picks sm_80. Throws InvalidArgument for an architecture that is not "sm_NN[a]".
    static PtxTarget& get(const std::string& arch);

    const std::string& cpu() const { return cpu_; }           // "sm_90"
    int sm() const;                                           // 90
    const std::string& features() const { return features_; } // "+ptx78"
    llvm::DataLayout data_layout() const;
    // Makes every global but the kernel internal, runs the O3 pipeline (NVVMReflect included,
    // through the target's pass-builder callbacks), turns saturating float-to-integer
    // conversions into one cvt.rzi each, and prints the module as PTX.
    // Adds the time of each step to `phases` when given.
    std::string optimize_and_emit(llvm::Module& module, const std::string& kernel_name,
                                  codegen::Phases* phases = nullptr);

    PtxTarget(std::string cpu, std::string features);
    ~PtxTarget();

private:
    std::string cpu_, features_;
    std::unique_ptr<llvm::TargetMachine> machine_;
    std::mutex mutex_;
};

// NVIDIA's libdevice (libdevice.10.bc), read once per process. `bitcode` is null when it was
// not found; `error` is set when PLEXUS_LIBDEVICE names a file that cannot be used.
struct Libdevice {
    std::unique_ptr<llvm::MemoryBuffer> bitcode;
    std::string path; // the file read, or where it was looked for
    std::string error;
};
const Libdevice& libdevice();
// Links the libdevice functions that `module` calls into it (lazily loaded into the module's
// own context, so every generate() keeps its LLVMContext to itself).
void link_libdevice(llvm::Module& module);

// Builds the kernel function, its shared arrays and the nvvm.annotations in `module` (whose
// triple and data layout are set), through the shared LLVM lowering (codegen/llvm). Math goes to
// libdevice's __nv_* functions when `use_libdevice`, else to LLVM / NVVM intrinsics; see
// ptx_codegen.cpp for the accuracy. `sm` is the architecture's number (80 for sm_80): bf16
// conversions depend on it; `wgmma` says the target is sm_90a, whose warpgroup accumulators run on
// wgmma.
void lower_kernel(const ir::Kernel& kernel, const Options& options, llvm::Module& module,
                  bool use_libdevice, int sm, bool wgmma);

} // namespace plexus::codegen::ptx
