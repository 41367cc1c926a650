// The C-like emitter's one class, declared here and defined by role: emit_kernel.cpp (the
// translation unit, names, scopes), emit_types.cpp (types and the memory / register forms),
// emit_expr.cpp (expressions) and emit_stmt.cpp (statements).
#pragma once

#include "clike.hpp"

#include <sstream>

namespace plexus::codegen::clike {

// Whether evaluating `e` has an effect (an atomic somewhere in it).
bool has_atomic(const ir::Expr& e);

class Emitter : public ir::ExprVisitor<Emitter, std::string>, public ir::StmtVisitor<Emitter> {
public:
    Emitter(const ir::Kernel& k, const Options& o, const Dialect& d);

    using ir::ExprVisitor<Emitter, std::string>::dispatch;
    using ir::StmtVisitor<Emitter>::dispatch;

    std::string run();

    // ---- expressions: each returns the value in register form (f16 and bf16 as float), as a
    // primary (a name, literal, call or parenthesized group) or a cast of one, "(T)x", which
    // binds tighter than any operator the emitter writes
    std::string visit(const ir::Const& n);
    std::string visit(const ir::Var& n);
    std::string visit(const ir::Unary& n);
    std::string visit(const ir::Binary& n);
    std::string visit(const ir::Select& n);
    std::string visit(const ir::Cast& n);
    std::string visit(const ir::Load& n);
    std::string visit(const ir::Call& n);
    std::string visit(const ir::Atomic& n);
    std::string visit(const ir::Field& n);
    std::string visit(const ir::Swizzle& n);
    std::string visit(const ir::Broadcast& n);
    std::string visit(const ir::Construct& n);
    std::string visit(const ir::MakeVariant& n);

    // ---- statements
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
    void visit(const ir::Match& n);
    void visit(const ir::Matrix& n);
    void visit(const ir::AsyncCopy& n);

private:
    const ir::Kernel& k_;
    const Options& opt_;
    const Dialect& d_;
    std::set<std::string> builtins_;
    std::set<std::string> standard_spelled_;
    std::set<std::string> discarded_atomics_;
    std::set<std::string> value_names_; // every variable, parameter and array name
    // Every variable an expression reads or an Assign writes, and whether native code (which
    // may name any variable) is present: a Let of an atomic whose variable is in neither is an
    // atomic whose value is unused.
    std::set<std::string> used_names_;
    bool native_code_ = false;
    std::map<std::string, DeclNames> decls_;
    Prelude prelude_;
    std::ostringstream body_;
    std::vector<std::string> pending_; // declarations that must precede the next statement
    // The variables in scope and their types: a path assignment needs the root's type.
    std::vector<std::pair<std::string, ir::Type>> scopes_;
    int depth_ = 1;
    int loops_ = 0;
    int temps_ = 0;
    bool float_multiply_ = false;

    [[noreturn]] void fail(const std::string& what) const;

    // ---- names (emit_kernel.cpp)
    // A user's name, renamed when it would hide a keyword or builtin of the language. The
    // validator keeps user names off the plx_ prefix, so the renamed one cannot collide.
    std::string name(const std::string& n) const;
    std::string spelling(const std::string& intrinsic);
    // An atomic's spelling: the dialect's form that returns nothing when the value is unused.
    std::string atomic_spelling(const std::string& intrinsic, bool discard_result);
    void collect_value_names(const ir::Stmt& s);
    void collect_used_names(const ir::Stmt& s);
    const ir::Type& variable_type(const std::string& var) const;
    size_t scope_mark() const { return scopes_.size(); }
    void close_scope(size_t mark) { scopes_.resize(mark); }

    // ---- types (emit_types.cpp)
    // The C type of a value in registers, and in memory (buffers, arrays, fields, payloads).
    std::string value_type(const ir::Type& t);
    std::string storage_type(const ir::Type& t);
    // Whether the two forms differ: f16 and bf16, scalars and vectors.
    static bool split(const ir::Type& t);
    std::string to_value(const ir::Type& t, const std::string& stored);
    std::string to_storage(const ir::Type& t, const std::string& value);
    // `value` (register form, f32 lanes) rounded to the f16 / bf16 type t.
    std::string round_half(const ir::Type& t, const std::string& value);
    const DeclNames& decl_names(const ir::TypeDecl& d);
    std::string declarations();
    std::string convert(const ir::Type& from, const ir::Type& to, const std::string& code);

    // ---- expression helpers (emit_expr.cpp)
    std::string expr(const ir::Expr& e) { return dispatch(e); }
    bool is_cast(const std::string& code) const;
    // An operand of a prefix or binary operator: casts need no parentheses there.
    std::string prefix_operand(const std::string& code) const;
    std::string element(const std::string& array, const ir::Expr& index);
    std::string atomic(const ir::Atomic& n, bool discard_result);
    static bool wraps(const ir::Type& t);
    static bool wraps(const ir::Binary& n);
    static bool narrow(const ir::Type& t);
    std::string wrapped(const ir::Binary& n);
    std::string unsigned_form(const ir::Expr& e);
    std::string shift_amount(const ir::Expr& amount);
    std::string scalar_binary(const ir::Binary& n);
    std::string hoist(const ir::Type& type, const std::string& code, std::string& first);

    // ---- statement helpers (emit_stmt.cpp)
    std::string hoist_const(const std::string& type, const char* prefix, int id,
                            const std::string& code);
    // The place a path leads to from `root` (a variable or array element of type `type`,
    // `stored` when it lives in memory), and the assignment of `value` to it.
    std::string assignment(std::string root, ir::Type type, bool stored, const ir::Path& path,
                           const ir::Expr& value);
    void line(const std::string& s);
    // An atomic whose value is unused, as a statement of its own.
    void discarded_atomic(const ir::Atomic& a);
    void flush();
    void nested(const ir::Stmt& s, const std::string& first_line = "");
    void nested_block(const ir::Stmt& s);
};

} // namespace plexus::codegen::clike
