// The runtime's use of the disk cache, on the OpenCL backend (PoCL here): a second Runtime
// loads the module from the cache instead of generating it, and a corrupt entry is rebuilt.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include "cache/disk_cache.hpp"
#include "kernels.hpp"
#include "plexus/codegen.hpp"
#include "plexus/plexus.hpp"

#include <filesystem>
#include <unistd.h>
#include <fstream>
#include <random>

namespace px = plexus;
namespace fs = std::filesystem;

namespace {

px::Config config(const std::string& cache_dir) {
    px::Config c;
    c.plugin_dirs = {PLEXUS_TEST_OPENCL_PLUGIN_DIR};
    c.use_env_plugin_path = false;
    c.use_install_dir = false;
    c.fallback = false;
    c.cache_dir = cache_dir;
    return c;
}

// Runs vector_add on opencl and returns c; every element must be a[i] op b[i].
std::vector<float> run(px::Runtime& rt, const std::vector<float>& a, const std::vector<float>& b) {
    px::Buffer<float> ba(rt, a), bb(rt, b), bc(rt, a.size());
    rt.launch(px::Target{"opencl", 0}, px::samples::vector_add(), px::Grid(a.size()), ba, bb, bc, int(a.size()));
    return bc.to_vector();
}

size_t count_mismatches(const std::vector<float>& c, const std::vector<float>& a, const std::vector<float>& b,
                        float sign) {
    size_t bad = 0;
    for (size_t i = 0; i < c.size(); ++i) bad += c[i] != a[i] + sign * b[i]; // exact: one rounding
    return bad;
}

} // namespace

TEST_CASE("a second runtime takes the module from the disk cache; a corrupt entry is rebuilt") {
    fs::path dir = fs::temp_directory_path() / ("plexus-cache-test-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    std::vector<float> a(1000), b(1000);
    std::mt19937 g(3);
    std::uniform_real_distribution<float> d(-1, 1);
    for (size_t i = 0; i < a.size(); ++i) a[i] = d(g), b[i] = d(g);

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
        key = {px::samples::vector_add().ir().hash(), px::to_string(PLX_LANG_OPENCL_C), "opencl", ocl->version(),
               ocl->devices()[0].name, ocl->devices()[0].arch, ""};
    }
    REQUIRE(fs::exists(dir / key.file_name()));

    // Replace the entry with a valid one whose kernel subtracts: a runtime that uses the cache
    // computes a - b, which it could never get by generating the code itself.
    px::detail::DiskCache cache(dir.string());
    std::string source = px::codegen::make_opencl_codegen()->generate(px::samples::vector_add().ir(), {"opencl", {}, ""});
    size_t replaced = 0;
    for (auto at = source.find("] + "); at != std::string::npos; at = source.find("] + ", at + 4), ++replaced)
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
    auto rebuilt = cache.load(key);
    REQUIRE(rebuilt.has_value());
    std::string text(rebuilt->begin() + 1, rebuilt->end());
    CHECK(text.find("] + ") != std::string::npos);
    fs::remove_all(dir);
}
