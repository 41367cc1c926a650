// Opens the CUDA driver (libcuda) at run time and resolves its function table, once per
// process; also the driver error helpers, which every other file uses.
#include "cuda_plugin.hpp"

#include <dlfcn.h>
#include <link.h>

#include <cstdlib>
#include <mutex>

namespace plx_cuda {
namespace {

Driver g_driver;
std::once_flag g_driver_once;
plx_status g_driver_status = PLX_OK;
std::string g_driver_message;

std::string library_path(void* handle, const std::string& fallback) {
    link_map* map = nullptr;
    if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_name != nullptr &&
        map->l_name[0] != '\0')
        return map->l_name;
    return fallback;
}

void open_driver() {
    // PLEXUS_CUDA_LIBRARY names the one library to open instead of the usual two; tests use it
    // to force a missing or fake driver. secure_getenv ignores it in setuid programs.
    const char* forced = secure_getenv("PLEXUS_CUDA_LIBRARY");
    std::vector<std::string> names;
    if (forced != nullptr && forced[0] != '\0')
        names.emplace_back(forced);
    else
        names = {"libcuda.so.1", "libcuda.so"};

    void* handle = nullptr;
    std::string opened;
    std::string first_error;
    for (const std::string& name : names) {
        // RTLD_LOCAL keeps the driver's symbols away from other plugins and the application.
        handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (handle != nullptr) {
            opened = name;
            break;
        }
        const char* why = dlerror();
        if (first_error.empty()) first_error = why != nullptr ? why : "unknown dlopen error";
    }
    if (handle == nullptr) {
        g_driver_status = PLX_ERROR_NO_DRIVER;
        g_driver_message = names.front() + " not found (" + first_error +
                           "): install the NVIDIA driver to use the cuda backend";
        return;
    }

    std::string missing;
    auto resolve = [&](const char* symbol, bool required) -> void* {
        void* fn = dlsym(handle, symbol);
        if (fn == nullptr && required)
            missing += (missing.empty() ? "" : ", ") + std::string(symbol);
        return fn;
    };
#define PLX_CUDA_RESOLVE_REQUIRED(fn)                                                              \
    g_driver.fn = reinterpret_cast<decltype(g_driver.fn)>(resolve(PLX_CUDA_NAME(fn), true));
#define PLX_CUDA_RESOLVE_OPTIONAL(fn)                                                              \
    g_driver.fn = reinterpret_cast<decltype(g_driver.fn)>(resolve(PLX_CUDA_NAME(fn), false));
    PLX_CUDA_REQUIRED_FUNCTIONS(PLX_CUDA_RESOLVE_REQUIRED)
    PLX_CUDA_OPTIONAL_FUNCTIONS(PLX_CUDA_RESOLVE_OPTIONAL)
#undef PLX_CUDA_RESOLVE_REQUIRED
#undef PLX_CUDA_RESOLVE_OPTIONAL
    // Drivers older than CUDA 12.8 export only the unversioned cuEventElapsedTime, whose
    // signature is the same as _v2's.
    if (g_driver.cuEventElapsedTime == nullptr)
        g_driver.cuEventElapsedTime = reinterpret_cast<decltype(g_driver.cuEventElapsedTime)>(
            dlsym(handle, "cuEventElapsedTime"));
    // Likewise cuDeviceGetUuid before CUDA 11.4 (_v2 differs only for MIG instances).
    if (g_driver.cuDeviceGetUuid == nullptr)
        g_driver.cuDeviceGetUuid =
            reinterpret_cast<decltype(g_driver.cuDeviceGetUuid)>(dlsym(handle, "cuDeviceGetUuid"));

    if (!missing.empty()) {
        g_driver_status = PLX_ERROR_NO_DRIVER;
        g_driver_message = library_path(handle, opened) +
                           " lacks required driver functions: " + missing +
                           ": the NVIDIA driver is too old (CUDA 11 or newer is needed) or this "
                           "is not the NVIDIA driver library";
        // The library is not ours to use; nothing resolved from it is called.
        g_driver = Driver{};
        dlclose(handle);
        return;
    }
    // The driver stays open for the life of the process: it starts threads and registers exit
    // handlers, and unloading it while those exist is unsafe.
    log(PLX_LOG_DEBUG, "cuda: opened " + library_path(handle, opened));
}

} // namespace

plx_status load_driver() {
    std::call_once(g_driver_once, open_driver);
    if (g_driver_status != PLX_OK) return fail(g_driver_status, g_driver_message);
    return PLX_OK;
}

const Driver& drv() {
    return g_driver;
}

std::string describe(const char* call, CUresult result) {
    const char* name = nullptr;
    const char* text = nullptr;
    if (g_driver.cuGetErrorName == nullptr ||
        g_driver.cuGetErrorName(result, &name) != CUDA_SUCCESS)
        name = nullptr;
    if (g_driver.cuGetErrorString == nullptr ||
        g_driver.cuGetErrorString(result, &text) != CUDA_SUCCESS)
        text = nullptr;
    std::string out = std::string(call) + " returned " + (name != nullptr ? name : "CUresult");
    out += " (" + std::to_string(static_cast<int>(result));
    if (text != nullptr) out += std::string(": ") + text;
    out += ")";
    return out;
}

plx_status cu_error(plx_status status, const char* what, const char* call, CUresult result) {
    return fail(status, std::string("cuda: ") + what + ": " + describe(call, result));
}

plx_status missing_function(const char* fn, const char* call) {
    return fail(PLX_ERROR_UNSUPPORTED, std::string("cuda: ") + fn + ": the driver has no " + call +
                                           " (a newer NVIDIA driver is needed)");
}

plx_status status_of(CUresult result) {
    switch (result) {
    case CUDA_SUCCESS: return PLX_OK;
    case CUDA_ERROR_OUT_OF_MEMORY: return PLX_ERROR_OUT_OF_MEMORY;
    case CUDA_ERROR_NO_DEVICE: return PLX_ERROR_NO_DEVICE;
    case CUDA_ERROR_NOT_FOUND: return PLX_ERROR_NOT_FOUND;
    case CUDA_ERROR_NOT_SUPPORTED: return PLX_ERROR_UNSUPPORTED;
    case CUDA_ERROR_INVALID_PTX:
    case CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
    case CUDA_ERROR_INVALID_IMAGE:
    case CUDA_ERROR_NO_BINARY_FOR_GPU:
    case CUDA_ERROR_JIT_COMPILER_NOT_FOUND:
    case CUDA_ERROR_JIT_COMPILATION_DISABLED:
    case CUDA_ERROR_INVALID_SOURCE: return PLX_ERROR_COMPILE;
    case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES: return PLX_ERROR_OUT_OF_RESOURCES;
    // Faults of a running kernel surface at the next synchronizing call.
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ASSERT: return PLX_ERROR_LAUNCH;
    default: return PLX_ERROR_DEVICE;
    }
}

} // namespace plx_cuda
