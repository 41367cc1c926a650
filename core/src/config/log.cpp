// The "plexus" logger and set_log_level.
#include "config/log.hpp"

#include <spdlog/sinks/stdout_color_sinks.h>

#include "plexus/config.hpp"
#include "plexus/error.hpp"

namespace plexus::detail {

spdlog::logger& log() {
    // A function-local static, so the logger exists before any static initializer that logs
    // and is never looked up by name (another library may also register "plexus").
    static const std::shared_ptr<spdlog::logger> logger = [] {
        auto l = std::make_shared<spdlog::logger>(
            "plexus", std::make_shared<spdlog::sinks::stderr_color_sink_mt>());
        l->set_pattern("[plexus %l] %v");
        l->set_level(spdlog::level::warn);
        return l;
    }();
    return *logger;
}

} // namespace plexus::detail

namespace plexus {

void set_log_level(const std::string& level) {
    static const std::pair<const char*, spdlog::level::level_enum> levels[] = {
        {"trace", spdlog::level::trace}, {"debug", spdlog::level::debug},
        {"info", spdlog::level::info},   {"warn", spdlog::level::warn},
        {"error", spdlog::level::err},   {"off", spdlog::level::off},
    };
    for (const auto& [name, value] : levels) {
        if (level == name) {
            detail::log().set_level(value);
            return;
        }
    }
    throw Error(ErrorCode::InvalidConfig, "unknown log level '" + level +
                                              "'; expected trace, debug, info, warn, error or off");
}

} // namespace plexus
