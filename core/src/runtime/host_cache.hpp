// The host CPU's last-level cache as Linux describes it in sysfs, for the default threshold of
// streaming stores (compile/build_direct.cpp, streaming_bytes).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string_view>

namespace plexus::detail {

// A sysfs cache `size`: "32768K", "2M", "512" -> bytes; 0 for anything else.
uint64_t parse_cache_size(std::string_view text);
// A sysfs `shared_cpu_list`: "0-15", "0,64", "0-3,8-11" -> how many CPUs; 0 if malformed.
unsigned count_cpu_list(std::string_view text);

struct CacheShare {
    uint64_t bytes = 0;
    unsigned cpus = 0; // sharing it
};
// The highest-level data or unified cache among `dir`'s index* folders (a CPU's sysfs cache
// folder); zeros where there is none or it cannot be read.
CacheShare
last_level_cache(const std::filesystem::path& dir = "/sys/devices/system/cpu/cpu0/cache");

} // namespace plexus::detail
