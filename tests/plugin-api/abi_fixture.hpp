// Helpers of the abi suite: temporary plugin directories filled with the fake plugins that
// meson built (their paths come in FAKE_PLUGIN_<NAME> variables), and marker-file reading.
#pragma once

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "plexus/runtime.hpp"

namespace abi {

namespace fs = std::filesystem;

inline std::string upper(const std::string& s) {
    std::string out;
    for (char c : s)
        out += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return out;
}

inline std::string built(const std::string& name) {
    const std::string var = "FAKE_PLUGIN_" + upper(name);
    const char* path = std::getenv(var.c_str());
    REQUIRE_MESSAGE(path != nullptr, var << " is not set: run through meson test");
    return path;
}

inline std::string read_file(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

inline void write_file(const fs::path& p, const std::string& bytes) {
    std::ofstream(p, std::ios::binary | std::ios::trunc) << bytes;
}

struct TempDir {
    fs::path path;
    TempDir() {
        std::string tmpl = (fs::temp_directory_path() / "plexus-abi-XXXXXX").string();
        REQUIRE(mkdtemp(tmpl.data()) != nullptr);
        path = tmpl;
    }
    ~TempDir() { fs::remove_all(path); }
    TempDir(const TempDir&) = delete;

    fs::path dir(const std::string& name) const {
        fs::create_directories(path / name);
        return path / name;
    }
    // Copies the built fake `plugin` into `dir` as libplexus-<as>.so.
    fs::path add(const std::string& dir_name, const std::string& plugin,
                 std::string as = {}) const {
        if (as.empty()) as = plugin;
        fs::path to = dir(dir_name) / ("libplexus-" + as + ".so");
        fs::copy_file(built(plugin), to, fs::copy_options::overwrite_existing);
        return to;
    }
    fs::path write(const std::string& rel, const std::string& bytes) const {
        fs::path p = path / rel;
        fs::create_directories(p.parent_path());
        std::ofstream(p, std::ios::binary) << bytes;
        return p;
    }
};

// Lines that the fake plugin NAME wrote to its marker file (init, options..., shutdown): those
// of this process, or with `child` those of validation children (written "child init", ...),
// without the prefix.
inline std::vector<std::string> marks(const fs::path& dir, const std::string& name,
                                      bool child = false) {
    std::ifstream in(dir / (name + ".log"));
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) {
        const bool from_child = line.rfind("child ", 0) == 0;
        if (from_child == child) lines.push_back(from_child ? line.substr(6) : line);
    }
    return lines;
}

// Points the fake plugins' markers at a fresh directory for the current test.
struct Markers {
    TempDir dir;
    Markers() { setenv("FAKE_MARKER_DIR", dir.path.c_str(), 1); }
    ~Markers() { unsetenv("FAKE_MARKER_DIR"); }
    std::vector<std::string> operator()(const std::string& name) const {
        return marks(dir.path, name);
    }
    std::vector<std::string> child(const std::string& name) const {
        return marks(dir.path, name, true);
    }
    // How many validation children ran the init of NAME.
    long child_inits(const std::string& name) const {
        auto lines = child(name);
        return std::count(lines.begin(), lines.end(), "init");
    }
};

// A Runtime of one built plugin alone (copied into a folder as libplexus-<as>.so): no plugin
// path, install folder, disk cache or fallback.
struct Alone {
    TempDir t;
    std::unique_ptr<plexus::Runtime> rt;
    explicit Alone(const std::string& plugin, const std::string& as = {}) {
        t.add("p", plugin, as);
        plexus::Config c =
            plexus::Config::parse(R"({"plugin_dirs": ["p"]})", (t.path / "config.json").string());
        c.use_env_plugin_path = false;
        c.use_install_dir = false;
        c.cache_dir = "";
        c.fallback = false;
        rt = std::make_unique<plexus::Runtime>(c);
    }
};

} // namespace abi
