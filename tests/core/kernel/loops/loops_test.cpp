// Loop unroll hints on every device of every backend in this build tree. One kernel's loops
// carry each hint: px::unroll(k) over trip counts that are no multiple of k, constant and
// known only at run time, px::unroll_full() (with a step of 2), px::no_unroll() around a hinted
// loop, loops whose bounds and step differ from work-item to work-item (lock step on the
// native backend), a loop holding barriers (group control there), and a per-work-item private
// array indexed by the loop variable. Its twin has the same loops unrolled by C++ while
// tracing instead (k copies of the body per trip, then the remaining trips; constant loops
// completely). Both must give the host reference's results exactly, every element: the inputs
// are multiples of 1/4 and small integers, so that every sum is exact in any order and a
// wrong trip, a lost remainder or a misplaced copy shows.
// PLEXUS_TEST_CUDA_COMPILER=nvrtc runs the cuda backend through CUDA C and NVRTC instead of PTX.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include "every_device.hpp"
#include "plexus/plexus.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

namespace px = plexus;
namespace ir = plexus::ir;

namespace {

constexpr int kGroup = 64;   // work-items per group: the shared tile's size
constexpr int kLen = 4096;   // elements of each input
constexpr int kP = 10;       // the private array: 10 elements, filled by unroll(3)
constexpr int kOut = kP + 6; // outputs per work-item
constexpr int kCount = 1000; // work-items that write (16 groups run, the last partly idle)

// A loop over [begin, end) by step with `hint`: the IR loop with the hint, or (`hinted` false)
// its C++-unrolled twin. Constant bounds (C++ numbers) unroll completely; otherwise each trip
// of an IR loop runs k copies of the body, and a second loop the trips that remain.
template <class B, class E, class S, class F>
void loop(bool hinted, const B& begin, const E& end, const S& step, const px::Unroll& hint,
          F&& body) {
    if (hinted) {
        px::For(begin, end, step, body, hint);
    } else if constexpr (std::is_integral_v<B> && std::is_integral_v<E> && std::is_integral_v<S>) {
        for (int j = begin; j < end; j += step)
            body(px::Int(j));
    } else {
        const int k = int(hint.count);
        px::Int b = begin, e = end, s = step; // each evaluated once, as a For's bounds are
        px::Int trips = px::max((e - b + s - 1) / s, 0);
        px::Int stop = b + trips / k * k * s;
        px::For(b, stop, s * k, [&](px::Int j) {
            for (int u = 0; u < k; ++u)
                body(px::Int(j + u * s));
        });
        px::For(stop, e, s, body);
    }
}

using LoopsKernel = px::Kernel<px::In<float>, px::In<int32_t>, px::Out<float>, px::Int, px::Int>;

LoopsKernel loops_kernel(bool hinted) {
    return px::kernel(
        hinted ? "loops_hinted" : "loops_twin", {"a", "b", "out", "n", "count"},
        [hinted](px::In<float> a, px::In<int32_t> b, px::Out<float> out, px::Int n, px::Int count) {
            auto tile = px::shared<float>(kGroup);
            px::Int lid = px::local_id(0);
            px::Int g = px::global_id(0);
            // Barriers in the loop: every work-item of the group runs it.
            px::Float shared_sum = 0.0f;
            loop(hinted, 0, 3, 1, px::unroll(2), [&](px::Int r) {
                tile[lid] = a[(g * 3 + r) % kLen];
                px::barrier();
                shared_sum += tile[(lid + 1 + r) % kGroup];
                px::barrier();
            });
            px::If(g < count, [&] {
                auto p = px::private_array<float>(kP);
                loop(hinted, 0, kP, 1, px::unroll(3),
                     [&](px::Int j) { p[j] = a[(g + 7 * j) % kLen] * 2.0f; });
                px::Float even = 0.0f;
                loop(hinted, 0, kP, 2, px::unroll_full(), [&](px::Int j) { even += p[j]; });
                px::Float acc = 0.0f;
                loop(hinted, 0, n, 1, px::unroll(4),
                     [&](px::Int j) { acc += a[(g + j) % kLen] * px::cast<float>(b[j % kLen]); });
                px::Int nested = 0;
                loop(hinted, 0, 5, 1, px::no_unroll(), [&](px::Int q) {
                    loop(hinted, q, n, 1, px::unroll(2),
                         [&](px::Int j) { nested += b[(g + q * j) % kLen] * (q + 1); });
                });
                // Bounds and step of each work-item's own.
                px::Float lane = 0.0f;
                loop(hinted, g % 3, n + g % 5, 1 + g % 2, px::unroll(4),
                     [&](px::Int j) { lane += p[j % kP]; });
                px::Int from = 0;
                loop(hinted, g % 4, n, 1, px::unroll(3), [&](px::Int j) { from += j * j; });
                px::Int o = g * kOut;
                for (int i = 0; i < kP; ++i)
                    out[o + i] = p[i];
                out[o + kP] = even;
                out[o + kP + 1] = acc;
                out[o + kP + 2] = px::cast<float>(nested);
                out[o + kP + 3] = lane;
                out[o + kP + 4] = px::cast<float>(from);
                out[o + kP + 5] = shared_sum;
            });
        });
}

std::vector<float> reference(const std::vector<float>& a, const std::vector<int32_t>& b, int n) {
    std::vector<float> out(size_t(kCount) * kOut);
    for (int g = 0; g < kCount; ++g) {
        float* o = &out[size_t(g) * kOut];
        float p[kP];
        for (int j = 0; j < kP; ++j)
            p[j] = o[j] = a[(g + 7 * j) % kLen] * 2.0f;
        float even = 0.0f;
        for (int j = 0; j < kP; j += 2)
            even += p[j];
        float acc = 0.0f;
        for (int j = 0; j < n; ++j)
            acc += a[(g + j) % kLen] * float(b[j % kLen]);
        int nested = 0;
        for (int q = 0; q < 5; ++q)
            for (int j = q; j < n; ++j)
                nested += b[(g + q * j) % kLen] * (q + 1);
        float lane = 0.0f;
        for (int j = g % 3; j < n + g % 5; j += 1 + g % 2)
            lane += p[j % kP];
        int from = 0;
        for (int j = g % 4; j < n; ++j)
            from += j * j;
        const int base = g / kGroup * kGroup, lid = g % kGroup;
        float shared_sum = 0.0f;
        for (int r = 0; r < 3; ++r)
            shared_sum += a[((base + (lid + 1 + r) % kGroup) * 3 + r) % kLen];
        o[kP] = even;
        o[kP + 1] = acc;
        o[kP + 2] = float(nested);
        o[kP + 3] = lane;
        o[kP + 4] = float(from);
        o[kP + 5] = shared_sum;
    }
    return out;
}

// The hints of every For of a statement, counted by value.
void count_hints(const ir::Stmt& s, std::map<uint32_t, int>& seen) {
    if (!s) return;
    if (auto f = ir::as<ir::For>(s)) ++seen[f->unroll];
    ir::for_each_part(*s, [](const ir::Expr&) {}, [&](const ir::Stmt& c) { count_hints(c, seen); });
}

} // namespace

TEST_CASE("the kernel under test holds each hint, and its twin none") {
    std::map<uint32_t, int> hinted, twin;
    count_hints(loops_kernel(true).ir().body, hinted);
    count_hints(loops_kernel(false).ir().body, twin);
    CHECK(hinted ==
          std::map<uint32_t, int>{{1, 1}, {2, 2}, {3, 2}, {4, 2}, {ir::For::unroll_full, 1}});
    // The twin's IR loops (run-time bounds: a blocked loop and a rest each) carry no hint.
    // acc, lane and from: 2 loops each; nested: 5 C++ copies of the outer loop, 2 loops each.
    CHECK(twin == std::map<uint32_t, int>{{0, 16}});
}

TEST_CASE("hinted IR loops and their C++-unrolled twin give the host's results on every device") {
    std::mt19937 rng(40);
    std::vector<float> a(kLen);
    std::vector<int32_t> b(kLen);
    for (float& x : a)
        x = float(int(rng() % 33) - 16) * 0.25f;
    for (int32_t& x : b)
        x = int32_t(rng() % 101) - 50;
    const auto hinted = loops_kernel(true), twin = loops_kernel(false);
    const auto devices = px::test::every_device();
    REQUIRE_FALSE(devices.empty());
    for (const px::test::TestDevice& d : devices)
        for (int n : {0, 3, 37}) {
            const std::vector<float> want = reference(a, b, n);
            for (const auto* k : {&hinted, &twin}) {
                INFO(d.label << ", " << k->name() << ", n = " << n);
                size_t bad = 0;
                std::string first;
                try {
                    px::Runtime& rt = px::test::hermetic_runtime();
                    px::Buffer<float> ba(rt, a), out(rt, size_t(kCount) * kOut);
                    px::Buffer<int32_t> bb(rt, b);
                    rt.launch(d.target, *k, px::Grid(kCount).local_size(kGroup), ba, bb, out, n,
                              kCount)
                        .wait();
                    const std::vector<float> got = out.to_vector();
                    for (size_t i = 0; i < want.size(); ++i)
                        if (got[i] != want[i] && bad++ < 3) {
                            char line[128];
                            std::snprintf(line, sizeof line,
                                          "[%zu] (item %zu, output %zu): %g, want %g; ", i,
                                          i / kOut, i % kOut, double(got[i]), double(want[i]));
                            first += line;
                        }
                } catch (const px::Error& e) {
                    bad = 1;
                    first = std::string("error: ") + e.what();
                }
                INFO(bad << " mismatches: " << first);
                CHECK(bad == 0);
            }
        }
}
