// The C-like source emitter shared by the OpenCL C and CUDA C generators: expressions,
// statements, types and literals are printed here; a Dialect supplies what differs between
// languages (docs/architecture.md, "The C-like family", says how each IR type is represented).
#pragma once

#include "codegen/cuda_shared.hpp"
#include "plexus/catalog.hpp"
#include "plexus/codegen.hpp"
#include "plexus/ir.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace plexus::codegen::clike {

// What the emitter knows about the kernel when it asks a dialect for its prologue.
struct Usage {
    ir::KernelUses uses;
    // Catalog names of the intrinsics whose code was printed with the standard spelling
    // (not overridden by Options::spellings): helpers are needed for those only.
    std::vector<std::string> standard_spelled;
    // Catalog names of the atomics printed in a form that returns nothing, because their old
    // value was unused (Dialect::discarded_atomic): their helpers are needed too.
    std::vector<std::string> discarded_atomics;
    // Whether the code multiplies floats (scalars or vectors): a product must not be
    // contracted with an addition into an fma (docs/kernel-language.md: fma is explicit).
    bool float_multiply = false;
};

// What generated code uses beyond the language itself: helper types (CUDA C's vectors) and
// helper functions (the f16 / bf16 conversions), each defined once, in the order first asked
// for, so that a definition may use everything asked for before it.
class Prelude {
public:
    // True the first time `name` is asked for: the caller then adds its definition.
    bool first(const std::string& name) { return names_.insert(name).second; }
    void add_type(const std::string& text) { types_ += text; }
    void add_function(const std::string& text) { functions_ += text; }
    const std::string& types() const { return types_; }
    const std::string& functions() const { return functions_; }

private:
    std::set<std::string> names_;
    std::string types_, functions_;
};

// The operands of an atomic, as the intrinsic spelling receives them: $0 the address, then
// the operand (or, for compare-exchange, the compare value and then the new value).
struct AtomicCode {
    std::vector<std::string> args;
    std::string result_cast; // a cast applied to the call when its value is used, or ""
};

// The operands of a Matrix statement as code: the fragments' names, the fill value in memory
// form (f16 / bf16 bits), the first element's address and the stride.
struct MatrixCode {
    std::string frag, a, b, c;
    std::string value, address, stride;
};

// The operands of an AsyncCopy as code: the C type of the elements (their memory form) and
// their bytes, the addresses of the first element written and read, the buffer itself, and
// `valid`.
struct AsyncCopyCode {
    std::string type;
    uint32_t size = 0;
    std::string dst, src, buffer, valid;
};

// A record or variant as the emitter names it: the type's C name and each member's.
struct DeclNames {
    std::string type;
    std::vector<std::string> members;
    std::vector<std::string> member_types; // C types in memory (f16 as a 16-bit integer)
};

class Dialect {
public:
    virtual ~Dialect() = default;
    // "OpenCL C 1.2": for the header comment and for error messages.
    virtual const char* language_name() const = 0;

    // ---- types: the emitter maps f16 and bf16 to f32 in registers and u16 in memory, so
    // neither reaches these.
    virtual std::string scalar_name(ir::Scalar t) const = 0;
    // A vector of `lanes` elements of type t; may ask `prelude` for its definition.
    virtual std::string vector_name(ir::Scalar t, uint32_t lanes, Prelude& prelude) const = 0;
    // Lines inside the struct of a variant after its members (CUDA C: the functions that
    // make a value of each case), or "".
    virtual std::string variant_functions(const ir::TypeDecl& d, const DeclNames& names) const = 0;
    // Lines after a record's or variant's struct that check its layout, or "".
    virtual std::string layout_checks(const ir::TypeDecl& d, const DeclNames& names) const = 0;

    // ---- literals and constructions
    // Suffix that gives an integer literal exactly type t ("u", "L", "ULL"...).
    virtual const char* int_suffix(ir::Scalar t) const = 0;
    // A float constant with the given IEEE bit pattern (used for NaN and infinities).
    virtual std::string float_from_bits(ir::Scalar t, uint64_t bits) const = 0;
    // A vector of type `type` from its lanes (each a full expression).
    virtual std::string vector_literal(const std::string& type,
                                       const std::vector<std::string>& lanes) const = 0;
    // A vector of `lanes` copies of the scalar `value`, of type `type`.
    virtual std::string broadcast(const std::string& type, uint32_t lanes, const std::string& value,
                                  Prelude& prelude) const = 0;
    // A record from its fields' values in memory form.
    virtual std::string record_literal(const std::string& type,
                                       const std::vector<std::string>& fields) const = 0;
    // A variant value of case `index`; `payload` is its value in memory form, "" for none.
    virtual std::string variant_literal(const ir::TypeDecl& d, const DeclNames& names,
                                        uint32_t index, const std::string& payload) const = 0;

    // ---- vectors
    // Lane `lane` of a vector expression that binds as a postfix operand (also a place).
    virtual std::string lane(const std::string& vec, uint32_t lane, uint32_t lanes) const = 0;
    // Several lanes of a vector expression that binds as a postfix operand.
    virtual std::string swizzle(const std::string& vec, const std::vector<uint8_t>& lanes,
                                uint32_t from_lanes, Prelude& prelude) const = 0;
    // A lane-wise operation on vectors of type t (arithmetic, bitwise, shifts with the amount
    // taken modulo the width, integers wrapping): the whole expression.
    virtual std::string vector_binary(ir::BinaryOp op, const ir::Type& t, const std::string& a,
                                      const std::string& b) const = 0;
    virtual std::string vector_unary(ir::UnaryOp op, const ir::Type& t,
                                     const std::string& a) const = 0;
    // The product of two scalar floats (f32, or f16 / bf16 held as f32, or f64), never to be
    // contracted with an addition into an fma: the IR rounds each operation on its own.
    virtual std::string float_product(ir::Scalar t, const std::string& a,
                                      const std::string& b) const = 0;

    // ---- conversions: numbers in register form (f16 and bf16 arrive and leave as f32);
    // scalars, or vectors lane by lane; "" where a C cast "(T)x" converts as the IR says.
    // Float to integer saturates and NaN gives 0, as the LLVM backends do (docs/ir.md leaves
    // the out-of-range case undefined).
    virtual std::string convert(const ir::Type& from, const ir::Type& to, const std::string& code,
                                Prelude& prelude) const = 0;
    // The bits of a float as a 32-bit unsigned integer, and back ("as_uint", "__float_as_uint").
    virtual const char* float_bits_function() const = 0;
    virtual const char* bits_float_function() const = 0;
    // What precedes the return type of a helper function ("", "__device__ __forceinline__ ").
    virtual const char* helper_prefix() const = 0;
    // plx_to_f16 / plx_from_f16 / plx_round_f16 (or _bf16) as the language writes them, given
    // the shared integer code that rounds as plexus/half.hpp does: that code itself, or
    // conversion instructions that round alike where the language has them.
    virtual std::string half_conversions(ir::Scalar, const std::string& portable) const {
        return portable;
    }

    // ---- intrinsics and atomics
    virtual const std::string& standard_spelling(const IntrinsicInfo& info) const = 0;
    // True when the language's spelling of an integer intrinsic may have another type than
    // the catalog's (OpenCL's size_t work-item functions): the emitter then casts the result.
    virtual bool cast_integer_calls() const = 0;
    // Function names for Min/Max of a scalar or vector type (in register form).
    virtual std::string min_max_function(bool is_min, const ir::Type& t) const = 0;
    // Adjusts the operands of an atomic (pointer and value casts the language needs).
    virtual void atomic_operands(const ir::Atomic& a, AtomicCode& code) const = 0;
    // The spelling of an atomic whose old value is unused, where the language has a cheaper
    // form than the catalog's (a reduction that returns nothing), or "" for the catalog's.
    // Asked only for an intrinsic that has its standard spelling.
    virtual std::string discarded_atomic(const std::string& intrinsic) const = 0;

    // ---- the translation unit
    // Pragmas and helper functions that go before the kernel ("" when none).
    virtual std::string prologue(const ir::Kernel& k, const Usage& usage) const = 0;
    // "__kernel void" / "extern \"C\" __global__ void", with the language's form of the
    // kernel's declared work-group size (reqd_work_group_size, __launch_bounds__) when it has one.
    virtual std::string entry_prefix(const ir::WorkGroupBound& bound) const = 0;
    // One kernel parameter as declared in the signature: its C type (the element type of a
    // buffer) and emitted name.
    virtual std::string param_decl(const ir::Param& p, const std::string& type,
                                   const std::string& name) const = 0;
    // A shared or private array of `count` elements of C type `type`; `align` bytes when not
    // 0 (a shared array that matrix fragments may load from: 32; that async copies write: 16).
    virtual std::string array_decl(ir::Space space, const std::string& type,
                                   const std::string& name, uint32_t count,
                                   uint32_t align = 0) const = 0;
    // Shared arrays carved out of one array the launch sizes, or none (each its own
    // array_decl): CUDA C past 48 KiB (codegen::cuda_dynamic_shared).
    virtual CudaDynamicShared dynamic_shared(const ir::Kernel&) const { return {}; }
    // The line that declares that array, and a shared array of C type `type` at `offset` in it.
    virtual std::string dynamic_shared_base() const { return ""; }
    virtual std::string dynamic_shared_array(const std::string& /*type*/,
                                             const std::string& /*name*/,
                                             uint64_t /*offset*/) const {
        return "";
    }
    // A word the language reserves (keyword, type, builtin): user names are renamed around it.
    virtual bool is_reserved(const std::string& word) const = 0;

    // ---- matrix fragments: a dialect whose language runs them (CUDA C, through PTX's wmma)
    // declares each and writes each Matrix statement; emit_kernel gives any other a kernel that
    // ir::lower_matrix has rewritten into private arrays and loops.
    virtual bool matrix_units() const { return false; }
    virtual std::string fragment_decl(const ir::FragmentDecl&, const std::string& /*name*/) const {
        return {};
    }
    virtual std::vector<std::string> matrix_statement(const ir::Kernel&, const ir::Matrix&,
                                                      const MatrixCode&) const {
        return {};
    }

    // ---- asynchronous copies: a dialect whose language has them (CUDA C, through PTX's
    // cp.async) writes each AsyncCopy statement; emit_kernel gives any other a kernel that
    // ir::lower_async_copy has rewritten into plain loads and stores.
    virtual bool async_copies() const { return false; }
    virtual std::vector<std::string> async_copy_statement(const ir::AsyncCopy&,
                                                          const AsyncCopyCode&) const {
        return {};
    }
};

// Generates the whole translation unit for one kernel. Validates the kernel first; throws
// plexus::Error(InvalidKernel) naming the kernel for what the language cannot express.
std::string emit_kernel(const ir::Kernel& kernel, const Options& options, const Dialect& dialect);

// ---- f16 / bf16 helpers (clike_half.cpp) ------------------------------------------------------

// Makes sure the prelude defines the conversions of `format` (F16 or BF16) between float and
// its bits ("plx_to_f16", "plx_from_f16", "plx_round_f16"), and, for lanes > 1, their lane by
// lane forms on vectors ("plx_round_f16x4"); returns the name of the one asked for.
enum class HalfFn { To, From, Round };
std::string half_function_name(HalfFn fn, ir::Scalar format, uint32_t lanes);
std::string half_function(const Dialect& d, Prelude& prelude, HalfFn fn, ir::Scalar format,
                          uint32_t lanes);

// ---- float atomics (clike_atomic.cpp) ---------------------------------------------------------

// A float atomic of the catalog (add, min or max on f32 or f64, in either space).
struct FloatAtomic {
    ir::AtomicOp op;
    ir::Scalar type;
    ir::Space space;
};
// The float atomic a catalog name stands for, or nothing for any other intrinsic.
std::optional<FloatAtomic> float_atomic(const std::string& intrinsic);
// How one language writes the compare-exchange loop of a float atomic on `p`, with operand `v`.
struct CasWords {
    std::string bits;              // the unsigned integer type of the float's width
    std::string first;             // a plain read of the element's bits
    std::string cas;               // the compare-exchange call up to its last two arguments:
                                   // "atomic_cmpxchg((volatile __global uint*)p, "
    std::string to_bits, to_float; // the functions between the float and its bits
};
// The statements (indented by 4) that update *p with the operation until no other work-item
// wrote between the read and the exchange, leaving the previous bits in `old`. A result
// equal to the element is not written, so a min / max that changes nothing costs one read.
std::string cas_loop(const Dialect& d, const FloatAtomic& a, const CasWords& w);

// ---- text helpers (clike_text.cpp) ------------------------------------------------------------

// Concatenation by appending: `"(" + std::string` trips GCC 12's -Wrestrict false positive.
template <class... Parts> std::string cat(const Parts&... parts) {
    std::string out;
    (out.append(std::string_view(parts)), ...);
    return out;
}

// True when `code` binds as one operand anywhere: a name, a literal, a call, an indexing, a
// parenthesized group, a compound literal, or one of those behind a prefix `&`.
bool is_primary(const std::string& code);
// `code` as an operand: itself when primary, else parenthesized.
std::string operand(const std::string& code);
// `code` as the operand of a postfix `.member` or `[i]`: a name, call or member chain stays,
// anything else (a cast, an OpenCL vector literal "(float4)(a, b)") is parenthesized.
std::string postfix_operand(const std::string& code);
// `code` with one pair of enclosing parentheses removed when they enclose all of it.
std::string strip_parens(const std::string& code);
// `code` where C expects a whole expression (an initializer, a condition, an argument): the
// outer parentheses go, unless they hold a comma expression, which needs them there.
std::string full_expression(const std::string& code);
// "a, b, c": each a full expression.
std::string join_args(const std::vector<std::string>& args);
// Replaces $0, $1 ... in `spelling` with the arguments: a whole function argument as a full
// expression, anywhere else as an operand. Throws
// InvalidKernel naming the intrinsic when the spelling refers to a missing argument.
std::string substitute(const std::string& spelling, const std::vector<std::string>& args,
                       const std::string& intrinsic);
// A literal of exactly type t (integers, bool, floats; NaN and infinities through the dialect;
// f16 and bf16 as the float they hold in registers).
std::string int_literal(const Dialect& d, ir::Scalar t, int64_t v);
std::string float_literal(const Dialect& d, ir::Scalar t, double v);
// Identifiers appearing in the catalog's spellings for the dialect's language and in the given
// spellings: user names equal to one of them are renamed so they cannot hide a builtin.
std::set<std::string> spelled_identifiers(const Dialect& d,
                                          const std::map<std::string, std::string>& spellings);

} // namespace plexus::codegen::clike
