// make_codegen: the generator for a plugin language.
#include "plexus/codegen.hpp"

namespace plexus::codegen {

std::unique_ptr<SourceGenerator> make_codegen(plx_language language) {
    switch (language) {
    case PLX_LANG_OPENCL_C: return make_opencl_codegen();
    case PLX_LANG_CUDA_C: return make_cuda_c_codegen();
    case PLX_LANG_PTX: return make_ptx_codegen();
    default: return nullptr;
    }
}

} // namespace plexus::codegen
