// compile_host for a plexus built without LLVM: host code generation is not available.
#include "plexus/codegen.hpp"
#include "plexus/error.hpp"

namespace plexus::codegen {

std::unique_ptr<HostKernel> compile_host(const ir::Kernel&, const Options&) {
    throw Error(ErrorCode::Unsupported,
                "host code generation was not built: reconfigure with -Dllvm=enabled");
}

} // namespace plexus::codegen
