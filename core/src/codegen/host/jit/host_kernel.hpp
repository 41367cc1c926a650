// What the rest of libplexus includes for host code: HostKernel, compile_host, load_host_object,
// host_target_id (declared in plexus/codegen.hpp; jit.cpp, or unavailable.cpp without LLVM,
// defines them), and the JIT's entry points for tests.
#pragma once

#include "plexus/codegen.hpp"

#include <memory>
#include <string>
#include <vector>

namespace plexus::codegen::host {

// The width in bits of the vectors the work-item loops are vectorized for: the CPU's widest
// registers (512 with AVX-512, 256 with AVX, 128 with SSE or NEON), or 0 where LLVM chooses.
unsigned vector_bits(const Options& options);
// The widest vectors the CPU computes at full rate, in bits: vector_bits, but 256 on Zen 4
// (`znver4`), which runs each 512-bit operation through 256-bit units in two passes.
unsigned full_rate_bits(const Options& options);

// compile_host with host CPU features switched on or off ("-f16c"): how the tests reach the
// code that a CPU without them gets. Throws as compile_host does.
std::unique_ptr<HostKernel> compile_with_features(const ir::Kernel& kernel, const Options& options,
                                                  const std::vector<std::string>& feature_changes);

} // namespace plexus::codegen::host
