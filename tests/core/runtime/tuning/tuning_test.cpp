// Kernel families and tuning (plexus/family.hpp, plexus/tuning.hpp) on every CPU device of this
// build tree: every variant a device accepts computes the right result (every element against
// the host), the family's checks and the router drop exactly what a device cannot run, a
// measured choice is stored and a second Runtime times nothing, the tuning file round-trips, and
// the buffers a launch may write are as they were after the trials.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include "every_device.hpp"
#include "kernels.hpp"
#include "matmul_mma.hpp"
#include "plexus/plexus.hpp"
#include "problem_util.hpp"
#include "tune/tuner.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>

namespace px = plexus;
using namespace plexus;
using plexus::test::every_device;

namespace {

// c[i] += a[i] * 2 for i < n, `per` consecutive elements a work-item, groups of `group`.
using Axpy = px::Family<px::In<float>, px::InOut<float>, px::Int>;
Axpy axpy_family() {
    auto f =
        px::family("axpy_family", {"a", "c", "n"},
                   [](const px::Tuning& v, px::In<float> a, px::InOut<float> c, px::Int n) {
                       const int per = int(v["per"]);
                       px::Int i0 = px::global_id(0) * per;
                       for (int j = 0; j < per; ++j)
                           px::If(i0 + j < n, [&] { c[i0 + j] = c[i0 + j] + a[i0 + j] * 2.0f; });
                   });
    f.tune("per", {1, 2, 4}).tune("group", {64, 32});
    f.check([](const px::Tuning& v, const px::FamilyContext& c) -> std::string {
        if (v["per"] == 4 && c.shape.at(0) % 4) return "per 4 needs n a multiple of 4";
        return "";
    });
    f.grid([](const px::Tuning& v, const px::FamilyContext& c) {
        const uint64_t items = (uint64_t(c.shape.at(0)) + v["per"] - 1) / v["per"];
        const uint64_t g = uint64_t(v["group"]);
        return px::Grid((items + g - 1) / g * g).local_size(uint32_t(g));
    });
    return f;
}

struct TempDir {
    std::string path;
    TempDir() {
        std::string t = (std::filesystem::temp_directory_path() / "plexus-tuning-XXXXXX").string();
        REQUIRE(mkdtemp(t.data()) != nullptr);
        path = t;
    }
    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
    }
};

Config tuning_config(const std::string& cache, bool tuning = true) {
    Config c = test::hermetic_config();
    c.cache_dir = cache;
    c.tuning = tuning;
    c.tuning_budget_ms = 60000; // every candidate is timed
    return c;
}

// Runs the axpy family once on `t` and checks c = c0 + 2 a for every element.
TuningReport run_axpy(Runtime& rt, const Target& t, const Axpy& f, int n) {
    std::mt19937 g(static_cast<unsigned>(n));
    std::uniform_real_distribution<float> d(-4, 4);
    std::vector<float> a(static_cast<size_t>(n)), c0(static_cast<size_t>(n));
    for (size_t i = 0; i < a.size(); ++i) {
        a[i] = d(g);
        c0[i] = d(g);
    }
    px::Buffer<float> ba(rt, a), bc(rt, c0);
    rt.launch(t, f, {n}, ba, bc, n).wait();
    std::vector<float> c = bc.to_vector();
    for (size_t i = 0; i < c.size(); ++i)
        REQUIRE_MESSAGE(c[i] == c0[i] + a[i] * 2.0f, "element " << i);
    return rt.tuning_reports().back();
}

} // namespace

TEST_CASE("every variant of a family is correct on every device; checks drop what they name") {
    const Axpy f = axpy_family();
    REQUIRE(f.def().variants().size() == 6);
    for (const test::TestDevice& d : every_device()) {
        CAPTURE(d.label);
        Runtime& rt = test::hermetic_runtime();
        for (const int n : {1000, 1001}) {
            const px::Shape shape = {n};
            const FamilyContext ctx{d.target.backend, *d.info, shape};
            for (const px::Tuning& v : f.def().variants()) {
                CAPTURE(v.text());
                const std::string why = f.def().reject(v, ctx);
                CHECK((why != "") == (v["per"] == 4 && n % 4 != 0));
                if (!why.empty()) continue;
                std::vector<float> a(static_cast<size_t>(n)), c0(static_cast<size_t>(n));
                for (int i = 0; i < n; ++i) {
                    a[size_t(i)] = float(i % 17) - 8.0f;
                    c0[size_t(i)] = float(i % 5);
                }
                px::Buffer<float> ba(rt, a), bc(rt, c0);
                rt.launch(d.target, f.variant(v), f.def().grid(v, ctx), ba, bc, n).wait();
                std::vector<float> c = bc.to_vector();
                for (int i = 0; i < n; ++i)
                    REQUIRE_MESSAGE(c[size_t(i)] == c0[size_t(i)] + a[size_t(i)] * 2.0f,
                                    "element " << i);
            }
        }
    }
}

TEST_CASE("a measured choice is stored; a second Runtime times nothing; trials leave no trace") {
    TempDir cache;
    const Axpy f = axpy_family();
    for (const test::TestDevice& d : every_device()) {
        CAPTURE(d.label);
        {
            Runtime rt(tuning_config(cache.path));
            // InOut c: had a trial's result stayed, c would hold c0 + 2a more than once.
            TuningReport r = run_axpy(rt, d.target, f, 1000);
            CHECK(r.source == "measured");
            CHECK(r.backend == d.target.backend);
            CHECK(r.bucket == px::Shape{1024, 8});
            size_t timed = 0;
            for (const TuningCandidate& c : r.candidates)
                timed += c.dropped.empty();
            CHECK(timed == 6);
            CHECK(rt.tuning_launches() >= 12); // at least two timed launches each
            // The same shape again: the choice this Runtime made, no report, no tuning.
            const size_t reports = rt.tuning_reports().size(), launches = rt.tuning_launches();
            run_axpy(rt, d.target, f, 1000);
            CHECK(rt.tuning_reports().size() == reports);
            CHECK(rt.tuning_launches() == launches);
            // Another shape of the same bucket takes the stored choice where it fits.
            TuningReport same = run_axpy(rt, d.target, f, 1016);
            CHECK(same.source == "stored");
            CHECK(same.chosen == r.chosen);
            // Another bucket, n not a multiple of 4: measured again, the per 4 variants drop.
            TuningReport odd = run_axpy(rt, d.target, f, 2047);
            CHECK(odd.source == "measured");
            CHECK(odd.bucket == px::Shape{2048, 1});
            size_t dropped = 0;
            for (const TuningCandidate& c : odd.candidates)
                dropped += c.dropped == "per 4 needs n a multiple of 4";
            CHECK(dropped == 2);
        }
        Runtime again(tuning_config(cache.path));
        TuningReport r = run_axpy(again, d.target, f, 1000);
        CHECK(r.source == "stored");
        CHECK(again.tuning_launches() == 0);
    }
}

TEST_CASE("the tuning file round-trips; a bad one names the place and stores nothing") {
    if (every_device().empty()) return;
    const test::TestDevice d = every_device().front();
    TempDir first, second;
    const Axpy f = axpy_family();
    px::Tuning chosen;
    {
        Runtime rt(tuning_config(first.path));
        chosen = run_axpy(rt, d.target, f, 2048).chosen;
    }
    const std::string file = first.path + "/exported.json";
    CHECK(px::export_tunings(first.path, file) == 1);
    CHECK(px::import_tunings(second.path, file) == 1);
    std::vector<TuningRecord> stored = px::stored_tunings(second.path);
    REQUIRE(stored.size() == 1);
    CHECK(stored[0].family == "axpy_family");
    CHECK(stored[0].variant == chosen);
    CHECK(stored[0].candidates.size() == 6);
    {
        Runtime rt(tuning_config(second.path));
        TuningReport r = run_axpy(rt, d.target, f, 2048);
        CHECK(r.source == "stored");
        CHECK(r.chosen == chosen);
        CHECK(rt.tuning_launches() == 0);
    }
    // A record whose variant is not an object: the error names the file and the JSON path.
    TempDir third;
    const std::string bad = third.path + "/bad.json";
    std::ofstream(bad) << R"({"plexus_tuning": 1, "records": [)"
                       << px::detail::tuning_json(stored[0]).dump() << R"(, {"family": "x"}]})";
    try {
        px::import_tunings(third.path + "/cache", bad);
        FAIL("a bad tuning file was imported");
    } catch (const px::Error& e) {
        CHECK(e.code() == px::ErrorCode::InvalidConfig);
        CHECK(std::string(e.what()).find("records[1]") != std::string::npos);
        CHECK(std::string(e.what()).find(bad) != std::string::npos);
    }
    CHECK(px::stored_tunings(third.path + "/cache").empty());
}

TEST_CASE("tuning off takes the heuristic and times nothing") {
    TempDir cache;
    const Axpy f = axpy_family();
    for (const test::TestDevice& d : every_device()) {
        CAPTURE(d.label);
        Runtime rt(tuning_config(cache.path, false));
        TuningReport r = run_axpy(rt, d.target, f, 1000);
        CHECK(r.source == "heuristic");
        CHECK(r.chosen == px::Tuning{{"per", 1}, {"group", 64}}); // the first values
        CHECK(rt.tuning_launches() == 0);
        CHECK(px::stored_tunings(cache.path).empty());
    }
}

// Whether the router keeps the traced variant on the device for the grid.
bool router_keeps(Runtime& rt, const ir::Kernel& k, const px::Grid& grid,
                  const test::TestDevice& d) {
    for (const Candidate& c : rt.explain(k, &grid))
        if (c.kept && c.backend == d.target.backend && int(c.device_index) == d.target.device)
            return true;
    return false;
}

// Calls run(v, grid) for each variant of the family the device accepts at the shape: the
// family's check passes and the router keeps the traced variant there (a device without
// subgroups is the router's to drop). The family's check must reject every variant
// `must_reject(v)` names. Returns how many ran.
template <class MustReject, class Run>
size_t each_accepted(Runtime& rt, const px::detail::FamilyDef& family, const test::TestDevice& d,
                     const px::Shape& shape, MustReject must_reject, Run run) {
    const FamilyContext ctx{d.target.backend, *d.info, shape};
    size_t ran = 0;
    for (const px::Tuning& v : family.variants()) {
        CAPTURE(d.label);
        CAPTURE(family.variant_name(v));
        const std::string why = family.reject(v, ctx);
        if (must_reject(v)) CHECK(!why.empty());
        if (!why.empty()) continue;
        const px::Grid grid = family.grid(v, ctx);
        if (!router_keeps(rt, *family.kernel(v), grid, d)) continue;
        run(v, grid);
        ++ran;
    }
    return ran;
}

// For the row families (px::lib): a variant whose registers cannot hold a row of `cols`, which
// their check must reject.
auto row_overflows(int64_t cols) {
    return [cols](const px::Tuning& v) { return v["per"] > 0 && cols > v["per"] * v["width"]; };
}

// matmul_f16 / bf16 / tf32: every variant each device accepts at a shape every path fits,
// against a double-precision product, every element.
TEST_CASE("every variant of the matmul families a device accepts is correct") {
    const int m = 40, n = 48, k = 56;
    std::mt19937 g(7);
    const std::vector<float> af = px::samples::random_floats(size_t(m) * k, g),
                             bf = px::samples::random_floats(size_t(k) * n, g);
    // Inputs rounded to T, and c against their product in double, every element.
    auto each_variant = [&]<class T>(const px::samples::MmaFamily<T>& family, bool tf32) {
        Runtime& rt = test::hermetic_runtime();
        std::vector<T> a(af.begin(), af.end()), b(bf.begin(), bf.end());
        px::Buffer<T> ba(rt, a), bb(rt, b);
        std::vector<double> want(size_t(m) * n, 0), mag(size_t(m) * n, 0);
        for (int r = 0; r < m; ++r)
            for (int p = 0; p < k; ++p)
                for (int c = 0; c < n; ++c) {
                    const double prod =
                        double(float(a[size_t(r) * k + p])) * double(float(b[size_t(p) * n + c]));
                    want[size_t(r) * n + c] += prod;
                    mag[size_t(r) * n + c] += std::fabs(prod);
                }
        for (const test::TestDevice& d : every_device()) {
            const size_t ran = each_accepted(
                rt, family.def(), d, {m, n, k},
                [&](const px::Tuning& v) { return v["wide"] == 1 && d.info->subgroup_size != 32; },
                [&](const px::Tuning& v, const px::Grid& grid) {
                    px::Buffer<float> bc(rt, size_t(m) * n);
                    rt.launch(d.target, family.variant(v), grid, ba, bb, bc, m, n, k).wait();
                    const std::vector<float> c = bc.to_vector();
                    for (size_t i = 0; i < c.size(); ++i)
                        REQUIRE_MESSAGE(std::fabs(c[i] - want[i]) <=
                                            px::samples::matmul_mma_bound(k, mag[i], tf32),
                                        "element " << i << ": got " << c[i] << ", want "
                                                   << want[i]);
                });
            MESSAGE(family.name() << " on " << d.label << ": " << ran << " variants checked");
        }
    };
    each_variant(px::samples::matmul_f16(), false);
    each_variant(px::samples::matmul_bf16(), false);
    each_variant(px::samples::matmul_tf32(), true);
}

// softmax_f32 / bf16: every variant each device accepts, at shapes that make each kind of variant
// fit (rows in registers of 32 and of 256 work-items, three passes, a last group half full),
// every element against the softmax in double (f32: 1e-5 relative; bf16: one bf16 ulp, 2^-7).
TEST_CASE("every variant of the softmax families a device accepts is correct") {
    auto each_variant = [&]<class T>(const px::samples::SoftmaxFamily<T>& family) {
        Runtime& rt = test::hermetic_runtime();
        for (const auto& [rows, cols] : {std::pair{37, 1000}, {5, 3000}, {9, 77}}) {
            std::mt19937 g(uint32_t(rows * cols));
            std::uniform_real_distribution<float> d(-8, 8);
            std::vector<T> x(size_t(rows) * cols);
            for (T& v : x)
                v = T(d(g));
            std::vector<double> want(x.size());
            for (int r = 0; r < rows; ++r) {
                double m = -INFINITY, sum = 0;
                for (int c = 0; c < cols; ++c)
                    m = std::max(m, double(float(x[size_t(r) * cols + c])));
                for (int c = 0; c < cols; ++c)
                    sum += std::exp(double(float(x[size_t(r) * cols + c])) - m);
                for (int c = 0; c < cols; ++c)
                    want[size_t(r) * cols + c] =
                        std::exp(double(float(x[size_t(r) * cols + c])) - m) / sum;
            }
            const double rel = std::is_same_v<T, float> ? 1e-5 : std::ldexp(1.0, -7);
            px::Buffer<T> bx(rt, x);
            for (const test::TestDevice& dev : every_device()) {
                CAPTURE(cols);
                const size_t ran = each_accepted(
                    rt, family.def(), dev, {rows, cols}, row_overflows(cols),
                    [&](const px::Tuning& v, const px::Grid& grid) {
                        px::Buffer<T> by(rt, x.size());
                        rt.launch(dev.target, family.variant(v), grid, bx, by, rows, cols).wait();
                        const std::vector<T> y = by.to_vector();
                        for (size_t i = 0; i < y.size(); ++i) {
                            const double w = double(float(T(float(want[i]))));
                            REQUIRE_MESSAGE(std::fabs(double(float(y[i])) - w) <=
                                                rel * std::max(w, 1e-30) + 1e-30,
                                            "element " << i << ": got " << float(y[i]) << ", want "
                                                       << w);
                        }
                    });
                CHECK(ran > 0);
                MESSAGE(family.name() << " " << rows << " x " << cols << " on " << dev.label << ": "
                                      << ran << " variants checked");
            }
        }
    };
    each_variant(px::samples::softmax_f32());
    each_variant(px::samples::softmax_bf16());
}

// layernorm_f32 / bf16: every variant each device accepts, at the softmax test's shapes, every
// element against the layer normalization in double (f32 sums of up to 3000 values: within
// 1e-4 of the terms' size; bf16: and one bf16 ulp).
TEST_CASE("every variant of the layernorm families a device accepts is correct") {
    auto each_variant = [&]<class T>(const px::lib::LayerNormFamily<T>& family) {
        Runtime& rt = test::hermetic_runtime();
        const float eps = 1e-5f;
        for (const auto& [rows, cols] : {std::pair{37, 1000}, {5, 3000}, {9, 77}}) {
            std::mt19937 g(uint32_t(rows * cols + 1));
            std::uniform_real_distribution<float> d(-4, 4), w(-1, 1);
            std::vector<T> x(size_t(rows) * cols);
            for (T& v : x)
                v = T(d(g));
            std::vector<float> gamma(static_cast<size_t>(cols)), beta(static_cast<size_t>(cols));
            for (int c = 0; c < cols; ++c)
                gamma[size_t(c)] = w(g), beta[size_t(c)] = w(g);
            std::vector<double> want(x.size()), bound(x.size());
            for (int r = 0; r < rows; ++r) {
                double mean = 0, var = 0;
                for (int c = 0; c < cols; ++c)
                    mean += double(float(x[size_t(r) * cols + c]));
                mean /= cols;
                for (int c = 0; c < cols; ++c) {
                    const double dv = double(float(x[size_t(r) * cols + c])) - mean;
                    var += dv * dv;
                }
                const double inv = 1 / std::sqrt(var / cols + eps);
                for (int c = 0; c < cols; ++c) {
                    const size_t i = size_t(r) * cols + c;
                    const double term = (double(float(x[i])) - mean) * inv * gamma[size_t(c)];
                    want[i] = double(float(T(float(term + beta[size_t(c)]))));
                    bound[i] = 1e-4 * (std::fabs(term) + std::fabs(beta[size_t(c)]) + 1) +
                               (std::is_same_v<T, float> ? 0 : std::ldexp(std::fabs(want[i]), -7));
                }
            }
            px::Buffer<T> bx(rt, x);
            px::Buffer<float> bg(rt, gamma), bb(rt, beta);
            for (const test::TestDevice& dev : every_device()) {
                CAPTURE(cols);
                const size_t ran = each_accepted(
                    rt, family.def(), dev, {rows, cols}, row_overflows(cols),
                    [&](const px::Tuning& v, const px::Grid& grid) {
                        px::Buffer<T> by(rt, x.size());
                        rt.launch(dev.target, family.variant(v), grid, bx, bg, bb, by, rows, cols,
                                  eps)
                            .wait();
                        const std::vector<T> y = by.to_vector();
                        for (size_t i = 0; i < y.size(); ++i)
                            REQUIRE_MESSAGE(std::fabs(double(float(y[i])) - want[i]) <= bound[i],
                                            "element " << i << ": got " << float(y[i]) << ", want "
                                                       << want[i]);
                    });
                CHECK(ran > 0);
            }
        }
    };
    each_variant(px::lib::layernorm_f32());
    each_variant(px::lib::layernorm_bf16());
}

// The message of f()'s InvalidArgument error ("no error" when it throws none).
template <class F> std::string invalid_argument(F&& f) {
    try {
        f();
    } catch (const px::Error& e) {
        CHECK(e.code() == px::ErrorCode::InvalidArgument);
        return std::string(e.what());
    }
    return std::string("no error");
}

TEST_CASE("px::lib functions check their buffers and shape, naming the argument") {
    Runtime& rt = test::hermetic_runtime();
    px::Buffer<float> x(rt, 100), y(rt, 50), g(rt, 10), b(rt, 9);
    CHECK(invalid_argument([&] { px::lib::softmax(rt, x, y, 10, 10); }).find("y has 50 elements") !=
          std::string::npos);
    CHECK(invalid_argument([&] { px::lib::softmax(rt, x, x, 0, 10); }).find("must be positive") !=
          std::string::npos);
    CHECK(invalid_argument([&] {
              px::lib::layernorm(rt, x, g, b, x, 10, 10);
          }).find("beta has 9 elements, the shape needs 10") != std::string::npos);
}

namespace {

// c = op(a) op(b) in double, and each element's sum_p |products|, for a and b as stored (a m x k
// or, transposed, k x m; b k x n or n x k).
struct Product {
    std::vector<double> want, mag;
    Product(const std::vector<float>& a, const std::vector<float>& b, int m, int n, int k, bool ta,
            bool tb)
        : want(size_t(m) * n, 0), mag(size_t(m) * n, 0) {
        for (int r = 0; r < m; ++r)
            for (int p = 0; p < k; ++p) {
                const double av = a[ta ? size_t(p) * m + r : size_t(r) * k + p];
                for (int c = 0; c < n; ++c) {
                    const double prod = av * double(b[tb ? size_t(c) * k + p : size_t(p) * n + c]);
                    want[size_t(r) * n + c] += prod;
                    mag[size_t(r) * n + c] += std::fabs(prod);
                }
            }
    }
};

// The inputs as T, and back as the floats the device multiplies.
template <class T> std::vector<float> rounded(const std::vector<float>& x) {
    std::vector<float> out;
    for (float v : x)
        out.push_back(float(T(v)));
    return out;
}

} // namespace

// gemm_f32 / tf32 / f16 / bf16 (px::lib): every variant each device accepts, plexus's kernels
// and the backend's library routine, at each transposition, every element against the product
// in double. A routine the device's backend lists routines for but does not offer (no CBLAS;
// no f16 GEMM in CBLAS) is an Unsupported error naming it, and the router then passes over it.
TEST_CASE("every variant of the GEMM families a device accepts is correct, transposes included") {
    const int m = 40, n = 48, k = 56;
    std::mt19937 g(11);
    const std::vector<float> af = px::samples::random_floats(size_t(m) * k, g),
                             bf = px::samples::random_floats(size_t(k) * n, g);
    auto each_variant = [&]<class T>(const px::lib::GemmFamily<T>& family, bool tf32) {
        Runtime& rt = test::hermetic_runtime();
        std::vector<T> a(af.begin(), af.end()), b(bf.begin(), bf.end());
        px::Buffer<T> ba(rt, a), bb(rt, b);
        for (const test::TestDevice& d : every_device()) {
            size_t ran = 0, routines = 0;
            for (int t = 0; t < 4; ++t) {
                const int ta = t & 1, tb = t >> 1;
                CAPTURE(ta);
                CAPTURE(tb);
                const Product want(rounded<T>(af), rounded<T>(bf), m, n, k, ta, tb);
                ran += each_accepted(
                    rt, family.def(), d, {m, n, k, ta, tb},
                    [&](const px::Tuning& v) { return v["vendor"] == 0 && (ta || tb); },
                    [&](const px::Tuning& v, const px::Grid& grid) {
                        px::Buffer<float> bc(rt, size_t(m) * n);
                        try {
                            rt.launch(d.target, family.variant(v), grid, ba, bb, bc, m, n, k, ta,
                                      tb)
                                .wait();
                        } catch (const px::Error& e) {
                            // Only the routine may be missing, and it says which.
                            REQUIRE(v["vendor"] == 1);
                            CHECK(e.code() == px::ErrorCode::Unsupported);
                            CHECK(std::string(e.what()).find("routine " + family.name()) !=
                                  std::string::npos);
                            return;
                        }
                        routines += v["vendor"] == 1;
                        const std::vector<float> c = bc.to_vector();
                        for (size_t i = 0; i < c.size(); ++i)
                            REQUIRE_MESSAGE(std::fabs(c[i] - want.want[i]) <=
                                                px::samples::matmul_mma_bound(k, want.mag[i], tf32),
                                            "element " << i << ": got " << c[i] << ", want "
                                                       << want.want[i]);
                    });
            }
            MESSAGE(family.name() << " on " << d.label << ": " << ran << " variants, " << routines
                                  << " of them the library routine");
        }
    };
    each_variant(px::lib::gemm_f32(), false);
    each_variant(px::lib::gemm_tf32(), true);
    each_variant(px::lib::gemm_f16(), false);
    each_variant(px::lib::gemm_bf16(), false);
}

// px::lib::matmul end to end on every device (tuning off: the heuristic's variant, the routine
// where the operands are transposed and the device's backend offers it, else transposed copies
// for plexus's kernels), with each epilogue: every element against the double product, then
// bias and activation in double. Tolerance: the product's bound, plus 2^-20 of the result's size
// for the epilogue's own rounding (the bias sum, tanh).
TEST_CASE("px::lib::matmul: transposes, bias and activations, every device, every element") {
    TempDir tmp;
    Runtime rt(tuning_config(tmp.path, false));
    const int m = 33, n = 20, k = 17;
    std::mt19937 g(5);
    const std::vector<float> af = px::samples::random_floats(size_t(m) * k, g),
                             bf = px::samples::random_floats(size_t(k) * n, g),
                             biasf = px::samples::random_floats(size_t(n), g);
    px::Buffer<float> bias(rt, biasf);
    auto check = [&]<class T>(const test::TestDevice& d, bool ta, bool tb, bool with_bias,
                              px::lib::Activation act, bool tf32) {
        CAPTURE(d.label);
        CAPTURE(ta);
        CAPTURE(tb);
        CAPTURE(with_bias);
        CAPTURE(int(act));
        std::vector<T> a(af.begin(), af.end()), b(bf.begin(), bf.end());
        px::Buffer<T> ba(rt, a), bb(rt, b);
        px::Buffer<float> bc(rt, size_t(m) * n);
        px::lib::Matmul p{m, n, k, ta, tb, with_bias ? &bias : nullptr, act, tf32};
        // plexus's kernels on the matrix units need subgroup operations (PoCL here has none):
        // without them only a routine runs the product, and where there is none, nothing.
        const bool mma = tf32 || !std::same_as<T, float>;
        const bool subgroups =
            d.info->subgroup_ops && (*d.info->subgroup_ops & PLX_SUBGROUP_BASIC) != 0;
        try {
            px::lib::matmul(rt, ba, bb, bc, p, d.target).wait();
        } catch (const px::Error& e) {
            REQUIRE_MESSAGE(e.code() == px::ErrorCode::NoBackend, e.what());
            REQUIRE(mma);
            REQUIRE(!subgroups);
            MESSAGE("no variant runs on " << d.label << " (no subgroups, no routine)");
            return;
        }
        const Product want(rounded<T>(af), rounded<T>(bf), m, n, k, ta, tb);
        const std::vector<float> c = bc.to_vector();
        for (size_t i = 0; i < c.size(); ++i) {
            double x = want.want[i] + (with_bias ? biasf[i % size_t(n)] : 0.0);
            if (act == px::lib::Activation::Relu) x = std::max(x, 0.0);
            if (act == px::lib::Activation::Gelu)
                x = 0.5 * x * (1 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
            const double tol = 1.2 * px::samples::matmul_mma_bound(k, want.mag[i], tf32) +
                               std::ldexp(std::fabs(x) + 1, -20);
            REQUIRE_MESSAGE(std::fabs(c[i] - x) <= tol,
                            "element " << i << ": got " << c[i] << ", want " << x);
        }
    };
    using px::lib::Activation;
    for (const test::TestDevice& d : every_device()) {
        for (int t = 0; t < 4; ++t)
            check.template operator()<float>(d, t & 1, t >> 1, t == 3, Activation(t % 3), false);
        check.template operator()<float>(d, true, false, true, Activation::Gelu, true);
        check.template operator()<px::half>(d, false, false, true, Activation::Relu, false);
        check.template operator()<px::half>(d, true, true, false, Activation::None, false);
        check.template operator()<px::bf16>(d, false, true, true, Activation::Gelu, false);
    }
}

TEST_CASE("px::lib::matmul checks its buffers and sizes, naming the argument") {
    Runtime& rt = test::hermetic_runtime();
    px::Buffer<float> a(rt, 12), b(rt, 11), c(rt, 12), bias(rt, 3);
    CHECK(invalid_argument([&] {
              px::lib::matmul(rt, a, b, c, {3, 4, 4});
          }).find("px::lib::matmul: b has 11 elements, the shape needs 16") != std::string::npos);
    CHECK(invalid_argument([&] {
              px::lib::matmul(rt, a, a, c, {3, 4, 3, false, false, &bias});
          }).find("bias has 3 elements, the shape needs 4") != std::string::npos);
    CHECK(invalid_argument([&] {
              px::lib::matmul(rt, a, a, c, {-1, 4, 3});
          }).find("got -1, 4, 3") != std::string::npos);
}

// scan_* / sum_* (px::lib): every variant each device accepts, one level (a few groups), every
// element against the sums in double: int32 exact, f32 within (number of terms) 2^-24 of the
// sum of magnitudes.
TEST_CASE("every variant of the scan and sum families a device accepts is correct") {
    Runtime& rt = test::hermetic_runtime();
    const int n = 3 * 256 + 17, groups = 4;
    std::mt19937 g(13);
    const std::vector<float> xf = px::samples::random_floats(size_t(n), g);
    std::vector<int32_t> xi;
    for (float v : xf)
        xi.push_back(int32_t(v * 1000));
    auto each_variant = [&]<class T>(const px::lib::ScanFamily<T>& scan,
                                     const px::lib::SumFamily<T>& sum, const std::vector<T>& x) {
        px::Buffer<T> bx(rt, x);
        std::vector<double> prefix(x.size()), mag(x.size());
        for (size_t i = 0; i < x.size(); ++i) {
            prefix[i] = (i ? prefix[i - 1] : 0.0) + double(x[i]);
            mag[i] = (i ? mag[i - 1] : 0.0) + std::fabs(double(x[i]));
        }
        auto close = [&](T got, double want, double magnitude, double terms) {
            if constexpr (std::same_as<T, int32_t>)
                return double(got) == want;
            else
                return std::fabs(double(got) - want) <= terms * 0x1p-24 * magnitude + 1e-7;
        };
        const auto none = [](const px::Tuning&) { return false; };
        for (const test::TestDevice& d : every_device()) {
            size_t ran = each_accepted(
                rt, scan.def(), d, {n}, none, [&](const px::Tuning& v, const px::Grid& grid) {
                    px::Buffer<T> y(rt, size_t(n)), sums(rt, size_t(groups));
                    rt.launch(d.target, scan.variant(v), grid, bx, y, sums, n).wait();
                    const std::vector<T> got = y.to_vector();
                    for (size_t i = 0; i < got.size(); ++i) {
                        const size_t first = i / 256 * 256;
                        const double want = prefix[i] - (first ? prefix[first - 1] : 0.0);
                        REQUIRE_MESSAGE(close(got[i], want, mag[i], 256),
                                        "element " << i << ": got " << got[i] << ", want " << want);
                    }
                });
            ran += each_accepted(
                rt, sum.def(), d, {n}, none, [&](const px::Tuning& v, const px::Grid& grid) {
                    const size_t groups_run = grid.global[0] / 256;
                    px::Buffer<T> totals(rt, groups_run);
                    rt.launch(d.target, sum.variant(v), grid, bx, totals, n).wait();
                    double total = 0;
                    for (T t : totals.to_vector())
                        total += double(t);
                    REQUIRE_MESSAGE(close(T(total), prefix.back(), mag.back(), n),
                                    "the groups' totals add up to " << total);
                });
            MESSAGE(scan.name() << " and " << sum.name() << " on " << d.label << ": " << ran
                                << " variants checked");
        }
    };
    each_variant(px::lib::scan_f32(), px::lib::sum_f32(), xf);
    each_variant(px::lib::scan_i32(), px::lib::sum_i32(), xi);
}

// px::lib::inclusive_scan and sum end to end on every device (tuning off), at sizes of one
// group, one group and one, several levels of totals: every element.
TEST_CASE("px::lib::inclusive_scan and sum, every device, every element") {
    TempDir tmp;
    Runtime rt(tuning_config(tmp.path, false));
    for (const test::TestDevice& d : every_device()) {
        const bool slow = d.target.backend == "interp";
        for (int n : slow ? std::vector<int>{1, 257, 5000} : std::vector<int>{1, 256, 257, 70001}) {
            CAPTURE(d.label);
            CAPTURE(n);
            std::mt19937 g(static_cast<unsigned>(n));
            std::uniform_int_distribution<int32_t> di(-1000, 1000);
            std::vector<int32_t> xi(static_cast<size_t>(n));
            for (auto& v : xi)
                v = di(g);
            const std::vector<float> xf = px::samples::random_floats(size_t(n), g);
            px::Buffer<int32_t> bi(rt, xi), yi(rt, size_t(n)), si(rt, 1);
            px::Buffer<float> bf(rt, xf), yf(rt, size_t(n)), sf(rt, 1);
            px::lib::inclusive_scan(rt, bi, yi, n, d.target);
            px::lib::inclusive_scan(rt, bf, yf, n, d.target);
            px::lib::sum(rt, bi, si, n, d.target);
            px::lib::sum(rt, bf, sf, n, d.target).wait();
            const std::vector<int32_t> got_i = yi.to_vector();
            const std::vector<float> got_f = yf.to_vector();
            int64_t prefix_i = 0;
            double prefix_f = 0, mag = 0;
            for (size_t i = 0; i < size_t(n); ++i) {
                prefix_i += xi[i];
                prefix_f += xf[i];
                mag += std::fabs(xf[i]);
                REQUIRE_MESSAGE(got_i[i] == prefix_i, "int32 element " << i);
                REQUIRE_MESSAGE(
                    std::fabs(got_f[i] - prefix_f) <= double(i + 1) * 0x1p-24 * mag + 1e-7,
                    "f32 element " << i << ": got " << got_f[i] << ", want " << prefix_f);
            }
            CHECK(si.to_vector()[0] == prefix_i);
            CHECK(std::fabs(sf.to_vector()[0] - prefix_f) <= double(n) * 0x1p-24 * mag + 1e-7);
        }
    }
    Runtime& checked = test::hermetic_runtime();
    px::Buffer<float> x(checked, 10), y(checked, 5);
    CHECK(invalid_argument([&] {
              px::lib::inclusive_scan(checked, x, y, 10);
          }).find("px::lib::inclusive_scan: y has 5 elements, the shape needs 10") !=
          std::string::npos);
    CHECK(invalid_argument([&] { px::lib::sum(checked, x, y, -2); }).find("got -2") !=
          std::string::npos);
}

TEST_CASE("a GEMM family launched with a shape of the wrong length says what the shape is") {
    Runtime& rt = test::hermetic_runtime();
    px::Buffer<float> a(rt, 16), b(rt, 16), c(rt, 16);
    try {
        rt.launch(Target{}, px::lib::gemm_f32(), {4, 4, 4}, a, b, c, 4, 4, 4, 0, 0).wait();
        FAIL("no error");
    } catch (const px::Error& e) {
        CHECK(e.code() == px::ErrorCode::NoBackend);
        CHECK(std::string(e.what()).find("a GEMM family's shape is {m, n, k, trans_a, trans_b}, "
                                         "this one has 3 sizes") != std::string::npos);
    }
}
