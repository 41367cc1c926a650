// The loader's table of IR types: scalars, vectors, declared records and variants, each with its
// memory layout (docs/ir.md) and its leaves, the scalars a value of the type is made of.
#pragma once

#include "program.hpp"

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace plx_interp {

using TypeId = uint32_t; // an index into Types; a scalar's id is its Ty

// One scalar of a value, in the order the type lists them: a vector's lanes; a record's fields,
// each flattened; a variant's tag, then the leaves of every case's payload in case order.
struct Leaf {
    Ty type;
    uint64_t offset;         // bytes from the start of the value in memory
    uint32_t guard = kNone;  // inside a payload: the leaf (same list) of the innermost tag
    uint32_t guard_case = 0; // ... and the case that payload belongs to
    uint32_t cases = 0;      // a variant's tag: how many cases it has
    TypeId variant = 0;      // a variant's tag: the variant
};

struct TypeInfo {
    enum class Kind : uint8_t { Scalar, Vector, Record, Variant };
    struct Member {
        std::string name;
        TypeId type;     // kNone: a case without payload
        uint64_t offset; // a field's offset; a payload's (the variant's payload_offset)
        uint32_t first;  // the index of its first leaf among the aggregate's leaves
    };
    Kind kind;
    std::string name;     // "f32", "u8x4", "Particle"
    Ty scalar = Ty::Void; // a scalar, or a vector's element
    uint32_t lanes = 1;
    uint64_t size = 0, align = 1;
    uint64_t payload_offset = 0; // variants
    uint32_t depth = 0;          // how deeply records and variants nest in it
    std::vector<Member> members{};
    std::vector<Leaf> leaves{};

    bool aggregate() const { return kind == Kind::Record || kind == Kind::Variant; }
    // The number of leaves of member i (0 for a case without payload).
    uint32_t member_leaves(size_t i) const;
};

class Types {
public:
    // Refused at load: a value is copied leaf by leaf, and the interpreter recurses once per
    // nesting level of variants, so both stay small (a real kernel's records are far below).
    static constexpr uint32_t kMaxLeaves = 4096;
    static constexpr uint32_t kMaxDepth = 32;

    Types();
    const TypeInfo& operator[](TypeId id) const { return types_[id]; }
    static TypeId of(Ty t) { return static_cast<TypeId>(t); }
    // A scalar, a vector "<scalar>x<N>" (N = 2, 3, 4, 8; no bool) or a declared name.
    std::optional<TypeId> find(std::string_view name);
    TypeId vector(Ty element, uint32_t lanes);
    // Adds a record or variant (members checked by the caller: storable types declared
    // before, distinct names) and computes its layout and leaves; returns "" or why not.
    std::string declare(TypeInfo::Kind kind, std::string name,
                        std::vector<TypeInfo::Member> members, TypeId& id);
    // The scalar type of a value of this type, or Void when it is not a scalar.
    Ty scalar(TypeId id) const {
        return types_[id].kind == TypeInfo::Kind::Scalar ? types_[id].scalar : Ty::Void;
    }

private:
    // A deque, so that a TypeInfo& stays valid while vectors are added on first use.
    std::deque<TypeInfo> types_;
};

} // namespace plx_interp
