// make_ptx_codegen(): IR -> LLVM IR -> O3 -> PTX text through LLVM 19's NVPTX target, for the
// CUDA backend's JIT (cuModuleLoadData).
//
// Math. With libdevice (libdevice.10.bc: $PLEXUS_LIBDEVICE, $CUDA_HOME/nvvm/libdevice,
// $CUDA_PATH/nvvm/libdevice, /usr/local/cuda/nvvm/libdevice,
// /usr/lib/nvidia-cuda-toolkit/libdevice, /usr/lib/cuda/nvvm/libdevice) rsqrt, exp, exp2, log,
// log2, sin, cos, tan and pow call its
// __nv_* functions (__nv_sinf, __nv_sin, ...), linked lazily into the module, internalized and
// optimized with the rest, with nvvm-reflect-ftz = 0 (denormals kept). Their error is CUDA's
// math library without -use_fast_math; measured on an H100 (tests/core/codegen/ptx/gpu_check.py, x
// in (0.01, 10)): f32 rsqrt 1.45, exp 1.74, exp2 1.36, log 0.82, log2 0.88, sin 1.40, cos 1.42,
// tan 2.68, pow 0.84 ulp; f64 rsqrt 0.51, exp 0.84, exp2 0.82, log 0.52, log2 1.20, sin 1.32,
// cos 1.42, tan 1.46, pow 1.26 ulp.
// sqrt (sqrt.rn), fabs, floor, ceil, fma, min/max (fmin/fmax) and clamp are LLVM intrinsics
// that NVPTX lowers exactly, with or without libdevice; division is IEEE (div.rn) and a*b+c is
// never contracted (add.rn / mul.rn), so + - * / sqrt fma match the host bit for bit.
// Without libdevice (or with PLEXUS_LIBDEVICE=none) f32 uses the special-function unit:
// sin.approx / cos.approx (absolute error about 2^-21 on [-pi, pi], so large relative error
// near the zeros: 1e5 ulp measured on (0.01, 10)), ex2.approx (1.4 ulp), lg2.approx (absolute
// error about 2^-22; 3600 ulp near x = 1), rsqrt.approx (1.4 ulp); exp(x) = ex2(x*log2 e)
// (7.5 ulp on (0.01, 10), growing with |x|), log(x) = lg2(x)*ln 2, tan = sin/cos, pow(x, y) =
// ex2(y*lg2 x) (43 ulp; right for x > 0 only: NaN for x < 0, and pow(0, 0) is NaN). f64
// transcendental functions need libdevice: they throw Unsupported naming the intrinsic.
// The px::fast:: functions use these approximations with or without libdevice, as CUDA's
// __expf class does, with exp10 = ex2(x*log2 10), log10 = lg2(x)*log10 2, sqrt.approx,
// div.approx (divide, recip, and tan = sin/cos); docs/kernel-language.md states their bounds.
#include "ptx_target.hpp"

#include "codegen/cuda_shared.hpp"

#include "codegen/stopwatch.hpp"

#include "plexus/error.hpp"

#include <llvm/IR/DiagnosticInfo.h>
#include <llvm/IR/DiagnosticPrinter.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/Support/raw_ostream.h>

namespace plexus::codegen {
namespace {

// Collects LLVM's diagnostics instead of letting the default handler print them, or exit the
// process on an error.
struct Diagnostics {
    std::string errors;
    static void handle(const llvm::DiagnosticInfo* info, void* self) {
        if (info->getSeverity() != llvm::DS_Error) return;
        llvm::raw_string_ostream os(static_cast<Diagnostics*>(self)->errors);
        llvm::DiagnosticPrinterRawOStream printer(os);
        info->print(printer);
        os << "\n";
    }
};

bool calls_libdevice(const llvm::Module& module) {
    for (const llvm::Function& f : module)
        if (f.isDeclaration() && f.getName().starts_with("__nv_")) return true;
    return false;
}

class PtxGenerator final : public SourceGenerator {
public:
    plx_language language() const override { return PLX_LANG_PTX; }
    uint32_t dynamic_local_bytes(const ir::Kernel& k) const override {
        return uint32_t(cuda_dynamic_shared(k).bytes);
    }

    std::string generate(const ir::Kernel& kernel, const Options& options) const override {
        ir::validate_for_codegen(kernel);
        Stopwatch watch;
        // Warpgroup accumulators on an sm_90 GPU: sm_90a, whose wgmma they run on (PTX for it
        // loads on sm_90 only; later GPUs get sm_90 PTX and the mma.sync path).
        const bool warpgroup = kernel.has_warpgroup();
        const bool sm90 = options.arch == "sm_90" || options.arch == "sm_90a";
        ptx::PtxTarget& target =
            ptx::PtxTarget::get(warpgroup && sm90 ? std::string("sm_90a") : options.arch);
        const ptx::Libdevice& lib = ptx::libdevice();
        watch.lap(options.phases ? &options.phases->setup : nullptr);
        if (!lib.error.empty()) throw Error(ErrorCode::InvalidConfig, lib.error);

        // A context per call: contexts are not thread-safe, the target machine is shared.
        llvm::LLVMContext context;
        Diagnostics diagnostics;
        context.setDiagnosticHandlerCallBack(&Diagnostics::handle, &diagnostics);
        llvm::Module module(kernel.name, context);
        module.setTargetTriple(ptx::nvptx_triple);
        module.setDataLayout(target.data_layout());
        // cp.async exists from sm_80; below it the copies are done at once.
        const int sm = target.sm();
        ptx::lower_kernel(sm >= 80 ? kernel : ir::lower_async_copy(kernel), options, module,
                          lib.bitcode != nullptr, sm, target.cpu() == "sm_90a");
        if (calls_libdevice(module)) {
            // libdevice branches on __nvvm_reflect("__CUDA_FTZ"); 0 keeps denormals, as the
            // rest of the generated code does.
            module.addModuleFlag(llvm::Module::Override, "nvvm-reflect-ftz", uint32_t(0));
            ptx::link_libdevice(module);
        }
        watch.lap(options.phases ? &options.phases->lower : nullptr);
        std::string ptx = target.optimize_and_emit(module, kernel.name, options.phases);
        if (!diagnostics.errors.empty()) {
            ErrorContext context_info;
            context_info.kernel = kernel.name;
            context_info.build_log = diagnostics.errors;
            throw Error(ErrorCode::Compile,
                        "LLVM's NVPTX target rejected kernel '" + kernel.name + "' for " +
                            target.cpu() + ": " + diagnostics.errors,
                        context_info);
        }
        return ptx;
    }
};

} // namespace

std::unique_ptr<SourceGenerator> make_ptx_codegen() {
    return std::make_unique<PtxGenerator>();
}

} // namespace plexus::codegen
