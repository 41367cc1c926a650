// Walks the plugin directories (manifests and drop-in libraries, sorted by file name), applies
// the configuration (enabled, priority) and the first-wins rule, and writes the load report.
#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <system_error>

#include "config/env.hpp"
#include "config/log.hpp"
#include "isolation/validator.hpp"
#include "loader/library.hpp"
#include "loader/loader.hpp"
#include "loader/manifest.hpp"
#include "plexus/codegen.hpp"
#include "trace/trace.hpp"

#ifndef PLEXUS_PLUGIN_INSTALL_DIR
#error "core/meson.build passes PLEXUS_PLUGIN_INSTALL_DIR"
#endif

namespace fs = std::filesystem;

namespace plexus::detail {

namespace {

// A plugin file: a manifest, or a library that no manifest of its folder names (a drop-in).
struct Item {
    std::optional<Manifest> manifest;
    std::string dropin;
};

class Discovery {
public:
    Discovery(const Config& config, Trace* trace) : config_(config), trace_(trace) {}

    // The plugin files of one folder in the order they are handled: manifests (*.json) and
    // the libraries (*.so) no manifest names, by file name in byte order, so the result never
    // depends on the file system.
    std::vector<Item> list(const fs::path& dir) const {
        std::vector<fs::path> files;
        std::error_code ec;
        for (const auto& e : fs::directory_iterator(dir, ec)) {
            const std::string ext = e.path().extension().string();
            if ((ext == ".json" || ext == ".so") && e.is_regular_file(ec))
                files.push_back(e.path());
        }
        if (ec) log().info("cannot list plugin directory {}: {}", dir.string(), ec.message());
        std::sort(files.begin(), files.end(), [](const fs::path& a, const fs::path& b) {
            return a.filename().string() < b.filename().string();
        });

        std::map<std::string, Manifest> manifests;
        std::set<std::string> claimed;
        for (const fs::path& f : files) {
            if (f.extension() != ".json") continue;
            Manifest m = read_manifest(f);
            if (m.error.empty()) claimed.insert(canonical(m.library));
            manifests.emplace(f.string(), std::move(m));
        }
        std::vector<Item> items;
        for (const fs::path& f : files) {
            if (f.extension() == ".json")
                items.push_back({std::move(manifests.at(f.string())), ""});
            else if (claimed.count(canonical(f.string())) != 0)
                log().debug("{} is named by a manifest; not loaded again as a drop-in", f.string());
            else
                items.push_back({std::nullopt, f.string()});
        }
        return items;
    }

    // The library handle() may open for this item and the name its options are under: a
    // drop-in's name is guessed from its file name; a manifest's must be valid and enabled.
    std::optional<std::pair<std::string, std::string>> library_to_open(const Item& it) const {
        if (!it.manifest) {
            std::string guess = guess_name(it.dropin);
            if (disabled(guess)) return std::nullopt;
            return std::pair{it.dropin, std::move(guess)};
        }
        const Manifest& m = *it.manifest;
        if (!m.error.empty() || disabled(m.name) || m.abi_major != PLX_ABI_VERSION_MAJOR)
            return std::nullopt;
        return std::pair{m.library, m.name};
    }

    // Runs, in child processes and all at once, the init of every library that handle() may
    // open, as the configuration's validate_plugins asks.
    void validate(const std::vector<Item>& items) {
        std::vector<ValidationRequest> requests;
        for (const Item& it : items)
            if (auto lib = library_to_open(it))
                requests.push_back({lib->first, options_for(lib->second)});
        TraceSpan span(trace_, "plugins", "validate plugins", "load");
        span.args["children"] = requests.size();
        std::vector<Verdict> verdicts = validate_plugins(requests, config_);
        for (size_t i = 0; i < requests.size(); ++i)
            verdicts_[requests[i].path] = std::move(verdicts[i]);
    }

    void handle(const Item& it) {
        if (it.manifest) return from_manifest(*it.manifest);
        const std::string& f = it.dropin;
        // The options of backends.NAME must be given at init, before the plugin says its
        // name: the file name (libplexus-NAME.so) is the guess.
        const std::string guess = guess_name(f);
        // A disabled plugin costs nothing: libplexus-NAME.so is taken to be NAME unopened.
        if (disabled(guess)) {
            LoadReportEntry e;
            e.path = f;
            e.name = guess;
            e.outcome = LoadOutcome::DisabledByConfig;
            e.message =
                disabled_message(guess) + " (not opened: its file name says it is '" + guess + "')";
            e.priority = effective_priority(guess, 0);
            return report(std::move(e));
        }
        OpenResult r = open(f, guess);
        if (r.outcome == LoadOutcome::Loaded && r.name != guess && section(r.name) != nullptr)
            log().warn("{} calls itself '{}', so backends.{} was not passed to it; name the "
                       "file libplexus-{}.so or give it a manifest",
                       f, r.name, r.name, r.name);
        finish(f, std::move(r), "");
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

    static std::string guess_name(const std::string& file) {
        std::string guess = fs::path(file).stem().string();
        return guess.rfind("libplexus-", 0) == 0 ? guess.substr(10) : guess;
    }
    std::string options_for(const std::string& name) const {
        const BackendConfig* b = section(name);
        return b != nullptr ? b->section.dump() : "{}";
    }

    // A plugin that crashed or hung in its validation child is not opened here.
    OpenResult open(const std::string& path, const std::string& name) {
        if (auto v = verdicts_.find(path); v != verdicts_.end() && v->second.refused()) {
            OpenResult r;
            r.outcome = v->second.result == VerdictResult::TimedOut ? LoadOutcome::TimedOut
                                                                    : LoadOutcome::Crashed;
            r.message = v->second.message;
            r.name = v->second.name;
            r.signal = v->second.signal;
            return r;
        }
        const std::string file = fs::path(path).filename().string();
        TraceSpan span(trace_, "plugins: " + file, "load " + file, "load");
        OpenResult r = open_plugin(path, options_for(name));
        span.args["outcome"] = to_string(r.outcome);
        return r;
    }

    void report(LoadReportEntry e) {
        const bool quiet =
            e.outcome == LoadOutcome::Loaded || e.outcome == LoadOutcome::MissingDependency ||
            e.outcome == LoadOutcome::NoDevices || e.outcome == LoadOutcome::DisabledByConfig ||
            e.outcome == LoadOutcome::Duplicate;
        log().log(quiet ? spdlog::level::info : spdlog::level::warn, "plugin {} ({}): {}{}{}",
                  e.path, e.name.empty() ? "?" : e.name, to_string(e.outcome),
                  e.message.empty() ? "" : ": ", e.message);
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
            e.message = "manifest " + m.file + " declares plugin ABI " +
                        std::to_string(m.abi_major) + "." + std::to_string(m.abi_minor) +
                        ", this host speaks " + std::to_string(PLX_ABI_VERSION_MAJOR) + "." +
                        std::to_string(PLX_ABI_VERSION_MINOR);
        } else if (std::error_code ec; !fs::exists(m.library, ec)) {
            e.outcome = LoadOutcome::NotAPlugin;
            e.message =
                "manifest " + m.file + " names library " + m.library + ", which does not exist";
        } else {
            finish(m.library, open(m.library, m.name), m.name);
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
        e.signal = r.signal;
        e.priority = effective_priority(r.name, r.priority);
        if (r.outcome == LoadOutcome::Loaded) {
            if (!manifest_name.empty() && r.name != manifest_name) {
                e.outcome = LoadOutcome::InitFailed;
                e.message = "its manifest says the plugin is '" + manifest_name +
                            "' but it calls itself '" + r.name + "'";
            } else if (disabled(r.name)) {
                e.outcome = LoadOutcome::DisabledByConfig;
                e.message = disabled_message(r.name) +
                            " (its file name did not say so: it was opened to learn its name)";
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
        // Languages this host does not know (a newer plugin's) are left out: nothing here
        // generates them. Checked as integers, since a plugin may write any 32-bit value.
        for (uint32_t i = 0; api.languages != nullptr && i < api.num_languages; ++i)
            for (const codegen::Language& known : codegen::languages())
                if (raw_enum(api.languages[i]) == uint32_t(known.id))
                    d.languages.push_back(known.id);
        d.devices = lib.devices;
        return std::make_unique<Backend>(std::move(d), &api, lib.device_handles, r.library);
    }

    const Config& config_;
    Trace* trace_;
    std::map<std::string, Verdict> verdicts_;   // library path -> its validation
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

LoadResult load_plugins(const Config& config, Trace* trace) {
    Discovery discovery(config, trace);
    std::vector<Item> items;
    for (const std::string& dir : plugin_search_path(config)) {
        std::error_code ec;
        if (!fs::is_directory(dir, ec)) {
            log().debug("plugin directory {} does not exist", dir);
            continue;
        }
        log().debug("searching plugin directory {}", dir);
        std::vector<Item> found = discovery.list(dir);
        items.insert(items.end(), std::make_move_iterator(found.begin()),
                     std::make_move_iterator(found.end()));
    }
    // Validation children run at once (separate processes cannot disturb each other), but the
    // inits in this process run one after another, in discovery order: two plugins may be
    // built over the same vendor library (two OpenCL plugins over one ICD, a CUDA and an
    // OpenCL plugin over one driver), and such a library's start-up is not safe to run from
    // two threads at once (PoCL 3.1 crashed in clGetDeviceInfo that way; docs/architecture.md,
    // "Start-up").
    discovery.validate(items);
    for (const Item& it : items)
        discovery.handle(it);
    return discovery.result();
}

} // namespace plexus::detail
