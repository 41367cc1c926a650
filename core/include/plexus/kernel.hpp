// The plexus kernel language: C++ that traces into the IR. A kernel is a lambda over In<T>,
// Out<T>, InOut<T> and scalar parameters; running it once under a tracer records statements.
// Values are Value<T> (an expression), Part<T> (a place that can be assigned: a variable or
// an array element, or a field or lane of one) and Var<T> (a new variable).
#pragma once

#include "plexus/error.hpp"
#include "plexus/ir.hpp"
#include "plexus/kernel_types.hpp"

#include <concepts>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace plexus {

namespace detail {

// The recording state of the kernel being traced on this thread.
class Tracer {
public:
    explicit Tracer(ir::Kernel& k);
    ~Tracer();
    Tracer(const Tracer&) = delete;
    Tracer& operator=(const Tracer&) = delete;

    static Tracer& current(); // throws when no kernel is being traced
    std::string fresh(const char* prefix);
    void emit(ir::Stmt s);
    // Records f's statements into a new block and returns it.
    ir::Stmt trace_block(const std::function<void()>& f);
    // Replaces the statement at `index` of the innermost open block opened at `depth`.
    void replace(size_t depth, size_t index, ir::Stmt s);
    size_t depth() const { return blocks_.size(); }
    size_t size() const { return blocks_.back().size(); }
    ir::Kernel& kernel() { return kernel_; }
    // An InvalidKernel error naming the kernel being traced.
    [[noreturn]] void fail(const std::string& what) const;

private:
    ir::Kernel& kernel_;
    std::vector<std::vector<ir::Stmt>> blocks_;
    Tracer* previous_;
    int next_ = 0;
};

struct ParamTag {};

// The expression converting `e` (of C++ type From) to To: only conversions that lose nothing
// happen implicitly; any other is an InvalidKernel error asking for px::cast.
ir::Expr convert(const ir::Expr& e, const ir::Type& to, const char* what);
// A constant expression of a C++ value of a kernel type (numbers, vectors, records).
template <KernelType T> ir::Expr constant(const T& v);
// The zero value of a type (a variable declared without initializer starts with it).
ir::Expr zero(const ir::Type& t);

} // namespace detail

template <KernelType T> class Value;
template <KernelType T> class Part;
template <KernelType T> class Var;

namespace detail {
template <class T> T value_type_of(const Value<T>&);
template <class T, class U> Value<T> lift(const U& u);
// A vector's lane type; any other type itself.
template <class T> struct element_of {
    using type = T;
};
template <class E, int N> struct element_of<Vec<E, N>> {
    using type = E;
};
template <class T> using element_t = typename element_of<T>::type;
template <class T>
concept FloatLike = std::is_floating_point_v<T> || std::same_as<T, half> || std::same_as<T, bf16>;
template <class X> using vt = decltype(value_type_of(std::declval<const X&>()));
} // namespace detail
// Value<T>, Part<T>, Var<T> and the other classes derived from Value<T>.
template <class X>
concept IsValue = requires { typename detail::vt<X>; };

// ---- values ------------------------------------------------------------------------------

template <KernelType T> class Value {
    using element = typename detail::element_of<T>::type;
    static constexpr int lanes_of() {
        if constexpr (is_vec_v<T>)
            return T::lanes;
        else
            return 1;
    }

public:
    using type = T;
    explicit Value(ir::Expr e) : e_(std::move(e)) {}
    Value(const T& literal)
        requires(!is_variant_v<T>)
        : e_(detail::constant(literal)) {}
    template <Literal U>
        requires(KernelScalar<T> && !std::same_as<U, T>)
    Value(U literal) : e_(detail::constant(static_cast<T>(literal))) {}
    // A value of another type that converts exactly (i8 to i32, f16 to f32, ...).
    template <KernelType U>
        requires(!std::same_as<U, T> && KernelScalar<T> && KernelScalar<U> &&
                 ir::widens_exactly(scalar_v<U>, scalar_v<T>))
    Value(const Value<U>& v) : e_(ir::Cast::make(scalar_v<T>, v.expr())) {}
    const ir::Expr& expr() const { return e_; }

    // Vectors: lanes and swizzles (v.x(), v.zyx(), v.swizzle<0, 0>()).
    template <int... L>
        requires(is_vec_v<T> && sizeof...(L) >= 1)
    auto swizzle() const {
        static_assert(((L >= 0 && L < lanes_of()) && ...), "a lane past the end of the vector");
        auto e = ir::Swizzle::make(e_, {uint8_t(L)...});
        if constexpr (sizeof...(L) == 1)
            return Value<element>(e);
        else
            return Value<Vec<element, int(sizeof...(L))>>(e);
    }
    Value<element> x() const
        requires is_vec_v<T>
    {
        return swizzle<0>();
    }
    Value<element> y() const
        requires is_vec_v<T>
    {
        return swizzle<1>();
    }
    Value<element> z() const
        requires(is_vec_v<T> && lanes_of() >= 3)
    {
        return swizzle<2>();
    }
    Value<element> w() const
        requires(is_vec_v<T> && lanes_of() >= 4)
    {
        return swizzle<3>();
    }
    auto xy() const
        requires is_vec_v<T>
    {
        return swizzle<0, 1>();
    }
    auto xyz() const
        requires(is_vec_v<T> && lanes_of() >= 3)
    {
        return swizzle<0, 1, 2>();
    }
    auto zyx() const
        requires(is_vec_v<T> && lanes_of() >= 3)
    {
        return swizzle<2, 1, 0>();
    }
    auto wzyx() const
        requires(is_vec_v<T> && lanes_of() >= 4)
    {
        return swizzle<3, 2, 1, 0>();
    }
    // Lane i (a C++ constant) of a vector.
    Value<element> lane(int i) const
        requires is_vec_v<T>
    {
        return Value<element>(ir::Swizzle::make(e_, {uint8_t(i)}));
    }
    // Records: v[&Particle::mass].
    template <class P>
        requires(KernelRecord<T> && std::is_member_object_pointer_v<P>)
    auto operator[](P member) const {
        return Value<detail::member_t<P>>(ir::Field::make(e_, field_index<T>(member)));
    }

protected:
    ir::Expr e_;
};

namespace detail {
// Where a Part lives: a variable or an array element, and the path of fields / lanes into it.
struct Place {
    bool array = false;
    std::string name;
    ir::Space space = ir::Space::Global;
    ir::Expr index; // arrays
    ir::Type root;  // the variable's or the element's type
    ir::Path path;

    Place step(uint32_t s) const {
        Place p = *this;
        p.path.push_back(s);
        return p;
    }
    ir::Expr read() const; // the expression of the place's current value
    void write(const ir::Expr& value) const;
};
} // namespace detail

// A place that can be assigned: a variable, an array element, or a field or lane of one.
template <KernelType T> class Part : public Value<T> {
    using element = typename detail::element_of<T>::type;
    static constexpr int lanes() {
        if constexpr (is_vec_v<T>)
            return T::lanes;
        else
            return 1;
    }

public:
    explicit Part(detail::Place p) : Value<T>(p.read()), place_(std::move(p)) {}
    Part(const Part&) = default;

    // Assignment writes the place; it never copies the C++ object.
    Part& operator=(const Part& v) {
        assign(v.expr());
        return *this;
    }
    const Part& operator=(const Part& v) const { return assign(v.expr()); }
    template <class U>
        requires(IsValue<U> || Literal<U> || std::same_as<U, T>) && (!std::derived_from<U, Part>)
    const Part& operator=(const U& v) const {
        if constexpr (std::same_as<U, T>)
            return assign(Value<T>(v).expr());
        else
            return assign(detail::lift<T>(v).expr());
    }
    const detail::Place& place() const { return place_; }

    // The same sub-places as Value's, but assignable.
    Part<element> x() const
        requires is_vec_v<T>
    {
        return lane(0);
    }
    Part<element> y() const
        requires is_vec_v<T>
    {
        return lane(1);
    }
    Part<element> z() const
        requires(is_vec_v<T> && lanes() >= 3)
    {
        return lane(2);
    }
    Part<element> w() const
        requires(is_vec_v<T> && lanes() >= 4)
    {
        return lane(3);
    }
    Part<element> lane(int i) const
        requires is_vec_v<T>
    {
        if (i < 0 || i >= lanes())
            detail::Tracer::current().fail("lane " + std::to_string(i) + " of a vector of " +
                                           std::to_string(lanes()));
        return Part<element>(place_.step(uint32_t(i)));
    }
    template <class P>
        requires(KernelRecord<T> && std::is_member_object_pointer_v<P>)
    auto operator[](P member) const {
        return Part<detail::member_t<P>>(place_.step(field_index<T>(member)));
    }

protected:
    detail::Place place_;
    const Part& assign(const ir::Expr& v) const {
        place_.write(detail::convert(v, type_of<T>(), "assignment"));
        return *this;
    }
};
// An element of an array that can be written (Out<T>, InOut<T>, shared and private arrays).
template <KernelType T> using Ref = Part<T>;

// A mutable variable of the kernel: construction declares it, assignment assigns it.
template <KernelType T> class Var : public Part<T> {
public:
    Var() : Var(Value<T>(detail::zero(type_of<T>()))) {}
    Var(const T& literal)
        requires(!is_variant_v<T>)
        : Var(Value<T>(literal)) {}
    template <Literal U>
        requires((KernelScalar<T> || is_vec_v<T>) && !std::same_as<U, T>)
    Var(U literal) : Var(detail::lift<T>(literal)) {}
    template <class U>
        requires IsValue<U>
    Var(const U& init)
        : Part<T>(declare(detail::convert(init.expr(), type_of<T>(), "initialization"))) {}
    Var(const Var& other) : Part<T>(declare(other.expr())) {}
    // Moving binds the same variable: how parameters and loop variables reach the lambda.
    Var(Var&& other) noexcept : Part<T>(std::move(other.place_)) {}
    // Binds a parameter or loop variable by name, declaring nothing.
    Var(detail::ParamTag, std::string name) : Part<T>(bound(std::move(name))) {}

    Var& operator=(const Var& v) {
        this->assign(v.expr());
        return *this;
    }
    template <class U>
        requires IsValue<U> || Literal<U> || std::same_as<U, T>
    Var& operator=(const U& v) {
        Part<T>::operator=(v);
        return *this;
    }
    const std::string& name() const { return this->place_.name; }

private:
    static detail::Place bound(std::string name) {
        detail::Place p;
        p.name = std::move(name);
        p.root = type_of<T>();
        return p;
    }
    static detail::Place declare(const ir::Expr& init) {
        auto& t = detail::Tracer::current();
        std::string name = t.fresh("v");
        t.emit(ir::Let::make(name, init));
        return bound(name);
    }
};

using Bool = Var<bool>;
using Int = Var<int32_t>;
using UInt = Var<uint32_t>;
using Long = Var<int64_t>;
using ULong = Var<uint64_t>;
using Float = Var<float>;
using Double = Var<double>;
using Half = Var<half>;
using BFloat16 = Var<bf16>;

template <class I>
concept IndexLike = std::integral<I> || (IsValue<I> && std::integral<detail::vt<I>> &&
                                         !std::same_as<detail::vt<I>, bool>);
namespace detail {
template <IndexLike I> ir::Expr index_expr(const I& i) {
    if constexpr (std::integral<I>)
        return ir::Const::make_int(ir::Scalar::I64, static_cast<int64_t>(i));
    else
        return i.expr();
}
// row * pitch + col in i64 when either index is 64-bit, else in i32.
ir::Expr flat_index(const ir::Expr& row, uint64_t pitch, const ir::Expr& col);
Place element_place(std::string array, ir::Space space, ir::Type elem, ir::Expr index);
} // namespace detail

// ---- parameters and arrays ------------------------------------------------------------------

template <Storable T, ir::Access A> class BufferParam {
public:
    using element = T;
    static constexpr ir::Access access = A;
    BufferParam(detail::ParamTag, std::string name) : name_(std::move(name)) {}
    const std::string& name() const { return name_; }

    template <IndexLike I> auto operator[](const I& i) const {
        detail::Place p =
            detail::element_place(name_, ir::Space::Global, type_of<T>(), detail::index_expr(i));
        if constexpr (A == ir::Access::Read)
            return Value<T>(p.read());
        else
            return Part<T>(std::move(p));
    }

private:
    std::string name_;
};

template <Storable T> using In = BufferParam<T, ir::Access::Read>;
template <Storable T> using Out = BufferParam<T, ir::Access::Write>;
template <Storable T> using InOut = BufferParam<T, ir::Access::ReadWrite>;

// A work-group shared array (space Local) or a per-work-item array (space Private), indexed
// by one flat index, or by one index per dimension for a shaped shared array.
template <Storable T, int Dims = 1> class LocalArray {
public:
    using element = T;
    LocalArray(std::string name, ir::Space space, std::array<uint32_t, 3> dims, uint32_t pad,
               bool swizzle = false)
        : name_(std::move(name)), space_(space), dims_(dims), pad_(pad), swizzle_(swizzle) {}
    // 1-D: the element; 2-D: a row (tile[r][c]); 3-D: a plane.
    template <IndexLike I> auto operator[](const I& i) const {
        if constexpr (Dims == 1)
            return Part<T>(
                detail::element_place(name_, space_, type_of<T>(), detail::index_expr(i)));
        else
            return View<Dims - 1>{this, detail::index_expr(i)};
    }
    uint32_t size() const { return dims_[0]; } // elements (1-D) or rows
    const std::string& name() const { return name_; }
    ir::Space space() const { return space_; }
    // Elements from one row to the next of a 2-D array (its columns and padding).
    uint32_t row_pitch() const { return dims_[Dims - 1] + pad_; }
    bool swizzled() const { return swizzle_; }
    // The flat index of element [row][col] of a 2-D array: row * row_pitch() + col, or where the
    // 128-byte swizzle puts it (ir::swizzled_index).
    ir::Expr index_of(const ir::Expr& row, const ir::Expr& col) const
        requires(Dims == 2)
    {
        if (swizzle_) return ir::swizzled_index(dims_[0], uint32_t(sizeof(T)), row, col);
        return detail::flat_index(row, row_pitch(), col);
    }

private:
    // The rows or planes of a shaped array, flattened as r * (cols + pad) + c.
    template <int Left> struct View {
        const LocalArray* a;
        ir::Expr base; // the index so far, in units of the remaining dimensions
        template <IndexLike I> auto operator[](const I& i) const {
            const uint64_t extent =
                Left == 1 ? uint64_t(a->dims_[Dims - 1]) + a->pad_ : a->dims_[Dims - Left];
            ir::Expr flat;
            if constexpr (Dims == 2)
                flat = a->index_of(base, detail::index_expr(i));
            else
                flat = detail::flat_index(base, extent, detail::index_expr(i));
            if constexpr (Left == 1)
                return Part<T>(detail::element_place(a->name_, a->space_, type_of<T>(), flat));
            else
                return View<Left - 1>{a, flat};
        }
    };
    std::string name_;
    ir::Space space_;
    std::array<uint32_t, 3> dims_;
    uint32_t pad_;
    bool swizzle_;
};
template <Storable T> using Shared = LocalArray<T, 1>;

// Elements added to each innermost row of a shaped shared array (against bank conflicts).
struct Pad {
    uint32_t elements = 0;
};
// A 2-D shared array laid out in the tensor cores' 128-byte swizzle, the form px::mma_shared
// reads its A and B tiles in (docs/kernel-language.md, "Warpgroup accumulators"): tile[r][c]
// reads and writes as usual; rows must be a multiple of 128 bytes, and the rows a multiple of 8.
struct Swizzle128 {};

namespace detail {
// Declares the array in the kernel being traced and returns its name.
std::string declare_array(ir::Space space, const ir::Type& t, std::vector<uint32_t> dims,
                          uint32_t pad, bool swizzle = false);
template <Storable T, int D>
LocalArray<T, D> local_array(ir::Space space, std::vector<uint32_t> dims, uint32_t pad,
                             bool swizzle = false) {
    std::array<uint32_t, 3> d{1, 1, 1};
    std::copy(dims.begin(), dims.end(), d.begin());
    return LocalArray<T, D>(declare_array(space, type_of<T>(), std::move(dims), pad, swizzle),
                            space, d, pad, swizzle);
}
} // namespace detail

// px::shared<float>(256); px::shared<float>(16, 16, px::Pad{1}) is tile[r][c] with rows of 17.
template <Storable T> Shared<T> shared(uint32_t count) {
    return detail::local_array<T, 1>(ir::Space::Local, {count}, 0);
}
template <Storable T> LocalArray<T, 2> shared(uint32_t rows, uint32_t cols, Pad pad = {}) {
    return detail::local_array<T, 2>(ir::Space::Local, {rows, cols}, pad.elements);
}
// px::shared<px::half>(128, 64, px::Swizzle128{}): tile[r][c] in the 128-byte swizzle.
template <Storable T> LocalArray<T, 2> shared(uint32_t rows, uint32_t cols, Swizzle128) {
    return detail::local_array<T, 2>(ir::Space::Local, {rows, cols}, 0, true);
}
template <Storable T> LocalArray<T, 3> shared(uint32_t d0, uint32_t d1, uint32_t d2, Pad pad = {}) {
    return detail::local_array<T, 3>(ir::Space::Local, {d0, d1, d2}, pad.elements);
}
// An array of `count` elements private to each work-item (registers or the stack).
template <Storable T> LocalArray<T, 1> private_array(uint32_t count) {
    return detail::local_array<T, 1>(ir::Space::Private, {count}, 0);
}

// ---- operators ---------------------------------------------------------------------------

namespace detail {

// The common type of two operands, or void when they do not combine without an explicit
// cast: one type; a number and a value (the number takes the value's type); two scalar types
// of which one converts exactly to the other; a vector and a scalar of its element type
// (broadcast).
template <class A, class B> struct common {
    using type = void;
};
template <IsValue A, Literal B> struct common<A, B> {
    using type = vt<A>;
};
template <Literal A, IsValue B> struct common<A, B> {
    using type = vt<B>;
};
template <class TA, class TB> consteval auto common_of() {
    if constexpr (std::same_as<TA, TB>)
        return std::type_identity<TA>{};
    else if constexpr (KernelScalar<TA> && KernelScalar<TB>) {
        if constexpr (ir::widens_exactly(scalar_v<TB>, scalar_v<TA>))
            return std::type_identity<TA>{};
        else if constexpr (ir::widens_exactly(scalar_v<TA>, scalar_v<TB>))
            return std::type_identity<TB>{};
        else
            return std::type_identity<void>{};
    } else if constexpr (is_vec_v<TA> && KernelScalar<TB>) {
        if constexpr (ir::widens_exactly(scalar_v<TB>, scalar_v<typename TA::element>))
            return std::type_identity<TA>{};
        else
            return std::type_identity<void>{};
    } else if constexpr (KernelScalar<TA> && is_vec_v<TB>) {
        return common_of<TB, TA>();
    } else {
        return std::type_identity<void>{};
    }
}
template <IsValue A, IsValue B> struct common<A, B> {
    using type = typename decltype(common_of<vt<A>, vt<B>>())::type;
};
template <class A, class B>
using common_t = typename common<std::remove_cvref_t<A>, std::remove_cvref_t<B>>::type;

// An operand as a Value<T>: numbers convert to T (a vector's element, broadcast), values
// convert exactly (a scalar into a vector is broadcast).
template <class T, class U> Value<T> lift(const U& u) {
    if constexpr (Literal<U>) {
        if constexpr (is_vec_v<T>)
            return Value<T>(
                ir::Broadcast::make(constant(static_cast<typename T::element>(u)), T::lanes));
        else
            return Value<T>(static_cast<T>(u));
    } else if constexpr (is_vec_v<T> && !is_vec_v<vt<U>>) {
        return Value<T>(ir::Broadcast::make(
            convert(u.expr(), type_of<typename T::element>(), "operand"), T::lanes));
    } else {
        return Value<T>(convert(u.expr(), type_of<T>(), "operand"));
    }
}

} // namespace detail

// An operand pair: see detail::common. Two C++ numbers are not kernel values.
template <class A, class B>
concept Operands = !std::is_void_v<detail::common_t<A, B>> &&
                   (IsValue<std::remove_cvref_t<A>> || IsValue<std::remove_cvref_t<B>>);
template <class A, class B>
concept ScalarOperands = Operands<A, B> && KernelScalar<detail::common_t<A, B>>;

#define PLEXUS_BINARY(op, irop, concept_, result)                                                  \
    template <class A, class B>                                                                    \
        requires concept_<A, B>                                                                    \
    auto operator op(const A& a, const B& b) {                                                     \
        using T = detail::common_t<A, B>;                                                          \
        using R = result;                                                                          \
        return Value<R>(ir::Binary::make(ir::BinaryOp::irop, detail::lift<T>(a).expr(),            \
                                         detail::lift<T>(b).expr()));                              \
    }
PLEXUS_BINARY(+, Add, Operands, T)
PLEXUS_BINARY(-, Sub, Operands, T)
PLEXUS_BINARY(*, Mul, Operands, T)
PLEXUS_BINARY(/, Div, Operands, T)
PLEXUS_BINARY(%, Rem, Operands, T)
PLEXUS_BINARY(&, BitAnd, Operands, T)
PLEXUS_BINARY(|, BitOr, Operands, T)
PLEXUS_BINARY(^, BitXor, Operands, T)
PLEXUS_BINARY(<<, Shl, Operands, T)
PLEXUS_BINARY(>>, Shr, Operands, T)
PLEXUS_BINARY(&&, LogicalAnd, ScalarOperands, T)
PLEXUS_BINARY(||, LogicalOr, ScalarOperands, T)
PLEXUS_BINARY(==, Eq, ScalarOperands, bool)
PLEXUS_BINARY(!=, Ne, ScalarOperands, bool)
PLEXUS_BINARY(<, Lt, ScalarOperands, bool)
PLEXUS_BINARY(<=, Le, ScalarOperands, bool)
PLEXUS_BINARY(>, Gt, ScalarOperands, bool)
PLEXUS_BINARY(>=, Ge, ScalarOperands, bool)
#undef PLEXUS_BINARY

template <IsValue A> Value<detail::vt<A>> operator-(const A& a) {
    return Value<detail::vt<A>>(ir::Unary::make(ir::UnaryOp::Neg, a.expr()));
}
inline Value<bool> operator!(const Value<bool>& a) {
    return Value<bool>(ir::Unary::make(ir::UnaryOp::Not, a.expr()));
}
template <IsValue A> Value<detail::vt<A>> operator~(const A& a) {
    return Value<detail::vt<A>>(ir::Unary::make(ir::UnaryOp::BitNot, a.expr()));
}

// Compound assignment on variables and writable places: a op= b is a = a op b.
#define PLEXUS_COMPOUND(op, bop)                                                                   \
    template <KernelType T, class B> Var<T>& operator op(Var<T>& a, const B & b) {                 \
        a = static_cast<const Value<T>&>(a) bop b;                                                 \
        return a;                                                                                  \
    }                                                                                              \
    template <KernelType T, class B> const Part<T>& operator op(const Part<T>& a, const B & b) {   \
        a = static_cast<const Value<T>&>(a) bop b;                                                 \
        return a;                                                                                  \
    }
PLEXUS_COMPOUND(+=, +)
PLEXUS_COMPOUND(-=, -)
PLEXUS_COMPOUND(*=, *)
PLEXUS_COMPOUND(/=, /)
PLEXUS_COMPOUND(%=, %)
PLEXUS_COMPOUND(&=, &)
PLEXUS_COMPOUND(|=, |)
PLEXUS_COMPOUND(^=, ^)
PLEXUS_COMPOUND(<<=, <<)
PLEXUS_COMPOUND(>>=, >>)
#undef PLEXUS_COMPOUND

// An explicit conversion, which may lose range or precision: scalars, or vectors of one lane
// count lane by lane. Into or out of half and bf16 it goes through f32.
template <KernelType To, IsValue From> Value<To> cast(const From& v) {
    return Value<To>(ir::Cast::make(type_of<To>(), v.expr()));
}
// c ? a : b, both arms evaluated; one arm may be a C++ number.
template <class A, class B>
    requires Operands<A, B>
auto select(const Value<bool>& c, const A& a, const B& b) {
    using T = detail::common_t<A, B>;
    return Value<T>(
        ir::Select::make(c.expr(), detail::lift<T>(a).expr(), detail::lift<T>(b).expr()));
}
// min / max of two values (integers compare with their signedness; vectors lane by lane).
template <class A, class B>
    requires Operands<A, B>
auto min(const A& a, const B& b) {
    using T = detail::common_t<A, B>;
    return Value<T>(
        ir::Binary::make(ir::BinaryOp::Min, detail::lift<T>(a).expr(), detail::lift<T>(b).expr()));
}
template <class A, class B>
    requires Operands<A, B>
auto max(const A& a, const B& b) {
    using T = detail::common_t<A, B>;
    return Value<T>(
        ir::Binary::make(ir::BinaryOp::Max, detail::lift<T>(a).expr(), detail::lift<T>(b).expr()));
}

// A vector from its lanes, or a record from its fields in declaration order:
// px::make<px::Vec<float, 4>>(x, y, z, 1.0f), px::make<Particle>(pos, vel, mass, charge).
template <KernelType T, class... A> Value<T> make(const A&... args) {
    const ir::Type t = type_of<T>();
    std::vector<ir::Expr> e;
    size_t i = 0;
    auto add = [&](const auto& a) {
        const ir::Type want = t.is_vector() ? ir::Type(t.scalar())
                              : t.is_record() && i < t.decl()->members.size()
                                  ? t.decl()->members[i].type
                                  : ir::Type();
        if constexpr (IsValue<std::remove_cvref_t<decltype(a)>>)
            e.push_back(detail::convert(a.expr(), want, "constructor argument"));
        else
            e.push_back(detail::convert(detail::constant(a), want, "constructor argument"));
        ++i;
    };
    (add(args), ...);
    return Value<T>(ir::Construct::make(t, std::move(e)));
}
// A vector of N copies of a scalar.
template <int N, IsValue A> Value<Vec<detail::vt<A>, N>> broadcast(const A& a) {
    return Value<Vec<detail::vt<A>, N>>(ir::Broadcast::make(a.expr(), N));
}

// ---- variants ----------------------------------------------------------------------------

// A value of variant V holding case C: px::make_variant<Kind, "charged">(q).
template <class V, FixedString C, class... P>
    requires is_variant_v<V> && (sizeof...(P) <= 1)
Value<V> make_variant(const P&... payload) {
    constexpr uint32_t index = V::template index_of<C>();
    using Payload = typename V::template payload_of<C>;
    static_assert(std::is_void_v<Payload> == (sizeof...(P) == 0),
                  "this case takes exactly its payload (or none)");
    ir::Expr p;
    if constexpr (sizeof...(P) == 1) p = Value<Payload>(payload...).expr();
    return Value<V>(ir::MakeVariant::make(type_of<V>(), index, p));
}

// One arm of a Match: px::on<"charged">([&](px::Var<float> q) { ... }); a case without
// payload, or an arm that ignores it, takes a lambda without parameters.
template <FixedString C, class F> struct On {
    F f;
};
template <FixedString C, class F> On<C, F> on(F f) {
    return {std::move(f)};
}
template <class F> struct Otherwise {
    F f;
};
template <class F> Otherwise<F> otherwise(F f) {
    return {std::move(f)};
}

namespace detail {
template <class X> struct is_otherwise : std::false_type {};
template <class F> struct is_otherwise<Otherwise<F>> : std::true_type {};
template <class V, class Arm> struct arm_index {
    static constexpr int value = -1;
};
template <class V, FixedString C, class F> struct arm_index<V, On<C, F>> {
    static constexpr int value = int(V::template index_of<C>());
};
// Every case once, unless an otherwise covers the rest.
template <class V, class... Arms> consteval bool arms_complete() {
    constexpr size_t n = std::tuple_size_v<typename V::cases>;
    int seen[n] = {};
    ((arm_index<V, Arms>::value >= 0 ? ++seen[arm_index<V, Arms>::value] : 0), ...);
    bool twice = false, missing = false;
    for (size_t i = 0; i < n; ++i)
        twice |= seen[i] > 1, missing |= seen[i] == 0;
    return !twice && (!missing || (is_otherwise<Arms>::value || ...));
}
} // namespace detail

// Runs the arm of the case the variant value holds. Every case needs an arm (each at most
// once) unless one arm is px::otherwise(...): checked at compile time here, and again by the
// validator for IR that comes from elsewhere.
template <class V, class... Arms>
    requires is_variant_v<V>
void Match(const Value<V>& v, Arms... arms) {
    static_assert(detail::arms_complete<V, Arms...>(),
                  "px::Match: every case of the variant needs exactly one px::on<\"case\"> arm, or "
                  "add px::otherwise");
    auto& t = detail::Tracer::current();
    std::vector<ir::MatchCase> cases;
    ir::Stmt rest;
    auto add = [&]<class Arm>(Arm& arm) {
        if constexpr (detail::is_otherwise<Arm>::value) {
            rest = t.trace_block([&] { arm.f(); });
        } else {
            constexpr uint32_t index = uint32_t(detail::arm_index<V, Arm>::value);
            using Payload = typename std::tuple_element_t<index, typename V::cases>::payload;
            ir::MatchCase c;
            c.index = index;
            if constexpr (std::is_void_v<Payload> || std::is_invocable_v<decltype(arm.f)>) {
                c.body = t.trace_block([&] { arm.f(); }); // no payload, or one the arm ignores
            } else {
                c.var = t.fresh("case");
                c.body = t.trace_block([&] { arm.f(Var<Payload>(detail::ParamTag{}, c.var)); });
            }
            cases.push_back(std::move(c));
        }
    };
    (add(arms), ...);
    t.emit(ir::Match::make(v.expr(), std::move(cases), rest));
}

// ---- work-item indices (i32; the *64 forms return i64 for grids beyond 2^31) -------------

namespace detail {
ir::Expr index_call(const char* base, int dim);
}
inline Value<int32_t> local_id(int d) {
    return cast<int32_t>(Value<uint32_t>(detail::index_call("local_id", d)));
}
inline Value<int32_t> group_id(int d) {
    return cast<int32_t>(Value<uint32_t>(detail::index_call("group_id", d)));
}
inline Value<int32_t> local_size(int d) {
    return cast<int32_t>(Value<uint32_t>(detail::index_call("local_size", d)));
}
inline Value<int32_t> num_groups(int d) {
    return cast<int32_t>(Value<uint32_t>(detail::index_call("num_groups", d)));
}
inline Value<int32_t> global_id(int d) {
    return cast<int32_t>(Value<uint64_t>(detail::index_call("global_id", d)));
}
inline Value<int32_t> global_size(int d) {
    return cast<int32_t>(Value<uint64_t>(detail::index_call("global_size", d)));
}
inline Value<int64_t> global_id64(int d) {
    return cast<int64_t>(Value<uint64_t>(detail::index_call("global_id", d)));
}
inline Value<int64_t> global_size64(int d) {
    return cast<int64_t>(Value<uint64_t>(detail::index_call("global_size", d)));
}

// ---- control flow ------------------------------------------------------------------------

// If(cond, [&]{ ... }).ElseIf(cond, [&]{ ... }).Else([&]{ ... });
class IfChain {
public:
    IfChain(Value<bool> cond, ir::Stmt then_body);
    IfChain& ElseIf(const Value<bool>& cond, const std::function<void()>& body);
    void Else(const std::function<void()>& body);

private:
    void rebuild();
    std::vector<std::pair<ir::Expr, ir::Stmt>> arms_;
    ir::Stmt else_;
    size_t depth_, index_;
};
IfChain If(const Value<bool>& cond, const std::function<void()>& body);

// How the backend's compiler should unroll a px::For loop, given as its last argument:
// For(0, n, body, px::unroll(4)). The loop stays one loop of the IR (ir::For::unroll) and only
// the compiler of the generated code unrolls it, so no hint changes what the kernel computes;
// a C++ loop around kernel code is unrolled by the tracer instead, into the IR itself.
struct Unroll {
    int64_t count = 0; // px::unroll's k, checked when the loop is traced
    bool full = false;
};
// Unroll by k, from 1 to ir::For::max_unroll; 1 keeps the loop rolled.
template <std::integral K> Unroll unroll(K k) {
    if constexpr (std::is_unsigned_v<K>)
        return {uint64_t(k) > uint64_t(INT64_MAX) ? INT64_MAX : int64_t(k), false};
    else
        return {int64_t(k), false};
}
// Keep the loop rolled where the compiler would unroll it by itself: unroll(1).
inline Unroll no_unroll() {
    return {1, false};
}
// Unroll the loop completely: for a loop whose begin, end and step are constants (C++ numbers);
// the validator refuses any other.
inline Unroll unroll_full() {
    return {0, true};
}
// What px::For takes as its last argument, so that a hint never reads as a step or a body.
template <class H>
concept LoopHint = std::same_as<std::remove_cvref_t<H>, Unroll>;

// For(begin, end, [&](Int i){ ... }) runs i = begin, begin + step, ... while i < end.
namespace detail {
template <class B, class E> struct loop_type {
    using type = common_t<B, E>;
};
template <std::integral B, std::integral E> struct loop_type<B, E> {
    using type = std::common_type_t<B, E>;
};
// The hint as ir::For::unroll: an InvalidKernel error naming the kernel for a count out of range.
uint32_t unroll_hint(const Unroll& hint);
template <Number T, class F>
void for_loop(const Value<T>& begin, const Value<T>& end, const Value<T>& step, F& body,
              const Unroll* hint = nullptr) {
    auto& t = Tracer::current();
    const uint32_t unroll = hint ? unroll_hint(*hint) : 0;
    std::string name = t.fresh("i");
    Var<T> var(ParamTag{}, name);
    ir::Stmt b = t.trace_block([&] { body(std::move(var)); });
    t.emit(ir::For::make(name, begin.expr(), end.expr(), step.expr(), b, unroll));
}
} // namespace detail
template <class B, class E, class F> void For(const B& begin, const E& end, F&& body) {
    using T = typename detail::loop_type<B, E>::type;
    detail::for_loop<T>(detail::lift<T>(begin), detail::lift<T>(end), Value<T>(T(1)), body);
}
template <class B, class E, class S, class F>
    requires(!LoopHint<F>)
void For(const B& begin, const E& end, const S& step, F&& body) {
    using T = typename detail::loop_type<B, E>::type;
    detail::for_loop<T>(detail::lift<T>(begin), detail::lift<T>(end), detail::lift<T>(step), body);
}
// With a hint: For(0, n, body, px::unroll(4)), For(0, 16, 2, body, px::unroll_full()).
template <class B, class E, class F, LoopHint H>
void For(const B& begin, const E& end, F&& body, const H& hint) {
    using T = typename detail::loop_type<B, E>::type;
    detail::for_loop<T>(detail::lift<T>(begin), detail::lift<T>(end), Value<T>(T(1)), body, &hint);
}
template <class B, class E, class S, class F, LoopHint H>
void For(const B& begin, const E& end, const S& step, F&& body, const H& hint) {
    using T = typename detail::loop_type<B, E>::type;
    detail::for_loop<T>(detail::lift<T>(begin), detail::lift<T>(end), detail::lift<T>(step), body,
                        &hint);
}
// The condition is an expression over variables, so it is re-evaluated on every iteration.
void While(const Value<bool>& cond, const std::function<void()>& body);
void Break();
void Continue();
void Return();

// ---- synchronization, atomics, native code (math: kernel_math.hpp) ------------------------

void barrier();
void fence_workgroup();
void fence_device();

// The work-group size the kernel declares (inside the kernel's lambda, once): every launch must
// use exactly this shape (and gets it when the grid names none), or at most this many
// work-items per group. The runtime enforces it on every backend; OpenCL C gets
// reqd_work_group_size, and the CUDA generators .reqntid / .maxntid / __launch_bounds__ above
// 256 work-items (codegen::unbounded_group_items), where it decides whether a launch fits.
void require_work_group_size(uint32_t x, uint32_t y = 1, uint32_t z = 1);
void max_work_group_size(uint32_t items);
// At least `groups` groups of the declared size resident at once on one compute unit (an SM):
// the CUDA generators pass it on (.minnctapersm, __launch_bounds__'s second argument), and
// ptxas caps each work-item's registers so that they fit; other backends ignore it. Needs
// require_work_group_size or max_work_group_size.
void min_groups_per_unit(uint32_t groups);
// The kernel is the library routine `name` (ir::routines(): "gemm_f16" ...), run by a backend
// that offers it through its vendor library (cuBLAS, OpenBLAS); its parameters must be the
// routine's, and the lambda calls nothing else. Backends that do not offer it are routed
// around like any that lacks a capability.
void routine(const std::string& name);

namespace detail {
// The array element a Part names, for an atomic: a whole element of a global or local array,
// of a type the atomic exists on.
const Place& atomic_place(const Place& p, ir::AtomicOp op, ir::Scalar type);
template <Number T>
Value<T> atomic(ir::AtomicOp op, const Part<T>& r, const Value<T>& v,
                const Value<T>* compare = nullptr) {
    auto& t = Tracer::current();
    const Place& p = atomic_place(r.place(), op, scalar_v<T>);
    // Bound to a variable at once, so the update happens here even if the result is unused.
    std::string name = t.fresh("old");
    t.emit(ir::Let::make(name, ir::Atomic::make(op, p.name, p.space, scalar_v<T>, p.index, v.expr(),
                                                compare ? compare->expr() : nullptr)));
    return Value<T>(ir::Var::make(name, scalar_v<T>));
}
} // namespace detail

#define PLEXUS_ATOMIC(fn, op)                                                                      \
    template <Number T, class V> Value<T> fn(const Part<T>& r, const V& v) {                       \
        return detail::atomic(ir::AtomicOp::op, r, detail::lift<T>(v));                            \
    }
PLEXUS_ATOMIC(atomic_add, Add)
PLEXUS_ATOMIC(atomic_sub, Sub)
PLEXUS_ATOMIC(atomic_min, Min)
PLEXUS_ATOMIC(atomic_max, Max)
PLEXUS_ATOMIC(atomic_and, And)
PLEXUS_ATOMIC(atomic_or, Or)
PLEXUS_ATOMIC(atomic_xor, Xor)
PLEXUS_ATOMIC(atomic_exchange, Xchg)
#undef PLEXUS_ATOMIC
// Stores `value` when the element equals `compare`; returns the previous value.
template <Number T, class C, class V>
Value<T> atomic_compare_exchange(const Part<T>& r, const C& compare, const V& value) {
    Value<T> c = detail::lift<T>(compare);
    return detail::atomic(ir::AtomicOp::CmpXchg, r, detail::lift<T>(value), &c);
}

// Backend code passed through untouched ({"opencl", "..."}, {"cuda", "..."}); backends with no
// entry run `fallback`, and a kernel without fallback is routed only to the named backends.
void native(std::map<std::string, std::string> code, const std::function<void()>& fallback = {});

// ---- kernels -----------------------------------------------------------------------------

namespace detail {
template <class P> struct param_traits;
template <Storable T, ir::Access A> struct param_traits<BufferParam<T, A>> {
    static ir::Param describe(const std::string& name) {
        return {name, ir::Param::Kind::Buffer, type_of<T>(), A};
    }
};
template <Number T> struct param_traits<Var<T>> {
    static ir::Param describe(const std::string& name) {
        return {name, ir::Param::Kind::Scalar, type_of<T>(), ir::Access::Read};
    }
};
template <class F> struct lambda_params : lambda_params<decltype(&F::operator())> {};
template <class C, class R, class... P> struct lambda_params<R (C::*)(P...) const> {
    using type = std::tuple<std::remove_cvref_t<P>...>;
};
template <class C, class R, class... P> struct lambda_params<R (C::*)(P...)> {
    using type = std::tuple<std::remove_cvref_t<P>...>;
};
std::shared_ptr<const ir::Kernel> finish_kernel(ir::Kernel k);
} // namespace detail

// A traced, validated kernel; Params are its parameter types, so launches are type-checked.
template <class... Params> class Kernel {
public:
    explicit Kernel(std::shared_ptr<const ir::Kernel> k) : ir_(std::move(k)) {}
    const ir::Kernel& ir() const { return *ir_; }
    const std::shared_ptr<const ir::Kernel>& ir_ptr() const { return ir_; }
    const std::string& name() const { return ir_->name; }

private:
    std::shared_ptr<const ir::Kernel> ir_;
};

namespace detail {
template <class F, class... P>
Kernel<P...> trace(std::string name, std::vector<std::string> names, F& f, std::tuple<P...>*) {
    if (!names.empty() && names.size() != sizeof...(P))
        throw Error(ErrorCode::InvalidKernel,
                    "kernel '" + name + "': " + std::to_string(names.size()) +
                        " parameter names for " + std::to_string(sizeof...(P)) + " parameters");
    for (size_t i = names.size(); i < sizeof...(P); ++i) {
        std::string generated = "p";
        names.push_back(generated.append(std::to_string(i)));
    }
    ir::Kernel k;
    k.name = std::move(name);
    k.params = {param_traits<P>::describe("")...};
    for (size_t i = 0; i < k.params.size(); ++i)
        k.params[i].name = names[i];
    {
        Tracer t(k);
        [&]<size_t... I>(std::index_sequence<I...>) {
            std::tuple<P...> args{P(ParamTag{}, names[I])...};
            k.body =
                t.trace_block([&] { std::apply([&](auto&... a) { f(std::move(a)...); }, args); });
        }(std::index_sequence_for<P...>{});
    }
    return Kernel<P...>(finish_kernel(std::move(k)));
}
} // namespace detail

// Traces `f` once into a kernel named `name` and validates it; `param_names` names the
// parameters (default p0, p1, ...), which is what generated code and errors show.
template <class F> auto kernel(std::string name, std::vector<std::string> param_names, F f) {
    using Params = typename detail::lambda_params<F>::type;
    return detail::trace(std::move(name), std::move(param_names), f, static_cast<Params*>(nullptr));
}
template <class F> auto kernel(std::string name, F f) {
    return kernel(std::move(name), {}, std::move(f));
}

// ---- inline definitions ------------------------------------------------------------------

namespace detail {
template <KernelType T> ir::Expr constant(const T& v) {
    if constexpr (std::same_as<T, bool>)
        return ir::Const::make_bool(v);
    else if constexpr (std::same_as<T, half> || std::same_as<T, bf16>)
        return ir::Const::make_float(scalar_v<T>, float(v));
    else if constexpr (std::is_floating_point_v<T>)
        return ir::Const::make_float(scalar_v<T>, v);
    else if constexpr (KernelScalar<T>)
        return ir::Const::make_int(scalar_v<T>, static_cast<int64_t>(v));
    else if constexpr (is_vec_v<T>) {
        std::vector<ir::Expr> lanes;
        for (int i = 0; i < T::lanes; ++i)
            lanes.push_back(constant(v[i]));
        return ir::Construct::make(type_of<T>(), std::move(lanes));
    } else if constexpr (KernelRecord<T>) {
        std::vector<ir::Expr> fields;
        std::apply([&](auto... m) { (fields.push_back(constant(v.*m)), ...); },
                   plexus_record_members(static_cast<const T*>(nullptr)));
        return ir::Construct::make(type_of<T>(), std::move(fields));
    } else {
        static_assert(!is_variant_v<T>, "a variant constant: use px::make_variant");
        return nullptr;
    }
}
} // namespace detail

} // namespace plexus

#include "plexus/kernel_math.hpp"
