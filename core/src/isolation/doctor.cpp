// plexus::diagnose: validation of every plugin, then one exercise child per device (see
// isolation/exercise.cpp), and the diagnosis and advice of each outcome and step.
#include "plexus/doctor.hpp"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>

#include <nlohmann/json.hpp>

#include "isolation/spawn.hpp"
#include "isolation/validator.hpp"
#include "plexus/runtime.hpp"

namespace fs = std::filesystem;

namespace plexus {

namespace {

// What the plugin's own load says, and what to do about it.
void judge_load(PluginDiagnosis& p, unsigned timeout_ms) {
    const LoadReportEntry& e = p.entry;
    p.summary = std::string(to_string(e.outcome)) + (e.message.empty() ? "" : ": " + e.message);
    switch (e.outcome) {
    case LoadOutcome::Loaded:
        p.summary = "loaded: " + e.execution_model + ", priority " + std::to_string(e.priority) +
                    ", " + std::to_string(e.devices.size()) +
                    (e.devices.size() == 1 ? " device" : " devices");
        break;
    case LoadOutcome::MissingDependency:
        p.severity = Severity::Note;
        p.advice =
            "Install what it names if you want this backend. A backend for hardware this machine "
            "does not have says this, and that is fine.";
        break;
    case LoadOutcome::NoDevices:
        p.severity = Severity::Note;
        p.advice =
            "Its driver found no device: check that the hardware is present and that its driver "
            "sees it (for OpenCL, clinfo lists what the driver sees).";
        break;
    case LoadOutcome::DisabledByConfig: p.severity = Severity::Note; break;
    case LoadOutcome::Duplicate:
        p.severity = Severity::Note;
        p.advice =
            "Two files provide this plugin and the first one found is used: remove the other.";
        break;
    case LoadOutcome::AbiMismatch:
        p.severity = Severity::Problem;
        p.advice =
            "It was built for another plugin ABI: install a build of it for plexus plugin ABI " +
            std::to_string(PLX_ABI_VERSION_MAJOR) + ".x, or remove the file.";
        break;
    case LoadOutcome::NotAPlugin:
        p.severity = Severity::Problem;
        p.advice =
            "It is not a plexus plugin: remove it from the plugin folder, or fix its manifest.";
        break;
    case LoadOutcome::InitFailed:
        p.severity = Severity::Problem;
        p.advice = "The plugin refused to start, or its descriptor breaks the plugin contract: its "
                   "message "
                   "says why. Report it to its vendor if the reason is not yours to fix.";
        break;
    case LoadOutcome::Crashed:
        p.summary = e.message; // already says what happened: "crashed with SIGSEGV ..."
        p.severity = Severity::Problem;
        p.advice = "A program that loaded it would have crashed. Report it to its vendor with this "
                   "message, "
                   "and remove or fix the file (plexus validates a changed file again).";
        break;
    case LoadOutcome::TimedOut:
        p.summary = e.message;
        p.severity = Severity::Problem;
        p.advice = "Its initialization did not finish within plugin_init_timeout_ms (" +
                   std::to_string(timeout_ms) +
                   " ms). If its driver is only slow, raise plugin_init_timeout_ms; otherwise "
                   "report it to its "
                   "vendor and remove the file.";
        break;
    }
}

std::string doing(const std::string& stage) {
    if (stage == "load") return "while loading the plugin again";
    if (stage == "queue") return "while creating a queue";
    if (stage == "allocate") return "while allocating buffers";
    if (stage == "write") return "while writing a buffer";
    if (stage == "read") return "while reading a buffer back";
    if (stage == "copy") return "in buffer_copy";
    if (stage == "fill") return "in buffer_fill";
    if (stage == "kernel") return "while compiling or launching a test kernel";
    if (stage == "free") return "while freeing buffers";
    if (stage == "core" || stage == "atomics" || stage == "math" ||
        stage.rfind("subgroup", 0) == 0 || stage.rfind("matrix", 0) == 0)
        return "while checking its claim of " + stage;
    return "before the check began";
}

// What one exercise child's run says about its device.
void judge_device(DeviceDiagnosis& d, const detail::ChildResult& c, const std::string& plugin,
                  unsigned limit_ms, bool conformance) {
    std::string stage;
    bool done = false;
    std::istringstream lines(c.report);
    for (std::string line; std::getline(lines, line);) {
        nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
        if (!j.is_object()) continue;
        if (j.contains("stage") && j["stage"].is_string()) stage = j["stage"].get<std::string>();
        if (j.contains("done")) done = true;
        if (j.contains("step") && j["step"].is_string())
            d.steps.push_back(
                {j["step"].get<std::string>(), j.value("ok", false), j.value("message", "")});
    }
    const std::string disable = "Until it is fixed, disable it (\"backends\": {\"" + plugin +
                                "\": {\"enabled\": false}}) or remove the file.";
    d.severity = Severity::Problem;
    if (!c.start_error.empty()) {
        d.summary = "the check could not start: " + c.start_error;
        return;
    }
    if (c.timed_out) {
        d.summary = "did not finish " + doing(stage) + " within " +
                    std::to_string(limit_ms / 1000) + " s; the check was killed";
        d.advice = "A program that uses this device would hang the same way. Report it to the "
                   "plugin's vendor. " +
                   disable;
        return;
    }
    if (c.signal != 0 || !done) {
        d.summary = (c.signal != 0 ? "crashed with " + detail::signal_name(c.signal) + " (" +
                                         detail::signal_description(c.signal) + ") "
                                   : "ended the process with exit status " +
                                         std::to_string(c.exit_status) + " ") +
                    doing(stage);
        d.advice =
            "A program that uses this device will crash the same way: a plugin that crashes after "
            "its init takes its process with it. Report it to the plugin's vendor. " +
            disable;
        return;
    }
    if (conformance) {
        // Every claim is checked; each one the device fails is listed.
        std::string failed, passed, skipped;
        for (const CheckStep& s : d.steps) {
            if (s.name == "load") {
                if (!s.ok) failed += "load: " + s.message + "\n";
                continue;
            }
            if (!s.ok)
                failed += s.name + ": " + s.message + "\n";
            else if (s.message.rfind("not run", 0) == 0)
                skipped += (skipped.empty() ? "" : ", ") + s.name;
            else
                passed += (passed.empty() ? "" : ", ") + s.name;
        }
        if (!failed.empty()) {
            d.summary = "claims it does not keep:\n" + failed.substr(0, failed.size() - 1);
            d.advice = "The plugin claims capabilities this device fails. Its author should claim "
                       "only what it runs "
                       "(the classes in PLX_CATALOG_CLASSES, the subgroup_ops and matrix_ops bits "
                       "of each device) or "
                       "fix the failing ones; until then kernels that need them fail on it. " +
                       disable;
            return;
        }
        d.severity = Severity::Ok;
        d.summary = "every claim holds: " + (passed.empty() ? std::string("(none)") : passed);
        if (!skipped.empty()) d.summary += "; not claimed on this device: " + skipped;
        return;
    }
    for (const CheckStep& s : d.steps) {
        if (s.ok) continue;
        d.summary = s.name + " failed: " + s.message;
        d.advice =
            s.name == "kernel"
                ? "The device cannot run a plain vector addition: the message (and the build log, "
                  "when there is one) says why. Report it to the plugin's vendor, or to plexus if "
                  "the "
                  "generated code is wrong. " +
                      disable
                : "The plugin's memory functions fail: check its driver, and report it to its "
                  "vendor. " +
                      disable;
        return;
    }
    d.severity = Severity::Ok;
    d.summary = "ok:";
    for (const CheckStep& s : d.steps)
        d.summary += (d.summary == "ok:" ? " " : ", ") + s.name;
    for (const CheckStep& s : d.steps)
        if (s.message.find("is not provided") != std::string::npos)
            d.summary += "; " + s.message.substr(0, s.message.find(" (")) + " (optional)";
}

struct TempDir {
    fs::path path;
    TempDir() {
        std::string tmpl = (fs::temp_directory_path() / "plexus-doctor-XXXXXX").string();
        if (::mkdtemp(tmpl.data()) != nullptr) path = tmpl;
    }
    ~TempDir() {
        std::error_code ec;
        if (!path.empty()) fs::remove_all(path, ec);
    }
};

} // namespace

const char* to_string(Severity s) {
    switch (s) {
    case Severity::Ok: return "ok";
    case Severity::Note: return "note";
    case Severity::Problem: return "problem";
    }
    return "problem";
}

size_t Diagnosis::count(Severity s) const {
    size_t n = 0;
    for (const PluginDiagnosis& p : plugins)
        n += p.severity == s;
    return n;
}

// Validates the plugins of `config` afresh and runs `mode` ("exercise", "conformance") of
// plexus-plugin-check on each device of each one that loaded, each in a child process.
Diagnosis diagnose_in_children(Config config, unsigned device_limit_ms, const std::string& mode) {
    config.validate_plugins = PluginValidation::Always;
    Runtime rt(config);
    Diagnosis out;
    out.config_source = config.source;
    TempDir links;
    std::vector<detail::ChildSpec> specs;
    std::vector<std::pair<size_t, uint32_t>> which; // (plugin, device) of each spec
    for (const LoadReportEntry& e : rt.load_report()) {
        PluginDiagnosis p;
        p.entry = e;
        judge_load(p, config.plugin_init_timeout_ms);
        if (e.outcome == LoadOutcome::Loaded &&
            (links.path.empty() || detail::plugin_check_path().empty())) {
            p.severity = Severity::Problem;
            p.summary += "; its devices were not checked";
            p.advice =
                links.path.empty()
                    ? "plexus doctor could not create a temporary folder: check TMPDIR."
                    : "plexus-plugin-check is not installed beside libplexus: reinstall plexus.";
        } else if (e.outcome == LoadOutcome::Loaded) {
            // A folder holding only this plugin, named for its options (backends.NAME).
            fs::path dir = links.path / std::to_string(out.plugins.size());
            std::error_code ec;
            fs::create_directories(dir, ec);
            fs::create_symlink(e.path, dir / ("libplexus-" + e.name + ".so"), ec);
            auto section = config.backends.find(e.name);
            const std::string options =
                section != config.backends.end() ? section->second.section.dump() : "{}";
            for (uint32_t i = 0; i < e.devices.size(); ++i) {
                specs.push_back(
                    {{detail::plugin_check_path(), mode, "--plugin-dir", dir.string(), "--name",
                      e.name, "--device", std::to_string(i), "--options", options, "--log-level",
                      config.log_level, "--parent", std::to_string(::getpid())},
                     {},
                     std::chrono::milliseconds(device_limit_ms)});
                which.emplace_back(out.plugins.size(), i);
            }
        }
        out.plugins.push_back(std::move(p));
    }
    std::vector<detail::ChildResult> results = detail::run_children(specs);
    for (size_t k = 0; k < results.size(); ++k) {
        PluginDiagnosis& p = out.plugins[which[k].first];
        DeviceDiagnosis d;
        d.index = which[k].second;
        d.info = p.entry.devices.at(d.index);
        judge_device(d, results[k], p.entry.name, device_limit_ms, mode == "conformance");
        if (d.severity == Severity::Problem) {
            p.severity = Severity::Problem;
            if (p.advice.empty()) p.advice = d.advice;
        }
        p.devices.push_back(std::move(d));
    }
    return out;
}

Diagnosis diagnose(Config config, unsigned device_limit_ms) {
    return diagnose_in_children(std::move(config), device_limit_ms, "exercise");
}

Diagnosis diagnose_plugin(const std::string& file, Config config, unsigned device_limit_ms) {
    std::error_code ec;
    if (!fs::is_regular_file(file, ec))
        throw Error(ErrorCode::InvalidArgument,
                    "plexus doctor --plugin: " + file + " is not a file");
    // The file alone in a folder, under its own name (which the loader reads as the plugin's
    // name until init says it), with a .so ending so that the loader considers it.
    TempDir dir;
    if (dir.path.empty())
        throw Error(ErrorCode::Device,
                    "plexus doctor --plugin: cannot create a temporary folder (TMPDIR)");
    std::string name = fs::path(file).filename().string();
    if (fs::path(name).extension() != ".so") name += ".so";
    fs::create_symlink(fs::absolute(file, ec), dir.path / name, ec);
    if (ec)
        throw Error(ErrorCode::Device,
                    "plexus doctor --plugin: cannot link " + file + ": " + ec.message());
    config.plugin_dirs = {dir.path.string()};
    config.use_env_plugin_path = false;
    config.use_install_dir = false;
    return diagnose_in_children(std::move(config), device_limit_ms, "conformance");
}

} // namespace plexus
