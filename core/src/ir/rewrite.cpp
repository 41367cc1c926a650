// The shared parts of the IR-to-IR lowerings (rewrite.hpp).
#include "rewrite.hpp"

namespace plexus::ir {

FreshNames::FreshNames(const Kernel& k, std::string prefix) : prefix_(std::move(prefix)) {
    for (auto& p : k.params)
        names_.insert(p.name);
    for (auto& a : k.shared)
        names_.insert(a.name);
    for (auto& a : k.privates)
        names_.insert(a.name);
    for (auto& f : k.fragments)
        names_.insert(f.name);
    std::function<void(const Stmt&)> walk = [&](const Stmt& s) {
        if (auto n = as<Let>(s)) names_.insert(n->name);
        if (auto n = as<For>(s)) names_.insert(n->var);
        if (auto n = as<Match>(s))
            for (auto& c : n->cases)
                names_.insert(c.var);
        for_each_part(*s, [](const Expr&) {}, walk);
    };
    if (k.body) walk(k.body);
}

std::string FreshNames::operator()(const char* what) {
    std::string n;
    do
        n = prefix_ + std::to_string(next_++) + "_" + what;
    while (names_.count(n));
    names_.insert(n);
    return n;
}

bool contains_stmt(const Stmt& s, StmtKind kind) {
    bool found = s->kind == kind;
    for_each_part(
        *s, [](const Expr&) {}, [&](const Stmt& c) { found = found || contains_stmt(c, kind); });
    return found;
}

Stmt with_children(const Stmt& s, const std::function<Stmt(const Stmt&)>& sub) {
    auto keep = [](const Expr& e) { return e; };
    // An If's else arm goes to sub before its then arm: the order of the hand-written rebuild
    // this replaced (GCC evaluated If::make(cond, sub(then), sub(else))'s arguments right to
    // left). sub names what it makes in the order it is called (FreshNames), so this keeps the
    // lowerings' names, and the generated code, as they were.
    if (auto n = as<If>(s); n && n->else_body) {
        const Stmt else_body = sub(n->else_body), then_body = sub(n->then_body);
        int part = 0; // map_parts asks for then_body, then else_body
        return map_parts(s, keep, [&](const Stmt&) { return part++ == 0 ? then_body : else_body; });
    }
    return map_parts(s, keep, sub);
}

Stmt replace_stmts(const Stmt& s, StmtKind kind,
                   const std::function<Stmt(const StmtNode&)>& replace) {
    if (!s) return s;
    auto sub = [&](const Stmt& x) { return replace_stmts(x, kind, replace); };
    if (s->kind == kind) {
        Stmt r = replace(*s);
        return r ? r : Block::make({});
    }
    if (s->kind != StmtKind::Block) return with_children(s, sub);
    std::vector<Stmt> body;
    for (auto& x : static_cast<const Block&>(*s).body) {
        if (x->kind != kind) {
            body.push_back(sub(x));
        } else if (Stmt r = replace(*x); r && r->kind == StmtKind::Block) {
            auto& inner = static_cast<const Block&>(*r).body;
            body.insert(body.end(), inner.begin(), inner.end());
        } else if (r) {
            body.push_back(std::move(r));
        }
    }
    return Block::make(std::move(body));
}

} // namespace plexus::ir
