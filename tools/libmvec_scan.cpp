// libmvec_scan: the largest error of glibc libmvec's f32 vector forms (SSE 4, AVX2 8 and AVX-512
// 16 lanes) of one function, against the long double function of libm, in ulp of the f32 result
// (docs/kernel-language.md, "Vector math on the native backend", lists what it found and which
// forms the native backend calls). Special values must be met exactly (NaN, infinities, zeros).
//   g++ -O2 -mavx512f tools/libmvec_scan.cpp -o libmvec_scan -ldl
//   ./libmvec_scan tanh 37 1     (f(x): every 37th float bit pattern, then the special values)
//   ./libmvec_scan atan2 37 2    (f(x, y): 2^32 / 37 pairs, half random bit patterns, half in
//                                 [-1e4, 1e4])
// Needs a CPU with AVX-512F (the three forms run side by side).
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <dlfcn.h>
#include <immintrin.h>
#include <limits>
#include <random>
#include <string>
#include <vector>

static double ulp_error(float got, long double want) {
    constexpr double inf = std::numeric_limits<double>::infinity();
    if (std::isnan(want)) return std::isnan(got) ? 0 : inf;
    const float w = float(want);
    if (std::isinf(w)) return got == w ? 0 : inf;
    if (std::isnan(got)) return inf;
    if (want == 0) return got == 0 ? 0 : inf;
    const float a = std::fabs(w);
    const long double ulp = (long double)std::nextafter(a, INFINITY) - a;
    return double(std::fabs((long double)got - want) / ulp);
}

typedef __m128 (*F4)(__m128);
typedef __m256 (*F8)(__m256);
typedef __m512 (*F16)(__m512);
typedef __m128 (*G4)(__m128, __m128);
typedef __m256 (*G8)(__m256, __m256);
typedef __m512 (*G16)(__m512, __m512);

int main(int argc, char** argv) {
    const std::string fn = argv[1];
    const uint64_t stride = std::stoull(argv[2]);
    const int arity = std::stoi(argv[3]);
    void* lib = dlopen("libmvec.so.1", RTLD_NOW);
    long double (*ref1)(long double) = nullptr;
    long double (*ref2)(long double, long double) = nullptr;
    void* m = dlopen("libm.so.6", RTLD_NOW);
    if (arity == 1)
        ref1 = (long double (*)(long double))dlsym(m, (fn + "l").c_str());
    else
        ref2 = (long double (*)(long double, long double))dlsym(m, (fn + "l").c_str());
    const char* isas[] = {"b", "d", "e"};
    const int lanes[] = {4, 8, 16};
    void* f[3];
    for (int i = 0; i < 3; ++i) {
        std::string name = std::string("_ZGV") + isas[i] + "N" + std::to_string(lanes[i]) +
                           (arity == 1 ? "v" : "vv") + "_" + fn + "f";
        f[i] = dlsym(lib, name.c_str());
        if (!f[i]) {
            std::printf("%s missing\n", name.c_str());
            return 1;
        }
    }
    double worst[3] = {0, 0, 0};
    float worst_x[3] = {0, 0, 0}, worst_y[3] = {0, 0, 0};
    uint64_t count = 0, bad_special[3] = {0, 0, 0};
    alignas(64) float x[16], y[16], out[16];
    std::mt19937_64 rng(42);
    auto run = [&](int n) {
        for (int i = 0; i < 3; ++i) {
            for (int base = 0; base < n; base += lanes[i]) {
                if (arity == 1) {
                    if (i == 0) _mm_store_ps(out + base, ((F4)f[0])(_mm_load_ps(x + base)));
                    if (i == 1) _mm256_store_ps(out + base, ((F8)f[1])(_mm256_load_ps(x + base)));
                    if (i == 2) _mm512_store_ps(out + base, ((F16)f[2])(_mm512_load_ps(x + base)));
                } else {
                    if (i == 0)
                        _mm_store_ps(out + base,
                                     ((G4)f[0])(_mm_load_ps(x + base), _mm_load_ps(y + base)));
                    if (i == 1)
                        _mm256_store_ps(out + base, ((G8)f[1])(_mm256_load_ps(x + base),
                                                               _mm256_load_ps(y + base)));
                    if (i == 2)
                        _mm512_store_ps(out + base, ((G16)f[2])(_mm512_load_ps(x + base),
                                                                _mm512_load_ps(y + base)));
                }
            }
            for (int j = 0; j < n; ++j) {
                long double want = arity == 1 ? ref1(x[j]) : ref2(x[j], y[j]);
                double e = ulp_error(out[j], want);
                if (std::isinf(e)) {
                    ++bad_special[i];
                    if (bad_special[i] < 4)
                        std::printf("  special %s isa %s x=%a y=%a got=%a want=%La\n", fn.c_str(),
                                    isas[i], x[j], y[j], out[j], want);
                    continue;
                }
                if (e > worst[i]) {
                    worst[i] = e;
                    worst_x[i] = x[j];
                    worst_y[i] = y[j];
                }
            }
        }
    };
    if (arity == 1) {
        uint64_t bits = 0;
        int n = 0;
        for (bits = 0; bits < (1ull << 32); bits += stride) {
            uint32_t b = uint32_t(bits);
            float v;
            std::memcpy(&v, &b, 4);
            x[n++] = v;
            ++count;
            if (n == 16) {
                run(16);
                n = 0;
            }
        }
        if (n) {
            for (int j = n; j < 16; ++j)
                x[j] = 0;
            run(16);
        }
        // the specials
        float sp[16] = {0.f,       -0.f,       INFINITY,      -INFINITY,      NAN,  1.f, -1.f,
                        0x1p-149f, -0x1p-149f, 3.4028235e38f, -3.4028235e38f, 0.5f, 2.f, 1e-30f,
                        -1e-30f,   88.f};
        std::memcpy(x, sp, sizeof sp);
        run(16);
    } else {
        std::uniform_real_distribution<float> u(-1e4f, 1e4f);
        std::uniform_int_distribution<uint32_t> bitsd;
        for (uint64_t k = 0; k < (1ull << 32) / stride; k += 16) {
            for (int j = 0; j < 16; ++j) {
                if (j % 2) {
                    x[j] = u(rng);
                    y[j] = u(rng);
                } else {
                    uint32_t a = bitsd(rng), b = bitsd(rng);
                    std::memcpy(&x[j], &a, 4);
                    std::memcpy(&y[j], &b, 4);
                }
            }
            count += 16;
            run(16);
        }
    }
    std::printf("%-6s inputs %llu  SSE %.3f  AVX2 %.3f  AVX-512 %.3f  specials missed "
                "%llu/%llu/%llu  worst AVX2 at x=%a y=%a\n",
                fn.c_str(), (unsigned long long)count, worst[0], worst[1], worst[2],
                (unsigned long long)bad_special[0], (unsigned long long)bad_special[1],
                (unsigned long long)bad_special[2], worst_x[1], worst_y[1]);
}
