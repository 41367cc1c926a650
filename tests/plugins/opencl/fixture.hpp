// Shared helpers of the OpenCL plugin tests: the one plugin instance loaded by main, RAII
// wrappers for queues, buffers and modules, and argument builders.
#pragma once

#include "host.hpp"
#include "plugins/common/plx_args.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace ocltest {

Host& host();        // defined in main.cpp: loaded once for the whole executable
plx_device device(); // the first OpenCL device
plx_device_info info();

// Requires PLX_OK and shows the plugin's last_error otherwise.
#define OCL_REQUIRE_OK(expr)                                                                       \
    do {                                                                                           \
        const plx_status ocl_status_ = (expr);                                                     \
        const std::string ocl_error_ = ocl_status_ == PLX_OK ? "" : ::ocltest::host().error();     \
        INFO(#expr " failed: " << ocl_error_);                                                     \
        REQUIRE(ocl_status_ == PLX_OK);                                                            \
    } while (0)

inline const plx_plugin& P() {
    return host().plugin;
}

struct Queue {
    explicit Queue(uint32_t flags = 0) { OCL_REQUIRE_OK(P().queue_create(device(), flags, &q)); }
    ~Queue() { P().queue_destroy(q); }
    Queue(const Queue&) = delete;
    Queue& operator=(const Queue&) = delete;
    plx_queue q = nullptr;
};

struct Buffer {
    explicit Buffer(size_t bytes) { OCL_REQUIRE_OK(P().buffer_alloc(device(), bytes, &b)); }
    ~Buffer() { P().buffer_free(b); }
    Buffer(const Buffer&) = delete;
    Buffer& operator=(const Buffer&) = delete;
    template <class T> void write(plx_queue q, const std::vector<T>& v) {
        OCL_REQUIRE_OK(P().buffer_write(q, b, 0, v.data(), v.size() * sizeof(T)));
    }
    template <class T> std::vector<T> read(plx_queue q, size_t n) {
        std::vector<T> v(n);
        OCL_REQUIRE_OK(P().buffer_read(q, b, 0, v.data(), n * sizeof(T)));
        return v;
    }
    plx_buffer b = nullptr;
};

struct Module {
    Module(const std::string& source, const char* options = "") {
        OCL_REQUIRE_OK(P().module_load(device(), PLX_LANG_OPENCL_C, source.data(), source.size(),
                                       options, &m));
    }
    ~Module() { P().module_unload(m); }
    Module(const Module&) = delete;
    Module& operator=(const Module&) = delete;
    plx_kernel kernel(const char* name) {
        plx_kernel k = nullptr;
        OCL_REQUIRE_OK(P().kernel_get(m, name, &k));
        return k;
    }
    plx_module m = nullptr;
};

using plexus::test::buffer_arg;
using plexus::test::scalar_arg;

inline plx_launch_dims dims1(uint64_t global, uint32_t local, uint32_t dynamic_local = 0) {
    plx_launch_dims d{};
    d.struct_size = sizeof d;
    d.dims = 1;
    d.global_size[0] = global;
    d.global_size[1] = d.global_size[2] = 1;
    d.local_size[0] = local;
    d.local_size[1] = d.local_size[2] = 1;
    d.dynamic_local_bytes = dynamic_local;
    return d;
}

inline bool contains(const std::string& text, const std::string& needle) {
    return text.find(needle) != std::string::npos;
}

} // namespace ocltest
