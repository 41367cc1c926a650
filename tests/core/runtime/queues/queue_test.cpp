// px::Queue on every CPU backend: asynchronous writes, launches, reads and copies on one queue,
// ordering across queues (explicit waits and the automatic ordering of a buffer used on two
// queues), buffers on several devices of one backend, and bad input. Every output element is
// compared with the host reference; the kernels are integer, so the tolerance is exact.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <random>
#include <thread>

#include "int_axpy.hpp"
#include "kernels.hpp"
#include "matmul_mma.hpp"
#include "plexus/plexus.hpp"
#include "queue_problems.hpp"

namespace px = plexus;

namespace {

const auto& axpy() {
    return px::test::int_axpy();
}
// x = x + 1, in place.
const auto& bump() {
    static const auto k = px::kernel("queue_bump", {"x", "n"}, [](px::InOut<int32_t> x, px::Int n) {
        px::Int i = px::global_id(0);
        px::If(i < n, [&] { x[i] = x[i] + 1; });
    });
    return k;
}

int32_t host_axpy(int32_t a, int32_t s, int32_t b) {
    return px::test::host_int_axpy(a, s, b);
}
px::Config config() {
    return px::test::strict_build_tree_config();
}

std::vector<int32_t> random_ints(size_t n, std::mt19937& g) {
    std::vector<int32_t> v(n);
    for (auto& x : v)
        x = int32_t(g());
    return v;
}

// Every backend of this build tree that loaded (CUDA only where there is a GPU).
std::vector<std::string> loaded_backends(const px::Runtime& rt) {
    std::vector<std::string> out;
    for (const px::Backend* b : rt.backends())
        out.push_back(b->name());
    return out;
}

// The first backend with two devices or more: CUDA on a machine with two GPUs, else PoCL's
// OpenCL with POCL_DEVICES='pthread pthread'; null when there is none.
const px::Backend* two_device_backend(const px::Runtime& rt) {
    for (const char* name : {"cuda", "opencl"})
        for (const px::Backend* b : rt.backends())
            if (b->name() == name && b->devices().size() >= 2) return b;
    return nullptr;
}

size_t size_for(const std::string& backend) {
    return backend == "interp" ? 3001 : 100003;
}
size_t n_shared() {
    return 5003;
}

// Every element of got against want; the first few mismatches in the message.
void check_equal(const std::vector<int32_t>& got, const std::vector<int32_t>& want,
                 const std::string& what) {
    REQUIRE(got.size() == want.size());
    size_t bad = 0;
    std::string first;
    for (size_t i = 0; i < got.size(); ++i)
        if (got[i] != want[i] && bad++ == 0)
            first = "element " + std::to_string(i) + ": got " + std::to_string(got[i]) + ", want " +
                    std::to_string(want[i]);
    CHECK_MESSAGE(bad == 0, what << ": " << bad << " wrong of " << got.size() << ", " << first);
}

} // namespace

TEST_CASE("a queue writes, launches and reads without waiting in between") {
    px::Runtime rt(config());
    for (const std::string& backend : loaded_backends(rt)) {
        CAPTURE(backend);
        std::mt19937 g(7);
        const size_t n = size_for(backend);
        const int32_t s = 37;
        auto a = random_ints(n, g), b = random_ints(n, g);
        px::Queue q = rt.queue({backend});
        CHECK(q.backend() == backend);
        CHECK(q.device() == 0);
        px::Buffer<int32_t> da(rt, n), db(rt, n), dc(rt, n);
        q.write(da, std::span<const int32_t>(a));
        q.write(db, std::span<const int32_t>(b));
        px::Event launched = q.launch(axpy(), px::Grid(n), da, db, dc, s, int(n));
        CHECK(launched.backend() == backend);
        std::vector<int32_t> got(n);
        px::Event read = q.read(dc, std::span<int32_t>(got));
        read.wait();
        std::vector<int32_t> want(n);
        for (size_t i = 0; i < n; ++i)
            want[i] = host_axpy(a[i], s, b[i]);
        check_equal(got, want, "c read back");
        // A partial write at an offset keeps the rest, and a partial read sees it.
        std::vector<int32_t> patch = random_ints(n / 3, g);
        q.write(dc, std::span<const int32_t>(patch), 5);
        std::vector<int32_t> part(n / 3 + 10);
        q.read(dc, std::span<int32_t>(part), 0).wait();
        for (size_t i = 0; i < part.size(); ++i) {
            int32_t w = i >= 5 && i < 5 + patch.size() ? patch[i - 5] : want[i];
            if (part[i] != w) {
                FAIL_CHECK("partial read element " << i << ": got " << part[i] << ", want " << w);
                break;
            }
        }
        // The host view after queued work is current.
        for (size_t i = 0; i < patch.size(); ++i)
            want[5 + i] = patch[i];
        check_equal(dc.to_vector(), want, "host view after the queue");
    }
}

TEST_CASE("a queue copies one buffer into another and orders a chain of launches") {
    px::Runtime rt(config());
    for (const std::string& backend : loaded_backends(rt)) {
        CAPTURE(backend);
        std::mt19937 g(11);
        const size_t n = size_for(backend);
        auto x = random_ints(n, g);
        px::Queue q = rt.queue({backend});
        px::Buffer<int32_t> src(rt, x), dst(rt, n);
        q.copy(src, dst);
        const int rounds = 5;
        for (int r = 0; r < rounds; ++r)
            q.launch(bump(), px::Grid(n), dst, int(n));
        std::vector<int32_t> got(n);
        q.read(dst, std::span<int32_t>(got));
        q.finish();
        std::vector<int32_t> want(n);
        for (size_t i = 0; i < n; ++i)
            want[i] = int32_t(uint32_t(x[i]) + rounds);
        check_equal(got, want, "copied then bumped " + std::to_string(rounds) + " times");
        check_equal(src.to_vector(), x, "the source is unchanged");
    }
}

TEST_CASE("two queues: an explicit wait, and a buffer used on both is ordered without one") {
    px::Runtime rt(config());
    for (const std::string& backend : loaded_backends(rt)) {
        CAPTURE(backend);
        std::mt19937 g(13);
        const size_t n = size_for(backend);
        auto a = random_ints(n, g), b = random_ints(n, g);
        px::Queue producer = rt.queue({backend}), consumer = rt.queue({backend});
        CHECK(producer.label() != consumer.label());
        px::Buffer<int32_t> da(rt, n), db(rt, b), dc(rt, n), dd(rt, n);
        producer.write(da, std::span<const int32_t>(a));
        px::Event made = producer.launch(axpy(), px::Grid(n), da, db, dc, 3, int(n));
        consumer.wait(made);
        consumer.launch(axpy(), px::Grid(n), dc, da, dd, 1, int(n)); // dd = c + a
        // No wait: dd was last written on `consumer`, so `producer` follows that launch.
        producer.launch(bump(), px::Grid(n), dd, int(n));
        std::vector<int32_t> got(n);
        consumer.read(dd, std::span<int32_t>(got)).wait();
        std::vector<int32_t> want(n);
        for (size_t i = 0; i < n; ++i)
            want[i] = int32_t(uint32_t(host_axpy(host_axpy(a[i], 3, b[i]), 1, a[i])) + 1);
        check_equal(got, want, "c = 3a + b on one queue, d = c + a + 1 across both");
        // Runtime::launch and a queue on the same buffer are ordered too.
        rt.launch(px::Target{backend}, bump(), px::Grid(n), dd, int(n));
        producer.read(dd, std::span<int32_t>(got)).wait();
        for (auto& w : want)
            w = int32_t(uint32_t(w) + 1);
        check_equal(got, want, "after Runtime::launch");
    }
}

TEST_CASE("a buffer moves between two devices of one backend, and both devices run work") {
    px::Runtime rt(config());
    const px::Backend* two = two_device_backend(rt);
    if (!two) {
        if (std::getenv("PLEXUS_TEST_REQUIRE_TWO_OPENCL_DEVICES"))
            FAIL("two OpenCL devices were required (POCL_DEVICES='pthread pthread')");
        MESSAGE("skipped: no backend with two devices (run with POCL_DEVICES='pthread pthread')");
        return;
    }
    const std::string backend = two->name();
    MESSAGE("two devices of " << backend);
    std::mt19937 g(17);
    const size_t n = 200003;
    auto a = random_ints(n, g), b = random_ints(n, g);
    px::Queue q0 = rt.queue({backend, 0}), q1 = rt.queue({backend, 1});
    px::Buffer<int32_t> da(rt, a), db(rt, b), dc(rt, n), dd(rt, n);
    px::Event on0 = q0.launch(axpy(), px::Grid(n), da, db, dc, 5, int(n));
    px::Event on1 =
        q1.launch(axpy(), px::Grid(n), dc, db, dd, -2, int(n)); // dc moves from device 0
    CHECK(on0.device_index() == 0);
    CHECK(on1.device_index() == 1);
    std::vector<int32_t> got(n);
    q0.read(dd, std::span<int32_t>(got)).wait(); // dd moves back to device 0 to be read there
    std::vector<int32_t> want(n);
    for (size_t i = 0; i < n; ++i)
        want[i] = host_axpy(host_axpy(a[i], 5, b[i]), -2, b[i]);
    check_equal(got, want, "device 0 then device 1");
    // Runtime::launch by device index, and a copy made on the other device.
    px::Event again = rt.launch(px::Target{backend, 1}, bump(), px::Grid(n), dc, int(n));
    CHECK(again.device_index() == 1);
    px::Buffer<int32_t> de(rt, n);
    q0.copy(dc, de);
    q0.read(de, std::span<int32_t>(got)).wait();
    for (size_t i = 0; i < n; ++i)
        want[i] = int32_t(uint32_t(host_axpy(a[i], 5, b[i])) + 1);
    check_equal(got, want, "bumped on device 1, copied on device 0");
}

TEST_CASE("queues on several threads of one Runtime") {
    px::Runtime rt(config());
    for (const std::string& backend : loaded_backends(rt)) {
        CAPTURE(backend);
        std::atomic<long> wrong{0};
        std::atomic<int> errors{0};
        std::string first_problem;
        std::mutex problem_mutex;
        px::Buffer<int32_t> shared_b(rt, n_shared());
        {
            std::mt19937 g(3);
            shared_b.write(random_ints(n_shared(), g));
        }
        const std::vector<int32_t> b = shared_b.to_vector();
        std::vector<std::thread> threads;
        for (int t = 0; t < 8; ++t)
            threads.emplace_back([&, t] {
                try {
                    std::mt19937 g(100 + unsigned(t));
                    px::Queue q = rt.queue({backend});
                    const int rounds = backend == "interp" ? 3 : 20;
                    for (int r = 0; r < rounds; ++r) {
                        const size_t n = n_shared();
                        auto a = random_ints(n, g);
                        const int32_t s = int32_t(g() % 100);
                        px::Buffer<int32_t> da(rt, n), dc(rt, n);
                        q.write(da, std::span<const int32_t>(a));
                        q.launch(axpy(), px::Grid(n), da, shared_b, dc, s, int(n));
                        std::vector<int32_t> got(n);
                        q.read(dc, std::span<int32_t>(got)).wait();
                        for (size_t i = 0; i < n; ++i)
                            if (got[i] != host_axpy(a[i], s, b[i])) ++wrong;
                    }
                } catch (const std::exception& e) {
                    ++errors;
                    std::lock_guard lock(problem_mutex);
                    first_problem = e.what();
                }
            });
        for (auto& th : threads)
            th.join();
        CHECK_MESSAGE(errors == 0, first_problem);
        CHECK(wrong == 0);
    }
}

TEST_CASE("bad input on queues is a clear error and the queue stays usable") {
    px::Runtime rt(config());
    const auto backends = loaded_backends(rt);
    REQUIRE(!backends.empty());
    const std::string backend = backends.front();
    auto message_of = [](auto&& f) -> std::string {
        try {
            f();
        } catch (const px::Error& e) {
            return e.what();
        }
        return "(no error)";
    };
    CHECK(message_of([&] {
              rt.queue({"no_such_backend"});
          }).find("no backend 'no_such_backend' is loaded") != std::string::npos);
    CHECK(message_of([&] {
              rt.queue({backend, 99});
          }).find("device 99 of backend '" + backend + "' does not exist") != std::string::npos);
    CHECK(message_of([&] { px::Queue().finish(); }).find("default-constructed") !=
          std::string::npos);
    px::Queue q = rt.queue({backend});
    px::Buffer<int32_t> small(rt, 10), other(rt, 11);
    std::vector<int32_t> host(20, 1);
    CHECK(message_of([&] {
              q.write(small, std::span<const int32_t>(host));
          }).find("outside the buffer of 40 bytes") != std::string::npos);
    CHECK(message_of([&] {
              q.copy(small, other);
          }).find("the source has 40 bytes, the destination 44") != std::string::npos);
    // A buffer of another Runtime.
    px::Runtime rt2(config());
    px::Buffer<int32_t> foreign(rt2, 10);
    CHECK(message_of([&] {
              q.write(foreign, std::span<const int32_t>(host.data(), 10));
          }).find("belongs to another plexus::Runtime") != std::string::npos);
    CHECK(message_of([&] {
              q.launch(bump(), px::Grid(10), foreign, 10);
          }).find("belongs to another plexus::Runtime") != std::string::npos);
    // An event of another backend.
    if (backends.size() > 1) {
        px::Queue q2 = rt.queue({backends[1]});
        px::Event e = q2.launch(bump(), px::Grid(10), small, 10);
        CHECK(message_of([&] {
                  q.wait(e);
              }).find("an event orders only queues of its own backend") != std::string::npos);
    }
    // Still usable.
    std::vector<int32_t> ten(10, 41), got(10);
    q.write(small, std::span<const int32_t>(ten));
    q.launch(bump(), px::Grid(10), small, 10);
    q.read(small, std::span<int32_t>(got)).wait();
    check_equal(got, std::vector<int32_t>(10, 42), "after the errors");
}

TEST_CASE("wrapping host memory on the native backend, and a native handle written from outside") {
    px::Runtime rt(config());
    bool native = false;
    for (const px::Backend* b : rt.backends())
        native = native || b->name() == "native";
    if (!native) {
        MESSAGE("skipped: no native backend in this build");
        return;
    }
    std::mt19937 g(23);
    const size_t n = 10007;
    std::vector<int32_t> mine = random_ints(n, g);
    const std::vector<int32_t> before = mine;
    {
        auto wrapped =
            px::Buffer<int32_t>::wrap(rt, {"native"}, reinterpret_cast<uint64_t>(mine.data()), n);
        check_equal(wrapped.to_vector(), before, "the wrapped array read through the buffer");
        rt.launch(px::Target{"native"}, bump(), px::Grid(n), wrapped, int(n)).wait();
        std::vector<int32_t> want(n);
        for (size_t i = 0; i < n; ++i)
            want[i] = int32_t(uint32_t(before[i]) + 1);
        check_equal(mine, want, "the launch wrote the caller's array in place");
    }
    // The buffer is gone, the array stays the caller's.
    CHECK(mine[0] == int32_t(uint32_t(before[0]) + 1));

    // A native handle of a plexus buffer, written from outside, then taken as current.
    px::Buffer<int32_t> buf(rt, before);
    auto* p = reinterpret_cast<int32_t*>(buf.native_handle({"native"}));
    check_equal(std::vector<int32_t>(p, p + n), before, "the native handle holds the data");
    for (size_t i = 0; i < n; ++i)
        p[i] = int32_t(i);
    buf.modified_on({"native"});
    std::vector<int32_t> want(n);
    for (size_t i = 0; i < n; ++i)
        want[i] = int32_t(i);
    check_equal(buf.to_vector(), want, "written through the native handle");
    // Bad input: a zero handle, a backend without a device index, no allocation there.
    CHECK_THROWS_AS(px::Buffer<int32_t>::wrap(rt, {"native"}, 0, n), px::Error);
    CHECK_THROWS_AS(
        px::Buffer<int32_t>::wrap(rt, {"native", 3}, reinterpret_cast<uint64_t>(mine.data()), n),
        px::Error);
    px::Buffer<int32_t> fresh(rt, n);
    CHECK_THROWS_AS(fresh.modified_on({"native"}), px::Error);
}

TEST_CASE("multi_device_matmul (f32, f16, bf16) and pipeline use all devices of the backend; "
          "pipeline overlaps three queues") {
    px::Runtime rt(config());
    const bool two = two_device_backend(rt) != nullptr;
    if (!two && std::getenv("PLEXUS_TEST_REQUIRE_TWO_OPENCL_DEVICES"))
        FAIL("two OpenCL devices were required (POCL_DEVICES='pthread pthread')");
    for (const std::string& backend : loaded_backends(rt)) {
        CAPTURE(backend);
        const size_t devices = [&] {
            for (const px::Backend* b : rt.backends())
                if (b->name() == backend) return b->devices().size();
            return size_t(0);
        }();
        // Sizes with ragged edges: rows not a multiple of the tile, several tiles per device.
        for (const std::string name :
             {"multi_device_matmul", "multi_device_matmul_f16", "multi_device_matmul_bf16"}) {
            CAPTURE(name);
            // The devices the router keeps for the band's kernel (an OpenCL device without
            // cl_khr_subgroups is dropped for the fragment kernels), one band each.
            const px::ir::Kernel& band =
                name == "multi_device_matmul" ? px::samples::matmul_tiled().ir()
                : name == "multi_device_matmul_f16"
                    ? px::samples::mma_portable(px::samples::matmul_f16())
                    : px::samples::mma_portable(px::samples::matmul_bf16());
            std::vector<int> able;
            for (const px::Candidate& c : rt.explain(band))
                if (c.kept && c.backend == backend) able.push_back(int(c.device_index));
            std::sort(able.begin(), able.end());
            // Sizes with ragged edges: rows not a multiple of the tile, several tiles per device.
            for (size_t size :
                 backend == "interp" ? std::vector<size_t>{50} : std::vector<size_t>{70, 300}) {
                std::mt19937 g(static_cast<unsigned>(size));
                auto p = px::samples::make_queue_problem(name, size, rt, g);
                if (able.empty()) { // routed around: a clear error naming the backend and sample
                    CHECK_THROWS_WITH_AS(p->run(rt, {backend}), doctest::Contains(name.c_str()),
                                         px::Error);
                    MESSAGE(name << ": no device of " << backend << " runs it");
                    break;
                }
                p->run(rt, {backend});
                auto r = p->check();
                CHECK_MESSAGE(r.ok(), p->size_text() << ": " << r.bad << " bad of " << r.checked
                                                     << ", " << r.first_bad);
                const size_t tiles = (size + 127) / 128;
                std::vector<int> want(able.begin(),
                                      able.begin() + std::ptrdiff_t(std::min(able.size(), tiles)));
                auto used = dynamic_cast<px::samples::MultiDeviceProblem&>(*p).devices_used();
                CHECK_MESSAGE(used == want, "devices used: " << used.size() << " of " << devices);
            }
        }
        std::mt19937 g(5);
        auto p = px::samples::make_queue_problem("pipeline", backend == "interp" ? 20000 : 1000003,
                                                 rt, g);
        p->run(rt, {backend});
        auto r = p->check();
        CHECK_MESSAGE(r.ok(), p->size_text() << ": " << r.bad << " bad of " << r.checked << ", "
                                             << r.first_bad);
        // No device named: the chunks go to every device in turn, each with its own queues.
        std::vector<int> every;
        for (size_t d = 0; d < devices; ++d)
            every.push_back(int(d));
        const auto used = dynamic_cast<px::samples::StagedProblem&>(*p).devices_used();
        CHECK_MESSAGE(used == every, "pipeline devices used: " << used.size() << " of " << devices);
        // Naming a device keeps to it (the same problem, its slots reused on that device).
        p->run(rt, {backend, int(devices) - 1});
        r = p->check();
        CHECK_MESSAGE(r.ok(), "on the last device: " << r.bad << " bad of " << r.checked << ", "
                                                     << r.first_bad);
        CHECK(dynamic_cast<px::samples::StagedProblem&>(*p).devices_used() ==
              std::vector<int>{int(devices) - 1});
    }
    if (two)
        MESSAGE("multi_device_matmul ran on both devices of " << two_device_backend(rt)->name());
}

TEST_CASE("placements: device-only buffers have no host copy, pinned ones a page-locked one") {
    px::Runtime rt(config());
    const auto backends = loaded_backends(rt);
    for (const std::string& backend : backends) {
        CAPTURE(backend);
        std::mt19937 g(29);
        const size_t n = size_for(backend);
        auto x = random_ints(n, g);
        px::Buffer<int32_t> dev(rt, n, px::Placement::DeviceOnly, {backend});
        CHECK(dev.placement() == px::Placement::DeviceOnly);
        dev.write(x);
        rt.launch(px::Target{backend}, bump(), px::Grid(n), dev, int(n));
        std::vector<int32_t> want(n);
        for (size_t i = 0; i < n; ++i)
            want[i] = int32_t(uint32_t(x[i]) + 1);
        check_equal(dev.to_vector(), want, "device-only, bumped");
        // A partial write keeps the rest; the host view is refused with the reason.
        std::vector<int32_t> patch = random_ints(17, g);
        dev.write(std::span<const int32_t>(patch), 3);
        for (size_t i = 0; i < patch.size(); ++i)
            want[3 + i] = patch[i];
        check_equal(dev.to_vector(), want, "device-only, patched");
        try {
            (void)dev.host();
            FAIL("host() of a device-only buffer did not throw");
        } catch (const px::Error& e) {
            CHECK(e.code() == px::ErrorCode::InvalidArgument);
            CHECK(std::string(e.what()).find("Placement::DeviceOnly") != std::string::npos);
        }
        // Moved to every other backend and back, staged without a host copy.
        for (const std::string& other : backends) {
            rt.launch(px::Target{other}, bump(), px::Grid(n), dev, int(n));
            for (auto& w : want)
                w = int32_t(uint32_t(w) + 1);
        }
        check_equal(dev.to_vector(), want, "device-only, bumped on every backend");

        px::Buffer<int32_t> pinned(rt, n, px::Placement::Pinned, {backend});
        pinned.write(x);
        rt.launch(px::Target{backend}, bump(), px::Grid(n), pinned, int(n));
        for (size_t i = 0; i < n; ++i)
            want[i] = int32_t(uint32_t(x[i]) + 1);
        auto view = pinned.host();
        check_equal(std::vector<int32_t>(view.begin(), view.end()), want, "pinned, bumped");
    }
}
