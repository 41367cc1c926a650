// px::lib's sums and prefix sums (plexus/lib.hpp): groups of kGroup work-items, each group's
// values combined through subgroup operations (subgroups 1) or through shared memory alone (0).
// sum: each work-item adds its strided share, each group writes its total, and the same kernel
// adds the totals in one group. inclusive_scan: each group scans its kGroup values and writes
// its total; the totals are scanned the same way, recursively, and added back.
#include "plexus/lib.hpp"

#include "lib/args.hpp"

#include "plexus/kernel.hpp"
#include "plexus/subgroup.hpp"

#include <algorithm>
#include <memory>

namespace plexus::lib {

namespace {

namespace px = plexus;

constexpr int kGroup = 256;     // work-items of a group
constexpr int kSumGroups = 512; // at most this many groups add up a sum's first pass

// Groups of a sum's first pass over n values: enough that each work-item adds a few.
int64_t sum_groups(int64_t n) {
    return std::clamp<int64_t>((n + 8 * kGroup - 1) / (8 * kGroup), 1, kSumGroups);
}

// The families' heuristic: subgroups where the device has subgroup operations.
px::Tuning subgroups_where_present(const px::FamilyContext& c) {
    const bool subgroups =
        c.device.subgroup_ops && (*c.device.subgroup_ops & PLX_SUBGROUP_BASIC) != 0;
    return px::Tuning{{"subgroups", subgroups ? 1 : 0}};
}

template <class T> const char* suffix() {
    return std::same_as<T, float> ? "f32" : "i32";
}

// An inclusive scan of one value per work-item across the group, in shared memory (a
// Hillis-Steele scan over two halves, so that no step reads what it writes); with subgroups,
// each subgroup scans its values first and only the subgroups' totals go through shared memory.
template <class T> px::Value<T> group_scan(const px::Value<T>& value, bool subgroups) {
    auto totals = px::shared<T>(2 * kGroup);
    px::Int lid = px::local_id(0);
    px::Var<T> x = value;
    px::Int slot = lid; // where this work-item's partial goes, and whose total it adds
    if (subgroups) {
        x = px::subgroup_scan_inclusive_add(value);
        totals[lid] = T(0);
        px::barrier();
        px::If(px::lane_id() == px::subgroup_size() - 1, [&] { totals[px::subgroup_id()] = x; });
    } else {
        totals[lid] = x;
    }
    px::barrier();
    px::Int src = 0;
    px::Int offset = 1;
    px::While(offset < kGroup, [&] {
        px::Int dst = kGroup - src;
        px::Var<T> v = totals[src + lid];
        px::If(lid >= offset, [&] { v += totals[src + lid - offset]; });
        totals[dst + lid] = v;
        px::barrier();
        src = dst;
        offset = offset * 2;
    });
    if (!subgroups) return px::Value<T>(totals[src + slot]);
    px::Int sg = px::subgroup_id();
    return x +
           px::select(sg > 0, px::Value<T>(totals[src + px::max(sg - 1, 0)]), px::Value<T>(T(0)));
}

template <class T> ScanFamily<T> make_scan() {
    auto f = px::family(
        std::string("scan_") + suffix<T>(), {"x", "y", "sums", "n"},
        [](const px::Tuning& v, px::In<T> x, px::Out<T> y, px::Out<T> sums, px::Int n) {
            px::require_work_group_size(kGroup);
            px::Int i = px::global_id(0);
            px::Value<T> value =
                px::select(i < n, px::Value<T>(x[px::min(i, n - 1)]), px::Value<T>(T(0)));
            px::Value<T> scanned = group_scan<T>(value, v["subgroups"] == 1);
            px::If(i < n, [&] { y[i] = scanned; });
            px::If(px::local_id(0) == kGroup - 1, [&] { sums[px::group_id(0)] = scanned; });
        });
    f.tune("subgroups", {1, 0});
    f.grid([](const px::Tuning&, const px::FamilyContext& c) {
        const size_t groups = size_t((c.shape.at(0) + kGroup - 1) / kGroup);
        return Grid(groups * kGroup).local_size(kGroup);
    });
    f.heuristic(subgroups_where_present);
    return f;
}

template <class T> SumFamily<T> make_sum() {
    auto f = px::family(
        std::string("sum_") + suffix<T>(), {"x", "totals", "n"},
        [](const px::Tuning& v, px::In<T> x, px::Out<T> totals, px::Int n) {
            px::require_work_group_size(kGroup);
            px::Var<T> share = T(0);
            px::For(px::global_id(0), n, px::global_size(0), [&](px::Int i) { share += x[i]; });
            // The group's total is the last work-item's inclusive scan.
            px::Value<T> scanned = group_scan<T>(share, v["subgroups"] == 1);
            px::If(px::local_id(0) == kGroup - 1, [&] { totals[px::group_id(0)] = scanned; });
        });
    f.tune("subgroups", {1, 0});
    f.grid([](const px::Tuning&, const px::FamilyContext& c) {
        return Grid(size_t(sum_groups(c.shape.at(0))) * kGroup).local_size(kGroup);
    });
    f.heuristic(subgroups_where_present);
    return f;
}

// y = prefix sums of x's first n values; `sums` gets each group's total.
template <class T>
Event scan_level(const ScanFamily<T>& family, const AddFamily<T>& add, Runtime& rt, Buffer<T>& x,
                 Buffer<T>& y, int n, const Target& target) {
    const int groups = (n + kGroup - 1) / kGroup;
    Buffer<T> sums(rt, size_t(groups));
    Event e = rt.launch(target, family, Shape{n}, x, y, sums, n);
    if (groups == 1) return e;
    Buffer<T> offsets(rt, size_t(groups));
    scan_level(family, add, rt, sums, offsets, groups, target);
    return rt.launch(target, add, Grid(size_t(groups) * kGroup).local_size(kGroup), y, offsets, n);
}

template <class T>
Event scan_of(const ScanFamily<T>& family, Runtime& rt, Buffer<T>& x, Buffer<T>& y, int64_t n,
              const Target& target) {
    const int count = detail::count_arg("inclusive_scan", n);
    detail::need("inclusive_scan", "x", x.size(), size_t(n));
    detail::need("inclusive_scan", "y", y.size(), size_t(n));
    if (n == 0) return Event();
    return scan_level(family, scan_add<T>(), rt, x, y, count, target);
}

template <class T>
Event sum_of(const SumFamily<T>& family, Runtime& rt, Buffer<T>& x, Buffer<T>& out, int64_t n,
             const Target& target) {
    const int count = detail::count_arg("sum", n);
    detail::need("sum", "x", x.size(), size_t(n));
    detail::need("sum", "out", out.size(), 1);
    const int64_t groups = sum_groups(n);
    Buffer<T> totals(rt, size_t(groups));
    rt.launch(target, family, Shape{n}, x, totals, count);
    return rt.launch(target, family, Shape{groups}, totals, out, int(groups));
}

} // namespace

template <class T> const AddFamily<T>& scan_add() {
    static const auto k =
        px::kernel(std::string("scan_add_") + suffix<T>(), {"y", "offsets", "n"},
                   [](px::InOut<T> y, px::In<T> offsets, px::Int n) {
                       px::Int i = px::global_id(0);
                       px::Int g = px::group_id(0);
                       px::If(i < n && g > 0, [&] { y[i] = y[i] + offsets[g - 1]; });
                   });
    return k;
}
template const AddFamily<int32_t>& scan_add();
template const AddFamily<float>& scan_add();

const ScanFamily<int32_t>& scan_i32() {
    static const auto f = make_scan<int32_t>();
    return f;
}
const ScanFamily<float>& scan_f32() {
    static const auto f = make_scan<float>();
    return f;
}
const SumFamily<int32_t>& sum_i32() {
    static const auto f = make_sum<int32_t>();
    return f;
}
const SumFamily<float>& sum_f32() {
    static const auto f = make_sum<float>();
    return f;
}

Event inclusive_scan(Runtime& rt, Buffer<int32_t>& x, Buffer<int32_t>& y, int64_t n,
                     const Target& target) {
    return scan_of(scan_i32(), rt, x, y, n, target);
}
Event inclusive_scan(Runtime& rt, Buffer<float>& x, Buffer<float>& y, int64_t n,
                     const Target& target) {
    return scan_of(scan_f32(), rt, x, y, n, target);
}
Event sum(Runtime& rt, Buffer<int32_t>& x, Buffer<int32_t>& out, int64_t n, const Target& target) {
    return sum_of(sum_i32(), rt, x, out, n, target);
}
Event sum(Runtime& rt, Buffer<float>& x, Buffer<float>& out, int64_t n, const Target& target) {
    return sum_of(sum_f32(), rt, x, out, n, target);
}

} // namespace plexus::lib
