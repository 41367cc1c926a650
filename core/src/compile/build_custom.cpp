// Custom backends (interp, a third party's): the kernel as JSON IR, in the oldest schema it
// fits, for the plugin to load.
#include "compile/compiler.hpp"

#include <algorithm>

namespace plexus::detail {

void build_custom(Compiled& c, const ir::Kernel& k, const DeviceTarget& d, CompileReport& report) {
    const Backend& b = *d.backend;
    auto t_lower = std::chrono::steady_clock::now();
    // A plugin that reads the IR gets warpgroup accumulators as plain arithmetic (each
    // subgroup its 16 rows; the swizzle is then only index arithmetic), and the kernel
    // without min_groups, which only guides the CUDA generators, nor loop unroll hints, which
    // only guide compilers and would make the document "plexus-ir/2.1" (docs/ir.md): one
    // written before those existed still loads the kernel.
    ir::Kernel plain = ir::without_loop_hints(ir::lower_matrix(k, /*only_warpgroup=*/true));
    for (ir::ArrayDecl& a : plain.shared)
        a.swizzle = false;
    plain.work_group.min_groups = 0;
    // The oldest schema the kernel fits, under the language value the plugin lists for it.
    const bool v2 = ir::needs_ir_v2(plain);
    const auto& langs = b.languages();
    const plx_language lang =
        v2 || std::find(langs.begin(), langs.end(), PLX_LANG_PLEXUS_IR_JSON) == langs.end()
            ? PLX_LANG_PLEXUS_IR2_JSON
            : PLX_LANG_PLEXUS_IR_JSON;
    report.language = to_string(lang);
    std::string json = ir::to_json(plain);
    report.lower_ms = ms_since(t_lower);
    report.code_bytes = json.size();
    auto t_load = std::chrono::steady_clock::now();
    plx_status s = b.api().module_load(d.device, lang, json.data(), json.size(), "", &c.module);
    report.load_ms = ms_since(t_load);
    b.check(s, "module_load of the IR", d.label, k.name);
    b.check(b.api().kernel_get(c.module, k.name.c_str(), &c.kernel), "kernel_get", d.label, k.name);
}

} // namespace plexus::detail
