// The interpreter's compiled form of one IR kernel: flat vectors of typed nodes whose variable
// names are resolved to slots and array names to indices at load time, so that running a kernel
// never looks at a string. Built by module.cpp, run by exec.cpp.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace plx_interp {

// The scalar types of the IR, in the order of plexus::ir::Scalar.
enum class Ty : uint8_t { Void, Bool, I32, U32, I64, U64, F32, F64 };
const char* ty_name(Ty t);
uint32_t ty_size(Ty t); // bytes; bool 1, void 0
std::optional<Ty> ty_from_string(std::string_view s);
inline bool ty_float(Ty t) { return t == Ty::F32 || t == Ty::F64; }
inline bool ty_integer(Ty t) { return t >= Ty::I32 && t <= Ty::U64; }
inline bool ty_arithmetic(Ty t) { return ty_integer(t) || ty_float(t); }

enum class ExprKind : uint8_t { Const, Var, Unary, Binary, Select, Cast, Load, Call, Atomic };
enum class UnaryOp : uint8_t { Neg, Not, BitNot };
enum class BinaryOp : uint8_t {
    Add, Sub, Mul, Div, Rem, Min, Max, BitAnd, BitOr, BitXor, Shl, Shr,
    And, Or, Eq, Ne, Lt, Le, Gt, Ge
};
enum class AtomicOp : uint8_t { Add, Sub, Min, Max, And, Or, Xor, Xchg, CmpXchg };

// What a Call computes. Index functions carry their dimension in ExprNode::dim; math functions
// carry their precision in ExprNode::type.
enum class Fn : uint8_t {
    LocalId, GroupId, LocalSize, NumGroups, GlobalId, GlobalSize,
    Sqrt, Rsqrt, Exp, Exp2, Log, Log2, Sin, Cos, Tan, Pow, Fabs, Floor, Ceil, Fma, Min, Max, Clamp
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

struct ExprNode {
    ExprKind kind;
    Ty type;              // the value's type
    Ty operand = Ty::Void;// Binary: the operands' type; Cast: the source type; Load/Atomic: index type
    uint8_t op = 0;       // UnaryOp, BinaryOp, AtomicOp or Fn
    uint8_t dim = 0;      // index intrinsics
    uint32_t a = kNone, b = kNone, c = kNone; // operands; Call args 0..2; Atomic index, value, compare
    uint32_t ref = 0;     // Var: variable slot; Load / Atomic: array index
    uint32_t mask = kNone;// And / Or: the mask the right operand runs under
    uint32_t stmt = 0;    // the statement it belongs to, for error messages
    uint64_t bits = 0;    // Const: the value, stored as a register holds it
};

enum class StmtKind : uint8_t {
    Block, Let, Assign, Store, If, For, While, Break, Continue, Return, Barrier, Nop, Eval
};

struct StmtNode {
    StmtKind kind;
    Ty type = Ty::Void;     // For: the loop variable's type
    uint32_t e0 = kNone, e1 = kNone, e2 = kNone; // expressions, by kind (see exec.cpp)
    uint32_t slot = kNone;  // Let / Assign / For: variable slot; Store: array index
    uint32_t s0 = kNone, s1 = kNone; // If: then, else; For / While: body
    uint32_t first = 0, count = 0;   // Block: children[first .. first + count)
    uint32_t m0 = kNone, m1 = kNone, m2 = kNone; // masks owned by If and loops
    uint32_t loop = kNone;  // Break / Continue: the enclosing loop statement
};

struct Array {
    std::string name;
    Ty type;
    bool global;         // a buffer parameter; otherwise a shared array
    bool writable;       // buffers: access is write or readwrite
    uint32_t param = 0;  // buffers: index among the parameters
    uint32_t count = 0;  // shared arrays: element count
    uint64_t offset = 0; // shared arrays: byte offset in the group's local block
};

struct Param {
    std::string name;
    bool buffer;
    Ty type;
    uint32_t ref; // buffers: array index; scalars: variable slot
};

struct Program {
    std::string name;
    std::vector<Param> params;
    std::vector<Array> arrays; // buffer parameters first, then shared arrays
    std::vector<ExprNode> exprs;
    std::vector<StmtNode> stmts;
    std::vector<uint32_t> children;
    std::vector<std::string> paths; // per statement: "body[3].then[0]", as the validator names it
    uint32_t root = kNone;
    uint32_t num_slots = 0;
    uint32_t num_masks = 0;
    uint64_t shared_bytes = 0;
};

} // namespace plx_interp
