// Statements of the C-like emitter: one C statement per line; assignments along paths into
// records and vectors; Match as an if / else-if chain on the tag.
#include "emitter.hpp"

#include "plexus/error.hpp"

namespace plexus::codegen::clike {
namespace {

// The If that an else branch holds alone, so it can print as `else if`; null when its
// condition has an effect whose temporaries would need a line of their own.
const ir::If* else_if(const ir::Stmt& s) {
    const ir::If* n = ir::as<ir::If>(s);
    if (auto b = ir::as<ir::Block>(s); b && b->body.size() == 1) n = ir::as<ir::If>(b->body[0]);
    return n && !has_atomic(n->cond) ? n : nullptr;
}

} // namespace

void Emitter::visit(const ir::Block& n) {
    line("{");
    ++depth_;
    size_t mark = scope_mark();
    for (auto& s : n.body)
        dispatch(s);
    close_scope(mark);
    --depth_;
    line("}");
}

void Emitter::visit(const ir::Let& n) {
    // The kernel language binds every atomic to a variable as it is traced (docs/architecture.md):
    // one nobody reads is an atomic whose value is unused, which some languages do cheaper.
    auto a = ir::as<ir::Atomic>(n.init);
    if (a && !native_code_ && !used_names_.count(n.name)) {
        discarded_atomic(*a);
        return;
    }
    std::string init = expr(n.init);
    flush();
    line(value_type(n.type) + " " + name(n.name) + " = " + full_expression(init) + ";");
    scopes_.emplace_back(n.name, n.type);
}

void Emitter::visit(const ir::Assign& n) {
    line(assignment(name(n.name), variable_type(n.name), false, n.path, n.value));
}

void Emitter::visit(const ir::Store& n) {
    const ir::ArrayDecl* a =
        n.space == ir::Space::Local ? k_.shared_array(n.array) : k_.private_array(n.array);
    const ir::Type& type = n.space == ir::Space::Global ? k_.param(n.array)->type : a->type;
    line(assignment(element(n.array, n.index), type, true, n.path, n.value));
}

void Emitter::visit(const ir::Matrix& n) {
    if (!d_.matrix_units())
        throw Error(ErrorCode::Internal,
                    "kernel '" + k_.name + "': a matrix fragment reached the " +
                        d_.language_name() + " emitter unlowered (a bug in plexus)");
    const ir::FragmentDecl& f = *k_.fragment(n.frag);
    MatrixCode code{name(n.frag), name(n.a), name(n.b), name(n.c), {}, {}, {}};
    if (n.op == ir::MatrixOp::Fill)
        code.value = to_storage(f.type, convert(n.value->type, f.type, expr(n.value)));
    if (n.op == ir::MatrixOp::Load || n.op == ir::MatrixOp::Store) {
        code.address = cat("&", element(n.array, n.index));
        code.stride = expr(n.stride);
    }
    flush();
    for (const std::string& l : d_.matrix_statement(k_, n, code))
        line(l);
}

void Emitter::visit(const ir::AsyncCopy& n) {
    if (!d_.async_copies())
        throw Error(ErrorCode::Internal, "kernel '" + k_.name + "': an async copy reached the " +
                                             d_.language_name() +
                                             " emitter unlowered (a bug in plexus)");
    AsyncCopyCode code;
    if (n.op == ir::AsyncCopyOp::Copy) {
        const ir::Type& t = k_.param(n.buffer)->type;
        code.type = storage_type(t);
        code.size = uint32_t(ir::size_of(t));
        code.dst = cat("&", element(n.array, n.index));
        code.src = cat("&", element(n.buffer, n.src_index));
        code.buffer = name(n.buffer);
        code.valid = expr(n.valid);
    }
    flush();
    for (const std::string& l : d_.async_copy_statement(n, code))
        line(l);
}

// Each field step leads into memory form (fields are stored like buffer elements); a lane
// step keeps the form of its vector. A value of f16 or bf16 in memory form is converted.
std::string Emitter::assignment(std::string root, ir::Type type, bool stored, const ir::Path& path,
                                const ir::Expr& value) {
    std::string code = expr(value);
    flush();
    for (uint32_t step : path) {
        if (type.is_record()) {
            root = cat(postfix_operand(root), ".", decl_names(*type.decl()).members[step]);
            type = type.decl()->members[step].type;
            stored = true;
        } else {
            root = d_.lane(root, step, type.lanes());
            type = type.element();
        }
    }
    return cat(root, " = ", full_expression(stored ? to_storage(type, code) : code), ";");
}

void Emitter::visit(const ir::If& n) {
    std::string cond = expr(n.cond);
    flush();
    line("if (" + full_expression(cond) + ") {");
    nested(n.then_body);
    ir::Stmt rest = n.else_body;
    while (rest) {
        const ir::If* chained = else_if(rest);
        if (!chained) {
            line("} else {");
            nested(rest);
            break;
        }
        line("} else if (" + full_expression(expr(chained->cond)) + ") {");
        nested(chained->then_body);
        rest = chained->else_body;
    }
    line("}");
}

void Emitter::visit(const ir::For& n) {
    std::string begin = expr(n.begin), end = expr(n.end), step = expr(n.step);
    flush();
    // begin, end and step are evaluated once, as the IR says; constants need no local.
    int id = loops_++;
    std::string type = value_type(n.type);
    if (!ir::as<ir::Const>(n.end)) end = hoist_const(type, "plx_end_", id, end);
    if (!ir::as<ir::Const>(n.step)) step = hoist_const(type, "plx_step_", id, step);
    std::string v = name(n.var);
    // The hint as `#pragma unroll`, which nvcc, NVRTC, NVIDIA's OpenCL and every Clang-based
    // OpenCL compiler take; OpenCL C's opencl_unroll_hint attribute is 2.0's, and this is 1.2
    // (docs/kernel-language.md, "Unrolling").
    if (n.unroll == ir::For::unroll_full)
        line("#pragma unroll");
    else if (n.unroll)
        line("#pragma unroll " + std::to_string(n.unroll));
    line("for (" + type + " " + v + " = " + full_expression(begin) + "; " + v + " < " +
         full_expression(end) + "; " + v + " += " + full_expression(step) + ") {");
    size_t mark = scope_mark();
    scopes_.emplace_back(n.var, n.type);
    nested(n.body);
    close_scope(mark);
    line("}");
}

void Emitter::visit(const ir::While& n) {
    std::string cond = expr(n.cond);
    flush();
    line("while (" + full_expression(cond) + ") {");
    nested(n.body);
    line("}");
}

void Emitter::visit(const ir::Break&) {
    line("break;");
}
void Emitter::visit(const ir::Continue&) {
    line("continue;");
}
void Emitter::visit(const ir::Return&) {
    line("return;");
}
void Emitter::visit(const ir::Barrier&) {
    line(full_expression(substitute(spelling("barrier"), {}, "barrier")) + ";");
}
void Emitter::visit(const ir::Fence& n) {
    line(full_expression(substitute(spelling(n.intrinsic()), {}, n.intrinsic())) + ";");
}

void Emitter::discarded_atomic(const ir::Atomic& a) {
    std::string code = atomic(a, true);
    flush();
    line(full_expression(code) + ";");
}

void Emitter::visit(const ir::Eval& n) {
    if (auto a = ir::as<ir::Atomic>(n.value)) {
        discarded_atomic(*a);
        return;
    }
    // Evaluated for nothing but its (absent) effect: (void) keeps compilers quiet.
    std::string code = expr(n.value);
    flush();
    line("(void)" + operand(code) + ";");
}

void Emitter::visit(const ir::Native& n) {
    auto it = n.code.find(opt_.backend);
    if (it != n.code.end()) {
        line("{ // native code for " + opt_.backend);
        body_ << it->second;
        if (it->second.empty() || it->second.back() != '\n') body_ << '\n';
        line("}");
    } else if (n.fallback) {
        nested_block(n.fallback);
    } else {
        fail("a native block has no code for the backend '" + opt_.backend +
             "' and no portable fallback" +
             (opt_.backend.empty() ? " (the generator was given no backend name)" : ""));
    }
}

// An if / else-if chain on the tag, not a switch: a `break` in a case body must leave the
// loop around the match, as in the IR, where a switch would take it. The value is evaluated
// once (into a temporary unless it is a variable); a case's variable is a copy of its payload
// in register form.
void Emitter::visit(const ir::Match& n) {
    std::string value = expr(n.value);
    flush();
    const ir::TypeDecl& d = *n.value->type.decl();
    const DeclNames& names = decl_names(d);
    if (!ir::as<ir::Var>(n.value)) {
        std::string temp = cat("plx_match_", std::to_string(temps_++));
        line(cat("const ", names.type, " ", temp, " = ", full_expression(value), ";"));
        value = temp;
    }
    for (size_t i = 0; i < n.cases.size(); ++i) {
        const ir::MatchCase& c = n.cases[i];
        line(cat(i ? "} else if (" : "if (", value,
                 ".tag == ", int_literal(d_, ir::Scalar::U32, c.index), ") {"));
        size_t mark = scope_mark();
        std::string bind;
        if (!c.var.empty()) {
            const ir::Type& t = d.members[c.index].type;
            bind =
                cat(value_type(t), " ", name(c.var), " = ",
                    full_expression(to_value(t, cat(value, ".u.", names.members[c.index]))), ";");
            scopes_.emplace_back(c.var, t);
        }
        nested(c.body, bind);
        close_scope(mark);
    }
    if (n.cases.empty()) {
        if (n.otherwise) nested_block(n.otherwise);
        return;
    }
    auto empty = ir::as<ir::Block>(n.otherwise);
    if (n.otherwise && !(empty && empty->body.empty())) {
        line("} else {");
        nested(n.otherwise);
    }
    line("}");
}

// ---- helpers ----------------------------------------------------------------------------

std::string Emitter::hoist_const(const std::string& type, const char* prefix, int id,
                                 const std::string& code) {
    std::string t = prefix + std::to_string(id);
    line("const " + type + " " + t + " = " + full_expression(code) + ";");
    return t;
}

void Emitter::line(const std::string& s) {
    body_ << std::string(size_t(depth_) * 4, ' ') << s << '\n';
}

void Emitter::flush() {
    for (auto& p : pending_)
        line(p);
    pending_.clear();
}

void Emitter::nested(const ir::Stmt& s, const std::string& first_line) {
    ++depth_;
    size_t mark = scope_mark();
    if (!first_line.empty()) line(first_line);
    if (auto b = ir::as<ir::Block>(s))
        for (auto& x : b->body)
            dispatch(x);
    else
        dispatch(s);
    close_scope(mark);
    --depth_;
}

void Emitter::nested_block(const ir::Stmt& s) {
    if (ir::as<ir::Block>(s)) {
        dispatch(s);
        return;
    }
    line("{");
    nested(s);
    line("}");
}

} // namespace plexus::codegen::clike
