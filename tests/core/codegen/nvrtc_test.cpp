// Compiles the generated CUDA C of every test kernel with NVRTC, as the CUDA plugin does: no
// include path, so the text must need no header, and no warning. One program per kernel for
// sm_80 and sm_90. Exits 77 (SKIP) when libnvrtc cannot be opened.
#define DOCTEST_CONFIG_IMPLEMENT
#include "core/kernel/async_copy/async_copy_kernel.hpp"
#include "kernels.hpp"

#include "plexus/codegen.hpp"

#include <doctest/doctest.h>

#include <cstdio>
#include <dlfcn.h>
#include <string>

namespace {

// NVRTC's C API, declared here so that the test needs no CUDA header: the functions the
// CUDA plugin uses, with their documented signatures (nvrtcResult is an int, 0 success).
struct Nvrtc {
    using Program = struct Opaque*;
    int (*create)(Program*, const char*, const char*, int, const char* const*,
                  const char* const*) = nullptr;
    int (*compile)(Program, int, const char* const*) = nullptr;
    int (*log_size)(Program, size_t*) = nullptr;
    int (*log)(Program, char*) = nullptr;
    int (*destroy)(Program*) = nullptr;

    bool open() {
        void* lib = nullptr;
        for (const char* name : {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"})
            if ((lib = dlopen(name, RTLD_NOW | RTLD_LOCAL))) break;
        if (!lib) return false;
        create = reinterpret_cast<decltype(create)>(dlsym(lib, "nvrtcCreateProgram"));
        compile = reinterpret_cast<decltype(compile)>(dlsym(lib, "nvrtcCompileProgram"));
        log_size = reinterpret_cast<decltype(log_size)>(dlsym(lib, "nvrtcGetProgramLogSize"));
        log = reinterpret_cast<decltype(log)>(dlsym(lib, "nvrtcGetProgramLog"));
        destroy = reinterpret_cast<decltype(destroy)>(dlsym(lib, "nvrtcDestroyProgram"));
        return create && compile && log_size && log && destroy;
    }

    // Compiles `source`; returns NVRTC's status and puts its log in `out`.
    int run(const std::string& source, const std::string& arch, std::string& out) const {
        Program prog = nullptr;
        int status = create(&prog, source.c_str(), "plexus.cu", 0, nullptr, nullptr);
        if (status != 0) return status;
        const std::string option = "--gpu-architecture=" + arch;
        const char* options[] = {option.c_str()};
        status = compile(prog, 1, options);
        size_t size = 0;
        log_size(prog, &size);
        out.assign(size, '\0');
        if (size) log(prog, out.data());
        destroy(&prog);
        return status;
    }
};

Nvrtc g_nvrtc;

} // namespace

// From the samples' kernels.hpp, whose name this directory's kernels.hpp shadows.
namespace plexus::samples {
const ir::Kernel* find(std::string_view name);
std::vector<std::string> names();
} // namespace plexus::samples

TEST_CASE("NVRTC compiles the generated CUDA C of every test kernel") {
    auto gen = plexus::codegen::make_cuda_c_codegen();
    for (auto& tk : codegen_test::all_kernels()) {
        const std::string source = gen->generate(tk.kernel, {"cuda", {}, ""});
        for (const char* arch : {"sm_80", "sm_90"}) {
            std::string log;
            int status = g_nvrtc.run(source, arch, log);
            INFO(tk.kernel.name << " for " << arch << ":\n" << log);
            CHECK(status == 0);
            CHECK(log.find("warning") == std::string::npos);
        }
    }
}

TEST_CASE("NVRTC compiles the generated CUDA C of every sample kernel") {
    // The samples use what the test kernels do not: matrix fragments in shared memory (wmma's
    // .shared form on a 32-bit shared address), subgroups, the math library.
    auto gen = plexus::codegen::make_cuda_c_codegen();
    for (const std::string& name : plexus::samples::names()) {
        const std::string source = gen->generate(*plexus::samples::find(name), {"cuda", {}, ""});
        std::string log;
        int status = g_nvrtc.run(source, "sm_90", log);
        INFO(name << ":\n" << log);
        CHECK(status == 0);
        CHECK(log.find("warning") == std::string::npos);
    }
}

TEST_CASE("shared arrays past 48 KiB are pointers into the dynamic shared array") {
    auto gen = plexus::codegen::make_cuda_c_codegen();
    const std::string source =
        gen->generate(*plexus::samples::find("histogram_wide"), {"cuda", {}, ""});
    INFO(source);
    CHECK(source.find("extern __shared__ __align__(128) unsigned char plx_dynamic_shared[];") !=
          std::string::npos);
    CHECK(source.find(
              "unsigned* const shared0 = reinterpret_cast<unsigned*>(plx_dynamic_shared + 0);") !=
          std::string::npos);
    CHECK(source.find("__shared__ unsigned") == std::string::npos);
    const std::string small = gen->generate(*plexus::samples::find("histogram"), {"cuda", {}, ""});
    CHECK(small.find("plx_dynamic_shared") == std::string::npos);
    std::string log;
    CHECK(g_nvrtc.run(source, "sm_80", log) == 0);
}

TEST_CASE("NVRTC compiles asynchronous copies: cp.async from sm_80, the copy at once below") {
    auto gen = plexus::codegen::make_cuda_c_codegen();
    for (const auto* k : {&async_copy_test::tiles_kernel<plexus::half, 8>().ir(),
                          &async_copy_test::tiles_kernel<float, 1>().ir(),
                          &async_copy_test::tiles_kernel<int64_t, 1, true>().ir()}) {
        const std::string source = gen->generate(*k, {"cuda", {}, ""});
        CHECK(source.find("__align__(16)") != std::string::npos);
        CHECK(source.find("cp.async.wait_group 1;") != std::string::npos);
        for (const char* arch : {"sm_75", "sm_80", "sm_90"}) {
            std::string log;
            int status = g_nvrtc.run(source, arch, log);
            INFO(k->name << " for " << arch << ":\n" << log << "\n" << source);
            CHECK(status == 0);
            CHECK(log.find("warning") == std::string::npos);
        }
    }
}

int main(int argc, char** argv) {
    if (!g_nvrtc.open()) {
        std::printf("SKIP: libnvrtc could not be opened (%s)\n", dlerror());
        return 77;
    }
    doctest::Context ctx(argc, argv);
    return ctx.run();
}
