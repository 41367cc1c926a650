// cuda_dynamic_shared: the layout of a CUDA kernel's shared arrays in dynamic shared memory.
#include "codegen/cuda_shared.hpp"

#include <algorithm>

namespace plexus::codegen {

CudaDynamicShared cuda_dynamic_shared(const ir::Kernel& kernel) {
    CudaDynamicShared out;
    // 128 bytes: what wmma (32), cp.async (16) and every scalar type need, with room to spare;
    // 1024 for a swizzled array, whose swizzle the tensor cores take from the address bits.
    for (const ir::ArrayDecl& a : kernel.shared) {
        const uint64_t align = a.swizzle ? 1024 : 128;
        out.align = std::max(out.align, align);
        out.bytes = (out.bytes + align - 1) / align * align;
        out.offsets.push_back(out.bytes);
        out.bytes += uint64_t(a.count) * ir::size_of(a.type);
    }
    // Within the static limit, aligned as laid out here, the arrays stay static.
    if (out.bytes <= cuda_static_shared_limit) return {};
    return out;
}

} // namespace plexus::codegen
