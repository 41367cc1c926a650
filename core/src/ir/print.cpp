// A readable, C-like rendering of the IR (plexus codegen --lang ir).
#include "plexus/ir.hpp"

#include <cmath>
#include <cstdio>
#include <sstream>

namespace plexus::ir {
namespace {


struct Printer : ExprVisitor<Printer, std::string>, StmtVisitor<Printer> {
    std::ostringstream out;
    int depth = 0;

    std::string expr(const Expr& e) { return ExprVisitor::dispatch(e); }
    void line(const std::string& s) { out << std::string(depth * 2, ' ') << s << '\n'; }
    void nested(const Stmt& s) {
        ++depth;
        if (auto b = as<Block>(s))
            for (auto& x : b->body) StmtVisitor::dispatch(x);
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
            return s + (n.type == Scalar::F32 ? "f" : "");
        }
        if (n.type == Scalar::U64) return std::to_string(static_cast<uint64_t>(n.i)) + "ul";
        if (n.type == Scalar::U32) return std::to_string(n.i) + "u";
        if (n.type == Scalar::I64) return std::to_string(n.i) + "l";
        return std::to_string(n.i);
    }
    std::string visit(const Var& n) { return n.name; }
    std::string visit(const Unary& n) {
        const char* sym = n.op == UnaryOp::Neg ? "-" : n.op == UnaryOp::Not ? "!" : "~";
        std::string s = sym;
        return s.append(expr(n.a));
    }
    std::string visit(const Binary& n) {
        if (const char* sym = c_symbol(n.op))
            return std::string("(").append(expr(n.a)).append(" ").append(sym).append(" ").append(expr(n.b)).append(")");
        return std::string(to_string(n.op)) + "(" + expr(n.a) + ", " + expr(n.b) + ")";
    }
    std::string visit(const Select& n) {
        return std::string("(").append(expr(n.cond)).append(" ? ").append(expr(n.a)).append(" : ").append(expr(n.b)).append(")");
    }
    std::string visit(const Cast& n) { return std::string(to_string(n.type)) + "(" + expr(n.a) + ")"; }
    std::string visit(const Load& n) { return n.array + "[" + expr(n.index) + "]"; }
    std::string visit(const Call& n) {
        std::string s = n.name + "(";
        for (size_t i = 0; i < n.args.size(); ++i) s += (i ? ", " : "") + expr(n.args[i]);
        return s + ")";
    }
    std::string visit(const Atomic& n) {
        std::string s = n.intrinsic() + "(&" + n.array + "[" + expr(n.index) + "], ";
        if (n.compare) s += expr(n.compare) + ", ";
        return s + expr(n.value) + ")";
    }

    void visit(const Block& n) {
        line("{");
        nested(std::make_shared<Block>(n));
        line("}");
    }
    void visit(const Let& n) { line(std::string(to_string(n.type)) + " " + n.name + " = " + expr(n.init) + ";"); }
    void visit(const Assign& n) { line(n.name + " = " + expr(n.value) + ";"); }
    void visit(const Store& n) { line(n.array + "[" + expr(n.index) + "] = " + expr(n.value) + ";"); }
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
        line("for (" + std::string(to_string(n.type)) + " " + n.var + " = " + expr(n.begin) + "; " +
             n.var + " < " + expr(n.end) + "; " + n.var + " += " + expr(n.step) + ") {");
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
    void visit(const Native& n) {
        line("native {");
        ++depth;
        for (auto& [backend, code] : n.code) line(backend + ": \"" + code + "\"");
        --depth;
        if (n.fallback) {
            line("} fallback {");
            nested(n.fallback);
        }
        line("}");
    }
};

} // namespace

std::string print(const Expr& e) { return Printer().expr(e); }

std::string print(const Kernel& k) {
    Printer p;
    std::string sig = "kernel " + k.name + "(";
    for (size_t i = 0; i < k.params.size(); ++i) {
        auto& prm = k.params[i];
        sig += i ? ", " : "";
        if (prm.kind == Param::Kind::Buffer)
            sig += std::string(to_string(prm.access)) + " global " + to_string(prm.type) + "* " + prm.name;
        else
            sig += std::string(to_string(prm.type)) + " " + prm.name;
    }
    p.line(sig + ") {");
    p.depth = 1;
    for (auto& s : k.shared)
        p.line("local " + std::string(to_string(s.type)) + " " + s.name + "[" + std::to_string(s.count) + "];");
    p.depth = 0;
    if (k.body) p.nested(k.body);
    p.line("}");
    return p.out.str();
}

} // namespace plexus::ir
