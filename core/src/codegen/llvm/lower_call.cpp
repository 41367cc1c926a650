// Calls of catalog intrinsics: the work-item indices, derived from the target's four index
// hooks, and math: exact operations here (ilogb from the bits), transcendental functions and
// the px::fast:: ones from the target.
#include "codegen/llvm/lowering.hpp"

#include <llvm/IR/Intrinsics.h>

#include <utility>

namespace plexus::codegen {

using namespace ir;
using llvm::Value;

Value* LlvmLowering::visit(const Call& n) {
    std::vector<Value*> args;
    for (auto& a : n.args)
        args.push_back(expr(a));
    // The catalog's calls are subgroup operations, indices (u32, u64: "local_id_x") and math
    // ("sin_f32", and "ilogb_f32", an i32 of an f32).
    if (n.name.rfind("subgroup_", 0) == 0) return subgroup(n.name, n.type.scalar(), args);
    const std::string base = n.name.substr(0, n.name.rfind('_'));
    if (base == "ilogb") return ilogb(args[0], n.args[0]->type.scalar());
    if (!is_float(n.type)) return index(n.name);
    if (base.rfind("fast_", 0) == 0) return fast_math(base.substr(5), args);
    return math(base, n.type.scalar(), args);
}

Value* LlvmLowering::index(const std::string& name) {
    const size_t cut = name.rfind('_');
    const char axis = name.back();
    if (cut == std::string::npos || cut + 2 != name.size() || axis < 'x' || axis > 'z')
        internal("unknown index intrinsic '" + name + "'");
    const unsigned d = static_cast<unsigned>(axis - 'x');
    const std::string what = name.substr(0, cut);
    if (what == "local_id") return local_id(d);
    if (what == "local_size") return local_size(d);
    if (what == "group_id") return b_.CreateTrunc(group_id(d), b_.getInt32Ty());
    if (what == "num_groups") return b_.CreateTrunc(num_groups(d), b_.getInt32Ty());
    // In 64 bits, so that a grid of more than 2^32 work-items counts right; no wrap, since
    // devices bound a grid far below 2^63 work-items.
    llvm::Type* i64 = b_.getInt64Ty();
    if (what == "global_id") {
        Value* id = b_.CreateZExt(local_id(d), i64);
        Value* size = b_.CreateZExt(local_size(d), i64);
        Value* first = b_.CreateMul(group_id(d), size, "", true, true);
        return b_.CreateAdd(first, id, "global_id", true, true);
    }
    if (what == "global_size") {
        Value* size = b_.CreateZExt(local_size(d), i64);
        return b_.CreateMul(num_groups(d), size, "global_size", true, true);
    }
    internal("unknown index intrinsic '" + name + "'");
}

// These are exact in IEEE arithmetic and every LLVM target lowers them: the same bits on each.
Value* LlvmLowering::math(const std::string& base, Scalar t, const std::vector<Value*>& a) {
    using llvm::Intrinsic::ID;
    static const std::pair<const char*, ID> exact[] = {
        {"sqrt", llvm::Intrinsic::sqrt},   {"fabs", llvm::Intrinsic::fabs},
        {"floor", llvm::Intrinsic::floor}, {"ceil", llvm::Intrinsic::ceil},
        {"fma", llvm::Intrinsic::fma},     {"min", llvm::Intrinsic::minnum},
        {"max", llvm::Intrinsic::maxnum}};
    llvm::Type* ty = reg_type(t);
    for (auto& [name, id] : exact)
        if (base == name) return call_intrinsic(id, ty, a);
    if (base == "clamp")
        return call_intrinsic(llvm::Intrinsic::minnum, ty,
                              {call_intrinsic(llvm::Intrinsic::maxnum, ty, {a[0], a[1]}), a[2]});
    return transcendental(base, t, a);
}

// floor(log2 |x|) of a finite nonzero x, from its bits: the biased exponent, or for a
// denormal the position of its highest mantissa bit. The IR leaves 0, infinities and NaN to the
// backend; here they give INT_MIN (0) and INT_MAX.
Value* LlvmLowering::ilogb(Value* x, Scalar t) {
    const bool f32 = t == Scalar::F32;
    const unsigned width = f32 ? 32 : 64, mantissa = f32 ? 23 : 52;
    const int64_t bias = f32 ? 127 : 1023, top = f32 ? 0xff : 0x7ff;
    llvm::IntegerType* it = b_.getIntNTy(width);
    auto k = [&](int64_t v) { return llvm::ConstantInt::getSigned(it, v); };
    Value* bits = b_.CreateBitCast(x, it);
    Value* biased = b_.CreateAnd(b_.CreateLShr(bits, k(mantissa)), k(top));
    Value* fraction = b_.CreateAnd(bits, k((int64_t(1) << mantissa) - 1));
    Value* lead = call_intrinsic(llvm::Intrinsic::ctlz, it, {fraction, b_.getFalse()});
    // A denormal's value is fraction * 2^(1 - bias - mantissa).
    Value* denormal = b_.CreateSub(k(int64_t(width) - 1 - (bias - 1) - mantissa), lead);
    Value* e =
        b_.CreateSelect(b_.CreateICmpEQ(biased, k(0)), denormal, b_.CreateSub(biased, k(bias)));
    e = b_.CreateTrunc(e, b_.getInt32Ty());
    Value* zero = b_.CreateICmpEQ(b_.CreateShl(bits, k(1)), k(0));
    e = b_.CreateSelect(zero, b_.getInt32(INT32_MIN), e);
    return b_.CreateSelect(b_.CreateICmpEQ(biased, k(top)), b_.getInt32(INT32_MAX), e);
}

// The px::fast:: functions by default: the precise ones, which meet every fast bound. A target
// with faster approximations (PTX) overrides this.
Value* LlvmLowering::fast_math(const std::string& base, const std::vector<Value*>& a) {
    llvm::Type* f32 = b_.getFloatTy();
    if (base == "divide") return b_.CreateFDiv(a[0], a[1]);
    if (base == "recip") return b_.CreateFDiv(llvm::ConstantFP::get(f32, 1.0), a[0]);
    if (base == "exp10")
        return transcendental("pow", Scalar::F32, {llvm::ConstantFP::get(f32, 10.0), a[0]});
    return math(base, Scalar::F32, a);
}

} // namespace plexus::codegen
