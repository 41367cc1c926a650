// A minimal host for the CUDA plugin tests: dlopens the built plugin, lends it a logging host
// API that keeps every message, and calls plx_plugin_init.
#pragma once

#include <plexus/plugin.h>

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace plexus::test {

struct PluginHost {
    void* library = nullptr;
    std::string open_error;
    plx_plugin plugin{};
    plx_host_api api{};
    std::mutex log_mutex;
    std::vector<std::string> logs;

    // The plugin file: PLEXUS_TEST_CUDA_PLUGIN when set (to run a build on another machine),
    // otherwise the path meson gave at build time.
    explicit PluginHost(const char* built_path) {
        const char* path = std::getenv("PLEXUS_TEST_CUDA_PLUGIN");
        if (path == nullptr || path[0] == '\0') path = built_path;
        library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (library == nullptr) open_error = std::string(path) + ": " + dlerror();
        api.struct_size = sizeof api;
        api.host_ctx = this;
        api.log = [](void* ctx, plx_log_level, const char* msg) {
            auto* self = static_cast<PluginHost*>(ctx);
            std::lock_guard<std::mutex> lock(self->log_mutex);
            self->logs.emplace_back(msg);
        };
        api.options_json = "{}";
        plugin.struct_size = sizeof plugin;
    }
    ~PluginHost() {
        // The plugin stays loaded: its driver may keep threads that run its code.
    }

    plx_plugin_init_fn entry() const {
        return library != nullptr
                   ? reinterpret_cast<plx_plugin_init_fn>(dlsym(library, PLX_PLUGIN_INIT_SYMBOL))
                   : nullptr;
    }
    plx_status init(uint32_t abi = PLX_ABI_VERSION) { return entry()(abi, &api, &plugin); }
    std::string error() const {
        return plugin.last_error != nullptr ? plugin.last_error() : "(no last_error)";
    }
    std::string all_logs() {
        std::lock_guard<std::mutex> lock(log_mutex);
        std::string out;
        for (const std::string& l : logs)
            out += l + "\n";
        return out;
    }
};

inline bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

// The start of a GPU test's main(): argv without `--skip-exit-code=N` into `args`, N into
// `skip_code` (the status when there is nothing to test: meson's "skipped" is 77), and the
// plugin opened and initialized. std::nullopt to go on; else the status to return, having said
// why (a skip where there is no driver or no device).
inline std::optional<int> start_gpu_test(PluginHost& host, int argc, char** argv,
                                         std::vector<char*>& args, int& skip_code) {
    for (int i = 0; i < argc; ++i) {
        if (std::strncmp(argv[i], "--skip-exit-code=", 17) == 0)
            skip_code = std::atoi(argv[i] + 17);
        else
            args.push_back(argv[i]);
    }
    if (host.library == nullptr) {
        std::fprintf(stderr, "cannot open the cuda plugin: %s\n", host.open_error.c_str());
        return 1;
    }
    const plx_status s = host.init();
    if (s == PLX_ERROR_NO_DRIVER) {
        std::printf("SKIP: no CUDA driver, nothing to test: %s\n", host.error().c_str());
        return skip_code;
    }
    if (s != PLX_OK) {
        std::fprintf(stderr, "the cuda plugin failed to initialize (%d): %s\n", int(s),
                     host.error().c_str());
        return 1;
    }
    uint32_t count = 0;
    host.plugin.device_count(&count);
    if (count == 0) {
        std::printf("SKIP: no CUDA device was found (the driver reports none)\n%s",
                    host.all_logs().c_str());
        host.plugin.shutdown();
        return skip_code;
    }
    return std::nullopt;
}

} // namespace plexus::test
