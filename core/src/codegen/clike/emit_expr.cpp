// Expressions of the C-like emitter: every compound expression parenthesized, so the text
// means what the IR means whatever the precedence rules of the target language; integers wrap
// at their width and f16 / bf16 results are rounded to their type (docs/ir.md).
#include "emitter.hpp"

namespace plexus::codegen::clike {
bool has_atomic(const ir::Expr& e) {
    if (!e) return false;
    if (e->kind == ir::ExprKind::Atomic) return true;
    bool found = false;
    ir::for_each_child(*e, [&](const ir::Expr& c) { found = found || has_atomic(c); });
    return found;
}

namespace {

// The operations whose f16 / bf16 result needs rounding: min, max and negation give one of
// their operands' values, which the type holds already.
bool rounds(ir::BinaryOp op) {
    using ir::BinaryOp;
    return op == BinaryOp::Add || op == BinaryOp::Sub || op == BinaryOp::Mul || op == BinaryOp::Div;
}

} // namespace

std::string Emitter::visit(const ir::Const& n) {
    return ir::is_float(n.type) ? float_literal(d_, n.type.scalar(), n.f)
                                : int_literal(d_, n.type.scalar(), n.i);
}

std::string Emitter::visit(const ir::Var& n) {
    return name(n.name);
}

std::string Emitter::visit(const ir::Unary& n) {
    if (n.type.is_vector()) {
        value_type(n.type); // a dialect that defines its vectors defines their operators there
        return d_.vector_unary(n.op, n.type, expr(n.a));
    }
    const std::string type = value_type(n.type);
    if (n.op == ir::UnaryOp::Neg && wraps(n.type))
        return cat("(", type, ")(-", unsigned_form(n.a), ")");
    std::string code = n.op == ir::UnaryOp::Neg ? "(-" : n.op == ir::UnaryOp::Not ? "(!" : "(~";
    code += prefix_operand(expr(n.a));
    code += ')';
    // C computes ~ of a narrow integer in int: the result goes back to the type.
    return narrow(n.type) ? cat("(", type, ")", code) : code;
}

std::string Emitter::visit(const ir::Binary& n) {
    const bool float_product = ir::elem_float(n.type) && n.op == ir::BinaryOp::Mul;
    float_multiply_ = float_multiply_ || float_product;
    if (n.type.is_vector()) {
        const std::string type = value_type(n.type);
        std::string a = expr(n.a), b = expr(n.b), code;
        if (n.op == ir::BinaryOp::Min || n.op == ir::BinaryOp::Max)
            code = cat(d_.min_max_function(n.op == ir::BinaryOp::Min, n.type), "(",
                       full_expression(a), ", ", full_expression(b), ")");
        else
            code = d_.vector_binary(n.op, n.type, a, b);
        return ir::is_half(n.type.scalar()) && rounds(n.op) ? round_half(n.type, code) : code;
    }
    if (wraps(n)) return cat("(", value_type(n.type), ")", wrapped(n));
    std::string code = scalar_binary(n);
    if (ir::is_half(n.type) && rounds(n.op)) return round_half(n.type, code);
    // C promotes narrow integers to int: the result goes back to the type (comparisons and
    // the logical operators are bool).
    return narrow(n.type) ? cat("(", value_type(n.type), ")", code) : code;
}

std::string Emitter::scalar_binary(const ir::Binary& n) {
    std::string a = prefix_operand(expr(n.a)), b = prefix_operand(expr(n.b));
    if (n.op == ir::BinaryOp::Min || n.op == ir::BinaryOp::Max)
        return cat(d_.min_max_function(n.op == ir::BinaryOp::Min, n.a->type), "(",
                   full_expression(a), ", ", full_expression(b), ")");
    if (n.op == ir::BinaryOp::Shr) b = shift_amount(n.b);
    if (n.op == ir::BinaryOp::Mul && ir::is_float(n.type))
        return d_.float_product(n.type.scalar(), a, b);
    return cat("(", a, " ", ir::c_symbol(n.op), " ", b, ")");
}

std::string Emitter::visit(const ir::Select& n) {
    // The IR evaluates both arms, C's ?: only one: an arm with an effect (an atomic) is
    // evaluated into a temporary first, with the comma operator so that it stays inside
    // the expression (a loop condition re-evaluates it each time, a short-circuit skips it).
    std::string cond = expr(n.cond), a = expr(n.a), b = expr(n.b), first;
    if (has_atomic(n.a)) a = hoist(n.type, a, first);
    if (has_atomic(n.b)) b = hoist(n.type, b, first);
    std::string code = cat("(", first, cond, " ? ", a, " : ", b, ")");
    // ?: converts narrow integer arms to int: the result goes back to the type.
    return narrow(n.type) ? cat("(", value_type(n.type), ")", code) : code;
}

std::string Emitter::visit(const ir::Cast& n) {
    return convert(n.a->type, n.type, expr(n.a));
}

std::string Emitter::visit(const ir::Load& n) {
    return to_value(n.type, element(n.array, n.index));
}

std::string Emitter::visit(const ir::Call& n) {
    std::vector<std::string> args;
    for (auto& a : n.args)
        args.push_back(expr(a));
    std::string code = operand(substitute(spelling(n.name), args, n.name));
    if (d_.cast_integer_calls() && ir::is_integer(n.type))
        code = cat("(", value_type(n.type), ")", code);
    return code;
}

std::string Emitter::visit(const ir::Atomic& n) {
    return atomic(n, false);
}

std::string Emitter::visit(const ir::Field& n) {
    const DeclNames& names = decl_names(*n.base->type.decl());
    return to_value(n.type, cat(postfix_operand(expr(n.base)), ".", names.members[n.index]));
}

std::string Emitter::visit(const ir::Swizzle& n) {
    value_type(n.base->type);
    std::string base = expr(n.base);
    if (n.lanes.size() == 1) return d_.lane(base, n.lanes[0], n.base->type.lanes());
    value_type(n.type);
    return d_.swizzle(base, n.lanes, n.base->type.lanes(), prelude_);
}

std::string Emitter::visit(const ir::Broadcast& n) {
    return d_.broadcast(value_type(n.type), n.type.lanes(), expr(n.value), prelude_);
}

std::string Emitter::visit(const ir::Construct& n) {
    std::vector<std::string> parts;
    if (n.type.is_vector()) {
        for (auto& a : n.args)
            parts.push_back(expr(a));
        return d_.vector_literal(value_type(n.type), parts);
    }
    for (auto& a : n.args)
        parts.push_back(to_storage(a->type, expr(a))); // fields live in memory form
    return d_.record_literal(value_type(n.type), parts);
}

std::string Emitter::visit(const ir::MakeVariant& n) {
    const ir::TypeDecl& d = *n.type.decl();
    std::string payload = n.payload ? to_storage(n.payload->type, expr(n.payload)) : "";
    return d_.variant_literal(d, decl_names(d), n.index, payload);
}

// ---- helpers ----------------------------------------------------------------------------

// True when `code` is "(T)x" for a scalar type of the language and a primary (or cast) x.
bool Emitter::is_cast(const std::string& code) const {
    using ir::Scalar;
    for (Scalar t : {Scalar::Bool, Scalar::I8, Scalar::U8, Scalar::I16, Scalar::U16, Scalar::I32,
                     Scalar::U32, Scalar::I64, Scalar::U64, Scalar::F32, Scalar::F64}) {
        const std::string prefix = cat("(", d_.scalar_name(t), ")");
        if (code.size() > prefix.size() && code.compare(0, prefix.size(), prefix) == 0) {
            std::string rest = code.substr(prefix.size());
            return is_primary(rest) || is_cast(rest);
        }
    }
    return false;
}

std::string Emitter::prefix_operand(const std::string& code) const {
    return is_primary(code) || is_cast(code) ? code : cat("(", code, ")");
}

std::string Emitter::element(const std::string& array, const ir::Expr& index) {
    return cat(name(array), "[", full_expression(expr(index)), "]");
}

std::string Emitter::atomic(const ir::Atomic& n, bool discard_result) {
    AtomicCode code;
    code.args.emplace_back(1, '&');
    code.args.back() += element(n.array, n.index);
    if (n.compare) code.args.push_back(expr(n.compare));
    code.args.push_back(expr(n.value));
    d_.atomic_operands(n, code);
    std::string intrinsic = n.intrinsic();
    std::string call =
        operand(substitute(atomic_spelling(intrinsic, discard_result), code.args, intrinsic));
    if (discard_result || code.result_cast.empty()) return call;
    return cat("(", code.result_cast, call, ")");
}

// Signed overflow is undefined in C and compilers exploit it (Clang turns x + INT_MIN
// into x | INT_MIN), while the IR wraps: signed +, -, *, << and negation are computed in
// the unsigned type of the same width and converted back, which wraps everywhere. The narrow
// types are computed in 32-bit unsigned arithmetic (C would promote them to int, where
// u16 * u16 can overflow) and converted back, which keeps their low bits.
bool Emitter::narrow(const ir::Type& t) {
    using ir::Scalar;
    return t == Scalar::I8 || t == Scalar::U8 || t == Scalar::I16 || t == Scalar::U16;
}
bool Emitter::wraps(const ir::Type& t) {
    return t == ir::Scalar::I32 || t == ir::Scalar::I64 || narrow(t);
}
bool Emitter::wraps(const ir::Binary& n) {
    using ir::BinaryOp;
    return wraps(n.type) && (n.op == BinaryOp::Add || n.op == BinaryOp::Sub ||
                             n.op == BinaryOp::Mul || n.op == BinaryOp::Shl);
}

// A wrapping operation of the IR in the unsigned type: "((uint)a + 16u)".
std::string Emitter::wrapped(const ir::Binary& n) {
    std::string a = unsigned_form(n.a);
    std::string b = n.op == ir::BinaryOp::Shl ? shift_amount(n.b) : unsigned_form(n.b);
    return cat("(", a, " ", ir::c_symbol(n.op), " ", b, ")");
}

// The value of an integer expression in the unsigned type of its width (32 bits for the
// narrow types), without a round trip through the signed or narrow type where the expression
// is itself a wrapped operation: the low bits that the final conversion keeps are the same.
std::string Emitter::unsigned_form(const ir::Expr& e) {
    const ir::Scalar u = e->type == ir::Scalar::I64 || e->type == ir::Scalar::U64 ? ir::Scalar::U64
                                                                                  : ir::Scalar::U32;
    if (auto c = ir::as<ir::Const>(e)) return int_literal(d_, u, c->i);
    if (auto b = ir::as<ir::Binary>(e); b && wraps(*b)) return wrapped(*b);
    if (auto n = ir::as<ir::Unary>(e); n && n->op == ir::UnaryOp::Neg)
        return cat("(-", unsigned_form(n->a), ")");
    if (auto c = ir::as<ir::Cast>(e); c && c->a->type == u) return prefix_operand(expr(c->a));
    return cat("(", d_.scalar_name(u), ")", prefix_operand(expr(e)));
}

// The IR takes a shift amount modulo the bit width; C leaves a wider shift undefined.
std::string Emitter::shift_amount(const ir::Expr& amount) {
    ir::Scalar t = amount->type.scalar();
    int64_t mask = int64_t(ir::size_of(t) * 8 - 1);
    if (auto c = ir::as<ir::Const>(amount)) return int_literal(d_, t, c->i & mask);
    return cat("(", prefix_operand(expr(amount)), " & ", int_literal(d_, t, mask), ")");
}

std::string Emitter::hoist(const ir::Type& type, const std::string& code, std::string& first) {
    std::string t = cat("plx_arm_", std::to_string(temps_++));
    pending_.push_back(value_type(type) + " " + t + ";");
    first += cat(t, " = ", code, ", ");
    return t;
}

} // namespace plexus::codegen::clike
