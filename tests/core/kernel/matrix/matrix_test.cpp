// Matrix fragments (px::Fragment, fill / load / store / mma) on every device of this build
// tree: each combination of input type, accumulator type and layout, through global and
// shared memory, checked element by element against a host reference on random inputs; and
// what must fail: fragments under divergent control flow, operands that differ within a
// subgroup, mismatched mma operands, and a device that lacks a type; and the samples built on
// them at shapes that reach each of their copy paths.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include "every_device.hpp"

#include "matmul_mma.hpp"
#include "plexus/catalog.hpp"
#include "plexus/plexus.hpp"
#include "problems.hpp"

#include <algorithm>
#include <cmath>
#include <random>

namespace px = plexus;

namespace {

// Leading dimension of every tile in memory, in elements: rows 64 bytes apart or more, and
// each tile starts 16 elements in, so every fragment access is aligned as wmma asks.
constexpr int LD = 32, OFFSET = 16;

template <class L> constexpr bool col_major = std::is_same_v<L, px::ColMajor>;
// Element (r, c) of a tile stored with layout L.
template <class L> size_t at(int r, int c) {
    return size_t(OFFSET + (col_major<L> ? c * LD + r : r * LD + c));
}

// d = a x b + c and e = a x b + 0.5, with A through shared memory and B, C, D, E in global.
template <class T, class Acc, int K, class LA, class LB, class LC, class LD_>
const auto& fragment_kernel(const std::string& name) {
    static const auto k =
        px::kernel(name, {"a", "b", "c", "d", "e"},
                   [](px::In<T> a, px::In<T> b, px::In<Acc> c, px::Out<Acc> d, px::Out<Acc> e) {
                       auto tile = px::shared<T>(OFFSET + 16 * LD);
                       px::For(px::local_id(0), OFFSET + 16 * LD, px::local_size(0),
                               [&](px::Int i) { tile[i] = a[i]; });
                       px::barrier();
                       px::Fragment<T, 16, 16, K, px::MatrixA, LA> fa;
                       px::Fragment<T, 16, 16, K, px::MatrixB, LB> fb;
                       px::Fragment<Acc, 16, 16, K, px::Accumulator> acc, filled;
                       px::load_fragment(fa, tile, OFFSET, LD);
                       px::load_fragment(fb, b, OFFSET, LD);
                       px::load_fragment(acc, c, OFFSET, LD, LC{});
                       px::mma(acc, fa, fb);
                       px::store_fragment(acc, d, OFFSET, LD, LD_{});
                       px::fill_fragment(filled, 0.5f);
                       px::mma(filled, fa, fb, filled);
                       px::store_fragment(filled, e, OFFSET, LD, px::RowMajor{});
                   });
    return k;
}

template <class T> std::vector<T> random_values(size_t n, std::mt19937& g) {
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    std::vector<T> v(n);
    for (auto& x : v)
        x = T(dist(g));
    return v;
}

template <class T, class Acc, int K, class LA, class LB, class LC, class LD_>
void check_combination(const std::string& name) {
    const auto& kernel = fragment_kernel<T, Acc, K, LA, LB, LC, LD_>(name);
    const size_t size = size_t(OFFSET + 16 * LD);
    std::mt19937 g(7);
    const std::vector<T> a = random_values<T>(size, g), b = random_values<T>(size, g);
    const std::vector<Acc> c = random_values<Acc>(size, g);
    // Products of f16 and bf16 are exact in f32; tf32 rounds the inputs to 11 bits; an f16
    // accumulator rounds the result once more.
    const bool tf32 = std::is_same_v<T, float>, half_acc = std::is_same_v<Acc, px::half>;
    for (const px::test::TestDevice& dev : px::test::every_device()) {
        auto& rt = px::test::hermetic_runtime();
        px::Buffer<T> ba(rt, a), bb(rt, b);
        px::Buffer<Acc> bc(rt, c), bd(rt, std::vector<Acc>(size, Acc(0.0f))),
            be(rt, std::vector<Acc>(size, Acc(0.0f)));
        const uint32_t width = dev.info->subgroup_size; // one group = one subgroup
        try {
            rt.launch(dev.target, kernel, px::Grid(width).local_size(width), ba, bb, bc, bd, be)
                .wait();
        } catch (const px::Error& e) {
            const auto& ops = dev.info->matrix_ops;
            INFO(name << " on " << dev.label << ": " << e.what());
            CHECK(ops);
            CHECK((*ops & px::matrix_feature(kernel.ir().fragments[0].intrinsic())) == 0);
            CHECK(std::string(e.what()).find("the device lacks matrix fragments") !=
                  std::string::npos);
            continue;
        }
        auto d = bd.host(), e = be.host();
        size_t bad = 0, checked = 0;
        std::string first;
        for (int i = 0; i < 16; ++i)
            for (int j = 0; j < 16; ++j) {
                double sum = 0, mag = 0;
                for (int p = 0; p < K; ++p) {
                    const double prod =
                        double(float(a[at<LA>(i, p)])) * double(float(b[at<LB>(p, j)]));
                    sum += prod;
                    mag += std::fabs(prod);
                }
                const double want_d = sum + double(float(c[at<LC>(i, j)])), want_e = sum + 0.5;
                const double bound =
                    (tf32 ? std::ldexp(mag, -9) : (K + 16) * std::ldexp(mag, -23)) +
                    (half_acc ? std::ldexp(mag + 2.0, -10) : 0.0) + 1e-6;
                const double got_d = double(float(d[at<LD_>(i, j)])),
                             got_e = double(float(e[at<px::RowMajor>(i, j)]));
                for (auto [got, want, what] :
                     {std::tuple{got_d, want_d, "d"}, std::tuple{got_e, want_e, "e"}}) {
                    ++checked;
                    if (!(std::fabs(got - want) <= bound) && bad++ == 0)
                        first = std::string(what) + "[" + std::to_string(i) + "][" +
                                std::to_string(j) + "]: got " + std::to_string(got) + ", want " +
                                std::to_string(want);
                }
            }
        // Outside the tiles the outputs stay as they were: the stores wrote the tile only.
        for (size_t x = 0; x < size_t(OFFSET); ++x)
            bad += float(d[x]) != 0.0f || float(e[x]) != 0.0f;
        INFO(name << " on " << dev.label << ": " << bad << " of " << checked << " bad; " << first);
        CHECK(checked == 512);
        CHECK(bad == 0);
    }
}

// A warpgroup accumulator, 64 x 64 over k = 32, from swizzled shared tiles at offsets (A from
// column 16, B from row 8), two mma_shared (the first left in flight), a bounded store of 60 x
// 50: one group of four subgroups, launched as four rows of the subgroup width (PoCL makes
// subgroups of the group's x dimension).
constexpr int WG_K = 32, WG_N = 64, WG_ROWS = 60, WG_COLS = 50;
template <class T> const auto& warpgroup_kernel(const std::string& name) {
    static const auto k =
        px::kernel(name, {"a", "b", "c"}, [](px::In<T> a, px::In<T> b, px::Out<float> c) {
            auto as = px::shared<T>(64, 64, px::Swizzle128{});
            auto bs = px::shared<T>(48, WG_N, px::Swizzle128{});
            px::Int tid = px::local_id(1) * px::local_size(0) + px::local_id(0);
            px::Int items = px::local_size(0) * px::local_size(1);
            px::For(tid, 64 * WG_K, items, [&](px::Int e) { as[e / WG_K][16 + e % WG_K] = a[e]; });
            px::For(tid, WG_K * WG_N, items, [&](px::Int e) { bs[8 + e / WG_N][e % WG_N] = b[e]; });
            px::barrier();
            px::Fragment<float, 64, WG_N, 16, px::Accumulator> acc;
            px::fill_fragment(acc, 0.5f);
            px::mma_shared<16>(acc, as, 0, 16, bs, 8, 0, 1);
            px::mma_shared<16>(acc, as, 0, 32, bs, 24, 0);
            px::store_fragment(acc, c, 2 * WG_N + 3, WG_N, WG_ROWS, WG_COLS);
        });
    return k;
}

template <class T> void check_warpgroup(const std::string& name) {
    const auto& kernel = warpgroup_kernel<T>(name);
    std::mt19937 g(5);
    const std::vector<T> a = random_values<T>(64 * WG_K, g), b = random_values<T>(WG_K * WG_N, g);
    const size_t size = size_t(66 * WG_N + 3);
    const float sentinel = -7.0f;
    for (const px::test::TestDevice& dev : px::test::every_device()) {
        auto& rt = px::test::hermetic_runtime();
        px::Buffer<T> ba(rt, a), bb(rt, b);
        px::Buffer<float> bc(rt, std::vector<float>(size, sentinel));
        const uint32_t width = dev.info->subgroup_size; // one group: a warpgroup
        try {
            rt.launch(dev.target, kernel, px::Grid(width, 4).local_size(width, 4), ba, bb, bc)
                .wait();
        } catch (const px::Error& e) {
            INFO(name << " on " << dev.label << ": " << e.what());
            CHECK_FALSE(
                px::samples::drop_reason(e, dev.target).empty()); // only a device the router drops
            continue;
        }
        // A group of two subgroups is half a warpgroup: refused, naming the rule.
        try {
            rt.launch(dev.target, kernel, px::Grid(width, 2).local_size(width, 2), ba, bb, bc)
                .wait();
            FAIL("a group of half a warpgroup ran on " << dev.label);
        } catch (const px::Error& e) {
            CHECK(e.code() == px::ErrorCode::InvalidArgument);
            CHECK(std::string(e.what()).find("whole warpgroups") != std::string::npos);
        }
        const auto c = bc.host();
        size_t bad = 0;
        std::string first;
        for (size_t x = 0; x < size; ++x) {
            const long at = long(x) - (2 * WG_N + 3);
            const long r = at < 0 ? -1 : at / WG_N, col = at < 0 ? -1 : at % WG_N;
            double want = sentinel, bound = 0;
            if (r >= 0 && r < WG_ROWS && col < WG_COLS) {
                double sum = 0.5, mag = 0.5;
                for (int p = 0; p < WG_K; ++p) {
                    const double prod = double(float(a[size_t(r * WG_K + p)])) *
                                        double(float(b[size_t(p * WG_N + col)]));
                    sum += prod;
                    mag += std::fabs(prod);
                }
                want = sum;
                bound = (WG_K + 16) * std::ldexp(mag, -23) + 1e-6; // exact products, f32 sums
            }
            if (!(std::fabs(double(c[x]) - want) <= bound) && bad++ == 0)
                first = "c[" + std::to_string(x) + "] (row " + std::to_string(r) + ", column " +
                        std::to_string(col) + "): got " + std::to_string(c[x]) + ", want " +
                        std::to_string(want);
        }
        INFO(name << " on " << dev.label << ": " << bad << " of " << size << " bad; " << first);
        CHECK(bad == 0);
    }
}

} // namespace

TEST_CASE("f16 x f16 + f32 on every device (A row-major in shared, B col-major, C row, D col)") {
    check_combination<px::half, float, 16, px::RowMajor, px::ColMajor, px::RowMajor, px::ColMajor>(
        "mx_f16_f32");
}
TEST_CASE("f16 x f16 + f16 on every device (A col-major, B row-major, C col, D row)") {
    check_combination<px::half, px::half, 16, px::ColMajor, px::RowMajor, px::ColMajor,
                      px::RowMajor>("mx_f16_f16");
}
TEST_CASE("bf16 x bf16 + f32 on every device (all row-major)") {
    check_combination<px::bf16, float, 16, px::RowMajor, px::RowMajor, px::RowMajor, px::RowMajor>(
        "mx_bf16_f32");
}
TEST_CASE("tf32 x tf32 + f32 (m16n16k8) on every device (A and B col-major, D col)") {
    check_combination<float, float, 8, px::ColMajor, px::ColMajor, px::RowMajor, px::ColMajor>(
        "mx_tf32_f32");
}

namespace {
px::Error invalid_kernel(const std::function<void()>& trace) {
    try {
        trace();
    } catch (const px::Error& e) {
        return e;
    }
    FAIL("the kernel was accepted");
    return px::Error(px::ErrorCode::Internal, "");
}
bool says(const px::Error& e, const std::string& what) {
    return std::string(e.what()).find(what) != std::string::npos;
}
} // namespace

TEST_CASE("a fragment operation under divergent control flow or with a per-work-item operand is an "
          "InvalidKernel") {
    px::Error divergent = invalid_kernel([] {
        px::kernel("mx_divergent", {"a"}, [](px::In<px::half> a) {
            px::Fragment<px::half, 16, 16, 16, px::MatrixA> f;
            px::If(px::local_id(0) < 3, [&] { px::load_fragment(f, a, 0, 16); });
        });
    });
    CHECK(divergent.code() == px::ErrorCode::InvalidKernel);
    CHECK(says(divergent, "divergent control flow"));
    CHECK(says(divergent, "load of fragment"));
    px::Error varying = invalid_kernel([] {
        px::kernel("mx_varying", {"a"}, [](px::In<px::half> a) {
            px::Fragment<px::half, 16, 16, 16, px::MatrixA> f;
            px::load_fragment(f, a, px::Int(px::local_id(0)) * 16, 16);
        });
    });
    CHECK(varying.code() == px::ErrorCode::InvalidKernel);
    CHECK(says(varying, "depends on the work-item"));
    // A subgroup-uniform branch is fine: every lane of a subgroup takes it together.
    CHECK_NOTHROW(
        px::kernel("mx_subgroup_branch", {"a", "c"}, [](px::In<px::half> a, px::Out<float> c) {
            px::Fragment<px::half, 16, 16, 16, px::MatrixA> f;
            px::Fragment<px::half, 16, 16, 16, px::MatrixB> g;
            px::Fragment<float, 16, 16, 16, px::Accumulator> acc;
            px::If(px::subgroup_id() == 0, [&] {
                px::load_fragment(f, a, 0, 16);
                px::load_fragment(g, a, 0, 16);
                px::fill_fragment(acc, 0.0f);
                px::mma(acc, f, g);
                px::store_fragment(acc, c, 0, 16);
            });
        }));
}

TEST_CASE("the IR refuses mismatched fragments, and JSON keeps them") {
    using namespace px::ir;
    Kernel k;
    k.name = "mx_ir";
    k.params = {{"a", Param::Kind::Buffer, Scalar::F16, Access::Read},
                {"c", Param::Kind::Buffer, Scalar::F32, Access::Write},
                {"h", Param::Kind::Buffer, Scalar::F16, Access::Write}};
    k.fragments = {{"fa", MatrixUse::A, 16, 16, 16, Scalar::F16, MatrixLayout::Row},
                   {"fb", MatrixUse::B, 16, 16, 16, Scalar::BF16, MatrixLayout::Col},
                   {"acc", MatrixUse::Acc, 16, 16, 16, Scalar::F32, MatrixLayout::Row}};
    auto zero = Const::make_int(Scalar::I32, 0), ld = Const::make_int(Scalar::I32, 16);
    k.body = Block::make(
        {Matrix::load("fa", "a", Space::Global, zero, ld), Matrix::mma("acc", "fa", "fb", "acc")});
    px::Error mixed = invalid_kernel([&] { validate(k); });
    CHECK(says(mixed, "mma of A of f16 and B of bf16"));
    k.fragments[1].type = Scalar::F16;
    k.body = Block::make({Matrix::store("fa", "h", Space::Global, zero, ld)});
    CHECK(says(invalid_kernel([&] { validate(k); }), "only accumulators are stored"));
    k.body = Block::make({Matrix::load("acc", "a", Space::Global, zero, ld)});
    CHECK(says(invalid_kernel([&] { validate(k); }), "'a' holds f16, the fragment f32"));
    k.fragments.push_back({"bad", MatrixUse::Acc, 16, 16, 8, Scalar::F16, MatrixLayout::Row});
    k.body = Block::make({});
    CHECK(says(invalid_kernel([&] { validate(k); }), "accumulators are f32, or f16 at m16n16k16"));
    k.fragments.pop_back();
    k.body = Block::make({Matrix::fill("acc", Const::make_float(Scalar::F32, 1.0)),
                          Matrix::load("fa", "a", Space::Global, zero, ld),
                          Matrix::load("fb", "a", Space::Global, zero, ld, MatrixLayout::Col),
                          Matrix::mma("acc", "fa", "fb", "acc"),
                          Matrix::store("acc", "c", Space::Global, zero, ld)});
    CHECK_NOTHROW(validate(k));
    const Kernel back = from_json(to_json(k));
    CHECK(back.fragments == k.fragments);
    CHECK(to_json(back) == to_json(k));
    CHECK(collect_uses(k).matrix);
}

TEST_CASE("a device without a fragment type is dropped, naming the type") {
    const auto& kernel = fragment_kernel<px::bf16, float, 16, px::RowMajor, px::RowMajor,
                                         px::RowMajor, px::RowMajor>("mx_bf16_f32");
    for (const px::Candidate& c : px::test::hermetic_runtime().explain(kernel.ir())) {
        const px::DeviceInfo& d = c.backend_ptr->devices()[c.device_index];
        const bool has = !d.matrix_ops || (*d.matrix_ops & PLX_MATRIX_BF16);
        INFO(c.backend << ":" << c.device_index << ": " << c.reason);
        if (!has) {
            CHECK_FALSE(c.kept);
            CHECK(c.reason.find("the device lacks matrix fragments of bf16") != std::string::npos);
        }
    }
    CHECK(px::matrix_feature("matrix_a_m16n16k16_bf16") == PLX_MATRIX_BF16);
    CHECK(px::matrix_feature("matrix_acc_m16n16k16_f32") == (PLX_MATRIX_F16 | PLX_MATRIX_BF16));
    CHECK(px::matrix_feature("matrix_b_m16n16k8_tf32") == PLX_MATRIX_TF32);
    CHECK(px::matrix_feature("sqrt_f32") == 0);
}

TEST_CASE(
    "a warpgroup accumulator from swizzled f16 and bf16 tiles on every device, bounded store") {
    check_warpgroup<px::half>("mx_warpgroup_f16");
    check_warpgroup<px::bf16>("mx_warpgroup_bf16");
}

TEST_CASE("the swizzle is a permutation within each array, 16-byte chunks whole") {
    for (uint32_t size : {2u, 4u}) {
        const uint32_t rows = 16, cols = 256 / size, count = rows * cols;
        std::vector<int> seen(count, 0);
        for (uint32_t r = 0; r < rows; ++r)
            for (uint32_t c = 0; c < cols; ++c) {
                const uint64_t i = px::ir::swizzled_index(rows, size, r, c);
                REQUIRE(i < count);
                ++seen[i];
                if (c % (16 / size)) CHECK(i == px::ir::swizzled_index(rows, size, r, c - 1) + 1);
            }
        CHECK(std::count(seen.begin(), seen.end(), 1) == int(count));
        CHECK(px::ir::swizzled_index(rows, size, 1, 0) ==
              128 / size + 16 / size); // row 1: chunk 0 <-> 1
    }
}

TEST_CASE("warpgroup operations the IR refuses, and JSON keeps them") {
    using namespace px::ir;
    Kernel k;
    k.name = "wg_ir";
    k.params = {{"c", Param::Kind::Buffer, Scalar::F32, Access::Write}};
    k.fragments = {{"acc", MatrixUse::Acc, 64, 128, 16, Scalar::F32, MatrixLayout::Row},
                   {"small", MatrixUse::Acc, 16, 16, 16, Scalar::F32, MatrixLayout::Row}};
    ArrayDecl as{"as", Scalar::F16, 64 * 64, {64, 64}, 0},
        bs{"bs", Scalar::F16, 32 * 128, {32, 128}, 0};
    as.swizzle = bs.swizzle = true;
    k.shared = {as, bs};
    auto i = [](int64_t v) { return Const::make_int(Scalar::I32, v); };
    auto mma = [&](int64_t col_b) {
        return Matrix::mma_shared("acc", "as", i(0), i(0), "bs", i(0), i(col_b), 2, 1);
    };
    k.body = Block::make(
        {Matrix::fill("acc", Const::make_float(Scalar::F32, 0.0)), mma(0),
         Matrix::store_bounded("acc", "c", Space::Global, i(0), i(128), i(60), i(100))});
    CHECK_NOTHROW(validate(k));
    const Kernel back = from_json(to_json(k));
    CHECK(back.shared == k.shared);
    CHECK(to_json(back) == to_json(k));
    // subgroup_id too: where the accumulator is plain arithmetic, each subgroup takes its rows by
    // it.
    CHECK(collect_uses(k).intrinsics == std::vector<std::string>{"matrix_acc_m16n16k16_f32",
                                                                 "matrix_acc_m64n128k16_f32",
                                                                 "subgroup_id"});
    CHECK(px::matrix_feature("matrix_acc_m64n128k16_f32") == PLX_MATRIX_WARPGROUP);
    // A bounded store is row-major, and a load has no bounds, in JSON too.
    std::string text = to_json(k);
    const std::string row = "\"layout\": \"row\"";
    REQUIRE(text.find(row) != std::string::npos);
    text.replace(text.find(row), row.size(), "\"layout\": \"col\"");
    try {
        from_json(text);
        FAIL("a column-major bounded store was read");
    } catch (const px::Error& e) {
        CHECK(says(e, "a bounded store is row-major"));
    }
    // Whatever the corners, the tiles fit their arrays.
    k.shared[0] = ArrayDecl{"as", Scalar::F16, 8 * 64, {8, 64}, 0};
    k.shared[0].swizzle = true;
    CHECK(says(invalid_kernel([&] { validate(k); }), "its A tile has 64 rows, the array 8"));
    k.shared[0] = as;
    k.body = Block::make({mma(32)});
    CHECK(says(invalid_kernel([&] { validate(k); }), "not a multiple of 64"));
    k.body = Block::make({Matrix::mma_shared("small", "as", i(0), i(0), "bs", i(0), i(0), 1)});
    CHECK(says(invalid_kernel([&] { validate(k); }),
               "accumulates into a warpgroup accumulator (m64)"));
    k.body =
        Block::make({Matrix::store_bounded("small", "c", Space::Global, i(0), i(16), i(8), i(8))});
    CHECK(says(invalid_kernel([&] { validate(k); }),
               "a bounded store needs a warpgroup accumulator"));
    k.shared[1].swizzle = false;
    k.body = Block::make({mma(0)});
    CHECK(says(invalid_kernel([&] { validate(k); }), "'bs' is not swizzled"));
    k.shared[1] = ArrayDecl{"bs", Scalar::F16, 12 * 128, {12, 128}, 0};
    k.shared[1].swizzle = true;
    k.body = Block::make({});
    CHECK(says(invalid_kernel([&] { validate(k); }), "a multiple of 8 rows"));
    k.shared[1] = bs;
    k.fragments[0].n = 96;
    CHECK(says(invalid_kernel([&] { validate(k); }), "warpgroup accumulators are m64nNk16"));
    // A warpgroup accumulator's operands come from one subgroup's view only when uniform.
    px::Error varying = invalid_kernel([] {
        px::kernel("wg_varying", {"c"}, [](px::Out<float> c) {
            auto as = px::shared<px::half>(64, 64, px::Swizzle128{});
            px::Fragment<float, 64, 64, 16, px::Accumulator> acc;
            px::fill_fragment(acc, 0.0f);
            px::mma_shared<16>(acc, as, 0, px::Int(px::local_id(0)) * 16, as, 0, 0);
            px::store_fragment(acc, c, 0, 64, 64, 64);
        });
    });
    CHECK(says(varying, "depends on the work-item"));
}

// The samples take a different copy path by shape and group size (rows of a and b on 16 bytes;
// only b's, with groups of 256; any other), so each runs at shapes that reach each path and
// the edges of a block, every element checked by the sample's own host reference.
TEST_CASE("matmul_f16, matmul_bf16 and matmul_tf32 at aligned, unaligned and edge shapes on every "
          "device") {
    struct Shape {
        int m, n, k;
    };
    const Shape shapes[] = {{256, 224, 256}, {136, 72, 40}, {128, 128, 32},
                            {130, 70, 37},   {17, 300, 8},  {136, 72, 37}};
    const Shape slow_shapes[] = {{40, 24, 32}, {18, 20, 13}};
    for (const px::test::TestDevice& dev : px::test::every_device()) {
        const bool slow = dev.target.backend == "interp";
        for (const std::string& name : px::samples::mma_problem_names())
            for (const Shape& s :
                 slow ? std::span<const Shape>(slow_shapes) : std::span<const Shape>(shapes)) {
                auto& rt = px::test::hermetic_runtime();
                auto p = px::samples::make_mma_problem(name, s.m, s.n, s.k, rt, 11);
                INFO(name << " on " << dev.label << ", " << p->size_text());
                try {
                    p->run(rt, dev.target);
                } catch (const px::Error& e) {
                    const std::string why = px::samples::drop_reason(e, dev.target);
                    INFO(e.what());
                    CHECK_FALSE(why.empty()); // only a device the router drops may refuse
                    MESSAGE("skipped on " << dev.label << ": " << why);
                    break;
                }
                const px::samples::CheckResult r = p->check();
                INFO(r.first_bad << " (" << r.checked << " checked, " << r.bad << " bad)");
                CHECK(r.ok());
            }
    }
}
