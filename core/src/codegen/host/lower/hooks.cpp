// What the host target does differently from the shared lowering: variables where the Layout
// puts them, the indices of the work-item being lowered, libm for math, division that never
// traps, barriers, fences and returns of work-items that all run on one thread, and subgroups
// of one work-item.
#include "codegen/host/lower/host_lowering.hpp"

#include <llvm/IR/Intrinsics.h>
#include <set>
#include <string>

namespace plexus::codegen::host {

using namespace ir;
using llvm::Value;

// ---- variables: ids are the Layout's declarations, which it numbers in the order met here ---

size_t HostLowering::new_variable(const std::string& name, const Type& t) {
    size_t d = next_decl_++;
    if (d >= variables_.size()) internal("more declarations than the layout found");
    if (variables_[d].type != t) internal("the layout gives '" + name + "' another type");
    lane_frame_.resize(variables_.size());
    // In a chunk run in lock step, a region's variable has one slot per lane, unless every
    // lane shares it (a uniform loop's counter).
    lane_recomputed_.erase(d);
    if (auto it = pending_recompute_.find(name); it != pending_recompute_.end()) {
        // A variable another region reads (PerItem) is stored whatever its lanes recompute.
        if (it->second.value && storage_[d] != Storage::PerItem) lane_recomputed_[d] = it->second;
        pending_recompute_.erase(it);
    }
    lane_frame_[d] =
        lanes_ && storage_[d] == Storage::Private && !uniform_decl_ && !lane_recomputed_.count(d);
    if (uniform_decl_)
        uniform_vars_.insert(d);
    else
        uniform_vars_.erase(d);
    uniform_decl_ = false;
    if (lane_frame_[d])
        variables_[d].home = lane_frame(t, name.c_str());
    else if (storage_[d] == Storage::Private || storage_[d] == Storage::Group)
        variables_[d].home = entry_alloca(reg_type(t), name);
    return d;
}

// A region-local variable carries nothing from one region to the next (each assigns it before
// reading it), so each region keeps it where its own variables go: the home its declaring
// region chose (a scalar slot, a lane frame, a uniform value or a recomputed Let) would be
// wrong in a region lowered another way.
void HostLowering::rehome_region_locals() {
    lane_frame_.resize(variables_.size());
    for (const auto& [name, d] : scope_) {
        if (!layout_.region_local.at(d)) continue;
        lane_recomputed_.erase(d);
        uniform_vars_.erase(d);
        lane_frame_[d] = lanes_ != nullptr;
        const Type& t = variables_[d].type;
        variables_[d].home = lanes_ ? lane_frame(t, name.c_str()) : entry_alloca(reg_type(t), name);
    }
}

Value* HostLowering::per_item_address(size_t id) {
    if (layout_.in_record[id])
        return b_.CreateInBoundsGEP(
            b_.getInt8Ty(), variables_[id].home,
            b_.CreateMul(item_->linear, b_.getInt64(layout_.record_bytes), "", true, true));
    return b_.CreateInBoundsGEP(mem_type(variables_[id].type), variables_[id].home, item_->linear);
}

// A vector variable in a per-item array keeps each of its lanes in an array of its own (the
// first lanes of every work-item, then the second lanes, ...) inside the variable's share of
// the per-item memory (a lane takes no more than its share: 3 lanes of f32 take 12 of 16
// bytes). Consecutive work-items then keep a lane's values side by side, so that a loop over W
// work-items (a chunk, or a lane loop in lock step) reads W values of one lane as one vector
// load where W vectors of 16 bytes would be a strided group that x86 loops do not vectorize
// (particles' positions and forces).
bool HostLowering::per_item_split(size_t id) const {
    return storage_[id] == Storage::PerItem && !layout_.in_record[id] &&
           variables_[id].type.is_vector();
}

Value* HostLowering::per_item_lane(size_t id, unsigned lane) {
    const Type element = variables_[id].type.element();
    Value* index = b_.CreateAdd(b_.CreateMul(padded_, b_.getInt64(lane), "", true, true),
                                item_->linear, "", true, true);
    return b_.CreateInBoundsGEP(mem_type(element), variables_[id].home, index);
}

Value* HostLowering::read_per_item(size_t id) {
    const Type& t = variables_[id].type;
    if (!per_item_split(id)) return load(per_item_address(id), t);
    Value* v = llvm::PoisonValue::get(reg_type(t));
    for (unsigned i = 0; i < t.lanes(); ++i)
        v = b_.CreateInsertElement(v, load(per_item_lane(id, i), t.element()), i);
    return v;
}

void HostLowering::write_per_item(size_t id, Value* v) {
    const Type& t = variables_[id].type;
    if (!per_item_split(id)) return store(per_item_address(id), t, v);
    for (unsigned i = 0; i < t.lanes(); ++i)
        store(per_item_lane(id, i), t.element(), b_.CreateExtractElement(v, i));
}

Value* HostLowering::read_variable(size_t id) {
    if (auto it = lane_recomputed_.find(id); it != lane_recomputed_.end())
        return it->second.value();
    if (id < lane_frame_.size() && lane_frame_[id]) return read_lane_frame(id);
    switch (storage_[id]) {
    case Storage::Value: return variables_[id].home;
    case Storage::PerItem: return read_per_item(id);
    // Its Let's expression for the work-item being lowered; the names it reads are declared
    // once in the kernel (Layout), so they still mean what they meant at the Let.
    case Storage::Recompute: return expr(layout_.recompute.at(id));
    case Storage::Private:
    case Storage::Group: break;
    }
    return LlvmLowering::read_variable(id);
}

void HostLowering::write_variable(size_t id, Value* v) {
    if (lane_recomputed_.count(id)) return; // its Let, the only write
    if (id < lane_frame_.size() && lane_frame_[id]) return write_lane_frame(id, v);
    switch (storage_[id]) {
    case Storage::Value: internal("assignment to a parameter kept as a value");
    case Storage::Recompute: return; // its Let, the only write: each read evaluates the expression
    case Storage::PerItem:
        // Group control writes for the whole group (a match's payload, which is uniform):
        // every work-item's copy gets the value.
        if (item_ == &group_item_) {
            item_loops([&] { write_per_item(id, v); });
            return;
        }
        write_per_item(id, v);
        return;
    case Storage::Private:
    case Storage::Group: break;
    }
    LlvmLowering::write_variable(id, v);
}

// One stack array that the work-items of a region use in turn, or this work-item's copy in
// group-local memory. The copies are laid out by element (element j of every work-item, then
// element j + 1, ...), as a vector variable's lanes are (per_item_lane): the work-items of a
// chunk run in lock step read one element as one vector load, where copies one after another
// would be a strided gather per access.
Value* HostLowering::private_element(size_t i, Value* index) {
    if (layout_.privates.at(i) != Storage::PerItem) return LlvmLowering::private_element(i, index);
    const ArrayDecl& a = k_.privates[i];
    Value* at =
        b_.CreateAdd(b_.CreateMul(index, padded_, "", true, true), item_->linear, "", true, true);
    return b_.CreateInBoundsGEP(stride_type(a.type), private_copies_.at(i), at, a.name + ".elem");
}

// ---- the work-item and its group ----------------------------------------------------------------

Value* HostLowering::local_id(unsigned d) {
    return item_->lid[d];
}
Value* HostLowering::local_size(unsigned d) {
    return local_size_[d];
}
Value* HostLowering::group_id(unsigned d) {
    return group_id_[d];
}
Value* HostLowering::num_groups(unsigned d) {
    return num_groups_[d];
}

// Barriers are group control (work_group.cpp): a region's loops finish every work-item before
// the next region starts.
void HostLowering::barrier() {
    internal("a barrier inside a work-item region");
}

void HostLowering::fence(const Fence& n) {
    // Every work-item of a group runs on this one thread, so ordering against the group
    // needs only a compiler fence; device scope orders against other threads too.
    b_.CreateFence(llvm::AtomicOrdering::SequentiallyConsistent, n.scope == FenceScope::WorkGroup
                                                                     ? llvm::SyncScope::SingleThread
                                                                     : llvm::SyncScope::System);
}

void HostLowering::return_from_item() {
    if (!item_ || !item_->next) internal("return outside the work-item loops");
    jump(item_->next);
}

void HostLowering::check_native(const Native& n) {
    if (!options_.backend.empty() && n.code.count(options_.backend))
        invalid("a native block has code for backend '" + options_.backend +
                "', which has no source language to compile it; give a portable fallback instead");
    LlvmLowering::check_native(n);
}

// ---- f16 ----------------------------------------------------------------------------------------

// With F16C, LLVM's half conversions are single instructions; without it they would be calls of
// __truncsfhf2 / __extendhfsf2, which the JIT cannot count on finding, so the integer code
// runs instead. bf16 is always integer code: a few vectorizable integer operations.
Value* HostLowering::half_from_f32(Value* f, Scalar t) {
    if (t == Scalar::F16 && target_.f16c) return half_by_fptrunc(f, t);
    return LlvmLowering::half_from_f32(f, t);
}

Value* HostLowering::half_to_f32(Value* bits, Scalar t) {
    if (t == Scalar::F16 && target_.f16c) return half_by_fpext(bits, t);
    return LlvmLowering::half_to_f32(bits, t);
}

// ---- arithmetic -----------------------------------------------------------------------------

// Division by zero is undefined in the IR, as in C; here it yields a / 1 rather than a
// SIGFPE that would take the whole process down, and INT_MIN / -1 wraps.
//
// A divisor that is not a constant (a kernel parameter: dequant_int8's `i / cols4`) divides in
// double precision: x86 has no vector integer division, so LoopVectorize would make W scalar
// `idiv`s of a vectorized `sdiv` (about 6 cycles each), where `vdivpd` divides 8 lanes at once.
// The quotient is exact for 32-bit operands: both convert exactly, and a/b is at least 1/|b|
// from the next integer, more than half an ulp of a/b (|a/b| |b| <= |a| < 2^33 << 2^52), so
// rounding never reaches it and truncation gives the integer quotient. A constant divisor
// stays an integer division, which LLVM turns into a multiplication.
Value* HostLowering::int_divide(Value* a, Value* b, const Type& t, bool remainder) {
    llvm::Type* ty = reg_type(t);
    const bool is_signed = ir::is_signed(t.scalar());
    Value* zero = b_.CreateICmpEQ(b, llvm::ConstantInt::get(ty, 0));
    Value* minus_one =
        is_signed ? b_.CreateICmpEQ(b, llvm::ConstantInt::getSigned(ty, -1)) : nullptr;
    Value* d = b_.CreateSelect(minus_one ? b_.CreateOr(zero, minus_one) : zero,
                               llvm::ConstantInt::get(ty, 1), b);
    Value* q = nullptr;
    if (!llvm::isa<llvm::Constant>(b) && ty->getScalarSizeInBits() <= 32) {
        llvm::Type* f64 = b_.getDoubleTy();
        if (auto* v = llvm::dyn_cast<llvm::VectorType>(ty))
            f64 = llvm::VectorType::get(f64, v->getElementCount());
        auto to_fp = [&](Value* x) {
            return is_signed ? b_.CreateSIToFP(x, f64) : b_.CreateUIToFP(x, f64);
        };
        Value* ratio = b_.CreateFDiv(to_fp(a), to_fp(d));
        q = is_signed ? b_.CreateFPToSI(ratio, ty) : b_.CreateFPToUI(ratio, ty);
        if (remainder) return b_.CreateSub(a, b_.CreateMul(q, d)); // x % -1 == 0 == x % 1
    } else if (remainder) {
        return is_signed ? b_.CreateSRem(a, d) : b_.CreateURem(a, d);
    } else {
        q = is_signed ? b_.CreateSDiv(a, d) : b_.CreateUDiv(a, d);
    }
    return minus_one ? b_.CreateSelect(minus_one, b_.CreateNeg(a), q) : q;
}

// LLVM's intrinsics, which the JIT lowers to the process's libm (expf, sinf, ...).
Value* HostLowering::transcendental(const std::string& base, Scalar t,
                                    const std::vector<Value*>& a) {
    using namespace llvm;
    llvm::Type* ty = reg_type(t);
    static const std::pair<const char*, Intrinsic::ID> direct[] = {
        {"exp", Intrinsic::exp},   {"exp2", Intrinsic::exp2}, {"log", Intrinsic::log},
        {"log2", Intrinsic::log2}, {"sin", Intrinsic::sin},   {"cos", Intrinsic::cos},
        {"pow", Intrinsic::pow}};
    for (auto& [n, id] : direct)
        if (base == n) return call_intrinsic(id, ty, a);
    if (base == "rsqrt")
        return b_.CreateFDiv(ConstantFP::get(ty, 1.0), call_intrinsic(Intrinsic::sqrt, ty, a));
    static const std::set<std::string> libm = {
        "tan",
        "ldexp",
#define PLX_LIBM1(fn) #fn,
#define PLX_LIBM2(fn) #fn,
#include <plexus/libm.def>
#undef PLX_LIBM1
#undef PLX_LIBM2
    };
    if (libm.count(base)) {
        // No LLVM intrinsic: libm's function (tanf / tan, erff / erf, ...), which the JIT finds
        // in the process.
        std::vector<llvm::Type*> args;
        for (Value* v : a)
            args.push_back(v->getType()); // ldexp's exponent is an i32
        FunctionType* ft = FunctionType::get(ty, args, false);
        FunctionCallee fn = m_.getOrInsertFunction(t == Scalar::F32 ? base + "f" : base, ft);
        if (auto* f = dyn_cast<Function>(fn.getCallee())) {
            f->setDoesNotThrow();
            f->setWillReturn();
            f->setDoesNotAccessMemory(); // no errno reads are possible from kernel code
        }
        return b_.CreateCall(fn, a);
    }
    internal("unknown math intrinsic '" + base + "'");
}

// ---- subgroups: one work-item each (subgroup_width() is 1), so a shuffle reads the lane's own
// value and a vote sees one lane; the shared lowering's reductions and scans fold to v.

Value* HostLowering::shuffle32(Shuffle, Value* v, Value*) {
    return v;
}

Value* HostLowering::vote(Vote kind, Value* pred) {
    return kind == Vote::Ballot ? b_.CreateZExt(pred, b_.getInt64Ty()) : pred;
}

} // namespace plexus::codegen::host
