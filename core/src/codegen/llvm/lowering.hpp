// The lowering of the IR to LLVM IR that every LLVM target shares (host through ORC, PTX
// through NVPTX): each expression and each statement of a work-item, written once with the
// IR's semantics (docs/ir.md). A target derives from it and overrides only the hooks.
#pragma once

#include "plexus/codegen.hpp"
#include "plexus/error.hpp"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace plexus::codegen {

class LlvmLowering : public ir::ExprVisitor<LlvmLowering, llvm::Value*>,
                     public ir::StmtVisitor<LlvmLowering> {
public:
    virtual ~LlvmLowering() = default;

    llvm::Value* expr(const ir::Expr& e) { return ExprVisitor::dispatch(e); }
    // A statement in the current scope: a Let stays visible to the statements after it.
    void stmt(const ir::Stmt& s);
    // A statement in a scope of its own: an arm, a loop body, a fallback.
    void nested(const ir::Stmt& s);

    // One per node kind, called by the dispatch (lower_expr.cpp, lower_stmt.cpp).
    llvm::Value* visit(const ir::Const& n);
    llvm::Value* visit(const ir::Var& n);
    llvm::Value* visit(const ir::Unary& n);
    llvm::Value* visit(const ir::Binary& n);
    llvm::Value* visit(const ir::Select& n);
    llvm::Value* visit(const ir::Cast& n);
    llvm::Value* visit(const ir::Load& n);
    llvm::Value* visit(const ir::Call& n);
    llvm::Value* visit(const ir::Atomic& n);
    void visit(const ir::Block& n);
    void visit(const ir::Let& n);
    void visit(const ir::Assign& n);
    void visit(const ir::Store& n);
    void visit(const ir::If& n);
    void visit(const ir::For& n);
    void visit(const ir::While& n);
    void visit(const ir::Break& n);
    void visit(const ir::Continue& n);
    void visit(const ir::Return& n);
    void visit(const ir::Barrier& n);
    void visit(const ir::Fence& n);
    void visit(const ir::Eval& n);
    void visit(const ir::Native& n);
    llvm::Value* visit(const ir::Field&) { not_yet("records"); }
    llvm::Value* visit(const ir::Swizzle&) { not_yet("vectors"); }
    llvm::Value* visit(const ir::Broadcast&) { not_yet("vectors"); }
    llvm::Value* visit(const ir::Construct&) { not_yet("vectors and records"); }
    llvm::Value* visit(const ir::MakeVariant&) { not_yet("variants"); }
    void visit(const ir::Match&) { not_yet("variants"); }
    [[noreturn]] void not_yet(const char* what) const { fail(ErrorCode::Unsupported, std::string(what) + " are not lowered yet"); }

protected:
    // `generator` names the generator in error messages ("PTX generation").
    LlvmLowering(const ir::Kernel& kernel, const Options& options, llvm::Module& module,
                 std::string generator);

    // ---- types: every IR type becomes an LLVM type here (sizes: memory_form.hpp) ---------
    llvm::Type* reg_type(const ir::Type& t) const; // a value in registers: bool is i1
    llvm::Type* mem_type(const ir::Type& t) const; // the same value in memory: bool is i8
    llvm::Align align_of(const ir::Type& t) const; // of mem_type, from memory_form()
    // Between the two forms. Every value that goes to or comes from memory (arrays, atomics,
    // variables a target keeps in memory) passes here: the place for a narrower memory form.
    llvm::Value* to_mem(llvm::Value* v, const ir::Type& t);
    llvm::Value* from_mem(llvm::Value* v, const ir::Type& t);
    llvm::Value* load(llvm::Value* address, const ir::Type& t, const llvm::Twine& name = "");
    void store(llvm::Value* address, const ir::Type& t, llvm::Value* v);

    // ---- hooks: what differs between targets -----------------------------------------------
    // Where variables live. The base keeps the scopes (name -> id); a target decides the rest.
    // The defaults give each variable an entry-block alloca in register form (mem2reg makes
    // it a register); `variables_[id].home` is that alloca.
    virtual size_t new_variable(const std::string& name, const ir::Type& t);
    virtual llvm::Value* read_variable(size_t id);
    virtual void write_variable(size_t id, llvm::Value* v);
    // The work-item indices per dimension d: the local id and size as i32, the group id and
    // the number of groups as i64 (the base derives global ids and sizes in 64 bits).
    virtual llvm::Value* local_id(unsigned d) = 0;
    virtual llvm::Value* local_size(unsigned d) = 0;
    virtual llvm::Value* group_id(unsigned d) = 0;
    virtual llvm::Value* num_groups(unsigned d) = 0;
    virtual void barrier() = 0;
    virtual void fence(const ir::Fence& n) = 0;
    // Ends the work-item being lowered (a Return).
    virtual void return_from_item() = 0;
    // rsqrt, exp, exp2, log, log2, sin, cos, tan and pow of f32 or f64: each target has its
    // own library. `base` is the catalog name without its type ("sin").
    virtual llvm::Value* transcendental(const std::string& base, ir::Scalar t,
                                        const std::vector<llvm::Value*>& args) = 0;
    // Integer / and %. The default is LLVM's udiv/sdiv/urem/srem, for targets where neither
    // division by zero nor INT_MIN / -1 traps: LLVM leaves both undefined.
    virtual llvm::Value* int_divide(llvm::Value* a, llvm::Value* b, const ir::Type& t, bool remainder);
    // Throws when this target cannot lower the native block through its fallback. The
    // default refuses a block without fallback.
    virtual void check_native(const ir::Native& n);

    // ---- for the targets ---------------------------------------------------------------------
    [[noreturn]] void fail(ErrorCode code, const std::string& what) const;
    [[noreturn]] void internal(const std::string& what) const; // a bug in plexus
    [[noreturn]] void invalid(const std::string& what) const;  // a kernel this target refuses

    // Declares `name` in the current scope and writes its first value.
    void declare(const std::string& name, const ir::Type& t, llvm::Value* init);
    size_t lookup(const std::string& name) const;
    // An alloca in the function's first block, so that mem2reg promotes it.
    llvm::AllocaInst* entry_alloca(llvm::Type* t, const llvm::Twine& name);
    llvm::BasicBlock* new_block(const llvm::Twine& name);
    bool terminated() const;
    // A branch to `to`; what follows is unreachable and goes into a block of its own.
    void jump(llvm::BasicBlock* to);
    llvm::Value* compare(ir::BinaryOp op, llvm::Value* a, llvm::Value* b, const ir::Type& t);
    llvm::Value* call_intrinsic(llvm::Intrinsic::ID id, llvm::Type* t,
                                const std::vector<llvm::Value*>& args);

    // Control flow with the lowering of the arms or the body left to the caller, so that a
    // target can lower them otherwise (the host's group control).
    using Body = std::function<void(const ir::Stmt&)>;
    void if_stmt(const ir::If& n, const Body& arm);
    void for_stmt(const ir::For& n, const Body& body);
    void while_stmt(const ir::While& n, const Body& body);
    // Break (or continue) out of the innermost loop of loops_.
    void leave_loop(bool is_break);

    struct Variable {
        ir::Type type;
        llvm::Value* home; // what the target keeps there; the default: the alloca
    };
    struct Loop {
        llvm::BasicBlock* exit; // null: a boundary no break crosses
        llvm::BasicBlock* next; // where continue goes
    };

    const ir::Kernel& k_;
    const Options& options_;
    llvm::Module& m_;
    llvm::LLVMContext& c_;
    llvm::IRBuilder<> b_;
    llvm::Function* f_ = nullptr;                // the target creates the function
    llvm::BasicBlock* alloca_block_ = nullptr;   // and names its first block here
    std::vector<llvm::Value*> buffers_;          // per parameter: a buffer's elements, or null
    std::vector<llvm::Value*> shared_;           // per shared array: its first element
    std::vector<Variable> variables_;            // by id
    std::vector<std::pair<std::string, size_t>> scope_; // innermost last
    std::vector<Loop> loops_;

private:
    llvm::Value* element_address(const std::string& array, ir::Space space, const ir::Type& elem,
                                 const ir::Expr& index);
    llvm::Value* short_circuit(const ir::Binary& n);
    void loop_body(const Body& body, const ir::Stmt& s, llvm::BasicBlock* exit,
                   llvm::BasicBlock* next);
    llvm::Value* cast(llvm::Value* v, ir::Scalar from, ir::Scalar to);
    llvm::Value* float_to_int(llvm::Value* v, ir::Scalar to);
    llvm::Value* index(const std::string& name);
    llvm::Value* math(const std::string& base, ir::Scalar t, const std::vector<llvm::Value*>& args);

    std::string generator_;
};

} // namespace plexus::codegen
