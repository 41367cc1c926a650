// module_load, module_unload, kernel_get: a module holds the Program the loader (loader.hpp)
// reads from IR JSON; a failed load is PLX_ERROR_COMPILE with the JSON path.
#include "loader.hpp"

#include <new>

namespace plx_interp {

const char* ty_name(Ty t) {
    static constexpr const char* names[] = {"void", "bool", "i8",  "u8",  "i16",  "u16", "i32",
                                            "u32",  "i64",  "u64", "f16", "bf16", "f32", "f64"};
    return names[static_cast<int>(t)];
}
uint32_t ty_size(Ty t) {
    static constexpr uint32_t sizes[] = {0, 1, 1, 1, 2, 2, 4, 4, 8, 8, 2, 2, 4, 8};
    return sizes[static_cast<int>(t)];
}
std::optional<Ty> ty_from_string(std::string_view s) {
    for (int i = 1; i <= static_cast<int>(Ty::F64); ++i)
        if (s == ty_name(static_cast<Ty>(i))) return static_cast<Ty>(i);
    return std::nullopt;
}

plx_status module_load(plx_device device, plx_language language, const char* source,
                       size_t source_bytes, const char* /*options: none are defined*/,
                       plx_module* module) {
    if (!plx_support::is_host_device(device))
        return fail(PLX_ERROR_INVALID_ARGUMENT, "interp: module_load: not an interp device");
    if (!module) return fail(PLX_ERROR_INVALID_ARGUMENT, "interp: module_load: module is NULL");
    if (language != PLX_LANG_PLEXUS_IR_JSON && language != PLX_LANG_PLEXUS_IR2_JSON)
        return fail(PLX_ERROR_UNSUPPORTED,
                    "interp: module_load: language " + std::to_string(language) +
                        " is neither PLX_LANG_PLEXUS_IR_JSON nor PLX_LANG_PLEXUS_IR2_JSON");
    if (!source && source_bytes)
        return fail(PLX_ERROR_INVALID_ARGUMENT, "interp: module_load: source is NULL");
    json j;
    try {
        j = json::parse(source, source + source_bytes);
    } catch (const json::exception& e) {
        return fail(PLX_ERROR_COMPILE,
                    std::string("interp: module_load: not valid JSON: ") + e.what());
    }
    auto* m = new (std::nothrow) plx_module_s;
    if (!m) return fail(PLX_ERROR_OUT_OF_MEMORY, "interp: module_load: out of host memory");
    try {
        Loader(m->kernel.program).kernel(j);
    } catch (const CompileError& e) {
        std::string message = "interp: module_load: ";
        if (!m->kernel.program.name.empty())
            message += "kernel \"" + m->kernel.program.name + "\": ";
        delete m;
        return fail(PLX_ERROR_COMPILE, message + e.message);
    } catch (...) {
        delete m;
        throw;
    }
    try {
        track(m);
        track(&m->kernel, nullptr); // freed with its module
    } catch (...) {
        untrack(m);
        delete m;
        throw;
    }
    *module = m;
    return PLX_OK;
}

void module_unload(plx_module module) {
    if (!live(module)) return;
    untrack(&module->kernel);
    untrack(module);
    delete module;
}

plx_status kernel_get(plx_module module, const char* name, plx_kernel* kernel) {
    if (!live(module))
        return fail(PLX_ERROR_INVALID_ARGUMENT, "interp: kernel_get: not an interp module");
    if (!name || !kernel)
        return fail(PLX_ERROR_INVALID_ARGUMENT, "interp: kernel_get: name or kernel is NULL");
    if (module->kernel.program.name != name)
        return fail(PLX_ERROR_NOT_FOUND,
                    std::string("interp: kernel_get: the module has no kernel \"") + name +
                        "\" (it holds \"" + module->kernel.program.name + "\")");
    *kernel = &module->kernel;
    return PLX_OK;
}

} // namespace plx_interp
