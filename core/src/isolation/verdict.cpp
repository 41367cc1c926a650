// Fingerprints of plugin files and the JSON form of verdicts in the verdict cache.
#include "isolation/verdict.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

#include <nlohmann/json.hpp>

#include "cache/disk_cache.hpp"
#include "plexus/plugin.h"

#ifndef PLEXUS_VERSION
#error "core/meson.build passes PLEXUS_VERSION"
#endif

namespace plexus::detail {

namespace {

constexpr const char* kFormat = "plexus-plugin-verdict/1";

// A hash of a whole file for change detection (not security: the verdict cache only protects
// availability). Four FNV-style lanes over 64-bit words: FNV-1a a byte at a time was a
// visible share of every first Runtime of a process (docs/benchmarks.md). Read in blocks,
// never mapped: a file truncated while mapped would kill this process with SIGBUS.
bool hash_file(int fd, uint64_t& hash) {
    constexpr uint64_t kPrime = 0x100000001b3ull;
    uint64_t lane[4] = {0xcbf29ce484222325ull, 0x84222325cbf29ce4ull, 0x9e3779b97f4a7c15ull,
                        0xc2b2ae3d27d4eb4full};
    unsigned char buf[(1 << 16) + 32];
    size_t carried = 0; // bytes of an unfinished 32-byte group at the start of buf
    uint64_t total = 0;
    for (;;) {
        ssize_t n = ::read(fd, buf + carried, sizeof buf - carried);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return false;
        if (n == 0) break;
        total += static_cast<uint64_t>(n);
        const size_t have = carried + static_cast<size_t>(n), whole = have - have % 32;
        for (size_t i = 0; i < whole; i += 32)
            for (size_t l = 0; l < 4; ++l) {
                uint64_t w;
                std::memcpy(&w, buf + i + 8 * l, 8);
                lane[l] = (lane[l] ^ w) * kPrime;
            }
        carried = have - whole;
        std::memmove(buf, buf + whole, carried);
    }
    hash = fnv1a64(buf, carried, total);
    for (uint64_t l : lane)
        hash = fnv1a64(&l, sizeof l, hash);
    return true;
}

} // namespace

const char* to_string(VerdictResult r) {
    switch (r) {
    case VerdictResult::Unchecked: return "unchecked";
    case VerdictResult::Passed: return "passed";
    case VerdictResult::Crashed: return "crashed";
    case VerdictResult::TimedOut: return "timed_out";
    }
    return "unchecked";
}

std::string Fingerprint::key() const {
    // The path goes last and whole: it may hold any byte but NUL.
    return std::string("plexus ") + PLEXUS_VERSION + " abi " +
           std::to_string(PLX_ABI_VERSION_MAJOR) + "." + std::to_string(PLX_ABI_VERSION_MINOR) +
           " size " + std::to_string(size) + " mtime_ns " + std::to_string(mtime_ns) + " content " +
           hex16(content) + " options " + hex16(options) + " path " + realpath;
}

std::optional<Fingerprint> fingerprint(const std::string& path, const std::string& options_json,
                                       std::string& error) {
    char resolved[PATH_MAX];
    if (::realpath(path.c_str(), resolved) == nullptr) {
        error = std::string("cannot resolve the path: ") + std::strerror(errno);
        return std::nullopt;
    }
    int fd = ::open(resolved, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        error = std::string("cannot open it: ") + std::strerror(errno);
        return std::nullopt;
    }
    Fingerprint fp;
    fp.realpath = resolved;
    struct stat st{};
    bool ok = ::fstat(fd, &st) == 0 && hash_file(fd, fp.content);
    if (!ok) error = std::string("cannot read it: ") + std::strerror(errno);
    ::close(fd);
    if (!ok) return std::nullopt;
    fp.size = static_cast<uint64_t>(st.st_size);
    fp.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
    fp.options = fnv1a64(options_json.data(), options_json.size());
    return fp;
}

std::string format_verdict(const Fingerprint& fp, const Verdict& v) {
    nlohmann::json doc = {
        {"format", kFormat},
        {"key", fp.key()},
        {"path", fp.realpath},
        {"result", to_string(v.result)},
        {"signal", v.signal},
        {"exit_status", v.exit_status},
        {"stage", v.stage},
        {"name", v.name},
        {"message", v.message},
        {"outcome", v.outcome},
        {"child_message", v.child_message},
        {"output", v.output},
        {"ms", v.ms},
    };
    // Plugin output may hold bytes that are not UTF-8: replace them rather than fail.
    return doc.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::optional<Verdict> parse_verdict(std::string_view text, const std::string& key) {
    nlohmann::json doc = nlohmann::json::parse(text, nullptr, false);
    if (!doc.is_object()) return std::nullopt;
    auto str = [&](const char* k) -> const std::string* {
        auto it = doc.find(k);
        return it != doc.end() && it->is_string() ? it->get_ptr<const std::string*>() : nullptr;
    };
    auto integer = [&](const char* k) -> std::optional<int> {
        auto it = doc.find(k);
        if (it == doc.end() || !it->is_number_integer()) return std::nullopt;
        long long x = it->get<long long>();
        if (x < INT_MIN || x > INT_MAX ||
            (it->is_number_unsigned() && it->get<unsigned long long>() > INT_MAX))
            return std::nullopt;
        return static_cast<int>(x);
    };
    const std::string* format = str("format");
    const std::string* stored_key = str("key");
    const std::string* result = str("result");
    if (format == nullptr || *format != kFormat || stored_key == nullptr || *stored_key != key ||
        result == nullptr)
        return std::nullopt;
    Verdict v;
    if (*result == "passed")
        v.result = VerdictResult::Passed;
    else if (*result == "crashed")
        v.result = VerdictResult::Crashed;
    else if (*result == "timed_out")
        v.result = VerdictResult::TimedOut;
    else
        return std::nullopt;
    auto signal = integer("signal"), exit_status = integer("exit_status");
    auto ms = doc.find("ms");
    const std::string *stage = str("stage"), *name = str("name"), *message = str("message"),
                      *outcome = str("outcome"), *child_message = str("child_message"),
                      *output = str("output");
    if (!signal || !exit_status || ms == doc.end() || !ms->is_number() || !stage || !name ||
        !message || !outcome || !child_message || !output)
        return std::nullopt;
    v.signal = *signal;
    v.exit_status = *exit_status;
    v.ms = ms->get<double>();
    v.stage = *stage;
    v.name = *name;
    v.message = *message;
    v.outcome = *outcome;
    v.child_message = *child_message;
    v.output = *output;
    v.from_cache = true;
    return v;
}

std::string verdict_path(std::string_view text) {
    nlohmann::json doc = nlohmann::json::parse(text, nullptr, false);
    if (!doc.is_object()) return {};
    auto it = doc.find("path");
    return it != doc.end() && it->is_string() ? it->get<std::string>() : std::string();
}

} // namespace plexus::detail
