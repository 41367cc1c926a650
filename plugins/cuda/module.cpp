// Modules of the CUDA backend: PTX linked to a cubin by the driver's JIT, CUDA C compiled to a
// cubin by NVRTC (opened at run time when present), cubins loaded as they are; kernel lookup.
// A library routine's module is routines.cpp's.
#include "cuda_plugin.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <sstream>

#if __has_include(<nvrtc.h>)
#include <nvrtc.h>
#define PLX_CUDA_HAVE_NVRTC_H 1
#else
#define PLX_CUDA_HAVE_NVRTC_H 0
#endif

namespace plx_cuda {
namespace {

constexpr size_t kLogBytes = 16 * 1024;

std::vector<std::string> split_options(const char* options) {
    std::vector<std::string> out;
    std::istringstream in(options != nullptr ? options : "");
    for (std::string token; in >> token;)
        out.push_back(token);
    return out;
}

// The JIT options a PTX module accepts in module_load's `options`, in nvcc's spelling.
struct JitOptions {
    std::vector<CUjit_option> keys;
    std::vector<void*> values;
    void add(CUjit_option key, uintptr_t value) {
        keys.push_back(key);
        values.push_back(reinterpret_cast<void*>(value));
    }
};

plx_status parse_jit_options(const std::string& options, JitOptions* jit) {
    for (const std::string& t : split_options(options.c_str())) {
        if (t == "-lineinfo" || t == "--generate-line-info") {
            jit->add(CU_JIT_GENERATE_LINE_INFO, 1);
        } else if (t == "-G" || t == "--device-debug") {
            jit->add(CU_JIT_GENERATE_DEBUG_INFO, 1);
        } else if (t.size() == 3 && t[0] == '-' && t[1] == 'O' && t[2] >= '0' && t[2] <= '4') {
            jit->add(CU_JIT_OPTIMIZATION_LEVEL, uintptr_t(t[2] - '0'));
        } else if (t.rfind("-maxrregcount=", 0) == 0 && t.size() > 14 &&
                   t.find_first_not_of("0123456789", 14) == std::string::npos) {
            jit->add(CU_JIT_MAX_REGISTERS, std::strtoul(t.c_str() + 14, nullptr, 10));
        } else {
            return fail(PLX_ERROR_INVALID_ARGUMENT,
                        "cuda: module_load: unknown PTX option '" + t +
                            "' (accepted: -lineinfo, -G, -O0..-O4, -maxrregcount=N)");
        }
    }
    return PLX_OK;
}

std::string trimmed_log(const char* log) {
    std::string s(log);
    while (!s.empty() && (s.back() == '\n' || s.back() == ' '))
        s.pop_back();
    return s;
}

#if PLX_CUDA_HAVE_NVRTC_H
struct Nvrtc {
    decltype(&nvrtcGetErrorString) GetErrorString = nullptr;
    decltype(&nvrtcCreateProgram) CreateProgram = nullptr;
    decltype(&nvrtcDestroyProgram) DestroyProgram = nullptr;
    decltype(&nvrtcCompileProgram) CompileProgram = nullptr;
    decltype(&nvrtcGetProgramLogSize) GetProgramLogSize = nullptr;
    decltype(&nvrtcGetProgramLog) GetProgramLog = nullptr;
    decltype(&nvrtcGetCUBINSize) GetCUBINSize = nullptr;
    decltype(&nvrtcGetCUBIN) GetCUBIN = nullptr;
};

Nvrtc g_nvrtc;
std::once_flag g_nvrtc_once;
std::string g_nvrtc_missing; // empty once NVRTC is usable

void open_nvrtc() {
    // PLEXUS_NVRTC_LIBRARY names the one library to open (tests use it to force absence).
    const char* forced = secure_getenv("PLEXUS_NVRTC_LIBRARY");
    std::vector<std::string> names;
    if (forced != nullptr && forced[0] != '\0')
        names.emplace_back(forced);
    else
        names = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"};
    void* handle = nullptr;
    for (const std::string& n : names)
        if ((handle = dlopen(n.c_str(), RTLD_NOW | RTLD_LOCAL)) != nullptr) break;
    if (handle == nullptr) {
        const char* why = dlerror();
        g_nvrtc_missing = "NVRTC (" + names.front() + ") is not installed (" +
                          (why != nullptr ? why : "not found") +
                          "): install the CUDA toolkit's NVRTC to load CUDA C, or pass PTX";
        return;
    }
    std::string missing;
    auto sym = [&](const char* name) {
        void* p = dlsym(handle, name);
        if (p == nullptr) missing += (missing.empty() ? "" : ", ") + std::string(name);
        return p;
    };
    // clang-format off
#define PLX_NVRTC_LOAD(field) g_nvrtc.field = reinterpret_cast<decltype(g_nvrtc.field)>(sym("nvrtc" #field));
    PLX_NVRTC_LOAD(GetErrorString) PLX_NVRTC_LOAD(CreateProgram) PLX_NVRTC_LOAD(DestroyProgram)
    PLX_NVRTC_LOAD(CompileProgram) PLX_NVRTC_LOAD(GetProgramLogSize) PLX_NVRTC_LOAD(GetProgramLog)
    PLX_NVRTC_LOAD(GetCUBINSize) PLX_NVRTC_LOAD(GetCUBIN)
#undef PLX_NVRTC_LOAD
        // clang-format on
        if (!missing.empty()) {
        g_nvrtc_missing = "the NVRTC library found lacks " + missing +
                          ": it is too old (CUDA 11.1 or newer is needed)";
        g_nvrtc = Nvrtc{};
        dlclose(handle);
    }
}

plx_status compile_cuda_c(plx_device_s* d, const char* source, size_t bytes, const char* options,
                          std::vector<char>* cubin) {
    std::call_once(g_nvrtc_once, open_nvrtc);
    if (!g_nvrtc_missing.empty())
        return fail(PLX_ERROR_UNSUPPORTED, "cuda: module_load of CUDA C: " + g_nvrtc_missing);
    const Nvrtc& rtc = g_nvrtc;
    std::string text(source, bytes);
    nvrtcProgram prog = nullptr;
    nvrtcResult r = rtc.CreateProgram(&prog, text.c_str(), "plexus.cu", 0, nullptr, nullptr);
    if (r != NVRTC_SUCCESS)
        return fail(PLX_ERROR_COMPILE,
                    std::string("cuda: nvrtcCreateProgram failed: ") + rtc.GetErrorString(r));
    // A cubin for the device's exact architecture: no PTX JIT at load, and no dependence on
    // the driver accepting NVRTC's PTX version.
    std::vector<std::string> args = {"--gpu-architecture=" + std::string(d->info.arch)};
    for (std::string& t : split_options(options))
        args.push_back(std::move(t));
    std::vector<const char*> argv;
    for (const std::string& a : args)
        argv.push_back(a.c_str());
    r = rtc.CompileProgram(prog, static_cast<int>(argv.size()), argv.data());
    std::string rtc_log;
    size_t log_size = 0;
    if (rtc.GetProgramLogSize(prog, &log_size) == NVRTC_SUCCESS && log_size > 1) {
        rtc_log.resize(log_size);
        rtc.GetProgramLog(prog, rtc_log.data());
        rtc_log.resize(std::strlen(rtc_log.c_str()));
    }
    plx_status status = PLX_OK;
    if (r != NVRTC_SUCCESS) {
        status = fail(PLX_ERROR_COMPILE, std::string("cuda: NVRTC compilation for ") +
                                             d->info.arch + " failed (" + rtc.GetErrorString(r) +
                                             "):\n" + trimmed_log(rtc_log.c_str()));
    } else {
        if (!rtc_log.empty()) log(PLX_LOG_DEBUG, "cuda: NVRTC log:\n" + rtc_log);
        size_t size = 0;
        r = rtc.GetCUBINSize(prog, &size);
        if (r == NVRTC_SUCCESS) {
            cubin->resize(size);
            r = rtc.GetCUBIN(prog, cubin->data());
        }
        if (r != NVRTC_SUCCESS)
            status = fail(PLX_ERROR_COMPILE,
                          std::string("cuda: nvrtcGetCUBIN failed: ") + rtc.GetErrorString(r));
    }
    rtc.DestroyProgram(&prog);
    return status;
}
#else
plx_status compile_cuda_c(plx_device_s*, const char*, size_t, const char*, std::vector<char>*) {
    return fail(PLX_ERROR_UNSUPPORTED,
                "cuda: module_load of CUDA C: this plugin was built without nvrtc.h, so NVRTC "
                "cannot be used; pass PTX");
}
#endif

const char* language_name(plx_language language) {
    switch (language) {
    case PLX_LANG_PTX: return "PTX";
    case PLX_LANG_CUDA_C: return "CUDA C";
    case PLX_LANG_CUDA_BINARY: return "a CUDA binary";
    default: return "an unsupported language";
    }
}

} // namespace

plx_status load_ptx_to_cubin(const char* ptx, size_t ptx_bytes, const std::string& options,
                             std::vector<char>* cubin) {
    JitOptions jit;
    if (plx_status s = parse_jit_options(options, &jit); s != PLX_OK) return s;
    // The JIT reads PTX up to its NUL; a NUL the caller counted in source_bytes is not text.
    while (ptx_bytes > 0 && ptx[ptx_bytes - 1] == '\0')
        --ptx_bytes;
    std::string text(ptx, ptx_bytes);
    std::vector<char> info_log(kLogBytes, '\0'), error_log(kLogBytes, '\0');
    jit.add(CU_JIT_INFO_LOG_BUFFER, reinterpret_cast<uintptr_t>(info_log.data()));
    jit.add(CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, kLogBytes);
    jit.add(CU_JIT_ERROR_LOG_BUFFER, reinterpret_cast<uintptr_t>(error_log.data()));
    jit.add(CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, kLogBytes);
    jit.add(CU_JIT_TARGET_FROM_CUCONTEXT, 0);

    CUlinkState link = nullptr;
    PLX_CU_TRY("module_load: starting the PTX link", cuLinkCreate,
               static_cast<unsigned>(jit.keys.size()), jit.keys.data(), jit.values.data(), &link);
    const char* failed_call = nullptr;
    CUresult r = drv().cuLinkAddData(link, CU_JIT_INPUT_PTX, text.data(), text.size() + 1,
                                     "plexus.ptx", 0, nullptr, nullptr);
    if (r != CUDA_SUCCESS) failed_call = PLX_CUDA_NAME(cuLinkAddData);
    void* image = nullptr;
    size_t image_bytes = 0;
    if (r == CUDA_SUCCESS) {
        r = drv().cuLinkComplete(link, &image, &image_bytes);
        if (r != CUDA_SUCCESS) failed_call = PLX_CUDA_NAME(cuLinkComplete);
    }
    if (r == CUDA_SUCCESS) {
        // The image belongs to the link state; keep a copy for module_get_binary.
        const char* bytes = static_cast<const char*>(image);
        cubin->assign(bytes, bytes + image_bytes);
        if (info_log[0] != '\0')
            log(PLX_LOG_DEBUG, "cuda: PTX JIT log:\n" + trimmed_log(info_log.data()));
    }
    drv().cuLinkDestroy(link);
    if (r != CUDA_SUCCESS)
        return fail(status_of(r) == PLX_ERROR_OUT_OF_MEMORY ? PLX_ERROR_OUT_OF_MEMORY
                                                            : PLX_ERROR_COMPILE,
                    "cuda: PTX compilation failed: " + describe(failed_call, r) + "\n" +
                        trimmed_log(error_log.data()));
    return PLX_OK;
}

plx_status load_cubin(const std::vector<char>& cubin, CUmodule* module) {
    std::vector<char> error_log(kLogBytes, '\0');
    CUjit_option keys[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void* values[] = {error_log.data(), reinterpret_cast<void*>(uintptr_t(kLogBytes))};
    CUresult r = drv().cuModuleLoadDataEx(module, cubin.data(), 2, keys, values);
    if (r != CUDA_SUCCESS)
        return fail(status_of(r) == PLX_ERROR_OUT_OF_MEMORY ? PLX_ERROR_OUT_OF_MEMORY
                                                            : PLX_ERROR_COMPILE,
                    "cuda: loading the module image failed: " +
                        describe(PLX_CUDA_NAME(cuModuleLoadDataEx), r) + "\n" +
                        trimmed_log(error_log.data()));
    return PLX_OK;
}

plx_status module_load(plx_device device, plx_language language, const char* source,
                       size_t source_bytes, const char* options, plx_module* module) {
    if (device == nullptr || module == nullptr || source == nullptr)
        return fail(PLX_ERROR_INVALID_ARGUMENT,
                    "cuda: module_load: device, source or module is NULL");
    if (source_bytes == 0)
        return fail(PLX_ERROR_INVALID_ARGUMENT, "cuda: module_load: source is empty");
    if (language == PLX_LANG_ROUTINE)
        return routine_load(device, source, source_bytes, options, module);
    if (language != PLX_LANG_PTX && language != PLX_LANG_CUDA_C && language != PLX_LANG_CUDA_BINARY)
        return fail(PLX_ERROR_INVALID_ARGUMENT,
                    "cuda: module_load: language " + std::to_string(int(language)) +
                        " is not one of PTX, CUDA C, a CUDA binary or a library routine");
    if (plx_status s = make_current(device); s != PLX_OK) return s;

    std::vector<char> cubin;
    plx_status s = PLX_OK;
    if (language == PLX_LANG_PTX) {
        s = load_ptx_to_cubin(source, source_bytes, options != nullptr ? options : "", &cubin);
    } else if (language == PLX_LANG_CUDA_C) {
        s = compile_cuda_c(device, source, source_bytes, options, &cubin);
    } else {
        // Options steer compilation; a binary is already compiled, so they only get checked.
        JitOptions unused;
        s = parse_jit_options(options != nullptr ? options : "", &unused);
        cubin.assign(source, source + source_bytes);
    }
    if (s != PLX_OK) return s;

    auto m = std::make_unique<plx_module_s>();
    m->device = device;
    if (plx_status l = load_cubin(cubin, &m->module); l != PLX_OK) {
        return fail(l, std::string(last_error_text()) + " (from " + language_name(language) + ")");
    }
    m->cubin = std::move(cubin);
    *module = m.release();
    return PLX_OK;
}

void module_unload(plx_module module) {
    if (module == nullptr) return;
    // A routine's module holds no driver object.
    if (module->module != nullptr && make_current(module->device) == PLX_OK)
        drv().cuModuleUnload(module->module);
    delete module;
}

plx_status module_get_binary(plx_module module, plx_language* language, void* data, size_t* bytes) {
    if (module == nullptr || language == nullptr || bytes == nullptr)
        return fail(PLX_ERROR_INVALID_ARGUMENT,
                    "cuda: module_get_binary: module, language or bytes is NULL");
    // Nothing to cache: loading a routine again by its name costs nothing.
    if (module->routine != nullptr)
        return fail(PLX_ERROR_UNSUPPORTED,
                    "cuda: module_get_binary: the module is library routine '" +
                        module->routine_kernel->name + "', which has no binary");
    *language = PLX_LANG_CUDA_BINARY;
    if (data == nullptr) {
        *bytes = module->cubin.size();
        return PLX_OK;
    }
    if (*bytes < module->cubin.size())
        return fail(PLX_ERROR_INVALID_ARGUMENT,
                    "cuda: module_get_binary: capacity " + std::to_string(*bytes) +
                        " is smaller than the binary's " + std::to_string(module->cubin.size()) +
                        " bytes");
    std::memcpy(data, module->cubin.data(), module->cubin.size());
    *bytes = module->cubin.size();
    return PLX_OK;
}

plx_status kernel_get(plx_module module, const char* name, plx_kernel* kernel) {
    if (module == nullptr || name == nullptr || kernel == nullptr)
        return fail(PLX_ERROR_INVALID_ARGUMENT, "cuda: kernel_get: module, name or kernel is NULL");
    if (module->routine != nullptr) { // plugin.h: a routine's module gives it for any name
        *kernel = module->routine_kernel.get();
        return PLX_OK;
    }
    std::lock_guard<std::mutex> lock(module->kernels_mutex);
    // One handle per name, so attributes are queried once and cached for every launch.
    if (auto it = module->kernels.find(name); it != module->kernels.end()) {
        *kernel = it->second.get();
        return PLX_OK;
    }
    if (plx_status s = make_current(module->device); s != PLX_OK) return s;
    auto k = std::make_unique<plx_kernel_s>();
    k->module = module;
    k->name = name;
    CUresult r = drv().cuModuleGetFunction(&k->function, module->module, name);
    if (r == CUDA_ERROR_NOT_FOUND)
        return fail(PLX_ERROR_NOT_FOUND,
                    std::string("cuda: kernel_get: the module has no kernel named '") + name +
                        "' (kernels need extern \"C\" or their mangled name)");
    if (r != CUDA_SUCCESS)
        return cu_error(status_of(r), "kernel_get", PLX_CUDA_NAME(cuModuleGetFunction), r);
    int max_threads = 0, static_shared = 0;
    PLX_CU_TRY("kernel_get: reading the kernel's attributes", cuFuncGetAttribute, &max_threads,
               CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, k->function);
    PLX_CU_TRY("kernel_get: reading the kernel's attributes", cuFuncGetAttribute, &static_shared,
               CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, k->function);
    k->max_threads = static_cast<uint32_t>(max_threads);
    k->static_shared = static_cast<uint32_t>(static_shared);
    // Parameter sizes let launch reject a wrong argument list instead of reading past it.
    if (drv().cuFuncGetParamInfo != nullptr) {
        k->params_known = true;
        for (size_t i = 0; i < 4096; ++i) {
            size_t offset = 0, size = 0;
            r = drv().cuFuncGetParamInfo(k->function, i, &offset, &size);
            if (r == CUDA_ERROR_INVALID_VALUE) break;
            if (r != CUDA_SUCCESS) {
                k->params_known = false;
                k->param_sizes.clear();
                break;
            }
            k->param_sizes.push_back(static_cast<uint32_t>(size));
        }
    }
    *kernel = k.get();
    module->kernels.emplace(name, std::move(k));
    return PLX_OK;
}

} // namespace plx_cuda
