// Subgroup operations on every backend found, through the Runtime: each kernel records, per
// work-item, where the device put it (subgroup size, index, lane) and the result of every
// operation on random inputs; the host checks the layout the docs promise (subgroups of
// consecutive linear ids, the last one maybe partial) and recomputes every result from it.
// Inputs are small integers (also as floats), so every sum is exact in any order and every
// check is exact. A device that lacks a family of operations must be dropped by the router
// with the family named.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include "every_device.hpp"
#include "plexus/catalog.hpp"
#include "plexus/plexus.hpp"

#include <algorithm>
#include <cstring>
#include <functional>
#include <random>

namespace px = plexus;

namespace {

px::Runtime& runtime() {
    return px::test::hermetic_runtime();
}

// Group shapes: whole subgroups for every width up to 64, and 77 (a partial last subgroup
// wherever the width is above 1).
constexpr int kGroups = 3;
constexpr int kShapes[] = {64, 77};

// One launch's results, checked work-item by work-item.
struct Results {
    std::vector<int32_t> pos;              // size, id, lane per work-item
    std::vector<std::vector<int>> members; // per work-item: its subgroup's work-items
    size_t bad = 0;
    std::string first;
    template <class T> void expect(const char* what, size_t i, T got, T want) {
        if (std::memcmp(&got, &want, sizeof got) == 0) return;
        if (bad++ == 0)
            first = std::string(what) + " of work-item " + std::to_string(i) + ": got " +
                    std::to_string(double(got)) + ", want " + std::to_string(double(want));
    }
    size_t lane(size_t i) const { return size_t(pos[3 * i + 2]); }
};

// Checks that the layout is the documented one and fills `members`; false when it is not.
bool layout(Results& r, int local) {
    const size_t n = r.pos.size() / 3;
    r.members.assign(n, {});
    for (size_t base = 0; base < n; base += size_t(local)) {
        const int width = r.pos[3 * base]; // subgroup 0's size: the width, or the whole group
        for (int lid = 0; lid < local; ++lid) {
            const size_t i = base + size_t(lid);
            const int size = r.pos[3 * i], id = r.pos[3 * i + 1], lane = r.pos[3 * i + 2];
            const int want_size = width < 1 ? 0 : std::min(width, local - lid / width * width);
            if (width < 1 || id != lid / width || lane != lid % width || size != want_size) {
                r.bad = 1;
                r.first = "work-item " + std::to_string(i) + " (local id " + std::to_string(lid) +
                          "): size " + std::to_string(size) + " id " + std::to_string(id) +
                          " lane " + std::to_string(lane) + "; subgroup 0 has " +
                          std::to_string(width) + " lanes";
                return false;
            }
            for (int l = 0; l < size; ++l)
                r.members[i].push_back(int(base) + id * width + l);
        }
    }
    return true;
}

// Runs `test` on every device with each shape. A device without `feature` must refuse the
// launch with a NoBackend error that names the feature.
void on_every_device(uint32_t feature, const std::string& kernel,
                     const std::function<void(const px::Target&, int local, Results&)>& test) {
    for (const px::test::TestDevice& d : px::test::every_device()) {
        const auto& ops = d.info->subgroup_ops;
        const bool has = !ops || (*ops & feature) == feature;
        for (int local : kShapes) {
            Results r;
            try {
                test(d.target, local, r);
                if (!has)
                    r.bad = 1, r.first = "it ran on a device without " +
                                         std::string(px::subgroup_feature_name(feature));
            } catch (const px::Error& e) {
                const bool named =
                    std::string(e.what()).find("the device lacks subgroup") != std::string::npos;
                r.bad = has || e.code() != px::ErrorCode::NoBackend || !named;
                r.first = std::string("error: ") + e.what();
            }
            INFO(kernel << " on " << d.label << ", groups of " << local << ": " << r.first);
            CHECK(r.bad == 0);
        }
    }
}

template <class T> const char* suffix() {
    if constexpr (std::is_same_v<T, int32_t>)
        return "i32";
    else if constexpr (std::is_same_v<T, uint32_t>)
        return "u32";
    else if constexpr (std::is_same_v<T, int64_t>)
        return "i64";
    else if constexpr (std::is_same_v<T, uint64_t>)
        return "u64";
    else if constexpr (std::is_same_v<T, float>)
        return "f32";
    else
        return "f64";
}

template <class T> std::vector<T> small_values(size_t n, std::mt19937& g) {
    std::uniform_int_distribution<int> d(std::is_signed_v<T> ? -1000 : 0, 1000);
    std::vector<T> v(n);
    for (auto& x : v)
        x = T(d(g));
    return v;
}

// Each work-item's position, recorded by every kernel below.
void record_position(px::Out<int32_t>& pos, const px::Int& i) {
    pos[3 * i] = px::subgroup_size();
    pos[3 * i + 1] = px::subgroup_id();
    pos[3 * i + 2] = px::lane_id();
}

// ---- reductions, scans and votes (the basic family, cl_khr_subgroups) ---------------------

template <class T> const auto& basic_kernel() {
    static const auto k =
        px::kernel(std::string("sg_basic_") + suffix<T>(), {"x", "pred", "pos", "out", "votes"},
                   [](px::In<T> x, px::In<int32_t> pred, px::Out<int32_t> pos, px::Out<T> out,
                      px::Out<int32_t> votes) {
                       px::Int i = px::global_id(0);
                       record_position(pos, i);
                       px::Var<T> v = x[i];
                       out[5 * i] = px::subgroup_reduce_add(v);
                       out[5 * i + 1] = px::subgroup_reduce_min(v);
                       out[5 * i + 2] = px::subgroup_reduce_max(v);
                       out[5 * i + 3] = px::subgroup_scan_inclusive_add(v);
                       out[5 * i + 4] = px::subgroup_scan_exclusive_add(v);
                       px::Value<bool> p = pred[i] != 0;
                       votes[2 * i] = px::select(px::any(p), px::Int(1), 0);
                       votes[2 * i + 1] = px::select(px::all(p), px::Int(1), 0);
                   });
    return k;
}

// Random bits, but the first 40 work-items set: some subgroups all set, others mixed.
std::vector<int32_t> predicates(size_t n, std::mt19937& g) {
    std::vector<int32_t> p(n);
    for (size_t i = 0; i < n; ++i)
        p[i] = i < 40 ? 1 : int32_t(g() & 1);
    return p;
}

template <class T> void basic() {
    std::mt19937 g(5);
    on_every_device(PLX_SUBGROUP_BASIC, basic_kernel<T>().name(),
                    [&](const px::Target& t, int local, Results& r) {
                        const size_t n = size_t(kGroups) * size_t(local);
                        const auto x = small_values<T>(n, g);
                        const auto p = predicates(n, g);
                        px::Buffer<T> bx(runtime(), x), bout(runtime(), 5 * n);
                        px::Buffer<int32_t> bp(runtime(), p), bpos(runtime(), 3 * n),
                            bvotes(runtime(), 2 * n);
                        runtime()
                            .launch(t, basic_kernel<T>(), px::Grid(n).local_size(size_t(local)), bx,
                                    bp, bpos, bout, bvotes)
                            .wait();
                        r.pos = bpos.to_vector();
                        if (!layout(r, local)) return;
                        const auto out = bout.to_vector();
                        const auto votes = bvotes.to_vector();
                        for (size_t i = 0; i < n; ++i) {
                            const auto& m = r.members[i];
                            T sum = 0, lo = x[size_t(m[0])], hi = lo, inclusive = 0, exclusive = 0;
                            int any = 0, all = 1;
                            for (size_t l = 0; l < m.size(); ++l) {
                                const T v = x[size_t(m[l])];
                                sum = T(sum + v), lo = std::min(lo, v), hi = std::max(hi, v);
                                if (l < r.lane(i)) exclusive = T(exclusive + v);
                                if (l <= r.lane(i)) inclusive = T(inclusive + v);
                                any |= p[size_t(m[l])], all &= p[size_t(m[l])];
                            }
                            r.expect("reduce_add", i, out[5 * i], sum);
                            r.expect("reduce_min", i, out[5 * i + 1], lo);
                            r.expect("reduce_max", i, out[5 * i + 2], hi);
                            r.expect("scan_inclusive_add", i, out[5 * i + 3], inclusive);
                            r.expect("scan_exclusive_add", i, out[5 * i + 4], exclusive);
                            r.expect("any", i, votes[2 * i], any);
                            r.expect("all", i, votes[2 * i + 1], all);
                        }
                    });
}

// ---- shuffle and shuffle_xor (cl_khr_subgroup_shuffle) -----------------------------------

template <class T> const auto& shuffle_kernel() {
    static const auto k =
        px::kernel(std::string("sg_shuffle_") + suffix<T>(), {"x", "pos", "out", "k", "mask"},
                   [](px::In<T> x, px::Out<int32_t> pos, px::Out<T> out, px::Int k, px::Int mask) {
                       px::Int i = px::global_id(0);
                       record_position(pos, i);
                       px::Var<T> v = x[i];
                       out[2 * i] = px::shuffle(v, (px::lane_id() + k) % px::subgroup_size());
                       out[2 * i + 1] = px::shuffle_xor(v, mask % px::subgroup_size());
                   });
    return k;
}

template <class T> void shuffles() {
    std::mt19937 g(6);
    on_every_device(PLX_SUBGROUP_SHUFFLE, shuffle_kernel<T>().name(),
                    [&](const px::Target& t, int local, Results& r) {
                        const size_t n = size_t(kGroups) * size_t(local);
                        const auto x = small_values<T>(n, g);
                        // A mask keeps its lane inside a whole subgroup of a power-of-two width;
                        // the partial shape gets 0 (the lane itself).
                        const int k = 5, mask = local == 64 ? 3 : 0;
                        px::Buffer<T> bx(runtime(), x), bout(runtime(), 2 * n);
                        px::Buffer<int32_t> bpos(runtime(), 3 * n);
                        runtime()
                            .launch(t, shuffle_kernel<T>(), px::Grid(n).local_size(size_t(local)),
                                    bx, bpos, bout, k, mask)
                            .wait();
                        r.pos = bpos.to_vector();
                        if (!layout(r, local)) return;
                        const auto out = bout.to_vector();
                        for (size_t i = 0; i < n; ++i) {
                            const auto& m = r.members[i];
                            const size_t lane = r.lane(i), size = m.size();
                            r.expect("shuffle", i, out[2 * i], x[size_t(m[(lane + k) % size])]);
                            r.expect("shuffle_xor", i, out[2 * i + 1],
                                     x[size_t(m[lane ^ (size_t(mask) % size)])]);
                        }
                    });
}

// ---- shuffle_up and shuffle_down (cl_khr_subgroup_shuffle_relative) -----------------------

template <class T> const auto& relative_kernel() {
    static const auto k =
        px::kernel(std::string("sg_relative_") + suffix<T>(), {"x", "pos", "out", "delta"},
                   [](px::In<T> x, px::Out<int32_t> pos, px::Out<T> out, px::Int delta) {
                       px::Int i = px::global_id(0);
                       record_position(pos, i);
                       px::Var<T> v = x[i];
                       out[2 * i] = px::shuffle_up(v, delta);
                       out[2 * i + 1] = px::shuffle_down(v, delta);
                   });
    return k;
}

template <class T> void relative() {
    std::mt19937 g(7);
    on_every_device(PLX_SUBGROUP_SHUFFLE_RELATIVE, relative_kernel<T>().name(),
                    [&](const px::Target& t, int local, Results& r) {
                        const size_t n = size_t(kGroups) * size_t(local);
                        const auto x = small_values<T>(n, g);
                        const int delta = local == 64 ? 3 : 1;
                        px::Buffer<T> bx(runtime(), x), bout(runtime(), 2 * n);
                        px::Buffer<int32_t> bpos(runtime(), 3 * n);
                        runtime()
                            .launch(t, relative_kernel<T>(), px::Grid(n).local_size(size_t(local)),
                                    bx, bpos, bout, delta)
                            .wait();
                        r.pos = bpos.to_vector();
                        if (!layout(r, local)) return;
                        const auto out = bout.to_vector();
                        for (size_t i = 0; i < n; ++i) {
                            const auto& m = r.members[i];
                            const size_t lane = r.lane(i), d = size_t(delta);
                            r.expect("shuffle_up", i, out[2 * i],
                                     lane >= d ? x[size_t(m[lane - d])] : x[i]);
                            r.expect("shuffle_down", i, out[2 * i + 1],
                                     lane + d < m.size() ? x[size_t(m[lane + d])] : x[i]);
                        }
                    });
}

// ---- ballot (cl_khr_subgroup_ballot) -------------------------------------------------------

const auto& ballot_kernel() {
    static const auto k =
        px::kernel("sg_ballot", {"pred", "pos", "out"},
                   [](px::In<int32_t> pred, px::Out<int32_t> pos, px::Out<uint64_t> out) {
                       px::Int i = px::global_id(0);
                       record_position(pos, i);
                       out[i] = px::ballot(pred[i] != 0);
                   });
    return k;
}

// ---- operand types the catalog does not have, through the kernel language ----------------

// half through f32, int8 through i32, a float4 lane by lane: exact, as the docs say.
const auto& widened_kernel() {
    static const auto k = px::kernel(
        "sg_widened", {"h", "b", "v", "pos", "oh", "ob", "ov"},
        [](px::In<px::half> h, px::In<int8_t> b, px::In<px::Vec<float, 4>> v, px::Out<int32_t> pos,
           px::Out<px::half> oh, px::Out<int8_t> ob, px::Out<px::Vec<float, 4>> ov) {
            px::Int i = px::global_id(0);
            record_position(pos, i);
            oh[i] = px::shuffle_down(px::Var<px::half>(h[i]), 1);
            ob[i] = px::subgroup_reduce_add(px::Var<int8_t>(b[i]));
            ov[i] = px::subgroup_scan_inclusive_add(px::Var<px::Vec<float, 4>>(v[i]));
        });
    return k;
}

} // namespace

TEST_CASE_TEMPLATE("reductions, scans, any and all", T, int32_t, uint32_t, int64_t, uint64_t, float,
                   double) {
    basic<T>();
}

TEST_CASE_TEMPLATE("shuffle and shuffle_xor", T, int32_t, uint32_t, int64_t, uint64_t, float,
                   double) {
    shuffles<T>();
}

TEST_CASE_TEMPLATE("shuffle_up and shuffle_down", T, int32_t, uint32_t, int64_t, uint64_t, float,
                   double) {
    relative<T>();
}

TEST_CASE("ballot") {
    std::mt19937 g(8);
    on_every_device(
        PLX_SUBGROUP_BALLOT, "sg_ballot", [&](const px::Target& t, int local, Results& r) {
            const size_t n = size_t(kGroups) * size_t(local);
            const auto p = predicates(n, g);
            px::Buffer<int32_t> bp(runtime(), p), bpos(runtime(), 3 * n);
            px::Buffer<uint64_t> bout(runtime(), n);
            runtime()
                .launch(t, ballot_kernel(), px::Grid(n).local_size(size_t(local)), bp, bpos, bout)
                .wait();
            r.pos = bpos.to_vector();
            if (!layout(r, local)) return;
            const auto out = bout.to_vector();
            for (size_t i = 0; i < n; ++i) {
                uint64_t want = 0;
                // Lanes past 64 (an OpenCL CPU device's subgroup may be a whole row of the group)
                // have no bit.
                for (size_t l = 0; l < std::min<size_t>(r.members[i].size(), 64); ++l)
                    want |= uint64_t(p[size_t(r.members[i][l])] != 0) << l;
                r.expect("ballot", i, out[i], want);
            }
        });
}

TEST_CASE("half, int8 and float4 operands go through the catalog's types exactly") {
    std::mt19937 g(9);
    const uint32_t needs = PLX_SUBGROUP_BASIC | PLX_SUBGROUP_SHUFFLE_RELATIVE;
    on_every_device(needs, "sg_widened", [&](const px::Target& t, int local, Results& r) {
        const size_t n = size_t(kGroups) * size_t(local);
        std::vector<px::half> h(n);
        std::vector<int8_t> b(n);
        std::vector<px::Vec<float, 4>> v(n);
        std::uniform_int_distribution<int> d(-100, 100);
        for (size_t i = 0; i < n; ++i) {
            h[i] = px::half(float(d(g)) / 8);
            b[i] = int8_t(d(g));
            for (int l = 0; l < 4; ++l)
                v[i][l] = float(d(g));
        }
        px::Buffer<px::half> bh(runtime(), h), oh(runtime(), n);
        px::Buffer<int8_t> bb(runtime(), b), ob(runtime(), n);
        px::Buffer<px::Vec<float, 4>> bv(runtime(), v), ov(runtime(), n);
        px::Buffer<int32_t> bpos(runtime(), 3 * n);
        runtime()
            .launch(t, widened_kernel(), px::Grid(n).local_size(size_t(local)), bh, bb, bv, bpos,
                    oh, ob, ov)
            .wait();
        r.pos = bpos.to_vector();
        if (!layout(r, local)) return;
        const auto gh = oh.to_vector();
        const auto gb = ob.to_vector();
        const auto gv = ov.to_vector();
        for (size_t i = 0; i < n; ++i) {
            const auto& m = r.members[i];
            const size_t lane = r.lane(i);
            r.expect("half shuffle_down", i, float(gh[i]),
                     float(lane + 1 < m.size() ? h[size_t(m[lane + 1])] : h[i]));
            int8_t sum = 0;
            px::Vec<float, 4> scan{};
            for (size_t l = 0; l < m.size(); ++l) {
                sum = int8_t(sum + b[size_t(m[l])]); // wraps at 8 bits, as in the IR
                if (l <= lane)
                    for (int c = 0; c < 4; ++c)
                        scan[c] += v[size_t(m[l])][c];
            }
            r.expect("int8 reduce_add", i, gb[i], sum);
            for (int c = 0; c < 4; ++c)
                r.expect("float4 scan", i, gv[i][c], scan[c]);
        }
    });
}

TEST_CASE("a device's missing subgroup family drops it, and plexus explain says which") {
    // The kernel of ballot needs only the ballot family; every device either has it or is
    // dropped with the family's name in the reason.
    for (const px::Candidate& c : runtime().explain(ballot_kernel().ir())) {
        const px::DeviceInfo& d = c.backend_ptr->devices()[c.device_index];
        const bool has = !d.subgroup_ops || (*d.subgroup_ops & PLX_SUBGROUP_BALLOT);
        INFO(c.backend << ":" << c.device_index << ": " << c.reason);
        CHECK(c.kept == has);
        if (!has) CHECK(c.reason.find("cl_khr_subgroup_ballot") != std::string::npos);
    }
}
