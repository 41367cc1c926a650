// Loads the native plugin straight from its build path with a small test host, so its tests
// exercise the C ABI exactly as the core's loader would, without the core.
#pragma once

#include <plexus/plugin.h>

#include <dlfcn.h>

#include <cstring>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#ifndef NATIVE_PLUGIN_PATH
#error "NATIVE_PLUGIN_PATH must name the built libplexus-native.so"
#endif

namespace native_test {

// Collects log messages from any thread.
struct TestHost {
    std::mutex mutex;
    std::vector<std::pair<plx_log_level, std::string>> messages;
    std::string options;
    plx_host_api api{};

    explicit TestHost(std::string options_json) : options(std::move(options_json)) {
        api.struct_size = sizeof api;
        api.host_ctx = this;
        api.log = [](void* ctx, plx_log_level level, const char* msg) {
            auto* self = static_cast<TestHost*>(ctx);
            std::lock_guard lock(self->mutex);
            self->messages.emplace_back(level, msg);
        };
        api.options_json = options.c_str();
    }
};

// dlopen + plx_plugin_init; shutdown + dlclose on destruction. The plugin keeps global state,
// so only one Plugin may be alive at a time.
class Plugin {
public:
    explicit Plugin(const std::string& options = "{}") : host_(options) {
        handle_ = dlopen(NATIVE_PLUGIN_PATH, RTLD_NOW | RTLD_LOCAL);
        if (!handle_) throw std::runtime_error(std::string("dlopen: ") + dlerror());
        init_ = reinterpret_cast<plx_plugin_init_fn>(dlsym(handle_, PLX_PLUGIN_INIT_SYMBOL));
        if (!init_) throw std::runtime_error("dlsym: no " PLX_PLUGIN_INIT_SYMBOL);
        desc.struct_size = sizeof desc;
        status = init_(PLX_ABI_VERSION, &host_.api, &desc);
        if (status != PLX_OK && desc.last_error) error = desc.last_error();
    }
    Plugin(const Plugin&) = delete;
    Plugin& operator=(const Plugin&) = delete;
    ~Plugin() {
        if (status == PLX_OK) desc.shutdown();
        dlclose(handle_);
    }

    plx_device device() {
        plx_device d = nullptr;
        if (desc.device_get(0, &d) != PLX_OK) throw std::runtime_error("device_get failed");
        return d;
    }
    plx_device_info info() {
        plx_device_info i{};
        i.struct_size = sizeof i;
        if (desc.device_info(device(), &i) != PLX_OK) throw std::runtime_error("device_info");
        return i;
    }
    plx_queue queue(uint32_t flags = 0) {
        plx_queue q = nullptr;
        if (desc.queue_create(device(), flags, &q) != PLX_OK)
            throw std::runtime_error("queue_create failed");
        return q;
    }
    std::string last_error() { return desc.last_error(); }
    plx_plugin_init_fn init_fn() const { return init_; }
    TestHost& host() { return host_; }

    plx_plugin desc{};
    plx_status status = PLX_ERROR_INTERNAL;
    std::string error;

private:
    TestHost host_;
    void* handle_ = nullptr;
    plx_plugin_init_fn init_ = nullptr;
};

inline bool contains(const std::string& haystack, const std::string& needle) {
    return haystack.find(needle) != std::string::npos;
}

} // namespace native_test
