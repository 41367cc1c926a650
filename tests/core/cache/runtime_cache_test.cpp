// The runtime's use of the disk cache, on the OpenCL backend (PoCL here): a second Runtime
// loads the module from the cache instead of generating it, a corrupt entry is rebuilt, and a
// second process loads the program binary the first one stored, compiling nothing.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include "cache/disk_cache.hpp"
#include "kernels.hpp"
#include "plexus/codegen.hpp"
#include "plexus/plexus.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

namespace px = plexus;
namespace fs = std::filesystem;

namespace {

px::Config config(const std::string& cache_dir) {
    px::Config c;
    c.plugin_dirs = {PLEXUS_TEST_OPENCL_PLUGIN_DIR, PLEXUS_TEST_NATIVE_PLUGIN_DIR};
    c.use_env_plugin_path = false;
    c.use_install_dir = false;
    c.fallback = false;
    c.cache_dir = cache_dir;
    return c;
}

// Runs vector_add on `backend` and returns c; every element must be a[i] op b[i].
std::vector<float> run(px::Runtime& rt, const std::vector<float>& a, const std::vector<float>& b,
                       const std::string& backend = "opencl") {
    px::Buffer<float> ba(rt, a), bb(rt, b), bc(rt, a.size());
    rt.launch(px::Target{backend, 0}, px::samples::vector_add(), px::Grid(a.size()), ba, bb, bc,
              int(a.size()));
    return bc.to_vector();
}

bool has(const std::string& backend) {
    px::Runtime rt(config(""));
    for (auto* be : rt.backends())
        if (be->name() == backend && !be->devices().empty()) return true;
    return false;
}

size_t count_mismatches(const std::vector<float>& c, const std::vector<float>& a,
                        const std::vector<float>& b, float sign) {
    size_t bad = 0;
    for (size_t i = 0; i < c.size(); ++i)
        bad += c[i] != a[i] + sign * b[i]; // exact: one rounding
    return bad;
}

} // namespace

TEST_CASE("a second runtime takes the module from the disk cache; a corrupt entry is rebuilt") {
    fs::path dir = fs::temp_directory_path() / ("plexus-cache-test-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    std::vector<float> a(1000), b(1000);
    std::mt19937 g(3);
    std::uniform_real_distribution<float> d(-1, 1);
    for (size_t i = 0; i < a.size(); ++i)
        a[i] = d(g), b[i] = d(g);

    px::detail::CacheKey key;
    {
        px::Runtime rt(config(dir.string()));
        const px::Backend* ocl = nullptr;
        for (auto* be : rt.backends())
            if (be->name() == "opencl" && !be->devices().empty()) ocl = be;
        if (!ocl) {
            MESSAGE("SKIP: no OpenCL device, the runtime cache test needs one");
            return;
        }
        CHECK(count_mismatches(run(rt, a, b), a, b, 1.0f) == 0);
        key = {px::samples::vector_add().ir().hash(),
               px::to_string(PLX_LANG_OPENCL_C),
               "opencl",
               ocl->version(),
               ocl->devices()[0].name,
               ocl->devices()[0].arch,
               px::detail::core_build_id()};
    }
    REQUIRE(fs::exists(dir / key.file_name()));

    // Replace the entry with a valid one whose kernel subtracts: a runtime that uses the cache
    // computes a - b, which it could never get by generating the code itself.
    px::detail::DiskCache cache(dir.string());
    std::string source = px::codegen::make_opencl_codegen()->generate(
        px::samples::vector_add().ir(), {"opencl", {}, ""});
    size_t replaced = 0;
    for (auto at = source.find("] + "); at != std::string::npos;
         at = source.find("] + ", at + 4), ++replaced)
        source.replace(at, 4, "] - ");
    REQUIRE(replaced > 0);
    std::vector<unsigned char> entry(1, static_cast<unsigned char>(PLX_LANG_OPENCL_C));
    entry.insert(entry.end(), source.begin(), source.end());
    cache.store(key, entry.data(), entry.size());
    {
        px::Runtime rt(config(dir.string()));
        CHECK(count_mismatches(run(rt, a, b), a, b, -1.0f) == 0);
    }

    // Corrupt the entry: the next runtime detects it, generates the kernel again and rewrites it.
    {
        std::fstream f(dir / key.file_name(), std::ios::in | std::ios::out | std::ios::binary);
        f.seekp(-3, std::ios::end);
        f.put('#');
    }
    {
        px::Runtime rt(config(dir.string()));
        CHECK(count_mismatches(run(rt, a, b), a, b, 1.0f) == 0);
    }
    // The rewritten entry is the program's binary (the plugin hands it back), and it computes a +
    // b.
    auto rebuilt = cache.load(key);
    REQUIRE(rebuilt.has_value());
    CHECK((*rebuilt)[0] == PLX_LANG_OPENCL_BINARY);
    {
        px::Runtime rt(config(dir.string()));
        CHECK(count_mismatches(run(rt, a, b), a, b, 1.0f) == 0);
        REQUIRE(rt.compile_reports().size() == 1);
        CHECK(rt.compile_reports()[0].from_disk_cache);
        CHECK(rt.compile_reports()[0].language == "opencl_binary");
    }
    fs::remove_all(dir);
}

namespace {
std::string self_path;

// In a child process: one Runtime, vector_add once on `backend`, then "<language> <from disk
// cache> <wrong elements>" on stdout.
int child(const std::string& backend, const std::string& dir) {
    px::Runtime rt(config(dir));
    std::vector<float> a(500, 1.5f), b(500, 2.25f);
    size_t bad = count_mismatches(run(rt, a, b, backend), a, b, 1.0f);
    auto reports = rt.compile_reports();
    if (reports.size() != 1) return 3;
    std::printf("%s %d %zu\n", reports[0].language.c_str(), int(reports[0].from_disk_cache), bad);
    return 0;
}

// Runs this test program as a child and returns what it printed.
std::string run_child(const std::string& backend, const std::string& dir) {
    int out[2];
    REQUIRE(pipe(out) == 0);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, out[1], 1);
    posix_spawn_file_actions_addclose(&actions, out[0]);
    std::vector<std::string> args = {self_path, "--child", backend, dir};
    std::vector<char*> argv;
    for (auto& s : args)
        argv.push_back(s.data());
    argv.push_back(nullptr);
    pid_t pid = 0;
    REQUIRE(posix_spawn(&pid, self_path.c_str(), &actions, nullptr, argv.data(), environ) == 0);
    posix_spawn_file_actions_destroy(&actions);
    close(out[1]);
    std::string text;
    char buf[256];
    for (ssize_t n; (n = read(out[0], buf, sizeof buf)) > 0;)
        text.append(buf, size_t(n));
    close(out[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    return text;
}
} // namespace

TEST_CASE("a second process loads the program binary the first stored: no OpenCL C is compiled") {
    if (!has("opencl")) {
        MESSAGE("SKIP: no OpenCL device, the runtime cache test needs one");
        return;
    }
    fs::path dir =
        fs::temp_directory_path() / ("plexus-cache-process-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    CHECK(run_child("opencl", dir.string()) == "opencl_c 0 0\n"); // compiled the generated source
    CHECK(run_child("opencl", dir.string()) == "opencl_binary 1 0\n"); // loaded the stored binary
    fs::remove_all(dir);
}

TEST_CASE("a second process links the native object code the first stored: nothing is compiled") {
    if (!has("native")) {
        MESSAGE("SKIP: no native backend (built without LLVM)");
        return;
    }
    fs::path dir =
        fs::temp_directory_path() / ("plexus-cache-native-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    CHECK(run_child("native", dir.string()) == "host code 0 0\n");   // lowered, optimized, emitted
    CHECK(run_child("native", dir.string()) == "host object 1 0\n"); // linked the stored object
    fs::remove_all(dir);
}

int main(int argc, char** argv) {
    self_path = fs::canonical("/proc/self/exe").string();
    if (argc == 4 && std::string(argv[1]) == "--child") return child(argv[2], argv[3]);
    doctest::Context context(argc, argv);
    return context.run();
}
