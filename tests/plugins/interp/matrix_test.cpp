// Matrix fragments on the interpreter: kernels written with px::Fragment run on random inputs,
// every element of every output (inside the tiles and around them) compared bit for bit with
// the host reference of matrix_reference.hpp, for each input type, layout and memory space;
// fill's conversions; the device's matrix_ops. What must fail: matrix_errors_test.cpp.
#include "fixture.hpp"
#include "matrix_reference.hpp"

#include <cstddef>

namespace interp_test {
namespace {

using namespace matrix_test;
using px::ColMajor;
using px::RowMajor;

template <class T> void expect_equal(const std::vector<T>& got, const std::vector<T>& want) {
    std::string first;
    const size_t bad = mismatches(got, want, first);
    INFO(bad << " wrong elements, the first: " << first);
    CHECK(bad == 0);
}

template <class TA, class TC, uint32_t K, class LA, class LB, class LC, class LD>
void global_mma(const std::string& name) {
    const auto k = global_kernel<TA, TC, K, LA, LB, LC, LD>(name);
    const auto p = make_problem<TA, TC, K, LA, LB, LC, LD>(rng());
    Buffer ba(p.a), bb(p.b), bc(p.c), bd(p.d0);
    Module m(k.ir());
    REQUIRE(m.status() == PLX_OK);
    REQUIRE(launch(m.kernel(), dims1(kGroups * kLocal, kLocal),
                   {ba, bb, bc, bd, p.lda, p.ldc, kTiles}) == PLX_OK);
    expect_equal(bd.read<TC>(), p.want);
}

} // namespace

TEST_CASE("mma of f16 into f32 accumulators, in global memory, each layout") {
    global_mma<px::half, float, 16, RowMajor, RowMajor, RowMajor, RowMajor>("mma_f16_rr");
    global_mma<px::half, float, 16, ColMajor, RowMajor, ColMajor, RowMajor>("mma_f16_cr");
    global_mma<px::half, float, 16, RowMajor, ColMajor, RowMajor, ColMajor>("mma_f16_rc");
}

TEST_CASE("mma of f16 into f16 accumulators: summed in f32, rounded once") {
    global_mma<px::half, px::half, 16, RowMajor, ColMajor, RowMajor, RowMajor>("mma_f16_f16_rc");
    global_mma<px::half, px::half, 16, ColMajor, RowMajor, ColMajor, ColMajor>("mma_f16_f16_cr");
}

TEST_CASE("mma of bf16 into f32 accumulators") {
    global_mma<px::bf16, float, 16, RowMajor, RowMajor, RowMajor, ColMajor>("mma_bf16_rr");
    global_mma<px::bf16, float, 16, ColMajor, ColMajor, ColMajor, RowMajor>("mma_bf16_cc");
}

TEST_CASE("mma of tf32 (f32 in memory, used whole) at m16n16k8") {
    global_mma<float, float, 8, RowMajor, RowMajor, RowMajor, RowMajor>("mma_tf32_rr");
    global_mma<float, float, 8, ColMajor, ColMajor, ColMajor, ColMajor>("mma_tf32_cc");
}

TEST_CASE("fragments in shared memory: a 2-D padded tile per subgroup, a 1-D accumulator array") {
    const auto k = px::kernel("mma_shared", {"a", "b", "d"},
                              [](px::In<px::half> a, px::In<px::half> b, px::Out<float> d) {
                                  auto sa = px::shared<px::half>(
                                      32, 16, px::Pad{8}); // two 16 x 16 tiles, rows 24 apart
                                  auto sb = px::shared<px::half>(32, 16, px::Pad{8});
                                  auto sd = px::shared<float>(32 * 20);
                                  px::Fragment<px::half, 16, 16, 16, px::MatrixA> fa;
                                  px::Fragment<px::half, 16, 16, 16, px::MatrixB, ColMajor>
                                      fb; // sb's rows are B's columns
                                  px::Fragment<float, 16, 16, 16, px::Accumulator> acc;
                                  px::Int g = px::group_id(0) * 512, lid = px::local_id(0);
                                  px::For(lid, 512, px::local_size(0), [&](px::Int e) {
                                      sa[e / 16][e % 16] = a[g + e];
                                      sb[e / 16][e % 16] = b[g + e];
                                  });
                                  px::barrier();
                                  px::Int s = px::subgroup_id();
                                  px::load_fragment(fa, sa, s * 16, 0);
                                  px::load_fragment(fb, sb, s * 16, 0);
                                  px::fill_fragment(acc, 0.0f);
                                  px::mma(acc, fa, fb);
                                  px::store_fragment(acc, sd, s * 320, 20);
                                  px::barrier();
                                  px::For(lid, 512, px::local_size(0),
                                          [&](px::Int e) { d[g + e] = sd[e / 16 * 20 + e % 16]; });
                              });
    const auto a = random_numbers<px::half>(2 * 512, rng()),
               b = random_numbers<px::half>(2 * 512, rng());
    Buffer ba(a), bb(b), bd(2 * 512 * sizeof(float));
    Module m(k.ir());
    REQUIRE(m.status() == PLX_OK);
    REQUIRE(launch(m.kernel(), dims1(32, 16), {ba, bb, bd}) == PLX_OK);
    std::vector<float> want(2 * 512);
    for (size_t tile = 0; tile < 4; ++tile) // two groups of two subgroups
        for (int i = 0; i < 16; ++i)
            for (int j = 0; j < 16; ++j)
                want[tile * 256 + size_t(i * 16 + j)] = reference<float>(
                    16, [&](int r, int kk) { return float(a[tile * 256 + size_t(r * 16 + kk)]); },
                    [&](int kk, int c) { return float(b[tile * 256 + size_t(c * 16 + kk)]); },
                    [](int, int) { return 0.0f; }, i, j);
    expect_equal(bd.read<float>(), want);
}

TEST_CASE("fill converts its value as a cast: into f16 through f32, an i32 rounded to f32") {
    const auto k = px::kernel("fill", {"h", "f", "x", "n"},
                              [](px::Out<px::half> h, px::Out<float> f, px::Float x, px::Int n) {
                                  px::Fragment<px::half, 16, 16, 16, px::Accumulator> ah;
                                  px::Fragment<float, 16, 16, 8, px::Accumulator> af;
                                  px::fill_fragment(ah, x);
                                  px::fill_fragment(af, n);
                                  px::Int t = px::subgroup_id() * 256;
                                  px::store_fragment(ah, h, t, 16);
                                  px::store_fragment(af, f, t, 16, ColMajor{});
                              });
    const float x = 1.0f / 3.0f;
    const int32_t n = 16777217; // 2^24 + 1: f32 rounds it to 2^24
    Buffer bh(2 * 256 * sizeof(px::half)), bf(2 * 256 * sizeof(float));
    Module m(k.ir());
    REQUIRE(m.status() == PLX_OK);
    REQUIRE(launch(m.kernel(), dims1(16, 16), {bh, bf, x, n}) == PLX_OK);
    expect_equal(bh.read<px::half>(), std::vector<px::half>(512, px::half(x)));
    expect_equal(bf.read<float>(), std::vector<float>(512, 16777216.0f));
}

TEST_CASE(
    "the device says it runs every fragment type, emulated, within the caller's struct_size") {
    plx_device_info info{};
    info.struct_size = sizeof info;
    REQUIRE(api().device_info(Plugin::get().device, &info) == PLX_OK);
    CHECK(info.matrix_ops == (PLX_MATRIX_KNOWN | PLX_MATRIX_ALL | PLX_MATRIX_EMULATED));
    // A 1.2 caller's struct ends before matrix_ops: nothing is written past it.
    plx_device_info old{};
    old.struct_size = offsetof(plx_device_info, matrix_ops);
    old.matrix_ops = 0xdeadbeef;
    REQUIRE(api().device_info(Plugin::get().device, &old) == PLX_OK);
    CHECK(old.matrix_ops == 0xdeadbeef);
    CHECK(old.subgroup_ops == info.subgroup_ops);
}

} // namespace interp_test
