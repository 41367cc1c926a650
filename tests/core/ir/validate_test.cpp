// The validator, one rejected kernel per rule (each error must name the kernel and the
// construct), the kernels it must accept, and the kernel language's definition-time checks.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include "kernels.hpp"
#include "plexus/async_copy.hpp"
#include "plexus/error.hpp"
#include "plexus/ir.hpp"
#include "plexus/kernel.hpp"
#include "plexus/subgroup.hpp"

#include <initializer_list>
#include <optional>
#include <string>

namespace px = plexus;
namespace ir = plexus::ir;
using ir::Scalar;

namespace {

ir::Param buffer(std::string name, Scalar t, ir::Access a) {
    return {std::move(name), ir::Param::Kind::Buffer, t, a};
}
ir::Param scalar(std::string name, Scalar t) {
    return {std::move(name), ir::Param::Kind::Scalar, t, ir::Access::Read};
}

ir::Kernel kernel(std::string name, std::vector<ir::Param> params, std::vector<ir::Stmt> body,
                  std::vector<ir::SharedArray> shared = {}) {
    ir::Kernel k;
    k.name = std::move(name);
    k.params = std::move(params);
    k.shared = std::move(shared);
    k.body = ir::Block::make(std::move(body));
    return k;
}

ir::Expr i32(int64_t v) {
    return ir::Const::make_int(Scalar::I32, v);
}
ir::Expr f32(double v) {
    return ir::Const::make_float(Scalar::F32, v);
}
ir::Expr var(const std::string& n, Scalar t = Scalar::I32) {
    return ir::Var::make(n, t);
}
ir::Expr lt(ir::Expr a, ir::Expr b) {
    return ir::Binary::make(ir::BinaryOp::Lt, std::move(a), std::move(b));
}
ir::Stmt block(std::vector<ir::Stmt> body) {
    return ir::Block::make(std::move(body));
}
// `i32 name = i32(local_id_x())`: a work-item-dependent value.
ir::Stmt let_local_id(const std::string& name) {
    return ir::Let::make(name, ir::Cast::make(Scalar::I32, ir::Call::make("local_id_x", {})));
}
ir::Stmt store(const std::string& array, ir::Expr index, ir::Expr value) {
    return ir::Store::make(array, ir::Space::Global, std::move(index), std::move(value));
}

// The kernel must be rejected with InvalidKernel, the message naming it and every fragment.
void expect_invalid(const ir::Kernel& k, std::initializer_list<std::string> fragments,
                    const ir::ValidateLimits& limits = {}) {
    try {
        ir::validate(k, limits);
    } catch (const px::Error& e) {
        INFO("message: " << e.what());
        CHECK(e.code() == px::ErrorCode::InvalidKernel);
        CHECK(e.message().find("kernel '" + k.name + "'") != std::string::npos);
        CHECK(e.context().kernel == k.name);
        for (const std::string& f : fragments)
            CHECK_MESSAGE(e.message().find(f) != std::string::npos, "missing: " << f);
        return;
    }
    FAIL("kernel '" << k.name << "' was accepted:\n" << ir::print(k));
}

const std::vector<ir::Param> out_c = {buffer("c", Scalar::F32, ir::Access::Write),
                                      scalar("n", Scalar::I32)};

} // namespace

TEST_CASE("a let whose declared type is not its value's") {
    // Let::make and the JSON reader both prevent this, so the node is assembled by hand.
    auto let = std::make_shared<ir::Let>();
    let->name = "x";
    let->type = Scalar::F32;
    let->init = i32(3);
    expect_invalid(kernel("let_type", out_c, {let}), {"'x' declared with another type", "body[0]"});
}

TEST_CASE("an undeclared variable") {
    expect_invalid(kernel("undeclared", out_c, {store("c", i32(0), var("y", Scalar::F32))}),
                   {"'y' is not declared here", "body[0]"});
    expect_invalid(kernel("undeclared_assign", out_c, {ir::Assign::make("z", i32(1))}),
                   {"assignment to 'z', which is not declared here"});
}

TEST_CASE("a variable used as another type than declared") {
    expect_invalid(kernel("var_type", out_c, {store("c", i32(0), var("n", Scalar::F32))}),
                   {"'n' is i32, used as f32"});
}

TEST_CASE("a variable used after its scope ends") {
    ir::Kernel k =
        kernel("scope", out_c,
               {
                   ir::If::make(lt(i32(0), var("n")), block({ir::Let::make("t", f32(1))})),
                   store("c", i32(0), var("t", Scalar::F32)),
               });
    expect_invalid(k, {"'t' is not declared here", "body[1]"});
    // A for loop's variable does not outlive the loop either.
    ir::Kernel loop = kernel("loop_scope", out_c,
                             {
                                 ir::For::make("i", i32(0), var("n"), i32(1), block({})),
                                 ir::Assign::make("i", i32(0)),
                             });
    expect_invalid(loop, {"'i'", "not declared here"});
}

TEST_CASE("a store or atomic through a read-only buffer") {
    std::vector<ir::Param> in_a = {buffer("a", Scalar::I32, ir::Access::Read)};
    expect_invalid(kernel("store_in", in_a, {store("a", i32(0), i32(1))}),
                   {"store to 'a', which is read-only (In<T>)"});
    auto atomic =
        ir::Atomic::make(ir::AtomicOp::Add, "a", ir::Space::Global, Scalar::I32, i32(0), i32(1));
    expect_invalid(kernel("atomic_in", in_a, {ir::Eval::make(atomic)}),
                   {"atomic update of 'a', which is read-only (In<T>)"});
    // The same on an InOut buffer is fine.
    std::vector<ir::Param> inout_a = {buffer("a", Scalar::I32, ir::Access::ReadWrite)};
    CHECK_NOTHROW(ir::validate(
        kernel("atomic_inout", inout_a, {ir::Eval::make(atomic), store("a", i32(1), i32(2))})));
}

TEST_CASE("an assignment to a for loop's variable") {
    ir::Kernel k =
        kernel("assign_loop_var", out_c,
               {
                   ir::For::make("i", i32(0), var("n"), i32(1),
                                 block({ir::Assign::make(
                                     "i", ir::Binary::make(ir::BinaryOp::Add, var("i"), i32(1)))})),
               });
    expect_invalid(k, {"assignment to the loop variable 'i'", "body[0].body[0]"});
}

TEST_CASE("a full unroll of a loop whose trip count is not constant; an unroll count too large") {
    auto loop = [](ir::Expr begin, ir::Expr end, ir::Expr step, uint32_t unroll) {
        return ir::For::make("j", std::move(begin), std::move(end), std::move(step),
                             block({store("c", var("j"), f32(1))}), unroll);
    };
    const uint32_t full = ir::For::unroll_full;
    expect_invalid(
        kernel("full_end", out_c, {loop(i32(0), var("n"), i32(1), full)}),
        {"the loop over 'j' is unrolled fully, but its end is not a constant", "body[0]"});
    expect_invalid(
        kernel(
            "full_bounds", out_c,
            {ir::If::make(lt(i32(0), var("n")), block({loop(var("n"), i32(64), var("n"), full)}))}),
        {"the loop over 'j'", "its begin and step are not constants", "body[0].then[0]"});
    expect_invalid(
        kernel("count_too_large", out_c, {loop(i32(0), var("n"), i32(1), ir::For::max_unroll + 1)}),
        {"the loop over 'j' is unrolled by 1025 (at most 1024)", "body[0]"});
    // Constant bounds unroll fully; a count unrolls any loop.
    CHECK_NOTHROW(ir::validate(kernel("full_const", out_c, {loop(i32(0), i32(8), i32(3), full)})));
    CHECK_NOTHROW(ir::validate(
        kernel("count", out_c, {loop(var("n"), var("n"), var("n"), ir::For::max_unroll)})));
    // The kernel language: constants are C++ numbers; a variable bound is refused when traced.
    CHECK_THROWS_WITH_AS(
        px::kernel("full_runtime", {"c", "n"},
                   [](px::Out<float> c, px::Int n) {
                       px::For(0, n, [&](px::Int j) { c[j] = 1.0f; }, px::unroll_full());
                   }),
        doctest::Contains("kernel 'full_runtime': the loop over 'i"), px::Error);
    CHECK_NOTHROW(px::kernel("full_traced", {"c"}, [](px::Out<float> c) {
        px::For(0, 8, 2, [&](px::Int j) { c[j] = 1.0f; }, px::unroll_full());
    }));
}

TEST_CASE("px::unroll with a count out of range is refused when the kernel is traced") {
    for (int64_t k : {int64_t(0), int64_t(-1), int64_t(ir::For::max_unroll) + 1, INT64_MAX}) {
        INFO("px::unroll(" << k << ")");
        try {
            px::kernel("bad_unroll", {"c", "n"}, [k](px::Out<float> c, px::Int n) {
                px::For(0, n, [&](px::Int j) { c[j] = 1.0f; }, px::unroll(k));
            });
            FAIL("px::unroll(" << k << ") was accepted");
        } catch (const px::Error& e) {
            INFO(e.what());
            CHECK(e.code() == px::ErrorCode::InvalidKernel);
            CHECK(e.context().kernel == "bad_unroll");
            CHECK(e.message().find("kernel 'bad_unroll': px::unroll(" + std::to_string(k) +
                                   "): an unroll count is from 1 to 1024") != std::string::npos);
        }
    }
    // An unsigned count past int64 reads as the largest int64, still refused.
    CHECK_THROWS_WITH_AS(
        px::kernel("huge_unroll", {"c", "n"},
                   [](px::Out<float> c, px::Int n) {
                       px::For(0, n, 2, [&](px::Int j) { c[j] = 1.0f; }, px::unroll(UINT64_MAX));
                   }),
        doctest::Contains("px::unroll(9223372036854775807)"), px::Error);
}

TEST_CASE("break and continue outside a loop") {
    expect_invalid(kernel("stray_break", out_c, {ir::Break::make()}), {"break outside a loop"});
    expect_invalid(kernel("stray_continue", out_c,
                          {ir::If::make(lt(i32(0), var("n")), block({ir::Continue::make()}))}),
                   {"continue outside a loop"});
}

TEST_CASE("a barrier under a work-item-dependent if") {
    ir::Kernel k = kernel("divergent_if", out_c,
                          {
                              let_local_id("lid"),
                              ir::If::make(lt(var("lid"), i32(3)), block({ir::Barrier::make()})),
                          });
    expect_invalid(
        k, {"barrier in divergent control flow", "the if at body[1] depends on the work-item"});
    // Dependence flows through variables: a copy of lid is just as varying.
    ir::Kernel copy =
        kernel("divergent_copy", out_c,
               {
                   let_local_id("lid"),
                   ir::Let::make("m", ir::Binary::make(ir::BinaryOp::Mul, var("lid"), i32(2))),
                   ir::If::make(lt(var("m"), i32(3)), block({ir::Barrier::make()})),
               });
    expect_invalid(copy, {"barrier in divergent control flow"});
    // Under a uniform condition (a scalar parameter) the barrier is fine.
    CHECK_NOTHROW(
        ir::validate(kernel("uniform_if", out_c,
                            {
                                ir::If::make(lt(i32(3), var("n")), block({ir::Barrier::make()})),
                            })));
}

TEST_CASE("a barrier in a loop whose trip count depends on the work-item") {
    ir::Kernel k =
        kernel("divergent_for", out_c,
               {
                   let_local_id("lid"),
                   ir::For::make("i", i32(0), var("lid"), i32(1), block({ir::Barrier::make()})),
               });
    expect_invalid(
        k, {"barrier in divergent control flow", "runs a work-item-dependent number of times"});
}

TEST_CASE("a barrier after a divergent break in a loop") {
    ir::Kernel k = kernel(
        "divergent_break", out_c,
        {
            let_local_id("lid"),
            ir::Let::make("s", var("n")),
            ir::While::make(
                lt(i32(0), var("s")),
                block({
                    ir::If::make(lt(var("lid"), i32(3)), block({ir::Break::make()})),
                    ir::Barrier::make(),
                    ir::Assign::make("s", ir::Binary::make(ir::BinaryOp::Div, var("s"), i32(2))),
                })),
        });
    expect_invalid(k, {"barrier in divergent control flow", "the loop at body[2]"});
}

TEST_CASE("a barrier after a loop-carried dependence on the work-item") {
    // s is uniform on the first pass and becomes varying through the loop's back edge: only the
    // validator's fixed point sees it.
    ir::Kernel k =
        kernel("carried", out_c,
               {
                   let_local_id("lid"),
                   ir::Let::make("s", var("n")),
                   ir::Let::make("t", var("n")),
                   ir::While::make(lt(i32(0), var("s")), block({
                                                             ir::Barrier::make(),
                                                             ir::Assign::make("s", var("t")),
                                                             ir::Assign::make("t", var("lid")),
                                                         })),
               });
    expect_invalid(k, {"barrier in divergent control flow"});
}

TEST_CASE("a return in a kernel with a barrier") {
    ir::Kernel k = kernel("return_barrier", out_c,
                          {
                              ir::If::make(lt(var("n"), i32(1)), block({ir::Return::make()})),
                              ir::Barrier::make(),
                          });
    expect_invalid(k, {"return in a kernel with a barrier", "body[0].then[0]"});
    CHECK_NOTHROW(ir::validate(kernel("return_alone", out_c, {ir::Return::make()})));
}

TEST_CASE("an unknown intrinsic") {
    // Call::make checks the catalog, so the node is assembled by hand, as a buggy producer would.
    auto call = std::make_shared<ir::Call>(Scalar::I32);
    call->name = "warp_vote_x";
    expect_invalid(kernel("bad_call", out_c, {ir::Let::make("v", call)}),
                   {"unknown intrinsic 'warp_vote_x'", "body[0].init"});
    // The JSON reader already refuses it, naming the path.
    ir::Kernel good =
        kernel("good_call", out_c,
               {ir::Let::make("v", ir::Cast::make(Scalar::I32, ir::Call::make("local_id_x", {})))});
    std::string text = ir::to_json(good);
    size_t at = text.find("\"local_id_x\"");
    REQUIRE(at != std::string::npos);
    text.replace(at, 12, "\"warp_vote_x\"");
    try {
        ir::from_json(text, "bad.json");
        FAIL("the JSON reader accepted an unknown intrinsic");
    } catch (const px::Error& e) {
        CHECK(e.code() == px::ErrorCode::InvalidIR);
        CHECK(e.message().find("unknown intrinsic 'warp_vote_x'") != std::string::npos);
        CHECK(e.context().json_path == "body.body[0].init.a");
        CHECK(e.context().file == "bad.json");
    }
}

TEST_CASE("shared memory over the device's limit") {
    ir::Kernel k =
        kernel("big_shared", out_c,
               {store("c", i32(0), ir::Load::make("tile", ir::Space::Local, Scalar::F32, i32(0)))},
               {{"tile", Scalar::F32, 1024}});
    ir::ValidateLimits small;
    small.local_memory_bytes = 4095;
    expect_invalid(k, {"shared memory of 4096 bytes is over the device's limit of 4095 bytes"},
                   small);
    ir::ValidateLimits exact;
    exact.local_memory_bytes = 4096;
    CHECK_NOTHROW(ir::validate(k, exact));
    CHECK_NOTHROW(ir::validate(k)); // 0: unchecked
}

TEST_CASE("reserved and keyword names") {
    expect_invalid(kernel("kw_param", {buffer("kernel", Scalar::F32, ir::Access::Write)}, {}),
                   {"parameter name 'kernel' is reserved"});
    expect_invalid(kernel("kw_var", out_c, {ir::Let::make("float", i32(1))}),
                   {"variable name 'float' is reserved"});
    expect_invalid(kernel("prefix_var", out_c, {ir::Let::make("plx_tmp", i32(1))}),
                   {"'plx_tmp' is reserved"});
    expect_invalid(kernel("underscore_var", out_c, {ir::Let::make("__x", i32(1))}),
                   {"'__x' is reserved"});
    expect_invalid(kernel("cuda_name", out_c, {ir::Let::make("threadIdx", i32(1))}),
                   {"'threadIdx' is reserved"});
    expect_invalid(kernel("bad_ident", out_c, {ir::Let::make("a-b", i32(1))}),
                   {"'a-b' is not an identifier"});
    expect_invalid(kernel("shadow", out_c, {ir::Let::make("n", i32(1))}),
                   {"'n' is declared again"});
    // A kernel named after a keyword.
    try {
        ir::validate(kernel("while", out_c, {}));
        FAIL("a kernel named 'while' was accepted");
    } catch (const px::Error& e) {
        CHECK(e.code() == px::ErrorCode::InvalidKernel);
        CHECK(e.message().find("the kernel name 'while' is not a usable identifier") !=
              std::string::npos);
    }
}

TEST_CASE("duplicate parameter names and bad parameter types") {
    expect_invalid(
        kernel("dup", {buffer("a", Scalar::F32, ir::Access::Read), scalar("a", Scalar::I32)}, {}),
        {"two parameters named 'a'"});
    expect_invalid(kernel("bool_param", {scalar("flag", Scalar::Bool)}, {}),
                   {"parameter 'flag' has type bool"});
    expect_invalid(kernel("dup_shared", out_c, {}, {{"n", Scalar::F32, 4}}),
                   {"'n' is declared twice"});
}

TEST_CASE("every sample kernel validates") {
    for (const std::string& name : px::samples::names()) {
        INFO("kernel " << name);
        const ir::Kernel* k = px::samples::find(name);
        REQUIRE(k != nullptr);
        CHECK_NOTHROW(ir::validate(*k));
        // With the shared memory they declare as the limit, too.
        ir::ValidateLimits limits;
        limits.local_memory_bytes = k->shared_bytes() ? k->shared_bytes() : 1;
        CHECK_NOTHROW(ir::validate(*k, limits));
    }
    // reduce has barriers in a while loop whose condition is uniform (s halves in every
    // work-item alike): the validator must see that.
    ir::KernelUses uses = ir::collect_uses(*px::samples::find("reduce"));
    CHECK(uses.barrier);
}

TEST_CASE("a barrier in a uniform while loop validates") {
    ir::Kernel k = kernel(
        "uniform_while", {buffer("c", Scalar::F32, ir::Access::Write), scalar("n", Scalar::I32)},
        {
            let_local_id("lid"),
            ir::Let::make("s", var("n")),
            ir::While::make(
                lt(i32(0), var("s")),
                block({
                    ir::If::make(lt(var("lid"), var("s")), block({store("c", var("lid"), f32(1))})),
                    ir::Barrier::make(),
                    ir::Assign::make("s", ir::Binary::make(ir::BinaryOp::Div, var("s"), i32(2))),
                })),
        },
        {});
    CHECK_NOTHROW(ir::validate(k));
}

// ---- the kernel language -----------------------------------------------------------------

TEST_CASE("px::kernel rejects a barrier under a work-item-dependent If at definition") {
    try {
        px::kernel("bad_barrier", {"c"}, [](px::Out<float> c) {
            px::If(px::local_id(0) < 3, [&] {
                c[px::local_id(0)] = 1.0f;
                px::barrier();
            });
        });
        FAIL("the kernel was accepted");
    } catch (const px::Error& e) {
        CHECK(e.code() == px::ErrorCode::InvalidKernel);
        CHECK(e.message().find("kernel 'bad_barrier'") != std::string::npos);
        CHECK(e.message().find("barrier in divergent control flow") != std::string::npos);
    }
}

TEST_CASE("kernel values used outside px::kernel throw") {
    auto outside = [](auto f) {
        try {
            f();
            FAIL("a kernel-language operation ran outside px::kernel");
        } catch (const px::Error& e) {
            CHECK(e.code() == px::ErrorCode::InvalidKernel);
            CHECK(e.message().find("outside plexus::kernel()") != std::string::npos);
        }
    };
    outside([] {
        px::Int x = 3;
        (void)x;
    });
    outside([] { px::barrier(); });
    outside([] { px::If(px::Value<bool>(true), [] {}); });
    // A value that escaped a traced kernel is dead afterwards.
    std::optional<px::Value<int32_t>> escaped;
    px::kernel("escape", {"c"}, [&](px::Out<int32_t> c) {
        px::Int i = px::global_id(0);
        escaped.emplace(i + 1);
        c[i] = 0;
    });
    REQUIRE(escaped.has_value());
    outside([&] {
        px::Int y = *escaped;
        (void)y;
    });
}

TEST_CASE("If / ElseIf / Else build nested ifs") {
    auto k = px::kernel("chain", {"c", "n"}, [](px::Out<float> c, px::Int n) {
        px::Int i = px::global_id(0);
        px::If(i < n, [&] { c[i] = 1.0f; }).ElseIf(i < n * 2, [&] { c[i - n] = 2.0f; }).Else([&] {
            c[0] = 3.0f;
        });
    });
    auto* body = ir::as<ir::Block>(k.ir().body);
    REQUIRE(body);
    REQUIRE(body->body.size() == 2);
    auto* outer = ir::as<ir::If>(body->body[1]);
    REQUIRE(outer);
    CHECK(ir::print(outer->cond) == "(v0 < n)");
    auto* inner = ir::as<ir::If>(outer->else_body);
    REQUIRE(inner);
    CHECK(ir::print(inner->cond) == "(v0 < (n * 2))");
    auto* last = ir::as<ir::Block>(inner->else_body);
    REQUIRE(last);
    REQUIRE(last->body.size() == 1);
    CHECK(ir::as<ir::Store>(last->body[0]));
    std::string text = ir::print(k.ir());
    INFO(text);
    CHECK(text.find("c[v0] = 1.0f;") != std::string::npos);
    CHECK(text.find("c[(v0 - n)] = 2.0f;") != std::string::npos);
    CHECK(text.find("c[0l] = 3.0f;") != std::string::npos);
    CHECK(text.find("} else {") != std::string::npos);

    // Else directly after If, and a second Else is refused.
    CHECK_THROWS_AS(px::kernel("two_else", {"c"},
                               [](px::Out<float> c) {
                                   px::If(px::global_id(0) < 1, [&] { c[0] = 1.0f; }).Else([&] {
                                       c[1] = 2.0f;
                                   });
                                   px::IfChain chain =
                                       px::If(px::global_id(0) < 2, [&] { c[0] = 1.0f; });
                                   chain.Else([&] { c[1] = 2.0f; });
                                   chain.Else([&] { c[2] = 3.0f; });
                               }),
                    px::Error);
}

// ---- subgroup operations: collective within a subgroup ------------------------------------

namespace {
ir::Expr shuffle_f32(ir::Expr v) {
    return ir::Call::make("subgroup_shuffle_f32",
                          {std::move(v), ir::Const::make_int(Scalar::U32, 0)});
}
ir::Expr sg_id() {
    return ir::Cast::make(Scalar::I32, ir::Call::make("subgroup_id", {}));
}
} // namespace

TEST_CASE("a shuffle under work-item-dependent control flow") {
    expect_invalid(kernel("divergent_shuffle", out_c,
                          {
                              let_local_id("lid"),
                              ir::If::make(lt(var("lid"), i32(3)),
                                           block({ir::Let::make("s", shuffle_f32(f32(1)))})),
                          }),
                   {"subgroup operation 'subgroup_shuffle_f32' in divergent control flow",
                    "the if at body[1] depends on the work-item", "body[1].then[0].init"});
    // The right operand of && runs only where the left one holds.
    auto any = ir::Call::make("subgroup_any", {ir::Const::make_bool(true)});
    expect_invalid(kernel("short_circuit", out_c,
                          {
                              let_local_id("lid"),
                              ir::Let::make("b", ir::Binary::make(ir::BinaryOp::LogicalAnd,
                                                                  lt(var("lid"), i32(3)), any)),
                          }),
                   {"subgroup operation 'subgroup_any'",
                    "the left operand of && at body[1].init depends on the work-item"});
    // A loop whose trip count depends on the lane.
    expect_invalid(kernel("lane_loop", out_c,
                          {
                              let_local_id("lid"),
                              ir::For::make("i", i32(0), var("lid"), i32(1),
                                            block({ir::Let::make("s", shuffle_f32(f32(1)))})),
                          }),
                   {"subgroup operation", "runs a work-item-dependent number of times"});
}

TEST_CASE(
    "subgroup operations under subgroup-uniform control flow validate; barriers there do not") {
    // subgroup_id() and a reduction are the same on every lane of a subgroup: a branch on them
    // keeps whole subgroups together, which is enough for a subgroup operation...
    auto reduce = ir::Call::make("subgroup_reduce_add_f32", {f32(1)});
    CHECK_NOTHROW(ir::validate(kernel(
        "first_subgroup", out_c,
        {
            ir::Let::make("sg", sg_id()),
            ir::Let::make("total", reduce),
            ir::If::make(
                ir::Binary::make(ir::BinaryOp::Eq, var("sg"), i32(0)),
                block({
                    ir::If::make(
                        ir::Binary::make(ir::BinaryOp::Lt, var("total", Scalar::F32), f32(8)),
                        block({ir::Let::make("s", shuffle_f32(var("total", Scalar::F32)))})),
                })),
        })));
    // ... but not for a barrier, which the other subgroups never reach.
    expect_invalid(kernel("barrier_in_subgroup", out_c,
                          {
                              ir::Let::make("sg", sg_id()),
                              ir::If::make(ir::Binary::make(ir::BinaryOp::Eq, var("sg"), i32(0)),
                                           block({ir::Barrier::make()})),
                          }),
                   {"barrier in divergent control flow",
                    "the if at body[1] depends on the work-item's subgroup"});
    // A shuffle's value differs between lanes: a branch on it is divergent.
    expect_invalid(
        kernel("branch_on_shuffle", out_c,
               {
                   ir::Let::make("v", shuffle_f32(f32(1))),
                   ir::If::make(ir::Binary::make(ir::BinaryOp::Lt, var("v", Scalar::F32), f32(0)),
                                block({ir::Let::make("s", shuffle_f32(f32(2)))})),
               }),
        {"subgroup operation 'subgroup_shuffle_f32' in divergent control flow"});
}

TEST_CASE("a return in a kernel with a subgroup operation") {
    expect_invalid(kernel("return_subgroup", out_c,
                          {
                              ir::If::make(lt(var("n"), i32(1)), block({ir::Return::make()})),
                              ir::Let::make("s", shuffle_f32(f32(1))),
                          }),
                   {"return in a kernel with a subgroup operation", "body[0].then[0]"});
}

TEST_CASE("asynchronous copies: what cp.async moves, into shared memory only") {
    auto copy_kernel = [](const std::string& name, Scalar buffer_type, ir::Stmt copy) {
        ir::Kernel k = kernel(name, {buffer("a", buffer_type, ir::Access::Read)}, {std::move(copy)},
                              {{"t", Scalar::F16, 64}});
        k.privates = {{"p", Scalar::F16, 64}};
        return k;
    };
    CHECK_NOTHROW(ir::validate(copy_kernel(
        "good", Scalar::F16, ir::AsyncCopy::copy("t", i32(0), "a", i32(0), 8, i32(3)))));
    expect_invalid(copy_kernel("twelve", Scalar::F16,
                               ir::AsyncCopy::copy("t", i32(0), "a", i32(0), 6, i32(6))),
                   {"copy_async<6> from 'a' into 't'", "12 bytes", "4, 8 or 16 bytes"});
    expect_invalid(
        copy_kernel("types", Scalar::F32, ir::AsyncCopy::copy("t", i32(0), "a", i32(0), 4, i32(4))),
        {"the shared array holds f16, the buffer f32", "one type"});
    expect_invalid(copy_kernel("into_private", Scalar::F16,
                               ir::AsyncCopy::copy("p", i32(0), "a", i32(0), 8, i32(8))),
                   {"into 'p'", "must be a shared array, not a private one"});
    expect_invalid(copy_kernel("to_buffer", Scalar::F16,
                               ir::AsyncCopy::copy("a", i32(0), "a", i32(0), 8, i32(8))),
                   {"must be a shared array, not a buffer"});
    // make() refuses a float `valid`; a node built by hand reaches the validator.
    auto n = std::make_shared<ir::AsyncCopy>();
    n->array = "t", n->buffer = "a", n->count = 8, n->index = i32(0), n->src_index = i32(0),
    n->valid = f32(8);
    expect_invalid(copy_kernel("float_valid", Scalar::F16, n),
                   {"the valid count is f32, not an integer"});
    CHECK_THROWS_WITH_AS(ir::AsyncCopy::copy("t", i32(0), "a", i32(0), 8, f32(8)),
                         doctest::Contains("async copy valid count must be an integer, not f32"),
                         px::Error);
    // The kernel language checks the size at compile time (tests/core/kernel/compile_fail), and a
    // negative wait count when the kernel is traced.
    CHECK_THROWS_WITH_AS(
        px::kernel("negative_wait", {"a"}, [](px::In<float>) { px::copy_async_wait(-1); }),
        doctest::Contains("px::copy_async_wait(-1)"), px::Error);
}

TEST_CASE("a subgroup operation on a type no backend has") {
    // The catalog has subgroup operations on i32 u32 i64 u64 f32 f64 only.
    CHECK_THROWS_WITH_AS(
        ir::Call::make("subgroup_shuffle_f16", {ir::Const::make_float(Scalar::F16, 1),
                                                ir::Const::make_int(Scalar::U32, 0)}),
        doctest::Contains("unknown intrinsic 'subgroup_shuffle_f16'"), px::Error);
    // A JSON producer that writes a vote of another width.
    std::string json = ir::to_json(
        kernel("vote", out_c,
               {ir::Let::make("v", ir::Call::make("subgroup_any", {ir::Const::make_bool(true)}))}));
    json.replace(json.find("\"subgroup_any\""), 14, "\"subgroup_any_i8\"");
    CHECK_THROWS_WITH_AS(ir::from_json(json, "k.json"), doctest::Contains("subgroup_any_i8"),
                         px::Error);
}

TEST_CASE("px::kernel rejects a shuffle under a work-item-dependent If at definition") {
    CHECK_THROWS_WITH_AS(px::kernel("bad_shuffle", {"c"},
                                    [](px::Out<float> c) {
                                        px::If(px::local_id(0) < 3, [&] {
                                            c[px::local_id(0)] = px::shuffle(px::Float(1.0f), 0);
                                        });
                                    }),
                         doctest::Contains("kernel 'bad_shuffle': subgroup operation "
                                           "'subgroup_shuffle_f32' in divergent control flow"),
                         px::Error);
}
