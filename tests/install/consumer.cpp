// A program built against the installed plexus (pkg-config or CMake): loads the plugins of
// the folder given as argument and prints the load report, one line per plugin file.
#include <cstdio>

#include "plexus/runtime.hpp"

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: consumer PLUGIN_DIR\n");
        return 2;
    }
    plexus::Config config;
    config.plugin_dirs = {argv[1]};
    config.use_env_plugin_path = false;
    config.use_install_dir = false;
    try {
        plexus::Runtime rt(config);
        for (const auto& e : rt.load_report())
            std::printf("plugin %s %s %s\n", e.name.empty() ? "-" : e.name.c_str(),
                        plexus::to_string(e.outcome), e.path.c_str());
        std::printf("report entries: %zu\n", rt.load_report().size());
    } catch (const plexus::Error& e) {
        std::fprintf(stderr, "consumer: %s\n", e.what());
        return 1;
    }
    return 0;
}
