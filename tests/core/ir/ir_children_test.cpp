// One definition of each node's children (ir.hpp: each node's `parts`). For every expression and
// statement kind, a node built through its factory with every operand a distinct marker, checked
// against a list of its operands written here independently: the walks (for_each_child,
// for_each_part) reach exactly those, the default mutators (map_children, map_parts, and the
// lowerings' with_children) replace every one of them and keep everything else, JSON keeps them
// and print shows them. Then the Matrix operands that the hand-written lists once missed (a
// bounded store's rows and cols, mma_shared's corners): collect_uses, collect_types and
// needs_ir_v2 see what they hold.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include "ir/rewrite.hpp"
#include "plexus/error.hpp"
#include "plexus/ir.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace px = plexus;
namespace ir = plexus::ir;
using ir::Expr;
using ir::Scalar;
using ir::Stmt;
using ir::Type;

namespace {

// ---- a tripwire on the node structs ----------------------------------------------------------
// Each node's members as this test knows them, in a struct of the same layout: when a node gains
// or loses a member, its size no longer matches its mirror's and this file stops compiling. Then
// list the new member in the node's `parts` if it is an Expr or a Stmt (or a vector of them), add
// it here and to `operands` below, and give it a marker in the node's case in cases().
namespace mirror {
struct Const : ir::ExprNode {
    int64_t i;
    double f;
};
struct Var : ir::ExprNode {
    std::string name;
};
struct Unary : ir::ExprNode {
    ir::UnaryOp op;
    Expr a;
};
struct Binary : ir::ExprNode {
    ir::BinaryOp op;
    Expr a, b;
};
struct Select : ir::ExprNode {
    Expr cond, a, b;
};
struct Cast : ir::ExprNode {
    Expr a;
};
struct Load : ir::ExprNode {
    std::string array;
    ir::Space space;
    Expr index;
};
struct Call : ir::ExprNode {
    std::string name;
    std::vector<Expr> args;
};
struct Atomic : ir::ExprNode {
    ir::AtomicOp op;
    std::string array;
    ir::Space space;
    Expr index, value, compare;
};
struct Field : ir::ExprNode {
    Expr base;
    uint32_t index;
};
struct Swizzle : ir::ExprNode {
    Expr base;
    std::vector<uint8_t> lanes;
};
struct Broadcast : ir::ExprNode {
    Expr value;
};
struct Construct : ir::ExprNode {
    std::vector<Expr> args;
};
struct MakeVariant : ir::ExprNode {
    uint32_t index;
    Expr payload;
};

struct Block : ir::StmtNode {
    std::vector<Stmt> body;
};
struct Let : ir::StmtNode {
    std::string name;
    Type type;
    Expr init;
};
struct Assign : ir::StmtNode {
    std::string name;
    ir::Path path;
    Expr value;
};
struct Store : ir::StmtNode {
    std::string array;
    ir::Space space;
    Expr index, value;
    ir::Path path;
};
struct If : ir::StmtNode {
    Expr cond;
    Stmt then_body, else_body;
};
struct For : ir::StmtNode {
    std::string var;
    Scalar type;
    Expr begin, end, step;
    Stmt body;
    uint32_t unroll; // a hint, no child
};
struct While : ir::StmtNode {
    Expr cond;
    Stmt body;
};
struct Break : ir::StmtNode {};
struct Continue : ir::StmtNode {};
struct Return : ir::StmtNode {};
struct Barrier : ir::StmtNode {};
struct Fence : ir::StmtNode {
    ir::FenceScope scope;
};
struct Eval : ir::StmtNode {
    Expr value;
};
struct Native : ir::StmtNode {
    std::map<std::string, std::string> code;
    Stmt fallback;
};
struct MatchCase {
    uint32_t index;
    std::string var;
    Stmt body;
};
struct Match : ir::StmtNode {
    Expr value;
    std::vector<ir::MatchCase> cases;
    Stmt otherwise;
};
struct Matrix : ir::StmtNode {
    ir::MatrixOp op;
    std::string frag, a, b, c, array;
    ir::Space space;
    Expr index, stride;
    ir::MatrixLayout layout;
    Expr value, rows, cols;
    std::string array_b;
    Expr row_a, col_a, row_b, col_b;
    uint32_t steps, in_flight;
};
struct AsyncCopy : ir::StmtNode {
    ir::AsyncCopyOp op;
    std::string array;
    Expr index;
    std::string buffer;
    Expr src_index;
    uint32_t count;
    Expr valid;
    uint32_t pending;
};
} // namespace mirror

#define PLEXUS_X(name)                                                                             \
    static_assert(sizeof(ir::name) == sizeof(mirror::name),                                        \
                  "ir::" #name                                                                     \
                  " gained or lost a member: list its Expr / Stmt members in its `parts`, "        \
                  "then update test_ir_children.cpp (the mirror, `operands`, its case)");
PLEXUS_IR_EXPRS(PLEXUS_X)
PLEXUS_IR_STMTS(PLEXUS_X)
PLEXUS_X(MatchCase)
#undef PLEXUS_X

// Every Expr and Stmt member (or vector of them) of each kind, by name, in the order they run.
const std::map<std::string, std::vector<std::string>> operands = {
    {"Const", {}},
    {"Var", {}},
    {"Unary", {"a"}},
    {"Binary", {"a", "b"}},
    {"Select", {"cond", "a", "b"}},
    {"Cast", {"a"}},
    {"Load", {"index"}},
    {"Call", {"args"}},
    {"Atomic", {"index", "value", "compare"}},
    {"Field", {"base"}},
    {"Swizzle", {"base"}},
    {"Broadcast", {"value"}},
    {"Construct", {"args"}},
    {"MakeVariant", {"payload"}},
    {"Block", {"body"}},
    {"Let", {"init"}},
    {"Assign", {"value"}},
    {"Store", {"index", "value"}},
    {"If", {"cond", "then_body", "else_body"}},
    {"For", {"begin", "end", "step", "body"}},
    {"While", {"cond", "body"}},
    {"Break", {}},
    {"Continue", {}},
    {"Return", {}},
    {"Barrier", {}},
    {"Fence", {}},
    {"Eval", {"value"}},
    {"Native", {"fallback"}},
    {"Match", {"value", "cases", "otherwise"}},
    {"Matrix", {"index", "stride", "value", "rows", "cols", "row_a", "col_a", "row_b", "col_b"}},
    {"AsyncCopy", {"index", "src_index", "valid"}},
};

// The length of each kind's `parts`, by kind name.
size_t parts_length(const std::string& kind) {
#define PLEXUS_X(name)                                                                             \
    if (kind == #name) return std::tuple_size_v<decltype(ir::name::parts)>;
    PLEXUS_IR_EXPRS(PLEXUS_X)
    PLEXUS_IR_STMTS(PLEXUS_X)
#undef PLEXUS_X
    FAIL("no kind " << kind);
    return 0;
}

// ---- markers ---------------------------------------------------------------------------------
// An operand is a variable named "old_<operand>" (a statement operand: an Eval of one), so that
// a walk can say which operand it reached and a mutator's result which one it replaced.

Expr marker(const std::string& name, Type t = Scalar::I32) {
    return ir::Var::make(name, std::move(t));
}
Expr old(const std::string& operand, Type t = Scalar::I32) {
    return marker("old_" + operand, std::move(t));
}
Stmt old_stmt(const std::string& operand) {
    return ir::Eval::make(old(operand));
}

std::string name_of(const Expr& e) {
    auto v = ir::as<ir::Var>(e);
    REQUIRE_MESSAGE(v, "an operand that is not a marker: a " << ir::to_string(e->kind));
    return v->name;
}
std::string name_of(const Stmt& s) {
    auto n = ir::as<ir::Eval>(s);
    REQUIRE_MESSAGE(n, "a statement operand that is not a marker: a " << ir::to_string(s->kind));
    return name_of(n->value);
}
// "old_args1" -> "args1"
std::string operand_of(const std::string& name) {
    return name.substr(name.find('_') + 1);
}

// The markers reached by the walks, in order; `which` says which of them are statements.
std::vector<std::string> reached(const Expr& e) {
    std::vector<std::string> out;
    ir::for_each_child(*e, [&](const Expr& c) { out.push_back(name_of(c)); });
    return out;
}
std::vector<std::string> reached(const Stmt& s, std::vector<bool>* which = nullptr) {
    std::vector<std::string> out;
    ir::for_each_part(
        *s,
        [&](const Expr& c) {
            out.push_back(name_of(c));
            if (which) which->push_back(false);
        },
        [&](const Stmt& c) {
            out.push_back(name_of(c));
            if (which) which->push_back(true);
        });
    return out;
}
// The operands reached, each as the address of its node.
std::vector<const void*> reached_nodes(const Expr& e) {
    std::vector<const void*> out;
    ir::for_each_child(*e, [&](const Expr& c) { out.push_back(c.get()); });
    return out;
}
std::vector<const void*> reached_nodes(const Stmt& s) {
    std::vector<const void*> out;
    ir::for_each_part(
        *s, [&](const Expr& c) { out.push_back(c.get()); },
        [&](const Stmt& c) { out.push_back(c.get()); });
    return out;
}

std::vector<std::string> prefixed(const std::string& prefix,
                                  const std::vector<std::string>& names) {
    std::vector<std::string> out;
    for (auto& n : names)
        out.push_back(prefix + n);
    return out;
}
std::string replace_all(std::string s, const std::string& from, const std::string& to) {
    for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
        s.replace(at, from.size(), to);
    return s;
}

// ---- one node of each kind, every operand a marker -----------------------------------------

const Type pair_type =
    Type::aggregate(ir::TypeDecl::make_record("Pair", {{"x", Scalar::I32}, {"y", Scalar::F32}}));
const Type option_type = Type::aggregate(
    ir::TypeDecl::make_variant("Option", {{"none", Type()}, {"some", Scalar::I32}}));

struct Case {
    std::string what; // the kind, and the factory where a kind has several
    Expr expr;        // the node: an expression
    Stmt stmt;        // or a statement
    // Its operands in the order they run: a member's name, numbered for the elements of a vector.
    std::vector<std::string> parts;
    bool by_factory = true; // false: built by hand (no factory sets every operand of a Matrix)

    std::string kind() const {
        return expr ? ir::to_string(expr->kind) : ir::to_string(stmt->kind);
    }
};

std::vector<Case> cases() {
    using namespace ir;
    std::vector<Case> out;
    auto expr = [&](std::string what, Expr e, std::vector<std::string> parts) {
        out.push_back({std::move(what), std::move(e), nullptr, std::move(parts)});
    };
    auto stmt = [&](std::string what, Stmt s, std::vector<std::string> parts) {
        out.push_back({std::move(what), nullptr, std::move(s), std::move(parts)});
    };
    expr("Const", Const::make_int(Scalar::I32, 7), {});
    expr("Var", Var::make("v", Scalar::I32), {});
    expr("Unary", Unary::make(UnaryOp::Neg, old("a")), {"a"});
    expr("Binary", Binary::make(BinaryOp::Sub, old("a"), old("b")), {"a", "b"});
    expr("Select", Select::make(old("cond", Scalar::Bool), old("a"), old("b")), {"cond", "a", "b"});
    expr("Cast", Cast::make(Scalar::F32, old("a")), {"a"});
    expr("Load", Load::make("buf", Space::Global, Scalar::I32, old("index")), {"index"});
    expr("Call",
         Call::make("fma_f64", {old("args0", Scalar::F64), old("args1", Scalar::F64),
                                old("args2", Scalar::F64)}),
         {"args0", "args1", "args2"});
    expr("Atomic",
         Atomic::make(AtomicOp::CmpXchg, "buf", Space::Global, Scalar::I32, old("index"),
                      old("value"), old("compare")),
         {"index", "value", "compare"});
    expr("Field", Field::make(old("base", pair_type), 1), {"base"});
    expr("Swizzle", Swizzle::make(old("base", Type::vector(Scalar::F32, 4)), {2, 0}), {"base"});
    expr("Broadcast", Broadcast::make(old("value", Scalar::F32), 4), {"value"});
    expr("Construct",
         Construct::make(Type::vector(Scalar::F32, 2),
                         {old("args0", Scalar::F32), old("args1", Scalar::F32)}),
         {"args0", "args1"});
    expr("MakeVariant", MakeVariant::make(option_type, 1, old("payload")), {"payload"});

    stmt("Block", Block::make({old_stmt("body0"), old_stmt("body1")}), {"body0", "body1"});
    stmt("Let", Let::make("v", old("init")), {"init"});
    stmt("Assign", Assign::make("p", old("value", Scalar::F32), {1}), {"value"});
    stmt("Store", Store::make("buf", Space::Global, old("index"), old("value")),
         {"index", "value"});
    stmt("If", If::make(old("cond", Scalar::Bool), old_stmt("then_body"), old_stmt("else_body")),
         {"cond", "then_body", "else_body"});
    // With an unroll hint, which is no part: the mutators must copy it with the node.
    stmt("For", For::make("i", old("begin"), old("end"), old("step"), old_stmt("body"), 4),
         {"begin", "end", "step", "body"});
    stmt("While", While::make(old("cond", Scalar::Bool), old_stmt("body")), {"cond", "body"});
    stmt("Break", Break::make(), {});
    stmt("Continue", Continue::make(), {});
    stmt("Return", Return::make(), {});
    stmt("Barrier", Barrier::make(), {});
    stmt("Fence", Fence::make(FenceScope::Device), {});
    stmt("Eval", Eval::make(old("value")), {"value"});
    stmt("Native", Native::make({{"cuda", "__nanosleep(1);"}}, old_stmt("fallback")), {"fallback"});
    stmt("Match",
         Match::make(old("value", option_type),
                     {{0, "", old_stmt("cases0")}, {1, "p", old_stmt("cases1")}},
                     old_stmt("otherwise")),
         {"value", "cases0", "cases1", "otherwise"});
    stmt("Matrix fill", Matrix::fill("acc", old("value", Scalar::F32)), {"value"});
    stmt("Matrix load", Matrix::load("fa", "buf", Space::Global, old("index"), old("stride")),
         {"index", "stride"});
    stmt("Matrix store",
         Matrix::store("acc", "buf", Space::Global, old("index"), old("stride"), MatrixLayout::Col),
         {"index", "stride"});
    stmt("Matrix store_bounded",
         Matrix::store_bounded("wg", "buf", Space::Global, old("index"), old("stride"), old("rows"),
                               old("cols")),
         {"index", "stride", "rows", "cols"});
    stmt("Matrix mma", Matrix::mma("d", "a", "b", "c"), {});
    stmt("Matrix mma_shared",
         Matrix::mma_shared("wg", "sa", old("row_a"), old("col_a"), "sb", old("row_b"),
                            old("col_b"), 2, 1),
         {"row_a", "col_a", "row_b", "col_b"});
    stmt("AsyncCopy copy",
         AsyncCopy::copy("sh", old("index"), "buf", old("src_index"), 4, old("valid")),
         {"index", "src_index", "valid"});
    stmt("AsyncCopy commit", AsyncCopy::commit(), {});
    stmt("AsyncCopy wait", AsyncCopy::wait(2), {});

    // Every operand of a Matrix at once, which no factory makes: the walks and the mutators do
    // not depend on the op.
    auto all = std::make_shared<Matrix>();
    all->frag = "acc";
    all->index = old("index"), all->stride = old("stride"), all->value = old("value", Scalar::F32);
    all->rows = old("rows"), all->cols = old("cols");
    all->row_a = old("row_a"), all->col_a = old("col_a"), all->row_b = old("row_b"),
    all->col_b = old("col_b");
    out.push_back({"Matrix by hand", nullptr, all, operands.at("Matrix"), false});
    return out;
}

// A kernel that holds the node (an expression in an Eval), with the types and fragments it
// needs for JSON: what to_json, from_json and print take.
ir::Kernel kernel_of(const Stmt& s) {
    ir::Kernel k;
    k.name = "children";
    k.params = {{"buf", ir::Param::Kind::Buffer, Scalar::I32, ir::Access::ReadWrite}};
    k.body = ir::Block::make({s});
    if (s->kind == ir::StmtKind::Matrix)
        k.fragments = {{"acc", ir::MatrixUse::Acc, 64, 64, 16, Scalar::F32}};
    ir::collect_types(k);
    return k;
}
Stmt statement(const Case& c) {
    return c.stmt ? c.stmt : ir::Eval::make(c.expr);
}
// The node as text: its kernel's JSON and print.
std::string text(const Stmt& s) {
    const ir::Kernel k = kernel_of(s);
    return ir::to_json(k) + ir::print(k);
}

// The mutators' callbacks: each marker replaced by "new_<operand>" of the same type.
const auto renew_expr = [](const Expr& e) {
    return marker("new_" + operand_of(name_of(e)), e->type);
};
const auto renew_stmt = [](const Stmt& s) {
    return ir::Eval::make(marker("new_" + operand_of(name_of(s))));
};

} // namespace

TEST_CASE(
    "every kind has a case, and the cases built by factories reach every operand of its kind") {
    const std::vector<Case> all = cases();
    std::map<std::string, std::set<std::string>>
        seen; // kind -> operands reached (vector elements unnumbered)
    for (const Case& c : all)
        if (c.by_factory)
            for (auto& p : c.parts)
                seen[c.kind()].insert(p.substr(0, p.find_last_not_of("0123456789") + 1));
    auto check = [&](const std::string& kind) {
        INFO("kind " << kind);
        CHECK(std::any_of(all.begin(), all.end(), [&](const Case& c) { return c.kind() == kind; }));
        REQUIRE(operands.count(kind));
        const std::vector<std::string>& want = operands.at(kind);
        // The node's `parts` lists as many members as this test knows of.
        CHECK(parts_length(kind) == want.size());
        CHECK(seen[kind] == std::set<std::string>(want.begin(), want.end()));
    };
#define PLEXUS_X(name) check(#name);
    PLEXUS_IR_EXPRS(PLEXUS_X)
    PLEXUS_IR_STMTS(PLEXUS_X)
#undef PLEXUS_X
}

TEST_CASE("for_each_child and for_each_part reach exactly the operands of every kind, in order") {
    for (const Case& c : cases()) {
        INFO(c.what);
        CHECK(operands.count(c.kind()));
        const std::vector<std::string> want = prefixed("old_", c.parts);
        if (c.expr)
            CHECK(reached(c.expr) == want);
        else
            CHECK(reached(c.stmt) == want);
    }
}

TEST_CASE("the default mutators replace every operand, keep the rest, and return the node when "
          "nothing changes") {
    auto same = [](const auto& x) { return x; };
    for (const Case& c : cases()) {
        INFO(c.what);
        const std::vector<std::string> want = prefixed("new_", c.parts);
        if (c.expr) {
            const Expr e = ir::map_children(c.expr, renew_expr);
            CHECK(reached(e) == want);
            CHECK(e->kind == c.expr->kind);
            CHECK(e->type == c.expr->type);
            CHECK((e == c.expr) == c.parts.empty());
            CHECK(ir::map_children(c.expr, same) == c.expr);
        } else {
            const Stmt s = ir::map_parts(c.stmt, renew_expr, renew_stmt);
            CHECK(reached(s) == want);
            CHECK(s->kind == c.stmt->kind);
            CHECK((s == c.stmt) == c.parts.empty());
            CHECK(ir::map_parts(c.stmt, same, same) == c.stmt);
        }
        // The node it was given is as it was.
        CHECK((c.expr ? reached(c.expr) : reached(c.stmt)) == prefixed("old_", c.parts));
        if (c.parts.empty()) continue;

        // Everything but the operands is kept: the JSON and the printed form of the new node are
        // the old one's with the markers renamed (op, names, paths, steps, layout, ...).
        const Stmt before = statement(c);
        const Stmt after = c.expr ? ir::Eval::make(ir::map_children(c.expr, renew_expr))
                                  : ir::map_parts(c.stmt, renew_expr, renew_stmt);
        CHECK(text(after) == replace_all(text(before), "old_", "new_"));

        // One operand replaced: the others are shared, not copied.
        const std::string first = "old_" + c.parts[0];
        auto only_first_e = [&](const Expr& x) { return name_of(x) == first ? renew_expr(x) : x; };
        auto only_first_s = [&](const Stmt& x) { return name_of(x) == first ? renew_stmt(x) : x; };
        const std::vector<const void*> was = c.expr ? reached_nodes(c.expr) : reached_nodes(c.stmt);
        const std::vector<const void*> now =
            c.expr ? reached_nodes(ir::map_children(c.expr, only_first_e))
                   : reached_nodes(ir::map_parts(c.stmt, only_first_e, only_first_s));
        REQUIRE(now.size() == was.size());
        CHECK(now[0] != was[0]);
        CHECK(std::equal(now.begin() + 1, now.end(), was.begin() + 1));
    }
}

TEST_CASE("with_children replaces the statements inside a statement and keeps its expressions") {
    for (const Case& c : cases()) {
        if (!c.stmt) continue;
        INFO(c.what);
        const Stmt s = ir::with_children(c.stmt, renew_stmt);
        std::vector<bool> is_stmt;
        const std::vector<std::string> got = reached(s, &is_stmt);
        REQUIRE(got.size() == c.parts.size());
        bool any = false;
        for (size_t i = 0; i < got.size(); ++i) {
            CHECK(got[i] == (is_stmt[i] ? "new_" : "old_") + c.parts[i]);
            any = any || is_stmt[i];
        }
        CHECK((s == c.stmt) == !any);
        CHECK(ir::with_children(c.stmt, [](const Stmt& x) { return x; }) == c.stmt);
    }
}

TEST_CASE("with_children hands an If's else arm to sub before its then arm") {
    // The order of the hand-written rebuild it replaced: sub names what it makes in the order it
    // is called (FreshNames), and the generated code of kernels with fragments in both arms keeps
    // those names.
    std::vector<std::string> order;
    const Stmt s =
        ir::If::make(old("cond", Scalar::Bool), old_stmt("then_body"), old_stmt("else_body"));
    const Stmt t = ir::with_children(s, [&](const Stmt& x) {
        order.push_back(name_of(x));
        return renew_stmt(x);
    });
    CHECK(order == std::vector<std::string>{"old_else_body", "old_then_body"});
    CHECK(reached(t) == std::vector<std::string>{"old_cond", "new_then_body", "new_else_body"});
}

TEST_CASE("a replacement must be of the operand's type, and not null") {
    auto invalid = [](auto f) {
        try {
            f();
        } catch (const px::Error& e) {
            CHECK(e.code() == px::ErrorCode::Internal);
            return std::string(e.message());
        }
        FAIL("no plexus::Error was thrown");
        return std::string();
    };
    const Expr sum = ir::Binary::make(ir::BinaryOp::Add, old("a"), old("b"));
    std::string message = invalid([&] {
        ir::map_children(sum, [](const Expr& x) { return marker(name_of(x), Scalar::I64); });
    });
    CHECK(message.find("i64") != std::string::npos);
    CHECK(message.find("make()") != std::string::npos);
    invalid([&] { ir::map_children(sum, [](const Expr&) { return Expr(); }); });
    const Stmt loop = ir::While::make(old("cond", Scalar::Bool), old_stmt("body"));
    message = invalid([&] {
        ir::map_parts(loop, [](const Expr& x) { return x; }, [](const Stmt&) { return Stmt(); });
    });
    CHECK(message.find("Eval") != std::string::npos);
}

TEST_CASE("JSON keeps every operand of every kind, and print shows each") {
    for (const Case& c : cases()) {
        if (!c.by_factory) continue;
        INFO(c.what);
        const ir::Kernel k = kernel_of(statement(c));
        const std::string json = ir::to_json(k), printed = ir::print(k);
        const ir::Kernel back = ir::from_json(json, "children.json");
        CHECK(ir::to_json(back) == json);
        CHECK(ir::print(back) == printed);
        const Stmt s = ir::as<ir::Block>(back.body)->body.at(0);
        if (c.expr)
            CHECK(reached(ir::as<ir::Eval>(s)->value) == prefixed("old_", c.parts));
        else
            CHECK(reached(s) == prefixed("old_", c.parts));
        for (const std::string& p : c.parts) {
            CHECK_MESSAGE(json.find("\"old_" + p + "\"") != std::string::npos, "JSON lacks " << p);
            CHECK_MESSAGE(printed.find("old_" + p) != std::string::npos, "print lacks " << p);
        }
    }
}

// ---- the Matrix operands the hand-written lists missed ------------------------------------------
namespace {

Expr i32(int64_t v) {
    return ir::Const::make_int(Scalar::I32, v);
}
Expr f64(double v) {
    return ir::Const::make_float(Scalar::F64, v);
}

// A warpgroup accumulator (m64n64k16) filled, multiplied from two swizzled shared tiles and
// stored bounded to c: the bounded store's rows and cols and the mma_shared's row_a are given.
ir::Kernel warpgroup_kernel(Expr rows, Expr cols, Expr row_a) {
    ir::Kernel k;
    k.name = "warpgroup";
    k.params = {{"c", ir::Param::Kind::Buffer, Scalar::F32, ir::Access::Write},
                {"n", ir::Param::Kind::Scalar, Scalar::I32}};
    k.shared = {{"sa", Scalar::F16, 64 * 64, {64, 64}, 0, true},
                {"sb", Scalar::F16, 64 * 64, {64, 64}, 0, true}};
    k.fragments = {{"acc", ir::MatrixUse::Acc, 64, 64, 16, Scalar::F32}};
    k.body = ir::Block::make({
        ir::Matrix::fill("acc", ir::Const::make_float(Scalar::F32, 0.0)),
        ir::Matrix::mma_shared("acc", "sa", std::move(row_a), i32(0), "sb", i32(0), i32(0), 1),
        ir::Matrix::store_bounded("acc", "c", ir::Space::Global, i32(0), i32(64), std::move(rows),
                                  std::move(cols)),
    });
    return k;
}
// An f64 intrinsic, as an i32.
Expr f64_call() {
    return ir::Cast::make(Scalar::I32, ir::Call::make("fma_f64", {f64(8), f64(8), f64(0)}));
}

} // namespace

TEST_CASE("collect_uses sees an f64 intrinsic in a bounded store's rows and an intrinsic in "
          "mma_shared's row_a") {
    const Expr n = ir::Var::make("n", Scalar::I32);
    const ir::Kernel k = warpgroup_kernel(
        f64_call(), n, ir::Cast::make(Scalar::I32, ir::Call::make("group_id_x", {})));
    CHECK_NOTHROW(ir::validate(k));
    const ir::KernelUses uses = ir::collect_uses(k);
    CHECK(uses.fp64);
    CHECK(std::count(uses.intrinsics.begin(), uses.intrinsics.end(), "fma_f64") == 1);
    CHECK(std::count(uses.intrinsics.begin(), uses.intrinsics.end(), "group_id_x") == 1);
    CHECK(uses.matrix);

    // In the bounded store's cols, and mma_shared's col_b, alike.
    ir::Kernel other = warpgroup_kernel(n, f64_call(), i32(0));
    CHECK(ir::collect_uses(other).fp64);
    other.body = ir::Block::make(
        {ir::Matrix::mma_shared("acc", "sa", i32(0), i32(0), "sb", i32(0), f64_call(), 1)});
    CHECK(ir::collect_uses(other).fp64);
}

TEST_CASE("collect_types and needs_ir_v2 see a record built in a bounded store's cols") {
    const Type bounds = Type::aggregate(
        ir::TypeDecl::make_record("Bounds", {{"rows", Scalar::I32}, {"cols", Scalar::I32}}));
    const Expr n = ir::Var::make("n", Scalar::I32);
    // The record appears nowhere else: only the walk into cols finds it.
    const Expr cols = ir::Field::make(ir::Construct::make(bounds, {n, n}), 1);
    ir::Kernel k = warpgroup_kernel(n, cols, i32(0));
    ir::collect_types(k);
    REQUIRE(k.types.size() == 1);
    CHECK(k.types[0]->name == "Bounds");
    CHECK_NOTHROW(ir::validate(k));
    const ir::Kernel back = ir::from_json(ir::to_json(k));
    CHECK(ir::to_json(back) == ir::to_json(k));

    // A kernel with fragments is plexus-ir/2 anyway; without them (as the writer sees a kernel
    // before validation), only the walk into the operand finds the v2 nodes.
    ir::Kernel bare = k;
    bare.fragments.clear();
    bare.types.clear();
    bare.shared.clear(); // f16 arrays are v2 too
    bare.body = ir::Block::make(
        {ir::Matrix::store_bounded("acc", "c", ir::Space::Global, i32(0), i32(64), n, cols)});
    CHECK(ir::needs_ir_v2(bare));
    bare.body = ir::Block::make(
        {ir::Matrix::store_bounded("acc", "c", ir::Space::Global, i32(0), i32(64), n, n)});
    CHECK_FALSE(ir::needs_ir_v2(bare));
}

TEST_CASE("contains_stmt and FreshNames walk every statement part") {
    // FreshNames avoids the names declared anywhere: in a Match case's body, a Native's fallback,
    // an If's else arm.
    ir::Kernel k;
    k.name = "names";
    k.body = ir::Block::make({ir::If::make(
        ir::Const::make_bool(true), ir::Block::make({}),
        ir::Native::make({{"cuda", ";"}},
                         ir::Block::make({ir::Let::make("t0_x", i32(1)), ir::Barrier::make()})))});
    ir::FreshNames fresh(k, "t");
    CHECK(fresh("x") == "t1_x");
    CHECK(ir::contains_stmt(k.body, ir::StmtKind::Barrier));
    CHECK_FALSE(ir::contains_stmt(k.body, ir::StmtKind::Matrix));
}
