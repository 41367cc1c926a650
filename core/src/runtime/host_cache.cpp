#include "runtime/host_cache.hpp"

#include <charconv>
#include <fstream>
#include <string>

namespace plexus::detail {
namespace {

// A decimal number at the start of `text`, advancing it; false if there is none.
bool number(std::string_view& text, uint64_t& out) {
    auto [end, err] = std::from_chars(text.data(), text.data() + text.size(), out);
    if (err != std::errc() || end == text.data()) return false;
    text.remove_prefix(size_t(end - text.data()));
    return true;
}

std::string first_line(const std::filesystem::path& file) {
    std::ifstream f(file);
    std::string line;
    std::getline(f, line);
    return line;
}

} // namespace

uint64_t parse_cache_size(std::string_view text) {
    uint64_t n = 0;
    if (!number(text, n)) return 0;
    const unsigned shift = text == ""    ? 0
                           : text == "K" ? 10
                           : text == "M" ? 20
                           : text == "G" ? 30
                                         : 64;
    if (shift == 64 || n > (UINT64_MAX >> shift)) return 0;
    return n << shift;
}

unsigned count_cpu_list(std::string_view text) {
    uint64_t cpus = 0;
    while (!text.empty()) {
        uint64_t lo = 0, hi = 0;
        if (!number(text, lo)) return 0;
        hi = lo;
        if (!text.empty() && text.front() == '-') {
            text.remove_prefix(1);
            if (!number(text, hi) || hi < lo) return 0;
        }
        cpus += hi - lo + 1;
        if (cpus > 1u << 20) return 0;
        if (text.empty()) break;
        if (text.front() != ',') return 0;
        text.remove_prefix(1);
        if (text.empty()) return 0;
    }
    return unsigned(cpus);
}

CacheShare last_level_cache(const std::filesystem::path& dir) {
    namespace fs = std::filesystem;
    CacheShare best;
    uint64_t best_level = 0;
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        const fs::path& index = it->path();
        if (!index.filename().string().starts_with("index")) continue;
        std::string level_text = first_line(index / "level");
        std::string_view level_view = level_text;
        uint64_t level = 0;
        if (!number(level_view, level) || level <= best_level ||
            first_line(index / "type") == "Instruction")
            continue;
        const uint64_t bytes = parse_cache_size(first_line(index / "size"));
        const unsigned cpus = count_cpu_list(first_line(index / "shared_cpu_list"));
        if (bytes == 0 || cpus == 0) continue;
        best = {bytes, cpus};
        best_level = level;
    }
    return best;
}

} // namespace plexus::detail
