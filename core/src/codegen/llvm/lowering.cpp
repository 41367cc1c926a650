// The pieces of LlvmLowering that every node uses: errors, variables and their scopes, private
// arrays, blocks and branches.
#include "codegen/llvm/lowering.hpp"

#include <algorithm>

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
void LlvmLowering::invalid(const std::string& what) const {
    fail(ErrorCode::InvalidKernel, what);
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

void LlvmLowering::write_variable(size_t id, Value* v) {
    b_.CreateStore(v, variables_[id].home);
}

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

// Made when first used, in the entry block: one per work-item, whichever block uses it.
Value* LlvmLowering::private_element(size_t i, Value* index) {
    privates_.resize(k_.privates.size(), nullptr);
    const ArrayDecl& a = k_.privates[i];
    if (!privates_[i]) {
        llvm::AllocaInst* array = entry_alloca(array_of(a.type, a.count), a.name);
        array->setAlignment(std::max(align_of(a.type), llvm::Align(16)));
        privates_[i] = array;
    }
    return b_.CreateInBoundsGEP(stride_type(a.type), privates_[i], index, a.name + ".elem");
}

// ---- blocks -----------------------------------------------------------------------------------

llvm::BasicBlock* LlvmLowering::new_block(const llvm::Twine& name) {
    return llvm::BasicBlock::Create(c_, name, f_);
}

bool LlvmLowering::terminated() const {
    return b_.GetInsertBlock()->getTerminator() != nullptr;
}

void LlvmLowering::jump(llvm::BasicBlock* to) {
    b_.CreateBr(to);
    b_.SetInsertPoint(new_block("dead"));
}

Value* LlvmLowering::call_intrinsic(llvm::Intrinsic::ID id, llvm::Type* t,
                                    const std::vector<Value*>& args) {
    return b_.CreateIntrinsic(id, {t}, args);
}

} // namespace plexus::codegen
