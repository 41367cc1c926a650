// Code generators: IR -> source text for JIT backends, and IR -> host work-group functions for
// Direct backends. Each generator is one class in its own file, reached through a factory.
#pragma once

#include "plexus/ir.hpp"
#include "plexus/plugin.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace plexus::codegen {

// The largest work-group an NVIDIA GPU can always launch whatever registers a kernel uses
// (65536 registers, at most 255 a thread). The CUDA generators pass a declared work-group
// size on to ptxas (.reqntid / .maxntid / __launch_bounds__) only above it: below, the hint
// changes no launch and cost speed where measured (docs/benchmarks.md).
inline constexpr uint32_t unbounded_group_items = 256;

// Where a generator's time went, in seconds: what `plexus bench --first-launch` reports.
// setup: one-time work of the process (LLVM target, libdevice); lower: IR -> the target's IR
// or text; optimize: LLVM's pipeline; emit: LLVM IR -> PTX. A phase a generator lacks stays 0.
struct Phases {
    double setup = 0, lower = 0, optimize = 0, emit = 0;
};

struct Options {
    // Backend name, for native blocks: a Native statement with an entry for this name emits it
    // verbatim; otherwise its fallback is generated (no fallback: an InvalidKernel error).
    std::string backend;
    // Spellings that replace the catalog's standard ones (a plugin's intrinsic table);
    // intrinsic name -> spelling with $0, $1 ... for the arguments.
    std::map<std::string, std::string> spellings;
    // Target architecture where it matters: "sm_90" for PTX ("" picks sm_80).
    std::string arch;
    // The CPU host code is compiled for: "" is the host's own; a name LLVM knows ("znver3",
    // "x86-64-v3") and features ("+avx2,-avx512f") make builds reproducible across machines.
    std::string host_cpu{}, host_features{};
    // Where to record the time of each phase, or nullptr.
    Phases* phases = nullptr;
};

class SourceGenerator {
public:
    virtual ~SourceGenerator() = default;
    virtual plx_language language() const = 0;
    // Deterministic text for one kernel; the entry point is named like the kernel.
    // Throws plexus::Error (InvalidKernel for a kernel it cannot express, Unsupported when the
    // generator was not built).
    virtual std::string generate(const ir::Kernel& kernel, const Options& options) const = 0;
    // The work-group local memory a launch of the generated kernel must ask for on top of what
    // the code declares (plx_launch_dims.dynamic_local_bytes): the CUDA generators put shared
    // arrays past 48 KiB in dynamic shared memory. 0 for most languages.
    virtual uint32_t dynamic_local_bytes(const ir::Kernel&) const { return 0; }
};

std::unique_ptr<SourceGenerator> make_opencl_codegen();
std::unique_ptr<SourceGenerator> make_cuda_c_codegen();
// Through LLVM's NVPTX target; throws Unsupported when plexus was built without LLVM.
std::unique_ptr<SourceGenerator> make_ptx_codegen();

// The languages of plugin.h, one row each. Every place that names a language reads this
// table: the generator behind it, its name in reports, cache keys and messages, whether the
// router may send a kernel to a plugin that takes it, and `plexus codegen --lang`. A new
// generated language is a folder under core/src/codegen/ and one row here (CONTRIBUTING.md).
struct Language {
    plx_language id;
    const char* name;    // "ptx", "cuda_c", ...: reports, cache keys, messages
    const char* cli;     // its `plexus codegen --lang` value ("cuda-c"), or nullptr
    const char* backend; // the backend whose spellings `plexus codegen` uses ("cuda"), or nullptr
    // The text generator, or nullptr where plexus generates no text (a binary a plugin gave
    // back, the IR JSON, which the core writes itself).
    std::unique_ptr<SourceGenerator> (*make)();
    bool generated; // plexus produces it for a kernel: a plugin that takes it can be routed to
};
const std::vector<Language>& languages();
// The row of a language, or nullptr for a value this plexus does not know (a newer plugin's).
const Language* find_language(plx_language id);
// The generator for a language, or nullptr when plexus has none for it.
std::unique_ptr<SourceGenerator> make_codegen(plx_language language);

// ---- Direct backends: host code through LLVM ----------------------------------------------
// The work-group function's `user` argument is HostArgs: one pointer per kernel parameter, in
// order: a buffer parameter's element data, or the address of a scalar parameter's value.
struct HostArgs {
    void* const* args;
};

class HostKernel {
public:
    virtual ~HostKernel() = default;
    // Runs every work-item of one work-group; `user` points at a HostArgs.
    virtual plx_workgroup_fn function() const = 0;
    // The same function with the contiguous vector stores of its loops into buffers made
    // non-temporal (streaming: no read of each written line first, and the output not left in
    // the cache), ending in a store fence; nullptr where it has no such store, has atomics or
    // fences, or the target is not x86-64 (codegen/host/passes/streaming.cpp).
    virtual plx_workgroup_fn streaming_function() const = 0;
    // The optimized LLVM IR of the module, for reading (as plexus codegen --lang llvm-host
    // --optimized prints it).
    virtual const std::string& llvm_ir() const = 0;
    // The group-local bytes the function wants for a group of this size (the rule of
    // host_local_bytes(), from the layout it was compiled with: no walk of the IR).
    virtual uint64_t local_bytes(uint32_t work_group_size) const = 0;
    // The object code the function was linked from, for the disk cache; what runs is always
    // an object file, freshly compiled or read back, so the cache holds exactly what ran.
    virtual const std::vector<unsigned char>& object() const = 0;
};

// Lowers the kernel through LLVM 19 for the host CPU (or options.host_cpu), optimizes it,
// emits an object file and links it with ORC. Throws Unsupported when plexus was built without
// LLVM, Compile when LLVM rejects the module.
std::unique_ptr<HostKernel> compile_host(const ir::Kernel& kernel, const Options& options);
// Links object code that compile_host made for this kernel and target (HostKernel::object());
// throws Compile when it does not link. No lowering, no optimization: milliseconds.
std::unique_ptr<HostKernel> load_host_object(const ir::Kernel& kernel, const Options& options,
                                             const std::vector<unsigned char>& object);
// What host code depends on besides the kernel: target triple, CPU, features and the LLVM
// version ("x86_64-pc-linux-gnu znver3 +avx,+avx2,... llvm-19.1.7"), for cache keys.
std::string host_target_id(const Options& options);
// The kernel's optimized host assembly (plexus codegen --lang asm-host).
std::string host_assembly(const ir::Kernel& kernel, const Options& options);
// The kernel's host LLVM IR as the lowering builds it (the work-item loops, before LLVM's
// passes), or optimized as it is compiled (plexus codegen --lang llvm-host [--optimized]).
std::string host_llvm_ir(const ir::Kernel& kernel, const Options& options, bool optimized);

} // namespace plexus::codegen
