// The child side of plugin isolation, run by plexus-plugin-check: each step is announced on the
// report pipe (fd 3, one JSON object a line) before it runs, so that the parent can name the
// step a crash or a hang happened in.
#pragma once

#include <map>
#include <string>

namespace plexus::detail {

constexpr int kReportFd = 3;

// Writes one JSON line to the report pipe; it is there before the next instruction runs.
void report_line(const std::string& json_object);

// plexus-plugin-check's command line: a mode, then "--name value" pairs. Returns the exit status.
int plugin_check_main(int argc, char** argv);

// `plexus-plugin-check validate`: open, initialize and list the devices of --plugin with
// --options as the loader does, linger --grace-ms, shut it down, and report the outcome.
int validate_main(const std::map<std::string, std::string>& args);

// `plexus-plugin-check exercise` (plexus doctor): see isolation/exercise.cpp.
int exercise_main(const std::map<std::string, std::string>& args);

} // namespace plexus::detail
