// `plexus cache list|stats|clear [--json]`: what the disk cache of compiled modules holds
// (cache_dir of the configuration), summed by backend and language, and its removal.
#include "app.hpp"

#include "plexus/cache.hpp"
#include "plexus/error.hpp"

#include <cstdio>
#include <ctime>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>

namespace plexus::app {
namespace {

const char* kHelp = "usage: plexus cache list|stats|clear [--json]\n"
                    "  list   every entry: backend, language, device, size, age\n"
                    "  stats  entries and bytes by backend and language\n"
                    "  clear  remove every entry (plugin verdicts are kept)\n"
                    "  --json the same as JSON\n"
                    "The directory is cache_dir of the configuration (docs/configuration.md).\n";

std::string what(const CacheEntry& e) {
    return e.problem.empty() ? e.plugin + " " + e.language : "(unreadable)";
}

int list(const std::vector<CacheEntry>& entries, bool json) {
    if (json) {
        nlohmann::json out = nlohmann::json::array();
        for (const CacheEntry& e : entries)
            out.push_back({{"file", e.file},
                           {"bytes", e.bytes},
                           {"plugin", e.plugin},
                           {"plugin_version", e.plugin_version},
                           {"language", e.language},
                           {"device", e.device},
                           {"arch", e.arch},
                           {"modified", e.modified},
                           {"problem", e.problem}});
        std::cout << out.dump(2) << "\n";
        return 0;
    }
    const std::time_t now = std::time(nullptr);
    for (const CacheEntry& e : entries) {
        const long long age = (now - e.modified) / 60;
        std::printf("%-22s %-8s %-16s %-34.34s %10llu B %6lld min  %s\n",
                    e.file.substr(e.file.find_last_of('/') + 1).c_str(), e.plugin.c_str(),
                    e.language.c_str(), e.device.c_str(), static_cast<unsigned long long>(e.bytes),
                    age, e.problem.c_str());
    }
    return 0;
}

int stats(const std::string& dir, const std::vector<CacheEntry>& entries, bool json) {
    struct Sum {
        size_t entries = 0;
        uint64_t bytes = 0;
    };
    std::map<std::string, Sum> by;
    Sum total;
    for (const CacheEntry& e : entries) {
        Sum& s = by[what(e)];
        ++s.entries, s.bytes += e.bytes;
        ++total.entries, total.bytes += e.bytes;
    }
    if (json) {
        nlohmann::json groups = nlohmann::json::object();
        for (const auto& [k, s] : by)
            groups[k] = {{"entries", s.entries}, {"bytes", s.bytes}};
        std::cout << nlohmann::json{{"dir", dir},
                                    {"entries", total.entries},
                                    {"bytes", total.bytes},
                                    {"by_backend_and_language", groups}}
                         .dump(2)
                  << "\n";
        return 0;
    }
    std::printf("%s: %zu entries, %llu bytes\n", dir.c_str(), total.entries,
                static_cast<unsigned long long>(total.bytes));
    for (const auto& [k, s] : by)
        std::printf("  %-30s %6zu entries %12llu bytes\n", k.c_str(), s.entries,
                    static_cast<unsigned long long>(s.bytes));
    return 0;
}

int run_cache(const std::vector<std::string>& args) {
    if (args.empty()) {
        std::fputs(kHelp, stderr);
        return 2;
    }
    const std::string action = args[0];
    if (action == "--help" || action == "-h") {
        std::fputs(kHelp, stdout);
        return 0;
    }
    bool json = false;
    if (auto stop = json_option_only({args.begin() + 1, args.end()}, "cache", kHelp, json))
        return *stop;
    if (action != "list" && action != "stats" && action != "clear") {
        std::fprintf(stderr, "plexus cache: unknown action '%s' (list, stats or clear)\n",
                     action.c_str());
        return 2;
    }
    const Config config = load_config();
    const std::string& dir = config.cache_dir;
    if (dir.empty()) {
        std::fprintf(stderr,
                     "plexus cache: the disk cache is off (cache_dir is null or empty%s%s)\n",
                     config.source.empty() ? "" : " in ", config.source.c_str());
        return 1;
    }
    if (action == "list") return list(cache_entries(dir), json);
    if (action == "stats") return stats(dir, cache_entries(dir), json);
    const CacheCleared done = clear_cache(dir);
    if (json)
        std::cout << nlohmann::json{{"dir", dir},
                                    {"removed_files", done.files},
                                    {"removed_bytes", done.bytes},
                                    {"problems", done.problems}}
                         .dump(2)
                  << "\n";
    else
        std::printf("%s: removed %zu files, %llu bytes\n", dir.c_str(), done.files,
                    static_cast<unsigned long long>(done.bytes));
    for (const std::string& p : done.problems)
        std::fprintf(stderr, "plexus cache: %s\n", p.c_str());
    return done.problems.empty() ? 0 : 1;
}

const Registration reg{
    {"cache", run_cache, "list, sum up or clear the disk cache of compiled modules"}};

} // namespace
} // namespace plexus::app
