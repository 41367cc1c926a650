// The OpenCL C atomics that 1.2 lacks. Each float atomic is a helper with up to three bodies,
// of which the device's compiler keeps one: for adds, cl_ext_float_atomics where its feature
// macros say the device has the operation (they exist from OpenCL C 2.0 on, where atomic_float
// does) and inline PTX for global adds on NVIDIA's OpenCL (which defines __NV_CL_C_VERSION and
// takes asm); else, and for min / max always, a compare-exchange loop on the bits. So one text
// adapts to each device. Min / max stay on the loop: PoCL 5's atomic_fetch_min / _max on floats
// never returned in the atomics suite's contended NaN cases on the H100 machine's Xeon (the
// loop, which compares bits, passes them).
#include "opencl_atomics.hpp"

#include <map>

namespace plexus::codegen::opencl {
namespace {

using clike::cat;
using clike::FloatAtomic;
using ir::AtomicOp;
using ir::Scalar;

// The preprocessor condition under which cl_ext_float_atomics has the helper's operation
// (with the memory scope it names).
std::string extension_condition(const FloatAtomic& a) {
    std::string out =
        cat("__OPENCL_C_VERSION__ >= 200 && defined(__opencl_c_ext_fp",
            a.type == Scalar::F64 ? "64_" : "32_", ir::to_string(a.space), "_atomic_add)");
    if (a.space == ir::Space::Global) out += " && defined(__opencl_c_atomic_scope_device)";
    return out;
}

std::string helper_name(const FloatAtomic& a, bool noret) {
    return cat("plx_atomic_", ir::to_string(a.op), "_", ir::to_string(a.type),
               noret ? "_noret" : "");
}

// The helper of one float atomic in one space; `noret` is the form that returns nothing.
std::string helper(const clike::Dialect& d, const FloatAtomic& a, bool noret, bool overloadable) {
    const bool wide = a.type == Scalar::F64, global = a.space == ir::Space::Global;
    const std::string type = wide ? "double" : "float", bits = wide ? "ulong" : "uint";
    const std::string space = global ? "__global" : "__local";
    std::string out =
        cat(overloadable ? "__attribute__((overloadable)) " : "", noret ? "void" : type, " ",
            helper_name(a, noret), "(volatile ", space, " ", type, "* p, ", type, " v) {\n");
    const bool add = a.op == AtomicOp::Add;
    if (add) {
        out += cat("#if ", extension_condition(a), "\n");
        out += cat("    ", noret ? "(void)" : "return ", "atomic_fetch_add_explicit((volatile ",
                   space, " atomic_", type, "*)p, v, memory_order_relaxed,\n");
        out += cat("        memory_scope_", global ? "device" : "work_group", ");\n");
    }
    if (global && add) {
        const std::string ptx = wide ? "f64" : "f32", reg = wide ? "\"d\"" : "\"f\"";
        out += "#elif defined(__NV_CL_C_VERSION)\n";
        if (noret)
            out += cat("    asm volatile(\"red.global.add.", ptx, " [%0], %1;\" : : \"l\"(p), ",
                       reg, "(v) : \"memory\");\n");
        else
            out += cat("    ", type, " old;\n    asm volatile(\"atom.global.add.", ptx,
                       " %0, [%1], %2;\" : \"=", reg.substr(1), "(old) : \"l\"(p), ", reg,
                       "(v) : \"memory\");\n    return old;\n");
    }
    const clike::CasWords words{
        bits, cat("as_", bits, "(*p)"),
        cat(wide ? "atom_cmpxchg" : "atomic_cmpxchg", "((volatile ", space, " ", bits, "*)p, "),
        cat("as_", bits), cat("as_", type)};
    out += (add ? "#else\n" : "") + clike::cas_loop(d, a, words);
    if (!noret) out += cat("    return as_", type, "(old);\n");
    return out + (add ? "#endif\n" : "") + "}\n";
}

} // namespace

std::string discarded_atomic(const std::string& intrinsic) {
    auto a = clike::float_atomic(intrinsic);
    if (!a || a->op != AtomicOp::Add || a->space != ir::Space::Global) return "";
    return helper_name(*a, true) + "($0, $1)";
}

std::string atomic_pragmas(const clike::Usage& usage) {
    std::string out;
    // 64-bit integer atomics, and the compare-exchange of f64 ones, need the extensions.
    bool base = false, extended = false;
    for (auto& name : usage.uses.intrinsics) {
        if (name.rfind("atomic_", 0) != 0) continue;
        if (name.find("_i64_") == std::string::npos && name.find("_u64_") == std::string::npos &&
            name.find("_f64_") == std::string::npos)
            continue;
        base = true;
        if (name.find("_f64_") != std::string::npos) continue;
        for (const char* op :
             {"atomic_min_", "atomic_max_", "atomic_and_", "atomic_or_", "atomic_xor_"})
            extended |= name.rfind(op, 0) == 0;
    }
    if (base) out += "#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable\n";
    if (extended) out += "#pragma OPENCL EXTENSION cl_khr_int64_extended_atomics : enable\n";
    return out;
}

std::string atomic_helpers(const clike::Dialect& d, const clike::Usage& usage) {
    // Each helper name with the float atomics it serves: one name for both address spaces
    // needs overloading, which OpenCL C 1.2 has only as Clang's attribute, so a kernel that
    // uses one space gets a plain function.
    struct Helper {
        bool noret = false;
        std::vector<FloatAtomic> atomics;
    };
    std::map<std::string, Helper> helpers;
    for (bool discarded : {false, true})
        for (auto& name : discarded ? usage.discarded_atomics : usage.standard_spelled)
            if (auto a = clike::float_atomic(name)) {
                Helper& h = helpers[helper_name(*a, discarded)];
                h.noret = discarded;
                h.atomics.push_back(*a);
            }
    if (helpers.empty()) return "";
    std::string out =
        "// Float atomics: adds through cl_ext_float_atomics where the device has it (OpenCL C\n"
        "// 2.0 and later) or inline PTX for global adds on NVIDIA; else a compare-exchange "
        "loop.\n";
    bool first = true;
    for (auto& [name, h] : helpers)
        for (const FloatAtomic& a : h.atomics) {
            out += first ? "" : "\n";
            first = false;
            out += helper(d, a, h.noret, h.atomics.size() > 1);
        }
    return out;
}

} // namespace plexus::codegen::opencl
