// Lowers an ir::Kernel to LLVM IR for nvptx64: one kernel function with buffers as global
// (addrspace 1) pointers, shared arrays as addrspace 3 globals, variables in allocas (mem2reg
// makes them registers), and control flow as plain branches. docs/ir.md gives the semantics.
#include "ptx_target.hpp"

#include "../llvm_atomic.hpp"

#include "plexus/catalog.hpp"
#include "plexus/error.hpp"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include <map>
#include <set>
#include <vector>

namespace plexus::codegen::ptx {
namespace {

using namespace plexus::ir;
using llvm::Value;

constexpr unsigned global_space = 1;
constexpr unsigned shared_space = 3;

// Math that libdevice provides and the NVPTX backend cannot lower by itself (it would need a
// libm call, which PTX does not have).
const std::set<std::string> libdevice_math = {"rsqrt", "exp", "exp2", "log", "log2",
                                              "sin",   "cos", "tan",  "pow"};

class Lowering : public ExprVisitor<Lowering, Value*>, public StmtVisitor<Lowering> {
public:
    Lowering(const Kernel& kernel, const Options& options, llvm::Module& module, bool libdevice)
        : k_(kernel), options_(options), m_(module), c_(module.getContext()), b_(c_),
          libdevice_(libdevice) {}

    void run() {
        if (!k_.privates.empty()) unsupported("private arrays");
        std::vector<llvm::Type*> params;
        for (auto& p : k_.params)
            params.push_back(p.kind == Param::Kind::Buffer ? b_.getPtrTy(global_space)
                                                           : type_of(p.type));
        auto* type = llvm::FunctionType::get(b_.getVoidTy(), params, false);
        fn_ = llvm::Function::Create(type, llvm::Function::ExternalLinkage, k_.name, m_);
        // LLVM 19's NVPTX reads nvvm.annotations first and the calling convention second;
        // setting both keeps the kernel a kernel whichever a later LLVM prefers.
        fn_->setCallingConv(llvm::CallingConv::PTX_Kernel);
        fn_->addFnAttr(llvm::Attribute::NoUnwind);
        m_.getOrInsertNamedMetadata("nvvm.annotations")
            ->addOperand(llvm::MDNode::get(
                c_, {llvm::ValueAsMetadata::get(fn_), llvm::MDString::get(c_, "kernel"),
                     llvm::ConstantAsMetadata::get(b_.getInt32(1))}));

        entry_ = llvm::BasicBlock::Create(c_, "entry", fn_);
        b_.SetInsertPoint(entry_);
        scopes_.emplace_back();
        for (size_t i = 0; i < k_.params.size(); ++i) {
            const Param& p = k_.params[i];
            llvm::Argument* arg = fn_->getArg(unsigned(i));
            arg->setName(p.name);
            if (p.kind == Param::Kind::Buffer) {
                arrays_[p.name] = {arg, p.type};
            } else {
                // Scalars may be assigned like variables; an alloca makes that uniform.
                llvm::AllocaInst* slot = make_slot(p.type, p.name);
                b_.CreateStore(arg, slot);
                scopes_.back()[p.name] = {slot, p.type};
            }
        }
        for (auto& s : k_.shared) {
            auto* array_type = llvm::ArrayType::get(memory_type(s.type), s.count);
            // Shared memory cannot be initialized on the GPU: undef is the only initializer
            // NVPTX accepts.
            auto* global = new llvm::GlobalVariable(
                m_, array_type, false, llvm::GlobalValue::InternalLinkage,
                llvm::UndefValue::get(array_type), s.name, nullptr,
                llvm::GlobalValue::NotThreadLocal, shared_space);
            global->setAlignment(llvm::Align(16));
            arrays_[s.name] = {global, s.type};
        }
        emit(k_.body);
        b_.CreateRetVoid();

        std::string problems;
        llvm::raw_string_ostream os(problems);
        if (llvm::verifyFunction(*fn_, &os))
            fail(ErrorCode::Internal, "the PTX generator built invalid LLVM IR (a bug in plexus): " +
                                          os.str());
    }

    // ---- expressions -----------------------------------------------------------------------

    Value* visit(const Const& n) {
        if (is_float(n.type)) return llvm::ConstantFP::get(type_of(n.type), n.f);
        if (n.type == Scalar::Bool) return b_.getInt1(n.i != 0);
        unsigned bits = type_of(n.type)->getIntegerBitWidth();
        return b_.getInt(llvm::APInt(bits, bits == 32 ? uint32_t(n.i) : uint64_t(n.i)));
    }

    Value* visit(const Var& n) {
        const Variable& v = variable(n.name);
        return b_.CreateLoad(type_of(v.type), v.slot, n.name);
    }

    Value* visit(const Unary& n) {
        Value* a = emit(n.a);
        switch (n.op) {
        case UnaryOp::Neg: return is_float(n.type) ? b_.CreateFNeg(a) : b_.CreateNeg(a);
        case UnaryOp::Not:
        case UnaryOp::BitNot: return b_.CreateNot(a);
        }
        fail(ErrorCode::Internal, "unknown unary operator");
    }

    Value* visit(const Binary& n) {
        if (n.op == BinaryOp::LogicalAnd || n.op == BinaryOp::LogicalOr) return short_circuit(n);
        Value* a = emit(n.a);
        Value* b = emit(n.b);
        const Type t = n.a->type;
        const bool fp = is_float(t), sg = is_signed(t);
        using llvm::Intrinsic::ID;
        switch (n.op) {
        // No nsw/nuw: integer arithmetic wraps.
        case BinaryOp::Add: return fp ? b_.CreateFAdd(a, b) : b_.CreateAdd(a, b);
        case BinaryOp::Sub: return fp ? b_.CreateFSub(a, b) : b_.CreateSub(a, b);
        case BinaryOp::Mul: return fp ? b_.CreateFMul(a, b) : b_.CreateMul(a, b);
        case BinaryOp::Div:
            return fp ? b_.CreateFDiv(a, b) : sg ? b_.CreateSDiv(a, b) : b_.CreateUDiv(a, b);
        case BinaryOp::Rem: return sg ? b_.CreateSRem(a, b) : b_.CreateURem(a, b);
        case BinaryOp::Min:
        case BinaryOp::Max: {
            const bool min = n.op == BinaryOp::Min;
            // minnum/maxnum are fmin/fmax: a NaN operand yields the other operand.
            ID id = fp   ? (min ? llvm::Intrinsic::minnum : llvm::Intrinsic::maxnum)
                    : sg ? (min ? llvm::Intrinsic::smin : llvm::Intrinsic::smax)
                         : (min ? llvm::Intrinsic::umin : llvm::Intrinsic::umax);
            return b_.CreateBinaryIntrinsic(id, a, b);
        }
        case BinaryOp::BitAnd: return b_.CreateAnd(a, b);
        case BinaryOp::BitOr: return b_.CreateOr(a, b);
        case BinaryOp::BitXor: return b_.CreateXor(a, b);
        case BinaryOp::Shl:
        case BinaryOp::Shr: {
            // The shift amount is taken modulo the width (OpenCL); LLVM's oversized shift
            // would be poison.
            unsigned bits = a->getType()->getIntegerBitWidth();
            Value* amount = b_.CreateAnd(b, llvm::ConstantInt::get(b->getType(), bits - 1));
            if (n.op == BinaryOp::Shl) return b_.CreateShl(a, amount);
            return sg ? b_.CreateAShr(a, amount) : b_.CreateLShr(a, amount);
        }
        // Ordered float comparisons except !=, which is true for NaN as in C.
        case BinaryOp::Eq: return fp ? b_.CreateFCmpOEQ(a, b) : b_.CreateICmpEQ(a, b);
        case BinaryOp::Ne: return fp ? b_.CreateFCmpUNE(a, b) : b_.CreateICmpNE(a, b);
        case BinaryOp::Lt:
            return fp ? b_.CreateFCmpOLT(a, b) : sg ? b_.CreateICmpSLT(a, b) : b_.CreateICmpULT(a, b);
        case BinaryOp::Le:
            return fp ? b_.CreateFCmpOLE(a, b) : sg ? b_.CreateICmpSLE(a, b) : b_.CreateICmpULE(a, b);
        case BinaryOp::Gt:
            return fp ? b_.CreateFCmpOGT(a, b) : sg ? b_.CreateICmpSGT(a, b) : b_.CreateICmpUGT(a, b);
        case BinaryOp::Ge:
            return fp ? b_.CreateFCmpOGE(a, b) : sg ? b_.CreateICmpSGE(a, b) : b_.CreateICmpUGE(a, b);
        case BinaryOp::LogicalAnd:
        case BinaryOp::LogicalOr: break;
        }
        fail(ErrorCode::Internal, std::string("unknown binary operator ") + to_string(n.op));
    }

    Value* visit(const Select& n) {
        Value* cond = emit(n.cond);
        Value* a = emit(n.a);
        Value* b = emit(n.b);
        return b_.CreateSelect(cond, a, b);
    }

    Value* visit(const Cast& n) { return convert(emit(n.a), n.a->type, n.type); }

    Value* visit(const Load& n) {
        const Array& array = find_array(n.array);
        Value* value = b_.CreateLoad(memory_type(array.type), element(array, n.index, n.space));
        return array.type == Scalar::Bool ? b_.CreateICmpNE(value, b_.getInt8(0)) : value;
    }

    Value* visit(const Call& n) {
        const IntrinsicInfo* info = find_intrinsic(n.name);
        if (!info) fail(ErrorCode::InvalidKernel, "unknown intrinsic '" + n.name + "'");
        std::vector<Value*> args;
        for (auto& a : n.args) args.push_back(emit(a));
        const std::string dim = n.name.substr(n.name.size() - 1);
        // CUDA has no global index register: global_id = ctaid * ntid + tid, in 64 bits so a
        // grid of more than 2^32 work-items counts right.
        if (n.name.rfind("global_id_", 0) == 0)
            return b_.CreateAdd(b_.CreateMul(sreg("ctaid", dim), sreg("ntid", dim)),
                                sreg("tid", dim));
        if (n.name.rfind("global_size_", 0) == 0)
            return b_.CreateMul(sreg("nctaid", dim), sreg("ntid", dim));
        if (is_float(n.type)) return math(n, *info, args);
        if (info->nvvm.empty())
            fail(ErrorCode::Internal, "intrinsic '" + n.name + "' has no PTX lowering");
        return call_intrinsic(info->nvvm, n.type, args);
    }

    Value* visit(const Atomic& n) {
        const Array& array = find_array(n.array);
        Value* pointer = element(array, n.index, n.space);
        Value* value = emit(n.value);
        // Relaxed (monotonic) and device-wide, like CUDA's atomicAdd: atomics order nothing else.
        const auto order = llvm::AtomicOrdering::Monotonic;
        if (n.op == AtomicOp::CmpXchg) {
            Value* compare = emit(n.compare);
            auto* pair = b_.CreateAtomicCmpXchg(pointer, compare, value, llvm::MaybeAlign(),
                                                order, order);
            return b_.CreateExtractValue(pair, 0);
        }
        return b_.CreateAtomicRMW(atomic_rmw_op(n.op, n.type.scalar()), pointer, value, llvm::MaybeAlign(), order);
    }

    Value* visit(const Field&) { unsupported("records"); }
    Value* visit(const Swizzle&) { unsupported("vectors"); }
    Value* visit(const Broadcast&) { unsupported("vectors"); }
    Value* visit(const Construct&) { unsupported("vectors and records"); }
    Value* visit(const MakeVariant&) { unsupported("variants"); }
    void visit(const Match&) { unsupported("variants"); }
    [[noreturn]] void unsupported(const char* what) const {
        fail(ErrorCode::Unsupported, std::string("PTX generation of ") + what + " is not built yet");
    }

    // ---- statements ------------------------------------------------------------------------

    void visit(const Block& n) {
        scopes_.emplace_back();
        for (auto& s : n.body) emit(s);
        scopes_.pop_back();
    }

    void visit(const Let& n) {
        Value* init = emit(n.init);
        llvm::AllocaInst* slot = make_slot(n.type, n.name);
        b_.CreateStore(init, slot);
        scopes_.back()[n.name] = {slot, n.type};
    }

    void visit(const Assign& n) {
        if (!n.path.empty()) unsupported("assignments to a part of a value");
        b_.CreateStore(emit(n.value), variable(n.name).slot);
    }

    void visit(const Store& n) {
        if (!n.path.empty()) unsupported("stores to a part of an element");
        const Array& array = find_array(n.array);
        Value* pointer = element(array, n.index, n.space);
        Value* value = emit(n.value);
        if (array.type == Scalar::Bool) value = b_.CreateZExt(value, b_.getInt8Ty());
        b_.CreateStore(value, pointer);
    }

    void visit(const If& n) {
        Value* cond = emit(n.cond);
        auto* then_block = new_block("then");
        auto* else_block = n.else_body ? new_block("else") : nullptr;
        auto* merge = new_block("endif");
        b_.CreateCondBr(cond, then_block, else_block ? else_block : merge);
        b_.SetInsertPoint(then_block);
        emit(n.then_body);
        b_.CreateBr(merge);
        if (else_block) {
            b_.SetInsertPoint(else_block);
            emit(n.else_body);
            b_.CreateBr(merge);
        }
        b_.SetInsertPoint(merge);
    }

    void visit(const For& n) {
        // begin, end and step are evaluated once, before the loop.
        Value* begin = emit(n.begin);
        Value* end = emit(n.end);
        Value* step = emit(n.step);
        llvm::AllocaInst* slot = make_slot(n.type, n.var);
        b_.CreateStore(begin, slot);
        auto* header = new_block("for");
        auto* body = new_block("for.body");
        auto* latch = new_block("for.next");
        auto* exit = new_block("for.end");
        b_.CreateBr(header);
        b_.SetInsertPoint(header);
        Value* current = b_.CreateLoad(type_of(n.type), slot, n.var);
        b_.CreateCondBr(is_signed(n.type) ? b_.CreateICmpSLT(current, end)
                                          : b_.CreateICmpULT(current, end),
                        body, exit);
        b_.SetInsertPoint(body);
        scopes_.emplace_back();
        scopes_.back()[n.var] = {slot, n.type};
        loops_.push_back({exit, latch});
        emit(n.body);
        loops_.pop_back();
        scopes_.pop_back();
        b_.CreateBr(latch);
        b_.SetInsertPoint(latch);
        b_.CreateStore(b_.CreateAdd(b_.CreateLoad(type_of(n.type), slot), step), slot);
        b_.CreateBr(header);
        b_.SetInsertPoint(exit);
    }

    void visit(const While& n) {
        auto* header = new_block("while");
        auto* body = new_block("while.body");
        auto* exit = new_block("while.end");
        b_.CreateBr(header);
        b_.SetInsertPoint(header);
        b_.CreateCondBr(emit(n.cond), body, exit);
        b_.SetInsertPoint(body);
        loops_.push_back({exit, header});
        emit(n.body);
        loops_.pop_back();
        b_.CreateBr(header);
        b_.SetInsertPoint(exit);
    }

    void visit(const Break&) { jump(loop().exit); }
    void visit(const Continue&) { jump(loop().next); }
    void visit(const Return&) {
        b_.CreateRetVoid();
        b_.SetInsertPoint(new_block("after.return"));
    }

    void visit(const Barrier&) { call_intrinsic("llvm.nvvm.barrier0", Scalar::Void, {}); }

    void visit(const Fence& n) {
        call_intrinsic(n.scope == FenceScope::WorkGroup ? "llvm.nvvm.membar.cta"
                                                        : "llvm.nvvm.membar.gl",
                       Scalar::Void, {});
    }

    void visit(const Eval& n) { emit(n.value); }

    void visit(const Native& n) {
        // PTX comes out of LLVM, so there is nowhere to splice backend source: only the
        // portable fallback can be used.
        if (n.fallback) return emit(n.fallback);
        if (n.code.count(options_.backend) || n.code.count("cuda"))
            fail(ErrorCode::InvalidKernel,
                 "native CUDA code needs the CUDA C path (cuda.compiler = nvrtc): the PTX "
                 "generator cannot compile it, and the native block has no fallback");
        fail(ErrorCode::InvalidKernel, "a native block has no code for backend '" +
                                           options_.backend + "' and no fallback");
    }

private:
    struct Variable {
        llvm::AllocaInst* slot = nullptr;
        Type type;
    };
    struct Array {
        Value* base = nullptr; // an addrspace(1) argument or an addrspace(3) global
        Type type;
    };
    struct Loop {
        llvm::BasicBlock* exit;
        llvm::BasicBlock* next; // where continue goes
    };

    Value* emit(const Expr& e) { return ExprVisitor<Lowering, Value*>::dispatch(e); }
    void emit(const Stmt& s) { StmtVisitor<Lowering>::dispatch(s); }

    [[noreturn]] void fail(ErrorCode code, const std::string& what) const {
        ErrorContext context;
        context.kernel = k_.name;
        throw Error(code, "PTX generation for kernel '" + k_.name + "': " + what, context);
    }

    llvm::Type* type_of(const Type& type) {
        if (!type.is_scalar() && !type.is_void()) unsupported("non-scalar types");
        switch (type.scalar()) {
        case Scalar::Void: return b_.getVoidTy();
        case Scalar::Bool: return b_.getInt1Ty();
        case Scalar::I32:
        case Scalar::U32: return b_.getInt32Ty();
        case Scalar::I64:
        case Scalar::U64: return b_.getInt64Ty();
        case Scalar::F32: return b_.getFloatTy();
        case Scalar::F64: return b_.getDoubleTy();
        default: break;
        }
        unsupported(to_string(type.scalar()));
    }
    // A bool in memory is a byte, as in C.
    llvm::Type* memory_type(const Type& t) { return t == Scalar::Bool ? b_.getInt8Ty() : type_of(t); }

    llvm::AllocaInst* make_slot(const Type& t, const std::string& name) {
        llvm::IRBuilder<> at_entry(entry_, entry_->begin());
        return at_entry.CreateAlloca(type_of(t), nullptr, name);
    }

    llvm::BasicBlock* new_block(const char* name) {
        return llvm::BasicBlock::Create(c_, name, fn_);
    }

    // Statements after a break, continue or return are unreachable; they go into a block of
    // their own that the optimizer deletes.
    void jump(llvm::BasicBlock* target) {
        b_.CreateBr(target);
        b_.SetInsertPoint(new_block("after.jump"));
    }

    const Loop& loop() const {
        if (loops_.empty()) fail(ErrorCode::InvalidKernel, "break or continue outside a loop");
        return loops_.back();
    }

    const Variable& variable(const std::string& name) const {
        for (auto scope = scopes_.rbegin(); scope != scopes_.rend(); ++scope)
            if (auto it = scope->find(name); it != scope->end()) return it->second;
        fail(ErrorCode::InvalidKernel, "'" + name + "' is not declared");
    }

    const Array& find_array(const std::string& name) const {
        auto it = arrays_.find(name);
        if (it == arrays_.end()) fail(ErrorCode::InvalidKernel, "'" + name + "' is not an array");
        return it->second;
    }

    Value* element(const Array& array, const Expr& index, Space space) {
        const bool shared = space == Space::Local;
        if (shared != llvm::isa<llvm::GlobalVariable>(array.base))
            fail(ErrorCode::InvalidKernel, "an array is used in the wrong address space");
        Value* i = emit(index);
        i = is_signed(index->type) ? b_.CreateSExt(i, b_.getInt64Ty())
                                   : b_.CreateZExt(i, b_.getInt64Ty());
        return b_.CreateInBoundsGEP(memory_type(array.type), array.base, i);
    }

    Value* short_circuit(const Binary& n) {
        const bool is_and = n.op == BinaryOp::LogicalAnd;
        Value* a = emit(n.a);
        llvm::BasicBlock* left_end = b_.GetInsertBlock();
        auto* right = new_block(is_and ? "and.rhs" : "or.rhs");
        auto* merge = new_block(is_and ? "and.end" : "or.end");
        if (is_and) b_.CreateCondBr(a, right, merge);
        else b_.CreateCondBr(a, merge, right);
        b_.SetInsertPoint(right);
        Value* b = emit(n.b);
        llvm::BasicBlock* right_end = b_.GetInsertBlock();
        b_.CreateBr(merge);
        b_.SetInsertPoint(merge);
        llvm::PHINode* phi = b_.CreatePHI(b_.getInt1Ty(), 2);
        phi->addIncoming(b_.getInt1(!is_and), left_end);
        phi->addIncoming(b, right_end);
        return phi;
    }

    Value* convert(Value* v, const Type& from, const Type& to) {
        if (from == to) return v;
        llvm::Type* target = type_of(to);
        if (to == Scalar::Bool)
            return is_float(from) ? b_.CreateFCmpUNE(v, llvm::ConstantFP::get(v->getType(), 0.0))
                                  : b_.CreateICmpNE(v, llvm::ConstantInt::get(v->getType(), 0));
        if (from == Scalar::Bool)
            return is_float(to) ? b_.CreateUIToFP(v, target) : b_.CreateZExt(v, target);
        if (is_float(from) && is_float(to)) return b_.CreateFPCast(v, target);
        if (is_float(from)) return is_signed(to) ? b_.CreateFPToSI(v, target) : b_.CreateFPToUI(v, target);
        if (is_float(to)) return is_signed(from) ? b_.CreateSIToFP(v, target) : b_.CreateUIToFP(v, target);
        // Integer to integer: extend by the source's signedness, or truncate.
        return b_.CreateIntCast(v, target, is_signed(from));
    }

    Value* sreg(const char* reg, const std::string& dim) {
        Value* v = call_intrinsic(std::string("llvm.nvvm.read.ptx.sreg.") + reg + "." + dim,
                                  Scalar::U32, {});
        return b_.CreateZExt(v, b_.getInt64Ty());
    }

    Value* call_intrinsic(const std::string& name, const Type& result, llvm::ArrayRef<Value*> args) {
        llvm::Intrinsic::ID id = llvm::Function::lookupIntrinsicID(name);
        if (id == llvm::Intrinsic::not_intrinsic)
            fail(ErrorCode::Internal, "LLVM 19 has no intrinsic " + name);
        std::vector<llvm::Type*> overloads;
        if (llvm::Intrinsic::isOverloaded(id)) overloads.push_back(type_of(result));
        return b_.CreateCall(llvm::Intrinsic::getDeclaration(&m_, id, overloads), args);
    }

    Value* call_function(const std::string& name, const Type& result, llvm::ArrayRef<Value*> args) {
        std::vector<llvm::Type*> types;
        for (Value* a : args) types.push_back(a->getType());
        auto callee = m_.getOrInsertFunction(
            name, llvm::FunctionType::get(type_of(result), types, false));
        return b_.CreateCall(callee, args);
    }

    Value* math(const Call& n, const IntrinsicInfo& info, const std::vector<Value*>& args) {
        const std::string base = n.name.substr(0, n.name.rfind('_'));
        const bool f32 = n.type == Scalar::F32;
        if (base == "clamp") {
            Value* low = b_.CreateBinaryIntrinsic(llvm::Intrinsic::maxnum, args[0], args[1]);
            return b_.CreateBinaryIntrinsic(llvm::Intrinsic::minnum, low, args[2]);
        }
        if (!libdevice_math.count(base)) {
            // sqrt (IEEE sqrt.rn), fabs, floor, ceil, fma, min, max: NVPTX lowers these.
            if (info.nvvm.empty()) fail(ErrorCode::Internal, "no lowering for " + n.name);
            return call_intrinsic(info.nvvm, n.type, args);
        }
        if (libdevice_) return call_function("__nv_" + base + (f32 ? "f" : ""), n.type, args);
        if (!f32)
            fail(ErrorCode::Unsupported,
                 "intrinsic '" + n.name + "' needs libdevice (libdevice.10.bc), which was not "
                 "found (looked in " + libdevice().path + "; set CUDA_HOME or PLEXUS_LIBDEVICE)");
        return approximate_f32(base, args);
    }

    // Without libdevice: the GPU's special-function unit (sin.approx, ex2.approx, lg2.approx,
    // rsqrt.approx); ptx_codegen.cpp states the error of each.
    Value* approximate_f32(const std::string& base, const std::vector<Value*>& args) {
        auto approx = [&](const char* name, Value* x) {
            return call_intrinsic(name, Scalar::F32, {x});
        };
        auto f = [&](double v) { return llvm::ConstantFP::get(b_.getFloatTy(), v); };
        const double log2e = 1.4426950408889634, ln2 = 0.6931471805599453;
        if (base == "sin") return approx("llvm.nvvm.sin.approx.f", args[0]);
        if (base == "cos") return approx("llvm.nvvm.cos.approx.f", args[0]);
        if (base == "tan")
            return b_.CreateFDiv(approx("llvm.nvvm.sin.approx.f", args[0]),
                                 approx("llvm.nvvm.cos.approx.f", args[0]));
        if (base == "exp2") return approx("llvm.nvvm.ex2.approx.f", args[0]);
        if (base == "log2") return approx("llvm.nvvm.lg2.approx.f", args[0]);
        if (base == "exp") return approx("llvm.nvvm.ex2.approx.f", b_.CreateFMul(args[0], f(log2e)));
        if (base == "log") return b_.CreateFMul(approx("llvm.nvvm.lg2.approx.f", args[0]), f(ln2));
        if (base == "rsqrt") return approx("llvm.nvvm.rsqrt.approx.f", args[0]);
        if (base == "pow")
            return approx("llvm.nvvm.ex2.approx.f",
                          b_.CreateFMul(args[1], approx("llvm.nvvm.lg2.approx.f", args[0])));
        fail(ErrorCode::Internal, "no approximation for " + base);
    }

    const Kernel& k_;
    const Options& options_;
    llvm::Module& m_;
    llvm::LLVMContext& c_;
    llvm::IRBuilder<> b_;
    const bool libdevice_;
    llvm::Function* fn_ = nullptr;
    llvm::BasicBlock* entry_ = nullptr;
    std::vector<std::map<std::string, Variable>> scopes_;
    std::map<std::string, Array> arrays_;
    std::vector<Loop> loops_;
};

} // namespace

void lower_kernel(const Kernel& kernel, const Options& options, llvm::Module& module,
                  bool use_libdevice) {
    Lowering(kernel, options, module, use_libdevice).run();
}

} // namespace plexus::codegen::ptx
