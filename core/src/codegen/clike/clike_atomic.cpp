// The float atomics that OpenCL C and CUDA C lack, as a compare-exchange loop on the element's
// bits: one text for both languages, spelled by the dialect and the caller's words.
#include "clike.hpp"

namespace plexus::codegen::clike {

std::optional<FloatAtomic> float_atomic(const std::string& intrinsic) {
    using ir::AtomicOp;
    for (AtomicOp op : {AtomicOp::Add, AtomicOp::Min, AtomicOp::Max})
        for (ir::Scalar t : {ir::Scalar::F32, ir::Scalar::F64})
            for (ir::Space s : {ir::Space::Global, ir::Space::Local})
                if (intrinsic ==
                    cat("atomic_", ir::to_string(op), "_", ir::to_string(t), "_", ir::to_string(s)))
                    return FloatAtomic{op, t, s};
    return {};
}

std::string cas_loop(const Dialect& d, const FloatAtomic& a, const CasWords& w) {
    const std::string seen = cat(w.to_float, "(seen)");
    const std::string next =
        a.op == ir::AtomicOp::Add
            ? cat(seen, " + v")
            : cat(d.min_max_function(a.op == ir::AtomicOp::Min, a.type), "(", seen, ", v)");
    std::string out = cat("    ", w.bits, " seen, old = ", w.first, ";\n");
    out += "    do {\n"
           "        seen = old;\n";
    out += cat("        ", w.bits, " next = ", w.to_bits, "(", next, ");\n");
    out += "        if (next == seen) break; // the element would not change: nothing to write\n";
    out += cat("        old = ", w.cas, "seen, next);\n");
    return out + "    } while (old != seen);\n";
}

} // namespace plexus::codegen::clike
