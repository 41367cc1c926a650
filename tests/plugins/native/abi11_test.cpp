// Native plugin, ABI 1.1: queue markers and cross-queue waits, asynchronous transfers, peer
// copies, host_alloc'd memory, wrapped host arrays, native handles and the new device fields;
// random data with every element checked, and bad input refused with a message.
#include "plugin_fixture.hpp"

#include "cpu_plugin_abi11.hpp"

#include <doctest/doctest.h>

#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

using cpu_plugin_abi11::check_elements;
using cpu_plugin_abi11::finish;
using cpu_plugin_abi11::random_words;
using native_test::contains;
using native_test::Plugin;

namespace {

// out[i] = in[i] * mul + add for i < global_size, one 1-D work-group per call: a stand-in for
// the core's generated host code, which reaches buffers through their host addresses.
struct Map {
    const uint32_t* in = nullptr;
    uint32_t* out = nullptr;
    uint32_t mul = 1;
    uint32_t add = 0;

    static void run(const plx_workgroup_ctx* ctx, void* user) {
        const auto* m = static_cast<const Map*>(user);
        const uint64_t base = ctx->group_id[0] * ctx->local_size[0];
        for (uint64_t l = 0; l < ctx->local_size[0]; ++l) {
            const uint64_t i = base + l;
            if (i < ctx->global_size[0]) m->out[i] = m->in[i] * m->mul + m->add;
        }
    }
    uint32_t operator()(uint32_t x) const { return x * mul + add; }
};

plx_status launch_map(Plugin& p, plx_queue q, Map& m, size_t n) {
    plx_launch_dims d{};
    d.struct_size = sizeof d;
    d.dims = 1;
    d.global_size[0] = n;
    d.global_size[1] = d.global_size[2] = 1;
    d.local_size[0] = 64;
    d.local_size[1] = d.local_size[2] = 1;
    return p.desc.launch_host(q, Map::run, &m, &d, nullptr);
}

uint32_t* host_ptr(Plugin& p, plx_buffer b) {
    return static_cast<uint32_t*>(p.desc.buffer_host_ptr(b));
}

// Launches `m` on `q`, whose input holds `values`, reads its output buffer `out`
// asynchronously into `dst` and checks it; returns the output.
std::vector<uint32_t> map_and_read(Plugin& p, plx_queue q, Map& m, plx_buffer out,
                                   const std::vector<uint32_t>& values, uint32_t* dst) {
    const size_t n = values.size();
    REQUIRE(launch_map(p, q, m, n) == PLX_OK);
    REQUIRE(p.desc.buffer_read_async(q, out, 0, dst, n * 4) == PLX_OK);
    finish(p.desc, q);
    std::vector<uint32_t> want(n);
    for (size_t i = 0; i < n; ++i)
        want[i] = m(values[i]);
    check_elements(dst, want);
    return want;
}

} // namespace

TEST_SUITE("native") {

    TEST_CASE(
        "1.1: every new entry but queue_native is filled; CPU devices have no uuid or PCI id") {
        Plugin p;
        REQUIRE_MESSAGE(p.status == PLX_OK, p.error);
        cpu_plugin_abi11::check_entries_and_device_fields(p.desc, p.device());
    }

    TEST_CASE("1.1: asynchronous write, marker, event_wait and asynchronous read round trip") {
        Plugin p;
        REQUIRE_MESSAGE(p.status == PLX_OK, p.error);
        std::mt19937_64 rng(0x5eed1100);
        cpu_plugin_abi11::check_async_round_trip(p.desc, p.device(), rng,
                                                 {1, 17, 1000, size_t{1} << 18});
    }

    TEST_CASE("1.1: a queue waits on another queue's marker, then reads and launches") {
        Plugin p;
        REQUIRE_MESSAGE(p.status == PLX_OK, p.error);
        plx_queue producer = p.queue(), consumer = p.queue(PLX_QUEUE_PROFILING);
        std::mt19937_64 rng(77);
        const size_t n = 10007;
        const std::vector<uint32_t> data = random_words(rng, n);
        plx_buffer in = nullptr, out = nullptr;
        REQUIRE(p.desc.buffer_alloc(p.device(), n * 4, &in) == PLX_OK);
        REQUIRE(p.desc.buffer_alloc(p.device(), n * 4, &out) == PLX_OK);

        REQUIRE(p.desc.buffer_write_async(producer, in, 0, data.data(), n * 4) == PLX_OK);
        plx_event produced = nullptr;
        REQUIRE(p.desc.queue_marker(producer, &produced) == PLX_OK);
        REQUIRE(p.desc.queue_wait_event(consumer, produced) == PLX_OK);
        // Waiting twice, and on an event already waited on by the host, is fine.
        REQUIRE(p.desc.event_wait(produced) == PLX_OK);
        REQUIRE(p.desc.queue_wait_event(consumer, produced) == PLX_OK);
        p.desc.event_release(produced);

        Map m{host_ptr(p, in), host_ptr(p, out), 2654435761u, 12345u};
        REQUIRE(launch_map(p, consumer, m, n) == PLX_OK);
        std::vector<uint32_t> copy(n), mapped(n);
        REQUIRE(p.desc.buffer_read_async(consumer, in, 0, copy.data(), n * 4) == PLX_OK);
        REQUIRE(p.desc.buffer_read_async(consumer, out, 0, mapped.data(), n * 4) == PLX_OK);
        finish(p.desc, consumer);
        check_elements(copy.data(), data);
        std::vector<uint32_t> want(n);
        for (size_t i = 0; i < n; ++i)
            want[i] = m(data[i]);
        check_elements(mapped.data(), want);

        p.desc.buffer_free(in);
        p.desc.buffer_free(out);
        p.desc.queue_destroy(producer);
        p.desc.queue_destroy(consumer);
    }

    TEST_CASE("1.1: host_alloc'd memory as the source and destination of transfers") {
        Plugin p;
        REQUIRE_MESSAGE(p.status == PLX_OK, p.error);
        plx_queue q = p.queue();
        std::mt19937_64 rng(2024);
        for (size_t n : {size_t{1}, size_t{333}, size_t{1} << 16}) {
            CAPTURE(n);
            void* src_mem = nullptr;
            void* dst_mem = nullptr;
            REQUIRE(p.desc.host_alloc(p.device(), n * 4, &src_mem) == PLX_OK);
            REQUIRE(p.desc.host_alloc(p.device(), n * 4, &dst_mem) == PLX_OK);
            REQUIRE(src_mem != nullptr);
            REQUIRE(dst_mem != nullptr);
            CHECK(reinterpret_cast<uintptr_t>(src_mem) % 64 == 0);
            CHECK(reinterpret_cast<uintptr_t>(dst_mem) % 64 == 0);
            auto* src = static_cast<uint32_t*>(src_mem);
            auto* dst = static_cast<uint32_t*>(dst_mem);
            const std::vector<uint32_t> data = random_words(rng, n);
            std::copy(data.begin(), data.end(), src);
            std::fill(dst, dst + n, 0u);

            plx_buffer a = nullptr, b = nullptr;
            REQUIRE(p.desc.buffer_alloc(p.device(), n * 4, &a) == PLX_OK);
            REQUIRE(p.desc.buffer_alloc(p.device(), n * 4, &b) == PLX_OK);
            REQUIRE(p.desc.buffer_write_async(q, a, 0, src, n * 4) == PLX_OK);
            Map m{host_ptr(p, a), host_ptr(p, b), 3u, 7u};
            map_and_read(p, q, m, b, data, dst);

            // The blocking transfers take the same memory.
            std::vector<uint32_t> again = random_words(rng, n);
            std::copy(again.begin(), again.end(), src);
            REQUIRE(p.desc.buffer_write(q, a, 0, src, n * 4) == PLX_OK);
            REQUIRE(p.desc.buffer_read(q, a, 0, dst, n * 4) == PLX_OK);
            check_elements(dst, again);

            p.desc.buffer_free(a);
            p.desc.buffer_free(b);
            p.desc.host_free(p.device(), src_mem);
            p.desc.host_free(p.device(), dst_mem);
        }
        p.desc.host_free(p.device(), nullptr); // a no-op
        p.desc.queue_destroy(q);
    }

    TEST_CASE("1.1: a wrapped host array is used in place and outlives its buffer") {
        Plugin p;
        REQUIRE_MESSAGE(p.status == PLX_OK, p.error);
        plx_queue q = p.queue();
        std::mt19937_64 rng(99);
        const size_t n = 5000, guard = 16;
        // The wrapped range starts inside the allocation (not where malloc's block starts, so a
        // wrong free would abort) and has guard words on both sides that must stay untouched.
        std::vector<uint32_t> array = random_words(rng, n + 2 * guard);
        const std::vector<uint32_t> guards = array;
        uint32_t* base = array.data() + guard;
        std::vector<uint32_t> ref(base, base + n);

        plx_buffer w = nullptr;
        REQUIRE(p.desc.buffer_wrap(p.device(), reinterpret_cast<uintptr_t>(base), n * 4, &w) ==
                PLX_OK);
        REQUIRE(w != nullptr);
        CHECK(p.desc.buffer_host_ptr(w) == base);
        uint64_t native = 0;
        REQUIRE(p.desc.buffer_native(w, &native) == PLX_OK);
        CHECK(native == reinterpret_cast<uintptr_t>(base));

        // A read through the plugin sees the array's contents.
        std::vector<uint32_t> out(n, 0);
        REQUIRE(p.desc.buffer_read(q, w, 0, out.data(), n * 4) == PLX_OK);
        check_elements(out.data(), ref);

        // A launch reads the array ...
        plx_buffer b = nullptr;
        REQUIRE(p.desc.buffer_alloc(p.device(), n * 4, &b) == PLX_OK);
        Map in{host_ptr(p, w), host_ptr(p, b), 5u, 1u};
        const std::vector<uint32_t> want = map_and_read(p, q, in, b, ref, out.data());

        // ... and writes into it.
        Map back{host_ptr(p, b), host_ptr(p, w), 11u, 3u};
        REQUIRE(launch_map(p, q, back, n) == PLX_OK);
        for (size_t i = 0; i < n; ++i)
            ref[i] = back(want[i]);
        check_elements(base, ref);

        // Writes, an asynchronous write and a copy through the plugin land in the array.
        const std::vector<uint32_t> part = random_words(rng, 700);
        REQUIRE(p.desc.buffer_write(q, w, 100 * 4, part.data(), part.size() * 4) == PLX_OK);
        std::copy(part.begin(), part.end(), ref.begin() + 100);
        const std::vector<uint32_t> part2 = random_words(rng, 1234);
        REQUIRE(p.desc.buffer_write_async(q, w, 3000 * 4, part2.data(), part2.size() * 4) ==
                PLX_OK);
        std::copy(part2.begin(), part2.end(), ref.begin() + 3000);
        const std::vector<uint32_t> part3 = random_words(rng, n);
        REQUIRE(p.desc.buffer_write(q, b, 0, part3.data(), n * 4) == PLX_OK);
        REQUIRE(p.desc.buffer_copy(q, w, 4500 * 4, b, 10 * 4, 500 * 4) == PLX_OK);
        std::copy(part3.begin() + 10, part3.begin() + 510, ref.begin() + 4500);
        finish(p.desc, q);
        check_elements(base, ref);
        // The wrapped size bounds transfers like any buffer's.
        CHECK(p.desc.buffer_write(q, w, n * 4 - 4, part.data(), 8) == PLX_ERROR_INVALID_ARGUMENT);

        // Freeing the wrapper leaves the array alone, and it stays usable.
        p.desc.buffer_free(w);
        p.desc.buffer_free(b);
        check_elements(base, ref);
        for (size_t i = 0; i < guard; ++i) {
            CHECK(array[i] == guards[i]);
            CHECK(array[guard + n + i] == guards[guard + n + i]);
        }
        for (size_t i = 0; i < n; ++i)
            base[i] ^= 0x5a5a5a5au;
        p.desc.queue_destroy(q);
    }

    TEST_CASE("1.1: bad input is refused with the right status and a message") {
        Plugin p;
        REQUIRE_MESSAGE(p.status == PLX_OK, p.error);
        plx_queue q = p.queue();
        plx_buffer a = nullptr, b = nullptr;
        REQUIRE(p.desc.buffer_alloc(p.device(), 256, &a) == PLX_OK);
        REQUIRE(p.desc.buffer_alloc(p.device(), 256, &b) == PLX_OK);
        std::vector<uint32_t> host(64, 1);

        cpu_plugin_abi11::check_refusals(p.desc, p.device(), q, a, "a native");

        // buffer_copy_peer: both buffers are of the one device
        CHECK(p.desc.buffer_copy_peer(q, b, 0, a, 0, 64) == PLX_ERROR_INVALID_ARGUMENT);
        CHECK_MESSAGE(contains(p.last_error(), "buffer_copy_peer"), p.last_error());
        CHECK_MESSAGE(contains(p.last_error(), "same device"), p.last_error());
        CHECK(p.desc.buffer_copy_peer(q, b, 0, nullptr, 0, 64) == PLX_ERROR_INVALID_ARGUMENT);
        CHECK(contains(p.last_error(), "buffer_copy_peer"));
        CHECK(p.desc.buffer_copy_peer(nullptr, b, 0, a, 0, 64) == PLX_ERROR_INVALID_ARGUMENT);
        CHECK(p.desc.buffer_copy_peer(q, b, 200, a, 0, 64) == PLX_ERROR_INVALID_ARGUMENT);
        CHECK(contains(p.last_error(), "beyond the buffer"));

        // the asynchronous transfers check like the blocking ones, under their own names
        CHECK(p.desc.buffer_write_async(q, a, 250, host.data(), 8) == PLX_ERROR_INVALID_ARGUMENT);
        CHECK_MESSAGE(contains(p.last_error(), "buffer_write_async"), p.last_error());
        CHECK(contains(p.last_error(), "beyond the buffer's 256 bytes"));
        CHECK(p.desc.buffer_read_async(q, a, 0, nullptr, 8) == PLX_ERROR_INVALID_ARGUMENT);
        CHECK(contains(p.last_error(), "buffer_read_async: dst is NULL"));
        CHECK(p.desc.buffer_write_async(nullptr, a, 0, host.data(), 8) ==
              PLX_ERROR_INVALID_ARGUMENT);
        CHECK(contains(p.last_error(), "buffer_write_async: not a native queue"));
        CHECK(p.desc.buffer_read_async(q, nullptr, 0, host.data(), 8) ==
              PLX_ERROR_INVALID_ARGUMENT);

        // buffer_native: a buffer's host address
        uint64_t native = 0;
        REQUIRE(p.desc.buffer_native(a, &native) == PLX_OK);
        CHECK(native == reinterpret_cast<uintptr_t>(p.desc.buffer_host_ptr(a)));

        p.desc.buffer_free(a);
        p.desc.buffer_free(b);
        p.desc.queue_destroy(q);
    }

    TEST_CASE("1.1: shutdown frees forgotten host_alloc blocks and leaves wrapped arrays alone") {
        std::vector<uint32_t> array(1000);
        for (size_t i = 0; i < array.size(); ++i)
            array[i] = static_cast<uint32_t>(i * 2654435761u);
        const std::vector<uint32_t> before = array;
        Plugin p;
        REQUIRE_MESSAGE(p.status == PLX_OK, p.error);
        void* mem = nullptr;
        REQUIRE(p.desc.host_alloc(p.device(), 1 << 20, &mem) == PLX_OK);
        plx_buffer w = nullptr;
        REQUIRE(p.desc.buffer_wrap(p.device(), reinterpret_cast<uintptr_t>(array.data() + 1),
                                   (array.size() - 1) * 4, &w) == PLX_OK);
        plx_queue q = p.queue();
        plx_event e = nullptr;
        REQUIRE(p.desc.queue_marker(q, &e) == PLX_OK);
        // Left for shutdown: the block, the wrapper, the queue and the marker.
        p.desc.shutdown();
        p.status = PLX_ERROR_INTERNAL; // shut down already
        CHECK(array == before);
        std::lock_guard lock(p.host().mutex);
        bool logged = false;
        for (const auto& [level, msg] : p.host().messages)
            logged = logged || contains(msg, "host_alloc");
        CHECK(logged);
    }

} // TEST_SUITE
