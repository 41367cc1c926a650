// The standard intrinsic catalog (intrinsics/include/plexus/intrinsics.def) as C++ data.
#pragma once

#include "plexus/ir.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace plexus {

enum class Convergence { None, Varying, Uniform, Barrier };

struct IntrinsicInfo {
    std::string name;
    std::string signature; // "f32(f32,f32)"
    Convergence convergence;
    std::string opencl_c; // standard spellings; $N is argument N
    std::string cuda_c;
    std::string nvvm;
    ir::Scalar result;
    std::vector<ir::Scalar> args; // element type for pointer arguments
    std::vector<bool> arg_is_pointer;
};

const std::vector<IntrinsicInfo>& intrinsic_catalog();
const IntrinsicInfo* find_intrinsic(std::string_view name); // nullptr when unknown

} // namespace plexus
