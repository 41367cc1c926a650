// Where the CUDA generators (PTX and CUDA C) put shared arrays: CUDA caps a kernel's static
// shared memory at 48 KiB, so a kernel whose shared arrays need more gets them from dynamic
// shared memory instead (one extern array, each array at its offset), which its launches size
// and the CUDA plugin opts in to up to the device's limit. Private to the CUDA generators.
#pragma once

#include "plexus/ir.hpp"

#include <cstdint>
#include <vector>

namespace plexus::codegen {

inline constexpr uint64_t cuda_static_shared_limit = 48 * 1024;

struct CudaDynamicShared {
    uint64_t bytes = 0; // 0: the arrays stay static
    std::vector<uint64_t>
        offsets;          // per kernel.shared array, each 128-byte aligned (1024: swizzled)
    uint64_t align = 128; // the largest of those: what the extern array needs
};
CudaDynamicShared cuda_dynamic_shared(const ir::Kernel& kernel);

} // namespace plexus::codegen
