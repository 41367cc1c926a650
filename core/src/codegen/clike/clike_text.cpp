// Text helpers of the C-like emitter: exact literals, operand parenthesization and the
// substitution of $N in intrinsic spellings.
#include "clike.hpp"

#include "plexus/error.hpp"

#include <bit>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>

namespace plexus::codegen::clike {
namespace {

bool ident_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

bool opens(char c) {
    return c == '(' || c == '[' || c == '{';
}
bool closes(char c) {
    return c == ')' || c == ']' || c == '}';
}

// Index of the bracket closing the one at `open`, or npos.
size_t matching(const std::string& s, size_t open) {
    int depth = 0;
    for (size_t i = open; i < s.size(); ++i) {
        if (opens(s[i])) ++depth;
        if (closes(s[i])) {
            if (--depth == 0) return i;
        }
    }
    return std::string::npos;
}

// The end of a template argument list "<plx_float4>" at `open` right after a name, or npos
// when what follows is no such list. Binary operators are always written with spaces around
// them, so a '<' that touches a name and holds only names and spaces opens template arguments.
size_t template_arguments(const std::string& s, size_t open) {
    if (open == 0 || !ident_char(s[open - 1])) return std::string::npos;
    for (size_t i = open + 1; i < s.size(); ++i) {
        if (s[i] == '>') return i;
        if (!ident_char(s[i]) && s[i] != ' ') return std::string::npos;
    }
    return std::string::npos;
}

} // namespace

bool is_primary(const std::string& code) {
    size_t i = !code.empty() && code[0] == '&' ? 1 : 0;
    if (i >= code.size()) return false;
    int depth = 0;
    bool after_group = false; // a name right after "(T)" makes a cast, which is no primary
    for (; i < code.size(); ++i) {
        char c = code[i];
        if (opens(c)) {
            ++depth;
        } else if (closes(c)) {
            if (--depth < 0) return false;
            after_group = depth == 0;
        } else if (depth == 0) {
            if (c == '<') {
                size_t end = template_arguments(code, i);
                if (end == std::string::npos) return false;
                i = end;
                continue;
            }
            // '.' and "::" join the parts of a name; a ':' with spaces around it is a ?:.
            if (!ident_char(c) && c != '.' && c != ':') return false;
            if (after_group && c != '.') return false;
            after_group = false;
        }
    }
    return depth == 0;
}

std::string operand(const std::string& code) {
    return is_primary(code) ? code : "(" + code + ")";
}

std::string postfix_operand(const std::string& code) {
    bool whole_group = !code.empty() && code.front() == '(' && matching(code, 0) == code.size() - 1;
    bool chain = !code.empty() && ident_char(code.front()) && is_primary(code);
    return whole_group || chain ? code : cat("(", code, ")");
}

std::string strip_parens(const std::string& code) {
    if (code.size() >= 2 && code.front() == '(' && matching(code, 0) == code.size() - 1)
        return code.substr(1, code.size() - 2);
    return code;
}

std::string full_expression(const std::string& code) {
    std::string inner = strip_parens(code);
    int depth = 0;
    for (char c : inner) {
        if (opens(c)) ++depth;
        if (closes(c)) --depth;
        if (c == ',' && depth == 0) return code;
    }
    return inner;
}

std::string join_args(const std::vector<std::string>& args) {
    std::string out;
    for (size_t i = 0; i < args.size(); ++i)
        out += cat(i ? ", " : "", full_expression(args[i]));
    return out;
}

std::string substitute(const std::string& spelling, const std::vector<std::string>& args,
                       const std::string& intrinsic) {
    std::string out;
    for (size_t i = 0; i < spelling.size(); ++i) {
        if (spelling[i] != '$' || i + 1 >= spelling.size() ||
            !std::isdigit(static_cast<unsigned char>(spelling[i + 1]))) {
            out += spelling[i];
            continue;
        }
        size_t n = 0, j = i + 1;
        while (j < spelling.size() && std::isdigit(static_cast<unsigned char>(spelling[j])))
            n = n * 10 + size_t(spelling[j++] - '0');
        if (n >= args.size())
            throw Error(ErrorCode::InvalidKernel, "the spelling '" + spelling + "' of intrinsic '" +
                                                      intrinsic + "' uses $" + std::to_string(n) +
                                                      ", but it takes " +
                                                      std::to_string(args.size()) + " arguments");
        // Between "(" or "," and "," or ")", the argument is a whole expression.
        size_t before = spelling.find_last_not_of(' ', i == 0 ? std::string::npos : i - 1);
        size_t after = spelling.find_first_not_of(' ', j);
        bool whole = i > 0 && before != std::string::npos &&
                     (spelling[before] == '(' || spelling[before] == ',') &&
                     after != std::string::npos &&
                     (spelling[after] == ',' || spelling[after] == ')');
        out += whole ? full_expression(args[n]) : operand(args[n]);
        i = j - 1;
    }
    return out;
}

std::string int_literal(const Dialect& d, ir::Scalar t, int64_t v) {
    using ir::Scalar;
    const std::string suffix = d.int_suffix(t);
    switch (t) {
    case Scalar::Bool: return v ? "true" : "false";
    // C has no literals of the narrow types: a cast of an int literal, which holds them all.
    case Scalar::I8:
    case Scalar::U8:
    case Scalar::I16:
    case Scalar::U16:
        return cat("(", d.scalar_name(t), ")",
                   v < 0 ? cat("(-", std::to_string(-v), ")") : std::to_string(v));
    case Scalar::U32: return std::to_string(static_cast<uint32_t>(v)) + suffix;
    case Scalar::U64: return std::to_string(static_cast<uint64_t>(v)) + suffix;
    case Scalar::I32:
    case Scalar::I64: {
        // The most negative value has no literal: -2147483648 is the negation of a constant
        // too large for int, which C gives a wider type.
        int64_t lowest = t == Scalar::I32 ? std::numeric_limits<int32_t>::min()
                                          : std::numeric_limits<int64_t>::min();
        if (v == lowest) return "(-" + std::to_string(-(v + 1)) + suffix + " - 1" + suffix + ")";
        if (v < 0) return "(-" + std::to_string(-v) + suffix + ")";
        return std::to_string(v) + suffix;
    }
    default: break;
    }
    throw Error(ErrorCode::Internal,
                std::string("integer literal of type ") + ir::to_string(t) + " (a bug in plexus)");
}

std::string float_literal(const Dialect& d, ir::Scalar t, double v) {
    // An f16 or bf16 constant is held as the float of the same value (exact: make_float
    // rounded it to the type).
    const bool single = t == ir::Scalar::F32 || ir::is_half(t);
    if (!std::isfinite(v))
        return single ? d.float_from_bits(ir::Scalar::F32,
                                          std::bit_cast<uint32_t>(static_cast<float>(v)))
                      : d.float_from_bits(t, std::bit_cast<uint64_t>(v));
    // The shortest text that reads back as the same value: exact and readable ("0.1f").
    char buf[64];
    auto res = single ? std::to_chars(buf, buf + sizeof buf, static_cast<float>(v))
                      : std::to_chars(buf, buf + sizeof buf, v);
    std::string s(buf, res.ptr);
    if (s.find_first_of(".e") == std::string::npos) s += ".0";
    if (single) s += 'f';
    return s[0] == '-' ? "(" + s + ")" : s;
}

std::set<std::string> spelled_identifiers(const Dialect& d,
                                          const std::map<std::string, std::string>& spellings) {
    std::set<std::string> words;
    auto scan = [&](const std::string& text) {
        for (size_t i = 0; i < text.size();) {
            if (!ident_char(text[i])) {
                ++i;
                continue;
            }
            size_t j = i;
            while (j < text.size() && ident_char(text[j]))
                ++j;
            // A run that starts with a digit is a number ("$0", "0x1f"), and one after a dot
            // a member ("threadIdx.x"): neither can be hidden by a user's name.
            if (!std::isdigit(static_cast<unsigned char>(text[i])) &&
                (i == 0 || text[i - 1] != '.'))
                words.insert(text.substr(i, j - i));
            i = j;
        }
    };
    for (const auto& info : intrinsic_catalog())
        scan(d.standard_spelling(info));
    for (const auto& [name, text] : spellings)
        scan(text);
    return words;
}

} // namespace plexus::codegen::clike
