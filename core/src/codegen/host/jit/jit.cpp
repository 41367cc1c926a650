// compile_host: lowers a kernel for the host CPU, optimizes it at O3 with the host's target
// info (so the work-item loops vectorize), emits an object file and links it with ORC LLJIT;
// load_host_object links one read back from the disk cache.
#include "codegen/host/analysis/layout.hpp"
#include "codegen/host/analysis/schedule.hpp"
#include "codegen/host/jit/host_kernel.hpp"
#include "codegen/host/lower/work_group.hpp"
#include "codegen/host/passes/interleave.hpp"
#include "codegen/host/passes/streaming.hpp"
#include "codegen/host/passes/widen.hpp"
#include "ir/rewrite.hpp"

#include "plexus/error.hpp"

#include <llvm/Analysis/CGSCCPassManager.h>
#include <llvm/Analysis/LoopAnalysisManager.h>
#include <llvm/Analysis/TargetLibraryInfo.h>
#include <llvm/Config/llvm-config.h>
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/DiagnosticInfo.h>
#include <llvm/IR/DiagnosticPrinter.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/PassManager.h>
#include <llvm/IR/Verifier.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/TargetParser/Host.h>
#include <llvm/TargetParser/SubtargetFeature.h>
#include <llvm/Transforms/InstCombine/InstCombine.h>
#include <llvm/Transforms/Scalar/Scalarizer.h>

#include <dlfcn.h>

#include <deque>
#include <mutex>

namespace plexus::codegen {
namespace {

[[noreturn]] void compile_error(const ir::Kernel& k, const std::string& what, llvm::Error err) {
    std::string msg;
    llvm::raw_string_ostream os(msg);
    os << err;
    ErrorContext ctx;
    ctx.kernel = k.name;
    ctx.build_log = msg;
    throw Error(ErrorCode::Compile, "host code for kernel '" + k.name + "': " + what + ": " + msg,
                ctx);
}

template <class T> T take(const ir::Kernel& k, const std::string& what, llvm::Expected<T> v) {
    if (!v) compile_error(k, what, v.takeError());
    return std::move(*v);
}

class JitKernel final : public HostKernel {
public:
    JitKernel(std::unique_ptr<llvm::orc::LLJIT> jit, plx_workgroup_fn fn,
              plx_workgroup_fn streaming, std::string ir, host::Layout layout,
              std::vector<unsigned char> object)
        : jit_(std::move(jit)), fn_(fn), streaming_(streaming), ir_(std::move(ir)),
          layout_(std::move(layout)), object_(std::move(object)) {}
    plx_workgroup_fn function() const override { return fn_; }
    plx_workgroup_fn streaming_function() const override { return streaming_; }
    const std::string& llvm_ir() const override { return ir_; }
    uint64_t local_bytes(uint32_t work_group_size) const override {
        return layout_.local_bytes(work_group_size);
    }
    const std::vector<unsigned char>& object() const override { return object_; }

private:
    std::unique_ptr<llvm::orc::LLJIT> jit_; // owns the code fn_ points into
    plx_workgroup_fn fn_;
    plx_workgroup_fn streaming_; // or nullptr
    std::string ir_;
    host::Layout layout_;
    std::vector<unsigned char> object_;
};

// glibc's vector math library, loaded into the process (for the JIT's symbol look-up) once;
// false where there is none (another C library, another architecture).
bool load_libmvec() {
#if defined(__x86_64__) && defined(__GLIBC__)
    static const bool loaded = dlopen("libmvec.so.1", RTLD_NOW | RTLD_GLOBAL) != nullptr;
    return loaded;
#else
    return false;
#endif
}

// The f32 functions of libmvec (SSE: 4 lanes, AVX2: 8, AVX-512: 16, the last only for a
// target that has AVX-512F) whose error stays within the bound the kernel language states
// (docs/kernel-language.md, "Vector math on the native backend"): a scan through each vector
// form (every 37th float bit pattern, about 116 million inputs, or as many random pairs) found
// every one within its bound and every special value met. Not logf (its AVX2 form 3.94 ulp
// against 3), log10f (AVX-512 3.18 against 3), log1pf (SSE 2.01 against 2), cbrtf (2.85
// against 2), and not the f64 functions (not measured): those stay one libm call per lane.
const std::vector<llvm::VecDesc>& libmvec_functions(bool avx512) {
    struct Fn {
        const char *scalar, *intrinsic, *args; // intrinsic: null where LLVM has none
    };
    static const Fn fns[] = {{"expf", "llvm.exp.f32", "v"},  {"sinf", "llvm.sin.f32", "v"},
                             {"cosf", "llvm.cos.f32", "v"},  {"tanf", "llvm.tan.f32", "v"},
                             {"powf", "llvm.pow.f32", "vv"}, {"erff", nullptr, "v"},
                             {"erfcf", nullptr, "v"},        {"tanhf", nullptr, "v"},
                             {"sinhf", nullptr, "v"},        {"coshf", nullptr, "v"},
                             {"asinhf", nullptr, "v"},       {"acoshf", nullptr, "v"},
                             {"atanhf", nullptr, "v"},       {"asinf", nullptr, "v"},
                             {"acosf", nullptr, "v"},        {"atanf", nullptr, "v"},
                             {"expm1f", nullptr, "v"},       {"atan2f", nullptr, "vv"},
                             {"hypotf", nullptr, "vv"}};
    static const std::pair<const char*, unsigned> isas[] = {{"b", 4}, {"d", 8}, {"e", 16}};
    // VecDesc keeps StringRefs: the names live as long as the tables.
    static const std::deque<std::string> names = [] {
        std::deque<std::string> n;
        for (const Fn& f : fns)
            for (auto [isa, lanes] : isas) {
                n.push_back(std::string("_ZGV") + isa + "N" + std::to_string(lanes) + f.args + "_" +
                            f.scalar);
                n.push_back("_ZGV_LLVM_N" + std::to_string(lanes) + f.args);
            }
        return n;
    }();
    auto table = [](bool with_avx512) {
        std::vector<llvm::VecDesc> t;
        size_t at = 0;
        for (const Fn& f : fns)
            for (auto [isa, lanes] : isas) {
                const std::string& vector = names[at++];
                const std::string& abi = names[at++];
                if (lanes == 16 && !with_avx512) continue;
                // glibc before 2.35 has the first five only: a form the process's libmvec
                // lacks would leave the JIT an undefined symbol.
                if (!dlsym(RTLD_DEFAULT, vector.c_str())) continue;
                for (const char* scalar : {f.scalar, f.intrinsic})
                    if (scalar)
                        t.emplace_back(scalar, vector, llvm::ElementCount::getFixed(lanes), false,
                                       abi);
            }
        return t;
    };
    static const std::vector<llvm::VecDesc> narrow = table(false), wide = table(true);
    return avx512 ? wide : narrow;
}

// LoopVectorize widens scalar code only: a loop holding a vector value stays scalar. In a
// work-group function whose lock-step lane loops compute vectors (particles' float3 positions
// and forces), every vector operation, load and store is split into one per lane just before
// LoopVectorize, so that each lane loop becomes W work-items per vector like any other (the
// lowering keeps vector variables one array per lane, so a lane of consecutive work-items is
// contiguous); SLP, which runs after LoopVectorize, packs what stays scalar back into vectors,
// and InstCombine folds the inserts and extracts left between the pieces. Only in such
// functions (but there in every region): in a plain work-item loop a float4 load of a buffer
// is already one vector access per work-item, and split it becomes four gathers
// (docs/benchmarks.md, "What the figures taught": vector_add_float4).
struct SplitVectors : llvm::PassInfoMixin<SplitVectors> {
    llvm::PreservedAnalyses run(llvm::Function& f, llvm::FunctionAnalysisManager& fam) {
        if (!f.hasFnAttribute(host::split_vectors_attribute)) return llvm::PreservedAnalyses::all();
        llvm::ScalarizerPassOptions split;
        split.ScalarizeLoadStore = true;
        llvm::FunctionPassManager passes;
        passes.addPass(llvm::ScalarizerPass(split));
        passes.addPass(llvm::InstCombinePass());
        return passes.run(f, fam);
    }
};

void optimize(llvm::Module& m, llvm::TargetMachine& tm, const host::HostTarget& target) {
    llvm::LoopAnalysisManager lam;
    llvm::FunctionAnalysisManager fam;
    llvm::CGSCCAnalysisManager cgam;
    llvm::ModuleAnalysisManager mam;
    llvm::PipelineTuningOptions tuning;
    tuning.LoopVectorization = true;
    tuning.SLPVectorization = true;
    llvm::PassBuilder pb(&tm, tuning);
    // With libmvec a vectorized work-item loop calls _ZGVdN8v_expf instead of expf once per
    // lane. Registered before the default analyses, which keep an analysis already there.
    llvm::TargetLibraryInfoImpl libraries(tm.getTargetTriple());
    if (target.libmvec)
        libraries.addVectorizableFunctions(libmvec_functions(target.vector_bits == 512));
    fam.registerPass([&] { return llvm::TargetLibraryAnalysis(libraries); });
    pb.registerModuleAnalyses(mam);
    pb.registerCGSCCAnalyses(cgam);
    pb.registerFunctionAnalyses(fam);
    pb.registerLoopAnalyses(lam);
    pb.crossRegisterProxies(lam, fam, cgam, mam);
    pb.registerVectorizerStartEPCallback(
        [](llvm::FunctionPassManager& fpm, llvm::OptimizationLevel) {
            fpm.addPass(SplitVectors());
        });
    const bool x86 = tm.getTargetTriple().isX86();
    pb.registerOptimizerLastEPCallback(
        [x86](llvm::ModulePassManager& mpm, llvm::OptimizationLevel) {
            mpm.addPass(llvm::createModuleToFunctionPassAdaptor(host::WidenIndices()));
            mpm.addPass(llvm::createModuleToFunctionPassAdaptor(host::InterleaveChains()));
            if (x86) mpm.addPass(host::StreamingStores());
        });
    pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3).run(m, mam);
}

// The conversions LLVM calls for f16 and bf16 where the CPU has no instruction. The lowering
// never asks for them (integer code instead); refusing them in the JIT keeps it so.
bool half_libcall(llvm::StringRef name) {
    static const char* const names[] = {"__truncsfhf2",  "__truncdfhf2",   "__extendhfsf2",
                                        "__extendhfdf2", "__gnu_f2h_ieee", "__gnu_h2f_ieee",
                                        "__truncsfbf2",  "__truncdfbf2"};
    for (const char* n : names)
        if (name == n) return true;
    return false;
}

} // namespace

namespace {

// The target machine for the host CPU (or the options' CPU and features), and what the
// lowering needs to know of it.
struct Machine {
    llvm::orc::JITTargetMachineBuilder jtmb;
    std::unique_ptr<llvm::TargetMachine> tm;
    host::HostTarget target;
};

// A CPU or feature name LLVM does not know would only be warned about on stderr and ignored:
// a configuration error instead, named as the configuration names it.
void check_target(const ir::Kernel& kernel, const Options& options, const llvm::Triple& triple) {
    if (options.host_cpu.empty() && options.host_features.empty()) return;
    std::string why;
    const llvm::Target* t = llvm::TargetRegistry::lookupTarget(triple.str(), why);
    if (!t)
        compile_error(kernel, "no LLVM target for " + triple.str(),
                      llvm::make_error<llvm::StringError>(why, llvm::inconvertibleErrorCode()));
    std::unique_ptr<llvm::MCSubtargetInfo> sub(t->createMCSubtargetInfo(triple.str(), "", ""));
    auto bad = [&](const std::string& what) {
        ErrorContext ctx;
        if (kernel.body) ctx.kernel = kernel.name; // not the body-less stand-in of target_only
        throw Error(ErrorCode::InvalidArgument, "host code: " + what, ctx);
    };
    if (!options.host_cpu.empty() && !sub->isCPUStringValid(options.host_cpu))
        bad("LLVM knows no CPU '" + options.host_cpu + "' for " + triple.str() +
            " (the native backend's \"cpu\")");
    for (llvm::StringRef rest = options.host_features; !rest.empty();) {
        auto [one, tail] = rest.split(',');
        rest = tail;
        llvm::StringRef name = one.trim();
        if (name.empty()) continue;
        if (name.front() == '+' || name.front() == '-') name = name.drop_front();
        bool known = false;
        for (const llvm::SubtargetFeatureKV& f : sub->getAllProcessorFeatures())
            known = known || name == f.Key;
        if (!known)
            bad("LLVM knows no CPU feature '" + name.str() + "' for " + triple.str() +
                " (the native backend's \"features\": names like +avx2,-avx512f)");
    }
}

Machine machine(const ir::Kernel& kernel, const Options& options,
                const std::vector<std::string>& feature_changes) {
    static std::once_flag once;
    std::call_once(once, [] {
        llvm::InitializeNativeTarget();
        llvm::InitializeNativeTargetAsmPrinter();
    });
    llvm::orc::JITTargetMachineBuilder jtmb{llvm::Triple(llvm::sys::getProcessTriple())};
    check_target(kernel, options, jtmb.getTargetTriple());
    jtmb.setCPU(options.host_cpu.empty() ? llvm::sys::getHostCPUName().str() : options.host_cpu);
    llvm::SubtargetFeatures features;
    if (options.host_cpu.empty())
        for (auto& f : llvm::sys::getHostCPUFeatures())
            features.AddFeature(f.getKey(), f.getValue());
    for (llvm::StringRef rest = options.host_features; !rest.empty();) {
        auto [one, tail] = rest.split(',');
        if (!one.trim().empty()) features.AddFeature(one.trim());
        rest = tail;
    }
    for (auto& f : feature_changes)
        features.AddFeature(f);
    jtmb.addFeatures(features.getFeatures());
    jtmb.setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
    std::unique_ptr<llvm::TargetMachine> tm =
        take(kernel, "no target machine for the host", jtmb.createTargetMachine());
    // The subtarget resolves the feature list: a later "-f16c" wins, and turns off what
    // implies it.
    const llvm::MCSubtargetInfo& sub = *tm->getMCSubtargetInfo();
    host::HostTarget target{tm->getTargetTriple().str(), jtmb.getCPU(),
                            jtmb.getFeatures().getString(), tm->createDataLayout(),
                            sub.checkFeatures("+f16c")};
    // LLVM's x86 CPU models prefer 256-bit vectors on every AVX-512 CPU but Zen 4 (512-bit
    // instructions lowered the clock of the first Xeons that had them); a work-item loop is
    // the long, FMA-dense loop 512 bits pay for, so it gets the widest registers. NEON is 128
    // bits, which LLVM picks by itself; SVE's scalable vectors are left to LLVM too.
    const llvm::Triple& triple = tm->getTargetTriple();
    const bool avx512 = triple.isX86() && sub.checkFeatures("+avx512f");
    if (triple.isX86()) target.vector_bits = avx512 ? 512 : sub.checkFeatures("+avx") ? 256 : 128;
    // Zen 4 has AVX-512 on 256-bit units: a 512-bit FMA costs what two 256-bit ones do (Intel's
    // AVX-512 server cores and Zen 5's server parts compute 512 bits at once). LLVM's
    // scheduling models do not tell the two apart (Sapphire Rapids' 512-bit FMAs get the same
    // half rate as Zen 4's), so the CPU is named here: the host's, or the config's `cpu`.
    target.full_rate_bits = avx512 && jtmb.getCPU() == "znver4" ? 256 : target.vector_bits;
    target.libmvec = triple.getArch() == llvm::Triple::x86_64 && load_libmvec();
    // Vector registers: x86 has 16 (xmm/ymm 0-15), AVX-512 32; AArch64's NEON and SVE have 32.
    target.vector_registers = avx512 || triple.isAArch64() ? 32 : 16;
    return Machine{std::move(jtmb), std::move(tm), std::move(target)};
}

// The kernel lowered, verified and (unless `optimize_it` is false) optimized; LLVM's errors
// are collected in `diagnostics`.
std::unique_ptr<llvm::Module> optimized_module(const ir::Kernel& kernel, const Options& options,
                                               Machine& m, const host::Layout& layout,
                                               llvm::LLVMContext& context, std::string& diagnostics,
                                               bool optimize_it = true) {
    // A library must not print LLVM's remarks and warnings ("loop not vectorized"); errors
    // are kept and reported as a Compile error once the code is built.
    context.setDiagnosticHandlerCallBack(
        [](const llvm::DiagnosticInfo* info, void* log) {
            if (info->getSeverity() != llvm::DS_Error) return;
            llvm::raw_string_ostream os(*static_cast<std::string*>(log));
            llvm::DiagnosticPrinterRawOStream printer(os);
            info->print(printer);
            os << "\n";
        },
        &diagnostics);
    std::unique_ptr<llvm::Module> module = host::lower(kernel, options, layout, m.target, context);
    std::string problems;
    llvm::raw_string_ostream problems_os(problems);
    if (llvm::verifyModule(*module, &problems_os)) {
        ErrorContext ctx;
        ctx.kernel = kernel.name;
        throw Error(ErrorCode::Internal,
                    "host codegen of kernel '" + kernel.name +
                        "' made an invalid LLVM module: " + problems,
                    ctx);
    }
    if (optimize_it) optimize(*module, *m.tm, m.target);
    return module;
}

std::vector<unsigned char> emit(const ir::Kernel& kernel, llvm::Module& module,
                                llvm::TargetMachine& tm, llvm::CodeGenFileType type) {
    llvm::SmallVector<char, 0> bytes;
    llvm::raw_svector_ostream stream(bytes);
    llvm::legacy::PassManager pm;
    if (tm.addPassesToEmitFile(pm, stream, nullptr, type))
        throw Error(ErrorCode::Internal,
                    "the host target cannot emit code for kernel '" + kernel.name + "'");
    pm.run(module);
    return {bytes.begin(), bytes.end()};
}

// Links the object code into a JIT of its own and finds the work-group function.
std::unique_ptr<HostKernel> link(const ir::Kernel& kernel, Machine& m,
                                 std::vector<unsigned char> object, std::string ir,
                                 host::Layout layout) {
    // libm (expf, tanf, ...), aligned_alloc and free come from the process; the f16 and bf16
    // conversion routines do not, even where the process has them.
    llvm::orc::LLJITBuilder builder;
    builder.setJITTargetMachineBuilder(m.jtmb);
    builder.setProcessSymbolsJITDylibSetup(
        [](llvm::orc::LLJIT& j) -> llvm::Expected<llvm::orc::JITDylibSP> {
            auto process = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
                j.getDataLayout().getGlobalPrefix(),
                [](const llvm::orc::SymbolStringPtr& name) { return !half_libcall(*name); });
            if (!process) return process.takeError();
            llvm::orc::JITDylib& symbols =
                j.getExecutionSession().createBareJITDylib("<Process Symbols>");
            symbols.addGenerator(std::move(*process));
            return &symbols;
        });
    std::unique_ptr<llvm::orc::LLJIT> jit = take(kernel, "cannot create the JIT", builder.create());
    llvm::StringRef view(reinterpret_cast<const char*>(object.data()), object.size());
    if (llvm::Error err =
            jit->addObjectFile(llvm::MemoryBuffer::getMemBufferCopy(view, "plx_wg_" + kernel.name)))
        compile_error(kernel, "the JIT refused the object code", std::move(err));
    auto address = take(kernel, "cannot link the work-group function",
                        jit->lookup(host::function_name(kernel)));
    // The streaming twin is there where StreamingStores made one.
    plx_workgroup_fn streaming = nullptr;
    if (auto twin = jit->lookup(host::streaming_name(host::function_name(kernel))))
        streaming = twin->toPtr<plx_workgroup_fn>();
    else
        llvm::consumeError(twin.takeError());
    return std::make_unique<JitKernel>(std::move(jit), address.toPtr<plx_workgroup_fn>(), streaming,
                                       std::move(ir), std::move(layout), std::move(object));
}

} // namespace

std::unique_ptr<HostKernel> compile_host(const ir::Kernel& kernel, const Options& options) {
    return host::compile_with_features(kernel, options, {});
}

// The kernel the host code is generated from: the host has no matrix units, so fragments
// become private arrays and loops (ir::lower_matrix), nor asynchronous copies, which it does at
// once (ir::lower_async_copy); loops hinted unroll_full written out (ir::unroll_full_loops),
// except those around matrix operations, each a loop already (ir::matrix_loops_unhinted);
// long straight-line runs in blocks of outputs sized for the
// target's registers (schedule_by_output); with it, its layout for the target's chunks of W
// work-items (host::analyze).
struct HostForm {
    ir::Kernel kernel;
    host::Layout layout;
};
static HostForm lowered(const ir::Kernel& written, const host::HostTarget& target) {
    ir::Kernel kernel =
        host::schedule_by_output(ir::unroll_full_loops(ir::lower_async_copy(
                                     ir::lower_matrix(ir::matrix_loops_unhinted(written)))),
                                 target.vector_registers, target.lanes(), target.full_rate_lanes());
    host::Layout layout = host::analyze(kernel, target.lanes(), target.full_rate_lanes());
    return {std::move(kernel), std::move(layout)};
}
// Validates the kernel as written first: the lowerings rely on the validator's guarantees
// (declared names, uniform barriers).
static HostForm host_form(const ir::Kernel& written, const host::HostTarget& target) {
    ir::validate_for_codegen(written);
    return lowered(written, target);
}

std::unique_ptr<HostKernel>
host::compile_with_features(const ir::Kernel& written, const Options& options,
                            const std::vector<std::string>& feature_changes) {
    Machine m = machine(written, options, feature_changes);
    HostForm form = host_form(written, m.target);
    const ir::Kernel& kernel = form.kernel;
    llvm::LLVMContext context;
    std::string diagnostics;
    std::unique_ptr<llvm::Module> module =
        optimized_module(kernel, options, m, form.layout, context, diagnostics);
    std::string text;
    llvm::raw_string_ostream text_os(text);
    module->print(text_os, nullptr);
    std::vector<unsigned char> object =
        emit(kernel, *module, *m.tm, llvm::CodeGenFileType::ObjectFile);
    if (!diagnostics.empty())
        compile_error(
            kernel, "LLVM reported errors",
            llvm::make_error<llvm::StringError>(diagnostics, llvm::inconvertibleErrorCode()));
    return link(kernel, m, std::move(object), std::move(text), std::move(form.layout));
}

std::unique_ptr<HostKernel> load_host_object(const ir::Kernel& written, const Options& options,
                                             const std::vector<unsigned char>& object) {
    Machine m = machine(written, options, {});
    HostForm form = lowered(written, m.target);
    return link(form.kernel, m, object, "; loaded from the disk cache as object code: no LLVM IR\n",
                std::move(form.layout));
}

// The machine of the options alone, for what does not depend on a kernel.
static host::HostTarget target_only(const Options& options) {
    static const ir::Kernel none = [] {
        ir::Kernel k;
        k.name = "target";
        return k;
    }();
    return machine(none, options, {}).target;
}

unsigned host::vector_bits(const Options& options) {
    return target_only(options).vector_bits;
}
unsigned host::full_rate_bits(const Options& options) {
    return target_only(options).full_rate_bits;
}

std::string host_target_id(const Options& options) {
    host::HostTarget t = target_only(options);
    return t.triple + " " + t.cpu + " " + t.features + (t.libmvec ? " libmvec" : "") +
           " llvm-" LLVM_VERSION_STRING;
}

std::string host_assembly(const ir::Kernel& written, const Options& options) {
    Machine m = machine(written, options, {});
    const HostForm form = host_form(written, m.target);
    llvm::LLVMContext context;
    std::string diagnostics;
    std::unique_ptr<llvm::Module> module =
        optimized_module(form.kernel, options, m, form.layout, context, diagnostics);
    std::vector<unsigned char> text =
        emit(form.kernel, *module, *m.tm, llvm::CodeGenFileType::AssemblyFile);
    return {text.begin(), text.end()};
}

std::string host_llvm_ir(const ir::Kernel& written, const Options& options, bool optimized) {
    Machine m = machine(written, options, {});
    const HostForm form = host_form(written, m.target);
    llvm::LLVMContext context;
    std::string diagnostics, text;
    std::unique_ptr<llvm::Module> module =
        optimized_module(form.kernel, options, m, form.layout, context, diagnostics, optimized);
    llvm::raw_string_ostream os(text);
    module->print(os, nullptr);
    return text;
}

} // namespace plexus::codegen
