// The SIMT interpreter: each statement runs for every work-item of a group at once, under an
// active mask, so barriers are lockstep points and any divergence at one is seen and reported.
#include "machine.hpp"
#include "ops.hpp"

#include <algorithm>

namespace plx_interp {
namespace {

const char* space_text(Space s) {
    return s == Space::Global  ? "global buffer"
           : s == Space::Local ? "shared array"
                               : "private array";
}

} // namespace

Machine::Machine(const Program& p, const LaunchShape& s, const std::vector<BoundParam>& params)
    : p_(p), s_(s), n_(s.local_size[0] * s.local_size[1] * s.local_size[2]) {
    regs_.assign(size_t(p.num_regs) * n_, 0);
    vars_.assign(size_t(p.num_slots) * n_, 0);
    scratch_.assign(size_t(p.max_leaves) * n_, 0);
    leaves_.assign(p.max_leaves, nullptr);
    masks_.assign(size_t(p.num_masks) * n_, 0);
    evaluated_.assign(p.exprs.size(), 0);
    results_.assign(p.exprs.size(), nullptr);
    returned_.assign(n_, 0);
    top_.assign(n_, 1);
    const uint32_t subgroups = (n_ + kSubgroupWidth - 1) / kSubgroupWidth;
    tiles_.assign(size_t(p.fragment_elements) * subgroups, 0.f);
    tile_set_.assign(p.fragments.size() * subgroups, 0);
    if (!p.fragments.empty()) scratch_tile_.assign(kMaxTile, 0.f);
    local_.assign(p.shared_bytes, std::byte{0});
    private_.assign(size_t(p.private_bytes) * n_, std::byte{0});
    for (int d = 0; d < 3; ++d) {
        lid_[d].resize(n_);
        gid_[d].resize(n_);
    }
    for (uint32_t l = 0; l < n_; ++l) {
        lid_[0][l] = l % s.local_size[0];
        lid_[1][l] = l / s.local_size[0] % s.local_size[1];
        lid_[2][l] = l / s.local_size[0] / s.local_size[1];
    }
    for (const ExprNode& e : p.exprs)
        if (e.kind == ExprKind::Const && e.reg != kNone) std::fill_n(reg(e.reg), n_, e.bits);
    for (const Array& a : p.arrays) {
        switch (a.space) {
        case Space::Global: {
            const BoundParam& b = params[a.param];
            arrays_.push_back({b.data, b.bytes / a.stride, a.stride});
            break;
        }
        case Space::Local: arrays_.push_back({local_.data() + a.offset, a.count, a.stride}); break;
        case Space::Private:
            arrays_.push_back({private_.data() + a.offset, a.count, a.stride, p.private_bytes});
            break;
        }
    }
    for (size_t i = 0; i < p.params.size(); ++i)
        if (!p.params[i].buffer) scalars_.push_back({p.params[i].ref, params[i].scalar});
}

void Machine::run() {
    const uint64_t* groups = s_.num_groups;
    for (group_[2] = 0; group_[2] < groups[2]; ++group_[2])
        for (group_[1] = 0; group_[1] < groups[1]; ++group_[1])
            for (group_[0] = 0; group_[0] < groups[0]; ++group_[0])
                run_group();
}

void Machine::run_group() {
    for (int d = 0; d < 3; ++d)
        for (uint32_t l = 0; l < n_; ++l)
            gid_[d][l] = group_[d] * s_.local_size[d] + lid_[d][l];
    // Shared and private memory are undefined at group start on a GPU; zero makes runs
    // repeatable (and a variant read from them before any store has the valid tag 0).
    std::fill(local_.begin(), local_.end(), std::byte{0});
    std::fill(private_.begin(), private_.end(), std::byte{0});
    std::fill(returned_.begin(), returned_.end(), 0);
    std::fill(top_.begin(), top_.end(), 1);
    std::fill(tile_set_.begin(), tile_set_.end(), 0); // fragments start undefined
    for (auto& [slot, value] : scalars_)
        std::fill_n(var(slot), n_, value);
    exec(p_.root, top_.data());
}

std::string Machine::work_item(uint32_t l) const {
    auto ids = [&](const std::vector<uint64_t>* v) {
        std::string s = "(";
        for (uint32_t d = 0; d < s_.dims; ++d)
            s += (d ? ", " : "") + std::to_string(v[d][l]);
        return s + ")";
    };
    std::string group = "(";
    for (uint32_t d = 0; d < s_.dims; ++d)
        group += (d ? ", " : "") + std::to_string(group_[d]);
    return "work-item global id " + ids(gid_) + ", local id " + ids(lid_) + ", group " + group +
           ")";
}

void Machine::error(uint32_t stmt, uint32_t lane, const std::string& what) const {
    throw LaunchError{"kernel \"" + p_.name + "\": " + what + " at " + p_.paths[stmt] + " by " +
                      work_item(lane)};
}

void Machine::out_of_bounds(uint32_t stmt, uint32_t array, const std::string& index, uint32_t lane,
                            const std::string& access, const std::string& detail) const {
    const Array& a = p_.arrays[array];
    error(stmt, lane,
          "out-of-bounds " + access + " \"" + a.name + "\"[" + index + "] (" + space_text(a.space) +
              " of " + std::to_string(arrays_[array].count) + " " + a.type_name + " elements)" +
              detail);
}

uint64_t Machine::index(Ty t, uint64_t raw, uint32_t array, uint32_t stmt, uint32_t lane,
                        const char* access) const {
    bool negative = false;
    uint64_t i = 0;
    with_integer(t, [&]<class C>(Tag<C>) {
        const C v = get<C>(raw);
        negative = v < C(0);
        i = static_cast<uint64_t>(v);
    });
    if (negative || i >= arrays_[array].count)
        out_of_bounds(stmt, array, scalar_text(t, raw), lane, access);
    return i;
}

// Let, Assign and the copy of a matched value: every leaf is computed before any is written,
// since a value may read the slots it replaces (v = v.yx).
void Machine::copy(const StmtNode& s, const uint8_t* m) {
    const uint32_t* values = p_.values.data() + s.leaf_first;
    if (s.leaf_count == 1) {
        const uint64_t* value = eval(values[0], m);
        uint64_t* dst = var(s.slot);
        for (uint32_t l = 0; l < n_; ++l)
            if (m[l]) dst[l] = value[l];
        return;
    }
    for (uint32_t i = 0; i < s.leaf_count; ++i)
        std::copy_n(eval(values[i], m), n_, scratch_.data() + size_t(i) * n_);
    for (uint32_t i = 0; i < s.leaf_count; ++i) {
        uint64_t* dst = var(s.slot + i);
        const uint64_t* src = scratch_.data() + size_t(i) * n_;
        for (uint32_t l = 0; l < n_; ++l)
            if (m[l]) dst[l] = src[l];
    }
}

// Every leaf is computed before memory changes (a[i] = a[i].yx reads what it overwrites); a
// leaf of a variant's payload is written only where the stored tag names its case.
void Machine::store(const StmtNode& s, uint32_t si, const uint8_t* m) {
    const uint64_t* idx = eval(s.e0, m);
    const StoreLeaf* leaves = p_.stores.data() + s.leaf_first;
    for (uint32_t k = 0; k < s.leaf_count; ++k)
        leaves_[k] = eval(leaves[k].value, m);
    const Bound& arr = arrays_[s.slot];
    const Ty index_type = p_.exprs[s.e0].type;
    for (uint32_t l = 0; l < n_; ++l) {
        if (!m[l]) continue;
        std::byte* p = element(arr, l, index(index_type, idx[l], s.slot, si, l, "store to"));
        for (uint32_t k = 0; k < s.leaf_count; ++k) {
            const StoreLeaf& leaf = leaves[k];
            if (leaf.guard != kNone && get<uint32_t>(leaves_[leaf.guard][l]) != leaf.guard_case)
                continue;
            write_scalar(p + leaf.offset, leaf.type, leaves_[k][l]);
        }
    }
}

void Machine::barrier(uint32_t si, const uint8_t* m) const {
    uint32_t arrived = 0, missing = n_;
    for (uint32_t l = 0; l < n_; ++l) {
        if (m[l])
            ++arrived;
        else if (!returned_[l] && missing == n_)
            missing = l;
    }
    if (missing == n_) return;
    // Lockstep execution makes divergence visible: the lanes not here are in another branch,
    // in another iteration of an enclosing loop, or have left that loop.
    throw LaunchError{"kernel \"" + p_.name + "\": barrier at " + p_.paths[si] +
                      " reached by only " + std::to_string(arrived) + " of the group's " +
                      std::to_string(n_) + " work-items; " + work_item(missing) +
                      " did not reach it (it is in another branch or loop iteration, or has "
                      "left the loop)"};
}

// For and While: the loop runs while any lane is still in it. Lanes leave by the condition,
// break or return; continue only skips the rest of the body for that iteration.
void Machine::loop(const StmtNode& s, uint8_t* m) {
    uint8_t* live = mask(s.m0);
    uint8_t* body = mask(s.m1);
    uint8_t* cont = mask(s.m2);
    uint64_t* v = s.kind == StmtKind::For ? var(s.slot) : nullptr;
    uint64_t *end = nullptr, *step = nullptr;
    if (v) {
        // begin, end and step are evaluated once; end and step are kept in registers of the
        // loop's own since the body may assign a variable they were read from.
        const uint64_t* begin = eval(s.e0, m);
        for (uint32_t l = 0; l < n_; ++l)
            if (m[l]) v[l] = begin[l];
        end = reg(s.r0);
        std::copy_n(eval(s.e1, m), n_, end);
        step = reg(s.r1);
        std::copy_n(eval(s.e2, m), n_, step);
    }
    std::copy_n(m, n_, live);
    for (;;) {
        if (v) {
            with_integer(s.type, [&]<class C>(Tag<C>) {
                for (uint32_t l = 0; l < n_; ++l)
                    live[l] = live[l] && get<C>(v[l]) < get<C>(end[l]);
            });
        } else {
            // The body ran statements since the last test, so this is a new evaluation.
            const uint64_t* c = eval(s.e0, live);
            for (uint32_t l = 0; l < n_; ++l)
                live[l] = live[l] && (c[l] & 1);
        }
        if (!any(live)) break;
        std::copy_n(live, n_, body);
        std::fill_n(cont, n_, 0);
        exec(s.s0, body);
        for (uint32_t l = 0; l < n_; ++l)
            live[l] = body[l] | cont[l];
        if (v) {
            with_integer(s.type, [&]<class C>(Tag<C>) {
                for (uint32_t l = 0; l < n_; ++l)
                    if (live[l]) v[l] = put(add_wrap(get<C>(v[l]), get<C>(step[l])));
            });
        }
    }
    for (uint32_t l = 0; l < n_; ++l)
        m[l] = m[l] && !returned_[l];
}

// Match: the value is copied to its hidden slots, each arm runs under the lanes whose tag it
// takes (otherwise: the tags no arm lists), and lanes that broke, continued or returned in an
// arm stay out afterwards, as after an if.
void Machine::match(const StmtNode& s, uint8_t* m) {
    copy(s, m);
    const uint64_t* tag = var(s.slot);
    const Arm* arms = p_.arms.data() + s.first;
    for (uint32_t a = 0; a < s.count; ++a) {
        uint8_t* in = mask(arms[a].mask);
        for (uint32_t l = 0; l < n_; ++l) {
            const uint32_t t = get<uint32_t>(tag[l]);
            bool listed = arms[a].tag == t;
            for (uint32_t b = 0; b < s.count && arms[a].tag == kNone && !listed; ++b)
                listed = arms[b].tag == t;
            in[l] = m[l] && (arms[a].tag == kNone ? !listed : listed);
        }
    }
    for (uint32_t a = 0; a < s.count; ++a)
        if (any(mask(arms[a].mask))) exec(arms[a].body, mask(arms[a].mask));
    for (uint32_t l = 0; l < n_; ++l) {
        bool stays = false;
        for (uint32_t a = 0; a < s.count; ++a)
            stays |= mask(arms[a].mask)[l] != 0;
        m[l] = stays;
    }
}

void Machine::exec(uint32_t si, uint8_t* m) {
    const StmtNode& s = p_.stmts[si];
    ++epoch_; // nodes shared by several parents are computed once per statement
    switch (s.kind) {
    case StmtKind::Block:
        for (uint32_t i = 0; i < s.count; ++i) {
            if (!any(m)) return;
            exec(p_.children[s.first + i], m);
        }
        return;
    case StmtKind::Let:
    case StmtKind::Assign: copy(s, m); return;
    case StmtKind::Store: store(s, si, m); return;
    case StmtKind::If: {
        const uint64_t* c = eval(s.e0, m);
        uint8_t* t = mask(s.m0);
        uint8_t* f = mask(s.m1);
        for (uint32_t l = 0; l < n_; ++l) {
            t[l] = m[l] && (c[l] & 1);
            f[l] = m[l] && !(c[l] & 1);
        }
        if (any(t)) exec(s.s0, t);
        if (s.s1 != kNone && any(f)) exec(s.s1, f);
        // Lanes that broke, continued or returned inside a branch stay out.
        for (uint32_t l = 0; l < n_; ++l)
            m[l] = t[l] | f[l];
        return;
    }
    case StmtKind::For:
    case StmtKind::While: loop(s, m); return;
    case StmtKind::Break: std::fill_n(m, n_, 0); return;
    case StmtKind::Continue: {
        uint8_t* cont = mask(p_.stmts[s.loop].m2);
        for (uint32_t l = 0; l < n_; ++l)
            cont[l] |= m[l];
        std::fill_n(m, n_, 0);
        return;
    }
    case StmtKind::Return:
        for (uint32_t l = 0; l < n_; ++l)
            returned_[l] |= m[l];
        std::fill_n(m, n_, 0);
        return;
    case StmtKind::Barrier: barrier(si, m); return;
    case StmtKind::Nop: return;
    case StmtKind::Eval:
        for (uint32_t i = 0; i < s.leaf_count; ++i)
            eval(p_.values[s.leaf_first + i], m);
        return;
    case StmtKind::Match: match(s, m); return;
    case StmtKind::Matrix: matrix(s, si, m); return;
    case StmtKind::AsyncCopy: async_copy(s, si, m); return;
    }
}

void execute(const Program& program, const LaunchShape& shape,
             const std::vector<BoundParam>& params) {
    Machine(program, shape, params).run();
}

} // namespace plx_interp
