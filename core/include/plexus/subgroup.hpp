// Subgroup operations of the kernel language: the work-items of a group split, in the order of
// their linear local id, into subgroups of the device's width (32 on NVIDIA GPUs, 1 on the
// native backend), and these exchange values among the work-items of one subgroup without
// shared memory (docs/kernel-language.md, "Subgroups"). Each is collective: every work-item
// of the subgroup must reach it, which the validator checks like a barrier.
#pragma once

#include "plexus/kernel.hpp"

#include <string>

namespace plexus {

namespace detail {
// The catalog's suffix of the six types subgroup operations take; "" for any other.
template <class T> constexpr const char* subgroup_suffix() {
    if constexpr (std::same_as<T, int32_t>)
        return "i32";
    else if constexpr (std::same_as<T, uint32_t>)
        return "u32";
    else if constexpr (std::same_as<T, int64_t>)
        return "i64";
    else if constexpr (std::same_as<T, uint64_t>)
        return "u64";
    else if constexpr (std::same_as<T, float>)
        return "f32";
    else if constexpr (std::same_as<T, double>)
        return "f64";
    else
        return "";
}

// The catalog call "subgroup_<op>_<type>" on v (and on `arg`, a u32, when given). Other numbers
// go through a type of the six that holds them exactly (half and bf16 through f32, 8- and
// 16-bit integers through 32 bits, which wraps an add as the narrow type would); a vector goes
// lane by lane.
template <class T>
ir::Expr subgroup_call(const std::string& op, const ir::Expr& v, const ir::Expr& arg) {
    if constexpr (is_vec_v<T>) {
        std::vector<ir::Expr> lanes;
        for (uint8_t l = 0; l < T::lanes; ++l)
            lanes.push_back(subgroup_call<typename T::element>(op, ir::Swizzle::make(v, {l}), arg));
        return ir::Construct::make(type_of<T>(), std::move(lanes));
    } else {
        static_assert(
            KernelScalar<T> && !std::same_as<T, bool>,
            "subgroup operations take numbers and vectors of numbers (px::ballot, px::any "
            "and px::all take a bool); a record or variant goes field by field");
        using Wide = std::conditional_t<FloatLike<T>, float,
                                        std::conditional_t<std::is_signed_v<T>, int32_t, uint32_t>>;
        if constexpr (*subgroup_suffix<T>() == '\0') {
            ir::Expr wide = subgroup_call<Wide>(op, ir::Cast::make(scalar_v<Wide>, v), arg);
            return ir::Cast::make(scalar_v<T>, wide);
        } else {
            std::vector<ir::Expr> args{v};
            if (arg) args.push_back(arg);
            return ir::Call::make("subgroup_" + op + "_" + subgroup_suffix<T>(), std::move(args));
        }
    }
}

// A lane, mask or distance as the u32 the catalog takes: an int or a u32 value, or a number.
template <class L> ir::Expr subgroup_lane(const L& lane) {
    if constexpr (IsValue<L>) {
        if constexpr (std::same_as<vt<L>, uint32_t>)
            return lane.expr();
        else
            return cast<uint32_t>(lift<int32_t>(lane)).expr();
    } else {
        return lift<uint32_t>(static_cast<uint32_t>(lane)).expr();
    }
}

// A u32 index intrinsic ("subgroup_size") as an int, like px::local_size.
inline Value<int32_t> subgroup_index(const char* name) {
    return cast<int32_t>(Value<uint32_t>(ir::Call::make(name, {})));
}
} // namespace detail

// The number of work-items of the calling work-item's subgroup (the device's subgroup width,
// or fewer in a group's last subgroup when the group size is not a multiple of it).
inline Value<int32_t> subgroup_size() {
    return detail::subgroup_index("subgroup_size");
}
// The subgroup's index within the group, and the work-item's lane within its subgroup
// (0 .. subgroup_size() - 1): linear local id = subgroup_id() * width + lane_id().
inline Value<int32_t> subgroup_id() {
    return detail::subgroup_index("subgroup_id");
}
inline Value<int32_t> lane_id() {
    return detail::subgroup_index("subgroup_lane_id");
}

// v of lane `lane` of the subgroup; the lane must exist (the interpreter checks it, other
// backends give an undefined value).
template <IsValue X, class L> Value<detail::vt<X>> shuffle(const X& v, const L& lane) {
    return Value<detail::vt<X>>(
        detail::subgroup_call<detail::vt<X>>("shuffle", v.expr(), detail::subgroup_lane(lane)));
}
// v of lane lane_id() ^ mask, which must exist.
template <IsValue X, class L> Value<detail::vt<X>> shuffle_xor(const X& v, const L& mask) {
    return Value<detail::vt<X>>(
        detail::subgroup_call<detail::vt<X>>("shuffle_xor", v.expr(), detail::subgroup_lane(mask)));
}
// v of lane lane_id() - delta; a lane with no such lane (lane_id() < delta) gets its own v.
template <IsValue X, class L> Value<detail::vt<X>> shuffle_up(const X& v, const L& delta) {
    return Value<detail::vt<X>>(
        detail::subgroup_call<detail::vt<X>>("shuffle_up", v.expr(), detail::subgroup_lane(delta)));
}
// v of lane lane_id() + delta; past the subgroup's last lane, its own v.
template <IsValue X, class L> Value<detail::vt<X>> shuffle_down(const X& v, const L& delta) {
    return Value<detail::vt<X>>(detail::subgroup_call<detail::vt<X>>("shuffle_down", v.expr(),
                                                                     detail::subgroup_lane(delta)));
}

// Bit l set when `pred` holds on lane l, for lanes 0 .. 63 (a subgroup wider than 64, such as
// an OpenCL CPU device's whole-row subgroups, reports its first 64 lanes).
inline Value<uint64_t> ballot(const Value<bool>& pred) {
    return Value<uint64_t>(ir::Call::make("subgroup_ballot", {pred.expr()}));
}
// Whether `pred` holds on some / on every lane of the subgroup.
inline Value<bool> any(const Value<bool>& pred) {
    return Value<bool>(ir::Call::make("subgroup_any", {pred.expr()}));
}
inline Value<bool> all(const Value<bool>& pred) {
    return Value<bool>(ir::Call::make("subgroup_all", {pred.expr()}));
}

// The sum, minimum or maximum of v over the subgroup, on every lane. Float sums are added in
// an order each backend chooses, so they may differ in the last bits between backends.
#define PLEXUS_SUBGROUP_OP(fn, op)                                                                 \
    template <IsValue X> Value<detail::vt<X>> fn(const X& v) {                                     \
        return Value<detail::vt<X>>(detail::subgroup_call<detail::vt<X>>(op, v.expr(), nullptr));  \
    }
PLEXUS_SUBGROUP_OP(subgroup_reduce_add, "reduce_add")
PLEXUS_SUBGROUP_OP(subgroup_reduce_min, "reduce_min")
PLEXUS_SUBGROUP_OP(subgroup_reduce_max, "reduce_max")
// Prefix sums over the lanes: inclusive (lanes 0..l) and exclusive (lanes 0..l-1; 0 on lane 0).
PLEXUS_SUBGROUP_OP(subgroup_scan_inclusive_add, "scan_inclusive_add")
PLEXUS_SUBGROUP_OP(subgroup_scan_exclusive_add, "scan_exclusive_add")
#undef PLEXUS_SUBGROUP_OP

} // namespace plexus
