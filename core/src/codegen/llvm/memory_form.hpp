// The size and alignment of an IR type in memory, for the LLVM lowerings and the host's Layout.
// Free of LLVM, because the Layout is computed in builds without it too.
#pragma once

#include "plexus/ir.hpp"

#include <cstdint>

namespace plexus::codegen {

struct MemoryForm {
    uint64_t size;
    uint64_t align;
};

// What LlvmLowering::mem_type(t) takes in memory: bool is one byte, as in C; numbers are
// naturally aligned.
inline MemoryForm memory_form(const ir::Type& t) {
    return {ir::size_of(t), ir::align_of(t)};
}

} // namespace plexus::codegen
