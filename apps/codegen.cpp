// `plexus codegen KERNEL --lang LANG`: prints a sample kernel (or a JSON IR file) as IR text,
// JSON, host LLVM IR (as lowered, or optimized), host assembly, OpenCL C, CUDA C or PTX.
#include "plexus/codegen.hpp"
#include "app.hpp"
#include "kernels.hpp"

#include <fstream>
#include <iostream>
#include <sstream>

namespace plexus::app {
namespace {

// The row of a generated language by its --lang name, or nullptr.
const codegen::Language* generated_language(const std::string& cli) {
    for (const codegen::Language& l : codegen::languages())
        if (l.cli && l.make && cli == l.cli) return &l;
    return nullptr;
}

int usage(std::ostream& out, int status) {
    out << "usage: plexus codegen KERNEL --lang LANG [--arch sm_XY] [--optimized] [--cpu NAME] "
           "[--features LIST]\n"
           "  KERNEL  a sample kernel (";
    auto names = samples::names();
    for (size_t i = 0; i < names.size(); ++i)
        out << (i ? ", " : "") << names[i];
    out << ") or the path of a JSON IR file (schema plexus-ir/2.1, /2 or /1)\n"
           "  LANG    ir, json, llvm-host, asm-host";
    for (const codegen::Language& l : codegen::languages())
        if (l.cli && l.make) out << ", " << l.cli;
    out << "\n"
           "  --arch  the GPU architecture for ptx (default sm_80)\n"
           "  --optimized  llvm-host after LLVM's passes, as the native backend compiles it "
           "(without:\n"
           "               as the lowering builds it, before vectorization); asm-host is always "
           "optimized\n";
    return status;
}

int run_codegen(const std::vector<std::string>& args) {
    std::string kernel, lang, arch, cpu, features;
    bool optimized = false;
    for (size_t i = 0; i < args.size(); ++i) {
        if (args[i] == "--help" || args[i] == "-h") return usage(std::cout, 0);
        if (args[i] == "--optimized") {
            optimized = true;
            continue;
        }
        if ((args[i] == "--lang" || args[i] == "--arch" || args[i] == "--cpu" ||
             args[i] == "--features") &&
            i + 1 < args.size()) {
            (args[i] == "--lang"   ? lang
             : args[i] == "--arch" ? arch
             : args[i] == "--cpu"  ? cpu
                                   : features) = args[i + 1];
            ++i;
        } else if (kernel.empty() && args[i].rfind("--", 0) != 0) {
            kernel = args[i];
        } else {
            std::cerr << "plexus codegen: unexpected argument '" << args[i] << "'\n";
            return usage(std::cerr, 2);
        }
    }
    if (kernel.empty() || lang.empty()) return usage(std::cerr, 2);
    ir::Kernel k = load_kernel(kernel);
    codegen::Options options;
    options.arch = arch;
    options.host_cpu = cpu;
    options.host_features = features;
    if (lang == "ir") {
        std::cout << ir::print(k);
    } else if (lang == "json") {
        std::cout << ir::to_json(k) << "\n";
    } else if (lang == "llvm-host" || lang == "asm-host") {
        options.backend = "native";
        std::cout << (lang == "asm-host" ? codegen::host_assembly(k, options)
                                         : codegen::host_llvm_ir(k, options, optimized));
    } else if (const codegen::Language* l = generated_language(lang)) {
        options.backend = l->backend;
        std::cout << l->make()->generate(k, options);
    } else {
        std::cerr << "plexus codegen: unknown language '" << lang << "'\n";
        return usage(std::cerr, 2);
    }
    return 0;
}

const Registration reg{
    {"codegen", run_codegen,
     "print a kernel as IR, JSON, host LLVM IR or assembly, OpenCL C, CUDA C or PTX"}};

} // namespace
} // namespace plexus::app
