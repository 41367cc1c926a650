// Modules: OpenCL C source, or a program binary this device produced before, built with
// clBuildProgram through a per-device program cache keyed by (options, source or binary);
// the binaries handed back for the core's disk cache; kernel lookup with the kernel's own
// limits read once.
#include "opencl_plugin.hpp"

#include <chrono>
#include <mutex>

namespace plx_opencl {
namespace {

// The device's standard (device.cpp, c_standard) unless the caller chose one.
std::string build_options(const plx_device_s& dev, const char* options) {
    std::string out = options != nullptr ? options : "";
    if (out.find("-cl-std=") == std::string::npos)
        out = dev.c_standard + (out.empty() ? "" : " " + out);
    return out;
}

std::string build_log(const plx_device_s& dev, cl_program program) {
    size_t size = 0;
    if (cl().clGetProgramBuildInfo(program, dev.id, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size) !=
            CL_SUCCESS ||
        size == 0)
        return {};
    std::string text(size, '\0');
    if (cl().clGetProgramBuildInfo(program, dev.id, CL_PROGRAM_BUILD_LOG, size, text.data(),
                                   nullptr) != CL_SUCCESS)
        return {};
    while (!text.empty() && (text.back() == '\0' || text.back() == '\n'))
        text.pop_back();
    return text;
}

// Builds one program from OpenCL C source, or from a binary of this device (which a driver
// still "builds": it links and finalizes it); on failure returns the status with last_error set.
plx_status build(plx_device_s& dev, bool binary, const char* source, size_t bytes,
                 const std::string& options, std::shared_ptr<Program>* out) {
    if (plx_status s = ensure_context(dev); s != PLX_OK) return s;
    cl_int err = CL_SUCCESS, binary_status = CL_SUCCESS;
    auto program = std::make_shared<Program>();
    const char* create = binary ? "clCreateProgramWithBinary" : "clCreateProgramWithSource";
    if (binary) {
        const auto* bits = reinterpret_cast<const unsigned char*>(source);
        program->program = cl().clCreateProgramWithBinary(dev.context, 1, &dev.id, &bytes, &bits,
                                                          &binary_status, &err);
    } else {
        program->program = cl().clCreateProgramWithSource(dev.context, 1, &source, &bytes, &err);
    }
    if (program->program == nullptr || err != CL_SUCCESS || binary_status != CL_SUCCESS) {
        if (program->program == nullptr) err = err != CL_SUCCESS ? err : binary_status;
        program->program = nullptr;
        // A binary from another driver or version: the caller compiles the source again.
        if (binary && (err == CL_INVALID_BINARY || binary_status == CL_INVALID_BINARY))
            return fail(PLX_ERROR_COMPILE,
                        strf("%s: the program binary is not one this driver loads (%s)",
                             dev.info.name, cl_error_text(create, CL_INVALID_BINARY).c_str()));
        return fail_cl(err == CL_OUT_OF_HOST_MEMORY ? PLX_ERROR_OUT_OF_MEMORY : PLX_ERROR_DEVICE,
                       create, err, strf("device '%s'", dev.info.name));
    }
    const auto start = std::chrono::steady_clock::now();
    err = cl().clBuildProgram(program->program, 1, &dev.id, options.c_str(), nullptr, nullptr);
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    const std::string log_text = build_log(dev, program->program);
    if (err != CL_SUCCESS) {
        if (err == CL_BUILD_PROGRAM_FAILURE || err == CL_INVALID_BUILD_OPTIONS ||
            err == CL_COMPILER_NOT_AVAILABLE) {
            return fail(
                PLX_ERROR_COMPILE,
                strf("%s: %s with options '%s':\n%s", dev.info.name,
                     cl_error_text("clBuildProgram", err).c_str(), options.c_str(),
                     log_text.empty() ? "(the driver gave no build log)" : log_text.c_str()));
        }
        return fail_create("clBuildProgram", err, dev.info.name);
    }
    const uint64_t builds = ++dev.stats.builds;
    // The tests count these lines to see the cache work; keep "built program" in the text.
    log(PLX_LOG_DEBUG, strf("opencl: %s: built program (%zu bytes of %s, options '%s') in %.1f ms; "
                            "%llu build(s) on this device",
                            dev.info.name, bytes, binary ? "binary" : "source", options.c_str(), ms,
                            static_cast<unsigned long long>(builds)));
    if (!log_text.empty())
        log(PLX_LOG_DEBUG, strf("opencl: %s: build log:\n%s", dev.info.name, log_text.c_str()));
    *out = std::move(program);
    return PLX_OK;
}

// The cached program for (options, source), building it when absent. Failed builds are not
// cached: the slot stays empty and the next load tries again.
plx_status cached_program(plx_device_s& dev, bool binary, const char* source, size_t bytes,
                          const std::string& options, std::shared_ptr<Program>* out) {
    std::string key = binary ? "binary:" + options : options;
    key.push_back('\0');
    key.append(source, bytes);
    std::shared_ptr<CacheSlot> slot;
    {
        std::lock_guard<std::mutex> lock(dev.cache_mutex);
        auto& entry = dev.programs[key];
        if (!entry) entry = std::make_shared<CacheSlot>();
        slot = entry;
    }
    std::lock_guard<std::mutex> lock(slot->mutex);
    if (slot->program) {
        const uint64_t hits = ++dev.stats.cache_hits;
        log(PLX_LOG_DEBUG,
            strf("opencl: %s: program cache hit (%zu bytes of source, options '%s'); %llu "
                 "hit(s) on this device",
                 dev.info.name, bytes, options.c_str(), static_cast<unsigned long long>(hits)));
        *out = slot->program;
        return PLX_OK;
    }
    const plx_status status = build(dev, binary, source, bytes, options, &slot->program);
    if (status == PLX_OK) *out = slot->program;
    return status;
}

std::string kernel_names(cl_program program) {
    size_t size = 0;
    if (cl().clGetProgramInfo(program, CL_PROGRAM_KERNEL_NAMES, 0, nullptr, &size) != CL_SUCCESS ||
        size == 0)
        return {};
    std::string names(size, '\0');
    if (cl().clGetProgramInfo(program, CL_PROGRAM_KERNEL_NAMES, size, names.data(), nullptr) !=
        CL_SUCCESS)
        return {};
    while (!names.empty() && names.back() == '\0')
        names.pop_back();
    return names;
}

} // namespace

Program::~Program() {
    if (program != nullptr) cl().clReleaseProgram(program);
}

} // namespace plx_opencl

// module_unload, or shutdown for a module the host did not unload (a host may lack
// module_unload calls, as plexus does for a plugin without module_unload).
plx_module_s::~plx_module_s() {
    for (auto& [name, kernel] : kernels) {
        plx_support::untrack(kernel.get());
        plx_opencl::cl().clReleaseKernel(kernel->kernel);
    }
}

namespace plx_opencl {

plx_status module_load(plx_device device, plx_language language, const char* source,
                       size_t source_bytes, const char* options, plx_module* module) {
    if (!live(device))
        return fail(PLX_ERROR_INVALID_ARGUMENT, "module_load: not a device of the opencl plugin");
    if (module == nullptr) return fail(PLX_ERROR_INVALID_ARGUMENT, "module_load: module is NULL");
    if (language != PLX_LANG_OPENCL_C && language != PLX_LANG_OPENCL_BINARY)
        return fail(
            PLX_ERROR_UNSUPPORTED,
            strf("module_load: language %d is not accepted, the opencl plugin takes OpenCL C "
                 "(PLX_LANG_OPENCL_C) and its own program binaries (PLX_LANG_OPENCL_BINARY)",
                 static_cast<int>(language)));
    if (source == nullptr || source_bytes == 0)
        return fail(PLX_ERROR_INVALID_ARGUMENT, "module_load: the source is empty");
    std::shared_ptr<Program> program;
    const bool binary = language == PLX_LANG_OPENCL_BINARY;
    if (plx_status s = cached_program(*device, binary, source, source_bytes,
                                      binary ? std::string(options ? options : "")
                                             : build_options(*device, options),
                                      &program);
        s != PLX_OK)
        return s;
    auto* m = plx_support::make_tracked<plx_module_s>();
    if (m == nullptr) return fail(PLX_ERROR_OUT_OF_MEMORY, "module_load: out of host memory");
    m->device = device;
    m->program = std::move(program);
    *module = m;
    return PLX_OK;
}

// The program's binary for its one device (what clBuildProgram produced), so that a later
// process loads it instead of compiling the source again.
plx_status module_get_binary(plx_module module, plx_language* language, void* data, size_t* bytes) {
    if (!live(module))
        return fail(PLX_ERROR_INVALID_ARGUMENT,
                    "module_get_binary: not a live module of the opencl plugin");
    if (language == nullptr || bytes == nullptr)
        return fail(PLX_ERROR_INVALID_ARGUMENT, "module_get_binary: language or bytes is NULL");
    cl_program program = module->program->program;
    size_t size = 0;
    if (cl_int err =
            cl().clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, nullptr);
        err != CL_SUCCESS)
        return fail_cl(PLX_ERROR_DEVICE, "clGetProgramInfo(CL_PROGRAM_BINARY_SIZES)", err, "");
    if (size == 0)
        return fail(PLX_ERROR_UNSUPPORTED, "module_get_binary: the driver gives no program binary");
    *language = PLX_LANG_OPENCL_BINARY;
    if (data == nullptr) {
        *bytes = size;
        return PLX_OK;
    }
    if (*bytes < size)
        return fail(
            PLX_ERROR_INVALID_ARGUMENT,
            strf("module_get_binary: %zu bytes of room for a %zu-byte binary", *bytes, size));
    unsigned char* out = static_cast<unsigned char*>(data);
    if (cl_int err = cl().clGetProgramInfo(program, CL_PROGRAM_BINARIES, sizeof out, &out, nullptr);
        err != CL_SUCCESS)
        return fail_cl(PLX_ERROR_DEVICE, "clGetProgramInfo(CL_PROGRAM_BINARIES)", err, "");
    *bytes = size;
    return PLX_OK;
}

void module_unload(plx_module module) {
    plx_support::release_tracked(module);
}

plx_status kernel_get(plx_module module, const char* name, plx_kernel* kernel) {
    if (!live(module))
        return fail(PLX_ERROR_INVALID_ARGUMENT,
                    "kernel_get: not a live module of the opencl plugin");
    if (name == nullptr || kernel == nullptr)
        return fail(PLX_ERROR_INVALID_ARGUMENT, "kernel_get: name or kernel is NULL");
    std::lock_guard<std::mutex> lock(module->kernels_mutex);
    // One plx_kernel per name and module: asking twice returns the same handle.
    if (auto it = module->kernels.find(name); it != module->kernels.end()) {
        *kernel = it->second.get();
        return PLX_OK;
    }
    const plx_device_s& dev = *module->device;
    cl_int err = CL_SUCCESS;
    cl_kernel k = cl().clCreateKernel(module->program->program, name, &err);
    if (k == nullptr || err != CL_SUCCESS) {
        if (err == CL_INVALID_KERNEL_NAME)
            return fail(PLX_ERROR_NOT_FOUND,
                        strf("kernel_get: the module has no kernel named '%s' (it has: %s)", name,
                             kernel_names(module->program->program).c_str()));
        return fail_cl(err == CL_OUT_OF_HOST_MEMORY ? PLX_ERROR_OUT_OF_MEMORY : PLX_ERROR_DEVICE,
                       "clCreateKernel", err, strf("kernel '%s' on '%s'", name, dev.info.name));
    }
    auto entry = std::make_unique<plx_kernel_s>();
    entry->module = module;
    entry->kernel = k;
    entry->name = name;
    cl().clGetKernelInfo(k, CL_KERNEL_NUM_ARGS, sizeof entry->num_args, &entry->num_args, nullptr);
    // Queried before any __local argument is set, so this is the kernel's static local memory.
    cl().clGetKernelWorkGroupInfo(k, dev.id, CL_KERNEL_WORK_GROUP_SIZE,
                                  sizeof entry->max_work_group_size, &entry->max_work_group_size,
                                  nullptr);
    cl().clGetKernelWorkGroupInfo(k, dev.id, CL_KERNEL_LOCAL_MEM_SIZE,
                                  sizeof entry->static_local_bytes, &entry->static_local_bytes,
                                  nullptr);
    // Live until its module is released.
    plx_kernel_s* handle = entry.get();
    if (!plx_support::try_track(handle, nullptr)) {
        cl().clReleaseKernel(k);
        return fail(PLX_ERROR_OUT_OF_MEMORY, "kernel_get: out of host memory");
    }
    try {
        module->kernels.emplace(name, std::move(entry));
    } catch (...) {
        plx_support::untrack(handle);
        cl().clReleaseKernel(k);
        throw;
    }
    *kernel = handle;
    return PLX_OK;
}

} // namespace plx_opencl
