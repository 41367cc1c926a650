// What the disk cache of compiled modules holds (`plexus cache`): each entry described from its
// header, and removal. The cache itself is internal; see docs/configuration.md (cache_dir).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace plexus {

struct CacheEntry {
    std::string file;   // path of the entry
    uint64_t bytes = 0; // the file's size
    // The key's fields (empty when the header cannot be read).
    std::string language, plugin, plugin_version, device, arch;
    int64_t modified = 0; // seconds since the epoch
    std::string problem;  // "" for a well-formed header; else why a load would miss it
};

// Every entry (*.plxc) of the cache directory `dir`, by file name; none when it does not exist.
// Reads headers only: a payload whose checksum fails is found, and removed, by the load.
std::vector<CacheEntry> cache_entries(const std::string& dir);

struct CacheCleared {
    size_t files = 0;
    uint64_t bytes = 0;
    std::vector<std::string> problems; // "cannot remove FILE: reason", one per file left
};
// Removes every entry and every temporary file a store left behind in `dir` (not the plugin
// verdicts, which live in their own folder).
CacheCleared clear_cache(const std::string& dir);

} // namespace plexus
