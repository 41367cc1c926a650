// Every IR type as an LLVM type, in registers and in memory, and every value that crosses
// memory: whole values and parts of them at the byte offsets of the IR's layout (types.hpp,
// docs/ir.md), never at LLVM's own struct layout or allocation sizes.
#include "codegen/llvm/lowering.hpp"

#include "codegen/llvm/memory_form.hpp"

#include <llvm/Analysis/ValueTracking.h>

namespace plexus::codegen {

using namespace ir;
using llvm::Value;

// ---- types ----------------------------------------------------------------------------------

llvm::Type* LlvmLowering::scalar_type(Scalar s) const {
    switch (s) {
    case Scalar::Bool: return llvm::Type::getInt1Ty(c_);
    case Scalar::I8:
    case Scalar::U8: return llvm::Type::getInt8Ty(c_);
    case Scalar::I16:
    case Scalar::U16: return llvm::Type::getInt16Ty(c_);
    case Scalar::I32:
    case Scalar::U32: return llvm::Type::getInt32Ty(c_);
    case Scalar::I64:
    case Scalar::U64: return llvm::Type::getInt64Ty(c_);
    // f16 and bf16 compute in f32; every result is rounded to the type (round()).
    case Scalar::F16:
    case Scalar::BF16:
    case Scalar::F32: return llvm::Type::getFloatTy(c_);
    case Scalar::F64: return llvm::Type::getDoubleTy(c_);
    case Scalar::Void: break;
    }
    internal("a value of type void");
}

// Vectors are LLVM vectors (lane-wise operations are single instructions); records are structs
// of their fields; a variant is its i32 tag followed by the payload of every case that has one,
// so that a value of any case fits the same registers.
llvm::Type* LlvmLowering::reg_type(const Type& t) const {
    if (t.is_vector()) return llvm::FixedVectorType::get(scalar_type(t.scalar()), t.lanes());
    if (const TypeDecl* d = t.decl()) {
        std::vector<llvm::Type*> parts;
        if (d->kind == TypeDecl::Kind::Variant) parts.push_back(llvm::Type::getInt32Ty(c_));
        for (const Member& m : d->members)
            if (!m.type.is_void()) parts.push_back(reg_type(m.type));
        return llvm::StructType::get(c_, parts);
    }
    return scalar_type(t.scalar());
}

// A bool is a byte in memory, as in C; f16 and bf16 are their 16 bits.
llvm::Type* LlvmLowering::mem_scalar(Scalar s) const {
    if (s == Scalar::Bool) return llvm::Type::getInt8Ty(c_);
    if (is_half(s)) return llvm::Type::getInt16Ty(c_);
    return scalar_type(s);
}

// A 3-lane vector takes the room of 4, so that it moves as one aligned 4-lane access; records
// and variants are bytes that load() and store() address field by field.
llvm::Type* LlvmLowering::mem_type(const Type& t) const {
    if (t.is_vector())
        return llvm::FixedVectorType::get(mem_scalar(t.scalar()), t.lanes() == 3 ? 4 : t.lanes());
    if (t.is_aggregate()) return llvm::ArrayType::get(llvm::Type::getInt8Ty(c_), ir::size_of(t));
    return mem_scalar(t.scalar());
}

llvm::Align LlvmLowering::align_of(const Type& t) const {
    return llvm::Align(memory_form(t).align);
}

// What an array's addresses step by: the IR's size of the element (a scalar's memory type is
// exactly that; anything else is counted in bytes, never in LLVM's allocation size).
llvm::Type* LlvmLowering::stride_type(const Type& t) const {
    if (t.is_scalar()) return mem_type(t);
    return llvm::ArrayType::get(llvm::Type::getInt8Ty(c_), memory_form(t).size);
}

llvm::ArrayType* LlvmLowering::array_of(const Type& elem, uint64_t count) const {
    return llvm::ArrayType::get(stride_type(elem), count);
}

unsigned LlvmLowering::payload_slot(const TypeDecl& d, uint32_t index) {
    unsigned slot = 1;
    for (uint32_t i = 0; i < index; ++i)
        slot += d.members[i].type.is_void() ? 0 : 1;
    return slot;
}

// ---- the two forms of a scalar or vector value --------------------------------------------

Value* LlvmLowering::to_mem(Value* v, const Type& t) {
    if (t.is_aggregate()) internal("a record or variant crossing memory as one value");
    if (t == Scalar::Bool) return b_.CreateZExt(v, mem_type(t));
    Value* m = v;
    if (is_half(t.scalar())) {
        // Exact: a register only holds values of the type. A value this lowering rounded or
        // loaded still has its bits at hand.
        auto known = half_bits_.find({v, t.scalar()});
        m = known != half_bits_.end() ? known->second : half_from_f32(v, t.scalar());
    }
    if (t.is_vector() && t.lanes() == 3) m = b_.CreateShuffleVector(m, {0, 1, 2, -1});
    return m;
}

// A bool byte holds 0 or 1 (this code wrote it, or C++ did), so its low bit is its value.
Value* LlvmLowering::from_mem(Value* v, const Type& t) {
    if (t.is_aggregate()) internal("a record or variant crossing memory as one value");
    if (t == Scalar::Bool) return b_.CreateTrunc(v, reg_type(t));
    Value* r = v;
    if (t.is_vector() && t.lanes() == 3) r = b_.CreateShuffleVector(r, {0, 1, 2});
    if (is_half(t.scalar())) {
        Value* bits = r;
        r = half_to_f32(bits, t.scalar());
        half_bits_[{r, t.scalar()}] = bits;
    }
    return r;
}

// ---- addresses --------------------------------------------------------------------------------

Value* LlvmLowering::byte_address(Value* base, uint64_t offset) {
    return offset ? b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), base, offset) : base;
}

Value* LlvmLowering::part_address(Value* address, const Type& t, uint32_t step) {
    if (t.is_record()) return byte_address(address, t.decl()->offsets.at(step));
    if (t.is_vector()) return byte_address(address, uint64_t(step) * ir::size_of(t.scalar()));
    internal("a path step into " + to_string(t));
}

// ---- whole values ------------------------------------------------------------------------------

// A record field by field and a variant's tag and payloads each at its offset: the padding
// between them is never read or written.
Value* LlvmLowering::load(Value* address, const Type& t, const llvm::Twine& name) {
    if (const TypeDecl* d = t.decl()) {
        Value* r = llvm::PoisonValue::get(reg_type(t));
        if (d->kind == TypeDecl::Kind::Record) {
            for (unsigned i = 0; i < d->members.size(); ++i)
                r = b_.CreateInsertValue(r, load(part_address(address, t, i), d->members[i].type),
                                         i);
            return r;
        }
        // Every payload: the inactive ones are bytes of no meaning, and no use reads them.
        r = b_.CreateInsertValue(
            r, b_.CreateAlignedLoad(b_.getInt32Ty(), address, llvm::Align(4), name), 0);
        Value* payload = byte_address(address, d->payload_offset);
        for (uint32_t i = 0; i < d->members.size(); ++i)
            if (!d->members[i].type.is_void())
                r = b_.CreateInsertValue(r, load(payload, d->members[i].type), payload_slot(*d, i));
        return r;
    }
    return from_mem(b_.CreateAlignedLoad(mem_type(t), address, align_of(t), name), t);
}

void LlvmLowering::store(Value* address, const Type& t, Value* v) {
    if (t.is_record()) {
        const TypeDecl& d = *t.decl();
        for (unsigned i = 0; i < d.members.size(); ++i)
            store(part_address(address, t, i), d.members[i].type, b_.CreateExtractValue(v, i));
        return;
    }
    if (t.is_variant()) return store_variant(address, *t.decl(), v);
    b_.CreateAlignedStore(to_mem(v, t), address, align_of(t));
}

// The tag, then only the payload of the case it names: the payloads share their bytes.
void LlvmLowering::store_variant(Value* address, const TypeDecl& d, Value* v) {
    Value* tag = b_.CreateExtractValue(v, 0);
    b_.CreateAlignedStore(tag, address, llvm::Align(4));
    Value* at = byte_address(address, d.payload_offset);
    auto payload = [&](uint32_t i) {
        store(at, d.members[i].type, b_.CreateExtractValue(v, payload_slot(d, i)));
    };
    // A variant made here (MakeVariant, a constant) names its case: no branch on the tag.
    if (auto* known = llvm::dyn_cast_or_null<llvm::ConstantInt>(llvm::FindInsertedValue(v, {0}))) {
        const uint64_t i = known->getZExtValue();
        if (i < d.members.size() && !d.members[i].type.is_void()) payload(uint32_t(i));
        return;
    }
    llvm::BasicBlock* done = nullptr;
    llvm::SwitchInst* on_tag = nullptr;
    for (uint32_t i = 0; i < d.members.size(); ++i) {
        if (d.members[i].type.is_void()) continue;
        if (!on_tag) {
            done = new_block("variant.stored");
            on_tag = b_.CreateSwitch(tag, done);
        }
        llvm::BasicBlock* store_case = new_block("variant.store." + d.members[i].name);
        on_tag->addCase(b_.getInt32(i), store_case);
        b_.SetInsertPoint(store_case);
        payload(i);
        b_.CreateBr(done);
    }
    if (done) b_.SetInsertPoint(done);
}

} // namespace plexus::codegen
