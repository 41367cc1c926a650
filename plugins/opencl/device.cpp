// Device discovery: one plexus device per OpenCL device of every platform (platform order, then
// device order), each with its own context and its limits read once at init.
#include "opencl_plugin.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstring>

namespace plx_opencl {
namespace {

std::vector<std::unique_ptr<plx_device_s>> g_devices;
std::string g_no_device_reason;

std::string platform_string(cl_platform_id platform, cl_platform_info what) {
    size_t size = 0;
    if (cl().clGetPlatformInfo(platform, what, 0, nullptr, &size) != CL_SUCCESS || size == 0)
        return {};
    std::string value(size, '\0');
    if (cl().clGetPlatformInfo(platform, what, size, value.data(), nullptr) != CL_SUCCESS)
        return {};
    value.resize(std::strlen(value.c_str()));
    return value;
}

std::string device_string(cl_device_id device, cl_device_info what) {
    size_t size = 0;
    if (cl().clGetDeviceInfo(device, what, 0, nullptr, &size) != CL_SUCCESS || size == 0) return {};
    std::string value(size, '\0');
    if (cl().clGetDeviceInfo(device, what, size, value.data(), nullptr) != CL_SUCCESS) return {};
    value.resize(std::strlen(value.c_str()));
    return value;
}

template <class T> T device_value(cl_device_id device, cl_device_info what, T fallback = T{}) {
    T value{};
    if (cl().clGetDeviceInfo(device, what, sizeof value, &value, nullptr) != CL_SUCCESS)
        return fallback;
    return value;
}

// Copies `text` into a fixed char array of the ABI, truncating and always NUL-terminating.
template <size_t N> void copy_text(char (&dst)[N], const std::string& text) {
    const size_t n = std::min(text.size(), N - 1);
    std::memcpy(dst, text.data(), n);
    dst[n] = '\0';
}

uint32_t clamp32(uint64_t v) {
    return v > UINT32_MAX ? UINT32_MAX : static_cast<uint32_t>(v);
}

bool has_extension(const std::string& extensions, const char* name) {
    const size_t len = std::strlen(name);
    for (size_t pos = extensions.find(name); pos != std::string::npos;
         pos = extensions.find(name, pos + 1)) {
        const bool starts = pos == 0 || extensions[pos - 1] == ' ';
        const bool ends = pos + len == extensions.size() || extensions[pos + len] == ' ';
        if (starts && ends) return true;
    }
    return false;
}

// Sub-group (warp / wavefront) width: the vendor query when the device offers one, 32 on any
// NVIDIA device, else 1 because OpenCL 1.2 has no portable notion of it.
uint32_t subgroup_size(cl_device_id id, const std::string& vendor, const std::string& extensions) {
    if (has_extension(extensions, "cl_nv_device_attribute_query")) {
        const cl_uint warp = device_value<cl_uint>(id, CL_DEVICE_WARP_SIZE_NV);
        if (warp != 0) return warp;
    }
    if (has_extension(extensions, "cl_amd_device_attribute_query")) {
        const cl_uint wave = device_value<cl_uint>(id, CL_DEVICE_WAVEFRONT_WIDTH_AMD);
        if (wave != 0) return wave;
    }
    if (vendor.find("NVIDIA") != std::string::npos) return 32;
    return 1;
}

// The subgroup operations the generated OpenCL C can use: each family needs its extension
// (cl_khr_subgroups for the basic ones); a device without them is routed around.
uint32_t subgroup_ops(const std::string& extensions) {
    uint32_t ops = PLX_SUBGROUP_KNOWN;
    if (!has_extension(extensions, "cl_khr_subgroups")) return ops;
    ops |= PLX_SUBGROUP_BASIC;
    if (has_extension(extensions, "cl_khr_subgroup_shuffle")) ops |= PLX_SUBGROUP_SHUFFLE;
    if (has_extension(extensions, "cl_khr_subgroup_shuffle_relative"))
        ops |= PLX_SUBGROUP_SHUFFLE_RELATIVE;
    if (has_extension(extensions, "cl_khr_subgroup_ballot")) ops |= PLX_SUBGROUP_BALLOT;
    return ops;
}

// The generated code is OpenCL C 1.2 and compiles as 3.0 too; its float atomic helpers use
// cl_ext_float_atomics only from OpenCL C 2.0 on (atomic_float), so a device that has the
// extension and OpenCL C 3.0 builds as 3.0 (PoCL 5 does), every other one as 1.2.
std::string c_standard(cl_device_id id, const std::string& extensions) {
    // OpenCL 3.0's CL_DEVICE_OPENCL_C_ALL_VERSIONS and its cl_name_version entries (cl.h has
    // them only for a 3.0 target; the plugin targets 1.2, and an older device refuses the query).
    constexpr cl_device_info all_versions = 0x1066;
    struct NameVersion {
        cl_uint version; // major in the top 10 bits
        char name[64];
    };
    if (!has_extension(extensions, "cl_ext_float_atomics")) return "-cl-std=CL1.2";
    size_t size = 0;
    if (cl().clGetDeviceInfo(id, all_versions, 0, nullptr, &size) != CL_SUCCESS || size == 0)
        return "-cl-std=CL1.2";
    std::vector<NameVersion> versions(size / sizeof(NameVersion));
    if (cl().clGetDeviceInfo(id, all_versions, versions.size() * sizeof(NameVersion),
                             versions.data(), nullptr) != CL_SUCCESS)
        return "-cl-std=CL1.2";
    for (const NameVersion& v : versions)
        if (v.version >> 22 == 3) return "-cl-std=CL3.0";
    return "-cl-std=CL1.2";
}

// The device's UUID (cl_khr_device_uuid) into `uuid`, left all zero when it has none.
void device_uuid(cl_device_id id, const std::string& extensions, uint8_t (&uuid)[16]) {
    static_assert(CL_UUID_SIZE_KHR == sizeof uuid, "cl_khr_device_uuid gives 16 bytes");
    std::memset(uuid, 0, sizeof uuid);
    if (!has_extension(extensions, "cl_khr_device_uuid")) return;
    cl_uchar value[CL_UUID_SIZE_KHR] = {};
    if (cl().clGetDeviceInfo(id, CL_DEVICE_UUID_KHR, sizeof value, value, nullptr) == CL_SUCCESS)
        std::memcpy(uuid, value, sizeof uuid);
}

// "dddd:bb:dd.f" from cl_khr_pci_bus_info, else from NVIDIA's attribute query, else "".
std::string pci_bus_id(cl_device_id id, const std::string& extensions) {
    char text[32];
    if (has_extension(extensions, "cl_khr_pci_bus_info")) {
        cl_device_pci_bus_info_khr pci{};
        if (cl().clGetDeviceInfo(id, CL_DEVICE_PCI_BUS_INFO_KHR, sizeof pci, &pci, nullptr) ==
            CL_SUCCESS) {
            std::snprintf(text, sizeof text, "%04x:%02x:%02x.%x", pci.pci_domain, pci.pci_bus,
                          pci.pci_device, pci.pci_function);
            return text;
        }
    }
    if (has_extension(extensions, "cl_nv_device_attribute_query")) {
        cl_uint bus = 0, slot = 0, domain = 0;
        if (cl().clGetDeviceInfo(id, CL_DEVICE_PCI_BUS_ID_NV, sizeof bus, &bus, nullptr) ==
                CL_SUCCESS &&
            cl().clGetDeviceInfo(id, CL_DEVICE_PCI_SLOT_ID_NV, sizeof slot, &slot, nullptr) ==
                CL_SUCCESS) {
            // The domain query came later (CUDA 10.2); without it the domain is 0. The slot is
            // read as (device << 3) | function, the encoding hwloc and others rely on: NVIDIA
            // does not document it.
            if (cl().clGetDeviceInfo(id, CL_DEVICE_PCI_DOMAIN_ID_NV, sizeof domain, &domain,
                                     nullptr) != CL_SUCCESS)
                domain = 0;
            std::snprintf(text, sizeof text, "%04x:%02x:%02x.%x", domain, bus & 0xffu, slot >> 3,
                          slot & 7u);
            return text;
        }
    }
    return {};
}

plx_device_type device_type(cl_device_type type) {
    if (type & CL_DEVICE_TYPE_GPU) return PLX_DEVICE_TYPE_GPU;
    if (type & CL_DEVICE_TYPE_CPU) return PLX_DEVICE_TYPE_CPU;
    if (type & CL_DEVICE_TYPE_ACCELERATOR) return PLX_DEVICE_TYPE_ACCELERATOR;
    return PLX_DEVICE_TYPE_OTHER;
}

// Reads the device's description and makes its context; false (with a log line) when the
// device cannot run JIT kernels.
bool make_device(cl_platform_id platform, cl_device_id id, const std::string& platform_name,
                 plx_device_s& dev) {
    const std::string name = device_string(id, CL_DEVICE_NAME);
    if (!device_value<cl_bool>(id, CL_DEVICE_AVAILABLE) ||
        !device_value<cl_bool>(id, CL_DEVICE_COMPILER_AVAILABLE)) {
        // A device without a compiler cannot build the source this plugin is given.
        log(PLX_LOG_INFO, strf("opencl: skipping device '%s' of platform '%s': not available or "
                               "has no OpenCL C compiler",
                               name.c_str(), platform_name.c_str()));
        return false;
    }
    const std::string vendor = device_string(id, CL_DEVICE_VENDOR);
    const std::string extensions = device_string(id, CL_DEVICE_EXTENSIONS);
    plx_device_info& info = dev.info;
    info.struct_size = sizeof info;
    info.type = device_type(device_value<cl_device_type>(id, CL_DEVICE_TYPE));
    copy_text(info.name, name);
    copy_text(info.vendor, vendor);
    copy_text(info.platform, platform_name);
    copy_text(info.arch, device_string(id, CL_DEVICE_VERSION));
    info.compute_units = device_value<cl_uint>(id, CL_DEVICE_MAX_COMPUTE_UNITS);
    info.max_work_group_size = clamp32(device_value<size_t>(id, CL_DEVICE_MAX_WORK_GROUP_SIZE));
    const cl_uint item_dims = device_value<cl_uint>(id, CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS, 3);
    dev.max_item_sizes.assign(std::max<cl_uint>(item_dims, 3), 1);
    cl().clGetDeviceInfo(id, CL_DEVICE_MAX_WORK_ITEM_SIZES, item_dims * sizeof(size_t),
                         dev.max_item_sizes.data(), nullptr);
    for (int d = 0; d < 3; ++d)
        info.max_work_group_dims[d] = clamp32(dev.max_item_sizes[d]);
    info.subgroup_size = subgroup_size(id, vendor, extensions);
    info.subgroup_ops = subgroup_ops(extensions);
    // Matrix fragments as plain arithmetic: the OpenCL C generator lowers them
    // (ir::lower_matrix); no vendor matrix extension is used yet.
    info.matrix_ops = PLX_MATRIX_KNOWN | PLX_MATRIX_ALL | PLX_MATRIX_EMULATED;
    dev.c_standard = c_standard(id, extensions);
    info.memory_bytes = device_value<cl_ulong>(id, CL_DEVICE_GLOBAL_MEM_SIZE);
    info.max_alloc_bytes = device_value<cl_ulong>(id, CL_DEVICE_MAX_MEM_ALLOC_SIZE);
    info.local_memory_bytes = device_value<cl_ulong>(id, CL_DEVICE_LOCAL_MEM_SIZE);
    info.fp64 = has_extension(extensions, "cl_khr_fp64") ||
                device_value<cl_device_fp_config>(id, CL_DEVICE_DOUBLE_FP_CONFIG) != 0;
    info.compute_capability = 0;
    device_uuid(id, extensions, info.uuid);
    copy_text(info.pci_bus_id, pci_bus_id(id, extensions));

    dev.platform = platform;
    dev.id = id;
    return true;
}

} // namespace

plx_status device_enumerate() {
    for (auto& dev : g_devices)
        plx_support::untrack(dev.get());
    g_devices.clear();
    g_no_device_reason.clear();
    cl_uint num_platforms = 0;
    cl_int err = cl().clGetPlatformIDs(0, nullptr, &num_platforms);
    if (err == CL_PLATFORM_NOT_FOUND_KHR || (err == CL_SUCCESS && num_platforms == 0)) {
        g_no_device_reason =
            cl_error_text("clGetPlatformIDs", err == CL_SUCCESS ? CL_PLATFORM_NOT_FOUND_KHR : err) +
            ": no OpenCL platform is installed (no ICD in /etc/OpenCL/vendors "
            "or OCL_ICD_VENDORS)";
        log(PLX_LOG_INFO, "opencl: " + g_no_device_reason);
        return PLX_OK;
    }
    if (err != CL_SUCCESS)
        return fail_cl(PLX_ERROR_NO_DEVICE, "clGetPlatformIDs", err, "cannot list platforms");
    std::vector<cl_platform_id> platforms(num_platforms);
    err = cl().clGetPlatformIDs(num_platforms, platforms.data(), nullptr);
    if (err != CL_SUCCESS)
        return fail_cl(PLX_ERROR_NO_DEVICE, "clGetPlatformIDs", err, "cannot list platforms");

    std::string skipped;
    for (cl_platform_id platform : platforms) {
        const std::string platform_name = platform_string(platform, CL_PLATFORM_NAME);
        cl_uint num = 0;
        err = cl().clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &num);
        if (err != CL_SUCCESS || num == 0) {
            const std::string why =
                strf("platform '%s': %s", platform_name.c_str(),
                     cl_error_text("clGetDeviceIDs", err == CL_SUCCESS ? CL_DEVICE_NOT_FOUND : err)
                         .c_str());
            log(PLX_LOG_INFO, "opencl: " + why);
            skipped += (skipped.empty() ? "" : "; ") + why;
            continue;
        }
        std::vector<cl_device_id> ids(num);
        err = cl().clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, num, ids.data(), nullptr);
        if (err != CL_SUCCESS) continue;
        for (cl_device_id id : ids) {
            auto dev = std::make_unique<plx_device_s>();
            if (make_device(platform, id, platform_name, *dev)) {
                log(PLX_LOG_DEBUG,
                    strf("opencl: device %zu: '%s' (%s), platform '%s'", g_devices.size(),
                         dev->info.name, dev->info.arch, platform_name.c_str()));
                plx_support::track(dev.get(), nullptr); // live until shutdown
                g_devices.push_back(std::move(dev));
            } else {
                skipped += (skipped.empty() ? "" : "; ") +
                           strf("device '%s' of platform '%s' is unusable",
                                device_string(id, CL_DEVICE_NAME).c_str(), platform_name.c_str());
            }
        }
    }
    if (g_devices.empty()) {
        g_no_device_reason =
            strf("%u OpenCL platform(s) but no usable device: %s", num_platforms, skipped.c_str());
        log(PLX_LOG_INFO, "opencl: " + g_no_device_reason);
    }
    return PLX_OK;
}

plx_status ensure_context(plx_device_s& dev) {
    std::call_once(dev.context_once, [&dev] {
        const cl_context_properties props[] = {
            CL_CONTEXT_PLATFORM, reinterpret_cast<cl_context_properties>(dev.platform), 0};
        cl_int err = CL_SUCCESS;
        dev.context = cl().clCreateContext(props, 1, &dev.id, nullptr, nullptr, &err);
        if (dev.context != nullptr && err == CL_SUCCESS) {
            // The tests count these.
            log(PLX_LOG_DEBUG, strf("opencl: created the context of device '%s'", dev.info.name));
            return;
        }
        if (dev.context != nullptr) cl().clReleaseContext(dev.context);
        dev.context = nullptr;
        dev.context_error = err != CL_SUCCESS ? err : CL_INVALID_CONTEXT;
    });
    if (dev.context_error == CL_SUCCESS) return PLX_OK;
    return fail_create("clCreateContext", dev.context_error, dev.info.name);
}

void device_release_all() {
    for (auto& dev : g_devices) {
        host_release_all(*dev);
        dev->programs.clear();
        if (dev->context != nullptr) cl().clReleaseContext(dev->context);
        plx_support::untrack(dev.get());
    }
    g_devices.clear();
    g_no_device_reason.clear();
}

const std::string& no_device_reason() {
    return g_no_device_reason;
}

plx_status device_count(uint32_t* count) {
    if (count == nullptr) return fail(PLX_ERROR_INVALID_ARGUMENT, "device_count: count is NULL");
    *count = static_cast<uint32_t>(g_devices.size());
    // The count is valid either way; the reason helps the loader's no_devices report.
    if (g_devices.empty()) fail(PLX_OK, g_no_device_reason);
    return PLX_OK;
}

plx_status device_get(uint32_t index, plx_device* device) {
    if (device == nullptr) return fail(PLX_ERROR_INVALID_ARGUMENT, "device_get: device is NULL");
    if (index >= g_devices.size()) {
        return fail(PLX_ERROR_INVALID_ARGUMENT,
                    strf("device_get: index %u is out of range, the plugin has %zu device(s)",
                         index, g_devices.size()));
    }
    *device = g_devices[index].get();
    return PLX_OK;
}

plx_status device_info(plx_device device, plx_device_info* info) {
    if (!live(device))
        return fail(PLX_ERROR_INVALID_ARGUMENT, "device_info: not a device of the opencl plugin");
    if (info == nullptr) return fail(PLX_ERROR_INVALID_ARGUMENT, "device_info: info is NULL");
    // Only whole fields: a caller whose struct ends inside a field (a string, the uuid) must
    // not get a piece of it.
    if (!plx_support::write_device_info(device->info, info))
        return fail(PLX_ERROR_INVALID_ARGUMENT,
                    strf("device_info: info->struct_size is %u, too small for any field "
                         "(device '%s')",
                         info->struct_size, device->info.name));
    return PLX_OK;
}

} // namespace plx_opencl
