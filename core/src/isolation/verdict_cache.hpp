// The on-disk verdict cache, <cache_dir>/plugin-verdicts: one file per plugin path and options,
// so that later processes skip the validation child. It is used only when it is safe to trust:
// owned by this user and writable by nobody else (see docs/configuration.md).
#pragma once

#include <optional>
#include <string>

#include "isolation/verdict.hpp"

namespace plexus::detail {

class VerdictCache {
public:
    // "" disables it; so does a privileged (setuid) process, and a folder that another user
    // owns or may write, which is then logged once at warn.
    explicit VerdictCache(const std::string& cache_dir);
    ~VerdictCache();
    VerdictCache(const VerdictCache&) = delete;
    VerdictCache& operator=(const VerdictCache&) = delete;

    bool usable() const { return dir_fd_ >= 0; }
    const std::string& dir() const { return dir_; }

    // The verdict stored for exactly this fingerprint; nullopt when absent, stale (the file or
    // its options changed), corrupt, or not safe to trust (another owner, writable by others).
    std::optional<Verdict> load(const Fingerprint& fp) const;
    // Writes a temporary file and renames it over the entry; removes entries of plugin files
    // that no longer exist. Never throws; failures are logged at debug.
    void store(const Fingerprint& fp, const Verdict& v) const;

private:
    std::string dir_;
    int dir_fd_ = -1; // opened once and used with openat: a swapped folder cannot redirect us
};

} // namespace plexus::detail
