// Subgroup operations on the lockstep machine: lane l of a group is in subgroup l / width, at
// lane l % width (linear local id order). A collective operation must be reached by every
// work-item of each subgroup that reaches it, and a shuffle must name a lane of the subgroup:
// the interpreter checks both, as it checks barriers, where other backends hang or return
// garbage.
#include "machine.hpp"
#include "ops.hpp"

#include <algorithm>

namespace plx_interp {
namespace {

const char* op_name(Fn fn) {
    switch (fn) {
    case Fn::Ballot: return "ballot";
    case Fn::Any: return "any";
    case Fn::All: return "all";
    case Fn::Shuffle: return "shuffle";
    case Fn::ShuffleXor: return "shuffle_xor";
    case Fn::ShuffleUp: return "shuffle_up";
    case Fn::ShuffleDown: return "shuffle_down";
    case Fn::ReduceAdd: return "subgroup_reduce_add";
    case Fn::ReduceMin: return "subgroup_reduce_min";
    case Fn::ReduceMax: return "subgroup_reduce_max";
    case Fn::ScanInclusiveAdd: return "subgroup_scan_inclusive_add";
    case Fn::ScanExclusiveAdd: return "subgroup_scan_exclusive_add";
    default: return "subgroup operation";
    }
}

// a + b (wrapping for integers), min or max, as the IR defines them (fmin / fmax for floats).
template <class C> C combine(Fn fn, C a, C b) {
    if (fn == Fn::ReduceMin) {
        if constexpr (std::is_floating_point_v<C>)
            return std::fmin(a, b);
        else
            return std::min(a, b);
    }
    if (fn == Fn::ReduceMax) {
        if constexpr (std::is_floating_point_v<C>)
            return std::fmax(a, b);
        else
            return std::max(a, b);
    }
    if constexpr (std::is_floating_point_v<C>)
        return a + b;
    else
        return add_wrap(a, b);
}

} // namespace

void Machine::whole_subgroups(uint32_t stmt, const std::string& what, const uint8_t* m) const {
    for (uint32_t first = 0; first < n_; first += kSubgroupWidth) {
        const uint32_t end = std::min(n_, first + kSubgroupWidth);
        const auto here = std::count(m + first, m + end, uint8_t(1));
        if (here == 0 || here == end - first) continue;
        const uint32_t missing = uint32_t(std::find(m + first, m + end, uint8_t(0)) - m);
        error(stmt, missing,
              what + " reached by only " + std::to_string(here) + " of the " +
                  std::to_string(end - first) + " work-items of subgroup " +
                  std::to_string(first / kSubgroupWidth) +
                  " (every work-item of a subgroup must reach it; this one is in another branch or "
                  "loop "
                  "iteration, or has left the loop), missed");
    }
}

uint32_t Machine::source_lane(const ExprNode& e, uint32_t l, uint64_t arg) const {
    const uint32_t first = l / kSubgroupWidth * kSubgroupWidth;
    const uint32_t lanes = std::min(n_ - first, kSubgroupWidth), lane = l - first;
    const uint32_t a = static_cast<uint32_t>(arg);
    const Fn fn = static_cast<Fn>(e.op);
    if (fn == Fn::ShuffleUp) return a > lane ? l : l - a;
    if (fn == Fn::ShuffleDown) return a >= lanes - lane ? l : l + a;
    const uint32_t src = fn == Fn::Shuffle ? a : lane ^ a;
    if (src >= lanes)
        error(e.stmt, l,
              std::string(op_name(fn)) + " names lane " + std::to_string(src) +
                  " of a subgroup of " + std::to_string(lanes) + " lanes (0 .. " +
                  std::to_string(lanes - 1) + ")");
    return first + src;
}

const uint64_t* Machine::subgroup(const ExprNode& e, const uint8_t* m, uint64_t* out) {
    const Fn fn = static_cast<Fn>(e.op);
    if (fn <= Fn::LaneId) {
        for (uint32_t l = 0; l < n_; ++l) {
            const uint32_t first = l / kSubgroupWidth * kSubgroupWidth;
            out[l] = fn == Fn::SubgroupSize ? std::min(n_ - first, kSubgroupWidth)
                     : fn == Fn::SubgroupId ? l / kSubgroupWidth
                                            : l - first;
        }
        return out;
    }
    const uint64_t* a = eval(e.a, m);
    const uint64_t* b = e.b != kNone ? eval(e.b, m) : nullptr;
    whole_subgroups(e.stmt, op_name(fn), m);
    for (uint32_t first = 0; first < n_; first += kSubgroupWidth) {
        const uint32_t end = std::min(n_, first + kSubgroupWidth);
        if (!m[first]) continue; // not reached: whole_subgroups saw to the rest
        switch (fn) {
        case Fn::Ballot:
        case Fn::Any:
        case Fn::All: {
            uint64_t bits = 0;
            for (uint32_t l = first; l < end; ++l)
                bits |= uint64_t(get<bool>(a[l])) << (l - first);
            const uint64_t every = end - first == 64 ? ~0ull : (1ull << (end - first)) - 1;
            const uint64_t v = fn == Fn::Ballot ? bits : fn == Fn::Any ? bits != 0 : bits == every;
            std::fill(out + first, out + end, v);
            break;
        }
        case Fn::Shuffle:
        case Fn::ShuffleXor:
        case Fn::ShuffleUp:
        case Fn::ShuffleDown:
            for (uint32_t l = first; l < end; ++l)
                out[l] = a[source_lane(e, l, b[l])];
            break;
        default:
            with_arithmetic(e.type, [&]<class C>(Tag<C>) {
                // Lane order, one after another: the reduction the other backends' trees
                // compute up to the rounding of float sums.
                C acc = get<C>(a[first]);
                for (uint32_t l = first + 1; l < end; ++l)
                    acc = combine(fn, acc, get<C>(a[l]));
                if (fn == Fn::ReduceAdd || fn == Fn::ReduceMin || fn == Fn::ReduceMax) {
                    std::fill(out + first, out + end, put<C>(acc));
                    return;
                }
                C sum = C(0);
                for (uint32_t l = first; l < end; ++l) {
                    const C here = get<C>(a[l]);
                    if (fn == Fn::ScanInclusiveAdd) sum = combine(Fn::ReduceAdd, sum, here);
                    out[l] = put<C>(sum);
                    if (fn == Fn::ScanExclusiveAdd) sum = combine(Fn::ReduceAdd, sum, here);
                }
            });
            break;
        }
    }
    return out;
}

} // namespace plx_interp
