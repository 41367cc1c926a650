// A small OpenCL host harness for the codegen run tests: first device, program build with the
// build log on failure, typed buffers, argument setting and a launch that rounds up.
#pragma once

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>

#include <doctest/doctest.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace codegen_test {

struct ClDevice {
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
    ~ClDevice() {
        if (queue) clReleaseCommandQueue(queue);
        if (context) clReleaseContext(context);
    }
    bool has(const std::string& ext) const {
        return extensions.find(" " + ext + " ") != std::string::npos;
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

extern ClDevice* g_device;

inline void cl_check(cl_int err, const char* what) {
    if (err != CL_SUCCESS)
        throw std::runtime_error(std::string(what) + " failed: " + std::to_string(err));
}

// A built program and one kernel of it; the build log goes into the failure message.
struct ClKernel {
    cl_program program = nullptr;
    cl_kernel kernel = nullptr;
    ClKernel(const std::string& source, const std::string& name) {
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
    ~ClKernel() {
        if (kernel) clReleaseKernel(kernel);
        if (program) clReleaseProgram(program);
    }
    ClKernel(const ClKernel&) = delete;
    ClKernel& operator=(const ClKernel&) = delete;
};

template <class T> struct ClBuffer {
    cl_mem mem = nullptr;
    size_t count;
    explicit ClBuffer(const std::vector<T>& host) : count(host.size()) {
        cl_int err = CL_SUCCESS;
        mem = clCreateBuffer(g_device->context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                             count * sizeof(T), const_cast<T*>(host.data()), &err);
        cl_check(err, "clCreateBuffer");
    }
    ~ClBuffer() {
        if (mem) clReleaseMemObject(mem);
    }
    ClBuffer(const ClBuffer&) = delete;
    ClBuffer& operator=(const ClBuffer&) = delete;
    std::vector<T> read() const {
        std::vector<T> out(count);
        cl_check(clEnqueueReadBuffer(g_device->queue, mem, CL_TRUE, 0, count * sizeof(T),
                                     out.data(), 0, nullptr, nullptr),
                 "clEnqueueReadBuffer");
        return out;
    }
};

namespace detail {
template <class T> void set_arg(cl_kernel k, cl_uint i, const ClBuffer<T>& b) {
    cl_check(clSetKernelArg(k, i, sizeof(cl_mem), &b.mem), "clSetKernelArg");
}
template <class T> void set_arg(cl_kernel k, cl_uint i, const T& v) {
    cl_check(clSetKernelArg(k, i, sizeof(T), &v), "clSetKernelArg");
}
} // namespace detail

// Sets the arguments in order and runs on `global` work-items rounded up to whole groups.
template <class... Args>
void launch(const ClKernel& k, std::vector<size_t> global, std::vector<size_t> local,
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

// Counts elements outside tolerance, reporting the first few; every element is checked.
struct Mismatches {
    int count = 0;
    template <class A, class B> void add(size_t i, const A& got, const B& want, const char* what) {
        if (++count <= 5) MESSAGE(std::string(what) << "[" << i << "]: got " << got << ", want " << want);
    }
};

std::string generate_opencl(const plexus::ir::Kernel& k);

} // namespace codegen_test
