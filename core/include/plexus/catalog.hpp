// The standard intrinsic catalog (intrinsics/include/plexus/intrinsics.def) as C++ data.
#pragma once

#include "plexus/ir.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace plexus {

// intrinsics.def's classes. Subgroup: a collective operation of the work-item's subgroup; its
// value varies, and every work-item of the subgroup must reach it (validated like a barrier).
enum class Convergence { None, Varying, Uniform, Barrier, Subgroup };

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
    uint32_t capability_class = 0; // the PLX_CLASS_* bit of its section of intrinsics.def
};

const std::vector<IntrinsicInfo>& intrinsic_catalog();
const IntrinsicInfo* find_intrinsic(std::string_view name); // nullptr when unknown

// The capability classes of intrinsics.def (PLX_CLASS_* bits): a class's name ("subgroup"),
// and the ABI minor that introduced it, so that the table of a plugin built against an older
// minor is read as claiming only the classes that minor had.
const std::vector<uint32_t>& capability_classes(); // every class bit, in catalog order
const char* capability_class_name(uint32_t klass);
uint32_t capability_class_since_minor(uint32_t klass);

// The PLX_SUBGROUP_* feature a subgroup intrinsic needs ("subgroup_shuffle_up_f32":
// PLX_SUBGROUP_SHUFFLE_RELATIVE), 0 for any other name; and the feature's name for messages
// ("shuffle_up/down (cl_khr_subgroup_shuffle_relative)").
uint32_t subgroup_feature(std::string_view intrinsic);
const char* subgroup_feature_name(uint32_t feature);

// The PLX_MATRIX_* feature a matrix row needs ("matrix_a_m16n16k16_bf16": PLX_MATRIX_BF16; the
// f32 accumulator of m16n16k16 serves f16 and bf16 alike, so it needs PLX_MATRIX_F16 or
// PLX_MATRIX_BF16), 0 for any other name; and a description for messages.
uint32_t matrix_feature(std::string_view intrinsic);
std::string matrix_feature_name(uint32_t feature);

} // namespace plexus
