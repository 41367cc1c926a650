// What launch_path and the launch test share: a Runtime's configuration over the plugins of one
// folder alone (this folder's fake plugins, FAKE_PLUGIN_DIR), with no validation child, no disk
// cache and no fallback, and the two kernels they launch.
#pragma once

#include <plexus/plexus.hpp>

namespace launch_test {

inline plexus::Config config_for(const char* plugin_dir) {
    plexus::Config c;
    c.plugin_dirs = {plugin_dir};
    c.use_env_plugin_path = false;
    c.use_install_dir = false;
    c.validate_plugins = plexus::PluginValidation::Never;
    c.cache_dir = "";
    c.fallback = false;
    return c;
}

inline plexus::Config fake_config() {
    return config_for(FAKE_PLUGIN_DIR);
}

// No parameters, no body: what plexus bench's empty_launch row launches.
inline const auto& empty_kernel() {
    static const auto k = plexus::kernel("empty", [] {});
    return k;
}

// c = a + b: three buffers and a scalar.
inline const auto& add_kernel() {
    namespace px = plexus;
    static const auto k =
        px::kernel("add", {"a", "b", "c", "n"},
                   [](px::In<float> a, px::In<float> b, px::Out<float> c, px::Int n) {
                       px::Int i = px::global_id(0);
                       px::If(i < n, [&] { c[i] = a[i] + b[i]; });
                   });
    return k;
}

} // namespace launch_test
