// Walks the plugin directories (manifests and drop-in libraries, sorted by file name), applies
// the configuration (enabled, priority) and the first-wins rule, and writes the load report.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "config/env.hpp"
#include "config/log.hpp"
#include "loader/library.hpp"
#include "loader/loader.hpp"

#ifndef PLEXUS_PLUGIN_INSTALL_DIR
#error "core/meson.build passes PLEXUS_PLUGIN_INSTALL_DIR"
#endif

namespace fs = std::filesystem;

namespace plexus::detail {

namespace {

struct Manifest {
    std::string file;
    std::string name;
    std::string library; // absolute
    uint32_t abi_major = 0, abi_minor = 0;
    std::optional<int> priority;
    std::string error; // why the manifest is unusable, "" when it is fine
};

Manifest read_manifest(const fs::path& file) {
    Manifest m;
    m.file = file.string();
    std::ifstream in(file, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    nlohmann::json doc;
    try {
        doc = nlohmann::json::parse(text.str());
    } catch (const nlohmann::json::parse_error& e) {
        std::string what = e.what(); // drop nlohmann's "[json.exception.parse_error.101] "
        if (auto pos = what.find("] "); what.rfind("[json.exception", 0) == 0 && pos != std::string::npos)
            what = what.substr(pos + 2);
        m.error = "not valid JSON: " + what;
        return m;
    }
    if (!doc.is_object()) {
        m.error = "expected a JSON object at the top level";
        return m;
    }
    auto string_field = [&](const char* key) -> std::optional<std::string> {
        auto it = doc.find(key);
        if (it == doc.end()) {
            m.error = std::string("the key '") + key + "' is missing";
            return std::nullopt;
        }
        if (!it->is_string() || it->get<std::string>().empty()) {
            m.error = std::string("'") + key + "' must be a non-empty string, found " + it->dump();
            return std::nullopt;
        }
        return it->get<std::string>();
    };
    auto version = doc.find("file_format_version");
    if (version == doc.end() || !version->is_number_integer() || version->get<long long>() != 1) {
        m.error = "'file_format_version' must be 1, found " +
                  (version == doc.end() ? std::string("nothing") : version->dump());
        return m;
    }
    auto name = string_field("name");
    if (!name) return m;
    m.name = *name;
    auto library = string_field("library");
    if (!library) return m;
    fs::path lib = *library;
    m.library = (lib.is_absolute() ? lib : file.parent_path() / lib).lexically_normal().string();
    auto abi = string_field("abi");
    if (!abi) return m;
    unsigned major = 0, minor = 0;
    char extra = 0;
    if (std::sscanf(abi->c_str(), "%u.%u%c", &major, &minor, &extra) != 2) {
        m.error = "'abi' must be \"MAJOR.MINOR\", found \"" + *abi + "\"";
        return m;
    }
    m.abi_major = major;
    m.abi_minor = minor;
    if (auto p = doc.find("priority"); p != doc.end()) {
        if (!p->is_number_integer()) {
            m.error = "'priority' must be an integer, found " + p->dump();
            return m;
        }
        m.priority = static_cast<int>(p->get<long long>());
    }
    return m;
}

class Discovery {
public:
    explicit Discovery(const Config& config) : config_(config) {}

    void scan(const fs::path& dir) {
        std::vector<fs::path> files;
        std::error_code ec;
        for (const auto& e : fs::directory_iterator(dir, ec)) {
            const std::string ext = e.path().extension().string();
            if ((ext == ".json" || ext == ".so") && e.is_regular_file(ec)) files.push_back(e.path());
        }
        if (ec) log().info("cannot list plugin directory {}: {}", dir.string(), ec.message());
        // Byte order of file names, so the result never depends on the file system.
        std::sort(files.begin(), files.end(),
                  [](const fs::path& a, const fs::path& b) { return a.filename().string() < b.filename().string(); });

        std::map<std::string, Manifest> manifests;
        std::set<std::string> claimed;
        for (const fs::path& f : files) {
            if (f.extension() != ".json") continue;
            Manifest m = read_manifest(f);
            if (m.error.empty()) claimed.insert(canonical(m.library));
            manifests.emplace(f.string(), std::move(m));
        }
        for (const fs::path& f : files) {
            if (f.extension() == ".json") {
                from_manifest(manifests.at(f.string()));
            } else if (claimed.count(canonical(f.string())) != 0) {
                log().debug("{} is named by a manifest; not loaded again as a drop-in", f.string());
            } else {
                // The options of backends.NAME must be given at init, before the plugin says its
                // name: the file name (libplexus-NAME.so) is the guess.
                std::string guess = f.stem().string();
                if (guess.rfind("libplexus-", 0) == 0) guess = guess.substr(10);
                OpenResult r = open(f.string(), &guess);
                if (r.outcome == LoadOutcome::Loaded && r.name != guess && section(r.name) != nullptr)
                    log().warn("{} calls itself '{}', so backends.{} was not passed to it; name the "
                               "file libplexus-{}.so or give it a manifest",
                               f.string(), r.name, r.name, r.name);
                finish(f.string(), std::move(r), "");
            }
        }
    }

    LoadResult result() { return std::move(result_); }

private:
    static std::string canonical(const std::string& path) {
        std::error_code ec;
        fs::path p = fs::weakly_canonical(path, ec);
        return ec ? path : p.string();
    }

    const BackendConfig* section(const std::string& name) const {
        auto it = config_.backends.find(name);
        return it == config_.backends.end() ? nullptr : &it->second;
    }
    bool disabled(const std::string& name) const {
        const BackendConfig* b = section(name);
        return b != nullptr && b->enabled == false;
    }
    int effective_priority(const std::string& name, int plugin_priority) const {
        const BackendConfig* b = section(name);
        return b != nullptr && b->priority ? *b->priority : plugin_priority;
    }
    std::string disabled_message(const std::string& name) const {
        return "backends." + name + ".enabled is false in " +
               (config_.source.empty() ? std::string("the configuration") : config_.source);
    }
    std::string duplicate_message(const std::string& name) const {
        return "a plugin named '" + name + "' was already loaded from " + loaded_.at(name) +
               "; the first one found wins";
    }

    OpenResult open(const std::string& path, const std::string* name_hint) {
        std::string options = "{}";
        if (name_hint != nullptr)
            if (const BackendConfig* b = section(*name_hint)) options = b->section.dump();
        return open_plugin(path, options);
    }

    void report(LoadReportEntry e) {
        const bool quiet = e.outcome == LoadOutcome::Loaded || e.outcome == LoadOutcome::MissingDependency ||
                           e.outcome == LoadOutcome::NoDevices || e.outcome == LoadOutcome::DisabledByConfig ||
                           e.outcome == LoadOutcome::Duplicate;
        log().log(quiet ? spdlog::level::info : spdlog::level::warn, "plugin {} ({}): {}{}{}", e.path,
                  e.name.empty() ? "?" : e.name, to_string(e.outcome), e.message.empty() ? "" : ": ",
                  e.message);
        result_.report.push_back(std::move(e));
    }

    void from_manifest(const Manifest& m) {
        LoadReportEntry e;
        e.name = m.name;
        e.path = m.library.empty() ? m.file : m.library;
        e.priority = effective_priority(m.name, m.priority.value_or(0));
        if (!m.error.empty()) {
            e.path = m.file;
            e.outcome = LoadOutcome::NotAPlugin;
            e.message = "manifest " + m.file + ": " + m.error;
        } else if (disabled(m.name)) {
            e.outcome = LoadOutcome::DisabledByConfig;
            e.message = disabled_message(m.name);
        } else if (loaded_.count(m.name) != 0) {
            e.outcome = LoadOutcome::Duplicate;
            e.message = duplicate_message(m.name);
        } else if (m.abi_major != PLX_ABI_VERSION_MAJOR) {
            e.outcome = LoadOutcome::AbiMismatch;
            e.message = "manifest " + m.file + " declares plugin ABI " + std::to_string(m.abi_major) +
                        "." + std::to_string(m.abi_minor) + ", this host speaks " +
                        std::to_string(PLX_ABI_VERSION_MAJOR) + "." + std::to_string(PLX_ABI_VERSION_MINOR);
        } else if (std::error_code ec; !fs::exists(m.library, ec)) {
            e.outcome = LoadOutcome::NotAPlugin;
            e.message = "manifest " + m.file + " names library " + m.library + ", which does not exist";
        } else {
            finish(m.library, open(m.library, &m.name), m.name);
            return;
        }
        report(std::move(e));
    }

    // Turns what open_plugin said into a report entry and, when it loaded, a Backend.
    void finish(const std::string& path, OpenResult r, const std::string& manifest_name) {
        LoadReportEntry e;
        e.path = path;
        e.name = r.name;
        e.outcome = r.outcome;
        e.message = r.message;
        e.execution_model = r.execution_model;
        e.priority = effective_priority(r.name, r.priority);
        if (r.outcome == LoadOutcome::Loaded) {
            if (!manifest_name.empty() && r.name != manifest_name) {
                e.outcome = LoadOutcome::InitFailed;
                e.message = "its manifest says the plugin is '" + manifest_name + "' but it calls itself '" +
                            r.name + "'";
            } else if (disabled(r.name)) {
                e.outcome = LoadOutcome::DisabledByConfig;
                e.message = disabled_message(r.name) +
                            " (a drop-in is opened to learn its name; a manifest avoids that)";
            } else if (loaded_.count(r.name) != 0) {
                e.outcome = LoadOutcome::Duplicate;
                e.message = duplicate_message(r.name);
            } else {
                e.devices = r.library->devices;
                loaded_[r.name] = path;
                result_.backends.push_back(make_backend(path, r));
            }
        }
        report(std::move(e));
    }

    std::unique_ptr<Backend> make_backend(const std::string& path, const OpenResult& r) const {
        const PluginLibrary& lib = *r.library;
        const plx_plugin& api = lib.api;
        BackendDesc d;
        d.name = r.name;
        d.version = api.version != nullptr ? api.version : "";
        d.vendor = api.vendor != nullptr ? api.vendor : "";
        d.path = path;
        d.exec_model = api.execution_model == PLX_EXEC_JIT      ? ExecModel::JIT
                       : api.execution_model == PLX_EXEC_CUSTOM ? ExecModel::Custom
                                                                : ExecModel::Direct;
        d.plugin_priority = api.priority;
        d.priority = effective_priority(r.name, api.priority);
        if (api.languages != nullptr) d.languages.assign(api.languages, api.languages + api.num_languages);
        d.devices = lib.devices;
        return std::make_unique<Backend>(std::move(d), &api, lib.device_handles, r.library);
    }

    const Config& config_;
    std::map<std::string, std::string> loaded_; // name -> path of the plugin that won
    LoadResult result_;
};

} // namespace

std::vector<std::string> plugin_search_path(const Config& config) {
    std::vector<std::string> dirs = config.plugin_dirs;
    if (config.use_env_plugin_path) {
        if (auto env = get_env("PLEXUS_PLUGIN_PATH")) {
            std::stringstream ss(*env);
            for (std::string dir; std::getline(ss, dir, ':');)
                if (!dir.empty()) dirs.push_back(expand_tilde(dir));
        }
    }
    if (config.use_install_dir) dirs.emplace_back(PLEXUS_PLUGIN_INSTALL_DIR);

    std::vector<std::string> unique;
    std::set<std::string> seen;
    for (const std::string& d : dirs) {
        std::error_code ec;
        fs::path p = fs::weakly_canonical(fs::absolute(d, ec), ec);
        if (seen.insert(ec ? d : p.string()).second) unique.push_back(d);
    }
    return unique;
}

LoadResult load_plugins(const Config& config) {
    Discovery discovery(config);
    for (const std::string& dir : plugin_search_path(config)) {
        std::error_code ec;
        if (!fs::is_directory(dir, ec)) {
            log().debug("plugin directory {} does not exist", dir);
            continue;
        }
        log().debug("searching plugin directory {}", dir);
        discovery.scan(dir);
    }
    return discovery.result();
}

} // namespace plexus::detail
