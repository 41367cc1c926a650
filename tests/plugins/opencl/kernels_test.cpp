// Hand-written OpenCL C kernels run through the plugin on random inputs; every output element
// is checked against a host reference.
#include "fixture.hpp"

#include <cmath>
#include <random>
#include <thread>

using namespace ocltest;

namespace {

const char* kVectorAdd = R"CL(
__kernel void vector_add(__global const float* a, __global const float* b, __global float* c,
                         uint n) {
    size_t i = get_global_id(0);
    if (i < n) c[i] = a[i] + b[i];
}
)CL";

// Dynamic local memory arrives as the trailing __local parameter the plugin appends.
const char* kReduce = R"CL(
__kernel void reduce_sum(__global const float* in, __global float* partial, uint n,
                         __local uchar* plx_dynamic_local) {
    __local float* scratch = (__local float*)plx_dynamic_local;
    size_t gid = get_global_id(0);
    size_t lid = get_local_id(0);
    scratch[lid] = gid < n ? in[gid] : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (size_t stride = get_local_size(0) / 2; stride > 0; stride /= 2) {
        if (lid < stride) scratch[lid] += scratch[lid + stride];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) partial[get_group_id(0)] = scratch[0];
}
)CL";

const char* kHistogram = R"CL(
__kernel void histogram(__global const uint* values, __global uint* bins, uint n) {
    size_t i = get_global_id(0);
    if (i < n) atomic_add(&bins[values[i]], 1u);
}
)CL";

const char* kScale2D = R"CL(
__kernel void scale2d(__global const float* in, __global float* out, uint width, uint height,
                      float factor) {
    size_t x = get_global_id(0);
    size_t y = get_global_id(1);
    if (x < width && y < height) out[y * width + x] = in[y * width + x] * factor;
}
)CL";

std::vector<float> random_floats(size_t n, uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    std::vector<float> v(n);
    for (auto& x : v)
        x = dist(rng);
    return v;
}

} // namespace

TEST_CASE("vector_add at sizes that are not multiples of the work-group size") {
    Queue queue;
    Module module(kVectorAdd);
    plx_kernel kernel = module.kernel("vector_add");
    for (uint32_t n : {1u, 17u, 1000u, 4099u, 100003u}) {
        for (uint32_t local : {1u, 64u, 256u}) {
            CAPTURE(n);
            CAPTURE(local);
            const auto a = random_floats(n, n * 7 + 1);
            const auto b = random_floats(n, n * 13 + 2);
            Buffer da(n * sizeof(float)), db(n * sizeof(float)), dc(n * sizeof(float));
            da.write(queue.q, a);
            db.write(queue.q, b);
            const plx_arg args[] = {buffer_arg(da.b), buffer_arg(db.b), buffer_arg(dc.b),
                                    scalar_arg(n)};
            const plx_launch_dims d = dims1(n, local);
            OCL_REQUIRE_OK(P().launch(queue.q, kernel, &d, args, 4, nullptr));
            const auto c = dc.read<float>(queue.q, n);
            // Tolerance 0: one IEEE float addition is correctly rounded on host and device.
            size_t wrong = 0;
            for (uint32_t i = 0; i < n; ++i)
                if (c[i] != a[i] + b[i]) ++wrong;
            CHECK(wrong == 0);
        }
    }
}

TEST_CASE("work-group reduction through the dynamic __local argument and a barrier") {
    Queue queue;
    Module module(kReduce);
    plx_kernel kernel = module.kernel("reduce_sum");
    const uint32_t n = 100000; // not a multiple of either group size
    const auto in = random_floats(n, 42);
    Buffer din(n * sizeof(float));
    din.write(queue.q, in);
    for (uint32_t local : {64u, 256u}) {
        CAPTURE(local);
        const uint32_t groups = (n + local - 1) / local;
        Buffer dpartial(groups * sizeof(float));
        const plx_arg args[] = {buffer_arg(din.b), buffer_arg(dpartial.b), scalar_arg(n)};
        const plx_launch_dims d = dims1(n, local, local * sizeof(float));
        OCL_REQUIRE_OK(P().launch(queue.q, kernel, &d, args, 3, nullptr));
        const auto partial = dpartial.read<float>(queue.q, groups);
        // Tolerance: float sums in a different order than the double reference differ by at
        // most about log2(local) roundings of the running magnitude: 1e-5 * sum|x| + 1e-6.
        size_t wrong = 0;
        for (uint32_t g = 0; g < groups; ++g) {
            double ref = 0.0;
            double magnitude = 0.0;
            for (uint32_t i = g * local; i < std::min(n, (g + 1) * local); ++i) {
                ref += in[i];
                magnitude += std::fabs(in[i]);
            }
            if (std::fabs(partial[g] - ref) > 1e-5 * magnitude + 1e-6) {
                if (wrong++ < 5)
                    MESSAGE("group " << g << ": got " << partial[g] << ", want " << ref);
            }
        }
        CHECK(wrong == 0);
    }
}

TEST_CASE("histogram with atomic_add on global memory") {
    Queue queue;
    Module module(kHistogram);
    plx_kernel kernel = module.kernel("histogram");
    const uint32_t n = 50001;
    const uint32_t num_bins = 64;
    std::mt19937 rng(7);
    std::uniform_int_distribution<uint32_t> dist(0, num_bins - 1);
    std::vector<uint32_t> values(n);
    std::vector<uint32_t> ref(num_bins, 0);
    for (auto& v : values) {
        v = dist(rng);
        ++ref[v];
    }
    Buffer dvalues(n * sizeof(uint32_t)), dbins(num_bins * sizeof(uint32_t));
    dvalues.write(queue.q, values);
    const uint32_t zero = 0;
    OCL_REQUIRE_OK(
        P().buffer_fill(queue.q, dbins.b, 0, &zero, sizeof zero, num_bins * sizeof(uint32_t)));
    const plx_arg args[] = {buffer_arg(dvalues.b), buffer_arg(dbins.b), scalar_arg(n)};
    const plx_launch_dims d = dims1(n, 128);
    OCL_REQUIRE_OK(P().launch(queue.q, kernel, &d, args, 3, nullptr));
    const auto bins = dbins.read<uint32_t>(queue.q, num_bins);
    // Tolerance 0: counts are exact.
    for (uint32_t b = 0; b < num_bins; ++b) {
        CAPTURE(b);
        CHECK(bins[b] == ref[b]);
    }
}

TEST_CASE("2-D launch with partial groups in both dimensions and a float scalar") {
    Queue queue;
    Module module(kScale2D);
    plx_kernel kernel = module.kernel("scale2d");
    const uint32_t width = 103, height = 37;
    const float factor = 1.5f;
    const auto in = random_floats(width * height, 99);
    Buffer din(in.size() * sizeof(float)), dout(in.size() * sizeof(float));
    din.write(queue.q, in);
    plx_launch_dims d = dims1(width, 16);
    d.dims = 2;
    d.global_size[1] = height;
    d.local_size[1] = 8;
    const plx_arg args[] = {buffer_arg(din.b), buffer_arg(dout.b), scalar_arg(width),
                            scalar_arg(height), scalar_arg(factor)};
    OCL_REQUIRE_OK(P().launch(queue.q, kernel, &d, args, 5, nullptr));
    const auto out = dout.read<float>(queue.q, in.size());
    // Tolerance 0: one multiplication is correctly rounded.
    size_t wrong = 0;
    for (size_t i = 0; i < in.size(); ++i)
        if (out[i] != in[i] * factor) ++wrong;
    CHECK(wrong == 0);
}

TEST_CASE("one kernel launched from two threads on two queues") {
    // Each launch writes one marker; each thread has its own queue and buffer but they share
    // the plx_kernel, so arguments set by one thread would leak into the other's enqueue
    // (a marker in the wrong buffer, a hole left at -1) unless set-args + enqueue are atomic.
    Module module(R"CL(
__kernel void mark(__global int* out, uint index, int value) {
    if (get_global_id(0) == 0) out[index] = value;
}
)CL");
    plx_kernel kernel = module.kernel("mark");
    const uint32_t rounds = 20000;
    std::vector<std::vector<int>> result(2);
    std::vector<plx_status> status(2, PLX_OK);
    auto worker = [&](int t) {
        plx_queue q = nullptr;
        plx_buffer out = nullptr;
        if ((status[t] = P().queue_create(device(), 0, &q)) != PLX_OK) return;
        if ((status[t] = P().buffer_alloc(device(), rounds * sizeof(int), &out)) == PLX_OK) {
            const int hole = -1;
            status[t] = P().buffer_fill(q, out, 0, &hole, sizeof hole, rounds * sizeof(int));
            const plx_launch_dims d = dims1(1, 1);
            for (uint32_t r = 0; r < rounds && status[t] == PLX_OK; ++r) {
                const int value = t * 1000000 + static_cast<int>(r);
                const plx_arg args[] = {buffer_arg(out), scalar_arg(r), scalar_arg(value)};
                status[t] = P().launch(q, kernel, &d, args, 3, nullptr);
            }
            result[t].resize(rounds);
            if (status[t] == PLX_OK)
                status[t] = P().buffer_read(q, out, 0, result[t].data(), rounds * sizeof(int));
            P().buffer_free(out);
        }
        P().queue_destroy(q);
    };
    std::thread t0(worker, 0), t1(worker, 1);
    t0.join();
    t1.join();
    for (int t = 0; t < 2; ++t) {
        CAPTURE(t);
        REQUIRE(status[t] == PLX_OK);
        size_t wrong = 0;
        for (uint32_t r = 0; r < rounds; ++r)
            if (result[t][r] != t * 1000000 + static_cast<int>(r)) ++wrong;
        CHECK(wrong == 0);
    }
}
