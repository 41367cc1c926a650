// The C++ types a kernel's buffers and values may have, and how each maps to an IR type:
// numbers (px::half, px::bf16 and the small integers included), px::Vec<T, N>, records
// declared with PLEXUS_RECORD (their layout checked at compile time against the IR's), and
// named variants px::Variant<"Name", px::Case<"case", Payload>...>.
#pragma once

#include "plexus/error.hpp"
#include "plexus/half.hpp"
#include "plexus/types.hpp"

#include <algorithm>
#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>

namespace plexus {

// ---- scalars ----------------------------------------------------------------------------

template <class T> struct scalar_of;
#define PLEXUS_SCALAR(T, S)                                                                        \
    template <> struct scalar_of<T> {                                                              \
        static constexpr ir::Scalar value = ir::Scalar::S;                                         \
    };
PLEXUS_SCALAR(bool, Bool)
PLEXUS_SCALAR(int8_t, I8)
PLEXUS_SCALAR(uint8_t, U8)
PLEXUS_SCALAR(int16_t, I16)
PLEXUS_SCALAR(uint16_t, U16)
PLEXUS_SCALAR(int32_t, I32)
PLEXUS_SCALAR(uint32_t, U32)
PLEXUS_SCALAR(int64_t, I64)
PLEXUS_SCALAR(uint64_t, U64)
PLEXUS_SCALAR(half, F16)
PLEXUS_SCALAR(bf16, BF16)
PLEXUS_SCALAR(float, F32)
PLEXUS_SCALAR(double, F64)
#undef PLEXUS_SCALAR
template <class T> inline constexpr ir::Scalar scalar_v = scalar_of<T>::value;

template <class T>
concept KernelScalar = requires { scalar_of<T>::value; };
template <class T>
concept Number = KernelScalar<T> && !std::same_as<T, bool>;
// A C++ number a kernel value of type T may be combined with: any arithmetic type, half, bf16,
// or the constant of an unscoped enum (`enum { kTile = 16 };`), which C++ converts to a number
// as it does everywhere else. A scoped enum (`enum class`) does not convert implicitly and is
// not one: static_cast it.
template <class U>
concept Literal = std::is_arithmetic_v<U> || std::same_as<U, half> || std::same_as<U, bf16> ||
                  (std::is_enum_v<U> && std::is_convertible_v<U, long long>);

// ---- vectors ----------------------------------------------------------------------------

// N lanes of a number, laid out as the IR lays out a vector: as big and as aligned as its
// lanes together, a 3-lane one taking the room of 4 (so px::Vec<float, 3> is 16 bytes).
template <Number T, int N>
    requires(ir::valid_lanes(N))
struct alignas(ir::vector_size(scalar_v<T>, N)) Vec {
    using element = T;
    static constexpr int lanes = N;
    T v[N]{};
    constexpr T& operator[](int i) { return v[i]; }
    constexpr const T& operator[](int i) const { return v[i]; }
    constexpr bool operator==(const Vec& o) const {
        for (int i = 0; i < N; ++i)
            if (!(v[i] == o.v[i])) return false;
        return true;
    }
};
template <class T> struct is_vec : std::false_type {};
template <class T, int N> struct is_vec<Vec<T, N>> : std::true_type {};
template <class T> inline constexpr bool is_vec_v = is_vec<T>::value;

// ---- variants -----------------------------------------------------------------------------

// A string usable as a template argument: px::Case<"charged", float>.
template <size_t N> struct FixedString {
    char chars[N]{};
    constexpr FixedString(const char (&s)[N]) { std::copy_n(s, N, chars); }
    constexpr std::string_view view() const { return {chars, N - 1}; }
};

// A case of a variant: its name and its payload type (void: none).
template <FixedString Name, class Payload = void> struct Case {
    static constexpr std::string_view name = Name.view();
    using payload = Payload;
};

namespace detail {
template <size_t Size, size_t Align> struct PayloadBytes {
    alignas(Align) unsigned char bytes[Size];
};
template <size_t Align> struct PayloadBytes<0, Align> {};
template <class T> struct is_case : std::false_type {};
template <FixedString N, class P> struct is_case<Case<N, P>> : std::true_type {};
} // namespace detail

template <class T> constexpr uint64_t layout_size();
template <class T> constexpr uint64_t layout_align();
namespace detail {
// A case's payload: nothing for void.
template <class P> constexpr uint64_t payload_size() {
    if constexpr (std::is_void_v<P>)
        return 0;
    else
        return layout_size<P>();
}
template <class P> constexpr uint64_t payload_align() {
    if constexpr (std::is_void_v<P>)
        return 1;
    else
        return layout_align<P>();
}
} // namespace detail

// A named variant: a u32 tag (the case's index) and the payload of that case, laid out as
// the IR's variant. On the host: V::make<"case">(payload), v.holds<"case">(), v.get<"case">().
template <FixedString Name, class... Cases>
    requires(sizeof...(Cases) > 0 && (detail::is_case<Cases>::value && ...))
struct Variant {
    static constexpr std::string_view name = Name.view();
    using cases = std::tuple<Cases...>;
    static constexpr uint64_t payload_align() {
        return std::max({uint64_t(1), detail::payload_align<typename Cases::payload>()...});
    }
    static constexpr uint64_t payload_size() {
        return std::max({uint64_t(0), detail::payload_size<typename Cases::payload>()...});
    }
    // The index of the case named C; a name that is not a case does not compile.
    template <FixedString C> static constexpr uint32_t index_of() {
        constexpr std::string_view names[] = {Cases::name...};
        for (uint32_t i = 0; i < sizeof...(Cases); ++i)
            if (names[i] == C.view()) return i;
        throw "not a case of this variant"; // a compile error when evaluated at compile time
    }
    template <FixedString C>
    using payload_of = typename std::tuple_element_t<index_of<C>(), cases>::payload;

    uint32_t tag = 0;
    [[no_unique_address]] detail::PayloadBytes<payload_size(), payload_align()> payload;

    template <FixedString C>
    static Variant make()
        requires std::is_void_v<payload_of<C>>
    {
        Variant v{};
        v.tag = index_of<C>();
        return v;
    }
    template <FixedString C>
    static Variant make(const payload_of<C>& p)
        requires(!std::is_void_v<payload_of<C>>)
    {
        Variant v{};
        v.tag = index_of<C>();
        std::memcpy(&v.payload, &p, sizeof p);
        return v;
    }
    template <FixedString C> bool holds() const { return tag == index_of<C>(); }
    template <FixedString C>
    payload_of<C> get() const
        requires(!std::is_void_v<payload_of<C>>)
    {
        payload_of<C> p;
        std::memcpy(static_cast<void*>(&p), &payload,
                    sizeof p); // trivially copyable, checked by PLEXUS_RECORD
        return p;
    }
};
template <class T> struct is_variant : std::false_type {};
template <FixedString N, class... C> struct is_variant<Variant<N, C...>> : std::true_type {};
template <class T> inline constexpr bool is_variant_v = is_variant<T>::value;

// ---- records ------------------------------------------------------------------------------

// A record is a plain C++ struct declared once, at namespace scope in its own namespace:
//   struct Particle { px::Vec<float, 3> pos, vel; float mass; px::bf16 charge; };
//   PLEXUS_RECORD(Particle, pos, vel, mass, charge);
// Its size, alignment and every field's offset are checked at compile time against the
// IR's layout (docs/ir.md); a mismatch (a #pragma pack, an alignas) does not compile.
template <class T>
concept KernelRecord = requires(const T* p) {
    plexus_record_members(p);
    plexus_record_offsets(p);
    plexus_record_text(p);
};

template <class T>
concept KernelType = KernelScalar<T> || is_vec_v<T> || is_variant_v<T> || KernelRecord<T>;
// What may live in memory (buffers, arrays, fields): everything but bool.
template <class T>
concept Storable = KernelType<T> && !std::same_as<T, bool>;

namespace detail {
template <class M> struct member_type;
template <class C, class M> struct member_type<M C::*> {
    using type = M;
};
template <class P> using member_t = typename member_type<P>::type;

template <class T> constexpr bool record_layout_matches() {
    constexpr auto members = plexus_record_members(static_cast<const T*>(nullptr));
    constexpr auto offsets = plexus_record_offsets(static_cast<const T*>(nullptr));
    uint64_t at = 0, align = 1;
    size_t i = 0;
    bool ok = std::is_standard_layout_v<T> && std::is_trivially_copyable_v<T>;
    std::apply(
        [&](auto... m) {
            auto step = [&]<class M>(std::type_identity<M>) {
                static_assert(
                    Storable<M>,
                    "PLEXUS_RECORD: a field's type is not a kernel type that can live "
                    "in memory (a number other than bool, px::Vec, a record or a variant)");
                at = ir::align_up(at, layout_align<M>());
                ok = ok && offsets[i++] == at;
                at += layout_size<M>();
                align = std::max(align, layout_align<M>());
            };
            (step(std::type_identity<member_t<decltype(m)>>{}), ...);
        },
        members);
    return ok && sizeof(T) == ir::align_up(at, align) && alignof(T) == align;
}
} // namespace detail

// ---- layout and IR type of a C++ type ---------------------------------------------------

template <class T> constexpr uint64_t layout_size() {
    if constexpr (KernelScalar<T>)
        return ir::size_of(scalar_v<T>);
    else if constexpr (is_vec_v<T>)
        return ir::vector_size(scalar_v<typename T::element>, T::lanes);
    else if constexpr (is_variant_v<T>)
        return ir::variant_size(T::payload_size(), T::payload_align());
    else
        return sizeof(T); // a record: equal to the IR's size, which PLEXUS_RECORD checks
}
template <class T> constexpr uint64_t layout_align() {
    if constexpr (KernelScalar<T>)
        return ir::size_of(scalar_v<T>);
    else if constexpr (is_vec_v<T>)
        return ir::vector_size(scalar_v<typename T::element>, T::lanes);
    else if constexpr (is_variant_v<T>)
        return ir::variant_align(T::payload_align());
    else
        return alignof(T);
}

namespace detail {
// Builds (once per type) the IR type of a record or variant from its C++ declaration.
ir::Type record_type(std::string_view text, std::vector<ir::Member> fields, uint64_t size,
                     const std::vector<uint64_t>& offsets);
ir::Type variant_type(std::string_view name, std::vector<ir::Member> cases, uint64_t size);
} // namespace detail

template <KernelType T> ir::Type type_of() {
    if constexpr (KernelScalar<T>) {
        return ir::Type(scalar_v<T>);
    } else if constexpr (is_vec_v<T>) {
        return ir::Type::vector(scalar_v<typename T::element>, T::lanes);
    } else if constexpr (is_variant_v<T>) {
        static_assert(sizeof(T) == layout_size<T>() && alignof(T) == layout_align<T>(),
                      "px::Variant: the C++ layout differs from the IR's (a bug in plexus)");
        static const ir::Type t = [] {
            std::vector<ir::Member> cases;
            std::apply(
                [&](auto... c) {
                    auto add = [&]<class C>(std::type_identity<C>) {
                        if constexpr (std::is_void_v<typename C::payload>)
                            cases.push_back({std::string(C::name), {}});
                        else
                            cases.push_back({std::string(C::name), type_of<typename C::payload>()});
                    };
                    (add(std::type_identity<decltype(c)>{}), ...);
                },
                typename T::cases{});
            return detail::variant_type(T::name, std::move(cases), sizeof(T));
        }();
        return t;
    } else {
        static_assert(detail::record_layout_matches<T>());
        static const ir::Type t = [] {
            std::vector<ir::Member> fields;
            std::apply(
                [&](auto... m) {
                    (fields.push_back({"", type_of<detail::member_t<decltype(m)>>()}), ...);
                },
                plexus_record_members(static_cast<const T*>(nullptr)));
            auto offsets = plexus_record_offsets(static_cast<const T*>(nullptr));
            return detail::record_type(plexus_record_text(static_cast<const T*>(nullptr)),
                                       std::move(fields), sizeof(T),
                                       std::vector<uint64_t>(offsets.begin(), offsets.end()));
        }();
        return t;
    }
}

// The index of the field that a member pointer names, for records declared with PLEXUS_RECORD.
template <KernelRecord T, class M> uint32_t field_index(M T::* member) {
    uint32_t index = UINT32_MAX, i = 0;
    std::apply(
        [&](auto... m) {
            auto check = [&](auto p) {
                if constexpr (std::is_same_v<decltype(p), M T::*>)
                    if (p == member) index = i;
                ++i;
            };
            (check(m), ...);
        },
        plexus_record_members(static_cast<const T*>(nullptr)));
    if (index == UINT32_MAX)
        throw Error(ErrorCode::InvalidKernel, "a member of record '" + type_of<T>().name() +
                                                  "' that its PLEXUS_RECORD does not list");
    return index;
}

} // namespace plexus

// ---- PLEXUS_RECORD -------------------------------------------------------------------------

#define PLEXUS_PP_NARGS(...)                                                                       \
    PLEXUS_PP_NARGS_(__VA_ARGS__, 24, 23, 22, 21, 20, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9,   \
                     8, 7, 6, 5, 4, 3, 2, 1)
#define PLEXUS_PP_NARGS_(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14, _15, _16,    \
                         _17, _18, _19, _20, _21, _22, _23, _24, N, ...)                           \
    N
#define PLEXUS_PP_MAP_1(m, c, x) m(c, x)
#define PLEXUS_PP_MAP_2(m, c, x, ...) m(c, x), PLEXUS_PP_MAP_1(m, c, __VA_ARGS__)
#define PLEXUS_PP_MAP_3(m, c, x, ...) m(c, x), PLEXUS_PP_MAP_2(m, c, __VA_ARGS__)
#define PLEXUS_PP_MAP_4(m, c, x, ...) m(c, x), PLEXUS_PP_MAP_3(m, c, __VA_ARGS__)
#define PLEXUS_PP_MAP_5(m, c, x, ...) m(c, x), PLEXUS_PP_MAP_4(m, c, __VA_ARGS__)
#define PLEXUS_PP_MAP_6(m, c, x, ...) m(c, x), PLEXUS_PP_MAP_5(m, c, __VA_ARGS__)
#define PLEXUS_PP_MAP_7(m, c, x, ...) m(c, x), PLEXUS_PP_MAP_6(m, c, __VA_ARGS__)
#define PLEXUS_PP_MAP_8(m, c, x, ...) m(c, x), PLEXUS_PP_MAP_7(m, c, __VA_ARGS__)
#define PLEXUS_PP_MAP_9(m, c, x, ...) m(c, x), PLEXUS_PP_MAP_8(m, c, __VA_ARGS__)
#define PLEXUS_PP_MAP_10(m, c, x, ...) m(c, x), PLEXUS_PP_MAP_9(m, c, __VA_ARGS__)
#define PLEXUS_PP_MAP_11(m, c, x, ...) m(c, x), PLEXUS_PP_MAP_10(m, c, __VA_ARGS__)
#define PLEXUS_PP_MAP_12(m, c, x, ...) m(c, x), PLEXUS_PP_MAP_11(m, c, __VA_ARGS__)
#define PLEXUS_PP_MAP_13(m, c, x, ...) m(c, x), PLEXUS_PP_MAP_12(m, c, __VA_ARGS__)
#define PLEXUS_PP_MAP_14(m, c, x, ...) m(c, x), PLEXUS_PP_MAP_13(m, c, __VA_ARGS__)
#define PLEXUS_PP_MAP_15(m, c, x, ...) m(c, x), PLEXUS_PP_MAP_14(m, c, __VA_ARGS__)
#define PLEXUS_PP_MAP_16(m, c, x, ...) m(c, x), PLEXUS_PP_MAP_15(m, c, __VA_ARGS__)
#define PLEXUS_PP_MAP_17(m, c, x, ...) m(c, x), PLEXUS_PP_MAP_16(m, c, __VA_ARGS__)
#define PLEXUS_PP_MAP_18(m, c, x, ...) m(c, x), PLEXUS_PP_MAP_17(m, c, __VA_ARGS__)
#define PLEXUS_PP_MAP_19(m, c, x, ...) m(c, x), PLEXUS_PP_MAP_18(m, c, __VA_ARGS__)
#define PLEXUS_PP_MAP_20(m, c, x, ...) m(c, x), PLEXUS_PP_MAP_19(m, c, __VA_ARGS__)
#define PLEXUS_PP_MAP_21(m, c, x, ...) m(c, x), PLEXUS_PP_MAP_20(m, c, __VA_ARGS__)
#define PLEXUS_PP_MAP_22(m, c, x, ...) m(c, x), PLEXUS_PP_MAP_21(m, c, __VA_ARGS__)
#define PLEXUS_PP_MAP_23(m, c, x, ...) m(c, x), PLEXUS_PP_MAP_22(m, c, __VA_ARGS__)
#define PLEXUS_PP_MAP_24(m, c, x, ...) m(c, x), PLEXUS_PP_MAP_23(m, c, __VA_ARGS__)
#define PLEXUS_PP_CAT(a, b) PLEXUS_PP_CAT_(a, b)
#define PLEXUS_PP_CAT_(a, b) a##b
#define PLEXUS_PP_MAP(m, c, ...)                                                                   \
    PLEXUS_PP_CAT(PLEXUS_PP_MAP_, PLEXUS_PP_NARGS(__VA_ARGS__))(m, c, __VA_ARGS__)
#define PLEXUS_RECORD_MEMBER_(T, f) &T::f
#define PLEXUS_RECORD_OFFSET_(T, f) offsetof(T, f)

// Declares the struct T (with fields f1, f2, ... in declaration order, up to 24) as a record
// of the kernel language. Use it in T's own namespace, after T.
#define PLEXUS_RECORD(T, ...)                                                                      \
    [[maybe_unused]] constexpr auto plexus_record_members(const T*) {                              \
        return std::make_tuple(PLEXUS_PP_MAP(PLEXUS_RECORD_MEMBER_, T, __VA_ARGS__));              \
    }                                                                                              \
    [[maybe_unused]] constexpr auto plexus_record_offsets(const T*) {                              \
        return std::array<std::size_t, PLEXUS_PP_NARGS(__VA_ARGS__)>{                              \
            PLEXUS_PP_MAP(PLEXUS_RECORD_OFFSET_, T, __VA_ARGS__)};                                 \
    }                                                                                              \
    [[maybe_unused]] constexpr const char* plexus_record_text(const T*) {                          \
        return #T ":" #__VA_ARGS__;                                                                \
    }                                                                                              \
    static_assert(                                                                                 \
        ::plexus::detail::record_layout_matches<T>(),                                              \
        "PLEXUS_RECORD(" #T "): the struct's size, alignment or field offsets differ from "        \
        "the IR's layout (docs/ir.md, Memory layout): remove #pragma pack / alignas, or "          \
        "list every field in declaration order")
