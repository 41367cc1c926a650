// The interpreter's compiled form of a kernel: flat vectors of scalar nodes and statements, with
// names resolved to slots and indices at load (aggregates are scalarized, see README.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace plx_interp {

// The scalar types of the IR, in the order of plexus::ir::Scalar.
enum class Ty : uint8_t { Void, Bool, I8, U8, I16, U16, I32, U32, I64, U64, F16, BF16, F32, F64 };
const char* ty_name(Ty t);
uint32_t ty_size(Ty t); // bytes; bool 1, void 0
std::optional<Ty> ty_from_string(std::string_view s);
inline bool ty_half(Ty t) {
    return t == Ty::F16 || t == Ty::BF16;
}
inline bool ty_float(Ty t) {
    return t >= Ty::F16 && t <= Ty::F64;
}
inline bool ty_integer(Ty t) {
    return t >= Ty::I8 && t <= Ty::U64;
}
inline bool ty_arithmetic(Ty t) {
    return ty_integer(t) || ty_float(t);
}

enum class ExprKind : uint8_t { Const, Var, Unary, Binary, Select, Cast, Load, Call, Atomic };
enum class UnaryOp : uint8_t { Neg, Not, BitNot };
enum class BinaryOp : uint8_t {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Min,
    Max,
    BitAnd,
    BitOr,
    BitXor,
    Shl,
    Shr,
    And,
    Or,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge
};
enum class AtomicOp : uint8_t { Add, Sub, Min, Max, And, Or, Xor, Xchg, CmpXchg };

// What a Call computes. Index functions carry their dimension in ExprNode::dim; math functions
// carry their precision in ExprNode::type.
enum class Fn : uint8_t {
    LocalId,
    GroupId,
    LocalSize,
    NumGroups,
    GlobalId,
    GlobalSize,
    Sqrt,
    Rsqrt,
    Exp,
    Exp2,
    Log,
    Log2,
    Sin,
    Cos,
    Tan,
    Pow,
    Fabs,
    Floor,
    Ceil,
    Fma,
    Min,
    Max,
    Clamp,
    Ldexp,
    Ilogb,
    Exp10,
    Divide,
    Recip, // Ilogb is an i32 of a float: ExprNode::operand holds its type
#define PLX_LIBM1(fn) Libm_##fn,
#define PLX_LIBM2(fn) Libm_##fn,
#include <plexus/libm.def>
#undef PLX_LIBM1
#undef PLX_LIBM2
    // subgroups (subgroup.cpp): positions, then the collective operations
    SubgroupSize,
    SubgroupId,
    LaneId,
    Ballot,
    Any,
    All,
    Shuffle,
    ShuffleXor,
    ShuffleUp,
    ShuffleDown,
    ReduceAdd,
    ReduceMin,
    ReduceMax,
    ScanInclusiveAdd,
    ScanExclusiveAdd,
};

// A Call resolved against the catalog: implementation, result and argument types.
struct CallInfo {
    Fn fn;
    uint8_t dim;
    Ty result;
    std::vector<Ty> args;
};
// catalog.cpp: nullptr for a name that is not a callable catalog intrinsic; `why` then says
// whether it is unknown or a statement-like intrinsic (atomic, barrier, fence).
const CallInfo* find_call(std::string_view name, std::string& why);
bool catalog_has(std::string_view name);

constexpr uint32_t kNone = UINT32_MAX;
// The tag a register holds for a variant inside a payload that is not the active one: it
// matches no case, so nothing guarded by it is loaded or stored (see Load's guard).
constexpr uint32_t kNoTag = UINT32_MAX;

struct ExprNode {
    ExprKind kind;
    Ty type;               // the value's type (always a scalar: the loader scalarizes)
    Ty operand = Ty::Void; // Binary: the operands' type; Cast: the source type; Load/Atomic: index
                           // type; Call: its first argument's
    uint8_t op = 0;        // UnaryOp, BinaryOp, AtomicOp or Fn
    uint8_t dim = 0;       // index intrinsics
    bool memo = false;     // used by several parents: evaluated once per statement (exec.cpp)
    uint32_t a = kNone, b = kNone,
             c = kNone;    // operands; Call args 0..2; Atomic index, value, compare
    uint32_t ref = 0;      // Var: variable slot; Load / Atomic: array index
    uint32_t mask = kNone; // And / Or: the mask the right operand runs under
    uint32_t stmt = 0;     // the statement it belongs to, for error messages
    uint32_t reg = kNone;  // its register; Var reads its slot and has none
    uint64_t bits = 0;     // Const: the value, stored as a register holds it
    // Load of one leaf of an element: its byte offset in the element. A leaf inside a variant's
    // payload is read only where the tag leaf `guard` (a node) equals `guard_case`; elsewhere
    // it reads 0 (kNoTag for a tag). A tag leaf has `cases` > 0 and must be below it.
    uint32_t offset = 0;
    uint32_t guard = kNone, guard_case = 0;
    uint32_t cases = 0;
    uint32_t variant = 0; // a tag leaf: its variant's name, in Program::names
};

enum class StmtKind : uint8_t {
    Block,
    Let,
    Assign,
    Store,
    If,
    For,
    While,
    Break,
    Continue,
    Return,
    Barrier,
    Nop,
    Eval,
    Match,
    Matrix,
    AsyncCopy
};

// One leaf scalar of a Store: the node that computes it, where it goes in the element, and
// (inside a variant's payload) which leaf of the same store holds the tag it is guarded by.
struct StoreLeaf {
    uint32_t value;
    uint32_t offset;
    Ty type;
    uint32_t guard = kNone; // index in the store's own leaves
    uint32_t guard_case = 0;
};

// A case of a Match: its body runs where the matched tag equals `tag` (kNone: otherwise, for
// every tag no other arm lists), under its own mask.
struct Arm {
    uint32_t tag;
    uint32_t body;
    uint32_t mask;
};

struct StmtNode {
    StmtKind kind;
    Ty type = Ty::Void;                          // For: the loop variable's type
    uint32_t e0 = kNone, e1 = kNone, e2 = kNone; // scalar expressions, by kind (see exec.cpp)
    uint32_t slot = kNone; // Let / Assign / Match: first slot written; For: the loop variable;
                           // Store: array index
    uint32_t s0 = kNone, s1 = kNone; // If: then, else; For / While: body
    uint32_t first = 0, count = 0;   // Block: children; Match: arms; Matrix: first is its
                                     // MatrixStmt (e0: the fill value or index, e1: stride);
                                     // AsyncCopy: first is its AsyncCopyStmt (e0: index, e1:
                                     // src_index, e2: valid)
    uint32_t leaf_first = 0, leaf_count = 0;     // Let / Assign / Match / Eval: values[..];
                                                 // Store: stores[..]
    uint32_t m0 = kNone, m1 = kNone, m2 = kNone; // masks owned by If and loops
    uint32_t r0 = kNone, r1 = kNone;             // For: registers that keep end and step
    uint32_t loop = kNone;                       // Break / Continue: the enclosing loop statement
};

// Matrix fragments (docs/ir.md): tiles held by a subgroup, reached only through Matrix
// statements. A fragment's tile is rows x cols values, row-major, in every subgroup's block of
// Program::fragment_elements values at `offset` (matrix.cpp).
enum class FragmentUse : uint8_t { A, B, Acc };
enum class MatrixOp : uint8_t { Fill, Load, Store, Mma };
inline constexpr const char* kMatrixOpNames[] = {"fill", "load", "store",
                                                 "mma"}; // as JSON names them
struct Fragment {
    std::string name;
    FragmentUse use;
    uint32_t m, n, k;
    Ty type;          // f16, bf16 or f32 (tf32 for A and B), as in memory
    bool col = false; // A and B: their loads read column-major memory
    uint32_t rows, cols;
    uint32_t offset;
};
struct MatrixStmt {
    MatrixOp op;
    uint32_t frag;                            // fill, load, store: the fragment; mma: d
    uint32_t a = kNone, b = kNone, c = kNone; // mma
    uint32_t array = kNone;                   // load, store: index in Program::arrays
    bool col = false;                         // load, store: the layout of memory
};

// An asynchronous copy (docs/ir.md), done at once: `count` elements of `size` bytes from a
// buffer into a shared array (async_copy.cpp). Commits and waits are Nop.
struct AsyncCopyStmt {
    uint32_t array;  // the shared array, in Program::arrays
    uint32_t buffer; // the buffer parameter, in Program::arrays
    uint32_t count;
    uint32_t size;
};

enum class Space : uint8_t { Global, Local, Private };

struct Array {
    std::string name;
    std::string type_name; // the element type as the IR names it, for messages
    Ty scalar = Ty::Void;  // the element type when it is a scalar (atomics need one)
    Space space;
    bool writable;       // buffers: access is write or readwrite
    uint32_t param = 0;  // buffers: index among the parameters
    uint32_t count = 0;  // shared and private arrays: element count
    uint64_t stride = 0; // bytes per element
    uint64_t offset = 0; // shared and private arrays: byte offset in the group's (or the
                         // work-item's) block
};

struct Param {
    std::string name;
    bool buffer;
    Ty type;               // scalars: the type; buffers: the element when it is a scalar
    std::string type_name; // as the IR names it
    uint32_t ref;          // buffers: array index; scalars: variable slot
};

struct Program {
    std::string name;
    std::vector<Param> params;
    std::vector<Array> arrays; // buffer parameters first, then shared, then private arrays
    std::vector<ExprNode> exprs;
    std::vector<StmtNode> stmts;
    std::vector<uint32_t> children;
    std::vector<uint32_t> values;   // leaf value nodes of Let, Assign, Match and Eval
    std::vector<StoreLeaf> stores;  // leaves of Store
    std::vector<Arm> arms;          // cases of Match
    std::vector<std::string> names; // variant names, for messages
    std::vector<std::string> paths; // per statement: "body[3].then[0]", as the validator names it
    std::vector<Fragment> fragments;
    std::vector<MatrixStmt> matrices; // Matrix statements
    std::vector<AsyncCopyStmt> async_copies;
    uint32_t fragment_elements = 0; // the values of every fragment's tile, per subgroup
    uint32_t root = kNone;
    uint32_t num_slots = 0;
    uint32_t num_masks = 0;
    uint32_t num_regs = 0;
    uint32_t max_leaves = 1; // the most leaves one Let / Assign / Match copies
    uint64_t shared_bytes = 0;
    uint64_t private_bytes = 0;             // per work-item
    uint32_t required_local[3] = {0, 0, 0}; // the declared work-group shape ("work_group"), or 0
    uint32_t max_local = 0;                 // the declared most work-items per group, or 0
};

} // namespace plx_interp
