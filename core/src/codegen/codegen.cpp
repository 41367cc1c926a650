// The language table and the generator factory: the one list of the languages plugin.h names.
#include "plexus/codegen.hpp"

namespace plexus::codegen {

const std::vector<Language>& languages() {
    static const std::vector<Language> table = {
        {PLX_LANG_PTX, "ptx", "ptx", "cuda", make_ptx_codegen, true},
        {PLX_LANG_CUDA_C, "cuda_c", "cuda-c", "cuda", make_cuda_c_codegen, true},
        {PLX_LANG_OPENCL_C, "opencl_c", "opencl-c", "opencl", make_opencl_codegen, true},
        {PLX_LANG_PLEXUS_IR_JSON, "plexus_ir_json", nullptr, nullptr, nullptr, true},
        {PLX_LANG_CUDA_BINARY, "cuda_binary", nullptr, nullptr, nullptr, false},
        {PLX_LANG_PLEXUS_IR2_JSON, "plexus_ir2_json", nullptr, nullptr, nullptr, true},
        {PLX_LANG_OPENCL_BINARY, "opencl_binary", nullptr, nullptr, nullptr, false},
        {PLX_LANG_ROUTINE, "routine", nullptr, nullptr, nullptr, false},
    };
    return table;
}

const Language* find_language(plx_language id) {
    for (const Language& l : languages())
        if (l.id == id) return &l;
    return nullptr;
}

std::unique_ptr<SourceGenerator> make_codegen(plx_language language) {
    const Language* l = find_language(language);
    return l && l->make ? l->make() : nullptr;
}

} // namespace plexus::codegen
