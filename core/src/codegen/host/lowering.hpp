// The state of one IR -> LLVM lowering, shared by lower_stmt.cpp (the work-group structure and
// statements) and lower_expr.cpp (expressions and intrinsics).
#pragma once

#include "codegen/host/lower.hpp"
#include "plexus/error.hpp"

#include <llvm/IR/IRBuilder.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace plexus::codegen::host {

class Lowering : public ir::ExprVisitor<Lowering, llvm::Value*> {
public:
    Lowering(const ir::Kernel& k, const Options& o, const Layout& l, const Target& t, llvm::LLVMContext& c);
    std::unique_ptr<llvm::Module> run();

    // ---- expressions (lower_expr.cpp) ----
    llvm::Value* expr(const ir::Expr& e) { return dispatch(e); }
    llvm::Value* visit(const ir::Const& n);
    llvm::Value* visit(const ir::Var& n);
    llvm::Value* visit(const ir::Unary& n);
    llvm::Value* visit(const ir::Binary& n);
    llvm::Value* visit(const ir::Select& n);
    llvm::Value* visit(const ir::Cast& n);
    llvm::Value* visit(const ir::Load& n);
    llvm::Value* visit(const ir::Call& n);
    llvm::Value* visit(const ir::Atomic& n);
    llvm::Value* visit(const ir::Field&) { unsupported("records"); }
    llvm::Value* visit(const ir::Swizzle&) { unsupported("vectors"); }
    llvm::Value* visit(const ir::Broadcast&) { unsupported("vectors"); }
    llvm::Value* visit(const ir::Construct&) { unsupported("vectors and records"); }
    llvm::Value* visit(const ir::MakeVariant&) { unsupported("variants"); }
    [[noreturn]] void unsupported(const char* what) const {
        throw Error(ErrorCode::Unsupported, std::string("host code generation of ") + what + " is not built yet");
    }

private:
    // The work-item being lowered: its local ids (i32), its index in the group (i64), and
    // where a Return continues. Group control uses work-item 0.
    struct Item {
        llvm::Value* lid[3];
        llvm::Value* linear;
        llvm::BasicBlock* next;
    };
    struct Slot {
        Storage storage;
        ir::Type type;
        llvm::Value* ptr; // the alloca, the per-item array, or the value itself (Storage::Value)
    };
    struct Loop {
        llvm::BasicBlock* exit;
        llvm::BasicBlock* next; // where continue goes
    };

    const ir::Kernel& k_;
    const Options& options_;
    const Layout& layout_;
    const Target& target_;
    llvm::LLVMContext& c_;
    std::unique_ptr<llvm::Module> m_;
    llvm::IRBuilder<> b_;
    llvm::Function* f_ = nullptr;
    llvm::BasicBlock* alloca_block_ = nullptr;
    llvm::Type *i1_, *i8_, *i32_, *i64_, *f32_, *f64_, *ptr_;

    llvm::Value* group_id_[3] = {};   // i64
    llvm::Value* num_groups_[3] = {}; // i64
    llvm::Value* local_size_[3] = {}; // i32
    std::vector<llvm::Value*> buffers_; // per parameter: the element pointer, or null
    std::vector<llvm::Value*> shared_;  // per shared array: its base in group-local memory
    std::vector<Slot> slots_;           // per declaration, in Layout order
    size_t next_decl_ = 0;
    std::vector<std::pair<std::string, size_t>> scope_;
    Item group_item_{};
    const Item* item_ = nullptr;
    std::vector<Loop> loops_;
    std::vector<std::pair<size_t, llvm::Value*>> params_init_; // assigned parameters
    llvm::BasicBlock* ret_ = nullptr;
    llvm::Value* on_heap_ = nullptr;    // i1: group-local memory came from aligned_alloc
    llvm::Value* local_base_ = nullptr;

    [[noreturn]] void internal(const std::string& what) const;
    [[noreturn]] void invalid(const std::string& what) const;

    // ---- types and memory ----
    llvm::Type* reg_type(const ir::Type& t) const;
    llvm::Type* mem_type(const ir::Type& t) const;
    llvm::Value* to_mem(llvm::Value* v, const ir::Type& t);
    llvm::Value* from_mem(llvm::Value* v, const ir::Type& t);
    const Slot& lookup(const std::string& name) const;
    llvm::Value* slot_address(const Slot& s);
    llvm::Value* read(const Slot& s);
    void write(const Slot& s, llvm::Value* v);
    void declare(const std::string& name, llvm::Value* init);
    llvm::Value* element_ptr(const std::string& array, ir::Space space, const ir::Type& elem, const ir::Expr& index);

    // ---- expressions helpers ----
    llvm::Value* call_intrinsic(llvm::Intrinsic::ID id, llvm::Type* t, std::vector<llvm::Value*> args);
    llvm::Value* math(const std::string& base, ir::Scalar t, std::vector<llvm::Value*> args);
    llvm::Value* index_call(const std::string& name);
    llvm::Value* cast(llvm::Value* v, const ir::Type& from, const ir::Type& to);
    llvm::Value* divide(llvm::Value* a, llvm::Value* b, const ir::Type& t, bool remainder);
    llvm::Value* compare(ir::BinaryOp op, llvm::Value* a, llvm::Value* b, const ir::Type& t);

    // ---- structure (lower_stmt.cpp) ----
    void prologue();
    llvm::Value* ctx_field(llvm::Value* ctx, size_t offset, llvm::Type* t, const char* name);
    void counted_loop(llvm::Value* n, const char* name,
                      const std::function<void(llvm::Value*, llvm::BasicBlock*)>& body);
    void item_loops(const std::function<void()>& body);
    bool terminated() const;
    void jump(llvm::BasicBlock* to);
    void check_native(const ir::Native& n) const;
    void item_stmt(const ir::Stmt& s);
    void item_stmt_in_block(const ir::Stmt& s);
    void group_body(const ir::Stmt& s, bool in_barrier_loop);
    void group_stmt(const ir::Stmt& s, bool in_barrier_loop);
    void if_stmt(const ir::If& n, const std::function<void(const ir::Stmt&)>& arm);
    void for_stmt(const ir::For& n, const std::function<void(const ir::Stmt&)>& body);
    void while_stmt(const ir::While& n, const std::function<void(const ir::Stmt&)>& body);
};

} // namespace plexus::codegen::host
