// Asynchronous copies (px::copy_async, commit, wait) on every device of this build tree: tiles
// streamed through double-buffered shared memory for each copy size of f16, f32 and i64, into
// 1-D and padded 2-D shared arrays, with a tail where valid < N and tiles past the end where
// valid is 0. Every output element is compared bit for bit with the host's copy (tolerance:
// none, a copy is exact).
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include "async_copy_kernel.hpp"
#include "every_device.hpp"

#include <cstring>
#include <random>

namespace px = plexus;
using namespace async_copy_test;

namespace {

constexpr int kGroups = 3;

template <class T> std::vector<T> random_values(size_t n, std::mt19937& g) {
    std::uniform_int_distribution<int> dist(-30000, 30000);
    std::vector<T> v(n);
    for (auto& x : v)
        x = T(float(dist(g)) / 64.0f);
    return v;
}

template <class T, uint32_t N, bool TwoD = false> void check_tiles() {
    const auto& kernel = tiles_kernel<T, N, TwoD>();
    const size_t tile = size_t(kGroup) * N, total = kGroups * kTilesPerGroup * tile;
    // The last tile lies wholly past n, and the one before it ends 3 elements short.
    const int n = int(total - tile - 3);
    std::mt19937 g(N * 131 + sizeof(T) + TwoD);
    const std::vector<T> src = random_values<T>(size_t(n), g);
    for (const px::test::TestDevice& dev : px::test::every_device()) {
        auto& rt = px::test::hermetic_runtime();
        px::Buffer<T> bs(rt, src), bd(rt, std::vector<T>(total, T(1.0f)));
        rt.launch(dev.target, kernel, px::Grid(kGroups * kGroup).local_size(kGroup), bs, bd, n)
            .wait();
        auto out = bd.host();
        size_t bad = 0;
        std::string first;
        for (size_t i = 0; i < total; ++i) {
            const T want = i < size_t(n) ? src[i] : T(0.0f);
            if (std::memcmp(&out[i], &want, sizeof(T)) != 0 && bad++ == 0)
                first = "element " + std::to_string(i) + ": got " +
                        std::to_string(double(float(out[i]))) + ", want " +
                        std::to_string(double(float(want)));
        }
        INFO(kernel.ir().name << " on " << dev.label << ": " << bad << " of " << total << " bad; "
                              << first);
        CHECK(bad == 0);
    }
}

} // namespace

TEST_CASE("f16: 4, 8 and 16 bytes per copy on every device") {
    check_tiles<px::half, 2>();
    check_tiles<px::half, 4>();
    check_tiles<px::half, 8>();
}
TEST_CASE("f32: 4, 8 and 16 bytes per copy on every device") {
    check_tiles<float, 1>();
    check_tiles<float, 2>();
    check_tiles<float, 4>();
}
TEST_CASE("i64: 8 and 16 bytes per copy on every device") {
    check_tiles<int64_t, 1>();
    check_tiles<int64_t, 2>();
}
TEST_CASE("into rows of a padded 2-D shared array (bf16 and f32, 16 bytes) on every device") {
    check_tiles<px::bf16, 8, true>();
    check_tiles<float, 4, true>();
}
