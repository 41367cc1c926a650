// The raw launch baselines of launch_baselines.hpp.
#include "launch_baselines.hpp"

#if __has_include(<CL/cl.h>)
#define PLX_LB_HAVE_CL 1
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#else
#define PLX_LB_HAVE_CL 0
#endif

#include <algorithm>
#include <atomic>
#include <chrono>
#include <dlfcn.h>
#include <thread>
#include <vector>

namespace plexus::app::launch_baseline {
namespace {

double us_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
}

} // namespace

// ---- OpenCL ------------------------------------------------------------------------------
#if PLX_LB_HAVE_CL

struct OpenCL::State {
    void* lib = nullptr;
#define PLX_CL_FN(name) decltype(&::name) name = nullptr;
    // clang-format off
#define PLX_CL_FNS                                                                                           \
    PLX_CL_FN(clGetPlatformIDs) PLX_CL_FN(clGetPlatformInfo) PLX_CL_FN(clGetDeviceIDs)                   \
    PLX_CL_FN(clGetDeviceInfo) PLX_CL_FN(clCreateContext) PLX_CL_FN(clCreateCommandQueue)                 \
    PLX_CL_FN(clCreateProgramWithSource) PLX_CL_FN(clBuildProgram) PLX_CL_FN(clCreateKernel)              \
    PLX_CL_FN(clEnqueueNDRangeKernel) PLX_CL_FN(clFinish) PLX_CL_FN(clReleaseKernel)                      \
    PLX_CL_FN(clReleaseProgram) PLX_CL_FN(clReleaseCommandQueue) PLX_CL_FN(clReleaseContext)              \
    PLX_CL_FN(clCreateBuffer) PLX_CL_FN(clReleaseMemObject) PLX_CL_FN(clEnqueueWriteBuffer)                \
    PLX_CL_FN(clEnqueueReadBuffer)
    // clang-format on
    PLX_CL_FNS
#undef PLX_CL_FN
    cl_context context = nullptr;
    cl_command_queue queue = nullptr;
    cl_program program = nullptr;
    cl_kernel kernel = nullptr;
    cl_mem buffer = nullptr; // transfer_seconds' device buffer, of buffer_bytes
    size_t buffer_bytes = 0;

    ~State() {
        if (buffer) clReleaseMemObject(buffer);
        if (kernel) clReleaseKernel(kernel);
        if (program) clReleaseProgram(program);
        if (queue) clReleaseCommandQueue(queue);
        if (context) clReleaseContext(context);
        if (lib) dlclose(lib);
    }

    bool load(std::string& why) {
        lib = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
        if (!lib) return why = "libOpenCL.so.1 is not installed", false;
#define PLX_CL_FN(name)                                                                            \
    name = reinterpret_cast<decltype(&::name)>(dlsym(lib, #name));                                 \
    if (!name) return why = "the ICD loader has no " #name, false;
        PLX_CL_FNS
#undef PLX_CL_FN
        return true;
    }

    // The first device whose platform and device names are these.
    cl_device_id find(const std::string& platform, const std::string& device) const {
        auto text = [](auto get, auto id, cl_uint what) {
            size_t n = 0;
            if (get(id, what, 0, nullptr, &n) != CL_SUCCESS || n == 0) return std::string();
            std::string s(n, '\0');
            get(id, what, n, s.data(), nullptr);
            return std::string(s.c_str());
        };
        cl_uint np = 0;
        if (clGetPlatformIDs(0, nullptr, &np) != CL_SUCCESS || np == 0) return nullptr;
        std::vector<cl_platform_id> platforms(np);
        clGetPlatformIDs(np, platforms.data(), nullptr);
        for (cl_platform_id p : platforms) {
            if (text(clGetPlatformInfo, p, CL_PLATFORM_NAME) != platform) continue;
            cl_uint nd = 0;
            if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &nd) != CL_SUCCESS || nd == 0)
                continue;
            std::vector<cl_device_id> devices(nd);
            clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, nd, devices.data(), nullptr);
            for (cl_device_id d : devices)
                if (text(clGetDeviceInfo, d, CL_DEVICE_NAME) == device) return d;
        }
        return nullptr;
    }
};
#undef PLX_CL_FNS

OpenCL::OpenCL(std::unique_ptr<State> s) : s_(std::move(s)) {}
OpenCL::~OpenCL() = default;

std::unique_ptr<OpenCL> OpenCL::open(const std::string& platform, const std::string& device,
                                     std::string& why) {
    auto s = std::make_unique<State>();
    if (!s->load(why)) return nullptr;
    cl_device_id id = s->find(platform, device);
    if (!id)
        return why = "no OpenCL device '" + device + "' on platform '" + platform + "'", nullptr;
    cl_int err = CL_SUCCESS;
    s->context = s->clCreateContext(nullptr, 1, &id, nullptr, nullptr, &err);
    if (err == CL_SUCCESS) s->queue = s->clCreateCommandQueue(s->context, id, 0, &err);
    const char* source = "__kernel void empty(void) {}";
    if (err == CL_SUCCESS)
        s->program = s->clCreateProgramWithSource(s->context, 1, &source, nullptr, &err);
    if (err == CL_SUCCESS) err = s->clBuildProgram(s->program, 1, &id, "", nullptr, nullptr);
    if (err == CL_SUCCESS) s->kernel = s->clCreateKernel(s->program, "empty", &err);
    if (err != CL_SUCCESS)
        return why = "setting up the raw OpenCL kernel failed: error " + std::to_string(err),
               nullptr;
    auto raw = std::unique_ptr<OpenCL>(new OpenCL(std::move(s)));
    if (raw->round_us(1, why) < 0) return nullptr; // warm-up: the first enqueue finishes the build
    return raw;
}

double OpenCL::round_us(int launches, std::string& why) {
    const size_t global = 32, local = 32;
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < launches; ++i)
        if (cl_int err = s_->clEnqueueNDRangeKernel(s_->queue, s_->kernel, 1, nullptr, &global,
                                                    &local, 0, nullptr, nullptr);
            err != CL_SUCCESS)
            return why = "clEnqueueNDRangeKernel failed: error " + std::to_string(err), -1;
    const double us = us_since(t0) / launches;
    if (cl_int err = s_->clFinish(s_->queue); err != CL_SUCCESS)
        return why = "clFinish failed: error " + std::to_string(err), -1;
    return us;
}

double OpenCL::transfer_seconds(void* host, size_t bytes, bool upload, std::string& why) {
    if (s_->buffer_bytes != bytes) {
        if (s_->buffer) s_->clReleaseMemObject(s_->buffer);
        cl_int err = CL_SUCCESS;
        s_->buffer = s_->clCreateBuffer(s_->context, CL_MEM_READ_WRITE, bytes, nullptr, &err);
        s_->buffer_bytes = err == CL_SUCCESS ? bytes : 0;
        if (err != CL_SUCCESS)
            return why = "clCreateBuffer of " + std::to_string(bytes) + " bytes failed: error " +
                         std::to_string(err),
                   -1;
    }
    const auto t0 = std::chrono::steady_clock::now();
    cl_int err = upload ? s_->clEnqueueWriteBuffer(s_->queue, s_->buffer, CL_TRUE, 0, bytes, host,
                                                   0, nullptr, nullptr)
                        : s_->clEnqueueReadBuffer(s_->queue, s_->buffer, CL_TRUE, 0, bytes, host, 0,
                                                  nullptr, nullptr);
    if (err != CL_SUCCESS)
        return why = std::string(upload ? "clEnqueueWriteBuffer" : "clEnqueueReadBuffer") +
                     " failed: error " + std::to_string(err),
               -1;
    return us_since(t0) * 1e-6;
}

#else
struct OpenCL::State {};
OpenCL::OpenCL(std::unique_ptr<State> s) : s_(std::move(s)) {}
OpenCL::~OpenCL() = default;
std::unique_ptr<OpenCL> OpenCL::open(const std::string&, const std::string&, std::string& why) {
    why = "plexus was built without the OpenCL headers (CL/cl.h)";
    return nullptr;
}
double OpenCL::round_us(int, std::string& why) {
    why = "plexus was built without the OpenCL headers (CL/cl.h)";
    return -1;
}
double OpenCL::transfer_seconds(void*, size_t, bool, std::string& why) {
    why = "plexus was built without the OpenCL headers (CL/cl.h)";
    return -1;
}
#endif

// ---- fork-join ---------------------------------------------------------------------------

namespace {
// Called once per group; opaque to the optimizer, so every call happens.
[[gnu::noinline]] void empty_group(unsigned group) {
    asm volatile("" : : "r"(group) : "memory");
}
} // namespace

struct ForkJoin::State {
    std::vector<std::thread> workers;
    std::atomic<uint64_t> generation{0}; // bumped once per launch
    std::atomic<unsigned> next{0}, done{0};
    std::atomic<bool> stop{false};
    std::atomic<unsigned> groups{0};

    // Takes groups until none is left; counts the ones it ran.
    void work() {
        unsigned ran = 0;
        for (;;) {
            // Acquire: a group of a new launch comes with that launch's groups and done.
            const unsigned g = next.fetch_add(1, std::memory_order_acq_rel);
            if (g >= groups.load(std::memory_order_relaxed)) break;
            empty_group(g);
            ++ran;
        }
        if (ran) done.fetch_add(ran, std::memory_order_release);
    }
    void worker() {
        uint64_t seen = 0;
        for (;;) {
            // Spin briefly, then sleep on the generation counter, like a tuned pool: 20 us,
            // the native plugin's own spin (kSpinNs). The rounds alternate with plexus's, and
            // workers still spinning when a plexus round starts would take the cores its pool
            // runs on (docs/benchmarks.md, "What the figures taught").
            const auto deadline = std::chrono::steady_clock::now() + std::chrono::microseconds(20);
            while (generation.load(std::memory_order_acquire) == seen &&
                   std::chrono::steady_clock::now() < deadline)
                std::this_thread::yield();
            generation.wait(seen, std::memory_order_acquire);
            if (stop.load()) return;
            seen = generation.load(std::memory_order_acquire);
            work();
        }
    }
};

ForkJoin::ForkJoin() : s_(std::make_unique<State>()) {
    const unsigned n = std::max(1u, std::thread::hardware_concurrency());
    for (unsigned i = 1; i < n; ++i)
        s_->workers.emplace_back([s = s_.get()] { s->worker(); });
}

ForkJoin::~ForkJoin() {
    s_->stop = true;
    s_->generation.fetch_add(1);
    s_->generation.notify_all();
    for (auto& t : s_->workers)
        t.join();
}

unsigned ForkJoin::threads() const {
    return unsigned(s_->workers.size()) + 1;
}

double ForkJoin::round_us(int launches, unsigned groups) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < launches; ++i) {
        // next last: a worker that takes a group of this launch has seen done and groups reset.
        s_->done.store(0, std::memory_order_relaxed);
        s_->groups.store(groups, std::memory_order_relaxed);
        s_->next.store(0, std::memory_order_release);
        s_->generation.fetch_add(1, std::memory_order_release);
        s_->generation.notify_all();
        s_->work();
        while (s_->done.load(std::memory_order_acquire) < groups)
            std::this_thread::yield();
    }
    return us_since(t0) / launches;
}

} // namespace plexus::app::launch_baseline
