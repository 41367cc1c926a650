// Opens the OpenCL ICD loader with dlopen and resolves the one table of functions the plugin
// uses; also names OpenCL error codes for messages.
#include "opencl_plugin.hpp"

#include <dlfcn.h>
#include <stdlib.h>

namespace plx_opencl {
namespace {

Api g_api;
std::once_flag g_once;
bool g_loaded = false;
std::string g_load_error;

// Tries one library name; on failure appends "name: dlerror" to `errors`.
void* open_library(const char* name, std::string& errors) {
    void* handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
        const char* why = dlerror();
        if (!errors.empty()) errors += "; ";
        const std::string text = why != nullptr ? why : "unknown dlopen error";
        // glibc's message already starts with the name; other libcs may not.
        errors += text.find(name) != std::string::npos ? text : strf("%s: %s", name, text.c_str());
    }
    return handle;
}

void load_once() {
    std::string errors;
    void* handle = nullptr;
    // secure_getenv: a setuid program must not be talked into loading another library.
    const char* override_name = secure_getenv("PLEXUS_OPENCL_LIBRARY");
    if (override_name != nullptr && override_name[0] != '\0') {
        handle = open_library(override_name, errors);
        if (handle == nullptr) {
            g_load_error = strf("cannot open the OpenCL ICD loader named by "
                                "PLEXUS_OPENCL_LIBRARY: %s",
                                errors.c_str());
            return;
        }
    } else {
        handle = open_library("libOpenCL.so.1", errors);
        if (handle == nullptr) handle = open_library("libOpenCL.so", errors);
        if (handle == nullptr) {
            g_load_error = strf("cannot open the OpenCL ICD loader (install ocl-icd-libopencl1 "
                                "or another libOpenCL.so.1): %s",
                                errors.c_str());
            return;
        }
    }
    // Every function is OpenCL 1.1 or 1.2; a loader without one is too old to use at all.
    std::string missing;
#define PLX_CL_RESOLVE(fn)                                                                         \
    g_api.fn = reinterpret_cast<decltype(g_api.fn)>(dlsym(handle, #fn));                           \
    if (g_api.fn == nullptr) missing += (missing.empty() ? "" : ", ") + std::string(#fn);
    PLX_CL_FUNCTIONS(PLX_CL_RESOLVE)
#undef PLX_CL_RESOLVE
    if (!missing.empty()) {
        g_load_error =
            strf("the OpenCL ICD loader lacks %s (OpenCL 1.2 is required)", missing.c_str());
        dlclose(handle);
        g_api = Api{};
        return;
    }
    // The library stays open for the life of the process: ICDs do not support being unloaded
    // and reloaded reliably, and the table may be used again if the plugin is initialized again.
    g_loaded = true;
}

} // namespace

const Api* load_api(std::string* why) {
    std::call_once(g_once, load_once);
    if (!g_loaded) {
        if (why != nullptr) *why = g_load_error;
        return nullptr;
    }
    return &g_api;
}

const Api& cl() {
    return g_api;
}

const char* cl_error_name(cl_int code) {
    switch (code) {
#define PLX_CL_ERROR(name)                                                                         \
    case name: return #name;
        PLX_CL_ERROR(CL_SUCCESS)
        PLX_CL_ERROR(CL_DEVICE_NOT_FOUND)
        PLX_CL_ERROR(CL_DEVICE_NOT_AVAILABLE)
        PLX_CL_ERROR(CL_COMPILER_NOT_AVAILABLE)
        PLX_CL_ERROR(CL_MEM_OBJECT_ALLOCATION_FAILURE)
        PLX_CL_ERROR(CL_OUT_OF_RESOURCES)
        PLX_CL_ERROR(CL_OUT_OF_HOST_MEMORY)
        PLX_CL_ERROR(CL_PROFILING_INFO_NOT_AVAILABLE)
        PLX_CL_ERROR(CL_MEM_COPY_OVERLAP)
        PLX_CL_ERROR(CL_IMAGE_FORMAT_MISMATCH)
        PLX_CL_ERROR(CL_IMAGE_FORMAT_NOT_SUPPORTED)
        PLX_CL_ERROR(CL_BUILD_PROGRAM_FAILURE)
        PLX_CL_ERROR(CL_MAP_FAILURE)
        PLX_CL_ERROR(CL_MISALIGNED_SUB_BUFFER_OFFSET)
        PLX_CL_ERROR(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
        PLX_CL_ERROR(CL_COMPILE_PROGRAM_FAILURE)
        PLX_CL_ERROR(CL_LINKER_NOT_AVAILABLE)
        PLX_CL_ERROR(CL_LINK_PROGRAM_FAILURE)
        PLX_CL_ERROR(CL_DEVICE_PARTITION_FAILED)
        PLX_CL_ERROR(CL_KERNEL_ARG_INFO_NOT_AVAILABLE)
        PLX_CL_ERROR(CL_INVALID_VALUE)
        PLX_CL_ERROR(CL_INVALID_DEVICE_TYPE)
        PLX_CL_ERROR(CL_INVALID_PLATFORM)
        PLX_CL_ERROR(CL_INVALID_DEVICE)
        PLX_CL_ERROR(CL_INVALID_CONTEXT)
        PLX_CL_ERROR(CL_INVALID_QUEUE_PROPERTIES)
        PLX_CL_ERROR(CL_INVALID_COMMAND_QUEUE)
        PLX_CL_ERROR(CL_INVALID_HOST_PTR)
        PLX_CL_ERROR(CL_INVALID_MEM_OBJECT)
        PLX_CL_ERROR(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR)
        PLX_CL_ERROR(CL_INVALID_IMAGE_SIZE)
        PLX_CL_ERROR(CL_INVALID_SAMPLER)
        PLX_CL_ERROR(CL_INVALID_BINARY)
        PLX_CL_ERROR(CL_INVALID_BUILD_OPTIONS)
        PLX_CL_ERROR(CL_INVALID_PROGRAM)
        PLX_CL_ERROR(CL_INVALID_PROGRAM_EXECUTABLE)
        PLX_CL_ERROR(CL_INVALID_KERNEL_NAME)
        PLX_CL_ERROR(CL_INVALID_KERNEL_DEFINITION)
        PLX_CL_ERROR(CL_INVALID_KERNEL)
        PLX_CL_ERROR(CL_INVALID_ARG_INDEX)
        PLX_CL_ERROR(CL_INVALID_ARG_VALUE)
        PLX_CL_ERROR(CL_INVALID_ARG_SIZE)
        PLX_CL_ERROR(CL_INVALID_KERNEL_ARGS)
        PLX_CL_ERROR(CL_INVALID_WORK_DIMENSION)
        PLX_CL_ERROR(CL_INVALID_WORK_GROUP_SIZE)
        PLX_CL_ERROR(CL_INVALID_WORK_ITEM_SIZE)
        PLX_CL_ERROR(CL_INVALID_GLOBAL_OFFSET)
        PLX_CL_ERROR(CL_INVALID_EVENT_WAIT_LIST)
        PLX_CL_ERROR(CL_INVALID_EVENT)
        PLX_CL_ERROR(CL_INVALID_OPERATION)
        PLX_CL_ERROR(CL_INVALID_GL_OBJECT)
        PLX_CL_ERROR(CL_INVALID_BUFFER_SIZE)
        PLX_CL_ERROR(CL_INVALID_MIP_LEVEL)
        PLX_CL_ERROR(CL_INVALID_GLOBAL_WORK_SIZE)
        PLX_CL_ERROR(CL_INVALID_PROPERTY)
        PLX_CL_ERROR(CL_INVALID_IMAGE_DESCRIPTOR)
        PLX_CL_ERROR(CL_INVALID_COMPILER_OPTIONS)
        PLX_CL_ERROR(CL_INVALID_LINKER_OPTIONS)
        PLX_CL_ERROR(CL_INVALID_DEVICE_PARTITION_COUNT)
        PLX_CL_ERROR(CL_PLATFORM_NOT_FOUND_KHR)
#undef PLX_CL_ERROR
    // Codes of OpenCL 2.0 and later, which the 1.2 headers do not define, can still come back
    // from a newer driver.
    case -69: return "CL_INVALID_PIPE_SIZE";
    case -70: return "CL_INVALID_DEVICE_QUEUE";
    case -71: return "CL_INVALID_SPEC_ID";
    case -72: return "CL_MAX_SIZE_RESTRICTION_EXCEEDED";
    default: return "unknown OpenCL error";
    }
}

std::string cl_error_text(const char* call, cl_int code) {
    return strf("%s: %s (%d)", call, cl_error_name(code), static_cast<int>(code));
}

} // namespace plx_opencl
