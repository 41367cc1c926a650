// The on-disk cache of compiled modules: one file per CacheKey, written atomically, checked on
// every load so that a torn, corrupt or colliding file is a miss and never a wrong module.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace plexus::detail {

// Everything that makes a compiled module reusable; two keys that differ in any field must
// never share a payload.
struct CacheKey {
    uint64_t ir_hash = 0;
    std::string language, plugin, plugin_version, device, arch, options;

    // Canonical one-line description of every field. Each value is escaped (so it holds no
    // newline) and length-prefixed (so "a b"+"c" and "a"+"b c" differ).
    std::string text() const;
    // Hex FNV-1a 64 of text(), 16 digits, plus ".plxc".
    std::string file_name() const;
};

class DiskCache {
public:
    // "" disables the cache; the directory is created on the first store (mkdir -p).
    explicit DiskCache(std::string dir);

    bool enabled() const { return !dir_.empty(); }
    const std::string& dir() const { return dir_; }

    // The payload, or std::nullopt when absent, unreadable, of another key (the stored key
    // text differs: a file-name collision) or corrupt (bad magic, version, sizes or checksum).
    // A corrupt entry is removed and a warning logged.
    std::optional<std::vector<unsigned char>> load(const CacheKey& key) const;

    // Writes a unique temporary file in the same directory and renames it over the entry, so
    // a concurrent load sees either the old file or the whole new one. Never throws: failures
    // (read-only directory, disk full) are logged at warn and ignored.
    void store(const CacheKey& key, const void* data, size_t bytes) const;

private:
    std::string dir_;
};

// The identity of this libplexus build (its file's size and modification time): part of every
// cache key's options, so that code a rebuilt or upgraded plexus generates differently is never
// taken from an older entry. "" when the library's file cannot be found.
const std::string& core_build_id();

// 16 lower-case hex digits.
std::string hex16(uint64_t v);
// Writes all of `data`, retrying short writes and EINTR; false with errno set on failure.
bool write_all(int fd, const void* data, size_t bytes);
// Reads up to `bytes`, retrying short reads and EINTR; returns how many it read before the end
// of the file or an error.
size_t read_full(int fd, void* data, size_t bytes);
// A temporary name beside `final_path`, unique among processes, threads and calls, to be
// renamed over it once written.
std::string temp_name(const std::string& final_path);

// FNV-1a 64, continuing from `hash` so that several pieces can be hashed as one.
uint64_t fnv1a64(const void* data, size_t bytes, uint64_t hash = 0xcbf29ce484222325ull);

} // namespace plexus::detail
