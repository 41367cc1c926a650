// The NVPTX side of the PTX generator: one TargetMachine per architecture, the O3 pipeline and
// PTX printing, and finding, reading and linking libdevice. Everything cached is per process.
#include "ptx_target.hpp"

#include "codegen/stopwatch.hpp"

#include "config/env.hpp"
#include "plexus/error.hpp"

#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/Linker/Linker.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Target/TargetOptions.h>
#include <llvm/Transforms/IPO/Internalize.h>

#include <cctype>
#include <map>
#include <string_view>

namespace plexus::codegen::ptx {
namespace {

struct ArchPtx {
    const char* cpu;
    int ptx; // PTX ISA version (times ten) written into the module
};
// The CPUs LLVM 19 knows from sm_50 on, each with the oldest PTX ISA that has it (never below
// 6.0, which the memory-model instructions need): the oldest version asks the least of the
// driver, and CUDA 12 drivers accept all of these.
constexpr ArchPtx known_archs[] = {
    {"sm_50", 60}, {"sm_52", 60}, {"sm_53", 60}, {"sm_60", 60}, {"sm_61", 60},
    {"sm_62", 60}, {"sm_70", 60}, {"sm_72", 61}, {"sm_75", 63}, {"sm_80", 70},
    {"sm_86", 71}, {"sm_87", 74}, {"sm_89", 78}, {"sm_90", 78}, {"sm_90a", 80},
};

const ArchPtx& known_arch(std::string_view cpu) {
    for (auto& a : known_archs)
        if (cpu == a.cpu) return a;
    throw Error(ErrorCode::Internal, "the PTX architecture table lacks " + std::string(cpu));
}

[[noreturn]] void bad_arch(const std::string& arch, const std::string& why) {
    std::string known;
    for (auto& a : known_archs)
        known += std::string(known.empty() ? "" : ", ") + a.cpu;
    throw Error(ErrorCode::InvalidArgument,
                "PTX target architecture '" + arch + "' " + why + " (LLVM 19 knows " + known +
                    "; newer sm_NN get sm_90 PTX, which the driver compiles for them)");
}

// An architecture newer than LLVM 19 (sm_100, sm_120) gets sm_90 PTX: the driver JIT-compiles
// PTX for any later GPU, while sm_90a PTX would only load on sm_90 itself.
ArchPtx resolve_arch(const std::string& arch) {
    if (arch.empty()) return known_arch("sm_80");
    for (auto& a : known_archs)
        if (arch == a.cpu) return a;
    std::string digits = arch.rfind("sm_", 0) == 0 ? arch.substr(3) : "";
    if (!digits.empty() && (digits.back() == 'a' || digits.back() == 'f')) digits.pop_back();
    if (digits.empty() || digits.size() > 4 ||
        digits.find_first_not_of("0123456789") != std::string::npos)
        bad_arch(arch, "is not of the form sm_NN");
    if (std::stoi(digits) > 90) return known_arch("sm_90");
    bad_arch(arch, std::stoi(digits) < 50 ? "is older than plexus supports" : "is unknown");
}

void initialize_nvptx() {
    static std::once_flag once;
    std::call_once(once, [] {
        LLVMInitializeNVPTXTargetInfo();
        LLVMInitializeNVPTXTarget();
        LLVMInitializeNVPTXTargetMC();
        LLVMInitializeNVPTXAsmPrinter();
    });
}

std::string read_error(const std::error_code& ec) {
    return ec.message();
}

// NVPTX numbers its call sequences ("{ // callseq 12, 0") with a process-wide counter, so the
// same kernel would print differently on every call; number them from 0 in each module.
std::string renumber_call_sequences(const std::string& ptx) {
    static constexpr std::string_view marker = "// callseq ";
    std::map<std::string, std::string> numbers;
    std::string out;
    out.reserve(ptx.size());
    size_t pos = 0;
    for (size_t hit; (hit = ptx.find(marker, pos)) != std::string::npos;) {
        const size_t start = hit + marker.size();
        size_t end = start;
        while (end < ptx.size() && std::isdigit(static_cast<unsigned char>(ptx[end])))
            ++end;
        auto [it, fresh] = numbers.try_emplace(ptx.substr(start, end - start), "");
        if (fresh) it->second = std::to_string(numbers.size() - 1);
        out.append(ptx, pos, start - pos).append(it->second);
        pos = end;
    }
    return out.append(ptx, pos);
}

// LLVM 19's NVPTX expands llvm.fptosi.sat / fptoui.sat into compares and selects around a
// cvt.rzi, although cvt.rzi clamps out-of-range values to the same bounds by itself. Once the
// optimizer, which relied on the intrinsics' semantics, is done, a plain fptosi / fptoui
// selects that one cvt.rzi. NaN, which the IR leaves undefined, is where they differ: the
// intrinsics give 0, cvt.rzi gives 0 only from f32 to 32 bits and the most negative integer's
// bits otherwise (measured on an H100). Only i32 and i64 results, which cvt.rzi writes
// directly: a narrower integer sits in a 16-bit register, where it would not clamp to its range.
void saturating_casts_to_cvt(llvm::Module& module) {
    std::vector<llvm::IntrinsicInst*> casts;
    for (llvm::Function& f : module)
        for (llvm::BasicBlock& block : f)
            for (llvm::Instruction& i : block) {
                auto* call = llvm::dyn_cast<llvm::IntrinsicInst>(&i);
                if (!call) continue;
                auto id = call->getIntrinsicID();
                llvm::Type* to = call->getType();
                if ((id == llvm::Intrinsic::fptosi_sat || id == llvm::Intrinsic::fptoui_sat) &&
                    (to->isIntegerTy(32) || to->isIntegerTy(64)))
                    casts.push_back(call);
            }
    for (llvm::IntrinsicInst* call : casts) {
        llvm::IRBuilder<> b(call);
        llvm::Value* from = call->getArgOperand(0);
        llvm::Value* cvt = call->getIntrinsicID() == llvm::Intrinsic::fptosi_sat
                               ? b.CreateFPToSI(from, call->getType())
                               : b.CreateFPToUI(from, call->getType());
        cvt->takeName(call);
        call->replaceAllUsesWith(cvt);
        call->eraseFromParent();
    }
}

// Where libdevice lives in the usual toolkit layouts; the first readable one wins.
Libdevice find_libdevice() {
    Libdevice found;
    if (auto path = detail::get_env("PLEXUS_LIBDEVICE")) {
        // "none" generates without libdevice, as on a machine without the toolkit.
        if (*path == "none") {
            found.path = "(PLEXUS_LIBDEVICE=none)";
            return found;
        }
        found.path = *path;
        auto buffer = llvm::MemoryBuffer::getFile(*path);
        if (!buffer) {
            found.error =
                "PLEXUS_LIBDEVICE=" + *path + " cannot be read: " + read_error(buffer.getError());
            return found;
        }
        if (!llvm::isBitcode(reinterpret_cast<const unsigned char*>((*buffer)->getBufferStart()),
                             reinterpret_cast<const unsigned char*>((*buffer)->getBufferEnd()))) {
            found.error = "PLEXUS_LIBDEVICE=" + *path + " is not LLVM bitcode (libdevice.10.bc)";
            return found;
        }
        found.bitcode = std::move(*buffer);
        return found;
    }
    std::vector<std::string> candidates;
    for (const char* var : {"CUDA_HOME", "CUDA_PATH"})
        if (auto root = detail::get_env(var)) candidates.push_back(*root + "/nvvm/libdevice");
    candidates.push_back("/usr/local/cuda/nvvm/libdevice");
    candidates.push_back("/usr/lib/nvidia-cuda-toolkit/libdevice");
    candidates.push_back("/usr/lib/cuda/nvvm/libdevice");
    for (auto& dir : candidates) {
        std::string file = dir + "/libdevice.10.bc";
        auto buffer = llvm::MemoryBuffer::getFile(file);
        if (!buffer) continue;
        auto* begin = reinterpret_cast<const unsigned char*>((*buffer)->getBufferStart());
        if (!llvm::isBitcode(begin, begin + (*buffer)->getBufferSize())) continue;
        found.path = file;
        found.bitcode = std::move(*buffer);
        return found;
    }
    for (auto& dir : candidates)
        found.path += (found.path.empty() ? "" : ", ") + dir;
    return found;
}

} // namespace

PtxTarget::PtxTarget(std::string cpu, std::string features)
    : cpu_(std::move(cpu)), features_(std::move(features)) {
    initialize_nvptx();
    std::string error;
    const llvm::Target* target = llvm::TargetRegistry::lookupTarget(nvptx_triple, error);
    if (!target)
        throw Error(ErrorCode::Internal, "LLVM has no NVPTX target although plexus was built "
                                         "with it: " +
                                             error);
    llvm::TargetOptions options; // IEEE: no contraction of a*b+c, no approximate division
    machine_.reset(target->createTargetMachine(nvptx_triple, cpu_, features_, options, std::nullopt,
                                               std::nullopt, llvm::CodeGenOptLevel::Aggressive));
    if (!machine_)
        throw Error(ErrorCode::Internal,
                    "LLVM could not make an NVPTX target machine for " + cpu_ + " " + features_);
}

PtxTarget::~PtxTarget() = default;

PtxTarget& PtxTarget::get(const std::string& arch) {
    ArchPtx resolved = resolve_arch(arch);
    static std::mutex mutex;
    static std::map<std::string, std::unique_ptr<PtxTarget>> targets;
    std::lock_guard lock(mutex);
    auto& slot = targets[resolved.cpu];
    if (!slot)
        slot = std::make_unique<PtxTarget>(resolved.cpu, "+ptx" + std::to_string(resolved.ptx));
    return *slot;
}

llvm::DataLayout PtxTarget::data_layout() const {
    return machine_->createDataLayout();
}

int PtxTarget::sm() const {
    return std::stoi(cpu_.substr(3));
} // "sm_90a": stoi stops at the 'a'

std::string PtxTarget::optimize_and_emit(llvm::Module& module, const std::string& kernel_name,
                                         codegen::Phases* phases) {
    std::lock_guard lock(mutex_);
    codegen::Stopwatch watch;
    llvm::internalizeModule(
        module, [&](const llvm::GlobalValue& value) { return value.getName() == kernel_name; });

    llvm::LoopAnalysisManager lam;
    llvm::FunctionAnalysisManager fam;
    llvm::CGSCCAnalysisManager cgam;
    llvm::ModuleAnalysisManager mam;
    // With the target machine the builder adds NVVMReflect (folds libdevice's __nvvm_reflect)
    // and the NVPTX-specific analyses.
    llvm::PassBuilder builder(machine_.get());
    builder.registerModuleAnalyses(mam);
    builder.registerCGSCCAnalyses(cgam);
    builder.registerFunctionAnalyses(fam);
    builder.registerLoopAnalyses(lam);
    builder.crossRegisterProxies(lam, fam, cgam, mam);
    builder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3).run(module, mam);
    saturating_casts_to_cvt(module);
    watch.lap(phases ? &phases->optimize : nullptr);

    llvm::SmallString<0> text;
    llvm::raw_svector_ostream stream(text);
    llvm::legacy::PassManager emit;
    if (machine_->addPassesToEmitFile(emit, stream, nullptr, llvm::CodeGenFileType::AssemblyFile))
        throw Error(ErrorCode::Internal, "the NVPTX target cannot print PTX assembly");
    emit.run(module);
    std::string ptx = renumber_call_sequences(std::string(text.str()));
    watch.lap(phases ? &phases->emit : nullptr);
    return ptx;
}

const Libdevice& libdevice() {
    static const Libdevice found = find_libdevice();
    return found;
}

void link_libdevice(llvm::Module& module) {
    const Libdevice& lib = libdevice();
    auto loaded = llvm::getLazyBitcodeModule(lib.bitcode->getMemBufferRef(), module.getContext());
    if (!loaded)
        throw Error(ErrorCode::Internal, "libdevice " + lib.path + " cannot be loaded: " +
                                             llvm::toString(loaded.takeError()));
    // libdevice says nvptx64-nvidia-gpulibs; matching the module avoids the linker's warning.
    (*loaded)->setTargetTriple(module.getTargetTriple());
    (*loaded)->setDataLayout(module.getDataLayout());
    if (llvm::Linker::linkModules(module, std::move(*loaded), llvm::Linker::LinkOnlyNeeded))
        throw Error(ErrorCode::Internal, "linking libdevice " + lib.path + " failed");
}

} // namespace plexus::codegen::ptx
