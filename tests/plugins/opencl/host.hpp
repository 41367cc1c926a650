// A small test host for the OpenCL plugin: dlopens the built plugin, lends it a log that the
// tests can read, and wraps the handles the tests use so that every one is freed.
#pragma once

#include <plexus/plugin.h>

#include <dlfcn.h>

#include <cstring>
#include <mutex>
#include <string>
#include <vector>

namespace ocltest {

class Host {
public:
    // Loads the plugin at `path` and calls its init; init_status / init_error say how it went.
    explicit Host(const char* path) {
        api_.struct_size = sizeof api_;
        api_.host_ctx = this;
        api_.log = &Host::log_thunk;
        api_.options_json = "{}";
        lib_ = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (lib_ == nullptr) {
            const char* why = dlerror();
            load_error = std::string("dlopen ") + path + ": " + (why ? why : "?");
            return;
        }
        auto init = reinterpret_cast<plx_plugin_init_fn>(dlsym(lib_, PLX_PLUGIN_INIT_SYMBOL));
        if (init == nullptr) {
            load_error = std::string(path) + " has no " PLX_PLUGIN_INIT_SYMBOL;
            return;
        }
        plugin.struct_size = sizeof plugin;
        init_status = init(PLX_ABI_VERSION, &api_, &plugin);
        if (plugin.last_error != nullptr) init_error = plugin.last_error();
        initialized_ = true;
    }
    ~Host() {
        if (initialized_ && init_status == PLX_OK && plugin.shutdown != nullptr) plugin.shutdown();
        // Not dlclose'd: the ICD loader and PoCL keep threads that must not lose their code.
    }
    Host(const Host&) = delete;
    Host& operator=(const Host&) = delete;

    // Every logged message containing `needle`.
    size_t count_log(const std::string& needle) {
        std::lock_guard<std::mutex> lock(mutex_);
        size_t n = 0;
        for (const auto& line : log_)
            if (line.find(needle) != std::string::npos) ++n;
        return n;
    }
    std::string all_log() {
        std::lock_guard<std::mutex> lock(mutex_);
        std::string out;
        for (const auto& line : log_)
            out += line + "\n";
        return out;
    }
    std::string error() const { return plugin.last_error ? plugin.last_error() : ""; }

    plx_plugin plugin{};
    plx_status init_status = PLX_ERROR_INTERNAL;
    std::string init_error;
    std::string load_error;

private:
    static void log_thunk(void* ctx, plx_log_level level, const char* msg) {
        auto* self = static_cast<Host*>(ctx);
        std::lock_guard<std::mutex> lock(self->mutex_);
        self->log_.push_back(std::to_string(static_cast<int>(level)) + " " + msg);
    }

    plx_host_api api_{};
    void* lib_ = nullptr;
    bool initialized_ = false;
    std::mutex mutex_;
    std::vector<std::string> log_;
};

} // namespace ocltest
