// The native plugin's entry point: descriptor, options, last_error, handle bookkeeping and
// shutdown. Only plx_plugin_init is exported.
#include "native_plugin.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <new>
#include <thread>

namespace plx_native {
namespace {

bool g_initialized = false;
std::mutex g_init_mutex;

// The core's LLVM host code generator emits every catalog intrinsic inline; listing them all
// tells the router this backend accepts any kernel the catalog can express.
#define PLX_CATALOG_CLASSES PLX_CLASS_ALL
const plx_intrinsic kIntrinsics[] = {
#define PLX_INTRINSIC(id, signature, convergence, opencl_c, cuda_c, nvvm)                          \
    {.name = #id, .spelling = "", .host_fn = nullptr, .flags = PLX_INTRINSIC_INLINE},
#include <plexus/intrinsics.def>
#undef PLX_INTRINSIC
};

// Reads `threads` from the plugin's options; other keys of the section (enabled, priority,
// devices) belong to the host, which has already checked them.
bool parse_options(const char* text, uint32_t& threads) {
    const unsigned hw = std::thread::hardware_concurrency();
    threads = std::clamp<unsigned>(hw, 1, kMaxThreads);
    nlohmann::json options;
    try {
        options = nlohmann::json::parse(text ? text : "{}");
    } catch (const nlohmann::json::parse_error& e) {
        fail(PLX_ERROR_INVALID_ARGUMENT,
             std::string("native: init: options are not valid JSON: ") + e.what());
        return false;
    }
    if (!options.is_object()) {
        fail(PLX_ERROR_INVALID_ARGUMENT,
             "native: init: options must be a JSON object, got " + options.dump());
        return false;
    }
    const auto it = options.find("threads");
    if (it == options.end()) return true;
    const bool ok = (it->is_number_unsigned() || it->is_number_integer()) &&
                    it->get<int64_t>() >= 1 && it->get<int64_t>() <= kMaxThreads;
    if (!ok) {
        fail(PLX_ERROR_INVALID_ARGUMENT,
             "native: init: option \"threads\" must be an integer from 1 to " +
                 std::to_string(kMaxThreads) + ", got " + it->dump());
        return false;
    }
    threads = static_cast<uint32_t>(it->get<int64_t>());
    return true;
}

void plugin_shutdown() {
    std::lock_guard lock(g_init_mutex);
    if (!g_initialized) return;
    pool_stop();
    Host::release_all();
    g_initialized = false;
}

// Direct: nothing is compiled here, the core hands over host functions; the one language is
// that of library routines (1.4), loaded by name.
constexpr plx_language kLanguages[] = {PLX_LANG_ROUTINE};

constexpr plx_support::Identity kIdentity{.name = "native",
                                          .priority = 50,
                                          .execution_model = PLX_EXEC_DIRECT,
                                          .languages = kLanguages,
                                          .intrinsics = kIntrinsics,
                                          .shutdown = plugin_shutdown};

plx_plugin make_descriptor() {
    plx_plugin descriptor = plx_support::describe(kIdentity);
    Host::set_entries(descriptor);
    PLX_HOST_BUFFER_ENTRIES(PLX_SET_ENTRY)
    descriptor.buffer_host_ptr = buffer_host_ptr;
    PLX_SET_ENTRY(launch_host)
    // 1.4: library routines (PLX_LANG_ROUTINE only); module_get_binary stays NULL, a routine
    // has no binary.
    PLX_SET_ENTRY(module_load)
    PLX_SET_ENTRY(module_unload)
    PLX_SET_ENTRY(kernel_get)
    PLX_SET_ENTRY(launch)
    return descriptor;
}

plx_status start(const plx_host_api* host) {
    std::lock_guard lock(g_init_mutex);
    if (g_initialized)
        return fail(PLX_ERROR_INVALID_ARGUMENT,
                    "native: init: already initialized; call shutdown first");
    uint32_t threads = 0;
    if (!parse_options(plx_support::host_options(host), threads)) return PLX_ERROR_INVALID_ARGUMENT;
    if (!device_setup(threads)) return PLX_ERROR_DEVICE;
    if (!pool_start(threads)) {
        Host::teardown();
        return PLX_ERROR_OUT_OF_RESOURCES;
    }
    plx_support::set_host(host);
    g_initialized = true;
    log(PLX_LOG_DEBUG, "native: " + std::to_string(threads) + " threads");
    return PLX_OK;
}

plx_status init(uint32_t host_abi_version, const plx_host_api* host, plx_plugin* plugin) {
    if (plx_status s = plx_support::check_init(Plugin::names, host_abi_version, plugin);
        s != PLX_OK)
        return s;
    const plx_status status = start(host);
    if (status == PLX_OK) {
        plx_support::fill_descriptor(plugin, make_descriptor());
        return PLX_OK;
    }
    // The loader still gets our identity and the message; no other entry may be called.
    plx_support::Identity identity = kIdentity;
    identity.intrinsics = {};
    identity.shutdown = nullptr;
    plx_support::fill_descriptor(plugin, plx_support::describe(identity));
    return status;
}

} // namespace

} // namespace plx_native

PLX_DEFINE_PLUGIN_INIT(plx_native::Plugin, plx_native::init)
