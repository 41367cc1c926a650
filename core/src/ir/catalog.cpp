// Builds the intrinsic catalog once from intrinsics.def and parses each signature.
#include "plexus/catalog.hpp"
#include "plexus/error.hpp"

#include <map>

namespace plexus {
namespace {

ir::Scalar parse_type(std::string_view t, const std::string& name) {
    if (t == "void") return ir::Scalar::Void;
    if (auto s = ir::scalar_from_string(t)) return *s;
    throw Error(ErrorCode::Internal, "intrinsic catalog: bad type '" + std::string(t) +
                                         "' in the signature of " + name);
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
        info.args.push_back(parse_type(star == std::string_view::npos ? arg : arg.substr(star + 1),
                                       info.name));
        rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    }
    return info;
}

} // namespace

const std::vector<IntrinsicInfo>& intrinsic_catalog() {
    static const std::vector<IntrinsicInfo> catalog = [] {
        constexpr Convergence NONE = Convergence::None, VARYING = Convergence::Varying,
                              UNIFORM = Convergence::Uniform, BARRIER = Convergence::Barrier;
        std::vector<IntrinsicInfo> v;
#define PLX_INTRINSIC(name, sig, conv, ocl, cuda, nvvm)                                        \
    v.push_back(make_info(#name, sig, conv, ocl, cuda, nvvm));
#include "plexus/intrinsics.def"
#undef PLX_INTRINSIC
        (void)NONE, (void)VARYING, (void)UNIFORM, (void)BARRIER;
        return v;
    }();
    return catalog;
}

const IntrinsicInfo* find_intrinsic(std::string_view name) {
    static const std::map<std::string, const IntrinsicInfo*, std::less<>> index = [] {
        std::map<std::string, const IntrinsicInfo*, std::less<>> m;
        for (const auto& info : intrinsic_catalog()) m.emplace(info.name, &info);
        return m;
    }();
    auto it = index.find(name);
    return it == index.end() ? nullptr : it->second;
}

} // namespace plexus
