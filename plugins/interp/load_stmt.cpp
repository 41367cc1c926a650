// The loader's statements: scopes, loops and break targets, writes of whole values or of the
// part a path names, and Match lowered to a copy of the value and one masked arm per case.
#include "loader.hpp"

#include <algorithm>

namespace plx_interp {
namespace {

bool is_integer(Ty t) {
    return ty_integer(t);
}
bool is_bool(Ty t) {
    return t == Ty::Bool;
}

} // namespace

uint32_t Loader::leaves(const Val& v) {
    const uint32_t first = static_cast<uint32_t>(p_.values.size());
    p_.values.insert(p_.values.end(), v.leaves.begin(), v.leaves.end());
    p_.max_leaves = std::max(p_.max_leaves, static_cast<uint32_t>(v.leaves.size()));
    return first;
}

void Loader::assign(StmtNode& n, const json& j, const std::string& jp) {
    if (v2_)
        keys(j, jp, {"stmt", "name", "value", "path"});
    else
        keys(j, jp, {"stmt", "name", "value"});
    const std::string name = str(j, jp, "name");
    const Val value = expr(field(j, jp, "value"), jp + ".value");
    const Scope* s = lookup(name);
    if (!s) fail(jp + ".name", "assignment to \"" + name + "\", which is not declared here");
    if (s->read_only) fail(jp + ".name", "assignment to the loop variable \"" + name + "\"");
    const Part target = part(s->type, j, jp, "\"" + name + "\"");
    if (target.type != value.type)
        fail(jp + ".value", "assignment of " + name_of(value.type) + " to \"" + name + "\"" +
                                (j.contains("path") ? " (a part of it)" : "") + " of " +
                                name_of(target.type) + " (cast it)");
    n.kind = StmtKind::Assign;
    n.slot = s->slot + target.leaf; // a part's leaves are consecutive
    n.leaf_first = leaves(value);
    n.leaf_count = static_cast<uint32_t>(value.leaves.size());
}

// Each leaf goes to its byte offset in the element; a leaf inside a variant's payload is
// written only where the stored value's tag names that payload's case.
void Loader::store(StmtNode& n, const json& j, const std::string& jp) {
    if (v2_)
        keys(j, jp, {"stmt", "array", "space", "index", "value", "path"});
    else
        keys(j, jp, {"stmt", "array", "space", "index", "value"});
    n.kind = StmtKind::Store;
    n.slot = array(j, jp, true);
    n.e0 = scalar(j, jp, "index", is_integer, "an integer");
    const Val value = expr(field(j, jp, "value"), jp + ".value");
    const Array& arr = p_.arrays[n.slot];
    const Part target = part(array_types_[n.slot], j, jp, "\"" + arr.name + "\"");
    if (target.type != value.type)
        fail(jp + ".value", "store of " + name_of(value.type) + " into \"" + arr.name + "\"" +
                                (j.contains("path") ? " (a part of an element)" : "") + " of " +
                                name_of(target.type));
    n.leaf_first = static_cast<uint32_t>(p_.stores.size());
    n.leaf_count = static_cast<uint32_t>(value.leaves.size());
    p_.max_leaves = std::max(p_.max_leaves, n.leaf_count);
    const std::vector<Leaf>& layout = types_[target.type].leaves;
    for (size_t i = 0; i < layout.size(); ++i)
        p_.stores.push_back(
            StoreLeaf{.value = value.leaves[i],
                      .offset = static_cast<uint32_t>(target.offset + layout[i].offset),
                      .type = layout[i].type,
                      .guard = layout[i].guard,
                      .guard_case = layout[i].guard_case});
}

void Loader::loop(StmtNode& n, uint32_t id, bool is_for, const json& j, const std::string& jp,
                  const std::string& sp) {
    if (is_for) {
        // An unroll hint only guides compilers: checked for its form, then ignored.
        if (j.contains("unroll")) {
            if (!v2_1_) fail(jp + ".unroll", "a loop hint needs schema plexus-ir/2.1");
            const json& u = j["unroll"];
            if (!(u.is_string() && u.get<std::string>() == "full") &&
                !(u.is_number_unsigned() && u.get<uint64_t>() >= 1 && u.get<uint64_t>() <= 1024))
                fail(jp + ".unroll",
                     "expected an unroll count from 1 to 1024 or \"full\", found " + u.dump());
        }
        keys(j, jp, {"stmt", "var", "type", "begin", "end", "step", "body", "unroll"});
        n.kind = StmtKind::For;
        const TypeId t = type(j, jp);
        const std::string var = str(j, jp, "var");
        n.type = types_.scalar(t);
        n.e0 = scalar(j, jp, "begin", is_integer, "an integer");
        n.e1 = scalar(j, jp, "end", is_integer, "an integer");
        n.e2 = scalar(j, jp, "step", is_integer, "an integer");
        for (uint32_t e : {n.e0, n.e1, n.e2})
            if (p_.exprs[e].type != n.type)
                fail(jp, "loop \"" + var + "\" of " + name_of(t) +
                             ": begin, end and step must have that type");
        declare(var, t, true, jp + ".var");
        n.slot = scopes_.back().slot;
    } else {
        keys(j, jp, {"stmt", "cond", "body"});
        n.kind = StmtKind::While;
        n.e0 = scalar(j, jp, "cond", is_bool, "bool");
    }
    loops_.push_back(id);
    n.s0 = body(field(j, jp, "body"), jp + ".body", sp + ".body");
    loops_.pop_back();
    if (is_for) scopes_.pop_back();
    n.m0 = p_.num_masks++;
    n.m1 = p_.num_masks++;
    n.m2 = p_.num_masks++;
}

// match: the value is copied to hidden slots (so a body that assigns the matched variable does
// not change which arm runs); a case's variable is those slots of its payload.
void Loader::match(StmtNode& n, const json& j, const std::string& jp, const std::string& sp) {
    keys(j, jp, {"stmt", "value", "cases", "otherwise"});
    const Val value = expr(field(j, jp, "value"), jp + ".value");
    const TypeInfo& vt = types_[value.type];
    if (vt.kind != TypeInfo::Kind::Variant)
        fail(jp + ".value", "a match on " + vt.name + ", which is not a variant");
    n.kind = StmtKind::Match;
    n.slot = p_.num_slots;
    p_.num_slots += static_cast<uint32_t>(vt.leaves.size());
    n.leaf_first = leaves(value);
    n.leaf_count = static_cast<uint32_t>(value.leaves.size());
    const json& cases = list(j, jp, "cases");
    std::vector<Arm> arms;
    std::vector<bool> seen(vt.members.size(), false);
    for (size_t i = 0; i < cases.size(); ++i) {
        const std::string cp = at(jp + ".cases", i);
        keys(cases[i], cp, {"case", "var", "body"});
        const std::string name = str(cases[i], cp, "case");
        uint32_t c = 0;
        while (c < vt.members.size() && vt.members[c].name != name)
            ++c;
        if (c == vt.members.size())
            fail(cp + ".case", "'" + vt.name + "' has no case named \"" + name + "\"");
        if (seen[c])
            fail(cp + ".case", "case '" + name + "' of '" + vt.name + "' is matched twice");
        seen[c] = true;
        const size_t mark = scopes_.size();
        if (cases[i].contains("var")) {
            const std::string var = str(cases[i], cp, "var");
            if (vt.members[c].type == kNone)
                fail(cp + ".var", "case '" + name + "' of '" + vt.name +
                                      "' has no payload to bind to \"" + var + "\"");
            bind(var, vt.members[c].type, n.slot + vt.members[c].first, false, cp + ".var");
        }
        const uint32_t b =
            stmt(field(cases[i], cp, "body"), cp + ".body", at(sp + ".cases", i) + ".body");
        scopes_.resize(mark);
        arms.push_back(Arm{.tag = c, .body = b, .mask = p_.num_masks++});
    }
    if (j.contains("otherwise")) {
        arms.push_back(Arm{.tag = kNone,
                           .body = body(j["otherwise"], jp + ".otherwise", sp + ".otherwise"),
                           .mask = p_.num_masks++});
    } else {
        std::string missing;
        for (size_t c = 0; c < seen.size(); ++c)
            if (!seen[c]) missing += (missing.empty() ? "" : ", ") + vt.members[c].name;
        if (!missing.empty())
            fail(jp, "the match on '" + vt.name + "' is not exhaustive: no case for " + missing +
                         " (add them, or an otherwise)");
    }
    n.first = static_cast<uint32_t>(p_.arms.size());
    n.count = static_cast<uint32_t>(arms.size());
    p_.arms.insert(p_.arms.end(), arms.begin(), arms.end());
}

uint32_t Loader::stmt(const json& j, const std::string& jp, const std::string& sp) {
    Depth depth(*this, jp);
    const std::string kind = str(j, jp, "stmt");
    const uint32_t id = static_cast<uint32_t>(p_.stmts.size());
    p_.stmts.push_back(StmtNode{.kind = StmtKind::Nop});
    p_.paths.push_back(sp);
    const uint32_t outer = stmt_;
    stmt_ = id;
    StmtNode n{.kind = StmtKind::Nop};

    if (kind == "Block") {
        keys(j, jp, {"stmt", "body"});
        const json& b = list(j, jp, "body");
        std::vector<uint32_t> children;
        const size_t mark = scopes_.size();
        for (size_t i = 0; i < b.size(); ++i)
            children.push_back(stmt(b[i], at(jp + ".body", i), at(sp, i)));
        scopes_.resize(mark);
        n.kind = StmtKind::Block;
        n.first = static_cast<uint32_t>(p_.children.size());
        n.count = static_cast<uint32_t>(children.size());
        p_.children.insert(p_.children.end(), children.begin(), children.end());
    } else if (kind == "Let") {
        keys(j, jp, {"stmt", "name", "type", "init"});
        const TypeId t = type(j, jp);
        const std::string name = str(j, jp, "name");
        const Val init = expr(field(j, jp, "init"), jp + ".init");
        if (init.type != t)
            fail(jp + ".type",
                 "declared " + name_of(t) + " but the initializer has type " + name_of(init.type));
        declare(name, t, false, jp + ".name");
        n.kind = StmtKind::Let;
        n.slot = scopes_.back().slot;
        n.leaf_first = leaves(init);
        n.leaf_count = static_cast<uint32_t>(init.leaves.size());
    } else if (kind == "Assign") {
        assign(n, j, jp);
    } else if (kind == "Store") {
        store(n, j, jp);
    } else if (kind == "If") {
        keys(j, jp, {"stmt", "cond", "then", "else"});
        n.kind = StmtKind::If;
        n.e0 = scalar(j, jp, "cond", is_bool, "bool");
        n.s0 = body(field(j, jp, "then"), jp + ".then", sp + ".then");
        if (j.contains("else")) n.s1 = body(j["else"], jp + ".else", sp + ".else");
        n.m0 = p_.num_masks++;
        n.m1 = p_.num_masks++;
    } else if (kind == "For" || kind == "While") {
        loop(n, id, kind == "For", j, jp, sp);
    } else if (kind == "Break" || kind == "Continue" || kind == "Return" || kind == "Barrier") {
        keys(j, jp, {"stmt"});
        n.kind = kind == "Break"      ? StmtKind::Break
                 : kind == "Continue" ? StmtKind::Continue
                 : kind == "Return"   ? StmtKind::Return
                                      : StmtKind::Barrier;
        if (n.kind == StmtKind::Break || n.kind == StmtKind::Continue) {
            if (loops_.empty())
                fail(jp, (kind == "Break" ? "break" : "continue") + std::string(" outside a loop"));
            n.loop = loops_.back();
        }
    } else if (kind == "Fence") {
        keys(j, jp, {"stmt", "scope"});
        const std::string scope = str(j, jp, "scope");
        if (scope != "workgroup" && scope != "device")
            fail(jp + ".scope",
                 "unknown fence scope \"" + scope + "\" (expected workgroup or device)");
        // Work-items run in lockstep on one thread: every write is already visible.
        n.kind = StmtKind::Nop;
    } else if (kind == "Eval") {
        keys(j, jp, {"stmt", "value"});
        n.kind = StmtKind::Eval;
        const Val v = expr(field(j, jp, "value"), jp + ".value");
        n.leaf_first = leaves(v);
        n.leaf_count = static_cast<uint32_t>(v.leaves.size());
    } else if (kind == "Native") {
        keys(j, jp, {"stmt", "code", "fallback"});
        const json& code = field(j, jp, "code");
        if (!code.is_object()) fail(jp + ".code", "expected an object of backend -> code");
        for (auto& [backend, text] : code.items())
            if (!text.is_string()) fail(jp + ".code." + backend, "expected a string");
        if (!j.contains("fallback"))
            fail(jp, "native block at " + sp +
                         " has no fallback and the interpreter cannot run backend code");
        // The interpreter cannot run backend text, so the portable fallback always runs.
        n.kind = StmtKind::Block;
        const uint32_t fallback = body(j["fallback"], jp + ".fallback", sp + ".fallback");
        n.first = static_cast<uint32_t>(p_.children.size());
        n.count = 1;
        p_.children.push_back(fallback);
    } else if (kind == "Match" && v2_) {
        match(n, j, jp, sp);
    } else if (kind == "Matrix" && v2_) {
        matrix(n, j, jp);
    } else if (kind == "AsyncCopy" && v2_) {
        async_copy(n, j, jp);
    } else {
        fail(jp + ".stmt", "unknown statement kind \"" + kind + "\"");
    }
    p_.stmts[id] = n;
    stmt_ = outer;
    return id;
}

} // namespace plx_interp
