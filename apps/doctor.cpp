// `plexus doctor`: every plugin validated in a child process and every device exercised in
// one (plexus::diagnose), printed per plugin and device with what to do; exits 1 when
// something is broken.
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
        std::printf("%*s%s%s\n", indent, "", first ? first_prefix : "", text.substr(start, end - start).c_str());
        first = false;
        start = end + 1;
    }
}

void print_human(const Diagnosis& d) {
    std::printf("configuration: %s\n", d.config_source.empty() ? "(defaults)" : d.config_source.c_str());
    std::printf("%zu plugin files: %zu ok, %zu with a note, %zu with a problem\n", d.plugins.size(),
                d.count(Severity::Ok), d.count(Severity::Note), d.count(Severity::Problem));
    for (const PluginDiagnosis& p : d.plugins) {
        std::printf("\n[%s] %s  %s\n", to_string(p.severity), p.entry.name.empty() ? "-" : p.entry.name.c_str(),
                    p.entry.path.c_str());
        print_indented(p.summary, "", 4);
        for (const DeviceDiagnosis& dev : p.devices) {
            std::printf("    device %u: %s (%s): [%s] ", dev.index, dev.info.name.c_str(), to_string(dev.info.type),
                        to_string(dev.severity));
            print_indented(dev.summary, "", 0);
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
            for (const CheckStep& s : dev.steps) steps.push_back({{"step", s.name}, {"ok", s.ok}, {"message", s.message}});
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
    return {{"config", d.config_source.empty() ? nlohmann::json(nullptr) : nlohmann::json(d.config_source)},
            {"problems", d.count(Severity::Problem)},
            {"plugins", plugins}};
}

constexpr const char* kHelp =
    "usage: plexus doctor [--json]\n\n"
    "Validates every plugin found in a child process (its init, with the time limit\n"
    "plugin_init_timeout_ms), then checks each device of each plugin that loads in a\n"
    "child process too: allocate, write, read back, copy, fill, compile and launch a\n"
    "vector addition, compare. Prints a diagnosis and what to do per plugin and device.\n"
    "The verdict cache is refreshed. Exits 0 when nothing is broken, 1 when something\n"
    "is, 2 when the configuration is invalid.\n";

int run_doctor(const std::vector<std::string>& args) {
    bool json = false;
    if (auto stop = json_option_only(args, "doctor", kHelp, json)) return *stop;
    const Diagnosis d = diagnose(load_config());
    if (json)
        std::cout << to_json(d).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    else
        print_human(d);
    return d.count(Severity::Problem) == 0 ? 0 : 1;
}

const Registration reg{{"doctor", run_doctor, "check every plugin and device in child processes and say what to do"}};

} // namespace

} // namespace plexus::app
