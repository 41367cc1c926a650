// The layout of a work-group function, decided on the IR alone (no LLVM needed): which
// statements are group control, which variables need one copy per work-item, where the shared
// arrays and those copies sit in group-local memory.
#include "codegen/host/host.hpp"
#include "codegen/llvm/memory_form.hpp"

#include "plexus/error.hpp"

#include <string>
#include <utility>

namespace plexus::codegen {
namespace host {

bool contains_barrier(const ir::Stmt& s) {
    using namespace ir;
    if (!s) return false;
    switch (s->kind) {
    case StmtKind::Barrier: return true;
    case StmtKind::Block:
        for (auto& x : static_cast<const Block&>(*s).body)
            if (contains_barrier(x)) return true;
        return false;
    case StmtKind::If: {
        auto& n = static_cast<const If&>(*s);
        return contains_barrier(n.then_body) || contains_barrier(n.else_body);
    }
    case StmtKind::For: return contains_barrier(static_cast<const For&>(*s).body);
    case StmtKind::While: return contains_barrier(static_cast<const While&>(*s).body);
    case StmtKind::Native: return contains_barrier(static_cast<const Native&>(*s).fallback);
    default: return false;
    }
}

bool is_group_stmt(const ir::Stmt& s, bool in_barrier_loop) {
    using namespace ir;
    if (!s) return false;
    switch (s->kind) {
    case StmtKind::Barrier: return true;
    case StmtKind::Break: case StmtKind::Continue: return in_barrier_loop;
    case StmtKind::Block:
        for (auto& x : static_cast<const Block&>(*s).body)
            if (is_group_stmt(x, in_barrier_loop)) return true;
        return false;
    case StmtKind::If: {
        auto& n = static_cast<const If&>(*s);
        return is_group_stmt(n.then_body, in_barrier_loop) || is_group_stmt(n.else_body, in_barrier_loop);
    }
    // A break inside a loop leaves that loop, so only the loop's own barriers matter.
    case StmtKind::For: case StmtKind::While: return contains_barrier(s);
    case StmtKind::Native: return is_group_stmt(static_cast<const Native&>(*s).fallback, in_barrier_loop);
    default: return false;
    }
}

namespace {

using namespace ir;

// Walks the kernel in the lowering's order and notes, per declaration, the work-item regions
// (maximal runs of statements between group control) that touch it.
class Analysis {
public:
    explicit Analysis(const Kernel& k) : k_(k) {}

    Layout run() {
        Layout out;
        out.barrier = contains_barrier(k_.body);
        for (auto& p : k_.params) {
            declare(p.name, p.type, p.kind == Param::Kind::Scalar ? Kind::Param : Kind::Buffer);
        }
        if (out.barrier) {
            group_body(k_.body, false);
        } else {
            region_ = 0;
            item_stmt(k_.body);
        }
        for (auto& d : decls_) {
            Storage s = Storage::Private;
            switch (d.kind) {
            case Kind::Buffer: s = Storage::Value; break;
            // An assigned parameter is a variable set before the body; with barriers, the
            // body's regions all see it, so each work-item needs its own.
            case Kind::Param: s = !d.assigned ? Storage::Value : out.barrier ? Storage::PerItem : Storage::Private; break;
            case Kind::GroupLoop: s = Storage::Group; break;
            case Kind::Var: s = d.shared_between_regions ? Storage::PerItem : Storage::Private; break;
            }
            out.decls.push_back(s);
            out.decl_types.push_back(d.type);
            out.per_item_prefix.push_back(s == Storage::PerItem ? out.per_item_bytes : 0);
            if (s == Storage::PerItem) out.per_item_bytes += memory_form(d.type).size;
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
    enum class Kind { Buffer, Param, Var, GroupLoop };
    struct Decl {
        Type type;
        Kind kind;
        int region = -2; // the first region touching it; -2: none yet
        bool shared_between_regions = false;
        bool assigned = false;
    };
    static constexpr int kGroup = -1; // "touched by group control"

    const Kernel& k_;
    std::vector<Decl> decls_;
    std::vector<std::pair<std::string, size_t>> scope_;
    int region_ = kGroup;
    int next_region_ = 0;

    size_t declare(const std::string& name, const Type& t, Kind kind) {
        decls_.push_back({t, kind});
        scope_.emplace_back(name, decls_.size() - 1);
        return decls_.size() - 1;
    }
    void touch(const std::string& name, bool assign) {
        for (auto it = scope_.rbegin(); it != scope_.rend(); ++it) {
            if (it->first != name) continue;
            Decl& d = decls_[it->second];
            d.assigned = d.assigned || assign;
            if (region_ == kGroup) d.shared_between_regions = true;
            else if (d.region == -2) d.region = region_;
            else if (d.region != region_) d.shared_between_regions = true;
            return;
        }
        throw Error(ErrorCode::Internal, "host codegen: '" + name + "' is not declared in kernel '" +
                                             k_.name + "' although it validated");
    }

    void expr(const Expr& e) {
        if (auto v = as<Var>(e)) touch(v->name, false);
        for_each_child(*e, [&](const Expr& c) { expr(c); });
    }

    // A statement run by each work-item inside the current region.
    void item_stmt(const Stmt& s) {
        if (!s) return;
        size_t mark = scope_.size();
        switch (s->kind) {
        case StmtKind::Block:
            for (auto& x : static_cast<const Block&>(*s).body) item_stmt_in_block(x);
            break;
        case StmtKind::If: {
            auto& n = static_cast<const If&>(*s);
            expr(n.cond);
            item_stmt(n.then_body);
            item_stmt(n.else_body);
            break;
        }
        case StmtKind::For: {
            auto& n = static_cast<const For&>(*s);
            expr(n.begin);
            expr(n.end);
            expr(n.step);
            declare(n.var, n.type, Kind::Var);
            touch(n.var, true);
            item_stmt(n.body);
            break;
        }
        case StmtKind::While: {
            auto& n = static_cast<const While&>(*s);
            expr(n.cond);
            item_stmt(n.body);
            break;
        }
        case StmtKind::Native: item_stmt(static_cast<const Native&>(*s).fallback); break;
        case StmtKind::Match:
            throw Error(ErrorCode::Unsupported, "host code generation: variants are not lowered yet");
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
            declare(n.name, n.type, Kind::Var);
            touch(n.name, true);
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
            expr(n.index);
            expr(n.value);
            return;
        }
        case StmtKind::Eval: expr(static_cast<const Eval&>(*s).value); return;
        case StmtKind::Break: case StmtKind::Continue: case StmtKind::Return:
        case StmtKind::Barrier: case StmtKind::Fence:
            return;
        default: item_stmt(s); return;
        }
    }

    // A statement list in group context: runs of ordinary statements become regions.
    void group_body(const Stmt& s, bool in_barrier_loop) {
        if (!s) return;
        size_t mark = scope_.size();
        const std::vector<Stmt>* list = nullptr;
        std::vector<Stmt> one;
        if (auto b = as<Block>(s)) list = &b->body;
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
                if (!in_run) region_ = next_region_++;
                in_run = true;
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
        default: break; // Barrier, Break, Continue: nothing to note
        }
    }
    bool in_loop_ = false; // group context: inside a loop that holds a barrier
};

} // namespace

Layout analyze(const ir::Kernel& kernel) { return Analysis(kernel).run(); }

} // namespace host

uint64_t host_local_bytes(const ir::Kernel& kernel, uint32_t work_group_size) {
    return host::analyze(kernel).local_bytes(work_group_size);
}

} // namespace plexus::codegen
