// The configuration of a test that runs every plugin of this build tree and nothing else: no
// plugin from PLEXUS_PLUGIN_PATH or the install directory. PLEXUS_TEST_PLUGIN_DIRS is the
// ':'-separated list tests/meson.build passes.
#pragma once

#include "plexus/config.hpp"

#include <algorithm>
#include <cstdlib>
#include <string>

namespace plexus::test {

inline Config build_tree_config() {
    Config c;
    const std::string dirs = PLEXUS_TEST_PLUGIN_DIRS;
    for (size_t start = 0; start < dirs.size();) {
        size_t end = std::min(dirs.find(':', start), dirs.size());
        c.plugin_dirs.push_back(dirs.substr(start, end - start));
        start = end + 1;
    }
    c.use_env_plugin_path = false;
    c.use_install_dir = false;
    return c;
}

// The same for a suite that tests each backend on its own: no fallback (a failure on the
// backend under test must not hide behind another) and no disk cache (neither read nor fill
// the user's). PLEXUS_TEST_CUDA_COMPILER=nvrtc runs the cuda backend's kernels through the
// CUDA C generator and NVRTC instead of LLVM's PTX: the two CUDA paths, one suite.
inline Config hermetic_config() {
    Config c = build_tree_config();
    c.fallback = false;
    c.cache_dir = "";
    if (const char* compiler = std::getenv("PLEXUS_TEST_CUDA_COMPILER"))
        c.backends["cuda"].compiler = compiler;
    return c;
}

} // namespace plexus::test
