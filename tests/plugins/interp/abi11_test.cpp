// The interpreter, ABI 1.1: queue markers and cross-queue waits, asynchronous transfers, peer
// copies, host_alloc'd memory, wrapped host arrays, native handles and the new device fields;
// random data with every element checked, and bad input refused with a message.
#include "fixture.hpp"

#include "cpu_plugin_abi11.hpp"

#include <cstddef>
#include <cstdint>

namespace interp_test {
namespace {

using cpu_plugin_abi11::check_elements;

// vector_add (c = a + b for i < n) on raw handles and any queue.
plx_status launch_add(plx_queue q, plx_kernel k, plx_buffer a, plx_buffer b, plx_buffer c,
                      int32_t n) {
    plx_launch_dims d{};
    d.struct_size = sizeof d;
    d.dims = 1;
    d.global_size[0] = static_cast<uint64_t>(n);
    d.global_size[1] = d.global_size[2] = 1;
    d.local_size[0] = 64;
    d.local_size[1] = d.local_size[2] = 1;
    plx_arg args[4] = {};
    const plx_buffer buffers[3] = {a, b, c};
    for (int i = 0; i < 3; ++i) {
        args[i].struct_size = sizeof(plx_arg);
        args[i].kind = PLX_ARG_BUFFER;
        args[i].buffer = buffers[i];
    }
    args[3].struct_size = sizeof(plx_arg);
    args[3].kind = PLX_ARG_SCALAR;
    args[3].value = &n;
    args[3].size = sizeof n;
    return api().launch(q, k, &d, args, 4, nullptr);
}

plx_buffer alloc(size_t bytes) {
    plx_buffer b = nullptr;
    REQUIRE(api().buffer_alloc(Plugin::get().device, bytes, &b) == PLX_OK);
    return b;
}

// Waits for a marker of `q` and releases it.
void finish(plx_queue q) {
    cpu_plugin_abi11::finish(api(), q);
}

std::vector<float> sums(const std::vector<float>& a, const std::vector<float>& b) {
    std::vector<float> c(a.size());
    for (size_t i = 0; i < a.size(); ++i)
        c[i] = a[i] + b[i]; // one f32 add: exact
    return c;
}

} // namespace

TEST_CASE("1.1: every new entry but queue_native is filled; the device has no uuid or PCI id") {
    cpu_plugin_abi11::check_entries_and_device_fields(api(), Plugin::get().device);
}

TEST_CASE("1.1: asynchronous write, marker, event_wait and asynchronous read round trip") {
    cpu_plugin_abi11::check_async_round_trip(api(), Plugin::get().device, rng(),
                                             {1, 17, 1000, size_t{1} << 16});
}

TEST_CASE("1.1: a queue waits on another queue's marker, then launches and reads") {
    plx_queue producer = nullptr;
    REQUIRE(api().queue_create(Plugin::get().device, 0, &producer) == PLX_OK);
    plx_queue consumer = Plugin::get().queue;
    const int n = 4099;
    const auto a = random_vector<float>(n, -100.f, 100.f),
               b = random_vector<float>(n, -100.f, 100.f);
    plx_buffer ba = alloc(n * 4), bb = alloc(n * 4), bc = alloc(n * 4);
    Module m(vector_add_kernel());
    REQUIRE(m.status() == PLX_OK);

    REQUIRE(api().buffer_write_async(producer, ba, 0, a.data(), n * 4) == PLX_OK);
    REQUIRE(api().buffer_write_async(producer, bb, 0, b.data(), n * 4) == PLX_OK);
    plx_event produced = nullptr;
    REQUIRE(api().queue_marker(producer, &produced) == PLX_OK);
    REQUIRE(api().queue_wait_event(consumer, produced) == PLX_OK);
    // Waiting twice, and after the host waited, is fine.
    REQUIRE(api().event_wait(produced) == PLX_OK);
    REQUIRE(api().queue_wait_event(consumer, produced) == PLX_OK);
    api().event_release(produced);

    REQUIRE(launch_add(consumer, m.kernel(), ba, bb, bc, n) == PLX_OK);
    std::vector<float> c(n, -1.f), a_back(n, -1.f);
    REQUIRE(api().buffer_read_async(consumer, bc, 0, c.data(), n * 4) == PLX_OK);
    REQUIRE(api().buffer_read_async(consumer, ba, 0, a_back.data(), n * 4) == PLX_OK);
    finish(consumer);
    check_elements(c.data(), sums(a, b));
    check_elements(a_back.data(), a);

    api().buffer_free(ba);
    api().buffer_free(bb);
    api().buffer_free(bc);
    api().queue_destroy(producer);
}

TEST_CASE("1.1: host_alloc'd memory as the source and destination of transfers") {
    plx_queue q = Plugin::get().queue;
    plx_device dev = Plugin::get().device;
    Module m(vector_add_kernel());
    REQUIRE(m.status() == PLX_OK);
    for (int n : {1, 333, 1 << 15}) {
        CAPTURE(n);
        void* mem[3] = {};
        for (void*& p : mem) {
            REQUIRE(api().host_alloc(dev, n * sizeof(float), &p) == PLX_OK);
            REQUIRE(p != nullptr);
            CHECK(reinterpret_cast<uintptr_t>(p) % 64 == 0);
        }
        auto* ha = static_cast<float*>(mem[0]);
        auto* hb = static_cast<float*>(mem[1]);
        auto* hc = static_cast<float*>(mem[2]);
        const auto a = random_vector<float>(n, -10.f, 10.f),
                   b = random_vector<float>(n, -10.f, 10.f);
        std::copy(a.begin(), a.end(), ha);
        std::copy(b.begin(), b.end(), hb);
        std::fill(hc, hc + n, -1.f);

        plx_buffer ba = alloc(n * 4), bb = alloc(n * 4), bc = alloc(n * 4);
        REQUIRE(api().buffer_write_async(q, ba, 0, ha, n * 4) == PLX_OK);
        REQUIRE(api().buffer_write(q, bb, 0, hb, n * 4) == PLX_OK);
        REQUIRE(launch_add(q, m.kernel(), ba, bb, bc, n) == PLX_OK);
        REQUIRE(api().buffer_read_async(q, bc, 0, hc, n * 4) == PLX_OK);
        finish(q);
        check_elements(hc, sums(a, b));
        // The blocking read into the same memory.
        std::fill(hc, hc + n, -1.f);
        REQUIRE(api().buffer_read(q, ba, 0, hc, n * 4) == PLX_OK);
        check_elements(hc, a);

        api().buffer_free(ba);
        api().buffer_free(bb);
        api().buffer_free(bc);
        for (void* p : mem)
            api().host_free(dev, p);
    }
    api().host_free(dev, nullptr); // a no-op
}

TEST_CASE("1.1: a wrapped host array is used in place and outlives its buffer") {
    plx_queue q = Plugin::get().queue;
    plx_device dev = Plugin::get().device;
    Module m(vector_add_kernel());
    REQUIRE(m.status() == PLX_OK);
    const int n = 3001;
    const size_t guard = 8;
    // The wrapped ranges start inside their allocations (a wrong free would abort) and have
    // guard elements on both sides that must stay untouched.
    std::vector<float> xa = random_vector<float>(n + 2 * guard, -50.f, 50.f);
    std::vector<float> xc = random_vector<float>(n + 2 * guard, -50.f, 50.f);
    const std::vector<float> xa0 = xa, xc0 = xc;
    float* pa = xa.data() + guard;
    float* pc = xc.data() + guard;
    const std::vector<float> a(pa, pa + n);
    const auto b = random_vector<float>(n, -50.f, 50.f);

    plx_buffer wa = nullptr, wc = nullptr;
    REQUIRE(api().buffer_wrap(dev, reinterpret_cast<uintptr_t>(pa), n * 4, &wa) == PLX_OK);
    REQUIRE(api().buffer_wrap(dev, reinterpret_cast<uintptr_t>(pc), n * 4, &wc) == PLX_OK);
    uint64_t native = 0;
    REQUIRE(api().buffer_native(wa, &native) == PLX_OK);
    CHECK(native == reinterpret_cast<uintptr_t>(pa));

    // A read through the plugin sees the array's contents.
    std::vector<float> out(n, 0.f);
    REQUIRE(api().buffer_read(q, wa, 0, out.data(), n * 4) == PLX_OK);
    check_elements(out.data(), a);

    // A launch reads the wrapped array and writes into another one.
    plx_buffer bb = alloc(n * 4);
    REQUIRE(api().buffer_write(q, bb, 0, b.data(), n * 4) == PLX_OK);
    REQUIRE(launch_add(q, m.kernel(), wa, bb, wc, n) == PLX_OK);
    finish(q);
    const std::vector<float> c = sums(a, b);
    check_elements(pc, c);
    // In place: c = c + b, read back through the plugin too.
    REQUIRE(launch_add(q, m.kernel(), wc, bb, wc, n) == PLX_OK);
    const std::vector<float> c2 = sums(c, b);
    check_elements(pc, c2);
    REQUIRE(api().buffer_read_async(q, wc, 0, out.data(), n * 4) == PLX_OK);
    finish(q);
    check_elements(out.data(), c2);

    // Writes, an asynchronous write, a copy and a fill through the plugin land in the array.
    std::vector<float> ref = a;
    const auto part = random_vector<float>(700, -1.f, 1.f);
    REQUIRE(api().buffer_write(q, wa, 100 * 4, part.data(), part.size() * 4) == PLX_OK);
    std::copy(part.begin(), part.end(), ref.begin() + 100);
    const auto part2 = random_vector<float>(1000, -1.f, 1.f);
    REQUIRE(api().buffer_write_async(q, wa, 2000 * 4, part2.data(), part2.size() * 4) == PLX_OK);
    std::copy(part2.begin(), part2.end(), ref.begin() + 2000);
    REQUIRE(api().buffer_copy(q, wa, 900 * 4, bb, 5 * 4, 400 * 4) == PLX_OK);
    std::copy(b.begin() + 5, b.begin() + 405, ref.begin() + 900);
    const float one = 1.f;
    REQUIRE(api().buffer_fill(q, wa, 1500 * 4, &one, 4, 100 * 4) == PLX_OK);
    std::fill(ref.begin() + 1500, ref.begin() + 1600, 1.f);
    finish(q);
    check_elements(pa, ref);
    // The wrapped size bounds transfers and launches like any buffer's.
    CHECK(api().buffer_write(q, wa, n * 4 - 4, part.data(), 8) == PLX_ERROR_INVALID_ARGUMENT);
    plx_buffer big_b = alloc((n + 1) * 4), big_c = alloc((n + 1) * 4);
    CHECK(launch_add(q, m.kernel(), wa, big_b, big_c, n + 1) == PLX_ERROR_LAUNCH);
    CHECK_MESSAGE(contains(last_error(), "interp: launch: "), last_error());
    api().buffer_free(big_b);
    api().buffer_free(big_c);
    check_elements(pa, ref);

    // Freeing the wrappers leaves the arrays alone.
    api().buffer_free(wa);
    api().buffer_free(wc);
    api().buffer_free(bb);
    check_elements(pa, ref);
    check_elements(pc, c2);
    for (size_t i = 0; i < guard; ++i) {
        CHECK(xa[i] == xa0[i]);
        CHECK(xa[guard + n + i] == xa0[guard + n + i]);
        CHECK(xc[i] == xc0[i]);
        CHECK(xc[guard + n + i] == xc0[guard + n + i]);
    }
    check_vector_add_works();
}

TEST_CASE("1.1: bad input is refused with the right status and a message") {
    plx_queue q = Plugin::get().queue;
    plx_device dev = Plugin::get().device;
    plx_buffer a = alloc(256), b = alloc(256);
    std::vector<uint32_t> host(64, 1);

    cpu_plugin_abi11::check_refusals(api(), dev, q, a, "an interp");

    // buffer_copy_peer: both buffers are of the one device
    CHECK(api().buffer_copy_peer(q, b, 0, a, 0, 64) == PLX_ERROR_INVALID_ARGUMENT);
    CHECK_MESSAGE(contains(last_error(), "buffer_copy_peer"), last_error());
    CHECK_MESSAGE(contains(last_error(), "same device"), last_error());
    CHECK(api().buffer_copy_peer(q, b, 0, nullptr, 0, 64) == PLX_ERROR_INVALID_ARGUMENT);
    CHECK(contains(last_error(), "buffer_copy_peer: src is not an interp buffer"));
    CHECK(api().buffer_copy_peer(nullptr, b, 0, a, 0, 64) == PLX_ERROR_INVALID_ARGUMENT);
    CHECK(contains(last_error(), "buffer_copy_peer: not an interp queue"));

    // the asynchronous transfers check like the blocking ones, under their own names
    CHECK(api().buffer_write_async(q, a, 250, host.data(), 8) == PLX_ERROR_INVALID_ARGUMENT);
    CHECK_MESSAGE(contains(last_error(), "buffer_write_async"), last_error());
    CHECK(contains(last_error(), "outside the buffer of 256 bytes"));
    CHECK(api().buffer_read_async(q, a, 0, nullptr, 8) == PLX_ERROR_INVALID_ARGUMENT);
    CHECK(contains(last_error(), "buffer_read_async: dst is NULL"));
    CHECK(api().buffer_write_async(nullptr, a, 0, host.data(), 8) == PLX_ERROR_INVALID_ARGUMENT);
    CHECK(contains(last_error(), "buffer_write_async: not an interp queue"));
    CHECK(api().buffer_read_async(q, nullptr, 0, host.data(), 8) == PLX_ERROR_INVALID_ARGUMENT);

    api().buffer_free(a);
    api().buffer_free(b);
    check_vector_add_works();
}

} // namespace interp_test
