// The LLVM read-modify-write operation of an IR atomic, shared by the host (ORC) and the PTX
// (NVPTX) lowerings. CmpXchg has none: it lowers to cmpxchg.
#pragma once

#include "plexus/ir.hpp"

#include <llvm/IR/Instructions.h>

namespace plexus::codegen {

inline llvm::AtomicRMWInst::BinOp atomic_rmw_op(ir::AtomicOp op, ir::Scalar type) {
    using Op = llvm::AtomicRMWInst::BinOp;
    const bool sg = ir::is_signed(type);
    switch (op) {
    case ir::AtomicOp::Add: return ir::is_float(type) ? Op::FAdd : Op::Add;
    case ir::AtomicOp::Sub: return Op::Sub;
    case ir::AtomicOp::Min: return sg ? Op::Min : Op::UMin;
    case ir::AtomicOp::Max: return sg ? Op::Max : Op::UMax;
    case ir::AtomicOp::And: return Op::And;
    case ir::AtomicOp::Or: return Op::Or;
    case ir::AtomicOp::Xor: return Op::Xor;
    case ir::AtomicOp::Xchg: return Op::Xchg;
    case ir::AtomicOp::CmpXchg: break;
    }
    return Op::BAD_BINOP;
}

} // namespace plexus::codegen
