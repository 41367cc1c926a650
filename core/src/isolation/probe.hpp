// The child side of plugin isolation, run by plexus-plugin-check: each step is announced on the
// report pipe (fd 3, one JSON object a line) before it runs, so that the parent can name the
// step a crash or a hang happened in.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "plexus/runtime.hpp"

namespace plexus::detail {

constexpr int kReportFd = 3;

// Writes one JSON line to the report pipe; it is there before the next instruction runs.
void report_line(const std::string& json_object);
// {"stage": name}: what runs next, so that a crash or hang is named by it.
void report_stage(const std::string& name);
// {"step": name, "ok": ok, "message": message}: how a check ended.
void report_step(const std::string& name, bool ok, const std::string& message);

// plexus-plugin-check's command line: a mode, then "--name value" pairs. Returns the exit status.
int plugin_check_main(int argc, char** argv);

// `plexus-plugin-check validate`: open, initialize and list the devices of --plugin with
// --options as the loader does, linger --grace-ms, shut it down, and report the outcome.
int validate_main(const std::map<std::string, std::string>& args);

// `plexus-plugin-check exercise` (plexus doctor): see isolation/exercise.cpp.
int exercise_main(const std::map<std::string, std::string>& args);

// The plugin under test of exercise and conformance, loaded again in the child: only
// --plugin-dir, with --options, no disk cache, no fallback; the "start" and "load" stages and
// the "load" step reported. `backend` is null when it did not load (the step says why);
// `status` is set when the arguments are wrong (the exit status).
struct UnderTest {
    std::optional<int> status;
    std::unique_ptr<Runtime> rt;
    const Backend* backend = nullptr;
    uint32_t device = 0;
};
UnderTest load_under_test(const std::map<std::string, std::string>& args, const char* mode);

// `plexus-plugin-check conformance` (plexus doctor --plugin): see isolation/conformance.cpp.
int conformance_main(const std::map<std::string, std::string>& args);

} // namespace plexus::detail
