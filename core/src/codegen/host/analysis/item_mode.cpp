// Which regions run one work-item at a time so that LLVM's SLP vectorizer makes vectors of a
// work-item's own straight-line code (item_mode.hpp, per_item_region). Decided on the IR alone,
// from how each access's index moves from one lane of a chunk of W work-items to the next.
#include "codegen/host/analysis/item_mode.hpp"
#include "codegen/host/analysis/layout.hpp"

#include <cstdlib>
#include <map>
#include <optional>

namespace plexus::codegen::host {

using namespace ir;

namespace {

// An integer across the W lanes of a chunk (x = first + lane, first a multiple of W):
// base + coeff * lane, where base mod W is `residue` (-1: not known).
struct Form {
    int64_t coeff = 0;
    int64_t residue = -1;
};

class Strides {
public:
    Strides(unsigned lanes, unsigned full_rate_lanes,
            const std::function<NameForm(const std::string&)>& outer)
        : w_(lanes), full_(full_rate_lanes ? full_rate_lanes : lanes), outer_(outer) {}

    // Counts the region's accesses to buffers and shared arrays by how their index moves
    // between lanes; false when the region holds a loop (lock step's or LoopVectorize's).
    bool count(const Stmt& s) {
        if (!s) return true;
        switch (s->kind) {
        case StmtKind::Block:
            for (auto& x : static_cast<const Block&>(*s).body)
                if (!count(x)) return false;
            return true;
        case StmtKind::If: {
            auto& n = static_cast<const If&>(*s);
            expr(n.cond);
            return count(n.then_body) && count(n.else_body);
        }
        case StmtKind::For:
        case StmtKind::While: return false;
        case StmtKind::Native: return count(static_cast<const Native&>(*s).fallback);
        case StmtKind::Match: {
            auto& n = static_cast<const Match&>(*s);
            expr(n.value);
            for (auto& c : n.cases) {
                if (!c.var.empty()) locals_[c.var] = std::nullopt;
                if (!count(c.body)) return false;
            }
            return count(n.otherwise);
        }
        case StmtKind::Let: {
            auto& n = static_cast<const Let&>(*s);
            expr(n.init);
            locals_[n.name] = n.type.is_scalar() ? form(n.init) : std::nullopt;
            return true;
        }
        case StmtKind::Assign: {
            auto& n = static_cast<const Assign&>(*s);
            expr(n.value);
            locals_[n.name] = std::nullopt; // its value now depends on where it was assigned
            return true;
        }
        case StmtKind::Store: {
            auto& n = static_cast<const Store&>(*s);
            expr(n.index);
            expr(n.value);
            if (n.space != Space::Private) note(form(n.index));
            return true;
        }
        case StmtKind::Eval: expr(static_cast<const Eval&>(*s).value); return true;
        default: return true;
        }
    }

    size_t unit = 0;    // consecutive elements in consecutive lanes: one vector access
    size_t strided = 0; // runs of a work-item's own, at least half a vector (note)

private:
    unsigned w_;
    unsigned full_; // the lanes of a vector the CPU computes at full rate
    const std::function<NameForm(const std::string&)>& outer_;
    std::map<std::string, std::optional<Form>> locals_; // the region's own variables

    // A strided access counts for running per work-item when the work-item's own run (as
    // many elements as the stride) fills at least half a vector the CPU computes at full
    // rate: SLP then loads it as one, or two runs as one (matmul's quads on AVX2, and on Zen
    // 4's AVX-512, whose 512-bit vectors cost two of 256). With narrower runs lanes across
    // work-items fill the vector better (matmul's quads on Intel's AVX-512, W = 16). The
    // same element in every lane, or no known pattern, counts for neither.
    void note(const std::optional<Form>& f) {
        if (!f || f->coeff == 0) return;
        if (std::llabs(f->coeff) == 1)
            ++unit;
        else if (2 * std::llabs(f->coeff) >= int64_t(full_))
            ++strided;
    }
    void expr(const Expr& e) {
        if (auto* l = as<Load>(e); l && l->space != Space::Private) note(form(l->index));
        for_each_child(*e, [&](const Expr& c) { expr(c); });
    }

    int64_t mod(int64_t v) const { return ((v % int64_t(w_)) + int64_t(w_)) % int64_t(w_); }
    static Form uniform() { return {0, -1}; }
    static bool is_uniform(const std::optional<Form>& f) { return f && f->coeff == 0; }
    std::optional<int64_t> constant(const Expr& e) const {
        if (auto* c = as<Const>(e); c && is_integer(e->type)) return c->i;
        return std::nullopt;
    }
    std::optional<Form> scaled(const std::optional<Form>& f, int64_t by) const {
        if (!f) return std::nullopt;
        return Form{f->coeff * by, f->residue < 0 ? (mod(by) == 0 ? 0 : -1) : mod(f->residue * by)};
    }
    // x / d and x % d over an aligned chunk: a lane-indexed x (coeff 1, base a multiple of W)
    // divided by a multiple of W is the same in every lane, and its remainder is the lane
    // (plus a multiple of W).
    std::optional<Form> divided(const std::optional<Form>& f, int64_t d, bool remainder) const {
        if (!f || d <= 0) return std::nullopt;
        if (f->coeff == 0) return uniform();
        if (f->coeff == 1 && f->residue == 0 && d % int64_t(w_) == 0)
            return remainder ? Form{1, 0} : uniform();
        return std::nullopt;
    }

    std::optional<Form> form(const Expr& e) {
        switch (e->kind) {
        case ExprKind::Const: {
            auto c = constant(e);
            return c ? Form{0, mod(*c)} : uniform();
        }
        case ExprKind::Call: {
            auto& n = static_cast<const Call&>(*e);
            if (n.name == "local_id_x") return Form{1, 0};
            if (n.name == "global_id_x") return Form{1, -1};
            return is_index_call(n.name) ? std::optional<Form>(uniform()) : std::nullopt;
        }
        case ExprKind::Var: {
            auto& n = static_cast<const Var&>(*e);
            if (auto it = locals_.find(n.name); it != locals_.end()) return it->second;
            NameForm f = outer_(n.name);
            if (f.kind == NameForm::Uniform) return uniform();
            if (f.kind == NameForm::Defined) return form(f.init);
            return std::nullopt;
        }
        case ExprKind::Cast: return form(static_cast<const Cast&>(*e).a);
        case ExprKind::Unary: {
            auto& n = static_cast<const Unary&>(*e);
            return n.op == UnaryOp::Neg    ? scaled(form(n.a), -1)
                   : is_uniform(form(n.a)) ? std::optional<Form>(uniform())
                                           : std::nullopt;
        }
        case ExprKind::Load: {
            auto& n = static_cast<const Load&>(*e);
            return is_uniform(form(n.index)) ? std::optional<Form>(uniform()) : std::nullopt;
        }
        case ExprKind::Binary: {
            auto& n = static_cast<const Binary&>(*e);
            auto a = form(n.a), b = form(n.b);
            auto cb = constant(n.b), ca = constant(n.a);
            switch (n.op) {
            case BinaryOp::Add:
            case BinaryOp::Sub: {
                if (!a || !b) return std::nullopt;
                const int64_t sign = n.op == BinaryOp::Add ? 1 : -1;
                const int64_t r =
                    a->residue < 0 || b->residue < 0 ? -1 : mod(a->residue + sign * b->residue);
                return Form{a->coeff + sign * b->coeff, r};
            }
            case BinaryOp::Mul:
                if (cb) return scaled(a, *cb);
                if (ca) return scaled(b, *ca);
                break;
            case BinaryOp::Shl:
                if (cb && *cb >= 0 && *cb < 31) return scaled(a, int64_t(1) << *cb);
                break;
            case BinaryOp::Div:
            case BinaryOp::Rem:
                if (cb) return divided(a, *cb, n.op == BinaryOp::Rem);
                break;
            case BinaryOp::Shr:
                if (cb && *cb >= 0 && *cb < 31) return divided(a, int64_t(1) << *cb, false);
                break;
            case BinaryOp::BitAnd:
                if (cb && *cb >= 0 && ((*cb + 1) & *cb) == 0) return divided(a, *cb + 1, true);
                break;
            default: break;
            }
            return is_uniform(a) && is_uniform(b) ? std::optional<Form>(uniform()) : std::nullopt;
        }
        default: {
            bool all = true;
            for_each_child(*e, [&](const Expr& c) { all = all && is_uniform(form(c)); });
            return all ? std::optional<Form>(uniform()) : std::nullopt;
        }
        }
    }
};

} // namespace

bool per_item_region(const std::vector<const Stmt*>& region, unsigned lanes,
                     const std::function<NameForm(const std::string&)>& outer,
                     unsigned full_rate_lanes) {
    if (lanes < 2) return false;
    Strides s(lanes, full_rate_lanes, outer);
    for (const Stmt* x : region)
        if (!s.count(*x)) return false;
    return s.strided > s.unit;
}

} // namespace plexus::codegen::host
