// `plexus`: dispatches to the subcommands that registered themselves (see app.hpp).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <iostream>
#include <sstream>
#include <unistd.h>

#include "app.hpp"
#include "kernels.hpp"
#include "plexus/error.hpp"

namespace plexus::app {

namespace {
std::vector<Command>& registry() {
    static std::vector<Command> r;
    return r;
}
} // namespace

Registration::Registration(Command c) {
    auto& r = registry();
    r.push_back(c);
    std::sort(r.begin(), r.end(), [](const Command& a, const Command& b) {
        return std::string_view(a.name) < std::string_view(b.name);
    });
}

const std::vector<Command>& commands() {
    return registry();
}

Config load_config() {
    Config config = Config::load();
#if defined(PLEXUS_BUILD_ROOT) && defined(PLEXUS_BUILD_PLUGIN_DIRS)
    // Only an executable inside the build tree uses the build tree's plugins; an installed
    // copy must never look there.
    std::error_code ec;
    const auto exe = std::filesystem::canonical("/proc/self/exe", ec);
    const auto root = std::filesystem::weakly_canonical(PLEXUS_BUILD_ROOT, ec);
    if (!ec && !root.empty()) {
        auto rel = exe.parent_path().lexically_relative(root);
        if (!rel.empty() && *rel.begin() != "..") {
            for (const char* dir : PLEXUS_BUILD_PLUGIN_DIRS)
                config.plugin_dirs.emplace_back(dir);
            config.use_install_dir = false; // an older installed plugin would shadow nothing useful
        }
    }
#endif
    return config;
}

ir::Kernel load_kernel(const std::string& what) {
    if (const ir::Kernel* k = samples::find(what)) return *k;
    std::ifstream in(what);
    if (!in) {
        std::string msg = "'" + what + "' is neither a sample kernel nor a readable file; samples:";
        for (auto& n : samples::names())
            msg += " " + n;
        throw Error(ErrorCode::InvalidArgument, msg);
    }
    std::stringstream text;
    text << in.rdbuf();
    ir::Kernel k = ir::from_json(text.str(), what);
    ir::validate(k);
    return k;
}

bool parse_mnk(const std::string& text, int& m, int& n, int& k) {
    int used = 0;
    return std::sscanf(text.c_str(), "%d,%d,%d%n", &m, &n, &k, &used) == 3 &&
           size_t(used) == text.size() && m > 0 && n > 0 && k > 0;
}

int report_error(const std::exception& e) {
    std::cerr << "plexus: " << e.what() << "\n";
    return 2;
}

std::optional<int> json_option_only(const std::vector<std::string>& args, const char* command,
                                    const char* help, bool& json) {
    for (const auto& a : args) {
        if (a == "--json") {
            json = true;
        } else if (a == "--help" || a == "-h") {
            std::fputs(help, stdout);
            return 0;
        } else {
            std::fprintf(stderr, "plexus %s: unknown option '%s' (try --help)\n", command,
                         a.c_str());
            return 2;
        }
    }
    return std::nullopt;
}

} // namespace plexus::app

namespace {

void usage(std::FILE* out) {
    std::fprintf(out, "usage: plexus <command> [options]\n"
                      "       plexus <command> --help\n\n"
                      "Runs compute kernels on every backend found at run time.\n\ncommands:\n");
    for (const auto& c : plexus::app::commands())
        std::fprintf(out, "  %-10s %s\n", c.name, c.summary);
    std::fprintf(
        out,
        "\nenvironment: PLEXUS_CONFIG (configuration file), PLEXUS_PLUGIN_PATH "
        "(colon-separated plugin folders), PLEXUS_LOG (trace, debug, info, warn, error, off)\n");
}

} // namespace

int main(int argc, char** argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
    if (args.empty()) {
        usage(stderr);
        return 2;
    }
    if (args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
        usage(stdout);
        return 0;
    }
    for (const auto& c : plexus::app::commands()) {
        if (args[0] == c.name) {
            try {
                return c.run(std::vector<std::string>(args.begin() + 1, args.end()));
            } catch (const std::exception& e) {
                return plexus::app::report_error(e);
            }
        }
    }
    std::fprintf(stderr, "plexus: unknown command '%s'\n\n", args[0].c_str());
    usage(stderr);
    return 2;
}
