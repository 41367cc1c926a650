// DiskCache: entry file format, atomic store through rename(2), and checked load.
#include "cache/disk_cache.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <functional>
#include <thread>

#include "config/log.hpp"
#include "plexus/cache.hpp"

namespace plexus::detail {

namespace {

// Entry layout, all integers little-endian so a cache directory can be shared between hosts:
//   0  magic "PLXCACHE1\0"        10 bytes
//  10  format version             u16
//  12  key text length            u32
//  16  payload length             u64
//  24  FNV-1a 64 of key + payload u64
//  32  key text, then payload
constexpr char kMagic[10] = {'P', 'L', 'X', 'C', 'A', 'C', 'H', 'E', '1', '\0'};
constexpr uint16_t kFormatVersion = 1;
constexpr size_t kHeaderSize = 32;

void put_le(unsigned char* p, uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i)
        p[i] = static_cast<unsigned char>(v >> (8 * i));
}

uint64_t get_le(const unsigned char* p, int bytes) {
    uint64_t v = 0;
    for (int i = 0; i < bytes; ++i)
        v |= static_cast<uint64_t>(p[i]) << (8 * i);
    return v;
}

// Why a file of `file_bytes` whose first `available` bytes are at `p` is not an entry (its
// checksum aside), or nullptr with the key and payload lengths set.
const char* header_problem(const unsigned char* p, size_t available, uint64_t file_bytes,
                           uint64_t& key_len, uint64_t& payload_len) {
    if (available < kHeaderSize || file_bytes < kHeaderSize) return "shorter than the header";
    if (std::memcmp(p, kMagic, sizeof kMagic) != 0) return "bad magic";
    if (get_le(p + 10, 2) != kFormatVersion) return "unknown format version";
    key_len = get_le(p + 12, 4);
    payload_len = get_le(p + 16, 8);
    // Compared by subtraction so a huge length in a corrupt header cannot overflow.
    const uint64_t body = file_bytes - kHeaderSize;
    if (key_len > body || payload_len != body - key_len)
        return "lengths in the header do not match the file size";
    return nullptr;
}

void append_field(std::string& out, const char* name, const std::string& value) {
    std::string esc;
    esc.reserve(value.size());
    for (unsigned char c : value) {
        if (c == '\\') {
            esc += "\\\\";
        } else if (c < 0x20 || c == 0x7f) {
            static const char digits[] = "0123456789abcdef";
            esc += "\\x";
            esc += digits[c >> 4];
            esc += digits[c & 15];
        } else {
            esc += static_cast<char>(c);
        }
    }
    out += ' ';
    out += name;
    out += '=';
    out += std::to_string(esc.size());
    out += ':';
    out += esc;
}

} // namespace

std::string hex16(uint64_t v) {
    static const char digits[] = "0123456789abcdef";
    std::string s(16, '0');
    for (int i = 15; i >= 0; --i, v >>= 4)
        s[static_cast<size_t>(i)] = digits[v & 15];
    return s;
}

bool write_all(int fd, const void* data, size_t bytes) {
    const auto* p = static_cast<const unsigned char*>(data);
    while (bytes > 0) {
        ssize_t n = ::write(fd, p, bytes);
        if (n < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        p += n;
        bytes -= static_cast<size_t>(n);
    }
    return true;
}

size_t read_full(int fd, void* data, size_t bytes) {
    auto* p = static_cast<unsigned char*>(data);
    size_t got = 0;
    while (got < bytes) {
        ssize_t n = ::read(fd, p + got, bytes - got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        got += static_cast<size_t>(n);
    }
    return got;
}

// Unique among processes (pid), threads (thread id) and calls of one thread (counter), so two
// writers never share a temporary file.
std::string temp_name(const std::string& final_path) {
    static std::atomic<uint64_t> counter{0};
    return final_path + ".tmp." + std::to_string(::getpid()) + "." +
           hex16(std::hash<std::thread::id>{}(std::this_thread::get_id())) + "." +
           std::to_string(counter.fetch_add(1, std::memory_order_relaxed));
}

uint64_t fnv1a64(const void* data, size_t bytes, uint64_t hash) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < bytes; ++i) {
        hash ^= p[i];
        hash *= 0x100000001b3ull;
    }
    return hash;
}

std::string CacheKey::text() const {
    std::string out = "plexus-cache-key/1 ir_hash=" + hex16(ir_hash);
    append_field(out, "language", language);
    append_field(out, "plugin", plugin);
    append_field(out, "plugin_version", plugin_version);
    append_field(out, "device", device);
    append_field(out, "arch", arch);
    append_field(out, "options", options);
    return out;
}

std::string CacheKey::file_name() const {
    const std::string t = text();
    return hex16(fnv1a64(t.data(), t.size())) + ".plxc";
}

DiskCache::DiskCache(std::string dir) : dir_(std::move(dir)) {}

std::optional<std::vector<unsigned char>> DiskCache::load(const CacheKey& key) const {
    if (!enabled()) return std::nullopt;
    const std::string path = (std::filesystem::path(dir_) / key.file_name()).string();
    try {
        int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            if (errno != ENOENT && errno != ENOTDIR)
                log().warn("cache: cannot open '{}': {}", path, std::strerror(errno));
            return std::nullopt;
        }
        struct stat st{};
        std::vector<unsigned char> file;
        bool read_ok = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
        if (read_ok) {
            file.resize(static_cast<size_t>(st.st_size));
            // A short read means the file shrank under us; treat it like a truncated entry.
            file.resize(read_full(fd, file.data(), file.size()));
        }
        ::close(fd);
        if (!read_ok) {
            log().warn("cache: cannot read '{}'", path);
            return std::nullopt;
        }

        uint64_t key_len = 0, payload_len = 0;
        const char* problem =
            header_problem(file.data(), file.size(), file.size(), key_len, payload_len);
        if (!problem && fnv1a64(file.data() + kHeaderSize, file.size() - kHeaderSize) !=
                            get_le(file.data() + 24, 8))
            problem = "bad checksum";
        if (problem) {
            log().warn("cache: removing corrupt entry '{}': {}", path, problem);
            // Remove only the file we read: a writer may have renamed a good entry over it since.
            struct stat now{};
            if (::stat(path.c_str(), &now) == 0 && now.st_ino == st.st_ino &&
                now.st_dev == st.st_dev)
                ::unlink(path.c_str());
            return std::nullopt;
        }

        const std::string want = key.text();
        const auto* stored_key = reinterpret_cast<const char*>(file.data() + kHeaderSize);
        if (key_len != want.size() || std::memcmp(stored_key, want.data(), want.size()) != 0) {
            log().debug("cache: '{}' holds another key (file-name collision)", path);
            return std::nullopt;
        }
        const size_t start = kHeaderSize + static_cast<size_t>(key_len);
        return std::vector<unsigned char>(file.begin() + static_cast<std::ptrdiff_t>(start),
                                          file.end());
    } catch (const std::exception& e) {
        // bad_alloc for a huge file, or a logging failure: a miss, never an exception.
        log().warn("cache: cannot load '{}': {}", path, e.what());
        return std::nullopt;
    }
}

void DiskCache::store(const CacheKey& key, const void* data, size_t bytes) const {
    if (!enabled()) return;
    try {
        std::error_code ec;
        std::filesystem::create_directories(dir_, ec);
        if (ec) {
            log().warn("cache: cannot create directory '{}': {}", dir_, ec.message());
            return;
        }
        const std::string path = (std::filesystem::path(dir_) / key.file_name()).string();
        const std::string text = key.text();

        unsigned char header[kHeaderSize] = {};
        std::memcpy(header, kMagic, sizeof kMagic);
        put_le(header + 10, kFormatVersion, 2);
        put_le(header + 12, text.size(), 4);
        put_le(header + 16, bytes, 8);
        put_le(header + 24, fnv1a64(data, bytes, fnv1a64(text.data(), text.size())), 8);

        const std::string tmp = temp_name(path);
        int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (fd < 0) {
            log().warn("cache: cannot create '{}': {}", tmp, std::strerror(errno));
            return;
        }
        bool ok = write_all(fd, header, sizeof header) && write_all(fd, text.data(), text.size()) &&
                  (bytes == 0 || write_all(fd, data, bytes));
        int saved = errno;
        if (::close(fd) != 0 && ok) {
            ok = false;
            saved = errno;
        }
        if (ok && ::rename(tmp.c_str(), path.c_str()) != 0) {
            ok = false;
            saved = errno;
        }
        if (!ok) {
            ::unlink(tmp.c_str());
            log().warn("cache: cannot write '{}': {}", path, std::strerror(saved));
        }
    } catch (const std::exception& e) {
        log().warn("cache: cannot store in '{}': {}", dir_, e.what());
    }
}

const std::string& core_build_id() {
    static const std::string id = [] {
        Dl_info info{};
        struct stat st{};
        if (dladdr(reinterpret_cast<const void*>(&core_build_id), &info) == 0 ||
            info.dli_fname == nullptr || stat(info.dli_fname, &st) != 0)
            return std::string();
        return "libplexus " + std::to_string(st.st_size) + " " + std::to_string(st.st_mtim.tv_sec) +
               "." + std::to_string(st.st_mtim.tv_nsec);
    }();
    return id;
}

namespace {

// The fields of a key's text (CacheKey::text()): each "name=LENGTH:ESCAPED".
void read_key_fields(const std::string& text, CacheEntry& e) {
    auto field = [&](const char* name) -> std::string {
        const std::string tag = std::string(" ") + name + "=";
        size_t at = text.find(tag);
        if (at == std::string::npos) return "";
        size_t colon = text.find(':', at + tag.size());
        if (colon == std::string::npos) return "";
        size_t len = 0;
        try {
            len = std::stoul(text.substr(at + tag.size(), colon - at - tag.size()));
        } catch (const std::exception&) {
            return "";
        }
        const std::string esc = text.substr(colon + 1, len);
        std::string out;
        for (size_t i = 0; i < esc.size(); ++i) {
            if (esc[i] == '\\' && i + 1 < esc.size() && esc[i + 1] == 'x' && i + 3 < esc.size()) {
                out += static_cast<char>(std::stoi(esc.substr(i + 2, 2), nullptr, 16));
                i += 3;
            } else if (esc[i] == '\\' && i + 1 < esc.size()) {
                out += esc[++i];
            } else {
                out += esc[i];
            }
        }
        return out;
    };
    e.language = field("language");
    e.plugin = field("plugin");
    e.plugin_version = field("plugin_version");
    e.device = field("device");
    e.arch = field("arch");
}

// The header and key of one entry file; the payload is not read.
void read_entry_header(CacheEntry& e) {
    int fd = ::open(e.file.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        e.problem = std::string("cannot open: ") + std::strerror(errno);
        return;
    }
    unsigned char header[kHeaderSize];
    const size_t got = read_full(fd, header, sizeof header);
    std::string text;
    uint64_t key_len = 0, payload_len = 0;
    if (const char* problem = header_problem(header, got, e.bytes, key_len, payload_len)) {
        e.problem = problem;
    } else {
        text.resize(key_len);
        if (read_full(fd, text.data(), text.size()) != text.size()) e.problem = "key cut short";
    }
    ::close(fd);
    if (e.problem.empty()) read_key_fields(text, e);
}

bool is_entry(const std::filesystem::path& p) {
    return p.extension() == ".plxc";
}
bool is_leftover(const std::filesystem::path& p) {
    return p.filename().string().find(".plxc.tmp.") != std::string::npos;
}

} // namespace

} // namespace plexus::detail

namespace plexus {

std::vector<CacheEntry> cache_entries(const std::string& dir) {
    namespace fs = std::filesystem;
    std::vector<CacheEntry> entries;
    std::error_code ec;
    if (dir.empty() || !fs::is_directory(dir, ec)) return entries;
    for (const fs::directory_entry& f : fs::directory_iterator(dir, ec)) {
        if (!f.is_regular_file(ec) || !detail::is_entry(f.path())) continue;
        CacheEntry e;
        e.file = f.path().string();
        struct stat st{};
        if (::stat(e.file.c_str(), &st) == 0) {
            e.bytes = static_cast<uint64_t>(st.st_size);
            e.modified = static_cast<int64_t>(st.st_mtim.tv_sec);
        }
        detail::read_entry_header(e);
        entries.push_back(std::move(e));
    }
    std::sort(entries.begin(), entries.end(),
              [](const CacheEntry& a, const CacheEntry& b) { return a.file < b.file; });
    return entries;
}

CacheCleared clear_cache(const std::string& dir) {
    namespace fs = std::filesystem;
    CacheCleared done;
    std::error_code ec;
    if (dir.empty() || !fs::is_directory(dir, ec)) return done;
    for (const fs::directory_entry& f : fs::directory_iterator(dir, ec)) {
        if (!f.is_regular_file(ec) ||
            !(detail::is_entry(f.path()) || detail::is_leftover(f.path())))
            continue;
        const uint64_t bytes = f.file_size(ec);
        if (::unlink(f.path().c_str()) == 0) {
            ++done.files;
            done.bytes += ec ? 0 : bytes;
        } else {
            done.problems.push_back("cannot remove " + f.path().string() + ": " +
                                    std::strerror(errno));
        }
    }
    return done;
}

} // namespace plexus
