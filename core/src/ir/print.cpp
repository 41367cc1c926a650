// A readable, C-like rendering of the IR (plexus codegen --lang ir).
#include "plexus/ir.hpp"

#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

namespace plexus::ir {
namespace {

struct Printer : ExprVisitor<Printer, std::string>, StmtVisitor<Printer> {
    std::ostringstream out;
    int depth = 0;
    const Kernel* kernel = nullptr;
    // The type of each name declared so far, to print paths by field name (names are unique
    // while visible, and a later declaration of a name replaces the earlier).
    std::map<std::string, Type> types;

    std::string expr(const Expr& e) { return ExprVisitor::dispatch(e); }
    void line(const std::string& s) { out << std::string(depth * 2, ' ') << s << '\n'; }
    void nested(const Stmt& s) {
        ++depth;
        if (auto b = as<Block>(s))
            for (auto& x : b->body)
                StmtVisitor::dispatch(x);
        else
            StmtVisitor::dispatch(s);
        --depth;
    }

    std::string visit(const Const& n) {
        if (n.type == Scalar::Bool) return n.i ? "true" : "false";
        if (is_float(n.type)) {
            char buf[40];
            std::snprintf(buf, sizeof buf, "%.9g", n.f);
            std::string s = buf;
            if (std::isfinite(n.f) && s.find_first_of(".en") == std::string::npos) s += ".0";
            if (!std::isfinite(n.f)) return s;
            return s + (n.type == Scalar::F32    ? "f"
                        : n.type == Scalar::F16  ? "h"
                        : n.type == Scalar::BF16 ? "bf"
                                                 : "");
        }
        if (n.type == Scalar::U64) return std::to_string(static_cast<uint64_t>(n.i)) + "ul";
        if (n.type == Scalar::U32) return std::to_string(n.i) + "u";
        if (n.type == Scalar::I64) return std::to_string(n.i) + "l";
        if (n.type == Scalar::I32) return std::to_string(n.i);
        return std::string(to_string(n.type)) + "(" + std::to_string(n.i) + ")";
    }
    std::string visit(const Var& n) { return n.name; }
    std::string visit(const Unary& n) {
        const char* sym = n.op == UnaryOp::Neg ? "-" : n.op == UnaryOp::Not ? "!" : "~";
        std::string s = sym;
        return s.append(expr(n.a));
    }
    std::string visit(const Binary& n) {
        if (const char* sym = c_symbol(n.op))
            return std::string("(")
                .append(expr(n.a))
                .append(" ")
                .append(sym)
                .append(" ")
                .append(expr(n.b))
                .append(")");
        return std::string(to_string(n.op)) + "(" + expr(n.a) + ", " + expr(n.b) + ")";
    }
    std::string visit(const Select& n) {
        return std::string("(")
            .append(expr(n.cond))
            .append(" ? ")
            .append(expr(n.a))
            .append(" : ")
            .append(expr(n.b))
            .append(")");
    }
    std::string visit(const Cast& n) {
        return std::string(to_string(n.type)) + "(" + expr(n.a) + ")";
    }
    std::string visit(const Load& n) { return n.array + "[" + expr(n.index) + "]"; }
    std::string visit(const Call& n) {
        std::string s = n.name + "(";
        for (size_t i = 0; i < n.args.size(); ++i)
            s += (i ? ", " : "") + expr(n.args[i]);
        return s + ")";
    }
    std::string visit(const Atomic& n) {
        std::string s = n.intrinsic() + "(&" + n.array + "[" + expr(n.index) + "], ";
        if (n.compare) s += expr(n.compare) + ", ";
        return s + expr(n.value) + ")";
    }
    std::string visit(const Field& n) {
        return expr(n.base) + "." + n.base->type.decl()->members[n.index].name;
    }
    std::string visit(const Swizzle& n) {
        static const char names[] = "xyzwabcd"; // lanes 4..7 of an 8-lane vector print as a..d
        std::string s = expr(n.base) + ".";
        for (uint8_t l : n.lanes)
            s += names[l];
        return s;
    }
    std::string visit(const Broadcast& n) { return to_string(n.type) + "(" + expr(n.value) + ")"; }
    std::string visit(const Construct& n) { return to_string(n.type) + "{" + list(n.args) + "}"; }
    std::string visit(const MakeVariant& n) {
        return to_string(n.type) + "::" + n.type.decl()->members[n.index].name + "(" +
               (n.payload ? expr(n.payload) : std::string()) + ")";
    }
    std::string list(const std::vector<Expr>& v) {
        std::string s;
        for (size_t i = 0; i < v.size(); ++i)
            s += (i ? ", " : "") + expr(v[i]);
        return s;
    }
    // ".pos.x": field names of records, x y z w (a b c d) for lanes.
    static std::string path(Type t, const Path& p) {
        static const char lanes[] = "xyzwabcd";
        std::string s;
        for (uint32_t step : p) {
            s += '.';
            if (t.is_record() && step < t.decl()->members.size()) {
                s += t.decl()->members[step].name;
                t = t.decl()->members[step].type;
            } else {
                s += step < 8 ? std::string(1, lanes[step]) : std::to_string(step);
                t = t.element();
            }
        }
        return s;
    }
    Type array_type(const std::string& name, Space space) const {
        if (!kernel) return {};
        if (space == Space::Global) return kernel->param(name) ? kernel->param(name)->type : Type();
        const ArrayDecl* a =
            space == Space::Local ? kernel->shared_array(name) : kernel->private_array(name);
        return a ? a->type : Type();
    }

    void visit(const Block& n) {
        line("{");
        nested(std::make_shared<Block>(n));
        line("}");
    }
    void visit(const Let& n) {
        types[n.name] = n.type;
        line(std::string(to_string(n.type)) + " " + n.name + " = " + expr(n.init) + ";");
    }
    void visit(const Assign& n) {
        line(n.name + path(types[n.name], n.path) + " = " + expr(n.value) + ";");
    }
    void visit(const Store& n) {
        line(n.array + "[" + expr(n.index) + "]" + path(array_type(n.array, n.space), n.path) +
             " = " + expr(n.value) + ";");
    }
    void visit(const If& n) {
        line("if " + expr(n.cond) + " {");
        nested(n.then_body);
        if (n.else_body) {
            line("} else {");
            nested(n.else_body);
        }
        line("}");
    }
    void visit(const For& n) {
        // The hint as the kernel language writes it.
        const std::string hint = n.unroll == For::unroll_full ? " unroll_full"
                                 : n.unroll == 1              ? " no_unroll"
                                 : n.unroll ? " unroll(" + std::to_string(n.unroll) + ")"
                                            : "";
        line("for (" + std::string(to_string(n.type)) + " " + n.var + " = " + expr(n.begin) + "; " +
             n.var + " < " + expr(n.end) + "; " + n.var + " += " + expr(n.step) + ")" + hint +
             " {");
        nested(n.body);
        line("}");
    }
    void visit(const While& n) {
        line("while " + expr(n.cond) + " {");
        nested(n.body);
        line("}");
    }
    void visit(const Break&) { line("break;"); }
    void visit(const Continue&) { line("continue;"); }
    void visit(const Return&) { line("return;"); }
    void visit(const Barrier&) { line("barrier();"); }
    void visit(const Fence& n) { line(n.intrinsic() + "();"); }
    void visit(const Eval& n) { line(expr(n.value) + ";"); }
    void visit(const Matrix& n) {
        switch (n.op) {
        case MatrixOp::Fill: line("fill_fragment(" + n.frag + ", " + expr(n.value) + ");"); break;
        case MatrixOp::Load:
        case MatrixOp::Store:
            line(std::string(n.op == MatrixOp::Load ? "load" : "store") + "_fragment(" + n.frag +
                 ", " + to_string(n.space) + " " + n.array + "[" + expr(n.index) + "], stride " +
                 expr(n.stride) + ", " + to_string(n.layout) +
                 (n.rows ? ", bounds " + expr(n.rows) + " x " + expr(n.cols) : "") + ");");
            break;
        case MatrixOp::Mma:
            line("mma(" + n.frag + ", " + n.a + ", " + n.b + ", " + n.c + ");");
            break;
        case MatrixOp::MmaShared:
            line("mma_shared(" + n.frag + ", " + n.array + "[" + expr(n.row_a) + "][" +
                 expr(n.col_a) + "], " + n.array_b + "[" + expr(n.row_b) + "][" + expr(n.col_b) +
                 "], k " + std::to_string(16 * n.steps) +
                 (n.in_flight ? ", in flight " + std::to_string(n.in_flight) : "") + ");");
            break;
        }
    }
    void visit(const AsyncCopy& n) {
        switch (n.op) {
        case AsyncCopyOp::Copy:
            line("copy_async<" + std::to_string(n.count) + ">(local " + n.array + "[" +
                 expr(n.index) + "], global " + n.buffer + "[" + expr(n.src_index) + "], valid " +
                 expr(n.valid) + ");");
            break;
        case AsyncCopyOp::Commit: line("copy_async_commit();"); break;
        case AsyncCopyOp::Wait: line("copy_async_wait(" + std::to_string(n.pending) + ");"); break;
        }
    }
    void visit(const Match& n) {
        const TypeDecl& d = *n.value->type.decl();
        line("match " + expr(n.value) + " {");
        for (auto& c : n.cases) {
            if (!c.var.empty()) types[c.var] = d.members[c.index].type;
            line(d.members[c.index].name + (c.var.empty() ? "" : "(" + c.var + ")") + " => {");
            nested(c.body);
            line("}");
        }
        if (n.otherwise) {
            line("otherwise => {");
            nested(n.otherwise);
            line("}");
        }
        line("}");
    }
    void visit(const Native& n) {
        line("native {");
        ++depth;
        for (auto& [backend, code] : n.code)
            line(backend + ": \"" + code + "\"");
        --depth;
        if (n.fallback) {
            line("} fallback {");
            nested(n.fallback);
        }
        line("}");
    }
};

} // namespace

std::string print(const Expr& e) {
    return Printer().expr(e);
}

std::string print(const Kernel& k) {
    Printer p;
    p.kernel = &k;
    for (auto& prm : k.params)
        p.types[prm.name] = prm.type;
    for (auto& d : k.types) {
        const bool record = d->kind == TypeDecl::Kind::Record;
        std::string members;
        for (auto& m : d->members)
            members += (members.empty() ? "" : ", ") + m.name +
                       (m.type.is_void() ? "" : ": " + to_string(m.type));
        p.line((record ? "record " : "variant ") + d->name + " { " + members + " }  // " +
               std::to_string(d->size) + " bytes, align " + std::to_string(d->align));
    }
    std::string sig = "kernel " + k.name + "(";
    for (size_t i = 0; i < k.params.size(); ++i) {
        auto& prm = k.params[i];
        sig += i ? ", " : "";
        if (prm.kind == Param::Kind::Buffer)
            sig += std::string(to_string(prm.access)) + " global " + to_string(prm.type) + "* " +
                   prm.name;
        else
            sig += std::string(to_string(prm.type)) + " " + prm.name;
    }
    p.line(sig + ") {");
    p.depth = 1;
    auto arrays = [&](const std::vector<ArrayDecl>& list, const char* space) {
        for (auto& a : list) {
            std::string shape;
            for (auto d : a.dims)
                shape.append("[").append(std::to_string(d)).append("]");
            if (a.pad) shape.append(" pad ").append(std::to_string(a.pad));
            if (a.swizzle) shape.append(" swizzled");
            p.line(std::string(space) + " " + to_string(a.type) + " " + a.name + "[" +
                   std::to_string(a.count) + "];" + (shape.empty() ? "" : "  // " + shape));
        }
    };
    arrays(k.shared, "local");
    arrays(k.privates, "private");
    for (auto& f : k.fragments)
        p.line(std::string("fragment ") + to_string(f.use) + " " + f.shape() + " " +
               to_string(f.type) +
               (f.use == MatrixUse::Acc ? "" : std::string(" ") + to_string(f.layout)) + " " +
               f.name + ";");
    if (!k.routine.empty()) p.line("routine " + k.routine + ";  // run by the backend's library");
    p.depth = 0;
    if (k.body) p.nested(k.body);
    p.line("}");
    return p.out.str();
}

} // namespace plexus::ir
