// The validation child: the loader's own open_plugin, with every step reported on fd 3, then a
// grace period for threads the plugin started, then its shutdown.
#include "isolation/probe.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include <nlohmann/json.hpp>

#include "cache/disk_cache.hpp"
#include "loader/library.hpp"
#include "plexus/config.hpp"

namespace plexus::detail {

namespace {

void stage(const char* name, const char* plugin_name) {
    nlohmann::json j = {{"stage", name}};
    if (plugin_name != nullptr) j["name"] = plugin_name;
    report_line(j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

int usage(const char* why) {
    std::fprintf(stderr,
                 "plexus-plugin-check: %s\n"
                 "usage: plexus-plugin-check validate --plugin PATH [--options JSON] [--grace-ms "
                 "N] [--log-level L]\n"
                 "       plexus-plugin-check exercise --plugin-dir DIR --name NAME --device N "
                 "[--options JSON]\n"
                 "       plexus-plugin-check conformance --plugin-dir DIR --name NAME --device N "
                 "[--options JSON]\n"
                 "Run by libplexus and `plexus doctor`: it reports on file descriptor 3.\n",
                 why);
    return 2;
}

} // namespace

void report_line(const std::string& json_object) {
    const std::string line = json_object + "\n";
    write_all(kReportFd, line.data(), line.size());
}

void report_stage(const std::string& name) {
    report_line(nlohmann::json{{"stage", name}}.dump());
}

void report_step(const std::string& name, bool ok, const std::string& message) {
    report_line(nlohmann::json{{"step", name}, {"ok", ok}, {"message", message}}.dump(
        -1, ' ', false, nlohmann::json::error_handler_t::replace));
}

int validate_main(const std::map<std::string, std::string>& args) {
    auto plugin = args.find("plugin");
    if (plugin == args.end()) return usage("validate needs --plugin");
    const std::string options = args.count("options") != 0 ? args.at("options") : "{}";
    const unsigned grace = args.count("grace-ms") != 0
                               ? unsigned(std::strtoul(args.at("grace-ms").c_str(), nullptr, 10))
                               : 0;
    stage("start", nullptr);
    OpenResult r = open_plugin(plugin->second, options, stage);
    if (r.outcome == LoadOutcome::Loaded) {
        stage("grace", r.name.c_str());
        std::this_thread::sleep_for(std::chrono::milliseconds(grace));
        stage("shutdown", r.name.c_str());
        r.library.reset(); // the last reference: shutdown, then dlclose
    }
    nlohmann::json verdict = {
        {"outcome", to_string(r.outcome)}, {"name", r.name}, {"message", r.message}};
    report_line(nlohmann::json{{"verdict", verdict}}.dump(
        -1, ' ', false, nlohmann::json::error_handler_t::replace));
    std::fflush(nullptr);
    std::_Exit(0); // no static destructor or atexit handler may change what was reported
}

int plugin_check_main(int argc, char** argv) {
    if (argc < 2) return usage("no mode given");
    const std::string mode = argv[1];
    std::map<std::string, std::string> args;
    for (int i = 2; i < argc; i += 2) {
        const std::string key = argv[i];
        if (key.rfind("--", 0) != 0 || i + 1 >= argc)
            return usage(("unexpected argument '" + key + "'").c_str());
        args[key.substr(2)] = argv[i + 1];
    }
    if (auto level = args.find("log-level"); level != args.end()) set_log_level(level->second);
    if (mode == "validate") return validate_main(args);
    if (mode == "exercise") return exercise_main(args);
    if (mode == "conformance") return conformance_main(args);
    return usage(("unknown mode '" + mode + "'").c_str());
}

} // namespace plexus::detail
