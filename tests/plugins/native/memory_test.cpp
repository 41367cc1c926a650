// Native plugin buffers: write / read / copy / fill on random data against a host reference,
// every byte checked; bounds and argument errors; allocation failure.
#include "plugin_fixture.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <vector>

using native_test::contains;
using native_test::Plugin;

namespace {

std::vector<unsigned char> random_bytes(std::mt19937_64& rng, size_t n) {
    std::vector<unsigned char> v(n);
    for (auto& b : v)
        b = static_cast<unsigned char>(rng());
    return v;
}

// Reads the whole buffer back and compares every byte with the reference.
void check_equal(Plugin& p, plx_queue q, plx_buffer b, const std::vector<unsigned char>& ref) {
    std::vector<unsigned char> out(ref.size(), 0);
    REQUIRE(p.desc.buffer_read(q, b, 0, out.data(), out.size()) == PLX_OK);
    for (size_t i = 0; i < ref.size(); ++i) {
        if (out[i] != ref[i]) {
            FAIL("byte " << i << " is " << int(out[i]) << ", expected " << int(ref[i]));
        }
    }
    // Direct: the host address shows the same bytes.
    const auto* host = static_cast<const unsigned char*>(p.desc.buffer_host_ptr(b));
    REQUIRE(host != nullptr);
    CHECK(std::memcmp(host, ref.data(), ref.size()) == 0);
}

} // namespace

TEST_SUITE("native") {

    TEST_CASE("write, read, copy and fill match a host reference byte for byte") {
        Plugin p;
        REQUIRE_MESSAGE(p.status == PLX_OK, p.error);
        plx_queue q = p.queue();
        std::mt19937_64 rng(0x9e3779b97f4a7c15ull);
        for (size_t size :
             {size_t{1}, size_t{63}, size_t{64}, size_t{1000}, size_t{65537}, size_t{3} << 20}) {
            CAPTURE(size);
            plx_buffer a = nullptr, b = nullptr;
            REQUIRE(p.desc.buffer_alloc(p.device(), size, &a) == PLX_OK);
            REQUIRE(p.desc.buffer_alloc(p.device(), size, &b) == PLX_OK);
            CHECK(reinterpret_cast<uintptr_t>(p.desc.buffer_host_ptr(a)) % 64 == 0);
            CHECK(reinterpret_cast<uintptr_t>(p.desc.buffer_host_ptr(b)) % 64 == 0);

            std::vector<unsigned char> ra = random_bytes(rng, size), rb = random_bytes(rng, size);
            REQUIRE(p.desc.buffer_write(q, a, 0, ra.data(), size) == PLX_OK);
            REQUIRE(p.desc.buffer_write(q, b, 0, rb.data(), size) == PLX_OK);
            check_equal(p, q, a, ra);
            check_equal(p, q, b, rb);

            for (int round = 0; round < 20; ++round) {
                CAPTURE(round);
                const size_t off = rng() % size;
                const size_t len = rng() % (size - off + 1);
                switch (round % 5) {
                case 0: { // partial write
                    const auto data = random_bytes(rng, len);
                    REQUIRE(p.desc.buffer_write(q, a, off, data.data(), len) == PLX_OK);
                    std::copy(data.begin(), data.end(), ra.begin() + off);
                    break;
                }
                case 1: { // partial read
                    std::vector<unsigned char> out(len + 1, 0xEE);
                    REQUIRE(p.desc.buffer_read(q, a, off, out.data(), len) == PLX_OK);
                    for (size_t i = 0; i < len; ++i)
                        REQUIRE(out[i] == ra[off + i]);
                    CHECK(out[len] == 0xEE); // nothing written past `bytes`
                    break;
                }
                case 2: { // copy a -> b at another offset
                    const size_t dst_off = rng() % (size - len + 1);
                    REQUIRE(p.desc.buffer_copy(q, b, dst_off, a, off, len) == PLX_OK);
                    std::copy(ra.begin() + off, ra.begin() + off + len, rb.begin() + dst_off);
                    break;
                }
                case 3: { // copy within one buffer; the ranges may overlap
                    const size_t dst_off = rng() % (size - len + 1);
                    REQUIRE(p.desc.buffer_copy(q, a, dst_off, a, off, len) == PLX_OK);
                    std::memmove(ra.data() + dst_off, ra.data() + off, len);
                    break;
                }
                case 4: { // fill with a 1, 2, 4 or 8 byte pattern
                    const size_t pattern_bytes = size_t{1} << (rng() % 4);
                    const size_t n = len / pattern_bytes * pattern_bytes;
                    const uint64_t pattern = rng();
                    REQUIRE(p.desc.buffer_fill(q, b, off, &pattern, pattern_bytes, n) == PLX_OK);
                    const auto* pb = reinterpret_cast<const unsigned char*>(&pattern);
                    for (size_t i = 0; i < n; ++i)
                        rb[off + i] = pb[i % pattern_bytes];
                    break;
                }
                }
                check_equal(p, q, a, ra);
                check_equal(p, q, b, rb);
            }
            CHECK(p.desc.queue_sync(q) == PLX_OK);
            p.desc.buffer_free(a);
            p.desc.buffer_free(b);
        }
        p.desc.queue_destroy(q);
    }

    TEST_CASE("ranges beyond the buffer and bad arguments are refused with a message") {
        Plugin p;
        REQUIRE(p.status == PLX_OK);
        plx_queue q = p.queue();
        plx_buffer b = nullptr, c = nullptr;
        REQUIRE(p.desc.buffer_alloc(p.device(), 100, &b) == PLX_OK);
        REQUIRE(p.desc.buffer_alloc(p.device(), 50, &c) == PLX_OK);
        std::vector<unsigned char> data(200, 7);
        const uint32_t pattern = 0x01020304;

        struct Case {
            const char* what;
            plx_status status;
        };
        const Case cases[] = {
            {"write past the end", p.desc.buffer_write(q, b, 90, data.data(), 11)},
            {"write offset past the end", p.desc.buffer_write(q, b, 101, data.data(), 0)},
            {"write with an offset that wraps",
             p.desc.buffer_write(q, b, SIZE_MAX, data.data(), 2)},
            {"read past the end", p.desc.buffer_read(q, b, 0, data.data(), 101)},
            {"read with a huge size", p.desc.buffer_read(q, b, 1, data.data(), SIZE_MAX)},
            {"copy source past the end", p.desc.buffer_copy(q, b, 0, c, 10, 41)},
            {"copy destination past the end", p.desc.buffer_copy(q, c, 10, b, 0, 41)},
            {"fill past the end", p.desc.buffer_fill(q, b, 96, &pattern, 4, 8)},
        };
        for (const Case& k : cases) {
            CAPTURE(k.what);
            CHECK(k.status == PLX_ERROR_INVALID_ARGUMENT);
        }
        CHECK(p.desc.buffer_read(q, b, 60, data.data(), 50) == PLX_ERROR_INVALID_ARGUMENT);
        CHECK(contains(p.last_error(), "buffer_read"));
        CHECK(contains(p.last_error(), "beyond the buffer's 100 bytes"));

        CHECK(p.desc.buffer_fill(q, b, 0, &pattern, 3, 9) == PLX_ERROR_INVALID_ARGUMENT);
        CHECK(contains(p.last_error(), "pattern_bytes"));
        CHECK(p.desc.buffer_fill(q, b, 0, &pattern, 4, 10) == PLX_ERROR_INVALID_ARGUMENT);
        CHECK(contains(p.last_error(), "multiple"));
        CHECK(p.desc.buffer_fill(q, b, 0, nullptr, 4, 8) == PLX_ERROR_INVALID_ARGUMENT);
        CHECK(p.desc.buffer_write(q, b, 0, nullptr, 8) == PLX_ERROR_INVALID_ARGUMENT);
        CHECK(p.desc.buffer_read(nullptr, b, 0, data.data(), 8) == PLX_ERROR_INVALID_ARGUMENT);
        CHECK(contains(p.last_error(), "queue"));
        CHECK(p.desc.buffer_read(q, nullptr, 0, data.data(), 8) == PLX_ERROR_INVALID_ARGUMENT);
        CHECK(contains(p.last_error(), "buffer"));
        CHECK(p.desc.buffer_host_ptr(nullptr) == nullptr);
        plx_buffer z = nullptr;
        CHECK(p.desc.buffer_alloc(p.device(), 0, &z) == PLX_ERROR_INVALID_ARGUMENT);
        CHECK(contains(p.last_error(), "bytes is 0"));
        CHECK(p.desc.buffer_alloc(nullptr, 8, &z) == PLX_ERROR_INVALID_ARGUMENT);

        // Exactly up to the end is fine, and the refused calls changed nothing.
        std::vector<unsigned char> full(100, 0);
        for (size_t i = 0; i < full.size(); ++i)
            full[i] = static_cast<unsigned char>(i * 13);
        REQUIRE(p.desc.buffer_write(q, b, 0, full.data(), 100) == PLX_OK);
        CHECK(p.desc.buffer_write(q, b, 95, data.data(), 10) == PLX_ERROR_INVALID_ARGUMENT);
        check_equal(p, q, b, full);

        p.desc.buffer_free(b);
        p.desc.buffer_free(c);
        p.desc.buffer_free(nullptr); // a no-op
        p.desc.queue_destroy(q);
        p.desc.queue_destroy(nullptr);
    }

    TEST_CASE("a huge allocation fails with OUT_OF_MEMORY and the plugin keeps working") {
        Plugin p;
        REQUIRE(p.status == PLX_OK);
        plx_buffer huge = nullptr;
        CHECK(p.desc.buffer_alloc(p.device(), size_t{1} << 62, &huge) == PLX_ERROR_OUT_OF_MEMORY);
        CHECK(huge == nullptr);
        CHECK_MESSAGE(contains(p.last_error(), std::to_string(size_t{1} << 62)), p.last_error());
        // One byte over the device's limit is refused before any allocation is tried.
        const uint64_t limit = p.info().max_alloc_bytes;
        CHECK(p.desc.buffer_alloc(p.device(), limit + 1, &huge) == PLX_ERROR_OUT_OF_MEMORY);
        CHECK(contains(p.last_error(), "max_alloc_bytes"));

        plx_queue q = p.queue();
        plx_buffer small = nullptr;
        REQUIRE(p.desc.buffer_alloc(p.device(), 4096, &small) == PLX_OK);
        std::mt19937_64 rng(42);
        const auto ref = random_bytes(rng, 4096);
        REQUIRE(p.desc.buffer_write(q, small, 0, ref.data(), ref.size()) == PLX_OK);
        check_equal(p, q, small, ref);
        p.desc.buffer_free(small);
        p.desc.queue_destroy(q);
    }

} // TEST_SUITE
