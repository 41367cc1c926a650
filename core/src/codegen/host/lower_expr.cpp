// Expressions, variables and intrinsics of the work-group function, with the IR's semantics
// (docs/ir.md): wrapping integers, shifts modulo the width, fmin/fmax, C casts.
#include "codegen/host/lowering.hpp"
#include "codegen/llvm_atomic.hpp"

#include <llvm/IR/Intrinsics.h>

namespace plexus::codegen::host {

using namespace ir;
using llvm::Value;

// ---- types and variables -----------------------------------------------------------------

llvm::Type* Lowering::reg_type(const Type& type) const {
    if (!type.is_scalar()) unsupported("non-scalar types");
    switch (type.scalar()) {
    case Scalar::Bool: return i1_;
    case Scalar::I32: case Scalar::U32: return i32_;
    case Scalar::I64: case Scalar::U64: return i64_;
    case Scalar::F32: return f32_;
    case Scalar::F64: return f64_;
    default: break;
    }
    unsupported(to_string(type.scalar()));
}
llvm::Type* Lowering::mem_type(const Type& t) const { return t == Scalar::Bool ? i8_ : reg_type(t); }
Value* Lowering::to_mem(Value* v, const Type& t) { return t == Scalar::Bool ? b_.CreateZExt(v, i8_) : v; }
Value* Lowering::from_mem(Value* v, const Type& t) { return t == Scalar::Bool ? b_.CreateTrunc(v, i1_) : v; }

const Lowering::Slot& Lowering::lookup(const std::string& name) const {
    for (auto it = scope_.rbegin(); it != scope_.rend(); ++it)
        if (it->first == name) return slots_[it->second];
    internal("'" + name + "' is not declared here although the kernel validated");
}

Value* Lowering::slot_address(const Slot& s) {
    if (s.storage != Storage::PerItem) return s.ptr;
    return b_.CreateInBoundsGEP(mem_type(s.type), s.ptr, item_->linear);
}

Value* Lowering::read(const Slot& s) {
    if (s.storage == Storage::Value) return s.ptr;
    return from_mem(b_.CreateLoad(mem_type(s.type), slot_address(s)), s.type);
}

void Lowering::write(const Slot& s, Value* v) {
    if (s.storage == Storage::Value) internal("assignment to a parameter kept as a value");
    b_.CreateStore(to_mem(v, s.type), slot_address(s));
}

void Lowering::declare(const std::string& name, Value* init) {
    size_t d = next_decl_++;
    if (d >= slots_.size()) internal("more declarations than the layout found");
    scope_.emplace_back(name, d);
    write(slots_[d], init);
}

Value* Lowering::element_ptr(const std::string& array, Space space, const Type& elem, const Expr& index) {
    Value* base = nullptr;
    if (space == Space::Global) {
        for (size_t i = 0; i < k_.params.size(); ++i)
            if (k_.params[i].name == array) base = buffers_[i];
    } else {
        for (size_t i = 0; i < k_.shared.size(); ++i)
            if (k_.shared[i].name == array) base = shared_[i];
    }
    if (!base) internal("no array '" + array + "' in the " + to_string(space) + " space");
    Value* i = expr(index);
    i = is_signed(index->type) ? b_.CreateSExt(i, i64_) : b_.CreateZExt(i, i64_);
    return b_.CreateInBoundsGEP(mem_type(elem), base, i, array + ".elem");
}

// ---- expressions -------------------------------------------------------------------------

Value* Lowering::visit(const Const& n) {
    if (n.type == Scalar::Bool) return b_.getInt1(n.i != 0);
    if (is_float(n.type)) return llvm::ConstantFP::get(reg_type(n.type), n.f);
    return llvm::ConstantInt::get(reg_type(n.type), static_cast<uint64_t>(n.i));
}

Value* Lowering::visit(const Var& n) { return read(lookup(n.name)); }

Value* Lowering::visit(const Unary& n) {
    Value* a = expr(n.a);
    switch (n.op) {
    case UnaryOp::Neg: return is_float(n.type) ? b_.CreateFNeg(a) : b_.CreateNeg(a);
    case UnaryOp::Not: return b_.CreateNot(a);
    case UnaryOp::BitNot: return b_.CreateNot(a);
    }
    internal("unknown unary operator");
}

Value* Lowering::compare(BinaryOp op, Value* a, Value* b, const Type& t) {
    using P = llvm::CmpInst::Predicate;
    int k = static_cast<int>(op) - static_cast<int>(BinaryOp::Eq); // Eq Ne Lt Le Gt Ge
    // Ordered float comparisons are false on NaN; != is the unordered one, as in C.
    static const P fp[] = {P::FCMP_OEQ, P::FCMP_UNE, P::FCMP_OLT, P::FCMP_OLE, P::FCMP_OGT, P::FCMP_OGE};
    static const P si[] = {P::ICMP_EQ, P::ICMP_NE, P::ICMP_SLT, P::ICMP_SLE, P::ICMP_SGT, P::ICMP_SGE};
    static const P ui[] = {P::ICMP_EQ, P::ICMP_NE, P::ICMP_ULT, P::ICMP_ULE, P::ICMP_UGT, P::ICMP_UGE};
    if (k < 0 || k > 5) internal("not a comparison");
    if (is_float(t)) return b_.CreateFCmp(fp[k], a, b);
    return b_.CreateICmp(is_signed(t) ? si[k] : ui[k], a, b);
}

// Division by zero is undefined in the IR, as in C; here it yields a / 1 rather than a
// SIGFPE that would take the whole process down, and INT_MIN / -1 wraps.
Value* Lowering::divide(Value* a, Value* b, const Type& t, bool remainder) {
    llvm::Type* ty = reg_type(t);
    Value* zero = b_.CreateICmpEQ(b, llvm::ConstantInt::get(ty, 0));
    if (!is_signed(t)) {
        Value* d = b_.CreateSelect(zero, llvm::ConstantInt::get(ty, 1), b);
        return remainder ? b_.CreateURem(a, d) : b_.CreateUDiv(a, d);
    }
    Value* minus_one = b_.CreateICmpEQ(b, llvm::ConstantInt::getSigned(ty, -1));
    Value* d = b_.CreateSelect(b_.CreateOr(zero, minus_one), llvm::ConstantInt::get(ty, 1), b);
    if (remainder) return b_.CreateSRem(a, d); // x % -1 == 0 == x % 1
    return b_.CreateSelect(minus_one, b_.CreateNeg(a), b_.CreateSDiv(a, d));
}

Value* Lowering::call_intrinsic(llvm::Intrinsic::ID id, llvm::Type* t, std::vector<Value*> args) {
    return b_.CreateIntrinsic(id, {t}, args);
}

Value* Lowering::visit(const Binary& n) {
    if (n.op == BinaryOp::LogicalAnd || n.op == BinaryOp::LogicalOr) {
        bool is_and = n.op == BinaryOp::LogicalAnd;
        Value* a = expr(n.a);
        llvm::BasicBlock* from = b_.GetInsertBlock();
        llvm::BasicBlock* rhs = llvm::BasicBlock::Create(c_, is_and ? "and.rhs" : "or.rhs", f_);
        llvm::BasicBlock* merge = llvm::BasicBlock::Create(c_, is_and ? "and.end" : "or.end", f_);
        if (is_and) b_.CreateCondBr(a, rhs, merge);
        else b_.CreateCondBr(a, merge, rhs);
        b_.SetInsertPoint(rhs);
        Value* b = expr(n.b);
        llvm::BasicBlock* rhs_end = b_.GetInsertBlock();
        b_.CreateBr(merge);
        b_.SetInsertPoint(merge);
        llvm::PHINode* phi = b_.CreatePHI(i1_, 2);
        phi->addIncoming(b_.getInt1(!is_and), from);
        phi->addIncoming(b, rhs_end);
        return phi;
    }
    Value* a = expr(n.a);
    Value* b = expr(n.b);
    Type t = n.a->type;
    bool fp = is_float(t), sg = is_signed(t);
    switch (n.op) {
    case BinaryOp::Add: return fp ? b_.CreateFAdd(a, b) : b_.CreateAdd(a, b);
    case BinaryOp::Sub: return fp ? b_.CreateFSub(a, b) : b_.CreateSub(a, b);
    case BinaryOp::Mul: return fp ? b_.CreateFMul(a, b) : b_.CreateMul(a, b);
    case BinaryOp::Div: return fp ? b_.CreateFDiv(a, b) : divide(a, b, t, false);
    case BinaryOp::Rem: return divide(a, b, t, true);
    case BinaryOp::Min:
        return call_intrinsic(fp ? llvm::Intrinsic::minnum : sg ? llvm::Intrinsic::smin : llvm::Intrinsic::umin,
                              a->getType(), {a, b});
    case BinaryOp::Max:
        return call_intrinsic(fp ? llvm::Intrinsic::maxnum : sg ? llvm::Intrinsic::smax : llvm::Intrinsic::umax,
                              a->getType(), {a, b});
    case BinaryOp::BitAnd: return b_.CreateAnd(a, b);
    case BinaryOp::BitOr: return b_.CreateOr(a, b);
    case BinaryOp::BitXor: return b_.CreateXor(a, b);
    case BinaryOp::Shl: case BinaryOp::Shr: {
        unsigned bits = a->getType()->getIntegerBitWidth();
        Value* amount = b_.CreateAnd(b, llvm::ConstantInt::get(a->getType(), bits - 1));
        if (n.op == BinaryOp::Shl) return b_.CreateShl(a, amount);
        return sg ? b_.CreateAShr(a, amount) : b_.CreateLShr(a, amount);
    }
    case BinaryOp::LogicalAnd: case BinaryOp::LogicalOr: break;
    default: return compare(n.op, a, b, t);
    }
    internal("unhandled binary operator");
}

Value* Lowering::visit(const Select& n) {
    Value* c = expr(n.cond);
    Value* a = expr(n.a);
    Value* b = expr(n.b);
    return b_.CreateSelect(c, a, b);
}

Value* Lowering::cast(Value* v, const Type& from, const Type& to) {
    if (from == to) return v;
    llvm::Type* t = reg_type(to);
    if (to == Scalar::Bool)
        return is_float(from) ? b_.CreateFCmpUNE(v, llvm::ConstantFP::get(v->getType(), 0.0))
                              : b_.CreateICmpNE(v, llvm::ConstantInt::get(v->getType(), 0));
    if (from == Scalar::Bool) return is_float(to) ? b_.CreateUIToFP(v, t) : b_.CreateZExt(v, t);
    if (is_integer(from) && is_integer(to)) return b_.CreateIntCast(v, t, is_signed(from));
    if (is_integer(from)) return is_signed(from) ? b_.CreateSIToFP(v, t) : b_.CreateUIToFP(v, t);
    if (is_integer(to)) {
        // Out of range is undefined in the IR; saturating keeps it from becoming poison.
        auto id = is_signed(to) ? llvm::Intrinsic::fptosi_sat : llvm::Intrinsic::fptoui_sat;
        return b_.CreateIntrinsic(id, {t, v->getType()}, {v});
    }
    return to == Scalar::F64 ? b_.CreateFPExt(v, t) : b_.CreateFPTrunc(v, t);
}

Value* Lowering::visit(const Cast& n) { return cast(expr(n.a), n.a->type, n.type); }

Value* Lowering::visit(const Load& n) {
    Value* p = element_ptr(n.array, n.space, n.type, n.index);
    return b_.CreateAlignedLoad(mem_type(n.type), p, llvm::Align(size_of(n.type)), n.array);
}

Value* Lowering::visit(const Atomic& n) {
    Value* p = element_ptr(n.array, n.space, n.type, n.index);
    Value* v = expr(n.value);
    llvm::Align align(size_of(n.type));
    // Relaxed, like OpenCL's atomic_add and CUDA's atomicAdd; Fence statements order them.
    auto order = llvm::AtomicOrdering::Monotonic;
    if (n.op == AtomicOp::CmpXchg) {
        Value* cmp = expr(n.compare);
        Value* pair = b_.CreateAtomicCmpXchg(p, cmp, v, align, order, order);
        return b_.CreateExtractValue(pair, 0);
    }
    return b_.CreateAtomicRMW(atomic_rmw_op(n.op, n.type.scalar()), p, v, align, order);
}

// ---- intrinsics ------------------------------------------------------------------------------

Value* Lowering::index_call(const std::string& name) {
    char axis = name.back();
    if (name.size() < 3 || name[name.size() - 2] != '_' || axis < 'x' || axis > 'z')
        internal("unknown index intrinsic '" + name + "'");
    unsigned d = static_cast<unsigned>(axis - 'x');
    std::string what = name.substr(0, name.size() - 2);
    Value* ls64 = b_.CreateZExt(local_size_[d], i64_);
    if (what == "local_id") return item_->lid[d];
    if (what == "group_id") return b_.CreateTrunc(group_id_[d], i32_);
    if (what == "local_size") return local_size_[d];
    if (what == "num_groups") return b_.CreateTrunc(num_groups_[d], i32_);
    if (what == "global_id")
        return b_.CreateAdd(b_.CreateMul(group_id_[d], ls64, "", true, true),
                            b_.CreateZExt(item_->lid[d], i64_), "global_id", true, true);
    if (what == "global_size") return b_.CreateMul(num_groups_[d], ls64, "global_size", true, true);
    internal("unknown index intrinsic '" + name + "'");
}

Value* Lowering::math(const std::string& base, Scalar t, std::vector<Value*> a) {
    llvm::Type* ty = reg_type(t);
    using namespace llvm;
    static const std::pair<const char*, Intrinsic::ID> direct[] = {
        {"sqrt", Intrinsic::sqrt},   {"exp", Intrinsic::exp},     {"exp2", Intrinsic::exp2},
        {"log", Intrinsic::log},     {"log2", Intrinsic::log2},   {"sin", Intrinsic::sin},
        {"cos", Intrinsic::cos},     {"pow", Intrinsic::pow},     {"fabs", Intrinsic::fabs},
        {"floor", Intrinsic::floor}, {"ceil", Intrinsic::ceil},   {"fma", Intrinsic::fma},
        {"min", Intrinsic::minnum},  {"max", Intrinsic::maxnum}};
    for (auto& [n, id] : direct)
        if (base == n) return call_intrinsic(id, ty, a);
    if (base == "rsqrt") return b_.CreateFDiv(ConstantFP::get(ty, 1.0), call_intrinsic(Intrinsic::sqrt, ty, a));
    if (base == "clamp")
        return call_intrinsic(Intrinsic::minnum, ty, {call_intrinsic(Intrinsic::maxnum, ty, {a[0], a[1]}), a[2]});
    if (base == "tan") {
        // No LLVM intrinsic: libm's tan / tanf, which the JIT finds in the process.
        FunctionType* ft = FunctionType::get(ty, {ty}, false);
        FunctionCallee fn = m_->getOrInsertFunction(t == Scalar::F32 ? "tanf" : "tan", ft);
        if (auto* f = dyn_cast<Function>(fn.getCallee())) {
            f->setDoesNotThrow();
            f->setWillReturn();
            f->setDoesNotAccessMemory(); // no errno reads are possible from kernel code
        }
        return b_.CreateCall(fn, a);
    }
    internal("unknown math intrinsic '" + base + "'");
}

Value* Lowering::visit(const Call& n) {
    std::vector<Value*> args;
    for (auto& a : n.args) args.push_back(expr(a));
    const std::string& name = n.name;
    auto suffix = [&](const char* s) {
        size_t l = std::char_traits<char>::length(s);
        return name.size() > l && name.compare(name.size() - l, l, s) == 0;
    };
    if (suffix("_f32")) return math(name.substr(0, name.size() - 4), Scalar::F32, args);
    if (suffix("_f64")) return math(name.substr(0, name.size() - 4), Scalar::F64, args);
    return index_call(name);
}

} // namespace plexus::codegen::host
