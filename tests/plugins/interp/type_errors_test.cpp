// What the interpreter refuses about types, and where it says so: at load (layout, names, paths,
// matches, shapes) and at run time (private bounds, invalid tags); the plugin works afterwards.
#include "fixture.hpp"

#include <plexus/kernel.hpp>

#include <nlohmann/json.hpp>

#include <functional>

namespace interp_test::type_errors {

namespace px = plexus;
using nlohmann::json;
using F3 = px::Vec<float, 3>;

struct Body {
    F3 pos;
    float mass;
    int8_t kind;
};
PLEXUS_RECORD(Body, pos, mass, kind);

using Shape =
    px::Variant<"Shape", px::Case<"none">, px::Case<"circle", float>, px::Case<"body", Body>>;

struct Slot {
    uint16_t id;
    Shape s;
};
PLEXUS_RECORD(Slot, id, s);

// A kernel with a record, a variant inside a record, a path, a match and a private array,
// which its loop fills up to m.
const ir::Kernel& typed_kernel() {
    static const auto k = px::kernel(
        "typed", {"in", "out", "n", "m"},
        [](px::In<Slot> in, px::Out<float> out, px::Int n, px::Int m) {
            px::Int i = px::global_id(0);
            px::If(i < n, [&] {
                auto scratch = px::private_array<float>(4);
                px::Var<Body> b = px::make<Body>(px::make<F3>(1.0f, 2.0f, 3.0f), 4.0f, int8_t(5));
                b[&Body::pos].y() = px::cast<float>(in[i][&Slot::id]);
                px::Var<float> a = 0.0f;
                px::Match(in[i][&Slot::s], px::on<"circle">([&](px::Var<float> r) { a = r; }),
                          px::on<"body">([&](px::Var<Body> x) { a = x[&Body::mass]; }),
                          px::on<"none">([&] { a = b[&Body::pos].y(); }));
                px::For(0, m, [&](px::Int k) { scratch[k] = a; });
                out[i] = scratch[0] + scratch[m - 1];
            });
        });
    return k.ir();
}

// The path of the first node (depth first) for which `is` holds, as the loader writes paths
// ("body.body[1].then.body[0]"), and the JSON pointer of such a path.
std::string find(const json& node, const std::function<bool(const json&)>& is,
                 const std::string& path = "") {
    if (is(node)) return path;
    std::string found;
    if (node.is_object())
        for (auto it = node.begin(); it != node.end() && found.empty(); ++it)
            found = find(*it, is, path.empty() ? it.key() : path + "." + it.key());
    else if (node.is_array())
        for (size_t i = 0; i < node.size() && found.empty(); ++i)
            found = find(node[i], is, path + "[" + std::to_string(i) + "]");
    return found;
}

json::json_pointer pointer(const std::string& path) {
    std::string p = "/";
    for (char c : path)
        if (c != ']') p += c == '.' || c == '[' ? '/' : c;
    return json::json_pointer(p);
}

std::string compile_error(const json& j) {
    Module m(j.dump());
    CHECK(m.status() == PLX_ERROR_COMPILE);
    return m.error();
}

bool stmt_is(const json& n, const char* kind) {
    return n.is_object() && n.value("stmt", "") == kind;
}

} // namespace interp_test::type_errors

namespace interp_test {
using namespace type_errors;

TEST_CASE("the typed kernel runs; its layout and types are refused when the JSON is edited") {
    const json good = json::parse(ir::to_json(typed_kernel()));
    {
        Module m(good.dump());
        REQUIRE(m.status() == PLX_OK);
    }
    std::string e;
    SUBCASE("layout mismatch: size, align, an offset, the payload offset") {
        // types: Body, Shape, Slot (each after what it contains).
        json j = good;
        j["types"][0]["size"] = 24;
        e = compile_error(j);
        CHECK(contains(e, "types[0].size: layout mismatch: docs/ir.md puts the size of \"Body\" at "
                          "32, the document says 24"));
        j = good;
        j["types"][0]["offsets"][2] = 21;
        e = compile_error(j);
        CHECK(contains(e, "types[0].offsets[2]: layout mismatch: docs/ir.md puts field \"kind\" of "
                          "\"Body\" at 20"));
        j = good;
        j["types"][1]["payload_offset"] = 4;
        e = compile_error(j);
        CHECK(contains(e, "types[1].payload_offset: layout mismatch: docs/ir.md puts the payload "
                          "of \"Shape\" at 16"));
        j = good;
        j["types"][2]["align"] = 4;
        e = compile_error(j);
        CHECK(contains(e, "types[2].align: layout mismatch"));
        // Without the optional layout keys the document still loads.
        j = good;
        for (auto& t : j["types"])
            for (const char* key : {"size", "align", "offsets", "payload_offset"})
                t.erase(key);
        Module m(j.dump());
        CHECK(m.status() == PLX_OK);
    }
    SUBCASE("unknown type names, and a type used before its declaration") {
        json j = good;
        j["params"][0]["type"] = "Slott";
        e = compile_error(j);
        CHECK(contains(e, "params[0].type: unknown type \"Slott\""));
        j = good;
        const std::string let = find(j, [](const json& n) { return stmt_is(n, "Let"); });
        j[pointer(let)]["type"] = "f32x5";
        e = compile_error(j);
        CHECK(contains(e, let + ".type: unknown type \"f32x5\""));
        j = good;
        std::swap(j["types"][0], j["types"][1]);
        e = compile_error(j);
        CHECK(contains(e, "types[0].cases[2].type: unknown type \"Body\""));
        j = good;
        j["types"][0]["fields"][2]["type"] = "bool";
        e = compile_error(j);
        CHECK(contains(e, "types[0].fields[2].type: bool cannot live in memory"));
    }
    SUBCASE("a path that does not fit, and one whose part has another type") {
        json j = good;
        const std::string assign =
            find(j, [](const json& n) { return stmt_is(n, "Assign") && n.contains("path"); });
        REQUIRE(!assign.empty());
        j[pointer(assign)]["path"] = {0, 4};
        e = compile_error(j);
        CHECK(contains(e, assign + ".path[1]: step 4 of the path into \""));
        CHECK(contains(e, "does not fit its part of type f32x3 (3 lanes)"));
        j[pointer(assign)]["path"] = {0, 1, 0};
        e = compile_error(j);
        CHECK(contains(e, assign + ".path[2]: step 0 of the path into "));
        CHECK(contains(e, "(only records and vectors have parts)"));
        j[pointer(assign)]["path"] = {0};
        e = compile_error(j);
        CHECK(contains(e, assign + ".value: assignment of f32 to \""));
        CHECK(contains(e, "(a part of it) of f32x3 (cast it)"));
    }
    SUBCASE("a match that misses a case or lists one twice, a field or case that is not there") {
        json j = good;
        const std::string match = find(j, [](const json& n) { return stmt_is(n, "Match"); });
        j[pointer(match)]["cases"].erase(2);
        e = compile_error(j);
        CHECK(contains(e, match + ": the match on 'Shape' is not exhaustive: no case for none"));
        j[pointer(match)]["cases"].push_back(j[pointer(match)]["cases"][0]);
        e = compile_error(j);
        CHECK(contains(e, match + ".cases[2].case: case 'circle' of 'Shape' is matched twice"));
        j = good;
        const std::string field =
            find(j, [](const json& n) { return n.is_object() && n.value("expr", "") == "Field"; });
        j[pointer(field)]["field"] = "mass";
        e = compile_error(j);
        CHECK(contains(e, field + ".field: 'Slot' has no field named \"mass\""));
    }
    SUBCASE("arrays: a shape that does not hold the count, a shape on a private array") {
        json j = good;
        j["shared"] = json::array(
            {{{"name", "tile"}, {"type", "f32"}, {"count", 256}, {"dims", {16, 16}}, {"pad", 1}}});
        e = compile_error(j);
        CHECK(contains(
            e, "shared[0].count: the array holds 256 elements, its shape [16,16] with pad 1 272"));
        j["shared"][0]["count"] = 272;
        Module m(j.dump());
        CHECK(m.status() == PLX_OK);
        j = good;
        j["private"][0]["dims"] = {2, 2};
        e = compile_error(j);
        CHECK(contains(e, "private[0].dims: a private array has no shape"));
    }
    SUBCASE("schema plexus-ir/1 has no vectors, records or private arrays") {
        json j = good;
        j["schema"] = "plexus-ir/1";
        e = compile_error(j);
        CHECK(contains(e, "private: unknown key \"private\""));
    }
    CAPTURE(e);
    CHECK(contains(e, "interp: module_load: kernel \"typed\": "));
    check_vector_add_works();
}

TEST_CASE("an out-of-bounds private access names the array, the index and the work-item") {
    Buffer in{std::vector<Slot>(8)}, out(8 * sizeof(float));
    Module m(typed_kernel());
    REQUIRE(m.status() == PLX_OK);
    // scratch holds 4; the loop stores scratch[k] for k < m = 5.
    REQUIRE(launch(m.kernel(), dims1(8, 8), {in, out, 8, 5}) == PLX_ERROR_LAUNCH);
    const std::string e = last_error();
    CAPTURE(e);
    CHECK(contains(e, "kernel \"typed\": out-of-bounds store to \"priv"));
    CHECK(contains(e, "[4] (private array of 4 f32 elements) at body[1].then["));
    CHECK(contains(e, "by work-item global id (0), local id (0), group (0)"));
    CHECK(api().queue_sync(Plugin::get().queue) == PLX_OK);
    REQUIRE(launch(m.kernel(), dims1(8, 8), {in, out, 8, 4}) == PLX_OK);
    check_vector_add_works();
}

TEST_CASE(
    "a variant tag in memory that names no case stops the launch at the statement reading it") {
    std::vector<Slot> slots(16);
    for (int i = 0; i < 16; ++i) {
        slots[i].id = uint16_t(i);
        slots[i].s = i % 2 ? Shape::make<"circle">(float(i)) : Shape::make<"none">();
    }
    Module m(typed_kernel());
    REQUIRE(m.status() == PLX_OK);
    Buffer out(16 * sizeof(float));
    {
        Buffer in(slots);
        REQUIRE(launch(m.kernel(), dims1(16, 8), {in, out, 16, 4}) == PLX_OK);
        const auto got = out.read<float>();
        // Circles give their radius i, nones the id i stored in b.pos.y: twice that.
        for (int i = 0; i < 16; ++i)
            CHECK(got[i] == 2.0f * float(i));
    }
    slots[11].s.tag = 3;
    Buffer in(slots);
    REQUIRE(launch(m.kernel(), dims1(16, 8), {in, out, 16, 4}) == PLX_ERROR_LAUNCH);
    const std::string e = last_error();
    CAPTURE(e);
    // The match is the If's fourth statement; the tag is at byte 16 of a Slot.
    CHECK(contains(e,
                   "kernel \"typed\": invalid variant tag 3 (\"Shape\" has 3 cases) at byte 16 of "
                   "\"in\"[11] (Slot) at body[1].then[3] by work-item global id (11), local id "
                   "(3), group (1)"));
    check_vector_add_works();
}

// Every value of the typed kernel's JSON replaced, one at a time, by values of other shapes and
// by type names: each load ends in OK or PLX_ERROR_COMPILE with a message, never a crash.
TEST_CASE("robustness: every single-value mutation of the typed kernel loads cleanly") {
    const json good = json::parse(ir::to_json(typed_kernel()));
    CHECK(load_every_mutation(good, {nullptr, 0, -1, 7, 1.5, "x", "f32", "f16x3", "Body", "Shape",
                                     json::array(), json::array({0, 9}), json::object()}) > 0);
    check_vector_add_works();
}

} // namespace interp_test
