// The plexus kernel language: C++ that traces into the IR. A kernel is a lambda over In<T>,
// Out<T>, InOut<T> and scalar parameters; running it once under a tracer records statements.
#pragma once

#include "plexus/error.hpp"
#include "plexus/ir.hpp"

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

// ---- scalar types -----------------------------------------------------------------------

template <class T> struct scalar_of;
template <> struct scalar_of<bool> { static constexpr ir::Scalar value = ir::Scalar::Bool; };
template <> struct scalar_of<int32_t> { static constexpr ir::Scalar value = ir::Scalar::I32; };
template <> struct scalar_of<uint32_t> { static constexpr ir::Scalar value = ir::Scalar::U32; };
template <> struct scalar_of<int64_t> { static constexpr ir::Scalar value = ir::Scalar::I64; };
template <> struct scalar_of<uint64_t> { static constexpr ir::Scalar value = ir::Scalar::U64; };
template <> struct scalar_of<float> { static constexpr ir::Scalar value = ir::Scalar::F32; };
template <> struct scalar_of<double> { static constexpr ir::Scalar value = ir::Scalar::F64; };
template <class T> inline constexpr ir::Scalar scalar_v = scalar_of<T>::value;

template <class T>
concept KernelScalar = requires { scalar_of<T>::value; };
template <class T>
concept Number = KernelScalar<T> && !std::same_as<T, bool>;

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

private:
    ir::Kernel& kernel_;
    std::vector<std::vector<ir::Stmt>> blocks_;
    Tracer* previous_;
    int next_ = 0;
};

struct ParamTag {};

} // namespace detail

// ---- values ------------------------------------------------------------------------------

// An expression of type T (an rvalue).
template <KernelScalar T> class Value {
public:
    using type = T;
    explicit Value(ir::Expr e) : e_(std::move(e)) {}
    Value(T literal) : e_(make_const(literal)) {}
    const ir::Expr& expr() const { return e_; }

protected:
    ir::Expr e_;

    static ir::Expr make_const(T v) {
        if constexpr (std::same_as<T, bool>) return ir::Const::make_bool(v);
        else if constexpr (std::is_floating_point_v<T>) return ir::Const::make_float(scalar_v<T>, v);
        else return ir::Const::make_int(scalar_v<T>, static_cast<int64_t>(v));
    }
};

// A mutable variable of the kernel: construction declares it, assignment assigns it.
template <KernelScalar T> class Var : public Value<T> {
public:
    Var() : Var(Value<T>(T{})) {}
    Var(T literal) : Var(Value<T>(literal)) {}
    Var(const Value<T>& init) : Value<T>(nullptr) { declare(init.expr()); }
    Var(const Var& other) : Value<T>(nullptr) { declare(other.expr()); }
    // Moving binds the same variable: how parameters and loop variables reach the lambda.
    Var(Var&& other) noexcept : Value<T>(std::move(other.e_)), name_(std::move(other.name_)) {}
    // Binds a parameter or loop variable by name, declaring nothing.
    Var(detail::ParamTag, std::string name)
        : Value<T>(ir::Var::make(name, scalar_v<T>)), name_(std::move(name)) {}

    Var& operator=(const Value<T>& v) {
        detail::Tracer::current().emit(ir::Assign::make(name_, v.expr()));
        return *this;
    }
    Var& operator=(const Var& v) { return *this = static_cast<const Value<T>&>(v); }
    Var& operator=(T v) { return *this = Value<T>(v); }
    const std::string& name() const { return name_; }

private:
    std::string name_;
    void declare(const ir::Expr& init) {
        auto& t = detail::Tracer::current();
        name_ = t.fresh("v");
        t.emit(ir::Let::make(name_, init));
        this->e_ = ir::Var::make(name_, scalar_v<T>);
    }
};

using Bool = Var<bool>;
using Int = Var<int32_t>;
using UInt = Var<uint32_t>;
using Long = Var<int64_t>;
using ULong = Var<uint64_t>;
using Float = Var<float>;
using Double = Var<double>;

// An element of an array that can be written: Out<T>, InOut<T>, shared arrays.
template <Number T> class Ref : public Value<T> {
public:
    Ref(std::string array, ir::Space space, ir::Expr index)
        : Value<T>(ir::Load::make(array, space, scalar_v<T>, index)),
          array_(std::move(array)),
          space_(space),
          index_(std::move(index)) {}
    const Ref& operator=(const Value<T>& v) const {
        detail::Tracer::current().emit(ir::Store::make(array_, space_, index_, v.expr()));
        return *this;
    }
    const Ref& operator=(const Ref& v) const { return *this = static_cast<const Value<T>&>(v); }
    const Ref& operator=(T v) const { return *this = Value<T>(v); }
    const std::string& array() const { return array_; }
    ir::Space space() const { return space_; }
    const ir::Expr& index() const { return index_; }

private:
    std::string array_;
    ir::Space space_;
    ir::Expr index_;
};

template <class I>
concept IndexLike = std::integral<I> || requires(const I& i) {
    requires std::integral<typename I::type>;
    { i.expr() } -> std::convertible_to<ir::Expr>;
};
namespace detail {
template <IndexLike I> ir::Expr index_expr(const I& i) {
    if constexpr (std::integral<I>) return ir::Const::make_int(ir::Scalar::I64, static_cast<int64_t>(i));
    else return i.expr();
}
} // namespace detail

// ---- parameters --------------------------------------------------------------------------

template <Number T, ir::Access A> class BufferParam {
public:
    using element = T;
    static constexpr ir::Access access = A;
    BufferParam(detail::ParamTag, std::string name) : name_(std::move(name)) {}
    const std::string& name() const { return name_; }

    template <IndexLike I> auto operator[](const I& i) const {
        if constexpr (A == ir::Access::Read)
            return Value<T>(ir::Load::make(name_, ir::Space::Global, scalar_v<T>, detail::index_expr(i)));
        else
            return Ref<T>(name_, ir::Space::Global, detail::index_expr(i));
    }

private:
    std::string name_;
};

template <Number T> using In = BufferParam<T, ir::Access::Read>;
template <Number T> using Out = BufferParam<T, ir::Access::Write>;
template <Number T> using InOut = BufferParam<T, ir::Access::ReadWrite>;

// A work-group shared array declared inside a kernel: px::shared<float>(256).
template <Number T> class Shared {
public:
    Shared(std::string name, uint32_t count) : name_(std::move(name)), count_(count) {}
    template <IndexLike I> Ref<T> operator[](const I& i) const {
        return Ref<T>(name_, ir::Space::Local, detail::index_expr(i));
    }
    uint32_t size() const { return count_; }

private:
    std::string name_;
    uint32_t count_;
};

template <Number T> Shared<T> shared(uint32_t count) {
    auto& t = detail::Tracer::current();
    std::string name = t.fresh("shared");
    t.kernel().shared.push_back({name, scalar_v<T>, count});
    return Shared<T>(name, count);
}

// ---- operators ---------------------------------------------------------------------------

namespace detail {
template <class T, class U> Value<T> lift(const U& u) {
    if constexpr (std::is_arithmetic_v<U>) return Value<T>(static_cast<T>(u));
    else return Value<T>(u.expr());
}
template <class A, class B> struct common_value;
template <class T> struct common_value<Value<T>, Value<T>> { using type = T; };
template <class T, class U> requires std::is_arithmetic_v<U> struct common_value<Value<T>, U> { using type = T; };
template <class T, class U> requires std::is_arithmetic_v<U> struct common_value<U, Value<T>> { using type = T; };

template <class X> struct as_value { using type = X; };
template <class T> struct as_value<Var<T>> { using type = Value<T>; };
template <class T> struct as_value<Ref<T>> { using type = Value<T>; };
template <class X> using value_t = typename common_value<
    typename as_value<std::remove_cvref_t<std::tuple_element_t<0, X>>>::type,
    typename as_value<std::remove_cvref_t<std::tuple_element_t<1, X>>>::type>::type;
} // namespace detail

// An operand pair is allowed when both are values of one type, or a value and a C++ number
// (converted to the value's type). Mixing two value types needs an explicit cast<T>().
template <class A, class B>
concept Operands = requires { typename detail::value_t<std::tuple<A, B>>; } &&
                   !(std::is_arithmetic_v<A> && std::is_arithmetic_v<B>);

#define PLEXUS_BINARY(op, irop, result)                                                        \
    template <class A, class B>                                                                \
        requires Operands<A, B>                                                                \
    auto operator op(const A& a, const B& b) {                                                 \
        using T = detail::value_t<std::tuple<A, B>>;                                           \
        using R = result;                                                                      \
        return Value<R>(ir::Binary::make(ir::BinaryOp::irop, detail::lift<T>(a).expr(),        \
                                         detail::lift<T>(b).expr()));                          \
    }
PLEXUS_BINARY(+, Add, T)
PLEXUS_BINARY(-, Sub, T)
PLEXUS_BINARY(*, Mul, T)
PLEXUS_BINARY(/, Div, T)
PLEXUS_BINARY(%, Rem, T)
PLEXUS_BINARY(&, BitAnd, T)
PLEXUS_BINARY(|, BitOr, T)
PLEXUS_BINARY(^, BitXor, T)
PLEXUS_BINARY(<<, Shl, T)
PLEXUS_BINARY(>>, Shr, T)
PLEXUS_BINARY(&&, LogicalAnd, T)
PLEXUS_BINARY(||, LogicalOr, T)
PLEXUS_BINARY(==, Eq, bool)
PLEXUS_BINARY(!=, Ne, bool)
PLEXUS_BINARY(<, Lt, bool)
PLEXUS_BINARY(<=, Le, bool)
PLEXUS_BINARY(>, Gt, bool)
PLEXUS_BINARY(>=, Ge, bool)
#undef PLEXUS_BINARY

template <KernelScalar T> Value<T> operator-(const Value<T>& a) {
    return Value<T>(ir::Unary::make(ir::UnaryOp::Neg, a.expr()));
}
inline Value<bool> operator!(const Value<bool>& a) {
    return Value<bool>(ir::Unary::make(ir::UnaryOp::Not, a.expr()));
}
template <KernelScalar T> Value<T> operator~(const Value<T>& a) {
    return Value<T>(ir::Unary::make(ir::UnaryOp::BitNot, a.expr()));
}

// Compound assignment on variables and writable elements.
#define PLEXUS_COMPOUND(op, bop)                                                               \
    template <KernelScalar T, class B>                                                         \
    Var<T>& operator op(Var<T>& a, const B& b) {                                               \
        a = static_cast<const Value<T>&>(a) bop detail::lift<T>(b);                            \
        return a;                                                                              \
    }                                                                                          \
    template <Number T, class B>                                                               \
    const Ref<T>& operator op(const Ref<T>& a, const B& b) {                                   \
        a = static_cast<const Value<T>&>(a) bop detail::lift<T>(b);                            \
        return a;                                                                              \
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

template <KernelScalar To, KernelScalar From> Value<To> cast(const Value<From>& v) {
    return Value<To>(ir::Cast::make(scalar_v<To>, v.expr()));
}
// c ? a : b, both arms evaluated; one arm may be a C++ number.
template <class A, class B>
    requires Operands<A, B>
auto select(const Value<bool>& c, const A& a, const B& b) {
    using T = detail::value_t<std::tuple<A, B>>;
    return Value<T>(ir::Select::make(c.expr(), detail::lift<T>(a).expr(), detail::lift<T>(b).expr()));
}

// ---- work-item indices (i32; the *64 forms return i64 for grids beyond 2^31) -------------

namespace detail {
ir::Expr index_call(const char* base, int dim);
}
inline Value<int32_t> local_id(int d) { return cast<int32_t>(Value<uint32_t>(detail::index_call("local_id", d))); }
inline Value<int32_t> group_id(int d) { return cast<int32_t>(Value<uint32_t>(detail::index_call("group_id", d))); }
inline Value<int32_t> local_size(int d) { return cast<int32_t>(Value<uint32_t>(detail::index_call("local_size", d))); }
inline Value<int32_t> num_groups(int d) { return cast<int32_t>(Value<uint32_t>(detail::index_call("num_groups", d))); }
inline Value<int32_t> global_id(int d) { return cast<int32_t>(Value<uint64_t>(detail::index_call("global_id", d))); }
inline Value<int32_t> global_size(int d) { return cast<int32_t>(Value<uint64_t>(detail::index_call("global_size", d))); }
inline Value<int64_t> global_id64(int d) { return cast<int64_t>(Value<uint64_t>(detail::index_call("global_id", d))); }
inline Value<int64_t> global_size64(int d) { return cast<int64_t>(Value<uint64_t>(detail::index_call("global_size", d))); }

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

// For(begin, end, [&](Int i){ ... }) runs i = begin, begin + step, ... while i < end.
namespace detail {
template <class B, class E> struct loop_type {
    using type = value_t<std::tuple<B, E>>;
};
template <std::integral B, std::integral E> struct loop_type<B, E> {
    using type = std::common_type_t<B, E>;
};
template <Number T, class F>
void for_loop(const Value<T>& begin, const Value<T>& end, const Value<T>& step, F& body) {
    auto& t = Tracer::current();
    std::string name = t.fresh("i");
    Var<T> var(ParamTag{}, name);
    ir::Stmt b = t.trace_block([&] { body(std::move(var)); });
    t.emit(ir::For::make(name, begin.expr(), end.expr(), step.expr(), b));
}
} // namespace detail
template <class B, class E, class F> void For(const B& begin, const E& end, F&& body) {
    using T = typename detail::loop_type<B, E>::type;
    detail::for_loop<T>(detail::lift<T>(begin), detail::lift<T>(end), Value<T>(T(1)), body);
}
template <class B, class E, class S, class F>
void For(const B& begin, const E& end, const S& step, F&& body) {
    using T = typename detail::loop_type<B, E>::type;
    detail::for_loop<T>(detail::lift<T>(begin), detail::lift<T>(end), detail::lift<T>(step), body);
}
// The condition is an expression over variables, so it is re-evaluated on every iteration.
void While(const Value<bool>& cond, const std::function<void()>& body);
void Break();
void Continue();
void Return();

// ---- synchronization, atomics, math, native code ----------------------------------------

void barrier();
void fence_workgroup();
void fence_device();

namespace detail {
template <Number T> Value<T> atomic(ir::AtomicOp op, const Ref<T>& r, const Value<T>& v,
                                    const Value<T>* compare = nullptr) {
    auto& t = Tracer::current();
    // Bound to a variable at once, so the update happens here even if the result is unused.
    std::string name = t.fresh("old");
    t.emit(ir::Let::make(name, ir::Atomic::make(op, r.array(), r.space(), scalar_v<T>, r.index(),
                                                v.expr(), compare ? compare->expr() : nullptr)));
    return Value<T>(ir::Var::make(name, scalar_v<T>));
}
} // namespace detail

#define PLEXUS_ATOMIC(fn, op)                                                                  \
    template <Number T, class V> Value<T> fn(const Ref<T>& r, const V& v) {                    \
        return detail::atomic(ir::AtomicOp::op, r, detail::lift<T>(v));                        \
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
Value<T> atomic_compare_exchange(const Ref<T>& r, const C& compare, const V& value) {
    Value<T> c = detail::lift<T>(compare);
    return detail::atomic(ir::AtomicOp::CmpXchg, r, detail::lift<T>(value), &c);
}

namespace detail {
template <class T> ir::Expr math_call(const char* name, std::vector<ir::Expr> args) {
    static_assert(std::is_floating_point_v<T>, "math functions take float or double");
    return ir::Call::make(std::string(name) + (std::same_as<T, float> ? "_f32" : "_f64"), std::move(args));
}
} // namespace detail
#define PLEXUS_MATH1(fn)                                                                       \
    template <class T> Value<T> fn(const Value<T>& x) {                                        \
        return Value<T>(detail::math_call<T>(#fn, {x.expr()}));                                \
    }
PLEXUS_MATH1(sqrt)
PLEXUS_MATH1(rsqrt)
PLEXUS_MATH1(exp)
PLEXUS_MATH1(exp2)
PLEXUS_MATH1(log)
PLEXUS_MATH1(log2)
PLEXUS_MATH1(sin)
PLEXUS_MATH1(cos)
PLEXUS_MATH1(tan)
PLEXUS_MATH1(fabs)
PLEXUS_MATH1(floor)
PLEXUS_MATH1(ceil)
#undef PLEXUS_MATH1
template <class T> Value<T> pow(const Value<T>& x, const Value<T>& y) {
    return Value<T>(detail::math_call<T>("pow", {x.expr(), y.expr()}));
}
template <class T> Value<T> fma(const Value<T>& a, const Value<T>& b, const Value<T>& c) {
    return Value<T>(detail::math_call<T>("fma", {a.expr(), b.expr(), c.expr()}));
}
template <class T> Value<T> clamp(const Value<T>& x, const Value<T>& lo, const Value<T>& hi) {
    if constexpr (std::is_floating_point_v<T>)
        return Value<T>(detail::math_call<T>("clamp", {x.expr(), lo.expr(), hi.expr()}));
    else
        return min(max(x, lo), hi);
}
// min / max of two values of one type (integers compare with their signedness).
template <class A, class B> requires Operands<A, B> auto min(const A& a, const B& b) {
    using T = detail::value_t<std::tuple<A, B>>;
    return Value<T>(ir::Binary::make(ir::BinaryOp::Min, detail::lift<T>(a).expr(), detail::lift<T>(b).expr()));
}
template <class A, class B> requires Operands<A, B> auto max(const A& a, const B& b) {
    using T = detail::value_t<std::tuple<A, B>>;
    return Value<T>(ir::Binary::make(ir::BinaryOp::Max, detail::lift<T>(a).expr(), detail::lift<T>(b).expr()));
}

// Backend code passed through untouched ({"opencl", "..."}, {"cuda", "..."}); backends with no
// entry run `fallback`, and a kernel without fallback is routed only to the named backends.
void native(std::map<std::string, std::string> code, const std::function<void()>& fallback = {});

// ---- kernels -----------------------------------------------------------------------------

namespace detail {
template <class P> struct param_traits;
template <Number T, ir::Access A> struct param_traits<BufferParam<T, A>> {
    static ir::Param describe(const std::string& name) {
        return {name, ir::Param::Kind::Buffer, scalar_v<T>, A};
    }
};
template <Number T> struct param_traits<Var<T>> {
    static ir::Param describe(const std::string& name) {
        return {name, ir::Param::Kind::Scalar, scalar_v<T>, ir::Access::Read};
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
        throw Error(ErrorCode::InvalidKernel, "kernel '" + name + "': " + std::to_string(names.size()) +
                                                  " parameter names for " + std::to_string(sizeof...(P)) +
                                                  " parameters");
    for (size_t i = names.size(); i < sizeof...(P); ++i) {
        std::string generated = "p";
        names.push_back(generated.append(std::to_string(i)));
    }
    ir::Kernel k;
    k.name = std::move(name);
    k.params = {param_traits<P>::describe("")...};
    for (size_t i = 0; i < k.params.size(); ++i) k.params[i].name = names[i];
    {
        Tracer t(k);
        [&]<size_t... I>(std::index_sequence<I...>) {
            std::tuple<P...> args{P(ParamTag{}, names[I])...};
            k.body = t.trace_block([&] { std::apply([&](auto&... a) { f(std::move(a)...); }, args); });
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
template <class F> auto kernel(std::string name, F f) { return kernel(std::move(name), {}, std::move(f)); }

} // namespace plexus
