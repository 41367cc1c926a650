// Types of the CUDA C generator: scalar names, conversions, and the vectors CUDA C lacks
// (plx_vec and its operators, written into the prologue when a kernel uses a vector).
#pragma once

#include "codegen/clike/clike.hpp"

namespace plexus::codegen::cuda_c {

// "signed char", "unsigned long long"; f16 and bf16 never reach here (clike.hpp).
const char* scalar_type(ir::Scalar t);
// "plx_float4": the vector type, defined in the prelude (with plx_vec) on first use.
std::string vector_type(ir::Scalar t, uint32_t lanes, clike::Prelude& prelude);
// The conversion of a scalar, or "" where a C++ cast converts as the IR says: float to
// integer saturates through the cvt.rzi intrinsics, NaN giving 0 (helpers in the prelude
// where cvt alone does not).
std::string scalar_convert(ir::Scalar from, ir::Scalar to, const std::string& code,
                           clike::Prelude& prelude);
// The conversion of a vector lane by lane: a call of a helper defined in the prelude.
std::string vector_convert(const ir::Type& from, const ir::Type& to, const std::string& code,
                           clike::Prelude& prelude);

} // namespace plexus::codegen::cuda_c
