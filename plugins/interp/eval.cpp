// Expressions on the SIMT machine, one scalar per lane: pure operations run on every lane (an
// inactive lane computes a value nobody reads); what can fail or touch memory, on active ones.
#include "machine.hpp"
#include "ops.hpp"

#include <algorithm>

namespace plx_interp {
namespace {

// fmin / fmax as docs/ir.md states them: a NaN operand yields the other. std::fmin alone
// does not do it for a signaling NaN (glibc follows IEEE 754-2008's minNum and returns a
// NaN), and a bf16 or f32 NaN read from memory may be signaling.
template <class C> C min_of(C x, C y) {
    return std::isnan(x) ? y : std::isnan(y) ? x : std::fmin(x, y);
}
template <class C> C max_of(C x, C y) {
    return std::isnan(x) ? y : std::isnan(y) ? x : std::fmax(x, y);
}

template <class C>
void arithmetic(BinaryOp op, const uint64_t* a, const uint64_t* b, uint64_t* out, uint32_t n) {
    using U = wrap_t<C>;
    constexpr bool integral = std::is_integral_v<C>;
#define PLX_LANES(expr)                                                                            \
    for (uint32_t l = 0; l < n; ++l) {                                                             \
        const C x = get<C>(a[l]), y = get<C>(b[l]);                                                \
        out[l] = put(expr);                                                                        \
    }                                                                                              \
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
        if constexpr (integral) {
            PLX_LANES(x < y ? x : y);
        } else {
            PLX_LANES(min_of(x, y));
        }
    case BinaryOp::Max:
        if constexpr (integral) {
            PLX_LANES(x > y ? x : y);
        } else {
            PLX_LANES(max_of(x, y));
        }
    default: break;
    }
    if constexpr (integral) {
        constexpr U width_mask = sizeof(C) * 8 - 1; // shift amounts are taken modulo the width
        switch (op) {
        case BinaryOp::BitAnd: PLX_LANES(static_cast<C>(static_cast<U>(x) & static_cast<U>(y)));
        case BinaryOp::BitOr: PLX_LANES(static_cast<C>(static_cast<U>(x) | static_cast<U>(y)));
        case BinaryOp::BitXor: PLX_LANES(static_cast<C>(static_cast<U>(x) ^ static_cast<U>(y)));
        case BinaryOp::Shl:
            PLX_LANES(static_cast<C>(static_cast<U>(x) << (static_cast<U>(y) & width_mask)));
        // >> of a signed value is arithmetic since C++20, of an unsigned one logical; i8 and
        // i16 are promoted to int first, which keeps their sign.
        case BinaryOp::Shr: PLX_LANES(static_cast<C>(x >> (static_cast<U>(y) & width_mask)));
        default: break;
        }
    }
#undef PLX_LANES
    throw std::logic_error(
        "interp: binary operator not valid for its type reached the interpreter");
}

template <class C>
void math(Fn fn, const uint64_t* a, const uint64_t* b, const uint64_t* c, uint64_t* out,
          uint32_t n) {
#define PLX_LANES(expr)                                                                            \
    for (uint32_t l = 0; l < n; ++l) {                                                             \
        const C x = get<C>(a[l]);                                                                  \
        out[l] = put<C>(expr);                                                                     \
    }                                                                                              \
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
    case Fn::Min: PLX_LANES(min_of(x, get<C>(b[l])));
    case Fn::Max: PLX_LANES(max_of(x, get<C>(b[l])));
    case Fn::Clamp: PLX_LANES(min_of(max_of(x, get<C>(b[l])), get<C>(c[l])));
    case Fn::Ldexp: PLX_LANES(std::ldexp(x, get<int32_t>(b[l])));
    case Fn::Exp10: PLX_LANES(std::pow(C(10), x));
    case Fn::Divide: PLX_LANES(x / get<C>(b[l]));
    case Fn::Recip: PLX_LANES(C(1) / x);
#define PLX_LIBM1(fn)                                                                              \
    case Fn::Libm_##fn: PLX_LANES(std::fn(x));
#define PLX_LIBM2(fn)                                                                              \
    case Fn::Libm_##fn: PLX_LANES(std::fn(x, get<C>(b[l])));
#include <plexus/libm.def>
#undef PLX_LIBM1
#undef PLX_LIBM2
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
    } else {
        switch (op) {
        case AtomicOp::Add: return old + v;
        case AtomicOp::Min: return std::fmin(old, v); // a NaN operand yields the other
        case AtomicOp::Max: return std::fmax(old, v);
        default: break;
        }
    }
    throw std::logic_error("interp: an atomic that is not in the catalog reached the interpreter");
}

} // namespace

const uint64_t* Machine::eval(uint32_t ei, const uint8_t* m) {
    const ExprNode& e = p_.exprs[ei];
    if (e.kind == ExprKind::Var) return var(e.ref);
    if (!e.memo) return compute(ei, m);
    if (evaluated_[ei] == epoch_) return results_[ei];
    const uint64_t* r = compute(ei, m);
    evaluated_[ei] = epoch_;
    return results_[ei] = r;
}

const uint64_t* Machine::compute(uint32_t ei, const uint8_t* m) {
    const ExprNode& e = p_.exprs[ei];
    uint64_t* out = e.reg == kNone ? nullptr : reg(e.reg);
    switch (e.kind) {
    case ExprKind::Const: return out;
    case ExprKind::Var: return var(e.ref);
    case ExprKind::Unary: unary(e, m, out); return out;
    case ExprKind::Binary: binary(e, m, out); return out;
    case ExprKind::Select: {
        const uint64_t* c = eval(e.c, m);
        const uint64_t* a = eval(e.a, m);
        const uint64_t* b = eval(e.b, m);
        for (uint32_t l = 0; l < n_; ++l)
            out[l] = (c[l] & 1) ? a[l] : b[l];
        return out;
    }
    case ExprKind::Cast: {
        const uint64_t* a = eval(e.a, m);
        // Into f16 / bf16 through f32, then rounded; out of them exact, since f32 holds them.
        with_any(e.operand, [&]<class S>(Tag<S>) {
            with_any(e.type, [&]<class D>(Tag<D>) {
                for (uint32_t l = 0; l < n_; ++l)
                    out[l] = put<D>(convert<D>(get<S>(a[l])));
            });
        });
        round_lanes(e.type, out, n_);
        return out;
    }
    case ExprKind::Load: load(e, m, out); return out;
    case ExprKind::Call: return call(e, m, out);
    case ExprKind::Atomic: atomic(e, m, out); return out;
    }
    throw std::logic_error("interp: unknown expression kind");
}

void Machine::unary(const ExprNode& e, const uint8_t* m, uint64_t* out) {
    const uint64_t* a = eval(e.a, m);
    switch (static_cast<UnaryOp>(e.op)) {
    case UnaryOp::Not:
        for (uint32_t l = 0; l < n_; ++l)
            out[l] = a[l] ^ 1;
        return;
    case UnaryOp::Neg:
        with_arithmetic(e.type, [&]<class C>(Tag<C>) {
            for (uint32_t l = 0; l < n_; ++l) {
                if constexpr (std::is_integral_v<C>)
                    out[l] =
                        put(static_cast<C>(wrap_t<C>(0) - static_cast<wrap_t<C>>(get<C>(a[l]))));
                else
                    out[l] = put<C>(-get<C>(a[l]));
            }
        });
        return; // the negation of an f16 / bf16 value is one: nothing to round
    case UnaryOp::BitNot:
        for (uint32_t l = 0; l < n_; ++l)
            out[l] = ~a[l]; // the bits above the width are ignored
        return;
    }
}

void Machine::binary(const ExprNode& e, const uint8_t* m, uint64_t* out) {
    const auto op = static_cast<BinaryOp>(e.op);
    const uint64_t* a = eval(e.a, m);
    if (op == BinaryOp::And || op == BinaryOp::Or) {
        // Short-circuit: b runs only on the lanes whose result a does not decide.
        uint8_t* sub = mask(e.mask);
        const uint64_t decided = op == BinaryOp::And ? 0 : 1;
        for (uint32_t l = 0; l < n_; ++l)
            sub[l] = m[l] && (a[l] & 1) != decided;
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
    round_lanes(e.type, out, n_); // f16 / bf16 results; comparisons give bool
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
                    error(e.stmt, l,
                          std::string("integer ") + (rem ? "remainder" : "division") +
                              " by zero (" + ty_name(e.operand) + " " + std::to_string(x) +
                              (rem ? " % 0)" : " / 0)"));
                // MIN / -1 overflows (and traps on x86); it wraps to MIN, its remainder is 0.
                if (std::is_signed_v<C> && y == C(-1))
                    out[l] =
                        put(rem ? C(0) : static_cast<C>(wrap_t<C>(0) - static_cast<wrap_t<C>>(x)));
                else
                    out[l] = put(rem ? C(x % y) : C(x / y));
            } else {
                out[l] = put<C>(x / y);
            }
        }
    });
    round_lanes(e.type, out, n_);
}

const uint64_t* Machine::call(const ExprNode& e, const uint8_t* m, uint64_t* out) {
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
    if (static_cast<Fn>(e.op) >= Fn::SubgroupSize) return subgroup(e, m, out);
    const uint64_t* a = eval(e.a, m);
    const uint64_t* b = e.b != kNone ? eval(e.b, m) : nullptr;
    const uint64_t* c = e.c != kNone ? eval(e.c, m) : nullptr;
    if (static_cast<Fn>(e.op) == Fn::Ilogb) {
        for (uint32_t l = 0; l < n_; ++l)
            out[l] = put<int32_t>(e.operand == Ty::F32 ? std::ilogb(get<float>(a[l]))
                                                       : std::ilogb(get<double>(a[l])));
        return out;
    }
    if (e.type == Ty::F32)
        math<float>(static_cast<Fn>(e.op), a, b, c, out, n_);
    else
        math<double>(static_cast<Fn>(e.op), a, b, c, out, n_);
    return out;
}

void Machine::atomic(const ExprNode& e, const uint8_t* m, uint64_t* out) {
    const uint64_t* idx = eval(e.a, m);
    const uint64_t* value = eval(e.b, m);
    const uint64_t* compare = e.c != kNone ? eval(e.c, m) : value;
    const Bound& arr = arrays_[e.ref];
    const auto op = static_cast<AtomicOp>(e.op);
    // Lanes update one after another, so each sees the previous lane's result.
    with_arithmetic(e.type, [&]<class C>(Tag<C>) {
        for (uint32_t l = 0; l < n_; ++l) {
            if (!m[l]) continue;
            std::byte* p = element(arr, l, index(e.operand, idx[l], e.ref, e.stmt, l, "atomic on"));
            C old;
            std::memcpy(&old, p, sizeof(C));
            const C updated = atomic_update<C>(op, old, get<C>(value[l]), get<C>(compare[l]));
            std::memcpy(p, &updated, sizeof(C));
            out[l] = put<C>(old);
        }
    });
}

// One leaf of an element. Inside a variant's payload, only the lanes whose tag names the
// payload's case read memory; a tag read from memory must name a case.
void Machine::load(const ExprNode& e, const uint8_t* m, uint64_t* out) {
    const uint64_t* idx = eval(e.a, m);
    const uint64_t* guard = e.guard != kNone ? eval(e.guard, m) : nullptr;
    const Bound& arr = arrays_[e.ref];
    for (uint32_t l = 0; l < n_; ++l) {
        if (!m[l]) continue;
        if (guard && get<uint32_t>(guard[l]) != e.guard_case) {
            out[l] = e.cases ? kNoTag : 0;
            continue;
        }
        const uint64_t i = index(e.operand, idx[l], e.ref, e.stmt, l, "load from");
        out[l] = read_scalar(element(arr, l, i) + e.offset, e.type);
        if (e.cases && out[l] >= e.cases) invalid_tag(e, i, out[l], l);
    }
}

void Machine::invalid_tag(const ExprNode& e, uint64_t i, uint64_t tag, uint32_t lane) const {
    const Array& a = p_.arrays[e.ref];
    error(e.stmt, lane,
          "invalid variant tag " + std::to_string(tag) + " (\"" + p_.names[e.variant] + "\" has " +
              std::to_string(e.cases) + " cases) at byte " + std::to_string(e.offset) + " of \"" +
              a.name + "\"[" + std::to_string(i) + "] (" + a.type_name + ")");
}

} // namespace plx_interp
