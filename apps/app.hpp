// The `plexus` command's shared pieces: the subcommand registry and the configuration the
// command runs with (the build tree's plugins when it runs from the build tree).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "plexus/config.hpp"
#include "plexus/ir.hpp"

namespace plexus::app {

// A subcommand gets the arguments after its name; it returns the process exit status.
using CommandFn = int (*)(const std::vector<std::string>& args);

struct Command {
    const char* name;
    CommandFn run;
    const char* summary; // one line for `plexus --help`
};

// Each subcommand registers itself from its own file, so adding one touches no other file:
//   static const plexus::app::Registration reg{{"info", run_info, "list plugins and devices"}};
struct Registration {
    explicit Registration(Command c);
};

const std::vector<Command>& commands();

// Config::load(), plus the build tree's plugin folders when this executable runs from the
// build tree (so `build/apps/plexus info` works with no set-up). Throws plexus::Error.
Config load_config();

// Prints a plexus::Error (or any exception) the way every subcommand does; returns 2.
int report_error(const std::exception& e);

// A sample kernel by name, or a JSON IR file (validated). Throws plexus::Error naming both.
ir::Kernel load_kernel(const std::string& what);

// "M,N,K" as three positive sizes, nothing after them (--mnk of bench and tune); false when the
// text is anything else.
bool parse_mnk(const std::string& text, int& m, int& n, int& k);

// Prints the tuning choices stored under cache_dir (of one family, or all for ""), each with
// its timed candidates (apps/tune.cpp); returns how many.
size_t print_stored_tunings(const std::string& cache_dir, const std::string& family);

// The options of a command that takes only [--json]: sets `json`, prints `help` for --help.
// Returns the exit status when the command must stop there (0 after help, 2 for an unknown
// option), nullopt when it goes on.
std::optional<int> json_option_only(const std::vector<std::string>& args, const char* command,
                                    const char* help, bool& json);

} // namespace plexus::app
