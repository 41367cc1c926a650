// Failures the interpreter must report, never crash on, and recover from: out-of-bounds
// accesses, division by zero, divergent barriers, malformed IR, bad launch arguments.
#include "fixture.hpp"

#include <nlohmann/json.hpp>

namespace interp_test {
namespace {

using B = ir::BinaryOp;
using nlohmann::json;
constexpr Scalar I32 = Scalar::I32, U32 = Scalar::U32, F32 = Scalar::F32;

// A failed launch is reported once, by the launch: the queue has nothing more to say, and the
// plugin runs good work again.
void expect_recovery_after_launch_error() {
    CHECK(api().queue_sync(Plugin::get().queue) == PLX_OK);
    check_vector_add_works();
}

std::string launch_error(const ir::Kernel& k, const Dims& d, std::vector<Arg> args) {
    Module m(k);
    REQUIRE(m.status() == PLX_OK);
    REQUIRE(launch(m.kernel(), d, std::move(args)) == PLX_ERROR_LAUNCH);
    return last_error();
}

// A kernel with every statement kind worth mutating: loops, ifs, barriers, shared memory, atomics.
ir::Kernel reduction_for_fuzz() {
    auto lid = var("lid", U32), s = var("s", U32);
    return kernel(
        "fuzz", {buffer("in", F32), buffer("out", F32, ir::Access::ReadWrite), scalar("n", I32)},
        {let("lid", call("local_id_x")),
         store("sh", lid, load("in", F32, call("global_id_x")), Space::Local), ir::Barrier::make(),
         let("s", bin(B::Shr, call("local_size_x"), u32(1))),
         ir::While::make(bin(B::Gt, s, u32(0)),
                         block({if_(bin(B::Lt, lid, s),
                                    {store("sh", lid,
                                           bin(B::Add, load("sh", F32, lid, Space::Local),
                                               load("sh", F32, bin(B::Add, lid, s), Space::Local)),
                                           Space::Local)}),
                                ir::Barrier::make(), assign("s", bin(B::Shr, s, u32(1)))})),
         ir::For::make("i", i32(0), var("n", I32), i32(1),
                       block({if_(bin(B::Eq, var("i", I32), i32(3)), {ir::Break::make()},
                                  {ir::Continue::make()})})),
         if_(bin(B::Eq, lid, u32(0)),
             {ir::Eval::make(ir::Atomic::make(ir::AtomicOp::Add, "out", Space::Global, F32, u32(0),
                                              load("sh", F32, u32(0), Space::Local)))})},
        {{"sh", F32, 64}});
}

std::string compile_error(const std::string& text) {
    Module m(text);
    CHECK(m.status() == PLX_ERROR_COMPILE);
    return m.error();
}

} // namespace

TEST_CASE("an out-of-bounds store stops the launch naming kernel, statement, index and work-item") {
    auto gid = var("gid", I32);
    const ir::Kernel k =
        kernel("vector_add_unguarded",
               {buffer("a", F32), buffer("b", F32), buffer("c", F32, ir::Access::Write)},
               {let_gid(), store("c", gid, bin(B::Add, load("a", F32, gid), load("b", F32, gid)))});
    // a and b cover the 128 work-items of two groups; c is short, so the store fails first.
    Buffer a(std::vector<float>(128, 1.f)), b(std::vector<float>(128, 2.f)), c(90 * sizeof(float));
    const std::string e = launch_error(k, dims1(100, 64), {a, b, c});
    CAPTURE(e);
    CHECK(contains(e, "kernel \"vector_add_unguarded\""));
    CHECK(contains(e, "out-of-bounds store to \"c\"[90] (global buffer of 90 f32 elements)"));
    CHECK(contains(e, "at body[1] "));
    CHECK(contains(e, "global id (90), local id (26), group (1)"));
    expect_recovery_after_launch_error();
}

TEST_CASE("out-of-bounds loads: a negative index into a shared array, past the end of a buffer") {
    auto lid = var("lid", I32);
    const ir::Kernel shared =
        kernel("shift_left", {buffer("out", F32, ir::Access::Write)},
               {let("lid", cast(I32, call("local_id_x"))), store("sh", lid, f32(1), Space::Local),
                ir::Barrier::make(),
                store("out", lid, load("sh", F32, bin(B::Sub, lid, i32(1)), Space::Local))},
               {{"sh", F32, 64}});
    Buffer out(64 * sizeof(float));
    std::string e = launch_error(shared, dims1(64, 64), {out});
    CAPTURE(e);
    CHECK(contains(e, "kernel \"shift_left\""));
    CHECK(contains(
        e, "out-of-bounds load from \"sh\"[-1] (shared array of 64 f32 elements) at body[3]"));
    CHECK(contains(e, "local id (0)"));
    expect_recovery_after_launch_error();

    auto gid = var("gid", I32);
    const ir::Kernel past =
        kernel("copy", {buffer("in", U32), buffer("out", U32, ir::Access::Write)},
               {let_gid(), store("out", gid, load("in", U32, gid))});
    Buffer in(std::vector<uint32_t>(10, 3)), out2(std::vector<uint32_t>(16, 0));
    e = launch_error(past, dims1(16, 4), {in, out2});
    CAPTURE(e);
    CHECK(contains(
        e, "out-of-bounds load from \"in\"[10] (global buffer of 10 u32 elements) at body[1]"));
    CHECK(contains(e, "global id (10), local id (2), group (2)"));
    expect_recovery_after_launch_error();
}

TEST_CASE("integer division by zero is a launch error naming the work-item, not a crash") {
    auto gid = var("gid", I32);
    const ir::Kernel k = kernel(
        "divide", {buffer("a", I32), buffer("b", I32), buffer("q", I32, ir::Access::Write)},
        {let_gid(), if_(bin(B::Lt, gid, i32(50)),
                        {store("q", gid, bin(B::Div, load("a", I32, gid), load("b", I32, gid)))})});
    std::vector<int32_t> b(50, 3);
    b[37] = 0;
    Buffer ba(std::vector<int32_t>(50, 9)), bb(b), bq(50 * sizeof(int32_t));
    const std::string e = launch_error(k, dims1(50, 16), {ba, bb, bq});
    CAPTURE(e);
    CHECK(contains(e, "integer division by zero (i32 9 / 0) at body[1].then[0]"));
    CHECK(contains(e, "global id (37), local id (5), group (2)"));
    expect_recovery_after_launch_error();
}

TEST_CASE("a barrier under if (local_id < 3) names a work-item that did not reach it") {
    auto lid = var("lid", U32);
    const ir::Kernel k =
        kernel("divergent_barrier", {buffer("out", U32, ir::Access::Write)},
               {let("lid", call("local_id_x")), if_(bin(B::Lt, lid, u32(3)), {ir::Barrier::make()}),
                store("out", lid, lid)});
    // The core's validator refuses it; the interpreter must catch it at run time all the same.
    CHECK_THROWS(ir::validate(k));
    Buffer out(8 * sizeof(uint32_t));
    const std::string e = launch_error(k, dims1(8, 8), {out});
    CAPTURE(e);
    CHECK(contains(e, "kernel \"divergent_barrier\": barrier at body[1].then[0]"));
    CHECK(contains(e, "reached by only 3 of the group's 8 work-items"));
    CHECK(contains(e, "work-item global id (3), local id (3), group (0) did not reach it"));
    expect_recovery_after_launch_error();
}

TEST_CASE("a barrier in a loop whose trip count differs per work-item is reported") {
    const ir::Kernel k =
        kernel("looping_barrier", {buffer("out", U32, ir::Access::Write)},
               {let("lid", call("local_id_x")),
                ir::For::make("j", u32(0), var("lid", U32), u32(1), block({ir::Barrier::make()})),
                store("out", var("lid", U32), u32(1))});
    Buffer out(4 * sizeof(uint32_t));
    const std::string e = launch_error(k, dims1(4, 4), {out});
    CAPTURE(e);
    // In the first iteration work-item 0 has already left the loop.
    CHECK(contains(e, "barrier at body[1].body[0] reached by only 3 of the group's 4 work-items"));
    CHECK(contains(e, "local id (0), group (0) did not reach it"));
    expect_recovery_after_launch_error();
}

TEST_CASE("a subgroup operation reached by part of a subgroup names a work-item that missed it") {
    auto lid = var("lid", U32);
    const ir::Kernel k =
        kernel("divergent_reduce", {buffer("out", U32, ir::Access::Write)},
               {let("lid", call("local_id_x")),
                if_(bin(B::Lt, lid, u32(3)),
                    {store("out", lid, ir::Call::make("subgroup_reduce_add_u32", {lid}))})});
    CHECK_THROWS(ir::validate(k));
    Buffer out(16 * sizeof(uint32_t));
    const std::string e = launch_error(k, dims1(16, 16), {out});
    CAPTURE(e);
    CHECK(contains(e, "kernel \"divergent_reduce\": subgroup_reduce_add reached by only 3 of the 8 "
                      "work-items of subgroup 0"));
    CHECK(contains(e, "local id (3), group (0)"));
    expect_recovery_after_launch_error();
}

TEST_CASE("a shuffle that names a lane outside its subgroup is reported") {
    // lane + 1 without wrapping: the last lane of each subgroup names lane 8 of 8.
    auto lane = ir::Call::make("subgroup_lane_id", {});
    const ir::Kernel k =
        kernel("lane_past_end", {buffer("out", U32, ir::Access::Write)},
               {let("lid", call("local_id_x")),
                store("out", var("lid", U32),
                      ir::Call::make("subgroup_shuffle_u32",
                                     {var("lid", U32), bin(B::Add, lane, u32(1))}))});
    Buffer out(16 * sizeof(uint32_t));
    const std::string e = launch_error(k, dims1(16, 16), {out});
    CAPTURE(e);
    CHECK(contains(e, "shuffle names lane 8 of a subgroup of 8 lanes (0 .. 7)"));
    CHECK(contains(e, "local id (7), group (0)"));
    expect_recovery_after_launch_error();
}

TEST_CASE("work-items that returned are not waited for at a barrier") {
    auto lid = var("lid", U32);
    const ir::Kernel k = kernel(
        "early_return", {buffer("out", U32, ir::Access::Write)},
        {let("lid", call("local_id_x")), store("sh", lid, bin(B::Mul, lid, u32(10)), Space::Local),
         if_(bin(B::Ge, lid, u32(4)), {ir::Return::make()}), ir::Barrier::make(),
         store("out", lid, load("sh", U32, bin(B::Sub, u32(3), lid), Space::Local))},
        {{"sh", U32, 8}});
    Buffer out(std::vector<uint32_t>(8, 99));
    Module m(k);
    REQUIRE(m.status() == PLX_OK);
    REQUIRE(launch(m.kernel(), dims1(8, 8), {out}) == PLX_OK);
    CHECK(out.read<uint32_t>() == std::vector<uint32_t>{30, 20, 10, 0, 99, 99, 99, 99});
}

TEST_CASE("malformed IR gives PLX_ERROR_COMPILE with the JSON path, and the plugin goes on") {
    const json good = json::parse(ir::to_json(vector_add_kernel()));
    // The store is body.body[1].then.body[0]; its value is the Binary a + b.
    auto edited = [&](auto&& edit) {
        json j = good;
        edit(j);
        return j.dump();
    };
    std::string e;
    SUBCASE("truncated text") {
        const std::string text = good.dump();
        e = compile_error(text.substr(0, text.size() / 2));
        CHECK(contains(e, "not valid JSON"));
        CHECK(compile_error("").size() > 0);
    }
    SUBCASE("unknown expression kind") {
        e = compile_error(edited([](json& j) {
            j["body"]["body"][1]["then"]["body"][0]["value"]["expr"] = "Frobnicate";
        }));
        CHECK(contains(
            e, "body.body[1].then.body[0].value.expr: unknown expression kind \"Frobnicate\""));
    }
    SUBCASE("unknown statement kind") {
        e = compile_error(edited([](json& j) { j["body"]["body"][1]["stmt"] = "Unless"; }));
        CHECK(contains(e, "body.body[1].stmt: unknown statement kind \"Unless\""));
    }
    SUBCASE("unknown binary op") {
        e = compile_error(edited(
            [](json& j) { j["body"]["body"][1]["then"]["body"][0]["value"]["op"] = "pow"; }));
        CHECK(contains(e, "body.body[1].then.body[0].value.op: unknown binary op \"pow\""));
    }
    SUBCASE("declared type differs from the node's type") {
        e = compile_error(edited(
            [](json& j) { j["body"]["body"][1]["then"]["body"][0]["value"]["type"] = "i32"; }));
        CHECK(contains(
            e, "body.body[1].then.body[0].value.type: declared i32 but the Binary has type f32"));
    }
    SUBCASE("operands of different types") {
        e = compile_error(edited([](json& j) {
            j["body"]["body"][1]["then"]["body"][0]["value"]["b"] = {
                {"expr", "Var"}, {"type", "i32"}, {"name", "n"}};
        }));
        CHECK(contains(
            e,
            "body.body[1].then.body[0].value: operands of add have different types: f32 and i32"));
    }
    SUBCASE("a value of the wrong JSON type") {
        e = compile_error(edited([](json& j) { j["params"][3]["type"] = 5; }));
        CHECK(contains(e, "params[3].type: expected a string, found number"));
    }
    SUBCASE("an unknown key") {
        e = compile_error(edited([](json& j) { j["body"]["body"][0]["colour"] = "red"; }));
        CHECK(contains(e, "body.body[0].colour: unknown key \"colour\""));
    }
    SUBCASE("an undeclared variable") {
        e = compile_error(
            edited([](json& j) { j["body"]["body"][1]["cond"]["a"]["name"] = "nope"; }));
        CHECK(contains(e, "body.body[1].cond.a.name: \"nope\" is not declared here"));
    }
    SUBCASE("a store to a read-only buffer") {
        e = compile_error(
            edited([](json& j) { j["body"]["body"][1]["then"]["body"][0]["array"] = "a"; }));
        CHECK(contains(e, "body.body[1].then.body[0].array: \"a\" is a read-only buffer"));
    }
    SUBCASE("not an object, wrong schema") {
        CHECK(contains(compile_error("[1, 2]"), "expected a JSON object, found array"));
        e = compile_error(edited([](json& j) { j["schema"] = "plexus-ir/9"; }));
        CHECK(contains(e, "schema: unsupported schema \"plexus-ir/9\""));
    }
    SUBCASE("nesting deep enough to exhaust a stack") {
        // Written as text: nlohmann's own dump would recurse as deep as the document.
        std::string text = good.dump();
        const std::string store_value = good["body"]["body"][1]["then"]["body"][0]["value"].dump();
        std::string deep;
        for (int i = 0; i < 100000; ++i)
            deep += R"({"expr":"Unary","type":"f32","op":"neg","a":)";
        deep += R"({"expr":"Const","type":"f32","value":1.0})" + std::string(100000, '}');
        text.replace(text.find(store_value), store_value.size(), deep);
        e = compile_error(text);
        CHECK(contains(e, "nesting is deeper than 256 levels"));
    }
    CAPTURE(e);
    CHECK(contains(e, "interp: module_load: "));
    check_vector_add_works();
}

// Mutates one JSON value at a time (every value of the tree, into each of several wrong
// shapes) and every prefix of the text: each load must end in OK or PLX_ERROR_COMPILE with a
// message, never a crash. The modules are not launched (a mutated step may loop forever).
TEST_CASE(
    "robustness: every truncation and every single-value mutation of a kernel loads cleanly") {
    const json good = json::parse(ir::to_json(reduction_for_fuzz()));
    const std::string text = good.dump();
    for (size_t cut = 0; cut < text.size(); ++cut) {
        Module m(text.substr(0, cut));
        REQUIRE(m.status() == PLX_ERROR_COMPILE);
    }
    CHECK(load_every_mutation(good, {nullptr, 0, -1, 1.5, "x", "f32", "Binary", json::array(),
                                     json::object()}) > 0);
    CHECK(contains(compile_error(std::string(100000, '[') + std::string(100000, ']')),
                   "expected a JSON object, found array"));
    check_vector_add_works();
}

TEST_CASE("nesting within the limit loads and runs: 200 negations of a + b") {
    auto gid = var("gid", I32);
    ir::Expr x = bin(B::Add, load("a", F32, gid), load("b", F32, gid));
    for (int i = 0; i < 200; ++i)
        x = ir::Unary::make(ir::UnaryOp::Neg, x);
    const ir::Kernel k =
        kernel("deep", {buffer("a", F32), buffer("b", F32), buffer("c", F32, ir::Access::Write)},
               {let_gid(), store("c", gid, x)});
    Buffer a(std::vector<float>{1.f, 2.f}), b(std::vector<float>{0.5f, -4.f}), c(2 * sizeof(float));
    Module m(k);
    REQUIRE(m.status() == PLX_OK);
    REQUIRE(launch(m.kernel(), dims1(2, 2), {a, b, c}) == PLX_OK);
    CHECK(c.read<float>() == std::vector<float>{1.5f, -2.f});
}

TEST_CASE("native blocks: the fallback runs; without one the module is refused") {
    auto gid = var("gid", I32);
    auto body_with = [&](ir::Stmt fallback) {
        return kernel("native_k", {buffer("out", I32, ir::Access::Write)},
                      {let_gid(), ir::Native::make({{"cuda", "out[gid] = 7;"}}, fallback)});
    };
    Module ok(body_with(block({store("out", gid, bin(B::Mul, gid, i32(3)))})));
    REQUIRE(ok.status() == PLX_OK);
    Buffer out(10 * sizeof(int32_t));
    REQUIRE(launch(ok.kernel(), dims1(10, 4), {out}) ==
            PLX_ERROR_LAUNCH); // 12 work-items, 10 slots
    CHECK(contains(last_error(),
                   "\"out\"[10] (global buffer of 10 i32 elements) at body[1].fallback[0]"));
    expect_recovery_after_launch_error();
    Buffer out12(12 * sizeof(int32_t));
    REQUIRE(launch(ok.kernel(), dims1(12, 4), {out12}) == PLX_OK);
    auto got = out12.read<int32_t>();
    for (int i = 0; i < 12; ++i)
        CHECK(got[i] == 3 * i);

    Module bad(body_with(nullptr));
    CHECK(bad.status() == PLX_ERROR_COMPILE);
    CHECK(contains(bad.error(), "native block at body[1] has no fallback and the interpreter "
                                "cannot run backend code"));
    check_vector_add_works();
}

TEST_CASE("launch arguments: scalar sizes, kinds, counts, group limits") {
    Module m(vector_add_kernel());
    REQUIRE(m.status() == PLX_OK);
    Buffer a(std::vector<float>(8, 1.f)), b(std::vector<float>(8, 1.f)), c(8 * sizeof(float));
    const plx_kernel k = m.kernel();

    CHECK(launch(k, dims1(8, 8), {a, b, c, int64_t(8)}) == PLX_ERROR_INVALID_ARGUMENT);
    CHECK(contains(
        last_error(),
        "argument 3 (\"n\", scalar i32): the value has 8 bytes, the parameter's type has 4"));
    CHECK(launch(k, dims1(8, 8), {a, b, c}) == PLX_ERROR_INVALID_ARGUMENT);
    CHECK(contains(last_error(), "takes 4 arguments, got 3"));
    CHECK(launch(k, dims1(8, 8), {a, b, 1.f, 8}) == PLX_ERROR_INVALID_ARGUMENT);
    CHECK(contains(last_error(), "argument 2 (\"c\", buffer of f32): expected PLX_ARG_BUFFER"));
    CHECK(launch(k, dims1(8, 8), {a, b, c, c}) == PLX_ERROR_INVALID_ARGUMENT);
    CHECK(launch(k, dims1(8, 2048), {a, b, c, 8}) == PLX_ERROR_OUT_OF_RESOURCES);
    CHECK(launch(k, Dims{2, {8, 8, 1}, {64, 32, 1}}, {a, b, c, 8}) == PLX_ERROR_OUT_OF_RESOURCES);
    CHECK(launch(k, dims1(8, 0), {a, b, c, 8}) == PLX_ERROR_INVALID_ARGUMENT);
    // Refused up front, so the queue has nothing to report.
    CHECK(api().queue_sync(Plugin::get().queue) == PLX_OK);

    plx_kernel other = nullptr;
    CHECK(api().kernel_get(m.handle(), "vector_sub", &other) == PLX_ERROR_NOT_FOUND);
    CHECK(contains(last_error(), "no kernel \"vector_sub\""));

    plx_module mod = nullptr;
    const std::string text = ir::to_json(vector_add_kernel());
    CHECK(api().module_load(Plugin::get().device, PLX_LANG_OPENCL_C, text.data(), text.size(), "",
                            &mod) == PLX_ERROR_UNSUPPORTED);
    // A zero-sized grid runs no group.
    CHECK(launch(k, dims1(0, 8), {a, b, c, 0}) == PLX_OK);
    check_vector_add_works();
}

TEST_CASE("shared arrays above the 64 KiB local memory are refused at launch") {
    const ir::Kernel k =
        kernel("big_shared", {buffer("out", F32, ir::Access::Write)},
               {store("sh", u32(0), f32(1), Space::Local)}, {{"sh", F32, 16 * 1024 + 1}});
    Module m(k);
    REQUIRE(m.status() == PLX_OK);
    Buffer out(sizeof(float));
    CHECK(launch(m.kernel(), dims1(1, 1), {out}) == PLX_ERROR_OUT_OF_RESOURCES);
    CHECK(contains(last_error(), "65540 bytes of shared arrays"));
}

} // namespace interp_test
