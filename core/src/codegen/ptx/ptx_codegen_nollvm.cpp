// make_ptx_codegen() for a plexus built without LLVM: the generator exists and says why it
// cannot generate, so callers get a clear Unsupported error instead of a missing symbol.
#include "plexus/codegen.hpp"
#include "plexus/error.hpp"

namespace plexus::codegen {
namespace {

class UnbuiltPtxGenerator final : public SourceGenerator {
public:
    plx_language language() const override { return PLX_LANG_PTX; }
    std::string generate(const ir::Kernel& kernel, const Options&) const override {
        ErrorContext context;
        context.kernel = kernel.name;
        throw Error(ErrorCode::Unsupported,
                    "PTX generation was not built: reconfigure with -Dllvm=enabled", context);
    }
};

} // namespace

std::unique_ptr<SourceGenerator> make_ptx_codegen() {
    return std::make_unique<UnbuiltPtxGenerator>();
}

} // namespace plexus::codegen
