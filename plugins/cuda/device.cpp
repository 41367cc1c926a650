// Devices of the CUDA backend: one plexus device per GPU, described once at init, and the
// primary context of each, retained at first use and made current on the calling thread.
#include "cuda_plugin.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>

namespace plx_cuda {

std::vector<std::unique_ptr<plx_device_s>>& devices() {
    static std::vector<std::unique_ptr<plx_device_s>> list;
    return list;
}

namespace {

void copy_string(char* dst, size_t capacity, const char* src) {
    const size_t n = strnlen(src, capacity - 1);
    std::memcpy(dst, src, n);
    dst[n] = '\0';
}

// ABI 1.1 identity: the UUID and the PCI address. Neither is worth skipping a device over: a
// failure leaves the field empty (all zero, "") and is logged.
void describe_identity(plx_device_s* d) {
    const Driver& cu = drv();
    plx_device_info& info = d->info;
    const std::string which = "cuda: device " + std::to_string(d->dev) + ": ";
    if (cu.cuDeviceGetUuid != nullptr) {
        CUuuid uuid{};
        CUresult r = cu.cuDeviceGetUuid(&uuid, d->dev);
        if (r == CUDA_SUCCESS) {
            static_assert(sizeof uuid.bytes == sizeof info.uuid);
            std::memcpy(info.uuid, uuid.bytes, sizeof info.uuid);
        } else {
            log(PLX_LOG_WARN, which + "no UUID: " + describe(PLX_CUDA_NAME(cuDeviceGetUuid), r));
        }
    }
    if (cu.cuDeviceGetPCIBusId != nullptr) {
        char bus[sizeof info.pci_bus_id] = {0};
        CUresult r = cu.cuDeviceGetPCIBusId(bus, static_cast<int>(sizeof bus), d->dev);
        if (r == CUDA_SUCCESS) {
            bus[sizeof bus - 1] = '\0';
            // "0000:41:00.0"; lower-case hex like sysfs, whatever case the driver used.
            for (char* c = bus; *c != '\0'; ++c)
                *c = static_cast<char>(std::tolower(static_cast<unsigned char>(*c)));
            copy_string(info.pci_bus_id, sizeof info.pci_bus_id, bus);
        } else {
            log(PLX_LOG_WARN,
                which + "no PCI bus id: " + describe(PLX_CUDA_NAME(cuDeviceGetPCIBusId), r));
        }
    }
}

plx_status describe_device(plx_device_s* d) {
    const Driver& cu = drv();
    auto attr = [&](CUdevice_attribute a, int* value) -> plx_status {
        CUresult r = cu.cuDeviceGetAttribute(value, a, d->dev);
        if (r != CUDA_SUCCESS)
            return cu_error(PLX_ERROR_DEVICE, "reading a device attribute",
                            PLX_CUDA_NAME(cuDeviceGetAttribute), r);
        return PLX_OK;
    };
    int major = 0, minor = 0, sms = 0, threads = 0, bx = 0, by = 0, bz = 0, warp = 0;
    int shared = 0, shared_optin = 0;
    const std::pair<CUdevice_attribute, int*> wanted[] = {
        {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &major},
        {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, &minor},
        {CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &sms},
        {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, &threads},
        {CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, &bx},
        {CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y, &by},
        {CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z, &bz},
        {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, &d->max_grid[0]},
        {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, &d->max_grid[1]},
        {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z, &d->max_grid[2]},
        {CU_DEVICE_ATTRIBUTE_WARP_SIZE, &warp},
        {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, &shared},
        {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, &shared_optin},
    };
    for (const auto& [a, value] : wanted)
        if (plx_status s = attr(a, value); s != PLX_OK) return s;

    char name[256] = {0};
    CUresult r = cu.cuDeviceGetName(name, sizeof name - 1, d->dev);
    if (r != CUDA_SUCCESS)
        return cu_error(PLX_ERROR_DEVICE, "reading the device name", PLX_CUDA_NAME(cuDeviceGetName),
                        r);
    size_t total = 0;
    r = cu.cuDeviceTotalMem(&total, d->dev);
    if (r != CUDA_SUCCESS)
        return cu_error(PLX_ERROR_DEVICE, "reading the device memory size",
                        PLX_CUDA_NAME(cuDeviceTotalMem), r);

    plx_device_info& info = d->info;
    info.struct_size = sizeof(plx_device_info);
    info.type = PLX_DEVICE_TYPE_GPU;
    copy_string(info.name, sizeof info.name, name);
    copy_string(info.vendor, sizeof info.vendor, "NVIDIA");
    copy_string(info.platform, sizeof info.platform, "CUDA");
    std::string arch = "sm_" + std::to_string(major) + std::to_string(minor);
    copy_string(info.arch, sizeof info.arch, arch.c_str());
    info.compute_units = static_cast<uint32_t>(sms);
    info.max_work_group_size = static_cast<uint32_t>(threads);
    info.max_work_group_dims[0] = static_cast<uint32_t>(bx);
    info.max_work_group_dims[1] = static_cast<uint32_t>(by);
    info.max_work_group_dims[2] = static_cast<uint32_t>(bz);
    info.subgroup_size = static_cast<uint32_t>(warp);
    info.subgroup_ops = PLX_SUBGROUP_KNOWN | PLX_SUBGROUP_ALL; // warp shuffles and votes
    // Tensor cores through wmma: f16 from sm_70, bf16 and tf32 from sm_80; warpgroup
    // accumulators from sm_80 (wgmma on sm_90, ldmatrix and mma.sync below it).
    const int cc = major * 10 + minor;
    info.matrix_ops = PLX_MATRIX_KNOWN | (cc >= 70 ? PLX_MATRIX_F16 : 0u) |
                      (cc >= 80 ? PLX_MATRIX_BF16 | PLX_MATRIX_TF32 | PLX_MATRIX_WARPGROUP : 0u);
    info.memory_bytes = total;
    info.max_alloc_bytes = total;
    // The opt-in maximum is what a kernel can use once launch raises its dynamic limit.
    d->max_shared_optin = static_cast<uint32_t>(std::max(shared, shared_optin));
    info.local_memory_bytes = d->max_shared_optin;
    info.fp64 = 1;
    info.compute_capability = static_cast<uint32_t>(major * 10 + minor);
    describe_identity(d);
    return PLX_OK;
}

} // namespace

plx_status enumerate_devices() {
    const Driver& cu = drv();
    devices().clear();
    CUresult r = cu.cuInit(0);
    if (r != CUDA_SUCCESS) {
        // A driver without a usable GPU is a normal machine, not a plugin failure.
        log(r == CUDA_ERROR_NO_DEVICE ? PLX_LOG_INFO : PLX_LOG_WARN,
            "cuda: no device is usable: " + describe(PLX_CUDA_NAME(cuInit), r));
        return PLX_OK;
    }
    int count = 0;
    r = cu.cuDeviceGetCount(&count);
    if (r != CUDA_SUCCESS) {
        log(PLX_LOG_WARN,
            "cuda: no device is usable: " + describe(PLX_CUDA_NAME(cuDeviceGetCount), r));
        return PLX_OK;
    }
    if (count == 0) log(PLX_LOG_INFO, "cuda: the driver reports 0 devices");
    for (int i = 0; i < count; ++i) {
        auto d = std::make_unique<plx_device_s>();
        r = cu.cuDeviceGet(&d->dev, i);
        if (r != CUDA_SUCCESS) {
            log(PLX_LOG_WARN, "cuda: skipping device " + std::to_string(i) + ": " +
                                  describe(PLX_CUDA_NAME(cuDeviceGet), r));
            continue;
        }
        if (describe_device(d.get()) != PLX_OK) {
            log(PLX_LOG_WARN,
                "cuda: skipping device " + std::to_string(i) + ": " + last_error_text());
            continue;
        }
        d->index = static_cast<uint32_t>(devices().size());
        log(PLX_LOG_DEBUG, std::string("cuda: device ") + std::to_string(d->index) + ": " +
                               d->info.name + " (" + d->info.arch + ")");
        devices().push_back(std::move(d));
    }
    return PLX_OK;
}

void release_devices() {
    for (auto& d : devices()) {
        if (d->ctx == nullptr) continue;
        if (drv().cuCtxSetCurrent(d->ctx) == CUDA_SUCCESS) {
            release_routines(d.get());
            release_fill_module(d.get());
            for (CUevent e : d->event_pool)
                drv().cuEventDestroy(e);
        }
        drv().cuDevicePrimaryCtxRelease(d->dev);
    }
    devices().clear();
}

plx_status retain_context(plx_device_s* d) {
    if (!d->ctx_known.load(std::memory_order_acquire)) {
        std::call_once(d->ctx_once, [d] {
            CUresult r = drv().cuDevicePrimaryCtxRetain(&d->ctx, d->dev);
            if (r != CUDA_SUCCESS) {
                d->ctx = nullptr;
                d->ctx_status = status_of(r) == PLX_ERROR_OUT_OF_MEMORY ? PLX_ERROR_OUT_OF_MEMORY
                                                                        : PLX_ERROR_DEVICE;
                d->ctx_error = std::string("cuda: cannot create a context on device ") +
                               std::to_string(d->index) + " (" + d->info.name +
                               "): " + describe(PLX_CUDA_NAME(cuDevicePrimaryCtxRetain), r);
            }
            d->ctx_known.store(true, std::memory_order_release);
        });
    }
    if (d->ctx_status != PLX_OK) return fail(d->ctx_status, d->ctx_error);
    return PLX_OK;
}

plx_status make_current(plx_device_s* d) {
    if (plx_status s = retain_context(d); s != PLX_OK) return s;
    // Cheaper than an unconditional cuCtxSetCurrent, and still right when the application
    // switched the thread to another context between two plexus calls.
    CUcontext current = nullptr;
    if (drv().cuCtxGetCurrent(&current) == CUDA_SUCCESS && current == d->ctx) return PLX_OK;
    PLX_CU_TRY("making the device's context current", cuCtxSetCurrent, d->ctx);
    return PLX_OK;
}

plx_status device_count(uint32_t* count) {
    if (count == nullptr)
        return fail(PLX_ERROR_INVALID_ARGUMENT, "cuda: device_count: count is NULL");
    *count = static_cast<uint32_t>(devices().size());
    return PLX_OK;
}

plx_status device_get(uint32_t index, plx_device* device) {
    if (device == nullptr)
        return fail(PLX_ERROR_INVALID_ARGUMENT, "cuda: device_get: device is NULL");
    if (index >= devices().size())
        return fail(PLX_ERROR_INVALID_ARGUMENT, "cuda: device_get: index " + std::to_string(index) +
                                                    " is out of range (" +
                                                    std::to_string(devices().size()) + " devices)");
    *device = devices()[index].get();
    return PLX_OK;
}

plx_status device_info(plx_device device, plx_device_info* info) {
    if (device == nullptr || info == nullptr)
        return fail(PLX_ERROR_INVALID_ARGUMENT, "cuda: device_info: device or info is NULL");
    // Only the whole fields the caller's (possibly older) definition has; struct_size says how
    // much that was.
    if (!plx_support::write_device_info(device->info, info))
        return fail(PLX_ERROR_INVALID_ARGUMENT, "cuda: device_info: info->struct_size is " +
                                                    std::to_string(info->struct_size) +
                                                    ", too small for any field");
    return PLX_OK;
}

} // namespace plx_cuda
