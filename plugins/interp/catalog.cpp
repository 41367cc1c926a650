// The intrinsic catalog as the interpreter sees it: the descriptor's table (every entry of
// intrinsics.def) and the callable ones resolved to an implementation and a typed signature.
#include "interp_plugin.hpp"

#include <map>
#include <mutex>

namespace plx_interp {
namespace {

struct CatalogEntry {
    const char* name;
    const char* signature; // "f32(f32,f32)", "i32(global*i32,i32)"
};

#define PLX_CATALOG_CLASSES PLX_CLASS_ALL
const CatalogEntry kCatalog[] = {
#define PLX_INTRINSIC(id, signature, convergence, opencl_c, cuda_c, nvvm) {#id, signature},
#include <plexus/intrinsics.def>
#undef PLX_INTRINSIC
};

// The interpreter implements every intrinsic itself, so there is no spelling and no host_fn.
const plx_intrinsic kIntrinsics[] = {
#define PLX_INTRINSIC(id, signature, convergence, opencl_c, cuda_c, nvvm)                          \
    {.name = #id, .spelling = nullptr, .host_fn = nullptr, .flags = 0},
#include <plexus/intrinsics.def>
#undef PLX_INTRINSIC
};

struct NamedFn {
    const char* base;
    Fn fn;
};
// Index functions end in _x/_y/_z, math functions in _f32/_f64.
const NamedFn kIndexFns[] = {{"local_id", Fn::LocalId},     {"group_id", Fn::GroupId},
                             {"local_size", Fn::LocalSize}, {"num_groups", Fn::NumGroups},
                             {"global_id", Fn::GlobalId},   {"global_size", Fn::GlobalSize}};
const NamedFn kMathFns[] = {
    {"sqrt", Fn::Sqrt},
    {"rsqrt", Fn::Rsqrt},
    {"exp", Fn::Exp},
    {"exp2", Fn::Exp2},
    {"log", Fn::Log},
    {"log2", Fn::Log2},
    {"sin", Fn::Sin},
    {"cos", Fn::Cos},
    {"tan", Fn::Tan},
    {"pow", Fn::Pow},
    {"fabs", Fn::Fabs},
    {"floor", Fn::Floor},
    {"ceil", Fn::Ceil},
    {"fma", Fn::Fma},
    {"min", Fn::Min},
    {"max", Fn::Max},
    {"clamp", Fn::Clamp},
    {"ldexp", Fn::Ldexp},
    {"ilogb", Fn::Ilogb},
    // px::fast::: the precise functions, which meet every fast bound
    {"fast_exp", Fn::Exp},
    {"fast_exp2", Fn::Exp2},
    {"fast_exp10", Fn::Exp10},
    {"fast_log", Fn::Log},
    {"fast_log2", Fn::Log2},
    {"fast_log10", Fn::Libm_log10},
    {"fast_sin", Fn::Sin},
    {"fast_cos", Fn::Cos},
    {"fast_tan", Fn::Tan},
    {"fast_pow", Fn::Pow},
    {"fast_sqrt", Fn::Sqrt},
    {"fast_rsqrt", Fn::Rsqrt},
    {"fast_divide", Fn::Divide},
    {"fast_recip", Fn::Recip},
#define PLX_LIBM1(fn) {#fn, Fn::Libm_##fn},
#define PLX_LIBM2(fn) {#fn, Fn::Libm_##fn},
#include <plexus/libm.def>
#undef PLX_LIBM1
#undef PLX_LIBM2
};

// Subgroup operations: "subgroup_" + one of these, then (for the typed ones) "_" + the type.
const NamedFn kSubgroupFns[] = {{"size", Fn::SubgroupSize},
                                {"id", Fn::SubgroupId},
                                {"lane_id", Fn::LaneId},
                                {"ballot", Fn::Ballot},
                                {"any", Fn::Any},
                                {"all", Fn::All},
                                {"shuffle", Fn::Shuffle},
                                {"shuffle_xor", Fn::ShuffleXor},
                                {"shuffle_up", Fn::ShuffleUp},
                                {"shuffle_down", Fn::ShuffleDown},
                                {"reduce_add", Fn::ReduceAdd},
                                {"reduce_min", Fn::ReduceMin},
                                {"reduce_max", Fn::ReduceMax},
                                {"scan_inclusive_add", Fn::ScanInclusiveAdd},
                                {"scan_exclusive_add", Fn::ScanExclusiveAdd}};

std::optional<Fn> subgroup_fn(std::string_view op) {
    for (auto& f : kSubgroupFns)
        if (op == f.base) return f.fn;
    if (const size_t cut = op.rfind('_');
        cut != std::string_view::npos && ty_from_string(op.substr(cut + 1)))
        for (auto& f : kSubgroupFns)
            if (op.substr(0, cut) == f.base) return f.fn;
    return std::nullopt;
}

// Rows that are statements, not calls: barrier, fences, atomics, and the matrix_* rows (the
// shapes and types of fragments, which Matrix statements run: matrix.cpp).
bool statement_like(std::string_view name) {
    return name == "barrier" || name.rfind("atomic_", 0) == 0 || name.rfind("fence_", 0) == 0 ||
           name.rfind("matrix_", 0) == 0;
}

std::optional<Ty> parse_type(std::string_view s) {
    if (s == "void") return Ty::Void;
    return ty_from_string(s);
}

// "f32(f32,f32)" -> result and arguments; pointer arguments never reach here.
bool parse_signature(std::string_view sig, CallInfo& info) {
    const size_t open = sig.find('('), close = sig.rfind(')');
    if (open == std::string_view::npos || close != sig.size() - 1) return false;
    auto result = parse_type(sig.substr(0, open));
    if (!result) return false;
    info.result = *result;
    std::string_view rest = sig.substr(open + 1, close - open - 1);
    while (!rest.empty()) {
        const size_t comma = rest.find(',');
        auto arg = parse_type(rest.substr(0, comma));
        if (!arg || *arg == Ty::Void) return false;
        info.args.push_back(*arg);
        rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    }
    return true;
}

std::optional<CallInfo> implement(std::string_view name) {
    CallInfo info{};
    if (name.rfind("subgroup_", 0) == 0) {
        const auto fn = subgroup_fn(name.substr(9));
        if (!fn) return std::nullopt;
        info.fn = *fn;
        return info;
    }
    const size_t underscore = name.rfind('_');
    if (underscore == std::string_view::npos) return std::nullopt;
    const std::string_view base = name.substr(0, underscore), suffix = name.substr(underscore + 1);
    if (suffix == "x" || suffix == "y" || suffix == "z") {
        for (auto& f : kIndexFns)
            if (base == f.base) {
                info.fn = f.fn;
                info.dim = static_cast<uint8_t>(suffix[0] - 'x');
                return info;
            }
    } else if (suffix == "f32" || suffix == "f64") {
        for (auto& f : kMathFns)
            if (base == f.base) {
                info.fn = f.fn;
                return info;
            }
    }
    return std::nullopt;
}

std::once_flag g_once;
std::map<std::string, CallInfo, std::less<>> g_calls;
std::string g_setup_error;

void build() {
    for (auto& entry : kCatalog) {
        const std::string_view name = entry.name;
        if (statement_like(name)) continue;
        auto info = implement(name);
        if (!info) {
            g_setup_error = "catalog intrinsic \"" + std::string(name) +
                            "\" has no implementation in the interpreter";
            return;
        }
        if (!parse_signature(entry.signature, *info)) {
            g_setup_error = "catalog intrinsic \"" + std::string(name) +
                            "\" has a signature the interpreter cannot read: " + entry.signature;
            return;
        }
        g_calls.emplace(std::string(name), std::move(*info));
    }
}

} // namespace

const plx_intrinsic* intrinsic_table(uint32_t* count) noexcept {
    *count = sizeof kIntrinsics / sizeof kIntrinsics[0];
    return kIntrinsics;
}

bool catalog_setup(std::string& error) {
    std::call_once(g_once, build);
    error = g_setup_error;
    return g_setup_error.empty();
}

bool catalog_has(std::string_view name) {
    for (auto& entry : kCatalog)
        if (name == entry.name) return true;
    return false;
}

const CallInfo* find_call(std::string_view name, std::string& why) {
    auto it = g_calls.find(name);
    if (it != g_calls.end()) return &it->second;
    why = !catalog_has(name)
              ? "unknown intrinsic \"" + std::string(name) + "\""
              : "intrinsic \"" + std::string(name) +
                    "\" is a statement (Barrier, Fence, Atomic or Matrix), not a call";
    return nullptr;
}

} // namespace plx_interp
