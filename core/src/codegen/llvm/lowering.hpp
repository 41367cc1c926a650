// The lowering of the IR to LLVM IR that every LLVM target shares (host through ORC, PTX
// through NVPTX): each expression and each statement of a work-item, written once with the
// IR's semantics (docs/ir.md). A target derives from it and overrides only the hooks.
#pragma once

#include "plexus/codegen.hpp"
#include "plexus/error.hpp"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include <functional>
#include <map>
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
    llvm::Value* visit(const ir::Field& n);
    llvm::Value* visit(const ir::Swizzle& n);
    llvm::Value* visit(const ir::Broadcast& n);
    llvm::Value* visit(const ir::Construct& n);
    llvm::Value* visit(const ir::MakeVariant& n);
    void visit(const ir::Match& n);
    void visit(const ir::Matrix& n) { matrix(n); }
    void visit(const ir::AsyncCopy& n) { async_copy(n); }

protected:
    // `generator` names the generator in error messages ("PTX generation").
    LlvmLowering(const ir::Kernel& kernel, const Options& options, llvm::Module& module,
                 std::string generator);

    // ---- types: every IR type becomes an LLVM type here (lower_memory.cpp; sizes and
    // offsets: memory_form.hpp and the IR's layout) ------------------------------------------
    // A value in registers: bool is i1, f16 and bf16 are f32, a vector an LLVM vector, a
    // record a struct of its fields, a variant a struct of its i32 tag and every payload.
    llvm::Type* reg_type(const ir::Type& t) const;
    // A scalar or vector in memory: bool is i8, f16 and bf16 are i16, 3 lanes take 4; a record
    // or variant is its bytes.
    llvm::Type* mem_type(const ir::Type& t) const;
    llvm::Align align_of(const ir::Type& t) const; // from memory_form()
    // What an array's addresses step by: the IR's size of the element.
    llvm::Type* stride_type(const ir::Type& t) const;
    // Between the two forms of a scalar or vector. Every value that goes to or comes from
    // memory (arrays, atomics, variables a target keeps in memory) passes here or through
    // load / store, which take records and variants apart at the IR's byte offsets.
    llvm::Value* to_mem(llvm::Value* v, const ir::Type& t);
    llvm::Value* from_mem(llvm::Value* v, const ir::Type& t);
    llvm::Value* load(llvm::Value* address, const ir::Type& t, const llvm::Twine& name = "");
    void store(llvm::Value* address, const ir::Type& t, llvm::Value* v);
    // The nearest f16 / bf16 value (as f32) of an f32 scalar or vector; other types unchanged.
    llvm::Value* round(llvm::Value* v, ir::Scalar t);
    // `element`, or a vector of it with as many lanes as `v` has.
    llvm::Type* same_shape(llvm::Value* v, llvm::Type* element) const;
    // f16 / bf16 through LLVM's half and bfloat types (fptrunc, fpext): for targets whose
    // instructions convert them, never a library call.
    llvm::Value* half_by_fptrunc(llvm::Value* f, ir::Scalar t);
    llvm::Value* half_by_fpext(llvm::Value* bits, ir::Scalar t);

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
    // rsqrt, exp, exp2, log, log2, sin, cos, tan, pow and the libm.def functions of f32 or f64:
    // each target has its own library. `base` is the catalog name without its type ("sin").
    virtual llvm::Value* transcendental(const std::string& base, ir::Scalar t,
                                        const std::vector<llvm::Value*>& args) = 0;
    // A px::fast:: function of f32 (`base` without "fast_": "exp", "divide"). The default is
    // the precise function (lower_call.cpp).
    virtual llvm::Value* fast_math(const std::string& base, const std::vector<llvm::Value*>& args);
    // Integer / and %, of scalars or vectors. The default is LLVM's udiv/sdiv/urem/srem, for
    // targets where neither division by zero nor INT_MIN / -1 traps: LLVM leaves both undefined.
    virtual llvm::Value* int_divide(llvm::Value* a, llvm::Value* b, const ir::Type& t,
                                    bool remainder);
    // Throws when this target cannot lower the native block through its fallback. The
    // default refuses a block without fallback.
    virtual void check_native(const ir::Native& n);
    // f32 (a scalar or vector) to the bits of f16 or bf16 (i16 lanes), rounded to nearest,
    // ties to even, NaN staying NaN; and those bits back to f32, exactly. The defaults are
    // integer code, bit for bit plexus/half.hpp (lower_half.cpp).
    virtual llvm::Value* half_from_f32(llvm::Value* f, ir::Scalar t);
    virtual llvm::Value* half_to_f32(llvm::Value* bits, ir::Scalar t);
    // The address of element `index` (i64) of the current work-item's copy of private array
    // `i` (k_.privates). The default: an array alloca in the entry block (PTX local memory, or
    // registers).
    virtual llvm::Value* private_element(size_t i, llvm::Value* index);
    // Subgroups (lower_subgroup.cpp builds every operation on these three): the most lanes a
    // subgroup has (a power of two: 32 on NVIDIA GPUs, 1 on the host); v (i32) of another lane
    // of the work-item's subgroup: lane `arg` (Index), lane ^ arg (Xor), lane - arg (Up), lane
    // + arg (Down), where a lane outside the subgroup gives an undefined value that the
    // operations never use; and a vote on an i1 (Ballot: the lanes' bits as i64; Any, All: i1).
    enum class Shuffle { Index, Xor, Up, Down };
    enum class Vote { Ballot, Any, All };
    virtual unsigned subgroup_width() const = 0;
    virtual llvm::Value* shuffle32(Shuffle kind, llvm::Value* v, llvm::Value* arg) = 0;
    virtual llvm::Value* vote(Vote kind, llvm::Value* pred) = 0;
    // A catalog subgroup intrinsic ("subgroup_reduce_add_f32"; t is the value's type). A
    // target may lower some operations itself and leave the rest to this one.
    virtual llvm::Value* subgroup(const std::string& name, ir::Scalar t,
                                  const std::vector<llvm::Value*>& args);
    // A matrix-fragment statement. The default refuses it: a target without matrix units gets
    // kernels that ir::lower_matrix has rewritten (the host's compile does).
    virtual void matrix(const ir::Matrix& n);
    // An asynchronous copy, commit or wait. The default refuses it: a target without
    // asynchronous copies gets kernels that ir::lower_async_copy has rewritten.
    virtual void async_copy(const ir::AsyncCopy& n);

    // ---- for the targets ---------------------------------------------------------------------
    // The address of element `index` of an array (a buffer: addrspace of the target's
    // buffers; shared: its globals' addrspace).
    llvm::Value* element_address(const std::string& array, ir::Space space, const ir::Expr& index);
    // A C conversion of a register value (ir::Cast's semantics).
    llvm::Value* cast(llvm::Value* v, const ir::Type& from, const ir::Type& to);
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
    // An array of `count` elements of type `elem`, each as big as the IR says.
    llvm::ArrayType* array_of(const ir::Type& elem, uint64_t count) const;
    // Work-item and subgroup positions (i32), from the index hooks and subgroup_width().
    llvm::Value* linear_local_id();
    llvm::Value* lane_id();
    llvm::Value* subgroup_lanes(); // subgroup_size: the width, or fewer in a partial subgroup
    // A shuffle of any 32- or 64-bit scalar of type t, as 32-bit words.
    llvm::Value* shuffle(Shuffle kind, llvm::Value* v, ir::Scalar t, llvm::Value* arg);
    // a + b, min(a, b) or max(a, b) ("add", "min", "max") of type t (min / max of floats as fmin).
    llvm::Value* combine(const std::string& op, llvm::Value* a, llvm::Value* b, ir::Scalar t);
    llvm::Value* subgroup_reduce(const std::string& op, llvm::Value* v, ir::Scalar t);
    llvm::Value* subgroup_scan(bool inclusive, llvm::Value* v, ir::Scalar t);

    // Control flow with the lowering of the arms or the body left to the caller, so that a
    // target can lower them otherwise (the host's group control).
    using Body = std::function<void(const ir::Stmt&)>;
    void if_stmt(const ir::If& n, const Body& arm);
    void for_stmt(const ir::For& n, const Body& body);
    void while_stmt(const ir::While& n, const Body& body);
    // The value once, then a switch on its tag; a case's payload bound to its variable.
    void match_stmt(const ir::Match& n, const Body& arm);
    // Break (or continue) out of the innermost loop of loops_.
    void leave_loop(bool is_break);
    // A For's unroll hint (ir::For::unroll, 0: none) as the !llvm.loop of the branch that closes
    // its loop: llvm.loop.unroll.count N, .full, or .disable for 1; LoopUnroll reads it.
    void mark_unroll(llvm::Instruction* backedge, uint32_t unroll);

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
    llvm::Function* f_ = nullptr;              // the target creates the function
    llvm::BasicBlock* alloca_block_ = nullptr; // and names its first block here
    std::vector<llvm::Value*> buffers_;        // per parameter: a buffer's elements, or null
    std::vector<llvm::Value*> shared_;         // per shared array: its first element
    std::vector<llvm::Value*> privates_;       // per private array: the default's alloca
    std::vector<Variable> variables_;          // by id
    std::vector<std::pair<std::string, size_t>> scope_; // innermost last
    std::vector<Loop> loops_;

private:
    llvm::Type* scalar_type(ir::Scalar s) const;
    llvm::Type* mem_scalar(ir::Scalar s) const;
    // The register slot of case `index`'s payload in a variant's struct.
    static unsigned payload_slot(const ir::TypeDecl& d, uint32_t index);
    void store_variant(llvm::Value* address, const ir::TypeDecl& d, llvm::Value* v);
    // Addresses: base + offset bytes; a field or lane (path step) of the value at `address`.
    llvm::Value* byte_address(llvm::Value* base, uint64_t offset);
    llvm::Value* part_address(llvm::Value* address, const ir::Type& t, uint32_t step);
    const ir::Type& array_type(const std::string& array, ir::Space space) const;
    llvm::Value* address_of(const ir::Expr& e);
    llvm::Value* insert_path(llvm::Value* whole, const ir::Type& t, const ir::Path& path, size_t at,
                             llvm::Value* part);
    llvm::Value* short_circuit(const ir::Binary& n);
    void loop_body(const Body& body, const ir::Stmt& s, llvm::BasicBlock* exit,
                   llvm::BasicBlock* next);
    llvm::Value* float_to_int(llvm::Value* v, const ir::Type& to);
    llvm::Value* index(const std::string& name);
    llvm::Value* math(const std::string& base, ir::Scalar t, const std::vector<llvm::Value*>& args);
    llvm::Value* ilogb(llvm::Value* x, ir::Scalar t);

    std::string generator_;
    // The i16 bits behind an f16 / bf16 register value this lowering rounded or loaded, so that
    // storing it converts nothing; keyed by the value and its type (constants are shared).
    std::map<std::pair<llvm::Value*, ir::Scalar>, llvm::Value*> half_bits_;
};

} // namespace plexus::codegen
