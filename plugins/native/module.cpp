// module_load, module_unload, kernel_get (ABI 1.4): the native plugin compiles nothing, so its
// only modules are library routines (PLX_LANG_ROUTINE), one per module, found by routines.cpp.
#include "native_plugin.hpp"

#include <new>
#include <string>
#include <string_view>

namespace plx_native {

plx_status module_load(plx_device device, plx_language language, const char* source,
                       size_t source_bytes, const char* /*options: none are defined*/,
                       plx_module* module) {
    if (!plx_support::is_host_device(device))
        return fail(PLX_ERROR_INVALID_ARGUMENT, "native: module_load: not a native device");
    if (!module) return fail(PLX_ERROR_INVALID_ARGUMENT, "native: module_load: module is NULL");
    // Checked as an integer: a host may pass any 32-bit value.
    if (static_cast<uint32_t>(language) != PLX_LANG_ROUTINE)
        return fail(PLX_ERROR_UNSUPPORTED,
                    "native: module_load: language " +
                        std::to_string(static_cast<uint32_t>(language)) +
                        " is not PLX_LANG_ROUTINE: the native plugin compiles no source (the "
                        "core hands it host functions through launch_host) and loads only "
                        "library routines, by name");
    if (!source && source_bytes)
        return fail(PLX_ERROR_INVALID_ARGUMENT, "native: module_load: source is NULL");
    std::string_view name(source ? source : "", source_bytes);
    // A name passed with its terminating NUL counted is still that name.
    if (!name.empty() && name.back() == '\0') name.remove_suffix(1);
    Routine routine{};
    if (plx_status s = routine_find(name, routine); s != PLX_OK) return s;

    auto* m = new (std::nothrow) plx_module_s;
    if (!m) return fail(PLX_ERROR_OUT_OF_MEMORY, "native: module_load: out of host memory");
    m->kernel.routine = routine;
    try {
        plx_support::track(m);
        plx_support::track(&m->kernel, nullptr); // freed with its module
    } catch (...) {
        plx_support::untrack(m);
        delete m;
        throw;
    }
    *module = m;
    return PLX_OK;
}

void module_unload(plx_module module) {
    if (!live(module)) return;
    plx_support::untrack(&module->kernel);
    plx_support::untrack(module);
    delete module;
}

// A module holds one routine, which every name gives (plugin.h: "kernel_get(module, any name)
// gives the routine").
plx_status kernel_get(plx_module module, const char* name, plx_kernel* kernel) {
    if (!live(module))
        return fail(PLX_ERROR_INVALID_ARGUMENT, "native: kernel_get: not a native module");
    if (!name || !kernel)
        return fail(PLX_ERROR_INVALID_ARGUMENT, "native: kernel_get: name or kernel is NULL");
    *kernel = &module->kernel;
    return PLX_OK;
}

} // namespace plx_native
