// The C-like source emitter shared by the OpenCL C and CUDA C generators: expressions,
// statements and literals are printed here; a Dialect supplies what differs between languages.
#pragma once

#include "plexus/catalog.hpp"
#include "plexus/codegen.hpp"
#include "plexus/ir.hpp"

#include <cstdint>
#include <map>
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
};

// The operands of an atomic, as the intrinsic spelling receives them: $0 the address, then
// the operand (or, for compare-exchange, the compare value and then the new value).
struct AtomicCode {
    std::vector<std::string> args;
    std::string result_cast; // a cast applied to the call when its value is used, or ""
};

class Dialect {
public:
    virtual ~Dialect() = default;
    // "OpenCL C 1.2": for the header comment and for error messages.
    virtual const char* language_name() const = 0;
    virtual std::string type_name(const ir::Type& t) const = 0;
    // Suffix that gives an integer literal exactly type t ("u", "L", "ULL"...).
    virtual const char* int_suffix(ir::Scalar t) const = 0;
    // A float constant with the given IEEE bit pattern (used for NaN and infinities).
    virtual std::string float_from_bits(ir::Scalar t, uint64_t bits) const = 0;
    virtual const std::string& standard_spelling(const IntrinsicInfo& info) const = 0;
    // True when the language's spelling of an integer intrinsic may have another type than
    // the catalog's (OpenCL's size_t work-item functions): the emitter then casts the result.
    virtual bool cast_integer_calls() const = 0;
    // Function names for Min/Max of a type.
    virtual std::string min_max_function(bool is_min, const ir::Type& t) const = 0;
    // Adjusts the operands of an atomic (pointer and value casts the language needs).
    virtual void atomic_operands(const ir::Atomic& a, AtomicCode& code) const = 0;
    // Pragmas and helper functions that go before the kernel ("" when none).
    virtual std::string prologue(const ir::Kernel& k, const Usage& usage) const = 0;
    // "__kernel void name" / "extern \"C\" __global__ void name".
    virtual std::string entry_prefix() const = 0;
    // One kernel parameter as declared in the signature, under its emitted name.
    virtual std::string param_decl(const ir::Param& p, const std::string& name) const = 0;
    virtual std::string shared_decl(const ir::SharedArray& s, const std::string& name) const = 0;
    // A word the language reserves (keyword, type, builtin): user names are renamed around it.
    virtual bool is_reserved(const std::string& word) const = 0;
};

// Generates the whole translation unit for one kernel. Validates the kernel first; throws
// plexus::Error(InvalidKernel) naming the kernel for what the language cannot express.
std::string emit_kernel(const ir::Kernel& kernel, const Options& options, const Dialect& dialect);

// ---- text helpers (clike_text.cpp) ------------------------------------------------------------

// Concatenation by appending: `"(" + std::string` trips GCC 12's -Wrestrict false positive.
template <class... Parts> std::string cat(const Parts&... parts) {
    std::string out;
    (out.append(std::string_view(parts)), ...);
    return out;
}

// True when `code` binds as one operand anywhere: a name, a literal, a call, an indexing, a
// parenthesized group, or one of those behind a prefix `&`.
bool is_primary(const std::string& code);
// `code` as an operand: itself when primary, else parenthesized.
std::string operand(const std::string& code);
// `code` with one pair of enclosing parentheses removed when they enclose all of it.
std::string strip_parens(const std::string& code);
// `code` where C expects a whole expression (an initializer, a condition, an argument): the
// outer parentheses go, unless they hold a comma expression, which needs them there.
std::string full_expression(const std::string& code);
// Replaces $0, $1 ... in `spelling` with the arguments: a whole function argument as a full
// expression, anywhere else as an operand. Throws
// InvalidKernel naming the intrinsic when the spelling refers to a missing argument.
std::string substitute(const std::string& spelling, const std::vector<std::string>& args,
                       const std::string& intrinsic);
// A literal of exactly type t (integers, bool, floats; NaN and infinities through the dialect).
std::string int_literal(const Dialect& d, ir::Scalar t, int64_t v);
std::string float_literal(const Dialect& d, ir::Scalar t, double v);
// Identifiers appearing in the catalog's spellings for the dialect's language and in the given
// spellings: user names equal to one of them are renamed so they cannot hide a builtin.
std::set<std::string> spelled_identifiers(const Dialect& d,
                                          const std::map<std::string, std::string>& spellings);

} // namespace plexus::codegen::clike
