// Kernel launch of the CUDA backend: checks the launch against the kernel's and the device's
// limits before cuLaunchKernel, and builds its parameter array without heap allocation for
// launches of up to 16 arguments of at most 16 bytes each.
#include "cuda_plugin.hpp"

#include <cstring>

namespace plx_cuda {
namespace {

constexpr uint32_t kInlineArgs = 16;
constexpr size_t kInlineScalarBytes = 16;

plx_status out_of_resources(const plx_kernel_s* k, const std::string& what) {
    return fail(PLX_ERROR_OUT_OF_RESOURCES, "cuda: launch of '" + k->name + "': " + what);
}

plx_status invalid(const plx_kernel_s* k, const std::string& what) {
    return fail(PLX_ERROR_INVALID_ARGUMENT, "cuda: launch of '" + k->name + "': " + what);
}

// Raises the function's dynamic shared memory limit; above 48 KiB the driver requires it.
plx_status allow_dynamic_shared(plx_kernel_s* k, uint32_t bytes) {
    if (bytes <= k->dynamic_shared_allowed.load(std::memory_order_acquire)) return PLX_OK;
    std::lock_guard<std::mutex> lock(k->attribute_mutex);
    if (bytes <= k->dynamic_shared_allowed.load(std::memory_order_relaxed)) return PLX_OK;
    PLX_CU_TRY("launch: raising the kernel's dynamic shared memory limit", cuFuncSetAttribute,
               k->function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
               static_cast<int>(bytes));
    k->dynamic_shared_allowed.store(bytes, std::memory_order_release);
    return PLX_OK;
}

} // namespace

plx_status launch(plx_queue queue, plx_kernel kernel, const plx_launch_dims* dims,
                  const plx_arg* args, uint32_t num_args, plx_event* event) {
    // A routine ignores dims (plugin.h), so it may have none.
    if (queue != nullptr && kernel != nullptr && kernel->routine != nullptr)
        return routine_launch(queue, kernel, args, num_args, event);
    if (queue == nullptr || kernel == nullptr || dims == nullptr)
        return fail(PLX_ERROR_INVALID_ARGUMENT, "cuda: launch: queue, kernel or dims is NULL");
    plx_kernel_s* k = kernel;
    plx_device_s* d = queue->device;
    if (k->module->device != d)
        return invalid(k, "the kernel was loaded on device " +
                              std::to_string(k->module->device->index) +
                              ", the queue is on device " + std::to_string(d->index));
    if (num_args > 0 && args == nullptr) return invalid(k, "args is NULL with num_args > 0");
    if (dims->dims < 1 || dims->dims > 3)
        return invalid(k, "dims is " + std::to_string(dims->dims) + ", expected 1, 2 or 3");
    const uint32_t dynamic_bytes =
        dims->struct_size >= offsetof(plx_launch_dims, dynamic_local_bytes) + sizeof(uint32_t)
            ? dims->dynamic_local_bytes
            : 0;

    // Whole groups: ceil(global / local) per dimension, as plugin.h specifies.
    unsigned grid[3] = {1, 1, 1}, block[3] = {1, 1, 1};
    bool empty = false;
    uint64_t threads = 1;
    static const char* const axis = "xyz";
    for (uint32_t i = 0; i < dims->dims; ++i) {
        const uint64_t global = dims->global_size[i];
        const uint32_t local = dims->local_size[i];
        if (local == 0) return invalid(k, std::string("local_size.") + axis[i] + " is 0");
        if (local > d->info.max_work_group_dims[i])
            return out_of_resources(k, std::string("local_size.") + axis[i] + " = " +
                                           std::to_string(local) +
                                           " exceeds the device's maximum block dimension of " +
                                           std::to_string(d->info.max_work_group_dims[i]));
        const uint64_t groups = global / local + (global % local != 0);
        if (groups > static_cast<uint64_t>(d->max_grid[i]))
            return out_of_resources(k, std::to_string(groups) + " groups along " + axis[i] +
                                           " exceed the device's maximum grid dimension of " +
                                           std::to_string(d->max_grid[i]));
        empty = empty || groups == 0;
        grid[i] = static_cast<unsigned>(groups);
        block[i] = local;
        threads *= local;
    }
    if (threads > d->info.max_work_group_size)
        return out_of_resources(k, std::to_string(threads) +
                                       " threads per group exceed the device's maximum of " +
                                       std::to_string(d->info.max_work_group_size));
    if (threads > k->max_threads)
        return out_of_resources(
            k, std::to_string(threads) + " threads per group exceed the kernel's maximum of " +
                   std::to_string(k->max_threads) + " (set by its register use or launch bounds)");
    if (uint64_t(k->static_shared) + dynamic_bytes > d->max_shared_optin)
        return out_of_resources(k, std::to_string(k->static_shared) + " bytes of static and " +
                                       std::to_string(dynamic_bytes) +
                                       " bytes of dynamic shared memory exceed the device's " +
                                       std::to_string(d->max_shared_optin) + " bytes per group");

    if (k->params_known && num_args != k->param_sizes.size())
        return invalid(k, "the kernel takes " + std::to_string(k->param_sizes.size()) +
                              " parameters, the launch passes " + std::to_string(num_args));

    // kernelParams holds one pointer per parameter; the driver copies the values it points
    // at during cuLaunchKernel, so launch-local storage is enough.
    void* inline_params[kInlineArgs];
    alignas(16) unsigned char inline_scalars[kInlineArgs][kInlineScalarBytes];
    std::vector<void*> heap_params;
    std::vector<std::vector<unsigned char>> heap_scalars;
    void** params = inline_params;
    if (num_args > kInlineArgs) {
        heap_params.resize(num_args);
        params = heap_params.data();
    }
    for (uint32_t i = 0; i < num_args; ++i) {
        const plx_arg& a = args[i];
        // Built only on error: the hot path stays free of allocations.
        auto which = [i] { return "argument " + std::to_string(i); };
        if (a.kind == PLX_ARG_BUFFER) {
            if (a.buffer == nullptr) return invalid(k, which() + " is a NULL buffer");
            if (a.buffer->device != d)
                return invalid(k, which() + " is a buffer of device " +
                                      std::to_string(a.buffer->device->index) +
                                      ", the launch is on device " + std::to_string(d->index));
            if (k->params_known && k->param_sizes[i] != sizeof(CUdeviceptr))
                return invalid(k, which() + " is a buffer, but kernel parameter " +
                                      std::to_string(i) + " is " +
                                      std::to_string(k->param_sizes[i]) + " bytes, not a pointer");
            // The buffer struct outlives the call, so its pointer field is the storage.
            params[i] = &a.buffer->ptr;
        } else if (a.kind == PLX_ARG_SCALAR) {
            if (a.value == nullptr || a.size == 0)
                return invalid(k, which() + " is a scalar with no value");
            if (k->params_known && k->param_sizes[i] != a.size)
                return invalid(k, which() + " is a scalar of " + std::to_string(a.size) +
                                      " bytes, but kernel parameter " + std::to_string(i) + " is " +
                                      std::to_string(k->param_sizes[i]) + " bytes");
            unsigned char* storage;
            if (i < kInlineArgs && a.size <= kInlineScalarBytes) {
                storage = inline_scalars[i];
                // Zero padding: with no parameter sizes from the driver, a short scalar still
                // never lets the driver read uninitialized bytes.
                std::memset(storage, 0, kInlineScalarBytes);
            } else {
                heap_scalars.emplace_back(a.size);
                storage = heap_scalars.back().data();
            }
            std::memcpy(storage, a.value, a.size);
            params[i] = storage;
        } else {
            return invalid(k, which() + " has kind " + std::to_string(int(a.kind)) +
                                  ", expected PLX_ARG_BUFFER or PLX_ARG_SCALAR");
        }
    }

    if (plx_status s = make_current(d); s != PLX_OK) return s;
    if (dynamic_bytes > 0)
        if (plx_status s = allow_dynamic_shared(k, dynamic_bytes); s != PLX_OK) return s;
    plx_event_s* pending = nullptr;
    if (plx_status s = event_begin(queue, event, &pending); s != PLX_OK) return s;
    if (!empty) {
        CUresult r =
            drv().cuLaunchKernel(k->function, grid[0], grid[1], grid[2], block[0], block[1],
                                 block[2], dynamic_bytes, queue->stream, params, nullptr);
        if (r != CUDA_SUCCESS) {
            event_release(pending);
            plx_status st = status_of(r);
            return cu_error(st == PLX_ERROR_DEVICE ? PLX_ERROR_LAUNCH : st,
                            ("launch of '" + k->name + "'").c_str(), PLX_CUDA_NAME(cuLaunchKernel),
                            r);
        }
    }
    return event_end(queue, pending, event);
}

} // namespace plx_cuda
