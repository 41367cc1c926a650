// Builds the intrinsic catalog once from intrinsics.def and parses each signature.
#include "plexus/catalog.hpp"
#include "plexus/error.hpp"
#include "plexus/plugin.h"

#include <map>

namespace plexus {
namespace {

ir::Scalar parse_type(std::string_view t, const std::string& name) {
    if (t == "void") return ir::Scalar::Void;
    if (auto s = ir::scalar_from_string(t)) return *s;
    throw Error(ErrorCode::Internal,
                "intrinsic catalog: bad type '" + std::string(t) + "' in the signature of " + name);
}

IntrinsicInfo make_info(const char* name, const char* sig, Convergence conv, const char* ocl,
                        const char* cuda, const char* nvvm) {
    IntrinsicInfo info{name, sig, conv, ocl, cuda, nvvm, ir::Scalar::Void, {}, {}};
    std::string_view s(sig);
    auto open = s.find('(');
    info.result = parse_type(s.substr(0, open), info.name);
    std::string_view rest = s.substr(open + 1, s.size() - open - 2);
    while (!rest.empty()) {
        auto comma = rest.find(',');
        std::string_view arg = rest.substr(0, comma);
        auto star = arg.find('*');
        info.arg_is_pointer.push_back(star != std::string_view::npos);
        info.args.push_back(
            parse_type(star == std::string_view::npos ? arg : arg.substr(star + 1), info.name));
        rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    }
    return info;
}

} // namespace

const std::vector<IntrinsicInfo>& intrinsic_catalog() {
    static const std::vector<IntrinsicInfo> catalog = [] {
        constexpr Convergence NONE = Convergence::None, VARYING = Convergence::Varying,
                              UNIFORM = Convergence::Uniform, BARRIER = Convergence::Barrier,
                              SUBGROUP = Convergence::Subgroup;
        std::vector<IntrinsicInfo> v;
        uint32_t klass = 0;
#define PLX_CATALOG_CLASSES PLX_CLASS_ALL
#define PLX_INTRINSIC_SECTION(cls) klass = PLX_CLASS_##cls;
#define PLX_INTRINSIC(name, sig, conv, ocl, cuda, nvvm)                                            \
    v.push_back(make_info(#name, sig, conv, ocl, cuda, nvvm));                                     \
    v.back().capability_class = klass;
#include "plexus/intrinsics.def"
#undef PLX_INTRINSIC
#undef PLX_INTRINSIC_SECTION
        (void)NONE, (void)VARYING, (void)UNIFORM, (void)BARRIER, (void)SUBGROUP;
        return v;
    }();
    return catalog;
}

const IntrinsicInfo* find_intrinsic(std::string_view name) {
    static const std::map<std::string, const IntrinsicInfo*, std::less<>> index = [] {
        std::map<std::string, const IntrinsicInfo*, std::less<>> m;
        for (const auto& info : intrinsic_catalog())
            m.emplace(info.name, &info);
        return m;
    }();
    auto it = index.find(name);
    return it == index.end() ? nullptr : it->second;
}

const std::vector<uint32_t>& capability_classes() {
    static const std::vector<uint32_t> classes = {PLX_CLASS_CORE, PLX_CLASS_ATOMICS, PLX_CLASS_MATH,
                                                  PLX_CLASS_SUBGROUP, PLX_CLASS_MATRIX};
    return classes;
}

const char* capability_class_name(uint32_t klass) {
    switch (klass) {
    case PLX_CLASS_CORE: return "core";
    case PLX_CLASS_ATOMICS: return "atomics";
    case PLX_CLASS_MATH: return "math";
    case PLX_CLASS_SUBGROUP: return "subgroup";
    case PLX_CLASS_MATRIX: return "matrix";
    default: return "unknown";
    }
}

uint32_t capability_class_since_minor(uint32_t klass) {
    switch (klass) {
    case PLX_CLASS_SUBGROUP: return 2;
    case PLX_CLASS_MATRIX: return 3;
    default: return 0;
    }
}

uint32_t subgroup_feature(std::string_view name) {
    if (name.rfind("subgroup_", 0) != 0) return 0;
    name.remove_prefix(9);
    if (name.rfind("shuffle_up_", 0) == 0 || name.rfind("shuffle_down_", 0) == 0)
        return PLX_SUBGROUP_SHUFFLE_RELATIVE;
    if (name.rfind("shuffle_", 0) == 0) return PLX_SUBGROUP_SHUFFLE;
    if (name == "ballot") return PLX_SUBGROUP_BALLOT;
    return PLX_SUBGROUP_BASIC;
}

const char* subgroup_feature_name(uint32_t feature) {
    switch (feature) {
    case PLX_SUBGROUP_BASIC: return "subgroups (cl_khr_subgroups)";
    case PLX_SUBGROUP_SHUFFLE: return "subgroup shuffles (cl_khr_subgroup_shuffle)";
    case PLX_SUBGROUP_SHUFFLE_RELATIVE:
        return "subgroup shuffle_up/down (cl_khr_subgroup_shuffle_relative)";
    case PLX_SUBGROUP_BALLOT: return "subgroup ballot (cl_khr_subgroup_ballot)";
    default: return "subgroup operations";
    }
}

uint32_t matrix_feature(std::string_view name) {
    if (name.rfind("matrix_", 0) != 0) return 0;
    if (name.find("_m64n") != std::string_view::npos) return PLX_MATRIX_WARPGROUP;
    if (name.find("_tf32") != std::string_view::npos || name.find("k8_") != std::string_view::npos)
        return PLX_MATRIX_TF32;
    if (name.ends_with("_bf16")) return PLX_MATRIX_BF16;
    if (name == "matrix_acc_m16n16k16_f32") return PLX_MATRIX_F16 | PLX_MATRIX_BF16;
    return PLX_MATRIX_F16;
}

std::string matrix_feature_name(uint32_t feature) {
    std::string s;
    if (feature & PLX_MATRIX_F16) s += "f16";
    if (feature & PLX_MATRIX_BF16) s += s.empty() ? "bf16" : " or bf16";
    if (feature & PLX_MATRIX_TF32) s += s.empty() ? "tf32" : " or tf32";
    if (feature == PLX_MATRIX_WARPGROUP)
        return "warpgroup matrix operations (m64 accumulators, mma_shared)";
    return "matrix fragments of " + s;
}

} // namespace plexus
