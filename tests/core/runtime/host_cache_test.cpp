// The sysfs reader behind the default threshold of streaming stores (core/src/runtime/
// host_cache.cpp): sizes, CPU lists, and the highest data cache of a fake sysfs folder.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include "runtime/host_cache.hpp"

#include <filesystem>
#include <fstream>
#include <random>
#include <string>

using namespace plexus::detail;
namespace fs = std::filesystem;

TEST_CASE("parse_cache_size: K, M, G and plain bytes; anything else is 0") {
    CHECK(parse_cache_size("32768K") == 32768ull << 10);
    CHECK(parse_cache_size("307200K") == 307200ull << 10);
    CHECK(parse_cache_size("2M") == 2ull << 20);
    CHECK(parse_cache_size("1G") == 1ull << 30);
    CHECK(parse_cache_size("512") == 512);
    for (const char* bad :
         {"", "K", "32768KB", "32768 K", "-1K", "x", "99999999999999999999K", "17179869184G"})
        CHECK_MESSAGE(parse_cache_size(bad) == 0, bad);
}

TEST_CASE("count_cpu_list: ranges and single CPUs; malformed lists are 0") {
    CHECK(count_cpu_list("0") == 1);
    CHECK(count_cpu_list("0-15") == 16);
    CHECK(count_cpu_list("0,64") == 2);
    CHECK(count_cpu_list("0-3,8-11") == 8);
    CHECK(count_cpu_list("0-1,4,6-7") == 5);
    for (const char* bad : {"", "a", "3-1", "0-", "0,", ",0", "0-3;8", "0 - 3"})
        CHECK_MESSAGE(count_cpu_list(bad) == 0, bad);
}

namespace {
void write(const fs::path& file, const std::string& text) {
    fs::create_directories(file.parent_path());
    std::ofstream(file) << text << "\n";
}
void cache(const fs::path& dir, int index, const std::string& level, const std::string& type,
           const std::string& size, const std::string& cpus) {
    const fs::path d = dir / ("index" + std::to_string(index));
    write(d / "level", level);
    write(d / "type", type);
    write(d / "size", size);
    write(d / "shared_cpu_list", cpus);
}
} // namespace

TEST_CASE("last_level_cache: the highest data or unified level, skipping unreadable entries") {
    const fs::path dir =
        fs::temp_directory_path() / ("plexus-cache-" + std::to_string(std::random_device{}()));
    CHECK(last_level_cache(dir).cpus == 0); // no folder
    cache(dir, 0, "1", "Data", "48K", "0");
    cache(dir, 1, "1", "Instruction", "32K", "0");
    cache(dir, 2, "2", "Unified", "2048K", "0");
    CacheShare c = last_level_cache(dir);
    CHECK(c.bytes == 2048ull << 10);
    CHECK(c.cpus == 1);
    cache(dir, 3, "3", "Unified", "307200K", "0-15");
    cache(dir, 4, "4", "Instruction", "64M", "0-63"); // not a data cache
    cache(dir, 5, "5", "Unified", "garbage", "0-63"); // unreadable: skipped
    write(dir / "uevent", "");                        // not an index folder
    c = last_level_cache(dir);
    CHECK(c.bytes == 307200ull << 10);
    CHECK(c.cpus == 16);
    fs::remove_all(dir);
}
