// `plexus doctor`: every plugin validated in a child process and every device exercised in
// one (plexus::diagnose), printed per plugin and device with what to do; exits 1 when
// something is broken. `--plugin FILE`: one plugin's claims checked (plexus::diagnose_plugin).
#include <cstdio>
#include <iostream>

#include <nlohmann/json.hpp>

#include "app.hpp"
#include "plexus/doctor.hpp"

namespace plexus::app {

namespace {

// Continuation lines of a message or advice, indented under their plugin.
void print_indented(const std::string& text, const char* first_prefix, int indent) {
    size_t start = 0;
    bool first = true;
    while (start <= text.size()) {
        size_t end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        std::printf("%*s%s%s\n", indent, "", first ? first_prefix : "",
                    text.substr(start, end - start).c_str());
        first = false;
        start = end + 1;
    }
}

void print_human(const Diagnosis& d) {
    std::printf("configuration: %s\n",
                d.config_source.empty() ? "(defaults)" : d.config_source.c_str());
    std::printf("%zu plugin files: %zu ok, %zu with a note, %zu with a problem\n", d.plugins.size(),
                d.count(Severity::Ok), d.count(Severity::Note), d.count(Severity::Problem));
    for (const PluginDiagnosis& p : d.plugins) {
        std::printf("\n[%s] %s  %s\n", to_string(p.severity),
                    p.entry.name.empty() ? "-" : p.entry.name.c_str(), p.entry.path.c_str());
        print_indented(p.summary, "", 4);
        for (const DeviceDiagnosis& dev : p.devices) {
            std::printf("    device %u: %s (%s): [%s] ", dev.index, dev.info.name.c_str(),
                        to_string(dev.info.type), to_string(dev.severity));
            // The first line beside the device, the rest (a diagnosis per claim) under it.
            const size_t nl = dev.summary.find('\n');
            std::printf("%s\n", dev.summary.substr(0, nl).c_str());
            if (nl != std::string::npos) print_indented(dev.summary.substr(nl + 1), "", 8);
        }
        if (!p.advice.empty()) print_indented(p.advice, "what to do: ", 4);
    }
    if (d.count(Severity::Problem) != 0)
        std::printf("\n%zu plugin files have a problem.\n", d.count(Severity::Problem));
}

nlohmann::json to_json(const Diagnosis& d) {
    nlohmann::json plugins = nlohmann::json::array();
    for (const PluginDiagnosis& p : d.plugins) {
        nlohmann::json devices = nlohmann::json::array();
        for (const DeviceDiagnosis& dev : p.devices) {
            nlohmann::json steps = nlohmann::json::array();
            for (const CheckStep& s : dev.steps)
                steps.push_back({{"step", s.name}, {"ok", s.ok}, {"message", s.message}});
            devices.push_back({{"index", dev.index},
                               {"name", dev.info.name},
                               {"type", to_string(dev.info.type)},
                               {"severity", to_string(dev.severity)},
                               {"summary", dev.summary},
                               {"advice", dev.advice},
                               {"steps", steps}});
        }
        plugins.push_back({{"name", p.entry.name},
                           {"path", p.entry.path},
                           {"outcome", to_string(p.entry.outcome)},
                           {"message", p.entry.message},
                           {"signal", p.entry.signal},
                           {"severity", to_string(p.severity)},
                           {"summary", p.summary},
                           {"advice", p.advice},
                           {"devices", devices}});
    }
    return {{"config",
             d.config_source.empty() ? nlohmann::json(nullptr) : nlohmann::json(d.config_source)},
            {"problems", d.count(Severity::Problem)},
            {"plugins", plugins}};
}

constexpr const char* kHelp =
    "usage: plexus doctor [--json]\n"
    "       plexus doctor --plugin FILE [--json]\n\n"
    "Validates every plugin found in a child process (its init, with the time limit\n"
    "plugin_init_timeout_ms), then checks each device of each plugin that loads in a\n"
    "child process too: allocate, write, read back, copy, fill, compile and launch a\n"
    "vector addition, compare. Prints a diagnosis and what to do per plugin and device.\n"
    "The verdict cache is refreshed. Exits 0 when nothing is broken, 1 when something\n"
    "is, 2 when the configuration is invalid.\n\n"
    "--plugin FILE: conformance of one plugin file, for its author. On each of its devices,\n"
    "in a child process, a small kernel for each capability class the plugin claims (core,\n"
    "atomics, math, each subgroup family and matrix type its device states) is compiled,\n"
    "run and checked against a host reference; every claim the device does not keep is\n"
    "listed. The file needs no particular name or folder.\n";

int run_doctor(const std::vector<std::string>& all_args) {
    bool json = false;
    std::string plugin;
    std::vector<std::string> args;
    for (size_t i = 0; i < all_args.size(); ++i) {
        if (all_args[i] != "--plugin") {
            args.push_back(all_args[i]);
        } else if (i + 1 < all_args.size()) {
            plugin = all_args[++i];
        } else {
            std::fprintf(stderr, "plexus doctor: --plugin needs a file (try --help)\n");
            return 2;
        }
    }
    if (auto stop = json_option_only(args, "doctor", kHelp, json)) return *stop;
    const Diagnosis d =
        plugin.empty() ? diagnose(load_config()) : diagnose_plugin(plugin, load_config());
    if (json)
        std::cout << to_json(d).dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
                  << "\n";
    else
        print_human(d);
    return d.count(Severity::Problem) == 0 ? 0 : 1;
}

const Registration reg{
    {"doctor", run_doctor, "check every plugin and device in child processes and say what to do"}};

} // namespace

} // namespace plexus::app
