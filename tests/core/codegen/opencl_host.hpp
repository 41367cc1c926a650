// The OpenCL side of the run tests' harness (run_host.hpp): the first device, a program built
// from a kernel's generated OpenCL C with the build log on failure, typed buffers, and a launch
// that rounds the global size up to whole work-groups.
#pragma once

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace codegen_test {

struct Device {
    cl_device_id id = nullptr;
    cl_context context = nullptr;
    cl_command_queue queue = nullptr;
    std::string name, extensions, why;

    bool open() {
        cl_uint count = 0;
        if (clGetPlatformIDs(0, nullptr, &count) != CL_SUCCESS || count == 0) {
            why = "no OpenCL platform";
            return false;
        }
        std::vector<cl_platform_id> platforms(count);
        clGetPlatformIDs(count, platforms.data(), nullptr);
        for (auto p : platforms) {
            cl_uint n = 0;
            if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &id, &n) == CL_SUCCESS && n > 0) break;
            id = nullptr;
        }
        if (!id) {
            why = "platforms found, but no device";
            return false;
        }
        name = info(CL_DEVICE_NAME);
        extensions = " " + info(CL_DEVICE_EXTENSIONS) + " ";
        cl_int err = CL_SUCCESS;
        context = clCreateContext(nullptr, 1, &id, nullptr, nullptr, &err);
        if (err != CL_SUCCESS) {
            why = "clCreateContext failed: " + std::to_string(err);
            return false;
        }
        queue = clCreateCommandQueue(context, id, 0, &err);
        if (err != CL_SUCCESS) {
            why = "clCreateCommandQueue failed: " + std::to_string(err);
            return false;
        }
        return true;
    }
    ~Device() {
        if (queue) clReleaseCommandQueue(queue);
        if (context) clReleaseContext(context);
    }
    // "fp64", "int64_atomics": what some test kernels need beyond OpenCL C 1.2.
    bool has(const std::string& feature) const {
        auto ext = [&](const char* e) {
            std::string word = " ";
            word.append(e).append(" ");
            return extensions.find(word) != std::string::npos;
        };
        if (feature == "fp64") return ext("cl_khr_fp64");
        return ext("cl_khr_int64_base_atomics") && ext("cl_khr_int64_extended_atomics");
    }
    std::string info(cl_device_info what) const {
        size_t size = 0;
        clGetDeviceInfo(id, what, 0, nullptr, &size);
        std::string s(size, '\0');
        clGetDeviceInfo(id, what, size, s.data(), nullptr);
        while (!s.empty() && s.back() == '\0')
            s.pop_back();
        return s;
    }
};

extern Device* g_device;

inline void cl_check(cl_int err, const char* what) {
    if (err != CL_SUCCESS)
        throw std::runtime_error(std::string(what) + " failed: " + std::to_string(err));
}

// A built program and one kernel of it; the build log goes into the failure message.
struct Program {
    cl_program program = nullptr;
    cl_kernel kernel = nullptr;
    explicit Program(const std::string& name) {
        const std::string source = kernel_source(name);
        const char* text = source.c_str();
        cl_int err = CL_SUCCESS;
        program = clCreateProgramWithSource(g_device->context, 1, &text, nullptr, &err);
        cl_check(err, "clCreateProgramWithSource");
        if (clBuildProgram(program, 1, &g_device->id, "-cl-std=CL1.2", nullptr, nullptr) !=
            CL_SUCCESS) {
            size_t size = 0;
            clGetProgramBuildInfo(program, g_device->id, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size);
            std::string log(size, '\0');
            clGetProgramBuildInfo(program, g_device->id, CL_PROGRAM_BUILD_LOG, size, log.data(),
                                  nullptr);
            throw std::runtime_error("clBuildProgram failed for " + name + ":\n" + log +
                                     "\n---- source ----\n" + source);
        }
        kernel = clCreateKernel(program, name.c_str(), &err);
        cl_check(err, "clCreateKernel");
    }
    ~Program() {
        if (kernel) clReleaseKernel(kernel);
        if (program) clReleaseProgram(program);
    }
    Program(const Program&) = delete;
    Program& operator=(const Program&) = delete;
};

template <class T> struct Buffer {
    cl_mem mem = nullptr;
    size_t count;
    explicit Buffer(const std::vector<T>& host) : count(host.size()) {
        cl_int err = CL_SUCCESS;
        mem = clCreateBuffer(g_device->context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                             count * sizeof(T), const_cast<T*>(host.data()), &err);
        cl_check(err, "clCreateBuffer");
    }
    ~Buffer() {
        if (mem) clReleaseMemObject(mem);
    }
    Buffer(const Buffer&) = delete;
    Buffer& operator=(const Buffer&) = delete;
    std::vector<T> read() const {
        std::vector<T> out(count);
        cl_check(clEnqueueReadBuffer(g_device->queue, mem, CL_TRUE, 0, count * sizeof(T),
                                     out.data(), 0, nullptr, nullptr),
                 "clEnqueueReadBuffer");
        return out;
    }
};

namespace detail {
template <class T> void set_arg(cl_kernel k, cl_uint i, const Buffer<T>& b) {
    cl_check(clSetKernelArg(k, i, sizeof(cl_mem), &b.mem), "clSetKernelArg");
}
template <class T> void set_arg(cl_kernel k, cl_uint i, const T& v) {
    cl_check(clSetKernelArg(k, i, sizeof(T), &v), "clSetKernelArg");
}
} // namespace detail

// Sets the arguments in order and runs on `global` work-items rounded up to whole groups.
template <class... Args>
void launch(const Program& k, std::vector<size_t> global, std::vector<size_t> local,
            const Args&... args) {
    cl_uint i = 0;
    (detail::set_arg(k.kernel, i++, args), ...);
    for (size_t d = 0; d < global.size(); ++d)
        global[d] = (global[d] + local[d] - 1) / local[d] * local[d];
    cl_check(clEnqueueNDRangeKernel(g_device->queue, k.kernel, cl_uint(global.size()), nullptr,
                                    global.data(), local.data(), 0, nullptr, nullptr),
             "clEnqueueNDRangeKernel");
    cl_check(clFinish(g_device->queue), "clFinish");
}

} // namespace codegen_test
