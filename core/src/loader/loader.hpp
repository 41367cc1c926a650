// Plugin discovery: which directories are searched, in which order, and what happened to
// every plugin file found there.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "plexus/backend.hpp"
#include "plexus/config.hpp"

namespace plexus::detail {

struct LoadResult {
    std::vector<std::unique_ptr<Backend>> backends; // loaded, in discovery order
    std::vector<LoadReportEntry> report;            // one entry per plugin file, same order
};

// config.plugin_dirs, then PLEXUS_PLUGIN_PATH (unless disabled or setuid), then the install
// directory (unless disabled); each directory once.
std::vector<std::string> plugin_search_path(const Config& config);

class Trace;

// Loads every plugin of the search path. Never throws for a broken plugin. Validation and each
// plugin's load go on `trace` when there is one.
LoadResult load_plugins(const Config& config, Trace* trace = nullptr);

} // namespace plexus::detail
