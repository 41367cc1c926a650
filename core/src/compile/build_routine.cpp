// Library routines (plugin.h, "Library routines"): nothing is generated; the plugin loads its
// routine of the kernel's routine name, from its vendor library.
#include "compile/compiler.hpp"

#include <algorithm>

namespace plexus::detail {

void build_routine(Compiled& c, const ir::Kernel& k, const DeviceTarget& d, CompileReport& report) {
    const Backend& b = *d.backend;
    const ErrorContext where{b.name(), d.info->name, k.name, "", "", ""};
    const auto& langs = b.languages();
    if (std::find(langs.begin(), langs.end(), PLX_LANG_ROUTINE) == langs.end() ||
        !b.api().module_load)
        throw Error(ErrorCode::Unsupported,
                    "the backend offers no library routines (routine " + k.routine + ")", where);
    report.language = to_string(PLX_LANG_ROUTINE);
    const auto t_load = std::chrono::steady_clock::now();
    const plx_status s = b.api().module_load(d.device, PLX_LANG_ROUTINE, k.routine.data(),
                                             k.routine.size(), "", &c.module);
    report.load_ms = ms_since(t_load);
    if (s != PLX_OK)
        throw Error(ErrorCode::Unsupported,
                    "routine " + k.routine + " is not offered here: " + b.last_error(), where);
    b.check(b.api().kernel_get(c.module, k.routine.c_str(), &c.kernel), "kernel_get", d.label,
            k.name);
}

} // namespace plexus::detail
