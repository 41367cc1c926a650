// The pieces of LlvmLowering that every node uses: errors, the two type mappings and the
// memory form, variables and their scopes, blocks and branches.
#include "codegen/llvm/lowering.hpp"

#include "codegen/llvm/memory_form.hpp"

namespace plexus::codegen {

using namespace ir;
using llvm::Value;

LlvmLowering::LlvmLowering(const Kernel& kernel, const Options& options, llvm::Module& module,
                           std::string generator)
    : k_(kernel), options_(options), m_(module), c_(module.getContext()), b_(c_),
      generator_(std::move(generator)) {}

void LlvmLowering::fail(ErrorCode code, const std::string& what) const {
    ErrorContext context;
    context.kernel = k_.name;
    throw Error(code, generator_ + " for kernel '" + k_.name + "': " + what, context);
}
void LlvmLowering::internal(const std::string& what) const {
    fail(ErrorCode::Internal, what + " (a bug in plexus)");
}
void LlvmLowering::invalid(const std::string& what) const { fail(ErrorCode::InvalidKernel, what); }

// ---- types --------------------------------------------------------------------------------

llvm::Type* LlvmLowering::reg_type(const Type& type) const {
    if (!type.is_scalar() && !type.is_void()) fail(ErrorCode::Unsupported, to_string(type) + " values are not lowered yet");
    switch (type.scalar()) {
    case Scalar::Bool: return llvm::Type::getInt1Ty(c_);
    case Scalar::I32: case Scalar::U32: return llvm::Type::getInt32Ty(c_);
    case Scalar::I64: case Scalar::U64: return llvm::Type::getInt64Ty(c_);
    case Scalar::F32: return llvm::Type::getFloatTy(c_);
    case Scalar::F64: return llvm::Type::getDoubleTy(c_);
    case Scalar::Void: internal("a value of type void");
    default: break;
    }
    fail(ErrorCode::Unsupported, to_string(type) + " values are not lowered yet");
}

llvm::Type* LlvmLowering::mem_type(const Type& t) const {
    return t == Scalar::Bool ? llvm::Type::getInt8Ty(c_) : reg_type(t);
}

llvm::Align LlvmLowering::align_of(const Type& t) const { return llvm::Align(memory_form(t).align); }

Value* LlvmLowering::to_mem(Value* v, const Type& t) {
    return t == Scalar::Bool ? b_.CreateZExt(v, mem_type(t)) : v;
}

// A bool byte holds 0 or 1 (this code wrote it, or C++ did), so its low bit is its value.
Value* LlvmLowering::from_mem(Value* v, const Type& t) {
    return t == Scalar::Bool ? b_.CreateTrunc(v, reg_type(t)) : v;
}

Value* LlvmLowering::load(Value* address, const Type& t, const llvm::Twine& name) {
    return from_mem(b_.CreateAlignedLoad(mem_type(t), address, align_of(t), name), t);
}

void LlvmLowering::store(Value* address, const Type& t, Value* v) {
    b_.CreateAlignedStore(to_mem(v, t), address, align_of(t));
}

// ---- variables ------------------------------------------------------------------------------

size_t LlvmLowering::new_variable(const std::string& name, const Type& t) {
    variables_.push_back({t, entry_alloca(reg_type(t), name)});
    return variables_.size() - 1;
}

Value* LlvmLowering::read_variable(size_t id) {
    const Variable& v = variables_[id];
    return b_.CreateLoad(reg_type(v.type), v.home);
}

void LlvmLowering::write_variable(size_t id, Value* v) { b_.CreateStore(v, variables_[id].home); }

void LlvmLowering::declare(const std::string& name, const Type& t, Value* init) {
    size_t id = new_variable(name, t);
    scope_.emplace_back(name, id);
    write_variable(id, init);
}

size_t LlvmLowering::lookup(const std::string& name) const {
    for (auto it = scope_.rbegin(); it != scope_.rend(); ++it)
        if (it->first == name) return it->second;
    internal("'" + name + "' is not declared here although the kernel validated");
}

llvm::AllocaInst* LlvmLowering::entry_alloca(llvm::Type* t, const llvm::Twine& name) {
    llvm::IRBuilder<> at(alloca_block_, alloca_block_->begin());
    return at.CreateAlloca(t, nullptr, name);
}

// ---- blocks -----------------------------------------------------------------------------------

llvm::BasicBlock* LlvmLowering::new_block(const llvm::Twine& name) {
    return llvm::BasicBlock::Create(c_, name, f_);
}

bool LlvmLowering::terminated() const { return b_.GetInsertBlock()->getTerminator() != nullptr; }

void LlvmLowering::jump(llvm::BasicBlock* to) {
    b_.CreateBr(to);
    b_.SetInsertPoint(new_block("dead"));
}

Value* LlvmLowering::call_intrinsic(llvm::Intrinsic::ID id, llvm::Type* t,
                                    const std::vector<Value*>& args) {
    return b_.CreateIntrinsic(id, {t}, args);
}

} // namespace plexus::codegen
