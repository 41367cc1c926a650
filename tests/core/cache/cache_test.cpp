// DiskCache on a fresh temporary directory: round trips, misses, corrupt and colliding entries,
// disabled and unwritable caches, and 8 processes storing and loading one key at once.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "cache/disk_cache.hpp"
#include "plexus/cache.hpp"

namespace fs = std::filesystem;
using plexus::detail::CacheKey;
using plexus::detail::DiskCache;
using Bytes = std::vector<unsigned char>;

namespace {

struct TempDir {
    fs::path path;
    TempDir() {
        std::string tmpl = (fs::temp_directory_path() / "plexus-cache-test-XXXXXX").string();
        REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
        path = tmpl;
    }
    ~TempDir() {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
};

Bytes random_bytes(size_t n, uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> byte(0, 255);
    Bytes b(n);
    for (auto& x : b)
        x = static_cast<unsigned char>(byte(rng));
    return b;
}

CacheKey sample_key() {
    CacheKey k;
    k.ir_hash = 0x0123456789abcdefull;
    k.language = "opencl-c";
    k.plugin = "opencl";
    k.plugin_version = "0.1.0";
    k.device = "pthread-cpu";
    k.arch = "x86_64";
    k.options = "-cl-std=CL3.0\n-O2";
    return k;
}

void store(const DiskCache& c, const CacheKey& k, const Bytes& b) {
    c.store(k, b.data(), b.size());
}

Bytes read_file(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return Bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void write_file(const fs::path& p, const Bytes& b) {
    std::ofstream out(p, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

size_t count_files(const fs::path& dir) {
    size_t n = 0;
    for (const auto& e : fs::directory_iterator(dir))
        n += e.is_regular_file() ? 1 : 0;
    return n;
}

} // namespace

TEST_CASE("key text and file name") {
    CacheKey k = sample_key();
    const std::string t = k.text();
    CHECK(t.find('\n') == std::string::npos);
    for (const char* part :
         {"0123456789abcdef", "opencl-c", "pthread-cpu", "x86_64", "0.1.0", "-cl-std=CL3.0"})
        CHECK_MESSAGE(t.find(part) != std::string::npos, "text lacks ", part, ": ", t);
    const std::string f = k.file_name();
    CHECK(f.size() == 16 + 5);
    CHECK(f.substr(16) == ".plxc");
    CHECK(f.substr(0, 16).find_first_not_of("0123456789abcdef") == std::string::npos);
    CHECK(f == sample_key().file_name());

    // Moving a character from one field to the next must change the key.
    CacheKey a = sample_key(), b = sample_key();
    a.device = "ab";
    a.arch = "c";
    b.device = "a";
    b.arch = "bc";
    CHECK(a.text() != b.text());
}

TEST_CASE("round trip of random payloads") {
    TempDir tmp;
    DiskCache cache((tmp.path / "a" / "b").string()); // created on first store
    CHECK(cache.enabled());
    uint32_t seed = 1;
    for (size_t n : {size_t{0}, size_t{1}, size_t{1} << 20}) {
        CAPTURE(n);
        CacheKey k = sample_key();
        k.ir_hash = n;
        const Bytes payload = random_bytes(n, seed++);
        store(cache, k, payload);
        auto got = cache.load(k);
        REQUIRE(got.has_value());
        REQUIRE(got->size() == payload.size());
        const auto diff = std::mismatch(got->begin(), got->end(), payload.begin());
        CHECK_MESSAGE(diff.first == got->end(),
                      "first differing byte: ", diff.first - got->begin());
    }
    // Storing again replaces the entry.
    const Bytes second = random_bytes(777, 99);
    store(cache, sample_key(), second);
    CHECK(cache.load(sample_key()) == second);
    // Only entries remain: no temporary file left behind.
    CHECK(count_files(tmp.path / "a" / "b") == 4);
}

TEST_CASE("absent key") {
    TempDir tmp;
    DiskCache cache(tmp.path.string());
    CHECK_FALSE(cache.load(sample_key()).has_value());
    DiskCache missing_dir((tmp.path / "never-created").string());
    CHECK_FALSE(missing_dir.load(sample_key()).has_value());
}

TEST_CASE("keys differing in one field do not mix") {
    TempDir tmp;
    DiskCache cache(tmp.path.string());
    const CacheKey base = sample_key();
    std::vector<CacheKey> keys{base};
    auto vary = [&](auto change) {
        CacheKey k = base;
        change(k);
        keys.push_back(k);
    };
    vary([](CacheKey& k) { k.ir_hash ^= 1; });
    vary([](CacheKey& k) { k.language = "cuda-c"; });
    vary([](CacheKey& k) { k.plugin = "cuda"; });
    vary([](CacheKey& k) { k.plugin_version = "0.1.1"; });
    vary([](CacheKey& k) { k.device = "other"; });
    vary([](CacheKey& k) { k.arch = "sm_90"; });
    vary([](CacheKey& k) { k.options += " "; });
    for (size_t i = 0; i < keys.size(); ++i)
        for (size_t j = i + 1; j < keys.size(); ++j)
            CHECK(keys[i].file_name() != keys[j].file_name());

    std::vector<Bytes> payloads;
    for (size_t i = 0; i < keys.size(); ++i) {
        payloads.push_back(random_bytes(1000 + i, static_cast<uint32_t>(100 + i)));
        store(cache, keys[i], payloads[i]);
    }
    CHECK(count_files(tmp.path) == keys.size());
    for (size_t i = 0; i < keys.size(); ++i) {
        CAPTURE(i);
        CHECK(cache.load(keys[i]) == payloads[i]);
    }
}

TEST_CASE("corrupt entries are misses and are removed") {
    TempDir tmp;
    DiskCache cache(tmp.path.string());
    const CacheKey k = sample_key();
    const Bytes payload = random_bytes(4096, 7);
    const fs::path file = tmp.path / k.file_name();

    auto check_removed_then_restorable = [&] {
        CHECK_FALSE(cache.load(k).has_value());
        CHECK_FALSE(fs::exists(file));
        store(cache, k, payload);
        CHECK(cache.load(k) == payload);
    };

    store(cache, k, payload);
    const Bytes good = read_file(file);
    REQUIRE(good.size() > payload.size());
    const size_t payload_start = good.size() - payload.size();

    SUBCASE("one payload byte flipped") {
        Bytes bad = good;
        bad[payload_start + 1234] ^= 0x10;
        write_file(file, bad);
        check_removed_then_restorable();
    }
    SUBCASE("one key text byte flipped") {
        Bytes bad = good;
        bad[payload_start - 3] ^= 0x01;
        write_file(file, bad);
        check_removed_then_restorable();
    }
    SUBCASE("bad magic") {
        Bytes bad = good;
        bad[0] = 'X';
        write_file(file, bad);
        check_removed_then_restorable();
    }
    SUBCASE("truncated") {
        fs::resize_file(file, good.size() - 1);
        check_removed_then_restorable();
    }
    SUBCASE("truncated inside the header") {
        fs::resize_file(file, 5);
        check_removed_then_restorable();
    }
    SUBCASE("empty file") {
        fs::resize_file(file, 0);
        check_removed_then_restorable();
    }
    SUBCASE("trailing bytes") {
        Bytes bad = good;
        bad.push_back(0);
        write_file(file, bad);
        check_removed_then_restorable();
    }
    SUBCASE("garbage under the right name") {
        write_file(file, random_bytes(good.size(), 8));
        check_removed_then_restorable();
    }
}

TEST_CASE("an entry of another key under this key's file name is a miss") {
    TempDir tmp;
    DiskCache cache(tmp.path.string());
    CacheKey a = sample_key(), b = sample_key();
    b.arch = "aarch64";
    const Bytes pa = random_bytes(300, 1), pb = random_bytes(300, 2);
    store(cache, a, pa);
    store(cache, b, pb);
    fs::copy_file(tmp.path / b.file_name(), tmp.path / a.file_name(),
                  fs::copy_options::overwrite_existing);
    CHECK_FALSE(cache.load(a).has_value());
    CHECK(cache.load(b) == pb);
    store(cache, a, pa);
    CHECK(cache.load(a) == pa);
}

TEST_CASE("disabled cache stores and loads nothing") {
    TempDir tmp;
    const fs::path old_cwd = fs::current_path();
    fs::current_path(tmp.path); // a disabled cache must not fall back to the working directory
    DiskCache cache("");
    CHECK_FALSE(cache.enabled());
    const Bytes payload = random_bytes(100, 3);
    store(cache, sample_key(), payload);
    CHECK_FALSE(cache.load(sample_key()).has_value());
    CHECK(fs::is_empty(tmp.path));
    fs::current_path(old_cwd);
}

TEST_CASE("unwritable directory: store does not throw, load misses") {
    TempDir tmp;
    write_file(tmp.path / "plain-file", Bytes{1, 2, 3});
    DiskCache cache((tmp.path / "plain-file" / "cache").string());
    const Bytes payload = random_bytes(100, 4);
    CHECK_NOTHROW(store(cache, sample_key(), payload));
    CHECK_FALSE(cache.load(sample_key()).has_value());
    CHECK(read_file(tmp.path / "plain-file") == Bytes{1, 2, 3});
}

TEST_CASE("concurrent writers in 8 processes never expose a partial entry") {
    TempDir tmp;
    DiskCache cache(tmp.path.string());
    const CacheKey k = sample_key();
    const Bytes payload = random_bytes(256 * 1024, 5);

    std::vector<pid_t> children;
    for (int c = 0; c < 8; ++c) {
        pid_t pid = ::fork();
        REQUIRE(pid >= 0);
        if (pid == 0) {
            // Child: no doctest macros (they would report from the wrong process); exit status
            // says 0 = all good, 1 = a load returned wrong bytes.
            int status = 0;
            for (int i = 0; i < 50; ++i) {
                cache.store(k, payload.data(), payload.size());
                auto got = cache.load(k);
                if (got && *got != payload) status = 1;
            }
            std::_Exit(status);
        }
        children.push_back(pid);
    }

    size_t parent_loads = 0, parent_hits = 0, parent_wrong = 0;
    size_t running = children.size();
    std::vector<int> statuses;
    while (running > 0) {
        auto got = cache.load(k);
        ++parent_loads;
        if (got) {
            ++parent_hits;
            if (*got != payload) ++parent_wrong;
        }
        for (auto& pid : children) {
            if (pid <= 0) continue;
            int st = 0;
            if (::waitpid(pid, &st, WNOHANG) == pid) {
                statuses.push_back(st);
                pid = -1;
                --running;
            }
        }
    }
    MESSAGE("parent loads: ", parent_loads, ", hits: ", parent_hits);
    CHECK(parent_wrong == 0);
    REQUIRE(statuses.size() == 8);
    for (int st : statuses) {
        CHECK(WIFEXITED(st));
        CHECK(WEXITSTATUS(st) == 0);
    }
    CHECK(cache.load(k) == payload);
    // Every writer renamed or removed its temporary file.
    CHECK(count_files(tmp.path) == 1);
}

TEST_CASE("cache_entries describes each entry from its header; clear_cache removes entries only") {
    TempDir tmp;
    DiskCache cache(tmp.path.string());
    CHECK(plexus::cache_entries((tmp.path / "absent").string()).empty());

    // Three keys with random fields (escapes included) and payload sizes.
    std::mt19937 rng(11);
    std::vector<CacheKey> keys;
    std::vector<size_t> sizes;
    for (int i = 0; i < 3; ++i) {
        CacheKey k = sample_key();
        k.ir_hash = rng();
        k.plugin = "plug" + std::to_string(i);
        k.language = i == 1 ? "host_object" : "opencl_c";
        k.device = "Device \\ " + std::to_string(rng() % 1000) + "\n\x01";
        keys.push_back(k);
        sizes.push_back(1 + rng() % 5000);
        store(cache, k, random_bytes(sizes.back(), uint32_t(i)));
    }
    // Not entries: a verdict folder, a leftover temporary file, a stranger's file.
    fs::create_directories(tmp.path / "plugin-verdicts");
    write_file(tmp.path / "plugin-verdicts" / "v.json", random_bytes(10, 1));
    write_file(tmp.path / (keys[0].file_name() + ".tmp.1.2.3"), random_bytes(100, 2));
    write_file(tmp.path / "notes.txt", random_bytes(10, 3));
    // A truncated entry is listed, with its problem.
    const fs::path cut = tmp.path / "00000000000000ff.plxc";
    write_file(cut, random_bytes(20, 4));

    const auto entries = plexus::cache_entries(tmp.path.string());
    REQUIRE(entries.size() == 4);
    size_t found = 0;
    for (const auto& e : entries) {
        CAPTURE(e.file);
        CHECK(e.modified > 0);
        if (e.file == cut.string()) {
            CHECK(e.problem == "shorter than the header");
            CHECK(e.bytes == 20);
            continue;
        }
        CHECK(e.problem.empty());
        for (size_t i = 0; i < keys.size(); ++i) {
            if (e.file != (tmp.path / keys[i].file_name()).string()) continue;
            ++found;
            CHECK(e.plugin == keys[i].plugin);
            CHECK(e.language == keys[i].language);
            CHECK(e.device == keys[i].device);
            CHECK(e.plugin_version == keys[i].plugin_version);
            CHECK(e.arch == keys[i].arch);
            CHECK(e.bytes == 32 + keys[i].text().size() + sizes[i]);
        }
    }
    CHECK(found == keys.size());

    const auto cleared = plexus::clear_cache(tmp.path.string());
    CHECK(cleared.files == 5); // three entries, the truncated one, the leftover
    CHECK(cleared.problems.empty());
    CHECK(plexus::cache_entries(tmp.path.string()).empty());
    CHECK(fs::exists(tmp.path / "plugin-verdicts" / "v.json"));
    CHECK(fs::exists(tmp.path / "notes.txt"));
    CHECK_FALSE(cache.load(keys[0]).has_value());
}
