// The types of the plexus IR: a Type is a small value (a scalar kind and a lane count, or a
// named record or variant declaration), and the layout rules of memory are computed here, once,
// by constexpr functions that the IR and the kernel language's compile-time checks both use.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace plexus::ir {

// ---- scalars ---------------------------------------------------------------------------

enum class Scalar : uint8_t {
    Void,
    Bool,
    I8,
    U8,
    I16,
    U16,
    I32,
    U32,
    I64,
    U64,
    F16,
    BF16,
    F32,
    F64
};

constexpr uint32_t size_of(Scalar t) {
    switch (t) {
    case Scalar::Void: return 0;
    case Scalar::Bool:
    case Scalar::I8:
    case Scalar::U8: return 1;
    case Scalar::I16:
    case Scalar::U16:
    case Scalar::F16:
    case Scalar::BF16: return 2;
    case Scalar::I32:
    case Scalar::U32:
    case Scalar::F32: return 4;
    case Scalar::I64:
    case Scalar::U64:
    case Scalar::F64: return 8;
    }
    return 0;
}
constexpr bool is_float(Scalar t) {
    return t == Scalar::F16 || t == Scalar::BF16 || t == Scalar::F32 || t == Scalar::F64;
}
// f16 and bf16: held as f32 in registers, every result rounded to the type (docs/ir.md).
constexpr bool is_half(Scalar t) {
    return t == Scalar::F16 || t == Scalar::BF16;
}
constexpr bool is_integer(Scalar t) {
    return t >= Scalar::I8 && t <= Scalar::U64;
}
constexpr bool is_signed(Scalar t) {
    return t == Scalar::I8 || t == Scalar::I16 || t == Scalar::I32 || t == Scalar::I64 ||
           is_float(t);
}
constexpr bool is_arithmetic(Scalar t) {
    return is_integer(t) || is_float(t);
}

// Whether a value of type `from` converts to `to` without losing range or precision: what the
// kernel language converts implicitly (i8 -> i32, u16 -> f32, f16 -> f32, ...).
constexpr bool widens_exactly(Scalar from, Scalar to) {
    if (from == to) return true;
    const uint32_t fb = size_of(from) * 8, tb = size_of(to) * 8;
    if (is_integer(from) && is_integer(to)) // unsigned into signed needs a strictly wider type
        return tb > fb && (is_signed(from) == is_signed(to) || !is_signed(from));
    if (is_integer(from) && is_float(to)) {
        // Exact when every integer of the type fits the float's significand.
        const uint32_t significand = to == Scalar::F16    ? 11
                                     : to == Scalar::BF16 ? 8
                                     : to == Scalar::F32  ? 24
                                                          : 53;
        return fb - (is_signed(from) ? 1 : 0) <= significand;
    }
    if (is_half(from)) return to == Scalar::F32 || to == Scalar::F64;
    return from == Scalar::F32 && to == Scalar::F64;
}

const char* to_string(Scalar t); // "f32"
// A C identifier: what every name of a kernel, variable, array, type and member must be.
bool is_identifier(std::string_view s);
std::optional<Scalar> scalar_from_string(std::string_view s);

// ---- layout rules (docs/ir.md "Memory layout") -------------------------------------------

constexpr uint64_t align_up(uint64_t x, uint64_t a) {
    return (x + a - 1) / a * a;
}
// A vector of 2, 4 or 8 lanes is as big and as aligned as its lanes together; one of 3 lanes
// takes the room of 4 (OpenCL's rule), so a 16-byte float3 loads as one instruction.
constexpr bool valid_lanes(uint32_t lanes) {
    return lanes == 2 || lanes == 3 || lanes == 4 || lanes == 8;
}
constexpr uint64_t vector_size(Scalar element, uint32_t lanes) {
    return uint64_t(size_of(element)) * (lanes == 3 ? 4 : lanes);
}
// A variant is { u32 tag; union { payloads } }: the payload starts after the tag at the
// payloads' alignment; the whole is aligned to the larger of 4 and that alignment.
constexpr uint64_t variant_payload_offset(uint64_t payload_align) {
    return align_up(4, payload_align);
}
constexpr uint64_t variant_align(uint64_t payload_align) {
    return payload_align > 4 ? payload_align : 4;
}
constexpr uint64_t variant_size(uint64_t payload_size, uint64_t payload_align) {
    return align_up(variant_payload_offset(payload_align) + payload_size,
                    variant_align(payload_align));
}

// ---- types -------------------------------------------------------------------------------

struct TypeDecl;

class Type {
public:
    Type() = default; // void
    Type(Scalar s) : scalar_(s) {}
    // Throws plexus::Error(InvalidKernel) for a lane count other than 2, 3, 4, 8 or an element
    // that cannot be a lane (void, bool).
    static Type vector(Scalar element, uint32_t lanes);
    static Type aggregate(std::shared_ptr<const TypeDecl> decl);

    // The scalar, or a vector's element; Void for records and variants.
    Scalar scalar() const { return scalar_; }
    uint32_t lanes() const { return lanes_; }
    const TypeDecl* decl() const { return decl_.get(); }
    const std::shared_ptr<const TypeDecl>& decl_ptr() const { return decl_; }

    bool is_void() const { return !decl_ && scalar_ == Scalar::Void; }
    bool is_scalar() const { return !decl_ && lanes_ == 1 && scalar_ != Scalar::Void; }
    bool is_vector() const { return lanes_ > 1; }
    bool is_record() const;
    bool is_variant() const;
    bool is_aggregate() const { return decl_ != nullptr; }
    // The element type of a vector; the type itself otherwise.
    Type element() const { return is_vector() ? Type(scalar_) : *this; }

    // Records and variants are equal when their declarations are (name and structure).
    bool operator==(const Type& o) const;
    bool operator==(Scalar s) const { return !decl_ && lanes_ == 1 && scalar_ == s; }
    // "f32", "f16x4", "Particle".
    std::string name() const;

private:
    Scalar scalar_ = Scalar::Void;
    uint32_t lanes_ = 1;
    std::shared_ptr<const TypeDecl> decl_;
};

// A named field of a record, or a case of a variant (type void: a case without payload).
struct Member {
    std::string name;
    Type type;
    bool operator==(const Member& o) const { return name == o.name && type == o.type; }
};

// A record (fields side by side, C layout) or a variant (a tag and one payload of its case).
// Made only through make_record / make_variant, which check the members and compute the
// layout; immutable afterwards.
struct TypeDecl {
    enum class Kind : uint8_t { Record, Variant };
    Kind kind = Kind::Record;
    std::string name;
    std::vector<Member> members;
    uint64_t size = 0, align = 1;
    std::vector<uint64_t> offsets; // records: each field's byte offset
    uint64_t payload_offset = 0;   // variants: where every payload starts

    // Throws plexus::Error(InvalidKernel) naming the type and the member: a bad name, a
    // duplicate, or a member type that cannot live in memory (void, bool).
    static std::shared_ptr<const TypeDecl> make_record(std::string name,
                                                       std::vector<Member> fields);
    static std::shared_ptr<const TypeDecl> make_variant(std::string name,
                                                        std::vector<Member> cases);

    int index_of(std::string_view member) const; // -1 when absent
    bool operator==(const TypeDecl& o) const {
        return kind == o.kind && name == o.name && members == o.members;
    }
};

inline bool Type::is_record() const {
    return decl_ && decl_->kind == TypeDecl::Kind::Record;
}
inline bool Type::is_variant() const {
    return decl_ && decl_->kind == TypeDecl::Kind::Variant;
}

// Size and alignment in memory (docs/ir.md "Memory layout"); bool is 1 byte, void 0.
uint64_t size_of(const Type& t);
uint64_t align_of(const Type& t);

// Whether values of the type may live in memory: a buffer, a shared or private array, a
// record field, a variant payload (not void, not bool).
bool is_storable(const Type& t);

// Type predicates on the scalar (false for vectors and aggregates), so that scalar code reads
// as before: is_float(e->type).
inline bool is_float(const Type& t) {
    return t.is_scalar() && is_float(t.scalar());
}
inline bool is_half(const Type& t) {
    return t.is_scalar() && is_half(t.scalar());
}
inline bool is_integer(const Type& t) {
    return t.is_scalar() && is_integer(t.scalar());
}
inline bool is_signed(const Type& t) {
    return t.is_scalar() && is_signed(t.scalar());
}
inline bool is_arithmetic(const Type& t) {
    return t.is_scalar() && is_arithmetic(t.scalar());
}
// The same on the element of a vector: lane-wise operations ask these.
inline bool elem_float(const Type& t) {
    return !t.is_aggregate() && is_float(t.scalar());
}
inline bool elem_integer(const Type& t) {
    return !t.is_aggregate() && is_integer(t.scalar());
}
inline bool elem_arithmetic(const Type& t) {
    return !t.is_aggregate() && is_arithmetic(t.scalar());
}
std::string to_string(const Type& t); // t.name()

// Parses "f32", "u8x4"; an aggregate name is looked up in `decls`. nullopt when unknown.
std::optional<Type>
type_from_string(std::string_view s,
                 const std::vector<std::shared_ptr<const TypeDecl>>& decls = {});

} // namespace plexus::ir
