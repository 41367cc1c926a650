// The typed IR of plexus kernels: expression and statement nodes and the kernel (types in
// plexus/types.hpp). One list of node kinds (PLEXUS_IR_EXPRS / PLEXUS_IR_STMTS) drives the kind
// enums, the visitor and every dispatch; nodes are immutable and built only through make().
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "plexus/types.hpp"

namespace plexus::ir {

// ---- types (plexus/types.hpp) and arrays --------------------------------------------------

// Where an array lives: a buffer parameter (global), a work-group shared array (local), or a
// per-work-item array (private).
enum class Space : uint8_t { Global, Local, Private };
const char* to_string(Space s);

// How a kernel may use a buffer parameter: In<T>, Out<T>, InOut<T>.
enum class Access : uint8_t { Read, Write, ReadWrite };
const char* to_string(Access a);

// ---- node kinds --------------------------------------------------------------------------

// clang-format off
#define PLEXUS_IR_EXPRS(X)                                                                     \
    X(Const) X(Var) X(Unary) X(Binary) X(Select) X(Cast) X(Load) X(Call) X(Atomic) X(Field)   \
    X(Swizzle) X(Broadcast) X(Construct) X(MakeVariant)
#define PLEXUS_IR_STMTS(X)                                                                     \
    X(Block) X(Let) X(Assign) X(Store) X(If) X(For) X(While) X(Break) X(Continue) X(Return)    \
    X(Barrier) X(Fence) X(Eval) X(Native) X(Match) X(Matrix) X(AsyncCopy)
// clang-format on

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
    const Type type;

protected:
    ExprNode(ExprKind k, Type t) : kind(k), type(std::move(t)) {}
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

// Each node lists its children once, in `parts`: member pointers to its Expr, Stmt,
// std::vector<Expr> and std::vector<Stmt> members (and Match's std::vector<MatchCase>, whose
// `parts` is the case's body), in the order they run. for_each_child, for_each_part, map_children
// and map_parts (below) are derived from it, so every pass that walks or rebuilds through them
// reaches an operand as soon as it is listed: Halide's IRVisitor / IRMutator default walk, with no
// second list to fall out of step. Member pointers rather than a walking function, because one list
// then serves both reading a node and rebuilding a copy of it with members replaced. Every Expr and
// Stmt member of a node belongs in its list (tests/core/ir/ir_children_test.cpp checks each kind).

// ---- expressions ---------------------------------------------------------------------------
// Every make() throws plexus::Error(InvalidKernel) when its inputs do not fit together.
// Vectors: Unary and arithmetic Binary work lane by lane; comparisons, and / or take scalars.

struct Const final : ExprNode {
    static constexpr ExprKind node_kind = ExprKind::Const;
    int64_t i = 0;  // value of bool and integer constants (u64 stored by bit pattern)
    double f = 0.0; // value of float constants, rounded to the type (exact in a double)
    static constexpr auto parts = std::tuple{};
    static Expr make_int(Scalar t, int64_t v);
    static Expr make_float(Scalar t, double v);
    static Expr make_bool(bool v);
    Const(Type t) : ExprNode(node_kind, std::move(t)) {}
};

// A variable or scalar parameter, by name.
struct Var final : ExprNode {
    static constexpr ExprKind node_kind = ExprKind::Var;
    std::string name;
    static constexpr auto parts = std::tuple{};
    static Expr make(std::string name, Type t);
    Var(Type t) : ExprNode(node_kind, std::move(t)) {}
};

enum class UnaryOp : uint8_t { Neg, Not, BitNot };
const char* to_string(UnaryOp op);
struct Unary final : ExprNode {
    static constexpr ExprKind node_kind = ExprKind::Unary;
    UnaryOp op;
    Expr a;
    static constexpr auto parts = std::tuple{&Unary::a};
    static Expr make(UnaryOp op, Expr a);
    Unary(Type t) : ExprNode(node_kind, std::move(t)) {}
};

// Arithmetic and bitwise ops take two operands of one type and return it; comparisons return
// bool; LogicalAnd / LogicalOr take and return bool. Shl / Shr: integers, Shr is arithmetic for
// signed types. Div / Rem of integers by zero is undefined, as in C.
// clang-format off
enum class BinaryOp : uint8_t {
    Add, Sub, Mul, Div, Rem, Min, Max, BitAnd, BitOr, BitXor, Shl, Shr,
    LogicalAnd, LogicalOr, Eq, Ne, Lt, Le, Gt, Ge
};
// clang-format on
const char* to_string(BinaryOp op);
std::optional<BinaryOp> binary_op_from_string(std::string_view s);
inline bool is_comparison(BinaryOp op) {
    return op >= BinaryOp::Eq;
}
// The C operator ("+", "<<", "&&"), or nullptr for min / max, which are calls.
const char* c_symbol(BinaryOp op);
struct Binary final : ExprNode {
    static constexpr ExprKind node_kind = ExprKind::Binary;
    BinaryOp op;
    Expr a, b;
    static constexpr auto parts = std::tuple{&Binary::a, &Binary::b};
    static Expr make(BinaryOp op, Expr a, Expr b);
    Binary(Type t) : ExprNode(node_kind, std::move(t)) {}
};

struct Select final : ExprNode {
    static constexpr ExprKind node_kind = ExprKind::Select;
    Expr cond, a, b; // cond ? a : b; both arms are evaluated; any one type for both arms
    static constexpr auto parts = std::tuple{&Select::cond, &Select::a, &Select::b};
    static Expr make(Expr cond, Expr a, Expr b);
    Select(Type t) : ExprNode(node_kind, std::move(t)) {}
};

// Conversion with C semantics (float to integer truncates toward zero; to bool is != 0),
// between scalars, or lane by lane between vectors of one lane count. Into or out of f16 and
// bf16 it goes through f32.
struct Cast final : ExprNode {
    static constexpr ExprKind node_kind = ExprKind::Cast;
    Expr a;
    static constexpr auto parts = std::tuple{&Cast::a};
    static Expr make(Type to, Expr a);
    Cast(Type t) : ExprNode(node_kind, std::move(t)) {}
};

// Element `index` of the array `array` (a buffer parameter, a shared or a private array).
struct Load final : ExprNode {
    static constexpr ExprKind node_kind = ExprKind::Load;
    std::string array;
    Space space;
    Expr index; // any integer type
    static constexpr auto parts = std::tuple{&Load::index};
    static Expr make(std::string array, Space space, Type elem, Expr index);
    Load(Type t) : ExprNode(node_kind, std::move(t)) {}
};

// A call of a catalog intrinsic that is not an atomic, barrier or fence: indices, math.
struct Call final : ExprNode {
    static constexpr ExprKind node_kind = ExprKind::Call;
    std::string name; // catalog name: "global_id_x", "sqrt_f32"
    std::vector<Expr> args;
    // Checks the name against the catalog and the argument types against its signature.
    static constexpr auto parts = std::tuple{&Call::args};
    static Expr make(std::string name, std::vector<Expr> args);
    Call(Type t) : ExprNode(node_kind, std::move(t)) {}
};

enum class AtomicOp : uint8_t { Add, Sub, Min, Max, And, Or, Xor, Xchg, CmpXchg };
const char* to_string(AtomicOp op);
// Atomically updates array[index]; its value is the element's previous value. CmpXchg stores
// `value` when the element equals `compare`. Global and local arrays only.
struct Atomic final : ExprNode {
    static constexpr ExprKind node_kind = ExprKind::Atomic;
    AtomicOp op;
    std::string array;
    Space space;
    Expr index, value, compare; // compare only for CmpXchg
    static constexpr auto parts = std::tuple{&Atomic::index, &Atomic::value, &Atomic::compare};
    static Expr make(AtomicOp op, std::string array, Space space, Scalar elem, Expr index,
                     Expr value, Expr compare = nullptr);
    // The catalog name of this atomic: "atomic_add_i32_global".
    std::string intrinsic() const;
    Atomic(Type t) : ExprNode(node_kind, std::move(t)) {}
};

// Field `index` of a record value.
struct Field final : ExprNode {
    static constexpr ExprKind node_kind = ExprKind::Field;
    Expr base;
    uint32_t index = 0;
    static constexpr auto parts = std::tuple{&Field::base};
    static Expr make(Expr base, uint32_t index);
    Field(Type t) : ExprNode(node_kind, std::move(t)) {}
};

// Lanes of a vector, in the order given: one lane is a scalar, 2, 3, 4 or 8 lanes a vector
// (v.x(), v.zyx()).
struct Swizzle final : ExprNode {
    static constexpr ExprKind node_kind = ExprKind::Swizzle;
    Expr base;
    std::vector<uint8_t> lanes;
    static constexpr auto parts = std::tuple{&Swizzle::base};
    static Expr make(Expr base, std::vector<uint8_t> lanes);
    Swizzle(Type t) : ExprNode(node_kind, std::move(t)) {}
};

// A vector of `lanes` copies of a scalar.
struct Broadcast final : ExprNode {
    static constexpr ExprKind node_kind = ExprKind::Broadcast;
    Expr value;
    static constexpr auto parts = std::tuple{&Broadcast::value};
    static Expr make(Expr value, uint32_t lanes);
    Broadcast(Type t) : ExprNode(node_kind, std::move(t)) {}
};

// A vector from its lanes, or a record from its fields, in order.
struct Construct final : ExprNode {
    static constexpr ExprKind node_kind = ExprKind::Construct;
    std::vector<Expr> args;
    static constexpr auto parts = std::tuple{&Construct::args};
    static Expr make(Type t, std::vector<Expr> args);
    Construct(Type t) : ExprNode(node_kind, std::move(t)) {}
};

// A variant value of case `index` with its payload (null for a case without payload).
struct MakeVariant final : ExprNode {
    static constexpr ExprKind node_kind = ExprKind::MakeVariant;
    uint32_t index = 0;
    Expr payload;
    static constexpr auto parts = std::tuple{&MakeVariant::payload};
    static Expr make(Type t, uint32_t index, Expr payload);
    MakeVariant(Type t) : ExprNode(node_kind, std::move(t)) {}
};

// ---- statements --------------------------------------------------------------------------

struct Block final : StmtNode {
    static constexpr StmtKind node_kind = StmtKind::Block;
    std::vector<Stmt> body;
    static constexpr auto parts = std::tuple{&Block::body};
    static Stmt make(std::vector<Stmt> body);
    Block() : StmtNode(node_kind) {}
};

// Declares a mutable variable, visible to the end of the enclosing block.
struct Let final : StmtNode {
    static constexpr StmtKind node_kind = StmtKind::Let;
    std::string name;
    Type type;
    Expr init;
    static constexpr auto parts = std::tuple{&Let::init};
    static Stmt make(std::string name, Expr init);
    Let() : StmtNode(node_kind) {}
};

// A path into a value: each step a field of a record or a lane of a vector, so that
// `p.pos.x = v` writes one lane of one field. Empty: the whole value.
using Path = std::vector<uint32_t>;
// The type reached by following `path` from `root`; nullopt when a step does not fit.
std::optional<Type> path_type(const Type& root, const Path& path);

struct Assign final : StmtNode {
    static constexpr StmtKind node_kind = StmtKind::Assign;
    std::string name;
    Path path;
    Expr value;
    static constexpr auto parts = std::tuple{&Assign::value};
    static Stmt make(std::string name, Expr value, Path path = {});
    Assign() : StmtNode(node_kind) {}
};

struct Store final : StmtNode {
    static constexpr StmtKind node_kind = StmtKind::Store;
    std::string array;
    Space space;
    Expr index, value;
    Path path;
    static constexpr auto parts = std::tuple{&Store::index, &Store::value};
    static Stmt make(std::string array, Space space, Expr index, Expr value, Path path = {});
    Store() : StmtNode(node_kind) {}
};

struct If final : StmtNode {
    static constexpr StmtKind node_kind = StmtKind::If;
    Expr cond;
    Stmt then_body, else_body; // else_body may be null
    static constexpr auto parts = std::tuple{&If::cond, &If::then_body, &If::else_body};
    static Stmt make(Expr cond, Stmt then_body, Stmt else_body = nullptr);
    If() : StmtNode(node_kind) {}
};

// for (type var = begin; var < end; var += step) body — var is visible in body only and is
// read-only there; begin, end and step are evaluated once, before the first iteration.
// `unroll` is a hint to the backend's compiler that never changes what the loop computes:
// 0 the compiler decides, 1 keep the loop rolled, n (up to max_unroll) unroll by n,
// unroll_full unroll completely (the validator asks for constant begin, end and step). It is
// no child, so it stays out of `parts`; the default mutators copy it with the node.
struct For final : StmtNode {
    static constexpr StmtKind node_kind = StmtKind::For;
    static constexpr uint32_t unroll_full = UINT32_MAX;
    // The largest count. Far above what pays, and below what breaks a compiler: PoCL 3.1
    // (LLVM 15) ran out of 6 GiB unrolling a one-line loop by 65536 (docs/kernel-language.md).
    static constexpr uint32_t max_unroll = 1024;
    std::string var;
    Scalar type;
    Expr begin, end, step;
    Stmt body;
    uint32_t unroll = 0;
    static constexpr auto parts = std::tuple{&For::begin, &For::end, &For::step, &For::body};
    static Stmt make(std::string var, Expr begin, Expr end, Expr step, Stmt body,
                     uint32_t unroll = 0);
    For() : StmtNode(node_kind) {}
};

struct While final : StmtNode {
    static constexpr StmtKind node_kind = StmtKind::While;
    Expr cond;
    Stmt body;
    static constexpr auto parts = std::tuple{&While::cond, &While::body};
    static Stmt make(Expr cond, Stmt body);
    While() : StmtNode(node_kind) {}
};

struct Break final : StmtNode {
    static constexpr StmtKind node_kind = StmtKind::Break;
    static constexpr auto parts = std::tuple{};
    static Stmt make();
    Break() : StmtNode(node_kind) {}
};
struct Continue final : StmtNode {
    static constexpr StmtKind node_kind = StmtKind::Continue;
    static constexpr auto parts = std::tuple{};
    static Stmt make();
    Continue() : StmtNode(node_kind) {}
};
// Ends the work-item. Not allowed in a kernel that has a barrier (it would leave the group).
struct Return final : StmtNode {
    static constexpr StmtKind node_kind = StmtKind::Return;
    static constexpr auto parts = std::tuple{};
    static Stmt make();
    Return() : StmtNode(node_kind) {}
};

// Work-group barrier with a fence on local and global memory: intrinsic "barrier".
struct Barrier final : StmtNode {
    static constexpr StmtKind node_kind = StmtKind::Barrier;
    static constexpr auto parts = std::tuple{};
    static Stmt make();
    Barrier() : StmtNode(node_kind) {}
};

enum class FenceScope : uint8_t { WorkGroup, Device };
const char* to_string(FenceScope s);
struct Fence final : StmtNode {
    static constexpr StmtKind node_kind = StmtKind::Fence;
    FenceScope scope;
    static constexpr auto parts = std::tuple{};
    static Stmt make(FenceScope scope);
    std::string intrinsic() const; // "fence_workgroup" / "fence_device"
    Fence() : StmtNode(node_kind) {}
};

// Evaluates an expression for its effect (an atomic whose old value is not needed).
struct Eval final : StmtNode {
    static constexpr StmtKind node_kind = StmtKind::Eval;
    Expr value;
    static constexpr auto parts = std::tuple{&Eval::value};
    static Stmt make(Expr value);
    Eval() : StmtNode(node_kind) {}
};

// Backend code passed through untouched, keyed by backend name ("cuda", "opencl"), with an
// optional portable fallback used by every backend that has no entry.
struct Native final : StmtNode {
    static constexpr StmtKind node_kind = StmtKind::Native;
    std::map<std::string, std::string> code;
    Stmt fallback; // may be null
    static constexpr auto parts = std::tuple{&Native::fallback};
    static Stmt make(std::map<std::string, std::string> code, Stmt fallback);
    Native() : StmtNode(node_kind) {}
};

// Runs the body of the case a variant value holds. A case with a payload may bind it to a
// variable (`var`, visible in that body only, mutable); `otherwise` runs for every case not
// listed. The validator requires every case to be listed once, or an otherwise.
struct MatchCase {
    uint32_t index = 0; // the variant's case
    std::string var;    // "" binds nothing
    Stmt body;
    static constexpr auto parts = std::tuple{&MatchCase::body};
};
struct Match final : StmtNode {
    static constexpr StmtKind node_kind = StmtKind::Match;
    Expr value;
    std::vector<MatchCase> cases;
    Stmt otherwise; // may be null
    static constexpr auto parts = std::tuple{&Match::value, &Match::cases, &Match::otherwise};
    static Stmt make(Expr value, std::vector<MatchCase> cases, Stmt otherwise = nullptr);
    Match() : StmtNode(node_kind) {}
};

// ---- matrix fragments (tensor cores) ------------------------------------------------------
// A fragment is a tile of a matrix held jointly by the work-items of one subgroup: the A (m x k)
// or B (k x n) operand of a multiply-accumulate, or an accumulator (m x n). How its elements
// are spread over the subgroup's lanes is the backend's (tensor-core registers on CUDA; every
// lane holds the whole tile where plain arithmetic runs it), so a kernel reaches them only
// through Matrix statements: fill, load, store, mma. Every one of them is collective: the
// whole subgroup reaches it with the same operands (docs/kernel-language.md, "Matrix
// fragments"). Shapes and types (FragmentDecl::check): m16n16k16 with f16 A/B and an f32 or
// f16 accumulator, m16n16k16 with bf16 A/B and an f32 accumulator, m16n16k8 with tf32 A/B
// (f32 in memory and in the kernel) and an f32 accumulator.
//
// A warpgroup accumulator (m64nNk16, f32, N a multiple of 64 up to 256) is a 64 x N tile held
// by four consecutive subgroups (subgroups 4q .. 4q + 3 of a group, a warpgroup on CUDA), each
// holding 16 of its rows: subgroup s the rows 16 * (s % 4) ... Its A and B operands are not
// fragments but tiles of swizzled shared arrays (ArrayDecl::swizzle), read by MmaShared (wgmma
// on sm_90, ldmatrix and mma.sync on sm_80 .. 89 and past sm_90, plain arithmetic elsewhere).
enum class MatrixUse : uint8_t { A, B, Acc };
enum class MatrixLayout : uint8_t { Row, Col };
const char* to_string(MatrixUse u);    // "a", "b", "acc"
const char* to_string(MatrixLayout l); // "row", "col"

struct FragmentDecl {
    std::string name;
    MatrixUse use = MatrixUse::Acc;
    uint32_t m = 16, n = 16, k = 16;
    Scalar type = Scalar::F32;               // element type in memory (f32 A/B: tf32)
    MatrixLayout layout = MatrixLayout::Row; // A and B: how loads read memory; Acc: unused
    bool operator==(const FragmentDecl&) const = default;

    // A warpgroup accumulator (m64nNk16): four subgroups hold it, 16 rows each.
    bool warpgroup() const { return m == 64; }
    // The rows one subgroup holds: 16 of a warpgroup accumulator, else all of them.
    uint32_t subgroup_rows() const { return warpgroup() ? 16 : rows(); }
    uint32_t rows() const { return use == MatrixUse::B ? k : m; }
    uint32_t cols() const { return use == MatrixUse::A ? k : n; }
    uint32_t elements() const { return rows() * cols(); }
    std::string shape() const; // "m16n16k16"
    // The catalog row that names this fragment's shape and type: "matrix_a_m16n16k16_f16",
    // "matrix_acc_m16n16k8_f32" (A and B of f32 are "tf32").
    std::string intrinsic() const;
    // "" when the shape, use and type form a fragment some device has; else what is wrong.
    std::string check() const;
};

enum class MatrixOp : uint8_t { Fill, Load, Store, Mma, MmaShared };
const char* to_string(MatrixOp op); // "fill", "load", "store", "mma", "mma_shared"

// One collective fragment operation:
//   Fill:  every element of `frag` = value (a number converted to the fragment's type)
//   Load:  frag = the tile at array[index], rows (columns for Col) `stride` elements apart; A
//          and B read in their declared layout, an accumulator in `layout`
//   Store: the tile at array[index] = frag (accumulators only), in `layout`
//   Mma:   frag (d) = a x b + c, the products and sums at least in f32 and rounded to d's type
//   Store of a warpgroup accumulator: subgroup s stores its rows 16 * (s % 4) .., and only the
//          elements (r, c) of the 64 x N tile with r < rows and c < cols when those are given.
//   MmaShared: d (a warpgroup accumulator, 64 x N) += A x B with A the 64 x 16*steps tile of the
//          shared array `array` at [row_a][col_a] and B the 16*steps x N tile of `array_b` at
//          [row_b][col_b], both swizzled arrays of f16 or bf16; products and sums in f32. The
//          four subgroups of a warpgroup give the same operands. row_a and row_b are multiples
//          of 8, col_a of 16 and col_b of 64 (the tensor cores' descriptors). With in_flight
//          n > 0 this one and the n - 1 before it may still be reading their tiles when it
//          returns (their results are in d by the next store or fill of it); every earlier one
//          is done, so a tile may be rewritten once n later mma_shared have returned
//          (wgmma.wait_group n; other backends finish each at once).
struct Matrix final : StmtNode {
    static constexpr StmtKind node_kind = StmtKind::Matrix;
    MatrixOp op = MatrixOp::Fill;
    std::string frag;    // Fill, Load, Store: the fragment; Mma: d
    std::string a, b, c; // Mma
    std::string array;   // Load, Store: a buffer parameter or a shared array
    Space space = Space::Global;
    Expr index, stride;                      // Load, Store: integers
    MatrixLayout layout = MatrixLayout::Row; // Load and Store of an accumulator
    Expr value;                              // Fill
    Expr rows, cols;                 // Store of a warpgroup accumulator: the bounds, or null
    std::string array_b;             // MmaShared: A is `array`, B `array_b`
    Expr row_a, col_a, row_b, col_b; // MmaShared: the tiles' first elements
    uint32_t steps = 1;              // MmaShared: k = 16 * steps
    uint32_t in_flight = 0; // MmaShared: earlier mma_shared that may still read their tiles
    // The operands of every op: those an op does not use are null, and walks skip them.
    static constexpr auto parts =
        std::tuple{&Matrix::index, &Matrix::stride, &Matrix::value, &Matrix::rows, &Matrix::cols,
                   &Matrix::row_a, &Matrix::col_a,  &Matrix::row_b, &Matrix::col_b};
    static Stmt fill(std::string frag, Expr value);
    static Stmt load(std::string frag, std::string array, Space space, Expr index, Expr stride,
                     MatrixLayout layout = MatrixLayout::Row);
    static Stmt store(std::string frag, std::string array, Space space, Expr index, Expr stride,
                      MatrixLayout layout = MatrixLayout::Row);
    static Stmt mma(std::string d, std::string a, std::string b, std::string c);
    // A store of a warpgroup accumulator that writes only (r, c) with r < rows and c < cols.
    static Stmt store_bounded(std::string frag, std::string array, Space space, Expr index,
                              Expr stride, Expr rows, Expr cols);
    static Stmt mma_shared(std::string d, std::string a, Expr row_a, Expr col_a, std::string b,
                           Expr row_b, Expr col_b, uint32_t steps, uint32_t in_flight = 0);
    Matrix() : StmtNode(node_kind) {}
};

// ---- asynchronous copies into shared memory ------------------------------------------------
// A work-item copies `count` consecutive elements of a buffer into a shared array without
// passing them through its registers (cp.async on CUDA from sm_80), and later waits for them.
// Per work-item, not collective: any control flow may hold them (docs/kernel-language.md,
// "Asynchronous copies").
//   Copy:   array[index + i] = i < valid ? buffer[src_index + i] : 0 for i < count; only the
//           `valid` first elements are read. count * the element size is 4, 8 or 16 bytes, and
//           both indices times the element size are multiples of it.
//   Commit: closes the work-item's current group of copies.
//   Wait:   waits until at most `pending` of the work-item's committed groups are in flight;
//           the data is then visible to the work-item, and to its group after a barrier.
// A backend may copy synchronously at Copy (ir::lower_async_copy): that meets the semantics.
enum class AsyncCopyOp : uint8_t { Copy, Commit, Wait };
const char* to_string(AsyncCopyOp op); // "copy", "commit", "wait"

struct AsyncCopy final : StmtNode {
    static constexpr StmtKind node_kind = StmtKind::AsyncCopy;
    AsyncCopyOp op = AsyncCopyOp::Copy;
    std::string array;    // Copy: the shared array written
    Expr index;           // Copy: its first element written (an integer)
    std::string buffer;   // Copy: the buffer parameter read
    Expr src_index;       // Copy: its first element read (an integer)
    uint32_t count = 0;   // Copy: elements copied
    Expr valid;           // Copy: elements read (an integer, 0 .. count); the rest are 0
    uint32_t pending = 0; // Wait: committed groups that may still be in flight
    static constexpr auto parts =
        std::tuple{&AsyncCopy::index, &AsyncCopy::src_index, &AsyncCopy::valid};
    static Stmt copy(std::string array, Expr index, std::string buffer, Expr src_index,
                     uint32_t count, Expr valid);
    static Stmt commit();
    static Stmt wait(uint32_t pending);
    AsyncCopy() : StmtNode(node_kind) {}
};

// ---- the kernel ----------------------------------------------------------------------------

struct Param {
    enum class Kind : uint8_t { Buffer, Scalar };
    std::string name;
    Kind kind = Kind::Scalar;
    Type type;                    // element type of a buffer, type of a scalar
    Access access = Access::Read; // buffers only
    bool operator==(const Param&) const = default;
};

// A shared (work-group) or private (per-work-item) array with a static element count. A
// shared array may carry a shape: `dims` (rows, cols[, depth]) and `pad` elements added to
// each innermost row; the kernel language turns a[r][c] into the flat r * (cols + pad) + c.
struct ArrayDecl {
    std::string name;
    Type type = Scalar::F32;
    uint32_t count = 0;           // elements, padding included
    std::vector<uint32_t> dims{}; // empty: one-dimensional
    uint32_t pad = 0;
    // A 2-D shared array in the tensor cores' 128-byte swizzle (px::Swizzle128): columns in
    // panels of 128 bytes, each panel's rows 128 bytes apart, the 16-byte chunks of row r
    // permuted by r % 8 (swizzled_index). 1024-byte aligned; no padding.
    bool swizzle = false;
    bool operator==(const ArrayDecl&) const = default;
};
using SharedArray = ArrayDecl;

// Where element [row][col] of a swizzled array (ArrayDecl::swizzle) of `rows` rows of
// `elem_size`-byte elements lies, in elements: with E = 128 / elem_size elements to a panel row
// and V = 16 / elem_size to a chunk,
//   (col / E) * rows * E + row * E + ((col % E / V) ^ (row % 8)) * V + col % V
// (the tensor cores' 128-byte swizzle: the 16-byte chunk index XOR the row's low three bits).
// The Expr form is u32 arithmetic on row and col (indices are not negative).
uint64_t swizzled_index(uint32_t rows, uint32_t elem_size, uint64_t row, uint64_t col);
Expr swizzled_index(uint32_t rows, uint32_t elem_size, const Expr& row, const Expr& col);

// The work-group size a kernel declares: a required shape (every launch uses exactly that
// one: OpenCL's reqd_work_group_size, PTX's .reqntid), or a most work-items per group
// (CUDA's __launch_bounds__, PTX's .maxntid). 0 means "not declared".
struct WorkGroupBound {
    std::array<uint32_t, 3> required{0, 0, 0};
    uint32_t max = 0;
    // Groups of the declared size that should be resident at once on one compute unit (0: not
    // declared): the CUDA generators pass it to ptxas, which caps registers to fit them.
    uint32_t min_groups = 0;
    bool operator==(const WorkGroupBound&) const = default;
    bool declared() const { return required[0] != 0 || max != 0; }
    // The most work-items a group may have: the required shape's, else max; 0 when undeclared.
    uint32_t items() const { return required[0] ? required[0] * required[1] * required[2] : max; }
};

struct Kernel {
    std::string name;
    std::vector<Param> params;
    std::vector<ArrayDecl> shared;
    Stmt body; // a Block
    // Every record and variant the kernel uses, each after the ones it contains.
    std::vector<std::shared_ptr<const TypeDecl>> types{};
    std::vector<ArrayDecl> privates{};
    WorkGroupBound work_group{};
    std::vector<FragmentDecl> fragments{};
    // Non-empty: the kernel is a library routine of that name ("gemm_f16", ir::routines()),
    // run by a backend that offers it (plugin.h, "Library routines"); its body is empty.
    std::string routine{};

    const Param* param(std::string_view name) const;
    const ArrayDecl* shared_array(std::string_view name) const;
    const ArrayDecl* private_array(std::string_view name) const;
    const FragmentDecl* fragment(std::string_view name) const;
    // Whether a fragment is a warpgroup accumulator (FragmentDecl::warpgroup): the kernel then
    // runs its groups as whole warpgroups and its PTX needs sm_90a's wgmma.
    bool has_warpgroup() const;
    const TypeDecl* type_decl(std::string_view name) const;
    uint64_t shared_bytes() const;
    uint64_t hash() const; // FNV-1a of the canonical JSON: stable across runs and processes
};

// A library routine a kernel may be (Kernel::routine): its name and its parameters' kinds,
// types and accesses in order (their names are the kernel's own). plugin.h, "Library
// routines", says what each computes.
struct Routine {
    std::string name;
    std::vector<Param> params;
};
// Every routine plexus knows: gemm_f32, gemm_tf32, gemm_f16, gemm_bf16.
const std::vector<Routine>& routines();
const Routine* find_routine(std::string_view name);

// Sets k.types to every record and variant that the parameters, arrays and body use, each
// after the ones it contains; throws InvalidKernel when two different types share a name.
void collect_types(Kernel& k);

// What a kernel asks of a backend, collected in one walk.
struct KernelUses {
    std::vector<std::string> intrinsics; // sorted, unique catalog names
    bool fp64 = false;
    bool barrier = false;
    bool subgroup = false;   // a subgroup operation (collective: catalog class SUBGROUP)
    bool matrix = false;     // a matrix-fragment operation (collective too)
    bool async_copy = false; // an asynchronous copy, commit or wait
    std::vector<std::string> native_backends; // keys of native blocks
    bool native_blocks = false;
    bool native_fallback = true; // every native block has a fallback
};
KernelUses collect_uses(const Kernel& k);

// Rewrites every fragment into a private array that holds the whole tile (row-major) and every
// Matrix statement into loops of plain loads, stores and arithmetic, each work-item computing
// the whole tile (so the work-items of a subgroup hold the same values, which is what the
// collective semantics promise): how a backend without matrix units runs fragments. Takes a
// valid kernel and returns one without fragments.
// With only_warpgroup, only warpgroup accumulators and the statements that name them are
// rewritten (each subgroup's work-items holding its 16 rows): how a backend whose matrix units
// take m16 fragments but not warpgroup ones runs a kernel with both.
Kernel lower_matrix(const Kernel& k, bool only_warpgroup = false);

// Rewrites every asynchronous copy into plain loads and stores done at once (each element read
// under an if, so nothing past `valid` is read) and drops commits and waits: how a backend
// without asynchronous copies runs them. Takes a valid kernel; returns it unchanged when it has
// no AsyncCopy.
Kernel lower_async_copy(const Kernel& k);

// ---- visitor -------------------------------------------------------------------------------
// Dispatches on the kind; a generator derives from Visitor<Derived> and defines one visit()
// per node. Forgetting one is a compile error at the dispatch, not a silent hole.
template <class Derived, class R = void> struct ExprVisitor {
    R dispatch(const Expr& e) {
        auto& self = static_cast<Derived&>(*this);
        switch (e->kind) {
#define PLEXUS_X(name)                                                                             \
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
#define PLEXUS_X(name)                                                                             \
    case StmtKind::name: return self.visit(static_cast<const name&>(*s));
            PLEXUS_IR_STMTS(PLEXUS_X)
#undef PLEXUS_X
        }
        __builtin_unreachable();
    }
};

// ---- children (each node's `parts`) -------------------------------------------------------
// Calls f(child) for each direct sub-expression of e, in evaluation order; null ones are skipped.
template <class F> void for_each_child(const ExprNode& e, F&& f);
// Calls on_expr(e) for each expression a statement holds directly and on_stmt(s) for each
// statement it holds (bodies, arms, fallbacks), in the order they run; null parts are skipped.
template <class FE, class FS> void for_each_part(const StmtNode& s, FE&& on_expr, FS&& on_stmt);
// The default mutators: e (s) with each child c (null ones left null, f not called) replaced by
// f(c), every other member kept; e (s) itself when every f(c) is c, so that a pass that changes
// nothing returns the node it was given. A replacement must be non-null and, for an expression,
// of c's type: a node's own type and its make() checks follow from its children's types, which
// the copy then keeps (a pass that changes types rebuilds the node through make()); else
// plexus::Error(Internal). Each calls f on its children only: a deep rewrite recurses in f.
template <class F> Expr map_children(const Expr& e, F&& f);
template <class FE, class FS> Stmt map_parts(const Stmt& s, FE&& on_expr, FS&& on_stmt);

// ---- passes and formats ------------------------------------------------------------------

std::string print(const Kernel& k); // readable text
std::string print(const Expr& e);
// Whether the kernel needs schema "plexus-ir/2": a type or node "plexus-ir/1" lacks, a path, a
// private or shaped array, a declared work-group size. The JSON writer emits the oldest schema
// that can express the kernel, so a Custom plugin that reads only "/1" keeps working.
bool needs_ir_v2(const Kernel& k);
// Whether a loop carries an unroll hint (For::unroll): the JSON writer then writes
// "plexus-ir/2.1", which is "/2" and that key.
bool has_loop_hints(const Kernel& k);
// The kernel with every loop's unroll hint dropped. Hints never change what a kernel computes,
// so this is what a Custom plugin gets: it keeps receiving "/1" or "/2" documents.
Kernel without_loop_hints(const Kernel& k);
// Schema "plexus-ir/2.1" when a loop has a hint, else "/1" or "/2"; indented, sorted keys.
std::string to_json(const Kernel& k);
std::string canonical_json(const Kernel& k); // the same on one line: what hash() covers
// Reads schemas "plexus-ir/2.1", "/2" and "/1". Throws plexus::Error(InvalidIR) naming the JSON
// path ("kernel.body.body[2].value.op") and what was expected; `origin` (a file name) goes
// into the error's context.
Kernel from_json(std::string_view text, const std::string& origin = "");

struct ValidateLimits {
    uint64_t local_memory_bytes = 0; // 0: unchecked
};
// Throws plexus::Error(InvalidKernel) naming the kernel and the construct.
void validate(const Kernel& k, const ValidateLimits& limits = {});
// validate(), and an Unsupported error for a routine kernel, which has no code to generate
// (a backend's library runs it): what every code generator calls first.
void validate_for_codegen(const Kernel& k);

// ---- inline definitions ------------------------------------------------------------------

namespace parts_impl {

// Throws plexus::Error(Internal) when a default mutator's replacement breaks the rules above.
void check_replacement(const Expr& was, const Expr& now);
void check_replacement(const Stmt& was, const Stmt& now);

template <class M> struct MemberType;
template <class C, class T> struct MemberType<T C::*> {
    using type = T;
};
template <class T>
constexpr bool is_expr_part = std::is_same_v<T, Expr> || std::is_same_v<T, std::vector<Expr>>;
// Whether every part of node N is an expression: for_each_child and map_children would skip a
// statement part of an expression node without a word (checked for every kind below).
template <class N>
constexpr bool only_expr_parts = std::apply(
    [](auto... member) {
        return (is_expr_part<typename MemberType<decltype(member)>::type> && ...);
    },
    N::parts);

// The walk and the rebuild over `parts`, one overload per kind of part. Static members of one
// struct, so that each overload sees every other (a vector of MatchCase reaches the MatchCase
// overload) whatever their order. A part of any other type has no overload: a compile error.
struct Parts {
    template <class FE, class FS> static void visit(const Expr& e, FE& on_expr, FS&) {
        if (e) on_expr(e);
    }
    template <class FE, class FS> static void visit(const Stmt& s, FE&, FS& on_stmt) {
        if (s) on_stmt(s);
    }
    template <class T, class FE, class FS>
    static void visit(const std::vector<T>& v, FE& on_expr, FS& on_stmt) {
        for (auto& x : v)
            visit(x, on_expr, on_stmt);
    }
    // A node or a MatchCase: each part in the order of its list.
    template <class T, class FE, class FS>
        requires requires { T::parts; }
    static void visit(const T& n, FE& on_expr, FS& on_stmt) {
        std::apply([&](auto... member) { (visit(n.*member, on_expr, on_stmt), ...); }, T::parts);
    }

    // The part with its children replaced, or nullopt when every replacement is what it replaces
    // (nothing is copied then).
    template <class FE, class FS> static std::optional<Expr> map(const Expr& e, FE& on_expr, FS&) {
        if (!e) return std::nullopt;
        Expr now = on_expr(e);
        if (now == e) return std::nullopt;
        check_replacement(e, now);
        return now;
    }
    template <class FE, class FS> static std::optional<Stmt> map(const Stmt& s, FE&, FS& on_stmt) {
        if (!s) return std::nullopt;
        Stmt now = on_stmt(s);
        if (now == s) return std::nullopt;
        check_replacement(s, now);
        return now;
    }
    template <class T, class FE, class FS>
    static std::optional<std::vector<T>> map(const std::vector<T>& v, FE& on_expr, FS& on_stmt) {
        std::optional<std::vector<T>> out;
        for (size_t i = 0; i < v.size(); ++i)
            if (auto now = map(v[i], on_expr, on_stmt)) {
                if (!out) out = v;
                (*out)[i] = std::move(*now);
            }
        return out;
    }
    template <class T, class FE, class FS>
        requires requires { T::parts; }
    static std::optional<T> map(const T& n, FE& on_expr, FS& on_stmt) {
        std::optional<T> out;
        auto part = [&](auto member) {
            if (auto now = map(n.*member, on_expr, on_stmt)) {
                if (!out) out.emplace(n); // a copy: kind, type and every other member kept
                (*out).*member = std::move(*now);
            }
        };
        std::apply([&](auto... member) { (part(member), ...); }, T::parts);
        return out;
    }
    // `node`, the shared pointer of n, rebuilt with its parts replaced, or itself.
    template <class T, class P, class FE, class FS>
    static P rebuild(const P& node, const T& n, FE& on_expr, FS& on_stmt) {
        auto now = map(n, on_expr, on_stmt);
        return now ? P(std::make_shared<T>(std::move(*now))) : node;
    }
};

#define PLEXUS_X(name)                                                                             \
    static_assert(only_expr_parts<name>, #name " lists a statement among its parts");
PLEXUS_IR_EXPRS(PLEXUS_X)
#undef PLEXUS_X

} // namespace parts_impl

template <class F> void for_each_child(const ExprNode& e, F&& f) {
    auto no_stmt = [](const Stmt&) {};
    switch (e.kind) {
#define PLEXUS_X(name)                                                                             \
    case ExprKind::name: return parts_impl::Parts::visit(static_cast<const name&>(e), f, no_stmt);
        PLEXUS_IR_EXPRS(PLEXUS_X)
#undef PLEXUS_X
    }
}

template <class FE, class FS> void for_each_part(const StmtNode& s, FE&& on_expr, FS&& on_stmt) {
    switch (s.kind) {
#define PLEXUS_X(name)                                                                             \
    case StmtKind::name:                                                                           \
        return parts_impl::Parts::visit(static_cast<const name&>(s), on_expr, on_stmt);
        PLEXUS_IR_STMTS(PLEXUS_X)
#undef PLEXUS_X
    }
}

template <class F> Expr map_children(const Expr& e, F&& f) {
    if (!e) return e;
    auto no_stmt = [](const Stmt& s) { return s; };
    switch (e->kind) {
#define PLEXUS_X(name)                                                                             \
    case ExprKind::name:                                                                           \
        return parts_impl::Parts::rebuild(e, static_cast<const name&>(*e), f, no_stmt);
        PLEXUS_IR_EXPRS(PLEXUS_X)
#undef PLEXUS_X
    }
    return e;
}

template <class FE, class FS> Stmt map_parts(const Stmt& s, FE&& on_expr, FS&& on_stmt) {
    if (!s) return s;
    switch (s->kind) {
#define PLEXUS_X(name)                                                                             \
    case StmtKind::name:                                                                           \
        return parts_impl::Parts::rebuild(s, static_cast<const name&>(*s), on_expr, on_stmt);
        PLEXUS_IR_STMTS(PLEXUS_X)
#undef PLEXUS_X
    }
    return s;
}

} // namespace plexus::ir
