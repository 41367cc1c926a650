// Runs the generated code of the array kernels (vector_add, reduce_sum, matmul_tiled,
// histogram, control) on random inputs at sizes that are not multiples of the work-group
// size, and checks every output element against a host reference. run_semantics.cpp has the
// math, integer and atomic kernels; run_numbers / run_vectors / run_records the new types.
#include "kernels.hpp"
#include "run_host.hpp"

#include <cmath>
#include <random>

using namespace codegen_test;

namespace {

std::vector<float> random_floats(size_t n, float lo, float hi, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(lo, hi);
    std::vector<float> v(n);
    for (auto& x : v)
        x = dist(rng);
    return v;
}

} // namespace

TEST_CASE("every test kernel builds for the device, those that are not run too") {
    for (const KernelNeeds& k : test_kernels()) {
        if ((k.fp64 && !g_device->has("fp64")) ||
            (k.int64_atomics && !g_device->has("int64_atomics")))
            continue;
        INFO(k.name);
        CHECK_NOTHROW(Program(k.name));
    }
}

TEST_CASE("vector_add") {
    const int n = 1000; // groups of 64: the last one is partly outside
    auto a = random_floats(n, -100, 100, 1), b = random_floats(n, -100, 100, 2);
    Program k("vector_add");
    Buffer<float> da(a), db(b), dc(std::vector<float>(n, -1.0f));
    launch(k, {n}, {64}, da, db, dc, n);
    auto c = dc.read();
    Mismatches bad;
    for (int i = 0; i < n; ++i)
        if (c[i] != a[i] + b[i]) bad.add(i, c[i], a[i] + b[i], "c"); // one rounding: exact
    CHECK(bad.count == 0);
}

TEST_CASE("reduce_sum: shared memory, barrier tree, float atomic add") {
    const int n = 3001;
    auto in = random_floats(n, -1, 1, 3);
    Program k("reduce_sum");
    Buffer<float> din(in), dout(std::vector<float>{0.0f});
    launch(k, {n}, {size_t(reduce_group)}, din, dout, n);
    double sum = 0, mag = 0;
    for (float x : in)
        sum += x, mag += std::fabs(x);
    float got = dout.read()[0];
    INFO("sum " << got << ", want " << sum << " (tolerance: 1e-4 of the sum of |x|)");
    CHECK(std::fabs(got - sum) <= 1e-4 * mag);
}

TEST_CASE("matmul_tiled: two shared tiles, barriers in a uniform loop") {
    const int M = 37, N = 45, K = 29;
    auto A = random_floats(size_t(M) * K, -1, 1, 4), B = random_floats(size_t(K) * N, -1, 1, 5);
    Program k("matmul_tiled");
    Buffer<float> dA(A), dB(B), dC(std::vector<float>(size_t(M) * N, 0.0f));
    launch(k, {size_t(N), size_t(M)}, {size_t(matmul_tile), size_t(matmul_tile)}, dA, dB, dC, M, N,
           K);
    auto C = dC.read();
    Mismatches bad;
    for (int r = 0; r < M; ++r)
        for (int c = 0; c < N; ++c) {
            double want = 0, mag = 0;
            for (int i = 0; i < K; ++i) {
                want += double(A[r * K + i]) * B[i * N + c];
                mag += std::fabs(double(A[r * K + i]) * B[i * N + c]);
            }
            // Tolerance: 1e-5 of the sum of |products| (float accumulation, maybe contracted).
            if (std::fabs(C[r * N + c] - want) > 1e-5 * mag + 1e-7)
                bad.add(r * N + c, C[r * N + c], want, "C");
        }
    CHECK(bad.count == 0);
}

TEST_CASE("histogram: global u32 atomic add") {
    const int n = 5003;
    const uint32_t bins = 37;
    std::mt19937 rng(6);
    std::vector<uint32_t> data(n);
    for (auto& x : data)
        x = uint32_t(rng());
    Program k("histogram");
    Buffer<uint32_t> dd(data), dh(std::vector<uint32_t>(bins, 0));
    launch(k, {n}, {64}, dd, dh, n, bins);
    std::vector<uint32_t> want(bins, 0);
    for (auto x : data)
        ++want[x % bins];
    auto got = dh.read();
    Mismatches bad;
    for (uint32_t i = 0; i < bins; ++i)
        if (got[i] != want[i]) bad.add(i, got[i], want[i], "hist");
    CHECK(bad.count == 0);
}

TEST_CASE("control: return, for with run-time step, continue, break, while, else-if, native") {
    const int n = 777;
    std::mt19937 rng(7);
    std::vector<int32_t> x(n);
    for (auto& v : x)
        v = int32_t(rng() % 101) - 50;
    Program k("control");
    for (int32_t steps : {20, 21, -3}) {
        CAPTURE(steps);
        Buffer<int32_t> dx(x), dy(std::vector<int32_t>(n, 0));
        launch(k, {n}, {32}, dx, dy, n, steps);
        auto y = dy.read();
        Mismatches bad;
        for (int i = 0; i < n; ++i) {
            int32_t acc = 0;
            const int32_t step = 1 + steps % 2;
            for (int32_t j = 0; j < steps; j += step) {
                if (j % 3 == 0) continue;
                acc += j * x[i];
                if (acc > 1000) break;
            }
            for (int32_t w = x[i] & 7; w != 0;) {
                w -= 1;
                acc ^= w << 4;
            }
            if (acc < 0)
                acc = -acc;
            else if (acc > 5000)
                acc -= 5000;
            else
                acc += 1;
            acc += 3; // the native block
            if (y[i] != acc) bad.add(i, y[i], acc, "y");
        }
        CHECK(bad.count == 0);
    }
}
