// The layout of a work-group function, decided on the IR alone (no LLVM needed): which
// statements are group control, which variables need one copy per work-item, where the shared
// arrays and those copies sit in group-local memory.
#include "codegen/host/analysis/layout.hpp"
#include "codegen/host/analysis/item_mode.hpp"
#include "codegen/llvm/memory_form.hpp"

#include "plexus/error.hpp"

#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>

namespace plexus::codegen {
namespace host {

namespace {
// Whether `f` holds for a case body or the otherwise of a match.
template <class F> bool any_arm(const ir::Match& m, F&& f) {
    for (auto& c : m.cases)
        if (f(c.body)) return true;
    return m.otherwise && f(m.otherwise);
}
} // namespace

bool is_index_call(const std::string& name) {
    for (const char* index :
         {"local_id_", "local_size_", "group_id_", "num_groups_", "global_id_", "global_size_"})
        if (name.rfind(index, 0) == 0) return true;
    return false;
}

bool any_nested(const ir::Stmt& s, const std::function<bool(const ir::StmtNode&)>& pred) {
    if (!s) return false;
    if (pred(*s)) return true;
    bool found = false;
    ir::for_each_part(
        *s, [](const ir::Expr&) {},
        [&](const ir::Stmt& x) { found = found || any_nested(x, pred); });
    return found;
}

bool contains_barrier(const ir::Stmt& s) {
    return any_nested(s, [](const ir::StmtNode& x) { return x.kind == ir::StmtKind::Barrier; });
}

bool is_group_stmt(const ir::Stmt& s, bool in_barrier_loop) {
    using namespace ir;
    if (!s) return false;
    switch (s->kind) {
    case StmtKind::Barrier: return true;
    case StmtKind::Break:
    case StmtKind::Continue: return in_barrier_loop;
    case StmtKind::Block:
        for (auto& x : static_cast<const Block&>(*s).body)
            if (is_group_stmt(x, in_barrier_loop)) return true;
        return false;
    case StmtKind::If: {
        auto& n = static_cast<const If&>(*s);
        return is_group_stmt(n.then_body, in_barrier_loop) ||
               is_group_stmt(n.else_body, in_barrier_loop);
    }
    // A break inside a loop leaves that loop, so only the loop's own barriers matter.
    case StmtKind::For:
    case StmtKind::While: return contains_barrier(s);
    case StmtKind::Native:
        return is_group_stmt(static_cast<const Native&>(*s).fallback, in_barrier_loop);
    // A match on a uniform value may hold a barrier, or a break of a loop that holds one.
    case StmtKind::Match:
        return any_arm(static_cast<const Match&>(*s),
                       [&](const Stmt& x) { return is_group_stmt(x, in_barrier_loop); });
    default: return false;
    }
}

namespace {

using namespace ir;

// Walks the kernel in the lowering's order and notes, per declaration, the work-item regions
// (maximal runs of statements between group control) that touch it.
class Analysis {
public:
    Analysis(const Kernel& k, unsigned lanes, unsigned full_rate_lanes)
        : k_(k), lanes_(lanes), full_rate_lanes_(full_rate_lanes) {}

    // The statements of region r (after run()).
    const std::vector<const Stmt*>& region(size_t r) const { return regions_.at(r); }

    Layout run() {
        Layout out;
        out.barrier = contains_barrier(k_.body);
        for (auto& p : k_.params) {
            declare(p.name, p.type, p.kind == Param::Kind::Scalar ? Kind::Param : Kind::Buffer);
        }
        if (out.barrier) {
            group_body(k_.body, false);
        } else {
            region_ = next_region_++;
            regions_.push_back({&k_.body});
            item_stmt(k_.body);
        }
        for (auto& d : decls_) {
            Storage s = Storage::Private;
            switch (d.kind) {
            case Kind::Buffer: s = Storage::Value; break;
            // An assigned parameter is a variable set before the body; with barriers, the
            // body's regions all see it, so each work-item needs its own.
            case Kind::Param:
                s = !d.assigned   ? Storage::Value
                    : out.barrier ? Storage::PerItem
                                  : Storage::Private;
                break;
            case Kind::GroupLoop: s = Storage::Group; break;
            // A payload bound by group control is uniform: one slot for the group, unless the
            // case's work-items assign it.
            case Kind::GroupMatch: s = d.assigned ? Storage::PerItem : Storage::Group; break;
            // A variable that each region touching it assigns before it reads it carries no
            // value from one region to the next: one copy, like a variable of one region.
            case Kind::Var:
                s = !d.shared_between_regions() || (!d.by_group && !d.exposed) ? Storage::Private
                    : recomputable(out, d)                                     ? Storage::Recompute
                                                                               : Storage::PerItem;
                break;
            }
            out.region_local.push_back(s == Storage::Private && d.shared_between_regions());
            out.decls.push_back(s);
            out.decl_types.push_back(d.type);
            out.recompute.push_back(s == Storage::Recompute ? d.init : nullptr);
        }
        for (auto& r : regions_)
            out.item_region.push_back(per_item_region(
                r, lanes_, [&](const std::string& name) { return outer(out, name); },
                full_rate_lanes_));
        // The per-item arrays, then the records; a record's members in declaration order, each
        // at a multiple of its alignment.
        for (size_t i = 0; i < decls_.size(); ++i) {
            const bool per_item = out.decls[i] == Storage::PerItem;
            bool record = false;
            for (int r : decls_[i].regions)
                record = record || (per_item && out.item_region.at(size_t(r)));
            const MemoryForm m = memory_form(decls_[i].type);
            uint64_t at = 0;
            if (record) {
                at = out.record_bytes = (out.record_bytes + m.align - 1) / m.align * m.align;
                out.record_bytes += m.size;
            } else if (per_item) {
                at = out.per_item_bytes;
                out.per_item_bytes += m.size;
            }
            out.in_record.push_back(record);
            out.per_item_prefix.push_back(at);
        }
        out.record_bytes = (out.record_bytes + 15) & ~uint64_t(15);
        // A private array starts undefined for each work-item, so one used within one region
        // can be one stack array that the work-items use in turn.
        for (size_t i = 0; i < k_.privates.size(); ++i) {
            Storage s = arrays_[i].shared_between_regions() ? Storage::PerItem : Storage::Private;
            out.privates.push_back(s);
            out.private_prefix.push_back(s == Storage::PerItem ? out.per_item_bytes : 0);
            const ArrayDecl& a = k_.privates[i];
            if (s == Storage::PerItem)
                out.per_item_bytes += uint64_t(a.count) * memory_form(a.type).size;
        }
        uint64_t at = 0;
        for (auto& a : k_.shared) {
            out.shared_offset.push_back(at);
            at = (at + uint64_t(a.count) * memory_form(a.type).size + 63) & ~uint64_t(63);
        }
        out.shared_bytes = at;
        return out;
    }

private:
    enum class Kind { Buffer, Param, Var, GroupLoop, GroupMatch };
    // Where a variable or private array is used: regions, group control.
    struct Use {
        bool by_group = false;    // group control touches it
        std::vector<int> regions; // the regions touching it, in order (no region twice in a row)
        bool shared_between_regions() const { return by_group || regions.size() > 1; }
    };
    struct Decl : Use {
        Decl(Type t, Kind k, std::string n) : type(std::move(t)), kind(k), name(std::move(n)) {}
        Type type;
        Kind kind;
        std::string name;
        bool assigned = false;
        int writes = 0;            // its Let or For counts as one
        Expr init;                 // a Let's
        std::vector<size_t> reads; // the declarations `init` reads, one entry per read
        bool pure = false;         // `init` has no load, atomic or call but the index ones
        bool exposed = false;      // a region reads it before assigning it (or may)
    };
    static constexpr int kGroup = -1; // "touched by group control"

    const Kernel& k_;
    const unsigned lanes_;
    const unsigned full_rate_lanes_;
    std::vector<Decl> decls_;
    std::vector<std::vector<const Stmt*>> regions_;                  // each region's statements
    std::vector<Use> arrays_ = std::vector<Use>(k_.privates.size()); // per private array
    std::vector<std::pair<std::string, size_t>> scope_;
    int region_ = kGroup;
    int next_region_ = 0;
    // The declarations the current region has assigned on every path to the statement being
    // walked (a Let counts; an assignment inside a branch, loop or case only within it).
    std::set<size_t> assigned_;

    std::map<std::string, int> declared_; // how many declarations each name has

    size_t declare(const std::string& name, const Type& t, Kind kind) {
        decls_.push_back({t, kind, name});
        scope_.emplace_back(name, decls_.size() - 1);
        ++declared_[name];
        return decls_.size() - 1;
    }
    size_t find(const std::string& name) const {
        for (auto it = scope_.rbegin(); it != scope_.rend(); ++it)
            if (it->first == name) return it->second;
        throw Error(ErrorCode::Internal, "host codegen: '" + name +
                                             "' is not declared in kernel '" + k_.name +
                                             "' although it validated");
    }
    // Whether e can be evaluated again anywhere in its variable's scope with the same result;
    // notes the declarations it reads.
    bool pure(const Expr& e, std::vector<size_t>& reads) const {
        bool ok = true;
        switch (e->kind) {
        case ExprKind::Var: reads.push_back(find(static_cast<const ir::Var&>(*e).name)); break;
        case ExprKind::Load:
        case ExprKind::Atomic: return false;
        case ExprKind::Call: return is_index_call(static_cast<const Call&>(*e).name);
        default: break;
        }
        for_each_child(*e, [&](const Expr& c) { ok = ok && pure(c, reads); });
        return ok;
    }
    // The instructions a Recompute variable costs at each read, roughly: its expression's
    // nodes and those of the Recompute variables it reads, each read counted.
    size_t cost(const Layout& out, size_t d) const {
        size_t n = 0;
        for_each_node(decls_[d].init, n);
        for (size_t r : decls_[d].reads)
            if (r < out.decls.size() && out.decls[r] == Storage::Recompute) n += cost(out, r);
        return n;
    }
    static void for_each_node(const Expr& e, size_t& n) {
        ++n;
        for_each_child(*e, [&](const Expr& c) { for_each_node(c, n); });
    }
    // A Let that is never assigned again, of a scalar, whose expression is pure and reads only
    // parameters kept as values and Recompute variables (decided before it: they are declared
    // earlier), none of whose names is declared twice in the kernel (so a later shadowing
    // declaration cannot change what the expression reads), at most 48 nodes in all.
    bool recomputable(const Layout& out, const Decl& d) const {
        if (!d.init || d.writes != 1 || !d.pure || !d.type.is_scalar() || declared_.at(d.name) != 1)
            return false;
        for (size_t r : d.reads) {
            const Decl& x = decls_[r];
            if (r >= out.decls.size() || declared_.at(x.name) != 1) return false;
            if (out.decls[r] != Storage::Value && out.decls[r] != Storage::Recompute) return false;
        }
        return cost(out, size_t(&d - decls_.data())) <= 48;
    }
    // A name read in a region but declared outside it, for per_item_region: only names
    // declared once in the kernel, so that the declaration is the one the region sees.
    NameForm outer(const Layout& out, const std::string& name) const {
        if (declared_.count(name) == 0 || declared_.at(name) != 1) return {};
        for (size_t i = 0; i < decls_.size(); ++i) {
            if (decls_[i].name != name) continue;
            switch (out.decls[i]) {
            case Storage::Value:
            case Storage::Group: return {NameForm::Uniform, nullptr};
            case Storage::Recompute: return {NameForm::Defined, decls_[i].init};
            default: return {};
            }
        }
        return {};
    }
    void use(Use& u) const {
        if (region_ == kGroup)
            u.by_group = true;
        else if (u.regions.empty() || u.regions.back() != region_)
            u.regions.push_back(region_);
    }
    void touch(const std::string& name, bool assign) {
        const size_t i = find(name);
        Decl& d = decls_[i];
        d.assigned = d.assigned || assign;
        d.writes += assign;
        if (region_ != kGroup) {
            if (assign)
                assigned_.insert(i);
            else if (!assigned_.count(i))
                d.exposed = true;
        }
        use(d);
    }
    // Walks a body that may run or not, or more than once: what it assigns is not assigned
    // after it.
    template <class F> void maybe(F&& walk) {
        const std::set<size_t> saved = assigned_;
        walk();
        assigned_ = saved;
    }
    void touch_array(const std::string& name, Space space) {
        if (space != Space::Private) return;
        for (size_t i = 0; i < k_.privates.size(); ++i)
            if (k_.privates[i].name == name) return use(arrays_[i]);
    }

    void expr(const Expr& e) {
        if (auto v = as<Var>(e)) touch(v->name, false);
        if (auto l = as<Load>(e)) touch_array(l->array, l->space);
        for_each_child(*e, [&](const Expr& c) { expr(c); });
    }
    // The cases of a match, each payload a declaration of `kind`, each body through `body`.
    template <class F> void match(const Match& n, Kind kind, F&& body) {
        expr(n.value);
        const TypeDecl& d = *n.value->type.decl();
        for (auto& c : n.cases) {
            size_t mark = scope_.size();
            if (!c.var.empty()) {
                declare(c.var, d.members[c.index].type, kind);
                if (kind == Kind::Var) touch(c.var, true);
            }
            body(c.body);
            scope_.resize(mark);
        }
        body(n.otherwise);
    }

    // A statement run by each work-item inside the current region.
    void item_stmt(const Stmt& s) {
        if (!s) return;
        size_t mark = scope_.size();
        switch (s->kind) {
        case StmtKind::Block:
            for (auto& x : static_cast<const Block&>(*s).body)
                item_stmt_in_block(x);
            break;
        case StmtKind::If: {
            auto& n = static_cast<const If&>(*s);
            expr(n.cond);
            maybe([&] { item_stmt(n.then_body); });
            maybe([&] { item_stmt(n.else_body); });
            break;
        }
        case StmtKind::For: {
            auto& n = static_cast<const For&>(*s);
            expr(n.begin);
            expr(n.end);
            expr(n.step);
            declare(n.var, n.type, Kind::Var);
            touch(n.var, true);
            maybe([&] { item_stmt(n.body); });
            break;
        }
        case StmtKind::While: {
            auto& n = static_cast<const While&>(*s);
            expr(n.cond);
            maybe([&] { item_stmt(n.body); });
            break;
        }
        case StmtKind::Native: item_stmt(static_cast<const Native&>(*s).fallback); break;
        case StmtKind::Match:
            match(static_cast<const Match&>(*s), Kind::Var,
                  [&](const Stmt& x) { maybe([&] { item_stmt(x); }); });
            break;
        default: item_stmt_in_block(s); break;
        }
        scope_.resize(mark);
    }
    // Like item_stmt, but a Let stays visible to the rest of the enclosing block.
    void item_stmt_in_block(const Stmt& s) {
        switch (s->kind) {
        case StmtKind::Let: {
            auto& n = static_cast<const Let&>(*s);
            expr(n.init);
            std::vector<size_t> reads;
            const bool is_pure =
                pure(n.init, reads); // before the name is declared: it may shadow one it reads
            declare(n.name, n.type, Kind::Var);
            touch(n.name, true);
            decls_.back().init = n.init;
            decls_.back().reads = std::move(reads);
            decls_.back().pure = is_pure;
            return;
        }
        case StmtKind::Assign: {
            auto& n = static_cast<const Assign&>(*s);
            expr(n.value);
            touch(n.name, true);
            return;
        }
        case StmtKind::Store: {
            auto& n = static_cast<const Store&>(*s);
            touch_array(n.array, n.space);
            expr(n.index);
            expr(n.value);
            return;
        }
        case StmtKind::Eval: expr(static_cast<const Eval&>(*s).value); return;
        case StmtKind::Break:
        case StmtKind::Continue:
        case StmtKind::Return:
        case StmtKind::Barrier:
        case StmtKind::Fence: return;
        default: item_stmt(s); return;
        }
    }

    // A statement list in group context: runs of ordinary statements become regions.
    void group_body(const Stmt& s, bool in_barrier_loop) {
        if (!s) return;
        size_t mark = scope_.size();
        const std::vector<Stmt>* list = nullptr;
        std::vector<Stmt> one;
        if (auto b = as<Block>(s))
            list = &b->body;
        else {
            one.push_back(s);
            list = &one;
        }
        bool in_run = false;
        for (auto& x : *list) {
            if (is_group_stmt(x, in_barrier_loop)) {
                in_run = false;
                region_ = kGroup;
                group_stmt(x);
            } else {
                if (!in_run) {
                    region_ = next_region_++;
                    regions_.emplace_back();
                    assigned_.clear();
                }
                in_run = true;
                regions_.back().push_back(&x);
                item_stmt_in_block(x);
            }
        }
        region_ = kGroup;
        scope_.resize(mark);
    }
    void group_stmt(const Stmt& s) {
        switch (s->kind) {
        case StmtKind::Block: group_body(s, in_loop_); break;
        case StmtKind::If: {
            auto& n = static_cast<const If&>(*s);
            expr(n.cond);
            group_body(n.then_body, in_loop_);
            group_body(n.else_body, in_loop_);
            break;
        }
        case StmtKind::For: {
            auto& n = static_cast<const For&>(*s);
            expr(n.begin);
            expr(n.end);
            expr(n.step);
            size_t mark = scope_.size();
            declare(n.var, n.type, Kind::GroupLoop);
            bool saved = std::exchange(in_loop_, true);
            group_body(n.body, true);
            in_loop_ = saved;
            scope_.resize(mark);
            break;
        }
        case StmtKind::While: {
            auto& n = static_cast<const While&>(*s);
            expr(n.cond);
            bool saved = std::exchange(in_loop_, true);
            group_body(n.body, true);
            in_loop_ = saved;
            break;
        }
        case StmtKind::Native: group_body(static_cast<const Native&>(*s).fallback, in_loop_); break;
        case StmtKind::Match:
            match(static_cast<const Match&>(*s), Kind::GroupMatch,
                  [&](const Stmt& x) { group_body(x, in_loop_); });
            break;
        default: break; // Barrier, Break, Continue: nothing to note
        }
    }
    bool in_loop_ = false; // group context: inside a loop that holds a barrier
};

} // namespace

Layout analyze(const ir::Kernel& kernel, unsigned lanes, unsigned full_rate_lanes) {
    return Analysis(kernel, lanes, full_rate_lanes).run();
}

std::set<const ir::StmtNode*> per_item_statements(const ir::Kernel& kernel, unsigned lanes,
                                                  unsigned full_rate_lanes) {
    Analysis a(kernel, lanes, full_rate_lanes);
    const Layout layout = a.run();
    std::set<const ir::StmtNode*> out;
    for (size_t r = 0; r < layout.item_region.size(); ++r)
        if (layout.item_region[r])
            for (const ir::Stmt* s : a.region(r))
                out.insert(s->get());
    return out;
}

} // namespace host

uint64_t host_local_bytes(const ir::Kernel& kernel, uint32_t work_group_size) {
    return host::analyze(kernel).local_bytes(work_group_size);
}

} // namespace plexus::codegen
