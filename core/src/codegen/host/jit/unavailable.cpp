// compile_host for a plexus built without LLVM: host code generation is not available.
#include "codegen/host/jit/host_kernel.hpp"
#include "plexus/error.hpp"

namespace plexus::codegen {

std::unique_ptr<HostKernel> compile_host(const ir::Kernel&, const Options&) {
    throw Error(ErrorCode::Unsupported,
                "host code generation was not built: reconfigure with -Dllvm=enabled");
}

std::unique_ptr<HostKernel> load_host_object(const ir::Kernel& kernel, const Options& options,
                                             const std::vector<unsigned char>&) {
    return compile_host(kernel, options);
}

std::string host_target_id(const Options&) {
    return "none";
}

unsigned host::vector_bits(const Options&) {
    return 0;
}
unsigned host::full_rate_bits(const Options&) {
    return 0;
}

std::string host_assembly(const ir::Kernel& kernel, const Options& options) {
    compile_host(kernel, options);
    return {};
}

std::string host_llvm_ir(const ir::Kernel& kernel, const Options& options, bool) {
    compile_host(kernel, options);
    return {};
}

std::unique_ptr<HostKernel> host::compile_with_features(const ir::Kernel& kernel,
                                                        const Options& options,
                                                        const std::vector<std::string>&) {
    return compile_host(kernel, options);
}

} // namespace plexus::codegen
