// Environment helpers shared by the configuration and the loader.
#include "config/env.hpp"

#include <cstdlib>
#include <pwd.h>
#include <unistd.h>

namespace plexus::detail {

bool privileged_process() {
    return getuid() != geteuid() || getgid() != getegid();
}

std::optional<std::string> get_env(const char* name) {
    if (privileged_process()) return std::nullopt;
    // secure_getenv also returns NULL for file capabilities, which the uid check misses.
    const char* value = secure_getenv(name);
    if (value == nullptr || *value == '\0') return std::nullopt;
    return std::string(value);
}

std::string home_dir() {
    if (auto home = get_env("HOME")) return *home;
    if (const passwd* pw = getpwuid(getuid()); pw != nullptr && pw->pw_dir != nullptr)
        return pw->pw_dir;
    return "/";
}

std::string expand_tilde(const std::string& path) {
    if (path == "~") return home_dir();
    if (path.rfind("~/", 0) == 0) return home_dir() + path.substr(1);
    return path;
}

} // namespace plexus::detail
