// Layout and leaves of the IR's types from docs/ir.md's rules alone (no core types.hpp): C layout
// for records, { u32 tag; union } for variants, 3-lane vectors in the room of 4.
#include "layout.hpp"

#include <algorithm>

namespace plx_interp {
namespace {

uint64_t align_up(uint64_t x, uint64_t a) {
    return (x + a - 1) / a * a;
}

} // namespace

uint32_t TypeInfo::member_leaves(size_t i) const {
    const uint32_t end = i + 1 < members.size() ? members[i + 1].first : uint32_t(leaves.size());
    return members[i].type == kNone ? 0 : end - members[i].first;
}

Types::Types() {
    for (int i = 0; i <= static_cast<int>(Ty::F64); ++i) {
        const Ty t = static_cast<Ty>(i);
        TypeInfo s{.kind = TypeInfo::Kind::Scalar, .name = ty_name(t), .scalar = t};
        s.size = ty_size(t);
        s.align = std::max<uint64_t>(1, s.size);
        if (t != Ty::Void) s.leaves.push_back(Leaf{.type = t, .offset = 0});
        types_.push_back(std::move(s));
    }
}

TypeId Types::vector(Ty element, uint32_t lanes) {
    for (TypeId id = 0; id < types_.size(); ++id)
        if (types_[id].kind == TypeInfo::Kind::Vector && types_[id].scalar == element &&
            types_[id].lanes == lanes)
            return id;
    TypeInfo v{.kind = TypeInfo::Kind::Vector,
               .name = std::string(ty_name(element)) + "x" + std::to_string(lanes),
               .scalar = element,
               .lanes = lanes};
    // As big and as aligned as its lanes together; 3 lanes take the room of 4.
    v.size = v.align = uint64_t(ty_size(element)) * (lanes == 3 ? 4 : lanes);
    for (uint32_t l = 0; l < lanes; ++l)
        v.leaves.push_back(Leaf{.type = element, .offset = uint64_t(l) * ty_size(element)});
    types_.push_back(std::move(v));
    return TypeId(types_.size() - 1);
}

std::optional<TypeId> Types::find(std::string_view name) {
    if (auto t = ty_from_string(name)) return of(*t);
    const size_t x = name.rfind('x');
    if (x != std::string_view::npos && x + 2 == name.size()) {
        const auto element = ty_from_string(name.substr(0, x));
        const char n = name.back();
        if (element && *element != Ty::Bool && (n == '2' || n == '3' || n == '4' || n == '8'))
            return vector(*element, uint32_t(n - '0'));
    }
    for (TypeId id = 0; id < types_.size(); ++id)
        if (types_[id].aggregate() && types_[id].name == name) return id;
    return std::nullopt;
}

std::string Types::declare(TypeInfo::Kind kind, std::string name,
                           std::vector<TypeInfo::Member> members, TypeId& id) {
    TypeInfo d{.kind = kind, .name = std::move(name), .depth = 1};
    const bool record = kind == TypeInfo::Kind::Record;
    uint64_t payload_size = 0, payload_align = 1, at = 0;
    for (auto& m : members) {
        if (m.type == kNone) continue;
        const TypeInfo& t = types_[m.type];
        d.depth = std::max(d.depth, t.depth + 1);
        d.align = std::max(d.align, t.align);
        if (record) {
            m.offset = at = align_up(at, t.align);
            at += t.size;
        } else {
            payload_size = std::max(payload_size, t.size);
            payload_align = std::max(payload_align, t.align);
        }
    }
    if (record) {
        d.size = align_up(at, d.align);
    } else {
        // { u32 tag; union { payloads } }: payloads start after the tag at their alignment.
        d.payload_offset = align_up(4, payload_align);
        d.align = std::max<uint64_t>(4, payload_align);
        d.size = align_up(d.payload_offset + payload_size, d.align);
        d.leaves.push_back(Leaf{.type = Ty::U32,
                                .offset = 0,
                                .cases = uint32_t(members.size()),
                                .variant = TypeId(types_.size())});
    }
    for (size_t i = 0; i < members.size(); ++i) {
        TypeInfo::Member& m = members[i];
        m.first = uint32_t(d.leaves.size());
        if (m.type == kNone) continue;
        if (!record) m.offset = d.payload_offset;
        const std::vector<Leaf>& inner = types_[m.type].leaves;
        if (d.leaves.size() + inner.size() > kMaxLeaves)
            return "\"" + d.name + "\" has more than " + std::to_string(kMaxLeaves) +
                   " scalars, more than the interpreter holds in one value";
        for (const Leaf& leaf : inner) {
            Leaf l = leaf;
            l.offset += m.offset;
            if (l.guard != kNone)
                l.guard += m.first;
            else if (!record)
                l.guard = 0, l.guard_case = uint32_t(i); // the payload of case i
            d.leaves.push_back(l);
        }
    }
    if (d.depth > kMaxDepth)
        return "\"" + d.name + "\" nests records and variants " + std::to_string(d.depth) +
               " deep, more than the interpreter's " + std::to_string(kMaxDepth);
    d.members = std::move(members);
    types_.push_back(std::move(d));
    id = TypeId(types_.size() - 1);
    return "";
}

} // namespace plx_interp
