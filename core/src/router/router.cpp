// rank_candidates: the filters (config, device selector, the kernel's needs) and the ranking.
#include "plexus/router.hpp"

#include "plexus/catalog.hpp"

#include <algorithm>
#include <cctype>
#include <climits>

namespace plexus {

namespace {

std::string lower(std::string s) {
    for (char& c : s)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

std::string join(const std::set<std::string>& names) {
    std::string s;
    for (const auto& n : names)
        s += (s.empty() ? "" : ", ") + n;
    return s;
}

// Why the pair cannot run the kernel, or "" when it can.
std::string drop_reason(const Backend& b, const DeviceInfo& d, const KernelNeeds& needs,
                        const BackendConfig* cfg) {
    if (cfg != nullptr && cfg->enabled == false)
        return "disabled by backends." + b.name() + ".enabled";
    if (cfg != nullptr && cfg->devices && !device_selected(*cfg->devices, d))
        return "not selected by backends." + b.name() + ".devices \"" + *cfg->devices + "\" (" +
               to_string(d.type) + ", platform \"" + d.platform + "\")";
    if (!needs.routine.empty()) {
        const auto& langs = b.languages();
        if (std::find(langs.begin(), langs.end(), PLX_LANG_ROUTINE) == langs.end())
            return "offers no library routines (the kernel is routine " + needs.routine + ")";
    } else if (b.exec_model() != ExecModel::Direct && !needs.languages_available.empty()) {
        bool any = false;
        std::string langs;
        for (plx_language l : b.languages()) {
            any = any || needs.languages_available.count(l) != 0;
            langs += (langs.empty() ? "" : ", ") + std::string(to_string(l));
        }
        if (!any) return "no code generator for its languages (" + langs + ")";
    }
    if (needs.ir_v2 && b.exec_model() == ExecModel::Custom &&
        std::find(b.languages().begin(), b.languages().end(), PLX_LANG_PLEXUS_IR2_JSON) ==
            b.languages().end())
        return "the kernel needs schema plexus-ir/2 (records, variants, vectors, f16, small "
               "integers, private "
               "arrays or a declared work-group size) and the plugin reads only plexus-ir/1";
    if (needs.has_native_blocks && needs.native_backends.count(b.name()) == 0 &&
        !needs.native_fallback)
        return "the kernel's native blocks have no entry for " + b.name() + " (only " +
               join(needs.native_backends) + ") and no portable fallback";
    // Warpgroup accumulators imply subgroup_id (collect_uses): where they run as plain
    // arithmetic each subgroup finds its rows by it, whether or not the kernel calls it.
    const bool warpgroup =
        std::any_of(needs.intrinsics.begin(), needs.intrinsics.end(),
                    [](const std::string& n) { return n.starts_with("matrix_acc_m64n"); });
    for (const std::string& name : needs.intrinsics) {
        const std::string what =
            name == "subgroup_id" && warpgroup
                ? name + " (the kernel's warpgroup accumulators use it to find each subgroup's "
                         "rows)"
                : name;
        if (!b.has_intrinsic(name)) return "lacks intrinsic " + what;
        const uint32_t feature = subgroup_feature(name);
        if (feature && d.subgroup_ops && (*d.subgroup_ops & feature) == 0)
            return d.subgroup_ops_unstated
                       ? "the plugin states no subgroup operations for the device (its "
                         "subgroup_ops lacks PLX_SUBGROUP_KNOWN), and " +
                             what + " is one"
                       : std::string("the device lacks ") + subgroup_feature_name(feature) +
                             ", which " + what + " needs";
        const uint32_t matrix = matrix_feature(name);
        if (matrix && d.matrix_ops && (*d.matrix_ops & matrix) == 0)
            return d.matrix_ops_unstated
                       ? "the plugin states no matrix operations for the device (its "
                         "matrix_ops lacks PLX_MATRIX_KNOWN), and " +
                             name + " is one"
                       : "the device lacks " + matrix_feature_name(matrix) + ", which " + name +
                             " needs";
    }
    if (needs.fp64 && !d.fp64) return "the device has no fp64 support";
    if (needs.local_memory_bytes > d.local_memory_bytes)
        return "the device lacks the local memory: the kernel needs " +
               std::to_string(needs.local_memory_bytes) + " bytes, the device has " +
               std::to_string(d.local_memory_bytes);
    if (needs.work_group_size > 0 && d.max_work_group_size > 0 &&
        needs.work_group_size > d.max_work_group_size)
        return "work-group size " + std::to_string(needs.work_group_size) +
               " exceeds the device's maximum " + std::to_string(d.max_work_group_size);
    return {};
}

struct Ranked {
    Candidate c;
    int prefer = INT_MAX;
};

} // namespace

double device_score(const DeviceInfo& d) {
    int type = 0;
    switch (d.type) {
    case DeviceType::GPU: type = 3; break;
    case DeviceType::Accelerator: type = 2; break;
    case DeviceType::CPU: type = 1; break;
    case DeviceType::Other: type = 0; break;
    }
    return type * 1e7 + d.compute_units;
}

bool device_selected(const std::string& selector, const DeviceInfo& d) {
    const std::string s = lower(selector);
    if (s == "all") return true;
    if (s == "gpu") return d.type == DeviceType::GPU;
    if (s == "cpu") return d.type == DeviceType::CPU;
    if (s == "accelerator") return d.type == DeviceType::Accelerator;
    return lower(d.platform).find(s) != std::string::npos ||
           lower(d.name).find(s) != std::string::npos;
}

std::vector<Candidate> rank_candidates(const std::vector<const Backend*>& backends,
                                       const KernelNeeds& needs, const Config& config) {
    const std::vector<std::string>* prefer = nullptr;
    if (auto k = config.kernels.find(needs.kernel); k != config.kernels.end())
        prefer = &k->second.prefer;

    std::vector<Ranked> all;
    for (const Backend* b : backends) {
        if (b == nullptr) continue;
        auto it = config.backends.find(b->name());
        const BackendConfig* cfg = it == config.backends.end() ? nullptr : &it->second;
        int prefer_index = INT_MAX;
        if (prefer != nullptr)
            if (auto p = std::find(prefer->begin(), prefer->end(), b->name()); p != prefer->end())
                prefer_index = static_cast<int>(p - prefer->begin());

        for (uint32_t i = 0; i < b->devices().size(); ++i) {
            const DeviceInfo& d = b->devices()[i];
            Ranked r;
            r.prefer = prefer_index;
            r.c.backend = b->name();
            r.c.device_index = i;
            r.c.device_name = d.name;
            r.c.backend_ptr = b;
            r.c.device_score = device_score(d);

            std::string why_priority;
            if (cfg != nullptr && cfg->priority) {
                r.c.priority = *cfg->priority;
                why_priority = "priority " + std::to_string(r.c.priority) + " (config)";
            } else if (d.type == DeviceType::CPU && b->exec_model() != ExecModel::Direct) {
                r.c.priority = b->plugin_priority() - kDriverCpuPenalty;
                why_priority = "priority " + std::to_string(r.c.priority) + " (plugin default " +
                               std::to_string(b->plugin_priority()) + " - " +
                               std::to_string(kDriverCpuPenalty) + " for a CPU behind a " +
                               to_string(b->exec_model()) + " driver)";
            } else {
                r.c.priority = b->plugin_priority();
                why_priority = "priority " + std::to_string(r.c.priority) + " (plugin default)";
            }

            std::string drop = drop_reason(*b, d, needs, cfg);
            r.c.kept = drop.empty();
            if (r.c.kept) {
                r.c.reason = why_priority + ", " + to_string(d.type) + ", " +
                             std::to_string(d.compute_units) + " compute units";
                if (prefer_index != INT_MAX)
                    r.c.reason = "preferred #" + std::to_string(prefer_index + 1) + " for kernel " +
                                 needs.kernel + ", " + r.c.reason;
            } else {
                r.c.reason = drop;
            }
            all.push_back(std::move(r));
        }
    }

    std::sort(all.begin(), all.end(), [](const Ranked& a, const Ranked& b) {
        if (a.c.kept != b.c.kept) return a.c.kept;
        if (a.prefer != b.prefer) return a.prefer < b.prefer;
        if (a.c.priority != b.c.priority) return a.c.priority > b.c.priority;
        if (a.c.device_score != b.c.device_score) return a.c.device_score > b.c.device_score;
        if (a.c.backend != b.c.backend) return a.c.backend < b.c.backend;
        return a.c.device_index < b.c.device_index;
    });
    std::vector<Candidate> out;
    out.reserve(all.size());
    for (auto& r : all)
        out.push_back(std::move(r.c));
    return out;
}

} // namespace plexus
