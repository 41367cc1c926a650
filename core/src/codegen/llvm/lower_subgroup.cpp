// Subgroup operations, written once over three target hooks: the subgroup width, a 32-bit
// shuffle and a vote. Lanes and subgroups follow from the linear local id; 64-bit and float
// values shuffle as 32-bit words; reductions are a shuffle-down tree and scans a shuffle-up
// ladder, each step guarded so that a partial last subgroup adds only lanes that exist. With a
// width of 1 (the host) every step folds away.
#include "codegen/llvm/lowering.hpp"

namespace plexus::codegen {

using namespace ir;
using llvm::Value;

namespace {
// "shuffle_xor" of "subgroup_shuffle_xor_f32"; "ballot" of "subgroup_ballot".
std::string subgroup_op(const std::string& name) {
    std::string op = name.substr(std::string("subgroup_").size());
    const size_t cut = op.rfind('_');
    if (cut != std::string::npos && scalar_from_string(op.substr(cut + 1))) op.resize(cut);
    return op;
}
} // namespace

Value* LlvmLowering::linear_local_id() {
    Value* x = local_id(0);
    Value* y = b_.CreateMul(local_id(1), local_size(0));
    Value* z = b_.CreateMul(local_id(2), b_.CreateMul(local_size(0), local_size(1)));
    return b_.CreateAdd(x, b_.CreateAdd(y, z), "linear_id");
}

Value* LlvmLowering::lane_id() {
    return b_.CreateAnd(linear_local_id(), b_.getInt32(subgroup_width() - 1), "lane");
}

// The lanes of this work-item's subgroup: the width, or what is left of the group.
Value* LlvmLowering::subgroup_lanes() {
    Value* items = b_.CreateMul(local_size(0), b_.CreateMul(local_size(1), local_size(2)));
    Value* first = b_.CreateAnd(linear_local_id(), b_.getInt32(~(subgroup_width() - 1)));
    Value* left = b_.CreateSub(items, first);
    return b_.CreateIntrinsic(llvm::Intrinsic::umin, {b_.getInt32Ty()},
                              {left, b_.getInt32(subgroup_width())}, nullptr, "subgroup_lanes");
}

Value* LlvmLowering::shuffle(Shuffle kind, Value* v, Scalar t, Value* arg) {
    llvm::Type* i32 = b_.getInt32Ty();
    if (t == Scalar::I64 || t == Scalar::U64 || t == Scalar::F64) {
        llvm::Type* i64 = b_.getInt64Ty();
        Value* bits = t == Scalar::F64 ? b_.CreateBitCast(v, i64) : v;
        Value* lo = shuffle32(kind, b_.CreateTrunc(bits, i32), arg);
        Value* hi = shuffle32(kind, b_.CreateTrunc(b_.CreateLShr(bits, 32), i32), arg);
        Value* joined =
            b_.CreateOr(b_.CreateZExt(lo, i64), b_.CreateShl(b_.CreateZExt(hi, i64), 32));
        return t == Scalar::F64 ? b_.CreateBitCast(joined, b_.getDoubleTy()) : joined;
    }
    if (t == Scalar::F32)
        return b_.CreateBitCast(shuffle32(kind, b_.CreateBitCast(v, i32), arg), b_.getFloatTy());
    return shuffle32(kind, v, arg);
}

Value* LlvmLowering::combine(const std::string& op, Value* a, Value* b, Scalar t) {
    const bool fp = is_float(t);
    if (op == "add") return fp ? b_.CreateFAdd(a, b) : b_.CreateAdd(a, b);
    const bool min = op == "min";
    if (fp)
        return call_intrinsic(min ? llvm::Intrinsic::minnum : llvm::Intrinsic::maxnum, a->getType(),
                              {a, b});
    const bool sign = is_signed(t);
    return min ? (sign ? b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, a, b)
                       : b_.CreateBinaryIntrinsic(llvm::Intrinsic::umin, a, b))
               : (sign ? b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, a, b)
                       : b_.CreateBinaryIntrinsic(llvm::Intrinsic::umax, a, b));
}

Value* LlvmLowering::subgroup_reduce(const std::string& op, Value* v, Scalar t) {
    Value* lane = lane_id();
    Value* lanes = subgroup_lanes();
    for (unsigned d = subgroup_width() / 2; d >= 1; d /= 2) {
        Value* other = shuffle(Shuffle::Down, v, t, b_.getInt32(d));
        Value* exists = b_.CreateICmpULT(b_.CreateAdd(lane, b_.getInt32(d)), lanes);
        v = b_.CreateSelect(exists, combine(op, v, other, t), v);
    }
    return shuffle(Shuffle::Index, v, t, b_.getInt32(0)); // lane 0 holds the whole subgroup's
}

Value* LlvmLowering::subgroup_scan(bool inclusive, Value* v, Scalar t) {
    Value* lane = lane_id();
    for (unsigned d = 1; d < subgroup_width(); d *= 2) {
        Value* below = shuffle(Shuffle::Up, v, t, b_.getInt32(d));
        v = b_.CreateSelect(b_.CreateICmpUGE(lane, b_.getInt32(d)), combine("add", v, below, t), v);
    }
    if (inclusive) return v;
    // Lane l's exclusive sum is lane l-1's inclusive one: exact for floats too.
    Value* previous = shuffle(Shuffle::Up, v, t, b_.getInt32(1));
    return b_.CreateSelect(b_.CreateICmpEQ(lane, b_.getInt32(0)),
                           llvm::Constant::getNullValue(v->getType()), previous);
}

Value* LlvmLowering::subgroup(const std::string& name, Scalar t, const std::vector<Value*>& a) {
    const std::string op = subgroup_op(name);
    if (op == "size") return subgroup_lanes();
    if (op == "id")
        return b_.CreateUDiv(linear_local_id(), b_.getInt32(subgroup_width()), "subgroup_id");
    if (op == "lane_id") return lane_id();
    if (op == "ballot") return vote(Vote::Ballot, a[0]);
    if (op == "any") return vote(Vote::Any, a[0]);
    if (op == "all") return vote(Vote::All, a[0]);
    if (op == "shuffle") return shuffle(Shuffle::Index, a[0], t, a[1]);
    if (op == "shuffle_xor") return shuffle(Shuffle::Xor, a[0], t, a[1]);
    if (op == "shuffle_up") {
        // A lane with none `delta` below keeps its own value.
        Value* keep = b_.CreateICmpULT(lane_id(), a[1]);
        return b_.CreateSelect(keep, a[0], shuffle(Shuffle::Up, a[0], t, a[1]));
    }
    if (op == "shuffle_down") {
        Value* past = b_.CreateICmpUGE(a[1], b_.CreateSub(subgroup_lanes(), lane_id()));
        return b_.CreateSelect(past, a[0], shuffle(Shuffle::Down, a[0], t, a[1]));
    }
    if (op.rfind("reduce_", 0) == 0) return subgroup_reduce(op.substr(7), a[0], t);
    if (op == "scan_inclusive_add") return subgroup_scan(true, a[0], t);
    if (op == "scan_exclusive_add") return subgroup_scan(false, a[0], t);
    internal("unknown subgroup intrinsic '" + name + "'");
}

} // namespace plexus::codegen
