// The SIMT interpreter: each statement runs for every work-item of a group at once, under an
// active mask, so barriers are lockstep points and any divergence at one is seen and reported.
#include "interp.hpp"
#include "ops.hpp"

#include <algorithm>
#include <cstring>

namespace plx_interp {
namespace {

std::string index_text(Ty t, uint64_t raw) {
    switch (t) {
    case Ty::I32: return std::to_string(get<int32_t>(raw));
    case Ty::U32: return std::to_string(get<uint32_t>(raw));
    case Ty::I64: return std::to_string(get<int64_t>(raw));
    default: return std::to_string(raw);
    }
}

// The element an index names, or false when it lies outside [0, count).
inline bool checked_index(Ty t, uint64_t raw, uint64_t count, uint64_t& i) {
    switch (t) {
    case Ty::I32: { const int32_t v = get<int32_t>(raw); i = static_cast<uint64_t>(v); return v >= 0 && i < count; }
    case Ty::U32: i = get<uint32_t>(raw); return i < count;
    case Ty::I64: { const int64_t v = get<int64_t>(raw); i = static_cast<uint64_t>(v); return v >= 0 && i < count; }
    default: i = raw; return i < count;
    }
}

template <class C> void arithmetic(BinaryOp op, const uint64_t* a, const uint64_t* b,
                                   uint64_t* out, uint32_t n) {
    using U = wrap_t<C>;
    constexpr bool integral = std::is_integral_v<C>;
#define PLX_LANES(expr)                                                                        \
    for (uint32_t l = 0; l < n; ++l) {                                                         \
        const C x = get<C>(a[l]), y = get<C>(b[l]);                                            \
        out[l] = put(expr);                                                                    \
    }                                                                                          \
    return
    switch (op) {
    case BinaryOp::Add: PLX_LANES(static_cast<C>(static_cast<U>(x) + static_cast<U>(y)));
    case BinaryOp::Sub: PLX_LANES(static_cast<C>(static_cast<U>(x) - static_cast<U>(y)));
    case BinaryOp::Mul: PLX_LANES(static_cast<C>(static_cast<U>(x) * static_cast<U>(y)));
    case BinaryOp::Lt: PLX_LANES(x < y);
    case BinaryOp::Le: PLX_LANES(x <= y);
    case BinaryOp::Gt: PLX_LANES(x > y);
    case BinaryOp::Ge: PLX_LANES(x >= y);
    case BinaryOp::Eq: PLX_LANES(x == y);
    case BinaryOp::Ne: PLX_LANES(x != y);
    case BinaryOp::Min:
        if constexpr (integral) { PLX_LANES(x < y ? x : y); }
        else { PLX_LANES(std::fmin(x, y)); }
    case BinaryOp::Max:
        if constexpr (integral) { PLX_LANES(x > y ? x : y); }
        else { PLX_LANES(std::fmax(x, y)); }
    default: break;
    }
    if constexpr (integral) {
        constexpr U width_mask = sizeof(C) * 8 - 1; // shift amounts are taken modulo the width
        switch (op) {
        case BinaryOp::BitAnd: PLX_LANES(static_cast<C>(static_cast<U>(x) & static_cast<U>(y)));
        case BinaryOp::BitOr: PLX_LANES(static_cast<C>(static_cast<U>(x) | static_cast<U>(y)));
        case BinaryOp::BitXor: PLX_LANES(static_cast<C>(static_cast<U>(x) ^ static_cast<U>(y)));
        case BinaryOp::Shl: PLX_LANES(static_cast<C>(static_cast<U>(x) << (static_cast<U>(y) & width_mask)));
        // >> of a signed value is arithmetic since C++20, of an unsigned one logical.
        case BinaryOp::Shr: PLX_LANES(static_cast<C>(x >> (static_cast<U>(y) & width_mask)));
        default: break;
        }
    }
#undef PLX_LANES
    throw std::logic_error("interp: binary operator not valid for its type reached the interpreter");
}

template <class C> void math(Fn fn, const uint64_t* a, const uint64_t* b, const uint64_t* c,
                             uint64_t* out, uint32_t n) {
#define PLX_LANES(expr)                                                                        \
    for (uint32_t l = 0; l < n; ++l) {                                                         \
        const C x = get<C>(a[l]);                                                              \
        out[l] = put<C>(expr);                                                                 \
    }                                                                                          \
    return
    // std:: overloads on float are the f-suffixed C functions (sqrtf, expf, ...).
    switch (fn) {
    case Fn::Sqrt: PLX_LANES(std::sqrt(x));
    case Fn::Rsqrt: PLX_LANES(C(1) / std::sqrt(x));
    case Fn::Exp: PLX_LANES(std::exp(x));
    case Fn::Exp2: PLX_LANES(std::exp2(x));
    case Fn::Log: PLX_LANES(std::log(x));
    case Fn::Log2: PLX_LANES(std::log2(x));
    case Fn::Sin: PLX_LANES(std::sin(x));
    case Fn::Cos: PLX_LANES(std::cos(x));
    case Fn::Tan: PLX_LANES(std::tan(x));
    case Fn::Pow: PLX_LANES(std::pow(x, get<C>(b[l])));
    case Fn::Fabs: PLX_LANES(std::fabs(x));
    case Fn::Floor: PLX_LANES(std::floor(x));
    case Fn::Ceil: PLX_LANES(std::ceil(x));
    case Fn::Fma: PLX_LANES(std::fma(x, get<C>(b[l]), get<C>(c[l])));
    case Fn::Min: PLX_LANES(std::fmin(x, get<C>(b[l])));
    case Fn::Max: PLX_LANES(std::fmax(x, get<C>(b[l])));
    case Fn::Clamp: PLX_LANES(std::fmin(std::fmax(x, get<C>(b[l])), get<C>(c[l])));
    default: break;
    }
#undef PLX_LANES
    throw std::logic_error("interp: an index intrinsic reached the math functions");
}

template <class C> C atomic_update(AtomicOp op, C old, C v, C compare) {
    if constexpr (std::is_integral_v<C>) {
        using U = wrap_t<C>;
        switch (op) {
        case AtomicOp::Add: return static_cast<C>(static_cast<U>(old) + static_cast<U>(v));
        case AtomicOp::Sub: return static_cast<C>(static_cast<U>(old) - static_cast<U>(v));
        case AtomicOp::Min: return std::min(old, v);
        case AtomicOp::Max: return std::max(old, v);
        case AtomicOp::And: return old & v;
        case AtomicOp::Or: return old | v;
        case AtomicOp::Xor: return old ^ v;
        case AtomicOp::Xchg: return v;
        case AtomicOp::CmpXchg: return old == compare ? v : old;
        }
    } else if (op == AtomicOp::Add) {
        return old + v; // the catalog's only float atomic
    }
    throw std::logic_error("interp: an atomic that is not in the catalog reached the interpreter");
}

class Machine {
public:
    Machine(const Program& p, const LaunchShape& s, const std::vector<BoundParam>& params)
        : p_(p), s_(s), n_(s.local_size[0] * s.local_size[1] * s.local_size[2]) {
        regs_.assign(p.exprs.size() * size_t(n_), 0);
        vars_.assign(size_t(p.num_slots) * n_, 0);
        masks_.assign(size_t(p.num_masks) * n_, 0);
        returned_.assign(n_, 0);
        top_.assign(n_, 1);
        local_.assign(p.shared_bytes, std::byte{0});
        for (int d = 0; d < 3; ++d) {
            lid_[d].resize(n_);
            gid_[d].resize(n_);
        }
        for (uint32_t l = 0; l < n_; ++l) {
            lid_[0][l] = l % s.local_size[0];
            lid_[1][l] = l / s.local_size[0] % s.local_size[1];
            lid_[2][l] = l / s.local_size[0] / s.local_size[1];
        }
        for (uint32_t e = 0; e < p.exprs.size(); ++e)
            if (p.exprs[e].kind == ExprKind::Const) std::fill_n(reg(e), n_, p.exprs[e].bits);
        for (auto& a : p.arrays) {
            if (a.global) {
                const BoundParam& b = params[a.param];
                arrays_.push_back({b.data, b.bytes / ty_size(a.type)});
            } else {
                arrays_.push_back({local_.data() + a.offset, a.count});
            }
        }
        for (size_t i = 0; i < p.params.size(); ++i)
            if (!p.params[i].buffer) scalars_.push_back({p.params[i].ref, params[i].scalar});
    }

    void run() {
        const uint64_t* groups = s_.num_groups;
        for (group_[2] = 0; group_[2] < groups[2]; ++group_[2])
            for (group_[1] = 0; group_[1] < groups[1]; ++group_[1])
                for (group_[0] = 0; group_[0] < groups[0]; ++group_[0]) run_group();
    }

private:
    struct Bound {
        std::byte* base;
        uint64_t count;
    };

    const Program& p_;
    const LaunchShape& s_;
    const uint32_t n_; // work-items per group: one lane each
    std::vector<uint64_t> regs_, vars_;
    std::vector<uint8_t> masks_, returned_, top_;
    std::vector<uint64_t> lid_[3], gid_[3];
    uint64_t group_[3] = {0, 0, 0};
    std::vector<std::byte> local_;
    std::vector<Bound> arrays_;
    std::vector<std::pair<uint32_t, uint64_t>> scalars_; // slot, argument

    uint64_t* reg(uint32_t e) { return regs_.data() + size_t(e) * n_; }
    uint64_t* var(uint32_t slot) { return vars_.data() + size_t(slot) * n_; }
    uint8_t* mask(uint32_t m) { return masks_.data() + size_t(m) * n_; }
    bool any(const uint8_t* m) const { return std::memchr(m, 1, n_) != nullptr; }

    void run_group() {
        for (int d = 0; d < 3; ++d)
            for (uint32_t l = 0; l < n_; ++l) gid_[d][l] = group_[d] * s_.local_size[d] + lid_[d][l];
        // Shared memory is undefined at group start on a GPU; zero makes runs repeatable.
        std::fill(local_.begin(), local_.end(), std::byte{0});
        std::fill(returned_.begin(), returned_.end(), 0);
        std::fill(top_.begin(), top_.end(), 1);
        for (auto& [slot, value] : scalars_) std::fill_n(var(slot), n_, value);
        exec(p_.root, top_.data());
    }

    std::string ids(const std::vector<uint64_t>* v, uint32_t l) const {
        std::string s = "(";
        for (uint32_t d = 0; d < s_.dims; ++d) s += (d ? ", " : "") + std::to_string(v[d][l]);
        return s + ")";
    }
    std::string work_item(uint32_t l) const {
        std::string group = "(";
        for (uint32_t d = 0; d < s_.dims; ++d) group += (d ? ", " : "") + std::to_string(group_[d]);
        return "work-item global id " + ids(gid_, l) + ", local id " + ids(lid_, l) +
               ", group " + group + ")";
    }
    // "kernel "k": <what> at <statement path> by work-item global id (..), local id (..), ..."
    [[noreturn]] void error(uint32_t stmt, uint32_t lane, const std::string& what) const {
        throw LaunchError{"kernel \"" + p_.name + "\": " + what + " at " + p_.paths[stmt] +
                          " by " + work_item(lane)};
    }
    [[noreturn]] void out_of_bounds(Ty index_type, uint32_t stmt, uint32_t array,
                                    uint64_t raw_index, uint32_t lane, const char* access) const {
        const Array& a = p_.arrays[array];
        error(stmt, lane,
              std::string("out-of-bounds ") + access + " \"" + a.name + "\"[" +
                  index_text(index_type, raw_index) + "] (" +
                  (a.global ? "global buffer" : "shared array") + " of " +
                  std::to_string(arrays_[array].count) + " " + ty_name(a.type) + " elements)");
    }

    const uint64_t* eval(uint32_t ei, const uint8_t* m);
    void binary(uint32_t ei, const uint8_t* m, uint64_t* out);
    // Out of line: its error message would otherwise enlarge the frame of every recursion.
    [[gnu::noinline]] void divide(const ExprNode& e, const uint64_t* a, const uint64_t* b, uint64_t* out,
                const uint8_t* m);
    const uint64_t* call(uint32_t ei, const uint8_t* m);
    void atomic(const ExprNode& e, const uint8_t* m, uint64_t* out);
    void exec(uint32_t si, uint8_t* m);
    void store(const StmtNode& s, uint32_t si, const uint8_t* m);
    void loop(const StmtNode& s, uint8_t* m);
    void barrier(uint32_t si, const uint8_t* m) const;
};

// Pure operations run on every lane (an inactive lane computes a harmless value nobody
// reads); anything that can fail or touch memory runs on active lanes only.
const uint64_t* Machine::eval(uint32_t ei, const uint8_t* m) {
    const ExprNode& e = p_.exprs[ei];
    uint64_t* out = reg(ei);
    switch (e.kind) {
    case ExprKind::Const: return out;
    case ExprKind::Var: return var(e.ref);
    case ExprKind::Unary: {
        const uint64_t* a = eval(e.a, m);
        switch (static_cast<UnaryOp>(e.op)) {
        case UnaryOp::Not:
            for (uint32_t l = 0; l < n_; ++l) out[l] = a[l] ^ 1;
            break;
        case UnaryOp::Neg:
            with_arithmetic(e.type, [&]<class C>(Tag<C>) {
                for (uint32_t l = 0; l < n_; ++l) {
                    if constexpr (std::is_integral_v<C>)
                        out[l] = put(static_cast<C>(wrap_t<C>(0) - static_cast<wrap_t<C>>(get<C>(a[l]))));
                    else
                        out[l] = put<C>(-get<C>(a[l]));
                }
            });
            break;
        case UnaryOp::BitNot:
            for (uint32_t l = 0; l < n_; ++l) out[l] = ~a[l];
            break;
        }
        return out;
    }
    case ExprKind::Binary: binary(ei, m, out); return out;
    case ExprKind::Select: {
        const uint64_t* c = eval(e.c, m);
        const uint64_t* a = eval(e.a, m);
        const uint64_t* b = eval(e.b, m);
        for (uint32_t l = 0; l < n_; ++l) out[l] = (c[l] & 1) ? a[l] : b[l];
        return out;
    }
    case ExprKind::Cast: {
        const uint64_t* a = eval(e.a, m);
        with_any(e.operand, [&]<class S>(Tag<S>) {
            with_any(e.type, [&]<class D>(Tag<D>) {
                for (uint32_t l = 0; l < n_; ++l) out[l] = put<D>(convert<D>(get<S>(a[l])));
            });
        });
        return out;
    }
    case ExprKind::Load: {
        const uint64_t* index = eval(e.a, m);
        const Bound& arr = arrays_[e.ref];
        const uint32_t size = ty_size(e.type);
        for (uint32_t l = 0; l < n_; ++l) {
            if (!m[l]) continue;
            uint64_t i;
            if (!checked_index(e.operand, index[l], arr.count, i))
                out_of_bounds(e.operand, e.stmt, e.ref, index[l], l, "load from");
            if (size == 4) {
                uint32_t v;
                std::memcpy(&v, arr.base + i * 4, 4);
                out[l] = v;
            } else {
                std::memcpy(&out[l], arr.base + i * 8, 8);
            }
        }
        return out;
    }
    case ExprKind::Call: return call(ei, m);
    case ExprKind::Atomic: atomic(e, m, out); return out;
    }
    throw std::logic_error("interp: unknown expression kind");
}

void Machine::binary(uint32_t ei, const uint8_t* m, uint64_t* out) {
    const ExprNode& e = p_.exprs[ei];
    const auto op = static_cast<BinaryOp>(e.op);
    const uint64_t* a = eval(e.a, m);
    if (op == BinaryOp::And || op == BinaryOp::Or) {
        // Short-circuit: b runs only on the lanes whose result a does not decide.
        uint8_t* sub = mask(e.mask);
        const uint64_t decided = op == BinaryOp::And ? 0 : 1;
        for (uint32_t l = 0; l < n_; ++l) sub[l] = m[l] && (a[l] & 1) != decided;
        std::copy_n(a, n_, out);
        if (!any(sub)) return;
        const uint64_t* b = eval(e.b, sub);
        for (uint32_t l = 0; l < n_; ++l)
            if (sub[l]) out[l] = b[l] & 1;
        return;
    }
    const uint64_t* b = eval(e.b, m);
    if (op == BinaryOp::Div || op == BinaryOp::Rem) return divide(e, a, b, out, m);
    // bool operands reach here only for eq / ne, where 0 / 1 compare as integers.
    const Ty t = e.operand == Ty::Bool ? Ty::U32 : e.operand;
    with_arithmetic(t, [&]<class C>(Tag<C>) { arithmetic<C>(op, a, b, out, n_); });
}

void Machine::divide(const ExprNode& e, const uint64_t* a, const uint64_t* b, uint64_t* out,
                     const uint8_t* m) {
    const bool rem = static_cast<BinaryOp>(e.op) == BinaryOp::Rem;
    with_arithmetic(e.operand, [&]<class C>(Tag<C>) {
        for (uint32_t l = 0; l < n_; ++l) {
            const C x = get<C>(a[l]), y = get<C>(b[l]);
            if constexpr (std::is_integral_v<C>) {
                if (!m[l]) continue;
                if (y == 0)
                    error(e.stmt, l, std::string("integer ") + (rem ? "remainder" : "division") +
                                         " by zero (" + ty_name(e.operand) + " " +
                                         std::to_string(x) + (rem ? " % 0)" : " / 0)"));
                // MIN / -1 overflows (and traps on x86); it wraps to MIN, its remainder is 0.
                if (std::is_signed_v<C> && y == C(-1))
                    out[l] = put(rem ? C(0) : static_cast<C>(wrap_t<C>(0) - static_cast<wrap_t<C>>(x)));
                else
                    out[l] = put(rem ? C(x % y) : C(x / y));
            } else {
                out[l] = put<C>(x / y);
            }
        }
    });
}

const uint64_t* Machine::call(uint32_t ei, const uint8_t* m) {
    const ExprNode& e = p_.exprs[ei];
    uint64_t* out = reg(ei);
    const int d = e.dim;
    switch (static_cast<Fn>(e.op)) {
    case Fn::LocalId: return lid_[d].data();
    case Fn::GlobalId: return gid_[d].data();
    case Fn::GroupId: std::fill_n(out, n_, group_[d]); return out;
    case Fn::LocalSize: std::fill_n(out, n_, s_.local_size[d]); return out;
    case Fn::NumGroups: std::fill_n(out, n_, s_.num_groups[d]); return out;
    case Fn::GlobalSize: std::fill_n(out, n_, s_.num_groups[d] * s_.local_size[d]); return out;
    default: break;
    }
    const uint64_t* a = eval(e.a, m);
    const uint64_t* b = e.b != kNone ? eval(e.b, m) : nullptr;
    const uint64_t* c = e.c != kNone ? eval(e.c, m) : nullptr;
    if (e.type == Ty::F32) math<float>(static_cast<Fn>(e.op), a, b, c, out, n_);
    else math<double>(static_cast<Fn>(e.op), a, b, c, out, n_);
    return out;
}

void Machine::atomic(const ExprNode& e, const uint8_t* m, uint64_t* out) {
    const uint64_t* index = eval(e.a, m);
    const uint64_t* value = eval(e.b, m);
    const uint64_t* compare = e.c != kNone ? eval(e.c, m) : value;
    const Bound& arr = arrays_[e.ref];
    const auto op = static_cast<AtomicOp>(e.op);
    // Lanes update one after another, so each sees the previous lane's result.
    with_arithmetic(e.type, [&]<class C>(Tag<C>) {
        for (uint32_t l = 0; l < n_; ++l) {
            if (!m[l]) continue;
            uint64_t i;
            if (!checked_index(e.operand, index[l], arr.count, i))
                out_of_bounds(e.operand, e.stmt, e.ref, index[l], l, "atomic on");
            C old;
            std::memcpy(&old, arr.base + i * sizeof(C), sizeof(C));
            const C updated = atomic_update<C>(op, old, get<C>(value[l]), get<C>(compare[l]));
            std::memcpy(arr.base + i * sizeof(C), &updated, sizeof(C));
            out[l] = put<C>(old);
        }
    });
}

void Machine::store(const StmtNode& s, uint32_t si, const uint8_t* m) {
    const uint64_t* index = eval(s.e0, m);
    const uint64_t* value = eval(s.e1, m);
    const Bound& arr = arrays_[s.slot];
    const Ty index_type = p_.exprs[s.e0].type;
    const uint32_t size = ty_size(p_.arrays[s.slot].type);
    for (uint32_t l = 0; l < n_; ++l) {
        if (!m[l]) continue;
        uint64_t i;
        if (!checked_index(index_type, index[l], arr.count, i))
            out_of_bounds(index_type, si, s.slot, index[l], l, "store to");
        if (size == 4) {
            const uint32_t v = static_cast<uint32_t>(value[l]);
            std::memcpy(arr.base + i * 4, &v, 4);
        } else {
            std::memcpy(arr.base + i * 8, &value[l], 8);
        }
    }
}

void Machine::barrier(uint32_t si, const uint8_t* m) const {
    uint32_t arrived = 0, missing = n_;
    for (uint32_t l = 0; l < n_; ++l) {
        if (m[l]) ++arrived;
        else if (!returned_[l] && missing == n_) missing = l;
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
        // begin, end and step are evaluated once; end and step are kept in their own
        // registers since the body may assign a variable they were read from.
        const uint64_t* begin = eval(s.e0, m);
        for (uint32_t l = 0; l < n_; ++l)
            if (m[l]) v[l] = begin[l];
        const uint64_t* e = eval(s.e1, m);
        end = reg(s.e1);
        if (e != end) std::copy_n(e, n_, end);
        const uint64_t* st = eval(s.e2, m);
        step = reg(s.e2);
        if (st != step) std::copy_n(st, n_, step);
    }
    std::copy_n(m, n_, live);
    for (;;) {
        if (v) {
            with_integer(s.type, [&]<class C>(Tag<C>) {
                for (uint32_t l = 0; l < n_; ++l) live[l] = live[l] && get<C>(v[l]) < get<C>(end[l]);
            });
        } else {
            const uint64_t* c = eval(s.e0, live);
            for (uint32_t l = 0; l < n_; ++l) live[l] = live[l] && (c[l] & 1);
        }
        if (!any(live)) break;
        std::copy_n(live, n_, body);
        std::fill_n(cont, n_, 0);
        exec(s.s0, body);
        for (uint32_t l = 0; l < n_; ++l) live[l] = body[l] | cont[l];
        if (v) {
            with_integer(s.type, [&]<class C>(Tag<C>) {
                for (uint32_t l = 0; l < n_; ++l)
                    if (live[l]) v[l] = put(add_wrap(get<C>(v[l]), get<C>(step[l])));
            });
        }
    }
    for (uint32_t l = 0; l < n_; ++l) m[l] = m[l] && !returned_[l];
}

void Machine::exec(uint32_t si, uint8_t* m) {
    const StmtNode& s = p_.stmts[si];
    switch (s.kind) {
    case StmtKind::Block:
        for (uint32_t i = 0; i < s.count; ++i) {
            if (!any(m)) return;
            exec(p_.children[s.first + i], m);
        }
        return;
    case StmtKind::Let:
    case StmtKind::Assign: {
        const uint64_t* value = eval(s.e0, m);
        uint64_t* dst = var(s.slot);
        for (uint32_t l = 0; l < n_; ++l)
            if (m[l]) dst[l] = value[l];
        return;
    }
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
        for (uint32_t l = 0; l < n_; ++l) m[l] = t[l] | f[l];
        return;
    }
    case StmtKind::For:
    case StmtKind::While: loop(s, m); return;
    case StmtKind::Break: std::fill_n(m, n_, 0); return;
    case StmtKind::Continue: {
        uint8_t* cont = mask(p_.stmts[s.loop].m2);
        for (uint32_t l = 0; l < n_; ++l) cont[l] |= m[l];
        std::fill_n(m, n_, 0);
        return;
    }
    case StmtKind::Return:
        for (uint32_t l = 0; l < n_; ++l) returned_[l] |= m[l];
        std::fill_n(m, n_, 0);
        return;
    case StmtKind::Barrier: barrier(si, m); return;
    case StmtKind::Nop: return;
    case StmtKind::Eval: eval(s.e0, m); return;
    }
}

} // namespace

void execute(const Program& program, const LaunchShape& shape,
             const std::vector<BoundParam>& params) {
    Machine(program, shape, params).run();
}

} // namespace plx_interp
