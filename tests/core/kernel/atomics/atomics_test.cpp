// Float atomics (add, min, max on f32 and f64) and 64-bit compare-exchange on every device of
// every backend in this build tree (a device without f64 skips the f64 cases), in global
// memory and in a work-group's shared memory, under heavy contention: many work-items update
// few elements, on random inputs. Every output element is checked against the host, exactly:
// - an element's final value is the fold of its operands from its initial value. The inputs
//   make that exact in any order: the operands of an add are multiples of 2^-4 (f32) or 2^-8
//   (f64, with more bits than an f32 holds) small enough that no partial sum rounds; min and
//   max are fmin / fmax, so a NaN operand leaves the element as it is, and an element that
//   starts as NaN takes the first number (no -0 appears: which of -0 and +0 wins is
//   unspecified);
// - the old values the updates returned chain: each is the element just before one update,
//   so with the final value they are, as a multiset, the initial value and every update's
//   result (old op operand). A lost update or a wrong old value breaks the equality;
// - a counter incremented through a compare-exchange loop hands out each ticket once, and a
//   lock-free maximum through compare-exchange ends at the largest operand.
// PLEXUS_TEST_CUDA_COMPILER=nvrtc runs the cuda backend through CUDA C and NVRTC instead of PTX.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include "every_device.hpp"
#include "plexus/plexus.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <random>
#include <type_traits>

namespace px = plexus;

namespace {

px::Runtime& runtime() {
    return px::test::hermetic_runtime();
}

// The mismatches of one case on one device; the first few are described.
struct Mismatches {
    size_t count = 0;
    std::string first;
    void add(const std::string& what) {
        if (count++ < 3) first += (first.empty() ? "" : "; ") + what;
    }
};

// Runs `check` on every device (those with f64 only, when `fp64`); an error is a mismatch.
template <class F> void on_every_device(bool fp64, F&& check) {
    for (const px::test::TestDevice& d : px::test::every_device()) {
        if (fp64 && !d.info->fp64) {
            MESSAGE(d.label << ": no f64, skipped");
            continue;
        }
        Mismatches bad;
        try {
            check(d.target, bad);
        } catch (const px::Error& e) {
            bad.add(std::string("error: ") + e.what());
        }
        INFO(d.label << ": " << bad.count << " mismatches: " << bad.first);
        CHECK(bad.count == 0);
    }
}

enum class Op { Add, Min, Max };
const char* op_name(Op op) {
    return op == Op::Add ? "add" : op == Op::Min ? "min" : "max";
}
template <class T> const char* type_name() {
    return sizeof(T) == 4 ? "f32" : "f64";
}

template <class T> T apply(Op op, T old, T v) {
    return op == Op::Add ? old + v : op == Op::Min ? std::fmin(old, v) : std::fmax(old, v);
}
template <class T> px::Value<T> update(Op op, const px::Part<T>& element, const px::Value<T>& v) {
    if (op == Op::Add) return px::atomic_add(element, v);
    if (op == Op::Min) return px::atomic_min(element, v);
    return px::atomic_max(element, v);
}

bool same(double a, double b) {
    return a == b || (std::isnan(a) && std::isnan(b));
}
std::string show(double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    return buf;
}

// The chain of updates of one element (see the top of the file); `olds` empty when the kernel
// dropped the old values.
template <class T>
void check_chain(Op op, T init, const std::vector<T>& operands, const std::vector<T>& olds,
                 T final_value, const std::string& where, Mismatches& bad) {
    T want = init;
    for (T v : operands)
        want = apply(op, want, v);
    if (!same(final_value, want))
        bad.add(where + ": final " + show(final_value) + ", want " + show(want));
    if (olds.empty()) return;
    std::vector<T> seen = olds, made = {init};
    seen.push_back(final_value);
    for (size_t i = 0; i < operands.size(); ++i)
        made.push_back(apply(op, olds[i], operands[i]));
    auto order = [](T a, T b) { return std::isnan(b) ? !std::isnan(a) : !std::isnan(a) && a < b; };
    std::sort(seen.begin(), seen.end(), order);
    std::sort(made.begin(), made.end(), order);
    for (size_t i = 0; i < seen.size(); ++i)
        if (!same(seen[i], made[i])) {
            bad.add(where + ": the old values do not chain (sorted, " + show(seen[i]) +
                    " against " + show(made[i]) + ")");
            return;
        }
}

// Operands of `op`: exact sums for add; for min / max nonzero numbers, every 13th a NaN.
template <class T> std::vector<T> operands(Op op, size_t n, unsigned seed) {
    std::mt19937 rng(seed);
    std::vector<T> v(n);
    const int range = sizeof(T) == 4 ? 1 << 10 : 1 << 24;
    const T unit = sizeof(T) == 4 ? T(1) / 16 : T(1) / 256;
    for (size_t i = 0; i < n; ++i) {
        int k = int(rng() % (2u * range + 1)) - range;
        if (op != Op::Add && k == 0) k = 1;
        v[i] = op != Op::Add && i % 13 == 7 ? std::numeric_limits<T>::quiet_NaN() : T(k) * unit;
    }
    return v;
}
// The elements' initial values: 0 for add; for min / max the first is NaN, the others numbers.
template <class T> std::vector<T> initial(Op op, size_t count, unsigned seed) {
    std::vector<T> v = operands<T>(Op::Add, count, seed);
    if (op != Op::Add)
        v[0] = std::numeric_limits<T>::quiet_NaN();
    else
        std::fill(v.begin(), v.end(), T(0));
    return v;
}

constexpr int kGroup = 64, kSlots = 4;

// old[i] = op(cells[i % slots], v[i]) for i < n; `keep_old` false drops the old value, which
// some generators turn into a cheaper atomic.
template <class T>
px::Kernel<px::InOut<T>, px::In<T>, px::Out<T>, px::Int, px::Int> global_kernel(Op op,
                                                                                bool keep_old) {
    return px::kernel(
        std::string("global_") + op_name(op) + "_" + type_name<T>() + (keep_old ? "" : "_dropped"),
        {"cells", "v", "old", "n", "slots"},
        [op, keep_old](px::InOut<T> cells, px::In<T> v, px::Out<T> old, px::Int n, px::Int slots) {
            px::Int i = px::global_id(0);
            px::If(i < n, [&] {
                px::Value<T> was = update<T>(op, cells[i % slots], v[i]);
                if (keep_old) old[i] = was;
            });
        });
}

// The same on a shared array: group g loads its kSlots elements from cells[g * kSlots ...],
// its work-items update them, and the group writes them back.
template <class T> px::Kernel<px::InOut<T>, px::In<T>, px::Out<T>, px::Int> local_kernel(Op op) {
    return px::kernel(std::string("local_") + op_name(op) + "_" + type_name<T>(),
                      {"cells", "v", "old", "n"},
                      [op](px::InOut<T> cells, px::In<T> v, px::Out<T> old, px::Int n) {
                          auto sh = px::shared<T>(kSlots);
                          px::Int lid = px::local_id(0);
                          px::Int base = px::group_id(0) * kSlots;
                          px::If(lid < kSlots, [&] { sh[lid] = cells[base + lid]; });
                          px::barrier();
                          px::Int i = px::global_id(0);
                          px::If(i < n, [&] { old[i] = update<T>(op, sh[i % kSlots], v[i]); });
                          px::barrier();
                          px::If(lid < kSlots, [&] { cells[base + lid] = sh[lid]; });
                      });
}

// The elements' operands and old values, split by element: work-item i updates element
// `element(i)`.
template <class T, class E>
void check_elements(Op op, const std::vector<T>& init, const std::vector<T>& v,
                    const std::vector<T>& old, const std::vector<T>& final_values, E element,
                    const std::string& where, Mismatches& bad) {
    std::vector<std::vector<T>> ops(init.size()), olds(init.size());
    for (size_t i = 0; i < v.size(); ++i) {
        ops[element(i)].push_back(v[i]);
        if (!old.empty()) olds[element(i)].push_back(old[i]);
    }
    for (size_t e = 0; e < init.size(); ++e)
        check_chain(op, init[e], ops[e], olds[e], final_values[e],
                    where + " element " + std::to_string(e), bad);
}

template <class T> void global_case(Op op, bool keep_old) {
    const size_t n = 4000, slots = 8; // 500 updates per element
    const auto k = global_kernel<T>(op, keep_old);
    CAPTURE(k.ir().name);
    on_every_device(sizeof(T) == 8, [&](const px::Target& t, Mismatches& bad) {
        const std::vector<T> v = operands<T>(op, n, 1), init = initial<T>(op, slots, 2);
        px::Buffer<T> cells(runtime(), init), bv(runtime(), v), old(runtime(), n);
        runtime().launch(t, k, px::Grid(n), cells, bv, old, int(n), int(slots)).wait();
        check_elements(
            op, init, v, keep_old ? old.to_vector() : std::vector<T>(), cells.to_vector(),
            [&](size_t i) { return i % slots; }, "global", bad);
    });
}

template <class T> void local_case(Op op) {
    const size_t n = 1000, groups = (n + kGroup - 1) / kGroup; // the last group is partly idle
    const auto k = local_kernel<T>(op);
    CAPTURE(k.ir().name);
    on_every_device(sizeof(T) == 8, [&](const px::Target& t, Mismatches& bad) {
        const std::vector<T> v = operands<T>(op, n, 3), init = initial<T>(op, groups * kSlots, 4);
        px::Buffer<T> cells(runtime(), init), bv(runtime(), v), old(runtime(), n);
        runtime().launch(t, k, px::Grid(n).local_size(kGroup), cells, bv, old, int(n)).wait();
        check_elements(
            op, init, v, old.to_vector(), cells.to_vector(),
            [&](size_t i) { return i / kGroup * kSlots + i % kSlots; }, "shared", bad);
    });
}

} // namespace

TEST_CASE(
    "f64 atomic add under contention, global and shared, old values used and dropped (exact)") {
    global_case<double>(Op::Add, true);
    global_case<double>(Op::Add, false);
    local_case<double>(Op::Add);
}

TEST_CASE(
    "f32 atomic add under contention, global and shared, old values used and dropped (exact)") {
    global_case<float>(Op::Add, true);
    global_case<float>(Op::Add, false);
    local_case<float>(Op::Add);
}

TEST_CASE(
    "f32 and f64 atomic min / max under contention with NaN operands, global and shared (exact)") {
    for (Op op : {Op::Min, Op::Max}) {
        global_case<float>(op, true);
        local_case<float>(op);
        global_case<double>(op, true);
        local_case<double>(op);
    }
}

namespace {

// A counter incremented through a compare-exchange loop, on counts[0] (global) or on a
// shared copy of counts[group] (shared): ticket[i] is the count this work-item replaced.
template <class T> px::Kernel<px::InOut<T>, px::Out<T>, px::Int> counter_kernel(bool shared) {
    return px::kernel(
        std::string("cas_counter_") + (std::is_signed_v<T> ? "i64" : "u64") +
            (shared ? "_shared" : ""),
        {"counts", "ticket", "n"}, [shared](px::InOut<T> counts, px::Out<T> ticket, px::Int n) {
            std::optional<px::Shared<T>> sh;
            px::Int lid = px::local_id(0);
            if (shared) {
                sh.emplace(px::shared<T>(1));
                px::If(lid == 0, [&] { (*sh)[0] = counts[px::group_id(0)]; });
                px::barrier();
            }
            auto count = [&] { return shared ? (*sh)[0] : counts[0]; };
            px::Int i = px::global_id(0);
            px::If(i < n, [&] {
                px::Var<T> seen = count();
                px::Var<uint32_t> done = 0u;
                px::While(done == 0u, [&] {
                    px::Value<T> got = px::atomic_compare_exchange(count(), seen, seen + T(1));
                    px::If(got == seen, [&] { done = 1u; }).Else([&] { seen = got; });
                });
                ticket[i] = seen;
            });
            if (shared) {
                px::barrier();
                px::If(lid == 0, [&] { counts[px::group_id(0)] = (*sh)[0]; });
            }
        });
}

// best[0] = max(best[0], v[i]) through compare-exchange: retry while the element is smaller.
template <class T> px::Kernel<px::InOut<T>, px::In<T>, px::Int> cas_max_kernel() {
    return px::kernel(std::string("cas_max_") + (std::is_signed_v<T> ? "i64" : "u64"),
                      {"best", "v", "n"}, [](px::InOut<T> best, px::In<T> v, px::Int n) {
                          px::Int i = px::global_id(0);
                          px::If(i < n, [&] {
                              px::Var<T> seen = best[0];
                              px::While(seen < v[i], [&] {
                                  px::Value<T> got =
                                      px::atomic_compare_exchange(best[0], seen, v[i]);
                                  px::If(got == seen, [&] { px::Break(); });
                                  seen = got;
                              });
                          });
                      });
}

template <class T> void counter_case(T start, bool shared) {
    const size_t n = shared ? 1000 : 3000, groups = (n + kGroup - 1) / kGroup;
    const auto k = counter_kernel<T>(shared);
    CAPTURE(k.ir().name);
    on_every_device(false, [&](const px::Target& t, Mismatches& bad) {
        std::vector<T> init(shared ? groups : 1);
        for (size_t g = 0; g < init.size(); ++g)
            init[g] = T(start + T(g * 1000));
        px::Buffer<T> counts(runtime(), init), ticket(runtime(), n);
        runtime().launch(t, k, px::Grid(n).local_size(kGroup), counts, ticket, int(n)).wait();
        const std::vector<T> got = ticket.to_vector(), final_counts = counts.to_vector();
        // Each element's tickets are its initial count plus 0, 1, ... once each.
        for (size_t e = 0; e < init.size(); ++e) {
            std::vector<T> mine;
            for (size_t i = 0; i < n; ++i)
                if (!shared || i / kGroup == e) mine.push_back(T(got[i] - init[e]));
            std::sort(mine.begin(), mine.end());
            for (size_t j = 0; j < mine.size(); ++j)
                if (mine[j] != T(j)) {
                    bad.add("element " + std::to_string(e) + ": ticket " + std::to_string(j) +
                            " is initial + " + std::to_string(mine[j]));
                    break;
                }
            if (final_counts[e] != T(init[e] + T(mine.size())))
                bad.add("element " + std::to_string(e) + ": final count " +
                        std::to_string(final_counts[e]));
        }
    });
}

template <class T> void cas_max_case(T lo, T hi) {
    const size_t n = 3000;
    const auto k = cas_max_kernel<T>();
    CAPTURE(k.ir().name);
    on_every_device(false, [&](const px::Target& t, Mismatches& bad) {
        std::mt19937_64 rng(5);
        std::vector<T> v(n);
        for (T& x : v)
            x = T(lo + T(rng() % uint64_t(hi - lo)));
        px::Buffer<T> best(runtime(), std::vector<T>{lo}), bv(runtime(), v);
        runtime().launch(t, k, px::Grid(n), best, bv, int(n)).wait();
        const T want = *std::max_element(v.begin(), v.end()), got = best.to_vector()[0];
        if (got != want) bad.add("max " + std::to_string(got) + ", want " + std::to_string(want));
    });
}

} // namespace

TEST_CASE("64-bit compare-exchange: a counter in global and shared memory hands out each ticket "
          "once (exact)") {
    counter_case<uint64_t>((uint64_t(1) << 63) - 1500, false); // crosses 2^63
    counter_case<uint64_t>((uint64_t(1) << 63) - 500, true);
    counter_case<int64_t>((int64_t(1) << 32) - 1500, false); // crosses 2^32
    counter_case<int64_t>(-(int64_t(1) << 40) - 500, true);
}

TEST_CASE("64-bit compare-exchange: a lock-free maximum ends at the largest operand (exact)") {
    cas_max_case<int64_t>(-(int64_t(1) << 50), int64_t(1) << 50);
    cas_max_case<uint64_t>(uint64_t(1) << 40, (uint64_t(1) << 63) + (uint64_t(1) << 60));
}
