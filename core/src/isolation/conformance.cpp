// `plexus-plugin-check conformance` for `plexus doctor --plugin`: on one device of one plugin,
// a small kernel for each capability class the plugin claims (intrinsics.def's classes, and per
// device the subgroup families and matrix types it states), launched on it alone and checked
// element by element against a host reference, so that a claim the device cannot keep is found
// before the plugin is ever routed to. Each class is announced on fd 3 before it runs.
#include <cmath>
#include <cstdlib>
#include <functional>
#include <map>
#include <random>
#include <sstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "isolation/probe.hpp"
#include "plexus/catalog.hpp"
#include "plexus/plexus.hpp"

namespace plexus::detail {

namespace {

// Why a check failed: "" when it passed.
using Check = std::function<std::string(Runtime&, const Target&, const DeviceInfo&)>;

template <class T> std::string mismatch(const char* what, size_t i, T got, T want) {
    return std::string(what) + ": element " + std::to_string(i) + " is " + std::to_string(got) +
           ", expected " + std::to_string(want);
}

// ---- core: indices of every kind, a barrier and a shared array -------------------------------

constexpr int kGroup = 64;

const auto& core_kernel() {
    static const auto k =
        kernel("plexus_check_core", {"in", "out"}, [](In<int32_t> in, Out<int32_t> out) {
            auto tile = shared<int32_t>(kGroup);
            Int lid = local_id(0), g = group_id(0);
            tile[lid] = in[global_id(0)];
            barrier();
            // Each group reversed, tagged with its indices and sizes.
            out[global_id(0)] = tile[local_size(0) - 1 - lid] + g * 1000 + num_groups(0) * 1000000;
        });
    return k;
}

std::string check_core(Runtime& rt, const Target& t, const DeviceInfo&) {
    const int groups = 7, n = groups * kGroup;
    std::vector<int32_t> in(n);
    for (int i = 0; i < n; ++i)
        in[size_t(i)] = i % 977;
    Buffer<int32_t> din(rt, in), dout(rt, size_t(n));
    rt.launch(t, core_kernel(), Grid(size_t(n)).local_size(kGroup), din, dout).wait();
    const auto out = dout.to_vector();
    for (int i = 0; i < n; ++i) {
        const int g = i / kGroup, lid = i % kGroup;
        const int32_t want =
            in[size_t(g * kGroup + kGroup - 1 - lid)] + g * 1000 + groups * 1000000;
        if (out[size_t(i)] != want)
            return mismatch("a group reversed through a shared array", size_t(i), out[size_t(i)],
                            want);
    }
    return {};
}

// ---- atomics: integer add and max on a buffer, float add on a shared array -------------------

const auto& atomics_kernel() {
    static const auto k =
        kernel("plexus_check_atomics", {"in", "bins", "top", "sums", "n"},
               [](In<int32_t> in, InOut<int32_t> bins, InOut<int32_t> top, Out<float> sums, Int n) {
                   auto sum = shared<float>(1);
                   Int i = global_id(0);
                   If(local_id(0) == 0, [&] { sum[0] = 0.0f; });
                   barrier();
                   If(i < n, [&] {
                       atomic_add(bins[in[i] % 16], 1);
                       atomic_max(top[0], in[i]);
                       atomic_add(sum[0], cast<float>(in[i] % 8));
                   });
                   barrier();
                   If(local_id(0) == 0, [&] { sums[group_id(0)] = sum[0]; });
               });
    return k;
}

std::string check_atomics(Runtime& rt, const Target& t, const DeviceInfo&) {
    const int groups = 9, n = groups * kGroup - 5;
    std::mt19937 gen(41);
    std::vector<int32_t> in(static_cast<size_t>(n));
    for (auto& v : in)
        v = int32_t(gen() % 100000);
    Buffer<int32_t> din(rt, in), bins(rt, std::vector<int32_t>(16, 0)),
        top(rt, std::vector<int32_t>(1, -1));
    Buffer<float> sums(rt, size_t(groups));
    rt.launch(t, atomics_kernel(), Grid(size_t(groups * kGroup)).local_size(kGroup), din, bins, top,
              sums, n)
        .wait();
    std::vector<int32_t> want_bins(16, 0);
    std::vector<float> want_sums(size_t(groups), 0.0f);
    int32_t want_top = -1;
    for (int i = 0; i < n; ++i) {
        ++want_bins[size_t(in[size_t(i)] % 16)];
        want_top = std::max(want_top, in[size_t(i)]);
        want_sums[size_t(i / kGroup)] +=
            float(in[size_t(i)] % 8); // small integers: exact in any order
    }
    const auto got_bins = bins.to_vector();
    for (size_t b = 0; b < 16; ++b)
        if (got_bins[b] != want_bins[b])
            return mismatch("atomic_add on a buffer (a histogram)", b, got_bins[b], want_bins[b]);
    if (const int32_t got = top.to_vector()[0]; got != want_top)
        return mismatch("atomic_max on a buffer", 0, got, want_top);
    const auto got_sums = sums.to_vector();
    for (size_t g = 0; g < size_t(groups); ++g)
        if (got_sums[g] != want_sums[g])
            return mismatch("float atomic_add on a shared array", g, got_sums[g], want_sums[g]);
    return {};
}

// ---- math: a few functions of the library, each within a few ulp of the host's -------------

const auto& math_kernel() {
    static const auto k =
        kernel("plexus_check_math", {"x", "out", "n"}, [](In<float> x, Out<float> out, Int n) {
            Int i = global_id(0);
            If(i < n, [&] {
                Float v = x[i];
                out[5 * i] = sqrt(v);
                out[5 * i + 1] = exp(-v);
                out[5 * i + 2] = log(v);
                out[5 * i + 3] = sin(v);
                out[5 * i + 4] = pow(v, 1.5f);
            });
        });
    return k;
}

std::string check_math(Runtime& rt, const Target& t, const DeviceInfo&) {
    const int n = 1000;
    std::vector<float> x(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i)
        x[size_t(i)] = 0.01f + float(i) * 0.0173f;
    Buffer<float> dx(rt, x), dout(rt, size_t(5 * n));
    rt.launch(t, math_kernel(), Grid(size_t(n)), dx, dout, n).wait();
    const auto out = dout.to_vector();
    const char* names[] = {"sqrt", "exp", "log", "sin", "pow"};
    for (int i = 0; i < n; ++i) {
        const double v = x[size_t(i)];
        const double want[] = {std::sqrt(v), std::exp(-v), std::log(v), std::sin(v),
                               std::pow(v, 1.5)};
        for (int f = 0; f < 5; ++f) {
            // 4 ulp of f32, relative, with a floor for results near 0 (sin, log near 1).
            const double got = out[size_t(5 * i + f)],
                         tol = 4 * 1.2e-7 * std::max(std::fabs(want[f]), 1e-3);
            if (!(std::fabs(got - want[f]) <= tol))
                return std::string(names[f]) + "(" + std::to_string(v) + ") is " +
                       std::to_string(got) + ", expected " + std::to_string(want[f]) +
                       " within 4 ulp";
        }
    }
    return {};
}

// ---- subgroups: one kernel per family the device states --------------------------------------

// One kernel per family, so that a device without one family still has the others checked.
// Each records where its work-item sits (subgroup_size, subgroup_id, lane_id: the basic family,
// which every other one comes with) and the result of one operation.
template <class Op>
Kernel<In<int32_t>, Out<int32_t>, Out<int32_t>> subgroup_kernel(const char* name, Op op) {
    return kernel(name, {"x", "pos", "out"},
                  [op](In<int32_t> x, Out<int32_t> pos, Out<int32_t> out) {
                      Int i = global_id(0);
                      pos[3 * i] = subgroup_size();
                      pos[3 * i + 1] = subgroup_id();
                      pos[3 * i + 2] = lane_id();
                      Int v = x[i];
                      out[i] = op(v);
                  });
}

const Kernel<In<int32_t>, Out<int32_t>, Out<int32_t>>& subgroup_family_kernel(int family) {
    static const auto basic = subgroup_kernel("plexus_check_subgroup_basic",
                                              [](const Int& v) { return subgroup_reduce_add(v); });
    static const auto shuffle = subgroup_kernel("plexus_check_subgroup_shuffle", [](const Int& v) {
        return shuffle_xor(v, 1 % subgroup_size());
    });
    static const auto relative = subgroup_kernel("plexus_check_subgroup_relative",
                                                 [](const Int& v) { return shuffle_down(v, 1); });
    static const auto vote = subgroup_kernel("plexus_check_subgroup_ballot", [](const Int& v) {
        return cast<int32_t>(ballot(v % 2 == 0)); // its low 32 bits
    });
    return family == 0 ? basic : family == 1 ? shuffle : family == 2 ? relative : vote;
}

std::string check_subgroup_family(Runtime& rt, const Target& t, int family) {
    const int groups = 4, n = groups * kGroup;
    std::vector<int32_t> x(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i)
        x[size_t(i)] = (i * 37) % 101 - 50;
    Buffer<int32_t> dx(rt, x), dpos(rt, size_t(3 * n)), dout(rt, size_t(n));
    rt.launch(t, subgroup_family_kernel(family), Grid(size_t(n)).local_size(kGroup), dx, dpos, dout)
        .wait();
    const auto pos = dpos.to_vector(), out = dout.to_vector();
    // The members of each subgroup, by lane, from what every work-item said of itself.
    std::map<std::pair<int, int>, std::vector<int>> members;
    for (int i = 0; i < n; ++i) {
        const int size = pos[size_t(3 * i)], id = pos[size_t(3 * i + 1)],
                  lane = pos[size_t(3 * i + 2)];
        if (size < 1 || lane < 0 || lane >= size || id < 0)
            return "work-item " + std::to_string(i) + " says subgroup_size " +
                   std::to_string(size) + ", lane " + std::to_string(lane);
        auto& m = members[{i / kGroup, id}];
        if (m.empty()) m.assign(size_t(size), -1);
        if (int(m.size()) != size || m[size_t(lane)] != -1)
            return "work-items of subgroup " + std::to_string(id) +
                   " disagree on its size or share a lane";
        m[size_t(lane)] = i;
    }
    for (int i = 0; i < n; ++i) {
        const auto& m = members[{i / kGroup, pos[size_t(3 * i + 1)]}];
        const size_t lane = size_t(pos[size_t(3 * i + 2)]), size = m.size();
        int32_t want = 0;
        const char* what = "";
        if (family == 0) {
            what = "subgroup_reduce_add";
            for (int j : m)
                want += x[size_t(j)];
        } else if (family == 1) {
            what = "shuffle_xor";
            want = x[size_t(m[lane ^ (1 % size)])];
        } else if (family == 2) {
            what = "shuffle_down";
            want = lane + 1 < size ? x[size_t(m[lane + 1])] : x[size_t(i)];
        } else {
            what = "ballot";
            uint64_t bits = 0;
            for (size_t l = 0; l < size && l < 64; ++l)
                if (x[size_t(m[l])] % 2 == 0) bits |= uint64_t(1) << l;
            want = int32_t(uint32_t(bits & 0xffffffffu));
        }
        if (out[size_t(i)] != want) return mismatch(what, size_t(i), out[size_t(i)], want);
    }
    return {};
}

// ---- matrix fragments: one 16 x 16 product per input type the device states ------------------

template <class In_, int K> Kernel<In<In_>, In<In_>, Out<float>> fragment_kernel(const char* name) {
    return kernel(name, {"a", "b", "c"}, [](In<In_> a, In<In_> b, Out<float> c) {
        Fragment<In_, 16, 16, K, MatrixA> fa;
        Fragment<In_, 16, 16, K, MatrixB> fb;
        Fragment<float, 16, 16, K, Accumulator> acc;
        fill_fragment(acc, 0.0f);
        load_fragment(fa, a, 0, K);
        load_fragment(fb, b, 0, 16);
        mma(acc, fa, fb);
        store_fragment(acc, c, 0, 16);
    });
}

template <class In_, int K>
std::string check_fragment(Runtime& rt, const Target& t, const DeviceInfo& d,
                           const Kernel<In<In_>, In<In_>, Out<float>>& k) {
    std::vector<In_> a(16 * K), b(K * 16);
    std::vector<float> af(a.size()), bf(b.size());
    for (size_t i = 0; i < a.size(); ++i)
        af[i] = float(int(i * 7 % 5) - 2), a[i] = In_(af[i]);
    for (size_t i = 0; i < b.size(); ++i)
        bf[i] = float(int(i * 3 % 7) - 3), b[i] = In_(bf[i]);
    Buffer<In_> da(rt, a), db(rt, b);
    Buffer<float> dc(rt, size_t(256));
    // One subgroup: the fragment's operations are collective over it.
    rt.launch(t, k, Grid(size_t(d.subgroup_size)).local_size(d.subgroup_size), da, db, dc).wait();
    const auto c = dc.to_vector();
    for (int r = 0; r < 16; ++r)
        for (int col = 0; col < 16; ++col) {
            float want = 0; // small integers: exact
            for (int p = 0; p < K; ++p)
                want += af[size_t(r * K + p)] * bf[size_t(p * 16 + col)];
            if (c[size_t(r * 16 + col)] != want)
                return mismatch("mma", size_t(r * 16 + col), c[size_t(r * 16 + col)], want);
        }
    return {};
}

// Runs one check, reporting it as step `name`: a check the router does not send to the device
// (it lacks what the kernel needs, as the plugin itself says) is skipped, not failed.
void run_check(Runtime& rt, const Target& t, const DeviceInfo& d, const std::string& name,
               const Check& check) {
    report_stage(name);
    try {
        const std::string why = check(rt, t, d);
        report_step(name, why.empty(), why.empty() ? "correct" : why);
    } catch (const Error& e) {
        if (e.code() == ErrorCode::NoBackend) {
            report_step(name, true, "not run: the plugin does not claim it on this device");
            return;
        }
        // The error's first line, and the start of the build log, where the compiler says why.
        std::string message = e.what();
        message = message.substr(0, message.find('\n'));
        std::istringstream log(e.context().build_log);
        int lines = 0;
        for (std::string line; lines < 6 && std::getline(log, line); ++lines)
            message += "\n    " + line;
        report_step(name, false, message);
    }
}

} // namespace

int conformance_main(const std::map<std::string, std::string>& args) {
    UnderTest under = load_under_test(args, "conformance");
    if (under.status) return *under.status;
    if (const Backend* backend = under.backend) {
        Runtime& rt = *under.rt;
        const std::string& name = backend->name();
        const uint32_t device = under.device;
        const DeviceInfo& d = backend->devices()[device];
        const Target t{name, int(device)};
        const uint32_t classes = backend->capability_classes();
        if (classes & PLX_CLASS_CORE) run_check(rt, t, d, "core", check_core);
        if (classes & PLX_CLASS_ATOMICS) run_check(rt, t, d, "atomics", check_atomics);
        if (classes & PLX_CLASS_MATH) run_check(rt, t, d, "math", check_math);
        if (classes & PLX_CLASS_SUBGROUP) {
            // Without subgroup_ops (a plugin older than 1.2) the table alone claims them all.
            const uint32_t ops = d.subgroup_ops.value_or(PLX_SUBGROUP_ALL);
            const std::pair<uint32_t, const char*> families[] = {
                {PLX_SUBGROUP_BASIC, "subgroup basic"},
                {PLX_SUBGROUP_SHUFFLE, "subgroup shuffle"},
                {PLX_SUBGROUP_SHUFFLE_RELATIVE, "subgroup shuffle_relative"},
                {PLX_SUBGROUP_BALLOT, "subgroup ballot"}};
            for (int f = 0; f < 4; ++f)
                if (ops & families[f].first)
                    run_check(rt, t, d, families[f].second,
                              [f](Runtime& r, const Target& tt, const DeviceInfo&) {
                                  return check_subgroup_family(r, tt, f);
                              });
        }
        if (classes & PLX_CLASS_MATRIX) {
            const uint32_t ops = d.matrix_ops.value_or(PLX_MATRIX_ALL);
            static const auto f16 = fragment_kernel<half, 16>("plexus_check_matrix_f16");
            static const auto bf = fragment_kernel<bf16, 16>("plexus_check_matrix_bf16");
            static const auto tf32 = fragment_kernel<float, 8>("plexus_check_matrix_tf32");
            if (ops & PLX_MATRIX_F16)
                run_check(rt, t, d, "matrix f16",
                          [](Runtime& r, const Target& tt, const DeviceInfo& dd) {
                              return check_fragment<half, 16>(r, tt, dd, f16);
                          });
            if (ops & PLX_MATRIX_BF16)
                run_check(rt, t, d, "matrix bf16",
                          [](Runtime& r, const Target& tt, const DeviceInfo& dd) {
                              return check_fragment<bf16, 16>(r, tt, dd, bf);
                          });
            if (ops & PLX_MATRIX_TF32)
                run_check(rt, t, d, "matrix tf32",
                          [](Runtime& r, const Target& tt, const DeviceInfo& dd) {
                              return check_fragment<float, 8>(r, tt, dd, tf32);
                          });
        }
    }
    report_line(R"({"done": true})");
    std::fflush(nullptr);
    std::_Exit(0);
}

} // namespace plexus::detail
