// ir::unroll_full_loops: every loop hinted px::unroll_full() written out, one copy of its body
// per trip (ir.hpp says why the host wants it).
#include "ir/rewrite.hpp"

#include <map>

namespace plexus::ir {

namespace {

class FullUnroll {
public:
    explicit FullUnroll(const Kernel& k) : fresh_(k, "u") {}

    // `names` maps a name declared in an enclosing copy to what reads of it become (the trip's
    // constant for the loop's variable, a fresh name for a variable the body declares);
    // statements after a declaration in a block see it, so a block passes one map along.
    Stmt stmt(const Stmt& s, std::map<std::string, Expr>& names) {
        if (!s) return s;
        if (auto* n = as<For>(s)) return loop(*n, names);
        if (auto* n = as<Block>(s)) {
            std::map<std::string, Expr> inner = names;
            std::vector<Stmt> body;
            for (const Stmt& x : n->body)
                body.push_back(stmt(x, inner));
            return Block::make(std::move(body));
        }
        if (auto* n = as<Let>(s)) {
            if (names.empty()) return s; // outside a copy: nothing to replace or rename
            Expr init = expr(n->init, names);
            return Let::make(rename(n->name, n->type, names), init);
        }
        if (auto* n = as<Assign>(s)) {
            auto it = names.find(n->name);
            const std::string name = it == names.end() ? n->name : as<Var>(it->second)->name;
            return Assign::make(name, expr(n->value, names), n->path);
        }
        if (auto* n = as<Match>(s)) {
            Expr value = expr(n->value, names);
            std::vector<MatchCase> cases = n->cases;
            for (MatchCase& c : cases) {
                std::map<std::string, Expr> inner = names;
                if (!c.var.empty() && !names.empty())
                    c.var = rename(c.var, payload_type(n->value->type, c.index), inner);
                c.body = stmt(c.body, inner);
            }
            std::map<std::string, Expr> inner = names;
            return Match::make(value, std::move(cases), stmt(n->otherwise, inner));
        }
        return map_parts(
            s, [&](const Expr& e) { return expr(e, names); },
            [&](const Stmt& c) {
                std::map<std::string, Expr> inner = names;
                return stmt(c, inner);
            });
    }

private:
    static const Type& payload_type(const Type& variant, uint32_t index) {
        return variant.decl()->members.at(index).type;
    }
    std::string rename(const std::string& name, const Type& t, std::map<std::string, Expr>& names) {
        std::string fresh = fresh_(name.c_str());
        names[name] = Var::make(fresh, t);
        return fresh;
    }

    Stmt loop(const For& n, std::map<std::string, Expr>& names) {
        Expr begin = expr(n.begin, names), end = expr(n.end, names), step = expr(n.step, names);
        auto *b = as<Const>(begin), *e = as<Const>(end), *st = as<Const>(step);
        const bool constant = b && e && st && st->i > 0;
        const int64_t trips = constant && e->i > b->i ? (e->i - b->i + st->i - 1) / st->i : 0;
        // Native code names variables in text that renaming cannot follow: such a loop stays.
        if (n.unroll != For::unroll_full || !constant || trips > int64_t(For::max_unroll) ||
            contains_stmt(n.body, StmtKind::Native)) {
            std::map<std::string, Expr> inner = names;
            std::string var = n.var;
            if (!names.empty()) var = rename(n.var, n.type, inner);
            return For::make(var, begin, end, step, stmt(n.body, inner), n.unroll);
        }
        std::vector<Stmt> copies;
        for (int64_t t = 0; t < trips; ++t) {
            std::map<std::string, Expr> inner = names;
            inner[n.var] = Const::make_int(n.type, b->i + t * st->i);
            copies.push_back(stmt(n.body, inner));
        }
        return Block::make(std::move(copies));
    }

    Expr expr(const Expr& e, const std::map<std::string, Expr>& names) {
        if (!e || names.empty()) return e;
        if (auto* v = as<Var>(e)) {
            auto it = names.find(v->name);
            return it == names.end() ? e : it->second;
        }
        return map_children(e, [&](const Expr& c) { return expr(c, names); });
    }

    FreshNames fresh_;
};

} // namespace

namespace {
Stmt matrix_loops_auto(const Stmt& s) {
    if (!s) return s;
    Stmt out = with_children(s, matrix_loops_auto);
    if (auto* n = as<For>(out);
        n && n->unroll == For::unroll_full && contains_stmt(n->body, StmtKind::Matrix))
        return For::make(n->var, n->begin, n->end, n->step, n->body, 0);
    return out;
}
} // namespace

Kernel matrix_loops_unhinted(const Kernel& k) {
    if (!k.body) return k;
    Kernel out = k;
    out.body = matrix_loops_auto(k.body);
    return out;
}

Kernel unroll_full_loops(const Kernel& k) {
    if (!k.body) return k;
    Kernel out = k;
    std::map<std::string, Expr> names;
    out.body = FullUnroll(k).stmt(k.body, names);
    return out;
}

} // namespace plexus::ir
