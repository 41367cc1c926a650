// The f16 and bf16 conversions that generated OpenCL C and CUDA C carry: the same integer
// steps as plexus/half.hpp, so every backend rounds bit for bit alike, and neither language
// needs its optional half support (cl_khr_fp16, cuda_fp16.h, which NVRTC cannot include).
// A dialect with conversion instructions that round alike gives its own (CUDA C: cvt).
#include "clike.hpp"

namespace plexus::codegen::clike {
namespace {

// Replaces each "U32", "U16", "BITS(", "FLOAT(" and "FN " of a template with the dialect's
// spelling, so one text serves both languages.
std::string spell(const Dialect& d, const std::string& text) {
    const std::pair<std::string, std::string> words[] = {
        {"U32", d.scalar_name(ir::Scalar::U32)},
        {"U16", d.scalar_name(ir::Scalar::U16)},
        {"BITS(", cat(d.float_bits_function(), "(")},
        {"FLOAT(", cat(d.bits_float_function(), "(")},
        {"FN ", d.helper_prefix()},
    };
    std::string out;
    for (size_t i = 0; i < text.size();) {
        bool replaced = false;
        for (auto& [from, to] : words)
            if (text.compare(i, from.size(), from) == 0) {
                out += to;
                i += from.size();
                replaced = true;
                break;
            }
        if (!replaced) out += text[i++];
    }
    return out;
}

// The subnormal case adds 0.5 so that the float adder's own round-to-nearest-even rounds at
// the last bit of a subnormal half, as half.hpp explains; an f32 subnormal input that a
// flush-to-zero device flushes there rounds to zero either way.
const char* const f16_text =
    "// f16 is a 16-bit pattern in memory and a float in registers: these convert exactly as\n"
    "// plexus/half.hpp does (round to nearest, ties to even; NaN stays NaN).\n"
    "FN U16 plx_to_f16(float f) {\n"
    "    U32 x = BITS(f);\n"
    "    const U32 sign = (x >> 16) & 0x8000u;\n"
    "    x &= 0x7fffffffu;\n"
    "    if (x > 0x7f800000u) return (U16)(sign | 0x7e00u);\n"
    "    if (x >= 0x477ff000u) return (U16)(sign | 0x7c00u);\n"
    "    if (x < 0x38800000u) return (U16)(sign | (BITS(FLOAT(x) + 0.5f) - 0x3f000000u));\n"
    "    return (U16)(sign | ((x + 0xc8000fffu + ((x >> 13) & 1u)) >> 13));\n"
    "}\n"
    "FN float plx_from_f16(U16 h) {\n"
    "    const U32 sign = (U32)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;\n"
    "    if (exp == 0x1fu) return FLOAT(sign | 0x7f800000u | (mant << 13));\n"
    "    if (exp == 0u) return FLOAT(sign | BITS((float)mant * 0x1p-24f));\n"
    "    return FLOAT(sign | ((exp + 112u) << 23) | (mant << 13));\n"
    "}\n"
    "FN float plx_round_f16(float f) { return plx_from_f16(plx_to_f16(f)); }\n";

const char* const bf16_text =
    "// bf16 is the upper half of a float: rounded to nearest, ties to even, as plexus/half.hpp.\n"
    "FN U16 plx_to_bf16(float f) {\n"
    "    const U32 x = BITS(f);\n"
    "    if ((x & 0x7fffffffu) > 0x7f800000u) return (U16)((x >> 16) | 0x40u);\n"
    "    return (U16)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);\n"
    "}\n"
    "FN float plx_from_bf16(U16 b) { return FLOAT((U32)b << 16); }\n"
    "FN float plx_round_bf16(float f) { return plx_from_bf16(plx_to_bf16(f)); }\n";

} // namespace

std::string half_function_name(HalfFn fn, ir::Scalar format, uint32_t lanes) {
    const char* verb = fn == HalfFn::To     ? "plx_to_"
                       : fn == HalfFn::From ? "plx_from_"
                                            : "plx_round_";
    return cat(verb, format == ir::Scalar::F16 ? "f16" : "bf16",
               lanes > 1 ? cat("x", std::to_string(lanes)) : "");
}

std::string half_function(const Dialect& d, Prelude& prelude, HalfFn fn, ir::Scalar format,
                          uint32_t lanes) {
    const bool f16 = format == ir::Scalar::F16;
    if (prelude.first(f16 ? "plx_f16" : "plx_bf16")) {
        prelude.add_function(d.half_conversions(format, spell(d, f16 ? f16_text : bf16_text)));
    }
    const std::string scalar = half_function_name(fn, format, 1);
    if (lanes == 1) return scalar;
    const std::string name = half_function_name(fn, format, lanes);
    if (prelude.first(name)) {
        // Lane by lane: the types first, so that a dialect that defines its vectors adds them
        // before this function.
        const std::string bits = d.vector_name(ir::Scalar::U16, lanes, prelude);
        const std::string floats = d.vector_name(ir::Scalar::F32, lanes, prelude);
        const std::string& in = fn == HalfFn::From ? bits : floats;
        const std::string& out = fn == HalfFn::To ? bits : floats;
        std::vector<std::string> each;
        for (uint32_t i = 0; i < lanes; ++i)
            each.push_back(cat(scalar, "(", d.lane("v", i, lanes), ")"));
        prelude.add_function(cat(d.helper_prefix(), out, " ", name, "(", in, " v) {\n    return ",
                                 d.vector_literal(out, each), ";\n}\n"));
    }
    return name;
}

} // namespace plexus::codegen::clike
