// `plexus info`: what the loader found (every plugin file and its outcome) and the devices of
// the plugins that loaded, as a table or as JSON.
#include <algorithm>
#include <cstdio>
#include <iostream>

#include <nlohmann/json.hpp>

#include "app.hpp"
#include "plexus/runtime.hpp"

namespace plexus::app {

namespace {

std::string bytes_text(uint64_t b) {
    char buf[32];
    if (b >= (1ull << 30))
        std::snprintf(buf, sizeof buf, "%.1f GiB", static_cast<double>(b) / (1ull << 30));
    else if (b >= (1ull << 20))
        std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(b) / (1ull << 20));
    else
        std::snprintf(buf, sizeof buf, "%.0f KiB", static_cast<double>(b) / (1ull << 10));
    return buf;
}

void print_table(const Runtime& rt) {
    const auto& report = rt.load_report();
    const Config& c = rt.config();
    std::printf("configuration: %s\n", c.source.empty() ? "(defaults)" : c.source.c_str());
    if (report.empty()) {
        std::printf("no plugin found; searched the configuration's plugin_dirs, PLEXUS_PLUGIN_PATH "
                    "and the install directory\n");
        return;
    }
    size_t wname = 4, woutcome = 7;
    for (const auto& e : report) {
        wname = std::max(wname, e.name.size());
        woutcome = std::max(woutcome, std::string(to_string(e.outcome)).size());
    }
    std::printf("%-*s  %-*s  %-6s  %8s  %s\n", int(wname), "NAME", int(woutcome), "OUTCOME",
                "MODEL", "PRIORITY", "PATH");
    for (const auto& e : report) {
        std::printf("%-*s  %-*s  %-6s  %8s  %s\n", int(wname),
                    e.name.empty() ? "-" : e.name.c_str(), int(woutcome), to_string(e.outcome),
                    e.execution_model.empty() ? "-" : e.execution_model.c_str(),
                    e.outcome == LoadOutcome::Loaded || e.priority != 0
                        ? std::to_string(e.priority).c_str()
                        : "-",
                    e.path.c_str());
        if (!e.message.empty()) std::printf("    %s\n", e.message.c_str());
        for (size_t i = 0; i < e.devices.size(); ++i) {
            const DeviceInfo& d = e.devices[i];
            std::printf("    device %zu: %s (%s, %u compute units, %s)\n", i, d.name.c_str(),
                        to_string(d.type), d.compute_units, bytes_text(d.memory_bytes).c_str());
            std::printf("      local memory %s, work-groups of up to %s, subgroups of %u, "
                        "fp64 %s\n",
                        bytes_text(d.local_memory_bytes).c_str(),
                        d.max_work_group_size ? std::to_string(d.max_work_group_size).c_str()
                                              : "(unknown)",
                        d.subgroup_size, d.fp64 ? "yes" : "no");
            if (!d.pci_bus_id.empty() || !d.uuid_string().empty())
                std::printf("      %s%s%s\n", d.uuid_string().c_str(),
                            d.pci_bus_id.empty() || d.uuid_string().empty() ? "" : ", ",
                            d.pci_bus_id.empty() ? "" : ("PCI " + d.pci_bus_id).c_str());
        }
    }
}

nlohmann::json to_json(const Runtime& rt) {
    nlohmann::json plugins = nlohmann::json::array();
    for (const auto& e : rt.load_report()) {
        nlohmann::json devices = nlohmann::json::array();
        for (const DeviceInfo& d : e.devices)
            devices.push_back({{"name", d.name},
                               {"type", to_string(d.type)},
                               {"compute_units", d.compute_units},
                               {"memory_bytes", d.memory_bytes},
                               {"local_memory_bytes", d.local_memory_bytes},
                               {"max_work_group_size", d.max_work_group_size},
                               {"subgroup_size", d.subgroup_size},
                               {"fp64", d.fp64},
                               {"uuid", d.uuid_string()},
                               {"pci_bus_id", d.pci_bus_id}});
        plugins.push_back({{"name", e.name},
                           {"path", e.path},
                           {"outcome", to_string(e.outcome)},
                           {"message", e.message},
                           {"execution_model", e.execution_model},
                           {"priority", e.priority},
                           {"signal", e.signal},
                           {"devices", devices}});
    }
    const std::string& source = rt.config().source;
    return {{"plugins", plugins},
            {"config", source.empty() ? nlohmann::json(nullptr) : nlohmann::json(source)}};
}

constexpr const char* kHelp =
    "usage: plexus info [--json]\n\n"
    "Lists every plugin file found, what happened when it was loaded, and the\n"
    "devices of the plugins that loaded. Exits 0 even when some plugins failed;\n"
    "exits 2 when the configuration is invalid.\n";

int run_info(const std::vector<std::string>& args) {
    bool json = false;
    if (auto stop = json_option_only(args, "info", kHelp, json)) return *stop;
    Runtime rt(load_config());
    if (json)
        std::cout << to_json(rt).dump(2) << "\n";
    else
        print_table(rt);
    return 0;
}

const Registration reg{{"info", run_info, "list plugins, their load outcome and their devices"}};

} // namespace

} // namespace plexus::app
