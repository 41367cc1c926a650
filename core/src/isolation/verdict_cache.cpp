// VerdictCache: ownership and mode checks on the folder and on every file, I/O relative to the
// folder's descriptor (openat, renameat) so that a link planted later is never followed.
#include "isolation/verdict_cache.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <set>

#include "cache/disk_cache.hpp"
#include "config/env.hpp"
#include "config/log.hpp"

namespace plexus::detail {

namespace {

constexpr const char* kSubdir = "plugin-verdicts";
constexpr off_t kMaxFile = 1 << 20;

// Why a folder or file must not be trusted, "" when it may be.
std::string distrust(const struct stat& st) {
    if (st.st_uid != ::geteuid())
        return "it belongs to user id " + std::to_string(st.st_uid) + ", not to this process's " +
               std::to_string(::geteuid());
    if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) return "other users may write it";
    return {};
}

void warn_once(const std::string& dir, const std::string& why) {
    static std::mutex m;
    static std::set<std::string> warned;
    std::lock_guard lock(m);
    if (warned.insert(dir).second)
        log().warn(
            "the plugin verdict cache {} is ignored: {}; plugins are validated again in every "
            "process (see 'Security' in docs/configuration.md)",
            dir, why);
}

std::string entry_name(const Fingerprint& fp) {
    const std::string id = fp.realpath + '\n' + hex16(fp.options);
    return hex16(fnv1a64(id.data(), id.size())) + ".json";
}

// The file's text when it is a regular file this user owns and only this user may write.
std::optional<std::string> read_trusted(int dir_fd, const std::string& name) {
    int fd = ::openat(dir_fd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return std::nullopt;
    struct stat st{};
    std::string text;
    bool ok = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && distrust(st).empty() &&
              st.st_size <= kMaxFile;
    if (ok) {
        text.resize(static_cast<size_t>(st.st_size));
        text.resize(read_full(fd, text.data(), text.size()));
    }
    ::close(fd);
    if (!ok) return std::nullopt;
    return text;
}

} // namespace

VerdictCache::VerdictCache(const std::string& cache_dir) {
    if (cache_dir.empty() || privileged_process()) return;
    dir_ = (std::filesystem::path(cache_dir) / kSubdir).string();
    std::error_code ec;
    std::filesystem::create_directories(cache_dir, ec);
    if (::mkdir(dir_.c_str(), 0700) != 0 && errno != EEXIST) {
        log().debug("cannot create the plugin verdict cache {}: {}", dir_, std::strerror(errno));
        return;
    }
    int fd = ::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        warn_once(dir_, std::string("cannot open it as a folder: ") + std::strerror(errno));
        return;
    }
    struct stat st{};
    std::string why = ::fstat(fd, &st) == 0 ? distrust(st) : std::string(std::strerror(errno));
    if (!why.empty()) {
        ::close(fd);
        warn_once(dir_, why);
        return;
    }
    dir_fd_ = fd;
}

VerdictCache::~VerdictCache() {
    if (dir_fd_ >= 0) ::close(dir_fd_);
}

std::optional<Verdict> VerdictCache::load(const Fingerprint& fp) const {
    if (!usable()) return std::nullopt;
    const std::string name = entry_name(fp);
    std::optional<std::string> text = read_trusted(dir_fd_, name);
    if (!text) return std::nullopt;
    std::optional<Verdict> v = parse_verdict(*text, fp.key());
    if (!v)
        log().debug("verdict cache: {}/{} is stale or corrupt; validating {} again", dir_, name,
                    fp.realpath);
    return v;
}

void VerdictCache::store(const Fingerprint& fp, const Verdict& v) const {
    if (!usable() || v.result == VerdictResult::Unchecked) return;
    try {
        const std::string name = entry_name(fp), text = format_verdict(fp, v),
                          tmp = temp_name(name);
        int fd = ::openat(dir_fd_, tmp.c_str(),
                          O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0) {
            log().debug("verdict cache: cannot create {}/{}: {}", dir_, tmp, std::strerror(errno));
            return;
        }
        bool ok = write_all(fd, text.data(), text.size());
        ok = ::close(fd) == 0 && ok;
        if (!ok || ::renameat(dir_fd_, tmp.c_str(), dir_fd_, name.c_str()) != 0) {
            log().debug("verdict cache: cannot write {}/{}: {}", dir_, name, std::strerror(errno));
            ::unlinkat(dir_fd_, tmp.c_str(), 0);
            return;
        }
        // Entries of plugin files that are gone (a removed plugin, a test's temporary folder).
        int list_fd = ::dup(dir_fd_);
        DIR* d = list_fd >= 0 ? ::fdopendir(list_fd) : nullptr;
        if (d == nullptr) {
            if (list_fd >= 0) ::close(list_fd);
            return;
        }
        ::rewinddir(d);
        while (const dirent* e = ::readdir(d)) {
            const std::string entry = e->d_name;
            if (entry == name || entry.size() < 5 ||
                entry.compare(entry.size() - 5, 5, ".json") != 0)
                continue;
            std::optional<std::string> other = read_trusted(dir_fd_, entry);
            if (!other) continue;
            const std::string path = verdict_path(*other);
            struct stat st{};
            if (!path.empty() && ::stat(path.c_str(), &st) != 0 && errno == ENOENT)
                ::unlinkat(dir_fd_, entry.c_str(), 0);
        }
        ::closedir(d);
    } catch (const std::exception& e) {
        log().debug("verdict cache: cannot store in {}: {}", dir_, e.what());
    }
}

} // namespace plexus::detail
