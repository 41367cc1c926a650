// OpenCL C's atomics beyond the built-in ones of 1.2: the extension pragmas of the 64-bit
// atomics, and the float atomic helpers the catalog spells (plx_atomic_add_f32 ...).
#pragma once

#include "codegen/clike/clike.hpp"

namespace plexus::codegen::opencl {

// The extension pragmas the atomics of `usage` need, and the float atomic helpers they call
// (`d` is the OpenCL C dialect, for fmin / fmax); "" when none.
std::string atomic_pragmas(const clike::Usage& usage);
std::string atomic_helpers(const clike::Dialect& d, const clike::Usage& usage);
// The spelling of a global f32 / f64 add whose old value is unused (a helper that returns
// nothing, a reduction on NVIDIA), "" for any other atomic.
std::string discarded_atomic(const std::string& intrinsic);

} // namespace plexus::codegen::opencl
