// The validator: the second line of defence after make(). Every rejection is a user error that
// names the kernel, the construct and where it is (a path such as body[3].then[0]).
#include "plexus/catalog.hpp"
#include "plexus/error.hpp"
#include "plexus/ir.hpp"

#include <algorithm>
#include <set>
#include <vector>

namespace plexus::ir {
namespace {

bool is_identifier(const std::string& s) {
    if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
    return std::all_of(s.begin(), s.end(),
                       [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

// Names that would collide with a keyword or builtin of a generated language.
bool is_reserved(const std::string& s) {
    static const std::set<std::string> words = {
        "auto", "bool", "break", "case", "char", "const", "constant", "continue", "default", "do",
        "double", "else", "enum", "extern", "float", "for", "global", "goto", "half", "if",
        "inline", "int", "kernel", "local", "long", "private", "register", "restrict", "return",
        "short", "signed", "sizeof", "static", "struct", "switch", "typedef", "uchar", "uint",
        "ulong", "union", "unsigned", "ushort", "void", "volatile", "while", "true", "false",
        "threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize", "size_t", "this", "new",
        "delete", "class", "template", "namespace", "operator", "private", "public", "asm"};
    return words.count(s) || s.rfind("plx_", 0) == 0 || s.rfind("__", 0) == 0;
}

struct Scope {
    std::string name;
    Scalar type;
    bool read_only;
};

class Validator {
public:
    Validator(const Kernel& k, const ValidateLimits& limits) : k_(k), limits_(limits) {}

    void run() {
        if (!is_identifier(k_.name) || is_reserved(k_.name))
            fail("", "the kernel name '" + k_.name + "' is not a usable identifier");
        std::set<std::string> names;
        for (auto& p : k_.params) {
            check_name(p.name, "parameter", "");
            if (!names.insert(p.name).second) fail("", "two parameters named '" + p.name + "'");
            if (p.type == Scalar::Void || p.type == Scalar::Bool)
                fail("", "parameter '" + p.name + "' has type " + to_string(p.type));
        }
        for (auto& s : k_.shared) {
            check_name(s.name, "shared array", "");
            if (!names.insert(s.name).second) fail("", "the name '" + s.name + "' is declared twice");
            if (s.count == 0 || s.type == Scalar::Void || s.type == Scalar::Bool)
                fail("", "shared array '" + s.name + "' must have a positive count of numbers");
        }
        if (limits_.local_memory_bytes && k_.shared_bytes() > limits_.local_memory_bytes)
            fail("", "shared memory of " + std::to_string(k_.shared_bytes()) +
                         " bytes is over the device's limit of " +
                         std::to_string(limits_.local_memory_bytes) + " bytes");
        if (!as<Block>(k_.body)) fail("body", "the kernel body must be a block");
        for (auto& p : k_.params)
            if (p.kind == Param::Kind::Scalar) scopes_.push_back({p.name, p.type, false});
        // Which variables hold work-item-dependent values: iterate to a fixed point, since a
        // loop can carry a varying value back into an earlier assignment.
        do {
            changed_ = false;
            scopes_.resize(count_scalar_params());
            loop_depth_ = 0;
            divergent_ = 0;
            barrier_check_ = false;
            stmt(k_.body, "body");
        } while (changed_);
        scopes_.resize(count_scalar_params());
        barrier_check_ = true;
        stmt(k_.body, "body");
    }

private:
    const Kernel& k_;
    ValidateLimits limits_;
    std::vector<Scope> scopes_;
    std::set<std::string> varying_;
    bool changed_ = false;
    bool barrier_check_ = false;
    int loop_depth_ = 0;
    int divergent_ = 0; // > 0 inside control flow that depends on the work-item
    std::string divergence_reason_;

    size_t count_scalar_params() const {
        return std::count_if(k_.params.begin(), k_.params.end(),
                             [](auto& p) { return p.kind == Param::Kind::Scalar; });
    }

    [[noreturn]] void fail(const std::string& where, const std::string& what) const {
        ErrorContext ctx;
        ctx.kernel = k_.name;
        throw Error(ErrorCode::InvalidKernel,
                    "kernel '" + k_.name + "': " + what + (where.empty() ? "" : " (at " + where + ")"),
                    ctx);
    }
    void check_name(const std::string& n, const char* what, const std::string& where) const {
        if (!is_identifier(n)) fail(where, std::string(what) + " name '" + n + "' is not an identifier");
        if (is_reserved(n))
            fail(where, std::string(what) + " name '" + n +
                            "' is reserved (a keyword of a generated language, or plx_ / __)");
    }

    const Scope* lookup(const std::string& n) const {
        for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it)
            if (it->name == n) return &*it;
        return nullptr;
    }
    void declare(const std::string& n, Scalar t, bool read_only, const std::string& where) {
        check_name(n, "variable", where);
        if (lookup(n) || k_.param(n) || k_.shared_array(n))
            fail(where, "'" + n + "' is declared again while an earlier one is visible");
        scopes_.push_back({n, t, read_only});
    }
    void mark_varying(const std::string& n) {
        if (varying_.insert(n).second) changed_ = true;
    }

    // The element type of an array access, after checking the array exists in that space.
    Scalar array_type(const std::string& array, Space space, const std::string& where) const {
        if (space == Space::Global) {
            const Param* p = k_.param(array);
            if (!p || p->kind != Param::Kind::Buffer)
                fail(where, "'" + array + "' is not a buffer parameter");
            return p->type;
        }
        const SharedArray* s = k_.shared_array(array);
        if (!s) fail(where, "'" + array + "' is not a declared shared array");
        return s->type;
    }

    // Returns whether the expression's value may differ between the work-items of a group.
    bool expr(const Expr& e, const std::string& where) {
        switch (e->kind) {
        case ExprKind::Const: return false;
        case ExprKind::Var: {
            auto& n = static_cast<const Var&>(*e);
            const Scope* s = lookup(n.name);
            if (!s) fail(where, "'" + n.name + "' is not declared here");
            if (s->type != n.type)
                fail(where, "'" + n.name + "' is " + to_string(s->type) + ", used as " + to_string(n.type));
            return varying_.count(n.name) > 0;
        }
        case ExprKind::Unary: return expr(static_cast<const Unary&>(*e).a, where);
        case ExprKind::Binary: {
            auto& n = static_cast<const Binary&>(*e);
            bool a = expr(n.a, where);
            return expr(n.b, where) || a;
        }
        case ExprKind::Select: {
            auto& n = static_cast<const Select&>(*e);
            bool c = expr(n.cond, where), a = expr(n.a, where);
            return expr(n.b, where) || a || c;
        }
        case ExprKind::Cast: return expr(static_cast<const Cast&>(*e).a, where);
        case ExprKind::Load: {
            auto& n = static_cast<const Load&>(*e);
            Scalar t = array_type(n.array, n.space, where);
            if (t != n.type)
                fail(where, "load of " + std::string(to_string(n.type)) + " from '" + n.array +
                                "' of " + to_string(t));
            return expr(n.index, where);
        }
        case ExprKind::Call: {
            auto& n = static_cast<const Call&>(*e);
            const IntrinsicInfo* info = find_intrinsic(n.name);
            if (!info) fail(where, "unknown intrinsic '" + n.name + "'");
            bool v = info->convergence == Convergence::Varying;
            for (auto& a : n.args) v = expr(a, where) || v;
            return v;
        }
        case ExprKind::Atomic: {
            auto& n = static_cast<const Atomic&>(*e);
            Scalar t = array_type(n.array, n.space, where);
            if (t != n.type)
                fail(where, "atomic on '" + n.array + "' of " + to_string(t) + " with " + to_string(n.type));
            if (n.space == Space::Global && k_.param(n.array)->access == Access::Read)
                fail(where, "atomic update of '" + n.array + "', which is read-only (In<T>)");
            expr(n.index, where);
            expr(n.value, where);
            if (n.compare) expr(n.compare, where);
            return true;
        }
        }
        return true;
    }

    void body(const Stmt& s, const std::string& where) {
        size_t mark = scopes_.size();
        stmt(s, where);
        scopes_.resize(mark);
    }

    // True when a Break / Continue / Return sits under work-item-dependent control in s,
    // outside any nested loop: such a loop leaves some work-items behind.
    bool exits_divergently(const Stmt& s, bool under_varying) {
        if (!s) return false;
        switch (s->kind) {
        case StmtKind::Break: case StmtKind::Continue: case StmtKind::Return: return under_varying;
        case StmtKind::Block:
            for (auto& x : static_cast<const Block&>(*s).body)
                if (exits_divergently(x, under_varying)) return true;
            return false;
        case StmtKind::If: {
            auto& n = static_cast<const If&>(*s);
            bool v = under_varying || cond_varying(n.cond);
            return exits_divergently(n.then_body, v) || exits_divergently(n.else_body, v);
        }
        case StmtKind::Native: return exits_divergently(static_cast<const Native&>(*s).fallback, under_varying);
        default: return false;
        }
    }
    // A syntactic check of whether a condition may vary, without scope checks (those happen
    // when the statement itself is validated).
    bool cond_varying(const Expr& e) {
        switch (e->kind) {
        case ExprKind::Const: return false;
        case ExprKind::Var: return varying_.count(static_cast<const Var&>(*e).name) > 0;
        case ExprKind::Unary: return cond_varying(static_cast<const Unary&>(*e).a);
        case ExprKind::Binary: {
            auto& n = static_cast<const Binary&>(*e);
            return cond_varying(n.a) || cond_varying(n.b);
        }
        case ExprKind::Select: {
            auto& n = static_cast<const Select&>(*e);
            return cond_varying(n.cond) || cond_varying(n.a) || cond_varying(n.b);
        }
        case ExprKind::Cast: return cond_varying(static_cast<const Cast&>(*e).a);
        case ExprKind::Load: return cond_varying(static_cast<const Load&>(*e).index);
        case ExprKind::Call: {
            auto& n = static_cast<const Call&>(*e);
            const IntrinsicInfo* info = find_intrinsic(n.name);
            bool v = !info || info->convergence == Convergence::Varying;
            for (auto& a : n.args) v = v || cond_varying(a);
            return v;
        }
        case ExprKind::Atomic: return true;
        }
        return true;
    }

    void enter_divergence(bool varying, const std::string& why) {
        if (varying && divergent_++ == 0) divergence_reason_ = why;
    }
    void leave_divergence(bool varying) {
        if (varying) --divergent_;
    }

    void stmt(const Stmt& s, const std::string& where) {
        switch (s->kind) {
        case StmtKind::Block: {
            auto& n = static_cast<const Block&>(*s);
            size_t mark = scopes_.size();
            for (size_t i = 0; i < n.body.size(); ++i)
                stmt(n.body[i], where + "[" + std::to_string(i) + "]");
            scopes_.resize(mark);
            return;
        }
        case StmtKind::Let: {
            auto& n = static_cast<const Let&>(*s);
            bool v = expr(n.init, where + ".init");
            if (n.init->type != n.type) fail(where, "'" + n.name + "' declared with another type than its value");
            declare(n.name, n.type, false, where);
            if (v || divergent_) mark_varying(n.name);
            return;
        }
        case StmtKind::Assign: {
            auto& n = static_cast<const Assign&>(*s);
            bool v = expr(n.value, where + ".value");
            const Scope* sc = lookup(n.name);
            if (!sc) fail(where, "assignment to '" + n.name + "', which is not declared here");
            if (sc->read_only) fail(where, "assignment to the loop variable '" + n.name + "'");
            if (sc->type != n.value->type)
                fail(where, "assignment of " + std::string(to_string(n.value->type)) + " to '" +
                                n.name + "' of " + to_string(sc->type) + " (cast it)");
            if (v || divergent_) mark_varying(n.name);
            return;
        }
        case StmtKind::Store: {
            auto& n = static_cast<const Store&>(*s);
            Scalar t = array_type(n.array, n.space, where);
            if (n.space == Space::Global && k_.param(n.array)->access == Access::Read)
                fail(where, "store to '" + n.array + "', which is read-only (In<T>)");
            if (n.value->type != t)
                fail(where, "store of " + std::string(to_string(n.value->type)) + " into '" +
                                n.array + "' of " + to_string(t));
            expr(n.index, where + ".index");
            expr(n.value, where + ".value");
            return;
        }
        case StmtKind::If: {
            auto& n = static_cast<const If&>(*s);
            bool v = expr(n.cond, where + ".cond");
            enter_divergence(v, "the if at " + where + " depends on the work-item");
            body(n.then_body, where + ".then");
            if (n.else_body) body(n.else_body, where + ".else");
            leave_divergence(v);
            return;
        }
        case StmtKind::For: {
            auto& n = static_cast<const For&>(*s);
            bool v = expr(n.begin, where + ".begin");
            v = expr(n.end, where + ".end") || v;
            v = expr(n.step, where + ".step") || v;
            v = v || exits_divergently(n.body, false);
            size_t mark = scopes_.size();
            declare(n.var, n.type, true, where);
            if (v || divergent_) mark_varying(n.var);
            enter_divergence(v, "the loop at " + where + " runs a work-item-dependent number of times");
            ++loop_depth_;
            body(n.body, where + ".body");
            --loop_depth_;
            leave_divergence(v);
            scopes_.resize(mark);
            return;
        }
        case StmtKind::While: {
            auto& n = static_cast<const While&>(*s);
            bool v = expr(n.cond, where + ".cond") || exits_divergently(n.body, false);
            enter_divergence(v, "the loop at " + where + " runs a work-item-dependent number of times");
            ++loop_depth_;
            body(n.body, where + ".body");
            --loop_depth_;
            leave_divergence(v);
            return;
        }
        case StmtKind::Break: case StmtKind::Continue:
            if (!loop_depth_)
                fail(where, std::string(s->kind == StmtKind::Break ? "break" : "continue") + " outside a loop");
            return;
        case StmtKind::Return:
            if (collect_uses(k_).barrier)
                fail(where, "return in a kernel with a barrier: the work-item would leave its group behind");
            return;
        case StmtKind::Barrier:
            if (barrier_check_ && divergent_)
                fail(where, "barrier in divergent control flow: " + divergence_reason_ +
                                ", so not every work-item of the group reaches it");
            return;
        case StmtKind::Fence: return;
        case StmtKind::Eval: expr(static_cast<const Eval&>(*s).value, where + ".value"); return;
        case StmtKind::Native: {
            auto& n = static_cast<const Native&>(*s);
            if (n.fallback) body(n.fallback, where + ".fallback");
            return;
        }
        }
    }
};

} // namespace

void validate(const Kernel& k, const ValidateLimits& limits) { Validator(k, limits).run(); }

} // namespace plexus::ir
