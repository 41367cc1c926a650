// A check of a shared library's ELF headers before dlopen: glibc maps a truncated file's
// segments anyway and the process dies of SIGBUS, so a broken file must be caught first.
#pragma once

#include <string>

namespace plexus::detail {

// "" when the file looks like a shared library this process can load; otherwise the reason.
std::string check_elf(const std::string& path);

} // namespace plexus::detail
