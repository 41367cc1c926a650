// Types of the IR: names, equality, the layout of records and variants, exact widening.
#include "plexus/types.hpp"
#include "plexus/error.hpp"

#include <algorithm>
#include <cctype>
#include <set>

namespace plexus::ir {
namespace {

[[noreturn]] void fail(const std::string& what) {
    throw Error(ErrorCode::InvalidKernel, what);
}

constexpr const char* scalar_names[] = {"void", "bool", "i8",  "u8",  "i16",  "u16", "i32",
                                        "u32",  "i64",  "u64", "f16", "bf16", "f32", "f64"};

void check_members(const std::string& what, const std::string& name,
                   const std::vector<Member>& members, bool payloads) {
    if (!is_identifier(name)) fail(what + " name '" + name + "' is not an identifier");
    if (type_from_string(name)) fail(what + " name '" + name + "' is the name of a built-in type");
    if (members.empty()) fail(what + " '" + name + "' has no " + (payloads ? "case" : "field"));
    std::set<std::string> seen;
    for (auto& m : members) {
        const std::string where =
            what + " '" + name + "', " + (payloads ? "case '" : "field '") + m.name + "'";
        if (!is_identifier(m.name)) fail(where + ": not an identifier");
        if (!seen.insert(m.name).second) fail(where + ": declared twice");
        if (payloads && m.type.is_void()) continue;
        if (!is_storable(m.type))
            fail(where + ": a value of type " + m.type.name() +
                 " cannot live in memory (use u8 for a flag)");
    }
}

} // namespace

const char* to_string(Scalar t) {
    return scalar_names[static_cast<int>(t)];
}

bool is_identifier(std::string_view s) {
    if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
    return std::all_of(s.begin(), s.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
    });
}

std::optional<Scalar> scalar_from_string(std::string_view s) {
    for (int i = 1; i < int(std::size(scalar_names)); ++i)
        if (s == scalar_names[i]) return static_cast<Scalar>(i);
    return std::nullopt;
}

Type Type::vector(Scalar element, uint32_t lanes) {
    if (!valid_lanes(lanes))
        fail("a vector of " + std::to_string(lanes) + " lanes (vectors have 2, 3, 4 or 8)");
    if (element == Scalar::Void || element == Scalar::Bool)
        fail(std::string("a vector of ") + to_string(element) + " (lanes are numbers)");
    Type t(element);
    t.lanes_ = lanes;
    return t;
}

Type Type::aggregate(std::shared_ptr<const TypeDecl> decl) {
    if (!decl) throw Error(ErrorCode::Internal, "an aggregate type without a declaration");
    Type t;
    t.decl_ = std::move(decl);
    return t;
}

bool Type::operator==(const Type& o) const {
    if (scalar_ != o.scalar_ || lanes_ != o.lanes_ || bool(decl_) != bool(o.decl_)) return false;
    return !decl_ || decl_ == o.decl_ || *decl_ == *o.decl_;
}

std::string Type::name() const {
    if (decl_) return decl_->name;
    std::string s = to_string(scalar_);
    return lanes_ > 1 ? s + "x" + std::to_string(lanes_) : s;
}

std::string to_string(const Type& t) {
    return t.name();
}

uint64_t size_of(const Type& t) {
    if (t.decl()) return t.decl()->size;
    return t.is_vector() ? vector_size(t.scalar(), t.lanes()) : size_of(t.scalar());
}

uint64_t align_of(const Type& t) {
    if (t.decl()) return t.decl()->align;
    uint64_t a = t.is_vector() ? vector_size(t.scalar(), t.lanes()) : size_of(t.scalar());
    return a ? a : 1;
}

bool is_storable(const Type& t) {
    return t.is_aggregate() || (t.scalar() != Scalar::Void && t.scalar() != Scalar::Bool);
}

std::optional<Type> type_from_string(std::string_view s,
                                     const std::vector<std::shared_ptr<const TypeDecl>>& decls) {
    if (auto sc = scalar_from_string(s)) return Type(*sc);
    if (s == "void") return Type();
    if (auto x = s.rfind('x'); x != std::string_view::npos && x + 1 < s.size()) {
        auto sc = scalar_from_string(s.substr(0, x));
        std::string_view digits = s.substr(x + 1);
        if (sc && *sc != Scalar::Bool && digits.size() == 1 &&
            valid_lanes(uint32_t(digits[0] - '0')))
            return Type::vector(*sc, uint32_t(digits[0] - '0'));
    }
    for (auto& d : decls)
        if (d && d->name == s) return Type::aggregate(d);
    return std::nullopt;
}

std::shared_ptr<const TypeDecl> TypeDecl::make_record(std::string name,
                                                      std::vector<Member> fields) {
    check_members("record", name, fields, false);
    auto d = std::make_shared<TypeDecl>();
    d->kind = Kind::Record;
    d->name = std::move(name);
    uint64_t at = 0;
    for (auto& f : fields) {
        at = align_up(at, align_of(f.type));
        d->offsets.push_back(at);
        at += size_of(f.type);
        d->align = std::max(d->align, align_of(f.type));
    }
    d->size = align_up(at, d->align);
    d->members = std::move(fields);
    return d;
}

std::shared_ptr<const TypeDecl> TypeDecl::make_variant(std::string name,
                                                       std::vector<Member> cases) {
    check_members("variant", name, cases, true);
    auto d = std::make_shared<TypeDecl>();
    d->kind = Kind::Variant;
    d->name = std::move(name);
    uint64_t payload_size = 0, payload_align = 1;
    for (auto& c : cases) {
        if (c.type.is_void()) continue;
        payload_size = std::max(payload_size, size_of(c.type));
        payload_align = std::max(payload_align, align_of(c.type));
    }
    d->payload_offset = variant_payload_offset(payload_align);
    d->align = variant_align(payload_align);
    d->size = variant_size(payload_size, payload_align);
    d->members = std::move(cases);
    return d;
}

int TypeDecl::index_of(std::string_view member) const {
    for (size_t i = 0; i < members.size(); ++i)
        if (members[i].name == member) return int(i);
    return -1;
}

} // namespace plexus::ir
