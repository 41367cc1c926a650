// ABI 1.1 checks that are the same for the two CPU plugins (native, interp), on a descriptor
// that a test has already initialized: which entries are filled, the new device fields, the
// asynchronous round trip, and the refusals whose messages differ only by the plugin's name.
// Included by tests/plugins/native and tests/plugins/interp, two separate executables.
#pragma once

#include <plexus/plugin.h>

#include <doctest/doctest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace cpu_plugin_abi11 {

inline bool contains(const std::string& haystack, const std::string& needle) {
    return haystack.find(needle) != std::string::npos;
}

inline std::vector<uint32_t> random_words(std::mt19937_64& rng, size_t n) {
    std::vector<uint32_t> v(n);
    for (auto& x : v)
        x = static_cast<uint32_t>(rng());
    return v;
}

// Fails on the first element of `got` that differs from `want`.
template <class T> void check_elements(const T* got, const std::vector<T>& want) {
    for (size_t i = 0; i < want.size(); ++i)
        if (!(got[i] == want[i]))
            FAIL("element " << i << " is " << got[i] << ", expected " << want[i]);
}

// Waits for a marker of `q` and releases it.
inline void finish(const plx_plugin& d, plx_queue q) {
    plx_event marker = nullptr;
    REQUIRE(d.queue_marker(q, &marker) == PLX_OK);
    REQUIRE(marker != nullptr);
    REQUIRE(d.event_wait(marker) == PLX_OK);
    d.event_release(marker);
}

// Every 1.1 entry but queue_native is filled; the device has no uuid or PCI id, and a 1.0
// host's shorter plx_device_info gets nothing written past its end.
inline void check_entries_and_device_fields(const plx_plugin& d, plx_device device) {
    CHECK_MESSAGE((d.queue_marker != nullptr), "queue_marker");
    CHECK_MESSAGE((d.queue_wait_event != nullptr), "queue_wait_event");
    CHECK_MESSAGE((d.buffer_write_async != nullptr), "buffer_write_async");
    CHECK_MESSAGE((d.buffer_read_async != nullptr), "buffer_read_async");
    CHECK_MESSAGE((d.buffer_copy_peer != nullptr), "buffer_copy_peer");
    CHECK_MESSAGE((d.host_alloc != nullptr), "host_alloc");
    CHECK_MESSAGE((d.host_free != nullptr), "host_free");
    CHECK_MESSAGE((d.buffer_wrap != nullptr), "buffer_wrap");
    CHECK_MESSAGE((d.buffer_native != nullptr), "buffer_native");
    CHECK_MESSAGE((d.queue_native == nullptr), "queue_native");

    plx_device_info info{};
    std::memset(&info, 0x77, sizeof info);
    info.struct_size = sizeof info;
    REQUIRE(d.device_info(device, &info) == PLX_OK);
    CHECK(info.struct_size == sizeof info);
    for (uint8_t byte : info.uuid)
        CHECK(byte == 0);
    CHECK(std::string(info.pci_bus_id).empty());

    struct {
        plx_device_info info;
        unsigned char tail[16];
    } old{};
    std::memset(&old, 0xCD, sizeof old);
    const uint32_t size = offsetof(plx_device_info, uuid);
    old.info.struct_size = size;
    REQUIRE(d.device_info(device, &old.info) == PLX_OK);
    CHECK(old.info.struct_size == size);
    CHECK(old.info.compute_capability == 0);
    const auto* bytes = reinterpret_cast<const unsigned char*>(&old);
    for (size_t i = size; i < sizeof old; ++i) {
        CAPTURE(i);
        REQUIRE(bytes[i] == 0xCD);
    }
}

// On a queue without and one with profiling: a marker on an empty queue, then per size in
// `sizes` an asynchronous write of random words, partial writes at random offsets ordered after
// it, a marker waited on and profiled, and asynchronous reads of the whole and of a tail.
inline void check_async_round_trip(const plx_plugin& d, plx_device device, std::mt19937_64& rng,
                                   const std::vector<size_t>& sizes) {
    for (uint32_t flags : {0u, uint32_t{PLX_QUEUE_PROFILING}}) {
        CAPTURE(flags);
        plx_queue q = nullptr;
        REQUIRE(d.queue_create(device, flags, &q) == PLX_OK);
        finish(d, q); // a marker on a queue with no command yet is complete at once
        for (size_t n : sizes) {
            CAPTURE(n);
            plx_buffer b = nullptr;
            REQUIRE(d.buffer_alloc(device, n * 4, &b) == PLX_OK);
            std::vector<uint32_t> ref = random_words(rng, n);
            REQUIRE(d.buffer_write_async(q, b, 0, ref.data(), n * 4) == PLX_OK);
            std::vector<std::vector<uint32_t>> parts;
            for (int k = 0; k < 4; ++k) {
                const size_t off = rng() % n, len = rng() % (n - off + 1);
                parts.push_back(random_words(rng, len));
                REQUIRE(d.buffer_write_async(q, b, off * 4, parts.back().data(), len * 4) ==
                        PLX_OK);
                std::copy(parts.back().begin(), parts.back().end(), ref.begin() + off);
            }
            plx_event written = nullptr;
            REQUIRE(d.queue_marker(q, &written) == PLX_OK);
            REQUIRE(d.event_wait(written) == PLX_OK);
            uint64_t start = 1, end = 0;
            if (flags & PLX_QUEUE_PROFILING) {
                REQUIRE(d.event_profile(written, &start, &end) == PLX_OK);
                CHECK(start <= end);
            } else {
                CHECK(d.event_profile(written, &start, &end) == PLX_ERROR_UNSUPPORTED);
            }
            d.event_release(written);

            std::vector<uint32_t> out(n + 1, 0xdeadbeef);
            REQUIRE(d.buffer_read_async(q, b, 0, out.data(), n * 4) == PLX_OK);
            const size_t off = rng() % n;
            std::vector<uint32_t> tail(n - off, 0);
            REQUIRE(d.buffer_read_async(q, b, off * 4, tail.data(), tail.size() * 4) == PLX_OK);
            finish(d, q);
            check_elements(out.data(), ref);
            CHECK(out[n] == 0xdeadbeef); // nothing read past `bytes`
            check_elements(tail.data(), std::vector<uint32_t>(ref.begin() + off, ref.end()));
            CHECK(d.queue_sync(q) == PLX_OK);
            d.buffer_free(b);
        }
        d.queue_destroy(q);
    }
}

// Bad input to buffer_wrap, queue_marker, queue_wait_event, host_alloc, host_free and
// buffer_native: refused with the right status and a message naming the function; `a_plugin`
// is the plugin's name with its article ("a native", "an interp"), as in "not a native device".
// `q` is a queue and `b` a buffer of `device`.
inline void check_refusals(const plx_plugin& d, plx_device device, plx_queue q, plx_buffer b,
                           const std::string& a_plugin) {
    auto last_error = [&] { return std::string(d.last_error()); };
    std::vector<uint32_t> host(64, 1);
    const auto host_address = reinterpret_cast<uintptr_t>(host.data());

    // buffer_wrap
    plx_buffer w = nullptr;
    CHECK(d.buffer_wrap(device, 0, 64, &w) == PLX_ERROR_INVALID_ARGUMENT);
    CHECK_MESSAGE(contains(last_error(), "buffer_wrap: native is NULL"), last_error());
    CHECK(d.buffer_wrap(device, host_address, 0, &w) == PLX_ERROR_INVALID_ARGUMENT);
    CHECK_MESSAGE(contains(last_error(), "buffer_wrap: bytes is 0"), last_error());
    CHECK(d.buffer_wrap(nullptr, host_address, 64, &w) == PLX_ERROR_INVALID_ARGUMENT);
    CHECK(contains(last_error(), "not " + a_plugin + " device"));
    CHECK(d.buffer_wrap(device, host_address, 64, nullptr) == PLX_ERROR_INVALID_ARGUMENT);
    CHECK(d.buffer_wrap(device, UINT64_MAX - 8, 64, &w) == PLX_ERROR_INVALID_ARGUMENT);
    CHECK(contains(last_error(), "wrap around"));
    CHECK(w == nullptr);

    // queue_marker, queue_wait_event
    plx_event e = nullptr;
    CHECK(d.queue_wait_event(q, nullptr) == PLX_ERROR_INVALID_ARGUMENT);
    CHECK_MESSAGE(contains(last_error(), "queue_wait_event: not " + a_plugin + " event"),
                  last_error());
    CHECK(d.queue_marker(nullptr, &e) == PLX_ERROR_INVALID_ARGUMENT);
    CHECK(contains(last_error(), "queue_marker: not " + a_plugin + " queue"));
    CHECK(d.queue_marker(q, nullptr) == PLX_ERROR_INVALID_ARGUMENT);
    CHECK(contains(last_error(), "queue_marker: event is NULL"));
    REQUIRE(d.queue_marker(q, &e) == PLX_OK);
    CHECK(d.queue_wait_event(nullptr, e) == PLX_ERROR_INVALID_ARGUMENT);
    CHECK(contains(last_error(), "queue_wait_event: not " + a_plugin + " queue"));
    // Not an event: a queue handle in its place.
    CHECK(d.queue_wait_event(q, reinterpret_cast<plx_event>(q)) == PLX_ERROR_INVALID_ARGUMENT);
    d.event_release(e);

    // host_alloc, host_free
    void* mem = nullptr;
    CHECK(d.host_alloc(device, 0, &mem) == PLX_ERROR_INVALID_ARGUMENT);
    CHECK(contains(last_error(), "host_alloc: bytes is 0"));
    CHECK(d.host_alloc(nullptr, 64, &mem) == PLX_ERROR_INVALID_ARGUMENT);
    CHECK(d.host_alloc(device, 64, nullptr) == PLX_ERROR_INVALID_ARGUMENT);
    CHECK(d.host_alloc(device, size_t{1} << 62, &mem) == PLX_ERROR_OUT_OF_MEMORY);
    CHECK_MESSAGE(contains(last_error(), "host_alloc"), last_error());
    CHECK(d.host_alloc(device, SIZE_MAX, &mem) == PLX_ERROR_OUT_OF_MEMORY);
    CHECK(mem == nullptr);
    // A pointer host_alloc did not return is ignored (and logged), not freed.
    d.host_free(device, host.data());
    CHECK(host[0] == 1);

    // buffer_native
    uint64_t native = 0;
    CHECK(d.buffer_native(nullptr, &native) == PLX_ERROR_INVALID_ARGUMENT);
    CHECK(contains(last_error(), "buffer_native: not " + a_plugin + " buffer"));
    CHECK(d.buffer_native(b, nullptr) == PLX_ERROR_INVALID_ARGUMENT);
}

} // namespace cpu_plugin_abi11
