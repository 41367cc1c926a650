// f16 and bf16: held as f32 in registers, 16 bits in memory. The integer code here rounds f32 to
// their bits and widens them back exactly, bit for bit as plexus/half.hpp does; targets with a
// conversion instruction override the two hooks. Every operation works on scalars and vectors.
#include "codegen/llvm/lowering.hpp"

namespace plexus::codegen {

using namespace ir;
using llvm::Value;

// The nearest value of the type, as f32. Its bits are kept, so that storing it converts nothing.
Value* LlvmLowering::round(Value* v, Scalar t) {
    if (!is_half(t)) return v;
    Value* bits = half_from_f32(v, t);
    Value* r = half_to_f32(bits, t);
    half_bits_[{r, t}] = bits;
    return r;
}

// `element`, or a vector of it with as many lanes as `v` has.
llvm::Type* LlvmLowering::same_shape(Value* v, llvm::Type* element) const {
    return v->getType()->getWithNewType(element);
}

// Select-based, so that a vector of lanes converts without branches.
Value* LlvmLowering::half_from_f32(Value* f, Scalar t) {
    llvm::Type* i32 = same_shape(f, b_.getInt32Ty());
    auto k = [&](uint32_t c) { return llvm::ConstantInt::get(i32, c); };
    Value* x = b_.CreateBitCast(f, i32);
    Value* magnitude = b_.CreateAnd(x, k(0x7fffffffu));
    Value* nan = b_.CreateICmpUGT(magnitude, k(0x7f800000u));
    Value* bits = nullptr;
    if (t == Scalar::BF16) {
        // The upper half rounded to nearest, ties to even; a NaN keeps its upper half, quieted.
        Value* upper = b_.CreateLShr(x, k(16));
        Value* odd = b_.CreateAnd(upper, k(1));
        Value* rounded = b_.CreateLShr(b_.CreateAdd(b_.CreateAdd(x, k(0x7fffu)), odd), k(16));
        bits = b_.CreateSelect(nan, b_.CreateOr(upper, k(0x40u)), rounded);
    } else {
        Value* sign = b_.CreateAnd(b_.CreateLShr(x, k(16)), k(0x8000u));
        // Normal: rebias the exponent and round the 13 dropped bits to nearest, ties to even
        // (the addition wraps modulo 2^32 by design).
        Value* odd = b_.CreateAnd(b_.CreateLShr(magnitude, k(13)), k(1));
        Value* normal =
            b_.CreateLShr(b_.CreateAdd(b_.CreateAdd(magnitude, k(0xc8000fffu)), odd), k(13));
        // Below 2^-14 the half is subnormal: adding 0.5 lets the f32 adder round at 2^-24, the
        // last bit of a subnormal half; what is left above 0.5 is its mantissa.
        Value* shifted = b_.CreateFAdd(b_.CreateBitCast(magnitude, f->getType()),
                                       llvm::ConstantFP::get(f->getType(), 0.5));
        Value* subnormal = b_.CreateSub(b_.CreateBitCast(shifted, i32), k(0x3f000000u));
        bits = b_.CreateSelect(b_.CreateICmpULT(magnitude, k(0x38800000u)), subnormal, normal);
        // At or above 65520 (halfway between 65504 and 2^16) the result is infinity.
        bits = b_.CreateSelect(b_.CreateICmpUGE(magnitude, k(0x477ff000u)), k(0x7c00u), bits);
        bits = b_.CreateOr(sign, b_.CreateSelect(nan, k(0x7e00u), bits));
    }
    return b_.CreateTrunc(bits, same_shape(f, b_.getInt16Ty()));
}

Value* LlvmLowering::half_to_f32(Value* bits, Scalar t) {
    llvm::Type* i32 = same_shape(bits, b_.getInt32Ty());
    llvm::Type* f32 = same_shape(bits, b_.getFloatTy());
    auto k = [&](uint32_t c) { return llvm::ConstantInt::get(i32, c); };
    Value* h = b_.CreateZExt(bits, i32);
    if (t == Scalar::BF16) return b_.CreateBitCast(b_.CreateShl(h, k(16)), f32);
    Value* sign = b_.CreateShl(b_.CreateAnd(h, k(0x8000u)), k(16));
    Value* exp = b_.CreateAnd(b_.CreateLShr(h, k(10)), k(0x1fu));
    Value* mantissa = b_.CreateShl(b_.CreateAnd(h, k(0x3ffu)), k(13));
    // Normal: rebias the exponent; infinity and NaN: the f32 exponent of all ones.
    Value* normal = b_.CreateOr(b_.CreateShl(b_.CreateAdd(exp, k(112)), k(23)), mantissa);
    Value* special = b_.CreateOr(k(0x7f800000u), mantissa);
    // Zero and subnormals: mantissa * 2^-24, exact in an f32.
    Value* tiny = b_.CreateFMul(b_.CreateUIToFP(b_.CreateAnd(h, k(0x3ffu)), f32),
                                llvm::ConstantFP::get(f32, 1.0 / 16777216.0));
    Value* magnitude =
        b_.CreateSelect(b_.CreateICmpEQ(exp, k(0)), b_.CreateBitCast(tiny, i32),
                        b_.CreateSelect(b_.CreateICmpEQ(exp, k(0x1fu)), special, normal));
    return b_.CreateBitCast(b_.CreateOr(sign, magnitude), f32);
}

Value* LlvmLowering::half_by_fptrunc(Value* f, Scalar t) {
    llvm::Type* half = t == Scalar::F16 ? b_.getHalfTy() : b_.getBFloatTy();
    return b_.CreateBitCast(b_.CreateFPTrunc(f, same_shape(f, half)),
                            same_shape(f, b_.getInt16Ty()));
}

Value* LlvmLowering::half_by_fpext(Value* bits, Scalar t) {
    llvm::Type* half = t == Scalar::F16 ? b_.getHalfTy() : b_.getBFloatTy();
    return b_.CreateFPExt(b_.CreateBitCast(bits, same_shape(bits, half)),
                          same_shape(bits, b_.getFloatTy()));
}

} // namespace plexus::codegen
