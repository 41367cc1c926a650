// plexus's own spdlog logger: writes to stderr (a library must not write to stdout), quiet
// (warn) until the configuration or PLEXUS_LOG says otherwise.
#pragma once

#include <memory>

#include <spdlog/spdlog.h>

namespace plexus::detail {

spdlog::logger& log();

} // namespace plexus::detail
