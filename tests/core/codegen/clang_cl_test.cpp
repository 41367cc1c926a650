// Compiles the generated OpenCL C with Clang's OpenCL front end, which PoCL and most OpenCL
// compilers are built on, for the bodies of the float atomic helpers that no device here
// keeps (docs/architecture.md, "Float atomics"):
// - every test kernel for SPIR as OpenCL C 1.2, 2.0 and 3.0: for SPIR, Clang defines every
//   cl_ext_float_atomics feature macro from 2.0 on, so the extension bodies, which the OpenCL
//   plugin's 1.2 builds never keep, compile too;
// - the NVIDIA bodies (inline PTX, kept where __NV_CL_C_VERSION is defined) of global float
//   adds, their value used and unused, to PTX for nvptx64, assembled by ptxas for sm_80 and
//   sm_90. Clang's OpenCL mode takes inline assembly only as `__asm__`; NVIDIA's compiler also
//   as `asm`, which the generated code uses: the check defines one as the other.
// Exits 77 (SKIP) when Clang was not found at configure time; without ptxas the PTX is checked
// as text only.
#define DOCTEST_CONFIG_IMPLEMENT
#include "ir_build.hpp"
#include "kernels.hpp"
#include "tools.hpp"

#include "plexus/codegen.hpp"

#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace fs = std::filesystem;
using codegen_test::run;
using codegen_test::TempDir;

namespace {

std::string opencl_c(const plexus::ir::Kernel& k) {
    return plexus::codegen::make_opencl_codegen()->generate(k, {"opencl", {}, ""});
}

// Clang on one OpenCL C file; returns its output, with the command, after checking it
// succeeded without a warning.
std::string clang(const fs::path& source, const std::string& args) {
    std::string output;
    const std::string cmd = std::string("'") + PLEXUS_CLANG +
                            "' -x cl -Xclang -finclude-default-header " + args + " '" +
                            source.string() + "'";
    const int status = run(cmd, output);
    INFO(cmd << "\n" << output);
    CHECK(status == 0);
    CHECK(output.find("warning") == std::string::npos);
    return output;
}

// Global float adds only (no work-item functions, which nvptx has no library for): f32 and f64
// with their value unused, f64 with it stored.
plexus::ir::Kernel global_adds() {
    using namespace codegen_test::build;
    using plexus::ir::Access, plexus::ir::AtomicOp, plexus::ir::Space;
    return make("global_adds",
                {buffer("f", Scalar::F32, Access::ReadWrite),
                 buffer("d", Scalar::F64, Access::ReadWrite),
                 buffer("o", Scalar::F64, Access::Write)},
                {},
                {eval(atomic(AtomicOp::Add, "f", Space::Global, Scalar::F32, i32(0), f32(1.0f))),
                 eval(atomic(AtomicOp::Add, "d", Space::Global, Scalar::F64, i32(0), f64(2.0))),
                 gstore("o", i32(0),
                        atomic(AtomicOp::Add, "d", Space::Global, Scalar::F64, i32(1), f64(3.0)))});
}

} // namespace

TEST_CASE("Clang compiles every test kernel's OpenCL C as OpenCL C 1.2, 2.0 and 3.0 (extension "
          "bodies kept)") {
    TempDir dir;
    for (auto& tk : codegen_test::all_kernels()) {
        const fs::path source = dir.path / (tk.kernel.name + ".cl");
        std::ofstream(source) << opencl_c(tk.kernel);
        for (const char* std : {"CL1.2", "CL2.0", "CL3.0"}) {
            INFO(tk.kernel.name << " as " << std);
            clang(source, std::string("-cl-std=") + std + " -target spir64 -fsyntax-only");
        }
    }
}

TEST_CASE(
    "the NVIDIA bodies of the global float adds are atom / red instructions ptxas assembles") {
    TempDir dir;
    const fs::path source = dir.path / "global_adds.cl", ptx = dir.path / "global_adds.ptx";
    std::ofstream(source) << opencl_c(global_adds());
    clang(source,
          "-cl-std=CL1.2 -target nvptx64-nvidia-nvcl -Xclang -target-cpu -Xclang sm_80 -Xclang "
          "-cl-ext=+cl_khr_fp64,+cl_khr_int64_base_atomics -D__NV_CL_C_VERSION=300 -Dasm=__asm__ "
          "-O2 -S -o '" +
              ptx.string() + "'");
    std::stringstream text;
    text << std::ifstream(ptx).rdbuf();
    INFO(text.str());
    for (const char* instruction :
         {"red.global.add.f32 [", "red.global.add.f64 [", "atom.global.add.f64 %"})
        CHECK_MESSAGE(text.str().find(instruction) != std::string::npos, instruction);
    CHECK(text.str().find("atom.global.cas") == std::string::npos); // no compare-exchange loop
    if (std::string(PLEXUS_PTXAS).empty()) return;
    for (const char* arch : {"sm_80", "sm_90"}) {
        std::string output;
        const std::string cmd = std::string("'") + PLEXUS_PTXAS + "' -arch=" + arch +
                                " -o /dev/null '" + ptx.string() + "'";
        INFO(cmd);
        CHECK(run(cmd, output) == 0);
        CHECK(output.empty());
    }
}

int main(int argc, char** argv) {
    if (std::string(PLEXUS_CLANG).empty() || access(PLEXUS_CLANG, X_OK) != 0) {
        std::printf("SKIP: clang was not found when plexus was configured\n");
        return 77;
    }
    doctest::Context ctx(argc, argv);
    return ctx.run();
}
