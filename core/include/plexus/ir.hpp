// The typed IR of plexus kernels: scalar types, expression and statement nodes, the kernel.
// One list of node kinds (PLEXUS_IR_EXPRS / PLEXUS_IR_STMTS) drives the kind enums, the
// visitor and every dispatch; nodes are immutable and built only through checked make().
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace plexus::ir {

// ---- types -----------------------------------------------------------------------------

enum class Scalar : uint8_t { Void, Bool, I32, U32, I64, U64, F32, F64 };

const char* to_string(Scalar t);              // "f32"
std::optional<Scalar> scalar_from_string(std::string_view s);
size_t size_of(Scalar t);                     // bytes; bool is 1, void 0
inline bool is_float(Scalar t) { return t == Scalar::F32 || t == Scalar::F64; }
inline bool is_integer(Scalar t) {
    return t == Scalar::I32 || t == Scalar::U32 || t == Scalar::I64 || t == Scalar::U64;
}
inline bool is_signed(Scalar t) { return t == Scalar::I32 || t == Scalar::I64 || is_float(t); }
inline bool is_arithmetic(Scalar t) { return is_integer(t) || is_float(t); }

// Where an array lives: a buffer parameter (global) or a work-group shared array (local).
enum class Space : uint8_t { Global, Local };
const char* to_string(Space s);

// How a kernel may use a buffer parameter: In<T>, Out<T>, InOut<T>.
enum class Access : uint8_t { Read, Write, ReadWrite };
const char* to_string(Access a);

// ---- node kinds --------------------------------------------------------------------------

#define PLEXUS_IR_EXPRS(X) X(Const) X(Var) X(Unary) X(Binary) X(Select) X(Cast) X(Load) X(Call) X(Atomic)
#define PLEXUS_IR_STMTS(X)                                                                     \
    X(Block) X(Let) X(Assign) X(Store) X(If) X(For) X(While) X(Break) X(Continue) X(Return)    \
    X(Barrier) X(Fence) X(Eval) X(Native)

enum class ExprKind : uint8_t {
#define PLEXUS_X(name) name,
    PLEXUS_IR_EXPRS(PLEXUS_X)
#undef PLEXUS_X
};
enum class StmtKind : uint8_t {
#define PLEXUS_X(name) name,
    PLEXUS_IR_STMTS(PLEXUS_X)
#undef PLEXUS_X
};
const char* to_string(ExprKind k); // "Binary"
const char* to_string(StmtKind k); // "If"

struct ExprNode {
    const ExprKind kind;
    const Scalar type;

protected:
    ExprNode(ExprKind k, Scalar t) : kind(k), type(t) {}
};
struct StmtNode {
    const StmtKind kind;

protected:
    explicit StmtNode(StmtKind k) : kind(k) {}
};

using Expr = std::shared_ptr<const ExprNode>;
using Stmt = std::shared_ptr<const StmtNode>;

// Checked downcast by kind (no RTTI): returns nullptr when the node is of another kind.
template <class T> const T* as(const Expr& e) {
    return e && e->kind == T::node_kind ? static_cast<const T*>(e.get()) : nullptr;
}
template <class T> const T* as(const Stmt& s) {
    return s && s->kind == T::node_kind ? static_cast<const T*>(s.get()) : nullptr;
}

// ---- expressions ---------------------------------------------------------------------------
// Every make() throws plexus::Error(InvalidKernel) when its inputs do not fit together.

struct Const final : ExprNode {
    static constexpr ExprKind node_kind = ExprKind::Const;
    int64_t i = 0;  // value of bool and integer constants (u64 stored by bit pattern)
    double f = 0.0; // value of f32 / f64 constants (an f32 value is exact in a double)
    static Expr make_int(Scalar t, int64_t v);
    static Expr make_float(Scalar t, double v);
    static Expr make_bool(bool v);
    Const(Scalar t) : ExprNode(node_kind, t) {}
};

// A scalar variable or scalar parameter, by name.
struct Var final : ExprNode {
    static constexpr ExprKind node_kind = ExprKind::Var;
    std::string name;
    static Expr make(std::string name, Scalar t);
    Var(Scalar t) : ExprNode(node_kind, t) {}
};

enum class UnaryOp : uint8_t { Neg, Not, BitNot };
const char* to_string(UnaryOp op);
struct Unary final : ExprNode {
    static constexpr ExprKind node_kind = ExprKind::Unary;
    UnaryOp op;
    Expr a;
    static Expr make(UnaryOp op, Expr a);
    Unary(Scalar t) : ExprNode(node_kind, t) {}
};

// Arithmetic and bitwise ops take two operands of one type and return it; comparisons return
// bool; LogicalAnd / LogicalOr take and return bool. Shl / Shr: integers, Shr is arithmetic for
// signed types. Div / Rem of integers by zero is undefined, as in C.
enum class BinaryOp : uint8_t {
    Add, Sub, Mul, Div, Rem, Min, Max, BitAnd, BitOr, BitXor, Shl, Shr,
    LogicalAnd, LogicalOr, Eq, Ne, Lt, Le, Gt, Ge
};
const char* to_string(BinaryOp op);
std::optional<BinaryOp> binary_op_from_string(std::string_view s);
inline bool is_comparison(BinaryOp op) { return op >= BinaryOp::Eq; }
// The C operator ("+", "<<", "&&"), or nullptr for min / max, which are calls.
const char* c_symbol(BinaryOp op);
struct Binary final : ExprNode {
    static constexpr ExprKind node_kind = ExprKind::Binary;
    BinaryOp op;
    Expr a, b;
    static Expr make(BinaryOp op, Expr a, Expr b);
    Binary(Scalar t) : ExprNode(node_kind, t) {}
};

struct Select final : ExprNode {
    static constexpr ExprKind node_kind = ExprKind::Select;
    Expr cond, a, b; // cond ? a : b; both arms are evaluated
    static Expr make(Expr cond, Expr a, Expr b);
    Select(Scalar t) : ExprNode(node_kind, t) {}
};

// Conversion with C semantics (float to integer truncates toward zero; to bool is != 0).
struct Cast final : ExprNode {
    static constexpr ExprKind node_kind = ExprKind::Cast;
    Expr a;
    static Expr make(Scalar to, Expr a);
    Cast(Scalar t) : ExprNode(node_kind, t) {}
};

// Element `index` of the array `array` (a buffer parameter or a shared array) of element type.
struct Load final : ExprNode {
    static constexpr ExprKind node_kind = ExprKind::Load;
    std::string array;
    Space space;
    Expr index; // any integer type
    static Expr make(std::string array, Space space, Scalar elem, Expr index);
    Load(Scalar t) : ExprNode(node_kind, t) {}
};

// A call of a catalog intrinsic that is not an atomic, barrier or fence: indices, math.
struct Call final : ExprNode {
    static constexpr ExprKind node_kind = ExprKind::Call;
    std::string name; // catalog name: "global_id_x", "sqrt_f32"
    std::vector<Expr> args;
    // Checks the name against the catalog and the argument types against its signature.
    static Expr make(std::string name, std::vector<Expr> args);
    Call(Scalar t) : ExprNode(node_kind, t) {}
};

enum class AtomicOp : uint8_t { Add, Sub, Min, Max, And, Or, Xor, Xchg, CmpXchg };
const char* to_string(AtomicOp op);
// Atomically updates array[index]; its value is the element's previous value. CmpXchg stores
// `value` when the element equals `compare`.
struct Atomic final : ExprNode {
    static constexpr ExprKind node_kind = ExprKind::Atomic;
    AtomicOp op;
    std::string array;
    Space space;
    Expr index, value, compare; // compare only for CmpXchg
    static Expr make(AtomicOp op, std::string array, Space space, Scalar elem, Expr index,
                     Expr value, Expr compare = nullptr);
    // The catalog name of this atomic: "atomic_add_i32_global".
    std::string intrinsic() const;
    Atomic(Scalar t) : ExprNode(node_kind, t) {}
};

// ---- statements --------------------------------------------------------------------------

struct Block final : StmtNode {
    static constexpr StmtKind node_kind = StmtKind::Block;
    std::vector<Stmt> body;
    static Stmt make(std::vector<Stmt> body);
    Block() : StmtNode(node_kind) {}
};

// Declares a mutable scalar variable, visible to the end of the enclosing block.
struct Let final : StmtNode {
    static constexpr StmtKind node_kind = StmtKind::Let;
    std::string name;
    Scalar type;
    Expr init;
    static Stmt make(std::string name, Expr init);
    Let() : StmtNode(node_kind) {}
};

struct Assign final : StmtNode {
    static constexpr StmtKind node_kind = StmtKind::Assign;
    std::string name;
    Expr value;
    static Stmt make(std::string name, Expr value);
    Assign() : StmtNode(node_kind) {}
};

struct Store final : StmtNode {
    static constexpr StmtKind node_kind = StmtKind::Store;
    std::string array;
    Space space;
    Expr index, value;
    static Stmt make(std::string array, Space space, Expr index, Expr value);
    Store() : StmtNode(node_kind) {}
};

struct If final : StmtNode {
    static constexpr StmtKind node_kind = StmtKind::If;
    Expr cond;
    Stmt then_body, else_body; // else_body may be null
    static Stmt make(Expr cond, Stmt then_body, Stmt else_body = nullptr);
    If() : StmtNode(node_kind) {}
};

// for (type var = begin; var < end; var += step) body — var is visible in body only and is
// read-only there; begin, end and step are evaluated once, before the first iteration.
struct For final : StmtNode {
    static constexpr StmtKind node_kind = StmtKind::For;
    std::string var;
    Scalar type;
    Expr begin, end, step;
    Stmt body;
    static Stmt make(std::string var, Expr begin, Expr end, Expr step, Stmt body);
    For() : StmtNode(node_kind) {}
};

struct While final : StmtNode {
    static constexpr StmtKind node_kind = StmtKind::While;
    Expr cond;
    Stmt body;
    static Stmt make(Expr cond, Stmt body);
    While() : StmtNode(node_kind) {}
};

struct Break final : StmtNode {
    static constexpr StmtKind node_kind = StmtKind::Break;
    static Stmt make();
    Break() : StmtNode(node_kind) {}
};
struct Continue final : StmtNode {
    static constexpr StmtKind node_kind = StmtKind::Continue;
    static Stmt make();
    Continue() : StmtNode(node_kind) {}
};
// Ends the work-item. Not allowed in a kernel that has a barrier (it would leave the group).
struct Return final : StmtNode {
    static constexpr StmtKind node_kind = StmtKind::Return;
    static Stmt make();
    Return() : StmtNode(node_kind) {}
};

// Work-group barrier with a fence on local and global memory: intrinsic "barrier".
struct Barrier final : StmtNode {
    static constexpr StmtKind node_kind = StmtKind::Barrier;
    static Stmt make();
    Barrier() : StmtNode(node_kind) {}
};

enum class FenceScope : uint8_t { WorkGroup, Device };
const char* to_string(FenceScope s);
struct Fence final : StmtNode {
    static constexpr StmtKind node_kind = StmtKind::Fence;
    FenceScope scope;
    static Stmt make(FenceScope scope);
    std::string intrinsic() const; // "fence_workgroup" / "fence_device"
    Fence() : StmtNode(node_kind) {}
};

// Evaluates an expression for its effect (an atomic whose old value is not needed).
struct Eval final : StmtNode {
    static constexpr StmtKind node_kind = StmtKind::Eval;
    Expr value;
    static Stmt make(Expr value);
    Eval() : StmtNode(node_kind) {}
};

// Backend code passed through untouched, keyed by backend name ("cuda", "opencl"), with an
// optional portable fallback used by every backend that has no entry.
struct Native final : StmtNode {
    static constexpr StmtKind node_kind = StmtKind::Native;
    std::map<std::string, std::string> code;
    Stmt fallback; // may be null
    static Stmt make(std::map<std::string, std::string> code, Stmt fallback);
    Native() : StmtNode(node_kind) {}
};

// ---- the kernel ----------------------------------------------------------------------------

struct Param {
    enum class Kind : uint8_t { Buffer, Scalar };
    std::string name;
    Kind kind = Kind::Scalar;
    ir::Scalar type = ir::Scalar::Void; // element type of a buffer, type of a scalar
    Access access = Access::Read;       // buffers only
    bool operator==(const Param&) const = default;
};

struct SharedArray {
    std::string name;
    Scalar type = Scalar::F32;
    uint32_t count = 0;
    bool operator==(const SharedArray&) const = default;
};

struct Kernel {
    std::string name;
    std::vector<Param> params;
    std::vector<SharedArray> shared;
    Stmt body; // a Block

    const Param* param(std::string_view name) const;
    const SharedArray* shared_array(std::string_view name) const;
    uint64_t shared_bytes() const;
    uint64_t hash() const; // FNV-1a of the canonical JSON: stable across runs and processes
};

// What a kernel asks of a backend, collected in one walk.
struct KernelUses {
    std::vector<std::string> intrinsics; // sorted, unique catalog names
    bool fp64 = false;
    bool barrier = false;
    std::vector<std::string> native_backends; // keys of native blocks
    bool native_blocks = false;
    bool native_fallback = true; // every native block has a fallback
};
KernelUses collect_uses(const Kernel& k);

// ---- visitor -------------------------------------------------------------------------------
// Dispatches on the kind; a generator derives from Visitor<Derived> and defines one visit()
// per node. Forgetting one is a compile error at the dispatch, not a silent hole.
template <class Derived, class R = void> struct ExprVisitor {
    R dispatch(const Expr& e) {
        auto& self = static_cast<Derived&>(*this);
        switch (e->kind) {
#define PLEXUS_X(name)                                                                         \
    case ExprKind::name: return self.visit(static_cast<const name&>(*e));
            PLEXUS_IR_EXPRS(PLEXUS_X)
#undef PLEXUS_X
        }
        __builtin_unreachable();
    }
};
template <class Derived, class R = void> struct StmtVisitor {
    R dispatch(const Stmt& s) {
        auto& self = static_cast<Derived&>(*this);
        switch (s->kind) {
#define PLEXUS_X(name)                                                                         \
    case StmtKind::name: return self.visit(static_cast<const name&>(*s));
            PLEXUS_IR_STMTS(PLEXUS_X)
#undef PLEXUS_X
        }
        __builtin_unreachable();
    }
};

// ---- passes and formats ------------------------------------------------------------------

std::string print(const Kernel& k);         // readable text
std::string print(const Expr& e);
std::string to_json(const Kernel& k);        // schema "plexus-ir/1", indented, sorted keys
std::string canonical_json(const Kernel& k); // the same on one line: what hash() covers
// Throws plexus::Error(InvalidIR) naming the JSON path ("kernel.body.body[2].value.op") and
// what was expected; `origin` (a file name) goes into the error's context.
Kernel from_json(std::string_view text, const std::string& origin = "");

struct ValidateLimits {
    uint64_t local_memory_bytes = 0; // 0: unchecked
};
// Throws plexus::Error(InvalidKernel) naming the kernel and the construct.
void validate(const Kernel& k, const ValidateLimits& limits = {});

} // namespace plexus::ir
