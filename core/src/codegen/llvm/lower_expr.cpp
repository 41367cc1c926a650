// Expressions, with the IR's semantics (docs/ir.md): wrapping integers, shifts modulo the
// width, fmin/fmax, ordered float comparisons but !=, short-circuit and/or, C casts, relaxed
// atomics. Intrinsic calls are in lower_call.cpp.
#include "codegen/llvm/lowering.hpp"

#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/Intrinsics.h>

namespace plexus::codegen {

using namespace ir;
using llvm::Value;

namespace {

// The read-modify-write operation of an atomic; CmpXchg has none, it lowers to cmpxchg.
llvm::AtomicRMWInst::BinOp atomic_rmw_op(AtomicOp op, Scalar type) {
    using Op = llvm::AtomicRMWInst::BinOp;
    const bool sg = is_signed(type);
    switch (op) {
    case AtomicOp::Add: return is_float(type) ? Op::FAdd : Op::Add;
    case AtomicOp::Sub: return Op::Sub;
    // fmin / fmax are minnum / maxnum, the IR's float min / max: a NaN operand yields the other.
    case AtomicOp::Min: return is_float(type) ? Op::FMin : sg ? Op::Min : Op::UMin;
    case AtomicOp::Max: return is_float(type) ? Op::FMax : sg ? Op::Max : Op::UMax;
    case AtomicOp::And: return Op::And;
    case AtomicOp::Or: return Op::Or;
    case AtomicOp::Xor: return Op::Xor;
    case AtomicOp::Xchg: return Op::Xchg;
    case AtomicOp::CmpXchg: break;
    }
    return Op::BAD_BINOP;
}

} // namespace

const Type& LlvmLowering::array_type(const std::string& array, Space space) const {
    const Type* t = nullptr;
    if (space == Space::Global)
        t = k_.param(array) ? &k_.param(array)->type : nullptr;
    else if (auto* a = space == Space::Local ? k_.shared_array(array) : k_.private_array(array))
        t = &a->type;
    if (!t) internal("no array '" + array + "' in the " + to_string(space) + " space");
    return *t;
}

Value* LlvmLowering::element_address(const std::string& array, Space space, const Expr& index) {
    Value* base = nullptr;
    if (space == Space::Global) {
        for (size_t i = 0; i < k_.params.size() && i < buffers_.size(); ++i)
            if (k_.params[i].name == array) base = buffers_[i];
    } else if (space == Space::Local) {
        for (size_t i = 0; i < k_.shared.size() && i < shared_.size(); ++i)
            if (k_.shared[i].name == array) base = shared_[i];
    } else {
        for (size_t i = 0; i < k_.privates.size(); ++i)
            if (k_.privates[i].name == array)
                return private_element(i, is_signed(index->type)
                                              ? b_.CreateSExt(expr(index), b_.getInt64Ty())
                                              : b_.CreateZExt(expr(index), b_.getInt64Ty()));
    }
    if (!base) internal("no array '" + array + "' in the " + to_string(space) + " space");
    llvm::Type* i64 = b_.getInt64Ty();
    // x + c with a constant c >= 0 on a signed index: the element c past x's. Where the i32 sum
    // wraps, the index it gives is negative and the access undefined, so this is exact wherever
    // the access is defined, and consecutive constants are then visibly consecutive addresses
    // (`in[i + 1]` next to `in[i]`: one vector load instead of a wrapped sum per element).
    auto* sum = as<Binary>(index);
    auto* c =
        sum && sum->op == BinaryOp::Add && is_signed(index->type) ? as<Const>(sum->b) : nullptr;
    llvm::Type* element = stride_type(array_type(array, space));
    if (c && c->i >= 0) {
        base = b_.CreateInBoundsGEP(element, base, b_.CreateSExt(expr(sum->a), i64));
        return b_.CreateInBoundsGEP(element, base, b_.getInt64(c->i), array + ".elem");
    }
    Value* i = expr(index);
    i = is_signed(index->type) ? b_.CreateSExt(i, i64) : b_.CreateZExt(i, i64);
    return b_.CreateInBoundsGEP(element, base, i, array + ".elem");
}

Value* LlvmLowering::visit(const Const& n) {
    if (is_float(n.type)) return llvm::ConstantFP::get(reg_type(n.type), n.f);
    if (n.type == Scalar::Bool) return b_.getInt1(n.i != 0);
    // An i32 constant is the low 32 bits of n.i.
    return llvm::ConstantInt::get(reg_type(n.type), static_cast<uint64_t>(n.i));
}

Value* LlvmLowering::visit(const Var& n) {
    return read_variable(lookup(n.name));
}

Value* LlvmLowering::visit(const Unary& n) {
    Value* a = expr(n.a);
    switch (n.op) {
    // Exact on f16 and bf16 too: the negation of a value of the type is one.
    case UnaryOp::Neg: return elem_float(n.type) ? b_.CreateFNeg(a) : b_.CreateNeg(a);
    case UnaryOp::Not:
    case UnaryOp::BitNot: return b_.CreateNot(a);
    }
    internal("unknown unary operator");
}

Value* LlvmLowering::compare(BinaryOp op, Value* a, Value* b, const Type& t) {
    using P = llvm::CmpInst::Predicate;
    int k = static_cast<int>(op) - static_cast<int>(BinaryOp::Eq); // Eq Ne Lt Le Gt Ge
    // Ordered float comparisons are false on NaN; != is the unordered one, as in C.
    static const P fp[] = {P::FCMP_OEQ, P::FCMP_UNE, P::FCMP_OLT,
                           P::FCMP_OLE, P::FCMP_OGT, P::FCMP_OGE};
    static const P si[] = {P::ICMP_EQ,  P::ICMP_NE,  P::ICMP_SLT,
                           P::ICMP_SLE, P::ICMP_SGT, P::ICMP_SGE};
    static const P ui[] = {P::ICMP_EQ,  P::ICMP_NE,  P::ICMP_ULT,
                           P::ICMP_ULE, P::ICMP_UGT, P::ICMP_UGE};
    if (k < 0 || k > 5) internal("not a comparison");
    if (is_float(t)) return b_.CreateFCmp(fp[k], a, b);
    return b_.CreateICmp(is_signed(t) ? si[k] : ui[k], a, b);
}

Value* LlvmLowering::int_divide(Value* a, Value* b, const Type& t, bool remainder) {
    if (ir::is_signed(t.scalar())) return remainder ? b_.CreateSRem(a, b) : b_.CreateSDiv(a, b);
    return remainder ? b_.CreateURem(a, b) : b_.CreateUDiv(a, b);
}

Value* LlvmLowering::short_circuit(const Binary& n) {
    const bool is_and = n.op == BinaryOp::LogicalAnd;
    Value* a = expr(n.a);
    llvm::BasicBlock* from = b_.GetInsertBlock();
    llvm::BasicBlock* rhs = new_block(is_and ? "and.rhs" : "or.rhs");
    llvm::BasicBlock* merge = new_block(is_and ? "and.end" : "or.end");
    if (is_and)
        b_.CreateCondBr(a, rhs, merge);
    else
        b_.CreateCondBr(a, merge, rhs);
    b_.SetInsertPoint(rhs);
    Value* b = expr(n.b);
    llvm::BasicBlock* rhs_end = b_.GetInsertBlock();
    b_.CreateBr(merge);
    b_.SetInsertPoint(merge);
    llvm::PHINode* phi = b_.CreatePHI(reg_type(Scalar::Bool), 2);
    phi->addIncoming(b_.getInt1(!is_and), from);
    phi->addIncoming(b, rhs_end);
    return phi;
}

Value* LlvmLowering::visit(const Binary& n) {
    if (n.op == BinaryOp::LogicalAnd || n.op == BinaryOp::LogicalOr) return short_circuit(n);
    Value* a = expr(n.a);
    Value* b = expr(n.b);
    const Type t = n.a->type; // a scalar, or a vector whose lanes follow the same rules
    const Scalar lane = t.scalar();
    const bool fp = elem_float(t), sg = ir::is_signed(lane);
    using llvm::Intrinsic::ID;
    switch (n.op) {
    // No nsw/nuw: integer arithmetic wraps. f16 and bf16 round each f32 result to the type:
    // the correctly rounded result, since f32 has more than twice their precision.
    case BinaryOp::Add: return fp ? round(b_.CreateFAdd(a, b), lane) : b_.CreateAdd(a, b);
    case BinaryOp::Sub: return fp ? round(b_.CreateFSub(a, b), lane) : b_.CreateSub(a, b);
    case BinaryOp::Mul: return fp ? round(b_.CreateFMul(a, b), lane) : b_.CreateMul(a, b);
    case BinaryOp::Div: return fp ? round(b_.CreateFDiv(a, b), lane) : int_divide(a, b, t, false);
    case BinaryOp::Rem: return int_divide(a, b, t, true);
    case BinaryOp::Min:
    case BinaryOp::Max: {
        const bool min = n.op == BinaryOp::Min;
        // minnum/maxnum are fmin/fmax: a NaN operand yields the other operand. The result is
        // an operand, so f16 and bf16 need no rounding.
        ID id = fp   ? (min ? llvm::Intrinsic::minnum : llvm::Intrinsic::maxnum)
                : sg ? (min ? llvm::Intrinsic::smin : llvm::Intrinsic::smax)
                     : (min ? llvm::Intrinsic::umin : llvm::Intrinsic::umax);
        return call_intrinsic(id, reg_type(t), {a, b});
    }
    case BinaryOp::BitAnd: return b_.CreateAnd(a, b);
    case BinaryOp::BitOr: return b_.CreateOr(a, b);
    case BinaryOp::BitXor: return b_.CreateXor(a, b);
    case BinaryOp::Shl:
    case BinaryOp::Shr: {
        // The amount is taken modulo the width (OpenCL's rule); LLVM's oversized shift is poison.
        unsigned bits = a->getType()->getScalarSizeInBits();
        Value* amount = b_.CreateAnd(b, llvm::ConstantInt::get(a->getType(), bits - 1));
        if (n.op == BinaryOp::Shl) return b_.CreateShl(a, amount);
        return sg ? b_.CreateAShr(a, amount) : b_.CreateLShr(a, amount);
    }
    case BinaryOp::LogicalAnd:
    case BinaryOp::LogicalOr: break;
    default: return compare(n.op, a, b, t);
    }
    internal("unhandled binary operator");
}

Value* LlvmLowering::visit(const Select& n) {
    Value* c = expr(n.cond);
    Value* a = expr(n.a);
    Value* b = expr(n.b);
    return b_.CreateSelect(c, a, b);
}

// Scalars, or vectors lane by lane (every instruction here takes vectors as they are). Into f16
// and bf16 through f32; out of them, exact into f32 and f64 and through f32 into integers.
Value* LlvmLowering::cast(Value* v, const Type& from_type, const Type& to_type) {
    const Scalar from = from_type.scalar(), to = to_type.scalar();
    if (from == to) return v;
    llvm::Type* t = reg_type(to_type);
    if (to == Scalar::Bool)
        return is_float(from) ? b_.CreateFCmpUNE(v, llvm::ConstantFP::get(v->getType(), 0.0))
                              : b_.CreateICmpNE(v, llvm::ConstantInt::get(v->getType(), 0));
    if (from == Scalar::Bool) return is_float(to) ? b_.CreateUIToFP(v, t) : b_.CreateZExt(v, t);
    if (is_integer(from) && is_integer(to)) return b_.CreateIntCast(v, t, is_signed(from));
    if (is_integer(from))
        return round(is_signed(from) ? b_.CreateSIToFP(v, t) : b_.CreateUIToFP(v, t), to);
    if (is_integer(to)) return float_to_int(v, to_type);
    if (is_half(to)) return round(b_.CreateFPCast(v, same_shape(v, b_.getFloatTy())), to);
    return b_.CreateFPCast(v, t); // f16 and bf16 are already f32
}

// Out of range is undefined in the IR; saturating keeps it from becoming poison that the
// optimizer could spread, and clamps it alike on every target (a NaN may still differ: see
// saturating_casts_to_cvt in the PTX target).
// LLVM 19 folds fptosi through exact conversions, but not llvm.fptosi.sat; two such folds,
// exact under saturation too, keep cast chains as short as fptosi had them: a float widened
// by fpext converts as the narrower one, and an integer that the same saturating conversion
// made from a float of no more precision converts back to itself (it is exact in the wider
// float, or the saturated bound, which saturates again).
Value* LlvmLowering::float_to_int(Value* v, const Type& to) {
    // Not from a half or bfloat (an f16 load widened by fpext): they convert through f32.
    auto* ext = llvm::dyn_cast<llvm::FPExtInst>(v);
    if (ext && ext->getSrcTy()->getScalarSizeInBits() >= 32) v = ext->getOperand(0);
    const bool sg = ir::is_signed(to.scalar());
    const auto id = sg ? llvm::Intrinsic::fptosi_sat : llvm::Intrinsic::fptoui_sat;
    const auto back = sg ? llvm::Instruction::SIToFP : llvm::Instruction::UIToFP;
    llvm::Type* t = reg_type(to);
    if (auto* wide = llvm::dyn_cast<llvm::CastInst>(v); wide && wide->getOpcode() == back) {
        auto* first = llvm::dyn_cast<llvm::IntrinsicInst>(wide->getOperand(0));
        if (first && first->getIntrinsicID() == id && first->getType() == t &&
            first->getArgOperand(0)->getType()->getFPMantissaWidth() <=
                v->getType()->getFPMantissaWidth())
            return first;
    }
    return b_.CreateIntrinsic(id, {t, v->getType()}, {v});
}

Value* LlvmLowering::visit(const Cast& n) {
    return cast(expr(n.a), n.a->type, n.type);
}

Value* LlvmLowering::visit(const Load& n) {
    return load(element_address(n.array, n.space, n.index), n.type, n.array);
}

Value* LlvmLowering::visit(const Atomic& n) {
    Value* p = element_address(n.array, n.space, n.index);
    Value* v = expr(n.value);
    // Relaxed, like OpenCL's atomic_add and CUDA's atomicAdd; Fence statements order them.
    auto order = llvm::AtomicOrdering::Monotonic;
    if (n.op == AtomicOp::CmpXchg) {
        Value* cmp = expr(n.compare);
        Value* pair = b_.CreateAtomicCmpXchg(p, cmp, v, align_of(n.type), order, order);
        return b_.CreateExtractValue(pair, 0);
    }
    return b_.CreateAtomicRMW(atomic_rmw_op(n.op, n.type.scalar()), p, v, align_of(n.type), order);
}

} // namespace plexus::codegen
