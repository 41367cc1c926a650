// Reading the environment safely: in a setuid/setgid process (or any AT_SECURE one) plexus
// ignores every environment variable, so a user cannot make a privileged program load code.
#pragma once

#include <optional>
#include <string>

namespace plexus::detail {

// True when the process runs with privileges its real user does not have.
bool privileged_process();
// The variable's value; nullopt when unset, empty, or the process is privileged.
std::optional<std::string> get_env(const char* name);
// The user's home directory: $HOME, else the password database.
std::string home_dir();
// "~" and "~/x" become the home directory; anything else is returned as it is.
std::string expand_tilde(const std::string& path);

} // namespace plexus::detail
