// Vectors, records and variants as values: fields, swizzles, broadcasts, constructors and
// variant values, and the path of an assignment into a part of a value. A field of an array
// element is loaded alone, through its address.
#include "codegen/llvm/lowering.hpp"

namespace plexus::codegen {

using namespace ir;
using llvm::Value;

// The address an expression reads, when it is an array element or a field of one; null (and
// nothing emitted) otherwise.
Value* LlvmLowering::address_of(const Expr& e) {
    if (auto* load = as<Load>(e)) return element_address(load->array, load->space, load->index);
    if (auto* field = as<Field>(e))
        if (Value* base = address_of(field->base))
            return part_address(base, field->base->type, field->index);
    return nullptr;
}

Value* LlvmLowering::visit(const Field& n) {
    if (Value* address = address_of(n.base))
        return load(part_address(address, n.base->type, n.index), n.type);
    return b_.CreateExtractValue(expr(n.base), n.index); // a record's struct has every field
}

Value* LlvmLowering::visit(const Swizzle& n) {
    Value* v = expr(n.base);
    if (n.lanes.size() == 1) return b_.CreateExtractElement(v, uint64_t(n.lanes[0]));
    return b_.CreateShuffleVector(v, std::vector<int>(n.lanes.begin(), n.lanes.end()));
}

Value* LlvmLowering::visit(const Broadcast& n) {
    return b_.CreateVectorSplat(n.type.lanes(), expr(n.value));
}

Value* LlvmLowering::visit(const Construct& n) {
    Value* r = llvm::PoisonValue::get(reg_type(n.type));
    for (unsigned i = 0; i < n.args.size(); ++i) {
        Value* part = expr(n.args[i]);
        r = n.type.is_vector() ? b_.CreateInsertElement(r, part, uint64_t(i))
                               : b_.CreateInsertValue(r, part, i);
    }
    return r;
}

// The payloads of the other cases stay poison: nothing reads a payload but its case's.
Value* LlvmLowering::visit(const MakeVariant& n) {
    Value* r =
        b_.CreateInsertValue(llvm::PoisonValue::get(reg_type(n.type)), b_.getInt32(n.index), 0);
    if (n.payload)
        r = b_.CreateInsertValue(r, expr(n.payload), payload_slot(*n.type.decl(), n.index));
    return r;
}

// `whole` with the part at path[at...] replaced by `part`.
Value* LlvmLowering::insert_path(Value* whole, const Type& t, const Path& path, size_t at,
                                 Value* part) {
    if (at == path.size()) return part;
    const uint32_t step = path[at];
    if (t.is_vector())
        return b_.CreateInsertElement(whole, part, uint64_t(step)); // a lane ends the path
    if (!t.is_record()) internal("a path step into " + to_string(t));
    Value* field = b_.CreateExtractValue(whole, step);
    return b_.CreateInsertValue(
        whole, insert_path(field, t.decl()->members.at(step).type, path, at + 1, part), step);
}

} // namespace plexus::codegen
