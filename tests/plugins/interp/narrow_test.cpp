// Narrow scalars: the plugin's f16 / bf16 conversions against plexus/half.hpp on every boundary,
// f16 / bf16 arithmetic, constants and casts bit-exact against the host, small-integer casts.
#include "elementwise.hpp"

#include "half.hpp" // the plugin's own conversions (plugins/interp)

#include <plexus/half.hpp>

#include <nlohmann/json.hpp>

#include <bit>
#include <limits>

namespace interp_test {
namespace {

using B = ir::BinaryOp;
using plexus::bf16;
using plexus::half;
constexpr Scalar F16 = Scalar::F16, BF16 = Scalar::BF16, F32 = Scalar::F32, F64 = Scalar::F64,
                 I32 = Scalar::I32;

bool same_float(float a, float b) {
    return std::isnan(a) ? std::isnan(b) : std::bit_cast<uint32_t>(a) == std::bit_cast<uint32_t>(b);
}

// Every value of a 16-bit format, the values next to it, the midpoint towards the next value
// up (where round-to-nearest-even decides) and the values next to that: the plugin's encoder
// must agree with the core's on all of them, and its decoder on every pattern.
template <class Decode, class Encode, class CoreDecode, class CoreEncode>
void check_format(Decode decode, Encode encode, CoreDecode core_decode, CoreEncode core_encode) {
    auto check = [&](float f) {
        CAPTURE(f);
        REQUIRE(same_float(decode(encode(f)), core_decode(core_encode(f))));
    };
    for (uint32_t h = 0; h < 0x10000; ++h) {
        CAPTURE(h);
        const float f = decode(uint16_t(h));
        REQUIRE(same_float(f, core_decode(uint16_t(h))));
        if (std::isnan(f)) continue;
        const float inf = std::numeric_limits<float>::infinity();
        check(f), check(std::nextafter(f, inf)), check(std::nextafter(f, -inf));
        if (h == 0x7fff || h == 0xffff) continue;
        const float next = decode(uint16_t(h + 1));
        if (std::isnan(next) || std::isinf(f)) continue;
        const float mid = float((double(f) + double(next)) / 2); // exact: f32 has the bits
        check(mid), check(std::nextafter(mid, inf)), check(std::nextafter(mid, -inf));
    }
    std::uniform_int_distribution<uint32_t> bits;
    for (int i = 0; i < (1 << 18); ++i)
        check(std::bit_cast<float>(bits(rng())));
}

// Halves and bfloats both drawn from random bit patterns (every exponent, subnormals and NaNs
// included: a bf16 NaN may be a signaling f32 one) and from a moderate range, where sums and
// products stay finite and round.
template <class H> std::vector<H> random_16(size_t n) {
    std::vector<H> v(n);
    std::uniform_int_distribution<uint32_t> bits(0, 0xffff);
    std::uniform_real_distribution<float> moderate(-40.f, 40.f);
    for (size_t i = 0; i < n; ++i)
        v[i] = i % 2 ? H(moderate(rng())) : H::from_bits(uint16_t(bits(rng())));
    return v;
}

template <class H> void check_half_arithmetic(Scalar t, const char* name) {
    auto b = [](B op) { return [op](E x, E y, E) { return bin(op, x, y); }; };
    auto r = [](float x) { return H(x); }; // the host reference: f32 result rounded to H
    const E tenth = ir::Const::make_float(t, 0.1), zero = ir::Const::make_float(t, 0.0);
    std::vector<Op<H, H>> ops = {
        {"add", b(B::Add), [=](H x, H y, H) { return r(float(x) + float(y)); }},
        {"sub", b(B::Sub), [=](H x, H y, H) { return r(float(x) - float(y)); }},
        {"mul", b(B::Mul), [=](H x, H y, H) { return r(float(x) * float(y)); }},
        {"div", b(B::Div), [=](H x, H y, H) { return r(float(x) / float(y)); }},
        // fmin / fmax may return either zero of min(0, -0); adding +0 makes both +0.
        {"min", [=](E x, E y, E) { return bin(B::Add, bin(B::Min, x, y), zero); },
         [=](H x, H y, H) { return r(ir_min(float(x), float(y)) + 0.0f); }},
        {"max", [=](E x, E y, E) { return bin(B::Add, bin(B::Max, x, y), zero); },
         [=](H x, H y, H) { return r(ir_max(float(x), float(y)) + 0.0f); }},
        {"neg", [](E x, E, E) { return ir::Unary::make(ir::UnaryOp::Neg, x); },
         [=](H x, H, H) { return r(-float(x)); }},
        // Each operation rounds: (x * y) + z is two roundings, never a fused one.
        {"mul_add", [](E x, E y, E z) { return bin(B::Add, bin(B::Mul, x, y), z); },
         [=](H x, H y, H z) { return r(float(r(float(x) * float(y))) + float(z)); }},
        // The constant 0.1 is rounded to the type before it is used.
        {"add_const", [=](E x, E, E) { return bin(B::Add, x, tenth); },
         [=](H x, H, H) { return r(float(x) + float(r(0.1f))); }},
        {"lt", [=](E x, E y, E) { return cast(t, bin(B::Lt, x, y)); },
         [=](H x, H y, H) { return r(float(x) < float(y)); }},
        {"eq", [=](E x, E y, E) { return cast(t, bin(B::Eq, x, y)); },
         [=](H x, H y, H) { return r(float(x) == float(y)); }},
        {"select", [](E x, E y, E z) { return ir::Select::make(bin(B::Gt, x, z), y, z); },
         [](H x, H y, H z) { return float(x) > float(z) ? y : z; }},
    };
    const size_t n = 1500;
    const float inf = std::numeric_limits<float>::infinity();
    // A NaN whose f32 is signaling (bf16 0x7f81), and a quiet one, against numbers.
    const H snan = H::from_bits(std::is_same_v<H, bf16> ? 0x7f81 : 0x7c01),
            qnan = H::from_bits(0xffff);
    auto xs = with_specials(random_16<H>(n), {H(inf), H(-inf), H(0.f), H(-0.f), H(65504.f), H(1.f),
                                              snan, H(4.f), qnan});
    auto ys = with_specials(
        random_16<H>(n), {H(1.f), H(inf), H(-0.f), H(0.f), H(2.f), H(3.f), H(-7.f), snan, H(5.f)});
    auto zs = random_16<H>(n);
    check_elementwise<H, H>(std::string("arith_") + name, ops, xs, ys, zs);
}

} // namespace

TEST_CASE("the interpreter's f16 and bf16 conversions are the core's, on every boundary") {
    check_format([](uint16_t h) { return plx_interp::f16_to_f32(h); },
                 [](float f) { return plx_interp::f32_to_f16(f); },
                 [](uint16_t h) { return plexus::detail::f16_bits_to_f32(h); },
                 [](float f) { return plexus::detail::f32_to_f16_bits(f); });
    check_format([](uint16_t h) { return plx_interp::bf16_to_f32(h); },
                 [](float f) { return plx_interp::f32_to_bf16(f); },
                 [](uint16_t h) { return plexus::detail::bf16_bits_to_f32(h); },
                 [](float f) { return plexus::detail::f32_to_bf16_bits(f); });
}

TEST_CASE("f16 and bf16 arithmetic: every result is the f32 result rounded to the type") {
    check_half_arithmetic<half>(F16, "f16");
    check_half_arithmetic<bf16>(BF16, "bf16");
}

TEST_CASE("casts into f16 and bf16 go through f32; out of them they are exact") {
    // From f32, f64 (rounded to f32 first), integers (likewise) and from the other format.
    std::vector<Op<double, half>> into_half = {
        {"f64->f16", [](E x, E, E) { return cast(F16, x); },
         [](double x, double, double) { return half(float(x)); }},
        {"f32->f16", [](E x, E, E) { return cast(F16, cast(F32, x)); },
         [](double x, double, double) { return half(float(x)); }},
        {"i32->f16", [](E x, E, E) { return cast(F16, cast(I32, x)); },
         [](double x, double, double) { return half(float(int32_t(x))); }},
        {"bf16->f16", [](E x, E, E) { return cast(F16, cast(BF16, x)); },
         [](double x, double, double) { return half(float(bf16(float(x)))); }},
    };
    // 1 + 2^-11 + 2^-40 lies above the f16 midpoint between 1 and 1 + 2^-10, but rounded to f32
    // first it is the midpoint itself, which ties to even: 1.
    const double above_tie = 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40);
    auto xs =
        with_specials(random_vector<double>(600, -7e4, 7e4),
                      {above_tie, -above_tie, 65519.0, 65520.0, 2049.0, 1e-8, 3e-5, 16777217.0});
    check_elementwise<double, half>("into_f16", into_half, xs, xs, xs);
    CHECK(float(half(float(above_tie))) == 1.0f);

    std::vector<Op<bf16, double>> out_of_bf16 = {
        {"bf16->f64", [](E x, E, E) { return cast(F64, x); },
         [](bf16 x, bf16, bf16) { return double(float(x)); }},
        {"bf16->i32->f64", [](E x, E, E) { return cast(F64, cast(I32, x)); },
         [](bf16 x, bf16, bf16) -> double {
             const float f = x;
             if (std::isnan(f)) return 0;
             if (f >= 2147483648.f) return INT32_MAX;
             if (f < -2147483648.f) return INT32_MIN;
             return double(int32_t(f));
         }},
        {"bf16->f16->f64", [](E x, E, E) { return cast(F64, cast(F16, x)); },
         [](bf16 x, bf16, bf16) { return double(float(half(float(x)))); }},
    };
    auto bs =
        with_specials(random_16<bf16>(600), {bf16(3e9f), bf16(-3e9f), bf16(-2.75f), bf16(1e-30f)});
    check_elementwise<bf16, double>("out_of_bf16", out_of_bf16, bs, bs, bs);
}

// The core writes f16 / bf16 constants already rounded; IR from elsewhere may not, and the
// interpreter rounds them itself (through f32). Read as f32, exactly, to see it.
TEST_CASE("f16 and bf16 constants from JSON are rounded to the type") {
    const double values[] = {0.1, 65519.0, 65520.0,
                             1e6, -3.0e-8, 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40)};
    const int count = int(std::size(values));
    for (Scalar t : {F16, BF16}) {
        std::vector<ir::Stmt> body;
        for (int k = 0; k < count; ++k)
            body.push_back(store("out", i32(k), cast(F32, ir::Const::make_float(t, 0))));
        nlohmann::json j = nlohmann::json::parse(
            ir::to_json(kernel("consts", {buffer("out", F32, ir::Access::Write)}, body)));
        for (int k = 0; k < count; ++k)
            j["body"]["body"][k]["value"]["a"]["value"] = values[k];
        Buffer out(count * sizeof(float));
        Module m(j.dump());
        REQUIRE(m.status() == PLX_OK);
        REQUIRE(launch(m.kernel("consts"), dims1(1, 1), {out}) == PLX_OK);
        const auto got = out.read<float>();
        for (int k = 0; k < count; ++k) {
            CAPTURE(values[k]);
            const float f = float(values[k]);
            CHECK(got[k] == (t == F16 ? float(half(f)) : float(bf16(f))));
        }
    }
}

TEST_CASE("small integers: narrowing wraps, widening extends by signedness, floats saturate") {
    using S = Scalar;
    std::vector<Op<int32_t, int32_t>> ops = {
        {"i32->i8->i32", [](E x, E, E) { return cast(I32, cast(S::I8, x)); },
         [](int32_t x, int32_t, int32_t) { return int32_t(int8_t(x)); }},
        {"i32->u8->i32", [](E x, E, E) { return cast(I32, cast(S::U8, x)); },
         [](int32_t x, int32_t, int32_t) { return int32_t(uint8_t(x)); }},
        {"i32->i16->i32", [](E x, E, E) { return cast(I32, cast(S::I16, x)); },
         [](int32_t x, int32_t, int32_t) { return int32_t(int16_t(x)); }},
        {"i32->u16->i32", [](E x, E, E) { return cast(I32, cast(S::U16, x)); },
         [](int32_t x, int32_t, int32_t) { return int32_t(uint16_t(x)); }},
        {"i8->u16->i32", [](E x, E, E) { return cast(I32, cast(S::U16, cast(S::I8, x))); },
         [](int32_t x, int32_t, int32_t) { return int32_t(uint16_t(int8_t(x))); }},
        {"f32->i8",
         [](E x, E y, E) {
             return cast(I32, cast(S::I8, bin(B::Div, cast(F32, x), cast(F32, y))));
         },
         [](int32_t x, int32_t y, int32_t) {
             const float f = float(x) / float(y);
             return int32_t(f >= 128.f ? 127 : f <= -129.f ? -128 : int8_t(f));
         }},
        {"f16->u8",
         [](E x, E y, E) {
             return cast(I32, cast(S::U8, cast(F16, bin(B::Div, cast(F32, x), cast(F32, y)))));
         },
         [](int32_t x, int32_t y, int32_t) {
             const float f = float(half(float(x) / float(y)));
             return int32_t(f >= 256.f ? 255 : f <= -1.f ? 0 : uint8_t(f));
         }},
        {"u8+i8 as i16",
         [](E x, E y, E) {
             return cast(I32,
                         bin(B::Add, cast(S::I16, cast(S::U8, x)), cast(S::I16, cast(S::I8, y))));
         },
         [](int32_t x, int32_t y, int32_t) { return int32_t(int16_t(uint8_t(x) + int8_t(y))); }},
    };
    auto xs = with_specials(random_vector<int32_t>(600, -100000, 100000),
                            {255, 256, -129, 128, 65535, -32769});
    auto ys = random_vector<int32_t>(600, 1, 300);
    check_elementwise<int32_t, int32_t>("narrow_casts", ops, xs, ys, ys);
}

} // namespace interp_test
