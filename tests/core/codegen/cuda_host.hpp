// The CUDA side of the run tests' harness (run_host.hpp), as the CUDA plugin works: a kernel's
// generated CUDA C compiled by NVRTC for the device's architecture with no include path, loaded
// through the driver API, typed buffers, and a launch of whole blocks. libcuda and libnvrtc
// are opened at run time with the few functions declared here, so no CUDA header is needed.
#pragma once

#include <dlfcn.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace codegen_test {

// The driver and NVRTC functions the harness calls, with their documented C signatures
// (CUresult and nvrtcResult are ints, 0 success; handles are opaque pointers).
struct CudaApi {
    using Handle = struct CudaOpaque*;
    using DevicePtr = unsigned long long;
    int (*cuInit)(unsigned) = nullptr;
    int (*cuDeviceGet)(int*, int) = nullptr;
    int (*cuDeviceGetName)(char*, int, int) = nullptr;
    int (*cuDeviceGetAttribute)(int*, int, int) = nullptr;
    int (*cuDevicePrimaryCtxRetain)(Handle*, int) = nullptr;
    int (*cuCtxSetCurrent)(Handle) = nullptr;
    int (*cuModuleLoadData)(Handle*, const void*) = nullptr;
    int (*cuModuleUnload)(Handle) = nullptr;
    int (*cuModuleGetFunction)(Handle*, Handle, const char*) = nullptr;
    int (*cuMemAlloc)(DevicePtr*, size_t) = nullptr;
    int (*cuMemFree)(DevicePtr) = nullptr;
    int (*cuMemcpyHtoD)(DevicePtr, const void*, size_t) = nullptr;
    int (*cuMemcpyDtoH)(void*, DevicePtr, size_t) = nullptr;
    int (*cuLaunchKernel)(Handle, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                          unsigned, Handle, void**, void**) = nullptr;
    int (*cuCtxSynchronize)() = nullptr;
    int (*nvrtcCreateProgram)(Handle*, const char*, const char*, int, const char* const*,
                              const char* const*) = nullptr;
    int (*nvrtcCompileProgram)(Handle, int, const char* const*) = nullptr;
    int (*nvrtcGetProgramLogSize)(Handle, size_t*) = nullptr;
    int (*nvrtcGetProgramLog)(Handle, char*) = nullptr;
    int (*nvrtcGetCUBINSize)(Handle, size_t*) = nullptr;
    int (*nvrtcGetCUBIN)(Handle, char*) = nullptr;
    int (*nvrtcDestroyProgram)(Handle*) = nullptr;

    // Opens both libraries; "" on success, else what is missing.
    std::string open() {
        void* cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
        if (!cuda) return "no CUDA driver (libcuda.so.1)";
        void* rtc = nullptr;
        for (const char* name : {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"})
            if ((rtc = dlopen(name, RTLD_NOW | RTLD_LOCAL))) break;
        if (!rtc) return "no NVRTC (libnvrtc.so)";
        std::string missing;
        auto load = [&](void* lib, auto& fn, const char* name) {
            fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, name));
            if (!fn) missing += std::string(missing.empty() ? "" : ", ") + name;
        };
        load(cuda, cuInit, "cuInit");
        load(cuda, cuDeviceGet, "cuDeviceGet");
        load(cuda, cuDeviceGetName, "cuDeviceGetName");
        load(cuda, cuDeviceGetAttribute, "cuDeviceGetAttribute");
        load(cuda, cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
        load(cuda, cuCtxSetCurrent, "cuCtxSetCurrent");
        load(cuda, cuModuleLoadData, "cuModuleLoadData");
        load(cuda, cuModuleUnload, "cuModuleUnload");
        load(cuda, cuModuleGetFunction, "cuModuleGetFunction");
        load(cuda, cuMemAlloc, "cuMemAlloc_v2");
        load(cuda, cuMemFree, "cuMemFree_v2");
        load(cuda, cuMemcpyHtoD, "cuMemcpyHtoD_v2");
        load(cuda, cuMemcpyDtoH, "cuMemcpyDtoH_v2");
        load(cuda, cuLaunchKernel, "cuLaunchKernel");
        load(cuda, cuCtxSynchronize, "cuCtxSynchronize");
        load(rtc, nvrtcCreateProgram, "nvrtcCreateProgram");
        load(rtc, nvrtcCompileProgram, "nvrtcCompileProgram");
        load(rtc, nvrtcGetProgramLogSize, "nvrtcGetProgramLogSize");
        load(rtc, nvrtcGetProgramLog, "nvrtcGetProgramLog");
        load(rtc, nvrtcGetCUBINSize, "nvrtcGetCUBINSize");
        load(rtc, nvrtcGetCUBIN, "nvrtcGetCUBIN");
        load(rtc, nvrtcDestroyProgram, "nvrtcDestroyProgram");
        return missing.empty() ? "" : "missing functions: " + missing;
    }
};

inline void cu_check(int status, const char* what) {
    if (status != 0)
        throw std::runtime_error(std::string(what) + " failed: " + std::to_string(status));
}

struct Device {
    CudaApi api;
    int id = 0;
    std::string name, arch, why;

    bool open() {
        why = api.open();
        if (!why.empty()) return false;
        if (api.cuInit(0) != 0 || api.cuDeviceGet(&id, 0) != 0) {
            why = "no CUDA device";
            return false;
        }
        char text[256] = {};
        api.cuDeviceGetName(text, sizeof text, id);
        name = text;
        int major = 0, minor = 0; // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR / _MINOR
        api.cuDeviceGetAttribute(&major, 75, id);
        api.cuDeviceGetAttribute(&minor, 76, id);
        arch = "sm_" + std::to_string(major) + std::to_string(minor);
        CudaApi::Handle context = nullptr;
        cu_check(api.cuDevicePrimaryCtxRetain(&context, id), "cuDevicePrimaryCtxRetain");
        cu_check(api.cuCtxSetCurrent(context), "cuCtxSetCurrent");
        return true;
    }
    // Every CUDA device of the architectures the generator targets has f64 and 64-bit atomics.
    bool has(const std::string&) const { return true; }
};

extern Device* g_device;

// A kernel's CUDA C compiled by NVRTC and loaded; the log goes into the failure message.
struct Program {
    CudaApi::Handle module = nullptr, kernel = nullptr;
    explicit Program(const std::string& name) {
        const CudaApi& api = g_device->api;
        const std::string source = kernel_source(name);
        CudaApi::Handle prog = nullptr;
        cu_check(api.nvrtcCreateProgram(&prog, source.c_str(), "plexus.cu", 0, nullptr, nullptr),
                 "nvrtcCreateProgram");
        const std::string option = "--gpu-architecture=" + g_device->arch;
        const char* options[] = {option.c_str()};
        const int status = api.nvrtcCompileProgram(prog, 1, options);
        size_t size = 0;
        api.nvrtcGetProgramLogSize(prog, &size);
        std::string log(size, '\0');
        if (size) api.nvrtcGetProgramLog(prog, log.data());
        if (status != 0) {
            api.nvrtcDestroyProgram(&prog);
            throw std::runtime_error("NVRTC failed for " + name + ":\n" + log +
                                     "\n---- source ----\n" + source);
        }
        api.nvrtcGetCUBINSize(prog, &size);
        std::vector<char> cubin(size);
        api.nvrtcGetCUBIN(prog, cubin.data());
        api.nvrtcDestroyProgram(&prog);
        cu_check(api.cuModuleLoadData(&module, cubin.data()), "cuModuleLoadData");
        cu_check(api.cuModuleGetFunction(&kernel, module, name.c_str()), "cuModuleGetFunction");
    }
    ~Program() {
        if (module) g_device->api.cuModuleUnload(module);
    }
    Program(const Program&) = delete;
    Program& operator=(const Program&) = delete;
};

template <class T> struct Buffer {
    CudaApi::DevicePtr ptr = 0;
    size_t count;
    explicit Buffer(const std::vector<T>& host) : count(host.size()) {
        cu_check(g_device->api.cuMemAlloc(&ptr, count * sizeof(T)), "cuMemAlloc");
        cu_check(g_device->api.cuMemcpyHtoD(ptr, host.data(), count * sizeof(T)), "cuMemcpyHtoD");
    }
    ~Buffer() {
        if (ptr) g_device->api.cuMemFree(ptr);
    }
    Buffer(const Buffer&) = delete;
    Buffer& operator=(const Buffer&) = delete;
    std::vector<T> read() const {
        std::vector<T> out(count);
        cu_check(g_device->api.cuMemcpyDtoH(out.data(), ptr, count * sizeof(T)), "cuMemcpyDtoH");
        return out;
    }
};

namespace detail {
// The address cuLaunchKernel reads a parameter's value from.
template <class T> const void* arg_address(const Buffer<T>& b) {
    return &b.ptr;
}
template <class T> const void* arg_address(const T& v) {
    return &v;
}
} // namespace detail

// Runs ceil(global / local) whole blocks of `local` threads per dimension, then waits.
template <class... Args>
void launch(const Program& k, std::vector<size_t> global, std::vector<size_t> local,
            const Args&... args) {
    std::vector<void*> params = {const_cast<void*>(detail::arg_address(args))...};
    unsigned grid[3] = {1, 1, 1}, block[3] = {1, 1, 1};
    for (size_t d = 0; d < global.size(); ++d) {
        block[d] = unsigned(local[d]);
        grid[d] = unsigned((global[d] + local[d] - 1) / local[d]);
    }
    cu_check(g_device->api.cuLaunchKernel(k.kernel, grid[0], grid[1], grid[2], block[0], block[1],
                                          block[2], 0, nullptr, params.data(), nullptr),
             "cuLaunchKernel");
    cu_check(g_device->api.cuCtxSynchronize(), "cuCtxSynchronize");
}

} // namespace codegen_test
