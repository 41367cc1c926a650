// Matrix fragments that must fail on the interpreter: at launch, what tensor cores require
// (wmma's alignment, the whole subgroup with the same operands, every element in bounds, a
// fragment given values before it is read, stores whose rows do not overlap); at load, every
// rule of the core's FragmentDecl::check and validator, each mutation also refused by the core.
#include "fixture.hpp"

#include <plexus/plexus.hpp>

#include <nlohmann/json.hpp>

namespace interp_test {
namespace {

namespace px = plexus;
using ir::MatrixLayout;
using ir::MatrixUse;
using nlohmann::json;
constexpr Scalar F16 = Scalar::F16, F32 = Scalar::F32;

// The launch error of a kernel that loads A at a[i] (stride ld) and B at a[0], and stores the
// accumulator at d[si] (stride sld), on one subgroup.
std::string tile_error(int32_t i, int32_t ld, int32_t si, int32_t sld, size_t a_elements = 1024) {
    static const auto k = px::kernel(
        "tiles", {"a", "d", "i", "ld", "si", "sld"},
        [](px::In<px::half> a, px::Out<float> d, px::Int i, px::Int ld, px::Int si, px::Int sld) {
            px::Fragment<px::half, 16, 16, 16, px::MatrixA> fa;
            px::Fragment<px::half, 16, 16, 16, px::MatrixB> fb;
            px::Fragment<float, 16, 16, 16, px::Accumulator> acc;
            px::load_fragment(fa, a, i, ld);
            px::load_fragment(fb, a, 0, 16);
            px::fill_fragment(acc, 0.0f);
            px::mma(acc, fa, fb);
            px::store_fragment(acc, d, si, sld);
        });
    Buffer ba(std::vector<px::half>(a_elements, px::half(1.0f))), bd(1024 * sizeof(float));
    Module m(k.ir());
    REQUIRE(m.status() == PLX_OK);
    REQUIRE(launch(m.kernel(), dims1(8, 8), {ba, bd, i, ld, si, sld}) == PLX_ERROR_LAUNCH);
    CHECK(api().queue_sync(Plugin::get().queue) == PLX_OK);
    return last_error();
}

// A kernel of fragments built with the IR factories, so that the validator's static rules do
// not stop it before the interpreter sees it.
ir::Kernel fragment_kernel(const std::string& name, std::vector<ir::Stmt> body) {
    ir::Kernel k =
        kernel(name, {buffer("a", F16), buffer("d", F32, ir::Access::Write)}, std::move(body));
    k.fragments = {{"fa", MatrixUse::A, 16, 16, 16, F16, MatrixLayout::Row},
                   {"acc", MatrixUse::Acc, 16, 16, 16, F32, MatrixLayout::Row}};
    return k;
}

std::string divergent_error(const ir::Kernel& k) {
    CHECK_THROWS(ir::validate(k)); // the core refuses it statically
    Buffer ba(std::vector<px::half>(4096, px::half(1.0f))), bd(4096 * sizeof(float));
    Module m(k);
    REQUIRE(m.status() == PLX_OK);
    REQUIRE(launch(m.kernel(), dims1(16, 16), {ba, bd}) == PLX_ERROR_LAUNCH);
    check_vector_add_works();
    return last_error();
}

ir::Expr lid() {
    return cast(Scalar::I32, call("local_id_x"));
}

} // namespace

TEST_CASE(
    "tensor cores' alignment: the tile's first element on 32 bytes, the stride a multiple of 16") {
    std::string e = tile_error(8, 16, 0, 16);
    CAPTURE(e);
    CHECK(contains(e, "interp: launch: kernel \"tiles\": matrix load of fragment \""));
    CHECK(contains(
        e,
        "from \"a\"[8], stride 16, row layout: the tile starts at byte 16 of the array, not a "
        "multiple "
        "of 32 (wmma needs its first element 32-byte aligned: an index that is a multiple of 16)"));
    CHECK(contains(e, " at body[0] by work-item global id (0), local id (0), group (0)"));
    e = tile_error(0, 20, 0, 16);
    CHECK(contains(
        e,
        "from \"a\"[0], stride 20, row layout: a stride of 40 bytes, not a multiple of 16 (wmma's "
        "rule: a multiple of 8 elements)"));
    e = tile_error(0, 16, 4, 16); // f32: 16 bytes
    CHECK(contains(e, "matrix store of fragment \""));
    CHECK(contains(e, "to \"d\"[4], stride 16, row layout: the tile starts at byte 16"));
    e = tile_error(0, -16, 0, 16);
    CHECK(contains(e, "stride -16, row layout: a negative stride (wmma's stride is unsigned)"));
    check_vector_add_works();
}

TEST_CASE("a tile past the end of its array names the element and its place in the tile") {
    const std::string e = tile_error(0, 24, 0, 16, 256);
    CAPTURE(e);
    CHECK(contains(
        e, "out-of-bounds matrix load from \"a\"[264] (global buffer of 256 f16 elements): element "
           "(11, 0) of the 16 x 16 tile of the matrix load of fragment \""));
    CHECK(contains(e, "from \"a\"[0], stride 24, row layout at body[0] by work-item"));
    CHECK(contains(tile_error(0, 16, 800, 16),
                   "out-of-bounds matrix store to \"d\"[1024] (global buffer of 1024 f32 "
                   "elements): element (14, 0) of the 16 x 16 tile"));
    CHECK(contains(tile_error(-32, 16, 0, 16), "out-of-bounds matrix load from \"a\"[-32]"));
}

TEST_CASE("a store whose rows overlap is refused: which write lands is undefined on tensor cores") {
    const std::string e = tile_error(0, 16, 0, 8);
    CAPTURE(e);
    CHECK(contains(e, "to \"d\"[0], stride 8, row layout: the stride is below the tile's 16 "
                      "columns, so the stored "
                      "rows overlap"));
}

TEST_CASE("a fragment read before a fill, load or mma gave it values") {
    const auto k =
        px::kernel("undefined_acc", {"a", "d"}, [](px::In<px::half> a, px::Out<float> d) {
            px::Fragment<px::half, 16, 16, 16, px::MatrixA> fa;
            px::Fragment<px::half, 16, 16, 16, px::MatrixB> fb;
            px::Fragment<float, 16, 16, 16, px::Accumulator> acc;
            px::load_fragment(fa, a, 0, 16);
            px::load_fragment(fb, a, 0, 16);
            px::mma(acc, fa, fb); // acc was never filled
            px::store_fragment(acc, d, 0, 16);
        });
    Buffer ba(std::vector<px::half>(256, px::half(1.0f))), bd(256 * sizeof(float));
    Module m(k.ir());
    REQUIRE(m.status() == PLX_OK);
    REQUIRE(launch(m.kernel(), dims1(8, 8), {ba, bd}) == PLX_ERROR_LAUNCH);
    const std::string e = last_error();
    CAPTURE(e);
    CHECK(contains(e, "\", which no fill, load or mma has given values in subgroup 0 (a fragment "
                      "starts undefined) at "
                      "body[2]"));
    CHECK(contains(e, "matrix mma of fragment \""));
}

TEST_CASE("operands that differ within a subgroup, and a subgroup only part of which reaches the "
          "statement") {
    using B = ir::BinaryOp;
    std::string e = divergent_error(fragment_kernel(
        "divergent_index",
        {ir::Matrix::load("fa", "a", Space::Global, bin(B::Mul, lid(), i32(16)), i32(16))}));
    CAPTURE(e);
    CHECK(contains(e, "kernel \"divergent_index\": the index of the matrix load of fragment \"fa\" "
                      "is 16 here but 0 on "
                      "lane 0 of subgroup 0 (every work-item of a subgroup must give the same "
                      "operands) at body[0] by "
                      "work-item global id (1), local id (1), group (0)"));
    e = divergent_error(fragment_kernel(
        "divergent_stride", {ir::Matrix::load("fa", "a", Space::Global, i32(0),
                                              bin(B::Add, i32(16), bin(B::Div, lid(), i32(9))))}));
    CHECK(contains(e, "the stride of the matrix load of fragment \"fa\" is 17 here but 16 on lane "
                      "0 of subgroup 1"));
    CHECK(contains(e, "local id (9)"));
    e = divergent_error(
        fragment_kernel("divergent_value", {ir::Matrix::fill("acc", cast(F32, lid()))}));
    CHECK(contains(e, "the value of the matrix fill of fragment \"acc\" is 1 here but 0 on lane 0 "
                      "of subgroup 0"));
    e = divergent_error(fragment_kernel(
        "partial", {if_(bin(B::Lt, lid(), i32(12)), {ir::Matrix::fill("acc", f32(0))})}));
    CHECK(contains(
        e,
        "kernel \"partial\": matrix fill of fragment \"acc\" reached by only 4 of the 8 work-items "
        "of "
        "subgroup 1 (every work-item of a subgroup must reach it; this one is in another branch or "
        "loop "
        "iteration, or has left the loop), missed at body[0].then[0] by work-item global id (12)"));
}

// ---- the loader ----------------------------------------------------------------------------

namespace {

// Every statement and every kind of fragment the mutations below need.
json good_document() {
    ir::Kernel k =
        kernel("frags", {buffer("a", F16), buffer("c", F32), buffer("d", F32, ir::Access::Write)},
               {ir::Matrix::fill("acc", f32(0)),
                ir::Matrix::load("fa", "a", Space::Global, i32(0), i32(16)),
                ir::Matrix::load("fb", "a", Space::Global, i32(0), i32(16), MatrixLayout::Col),
                ir::Matrix::mma("acc", "fa", "fb", "acc"),
                ir::Matrix::store("acc", "d", Space::Global, i32(0), i32(16)),
                ir::Matrix::load("fa", "s", Space::Local, i32(0), i32(16))},
               {{"s", F16, 256}});
    k.privates = {{"p", F16, 256}};
    k.fragments = {{"fa", MatrixUse::A, 16, 16, 16, F16, MatrixLayout::Row},
                   {"fb", MatrixUse::B, 16, 16, 16, F16, MatrixLayout::Col},
                   {"acc", MatrixUse::Acc, 16, 16, 16, F32, MatrixLayout::Row},
                   {"acc8", MatrixUse::Acc, 16, 16, 8, F32, MatrixLayout::Row},
                   {"fab", MatrixUse::A, 16, 16, 16, Scalar::BF16, MatrixLayout::Row},
                   {"fbb", MatrixUse::B, 16, 16, 16, Scalar::BF16, MatrixLayout::Row},
                   {"acch", MatrixUse::Acc, 16, 16, 16, F16, MatrixLayout::Row}};
    ir::validate(k);
    return json::parse(ir::to_json(k));
}

struct Mutation {
    std::vector<std::pair<const char*, json>> edits; // JSON pointer, new value
    const char* message;                             // the interpreter's, path included
};

} // namespace

TEST_CASE(
    "the loader runs a good document, and refuses what the core refuses, naming the JSON path") {
    const json good = good_document();
    {
        Module m(good.dump());
        REQUIRE(m.status() == PLX_OK);
        Buffer ba(std::vector<px::half>(256, px::half(0.5f))), bc(256 * sizeof(float)),
            bd(256 * sizeof(float));
        REQUIRE(launch(m.kernel("frags"), dims1(8, 8), {ba, bc, bd}) == PLX_OK);
        CHECK(bd.read<float>() == std::vector<float>(256, 4.0f)); // 16 products of 0.25
    }
    const json bool_const = {{"expr", "Const"}, {"type", "bool"}, {"value", true}};
    const json f32_const = {{"expr", "Const"}, {"type", "f32"}, {"value", 0.0}};
    const json f16_mma = {{"stmt", "Matrix"}, {"op", "mma"}, {"fragment", "acch"},
                          {"a", "fab"},       {"b", "fbb"},  {"c", "acch"}};
    const std::vector<Mutation> mutations = {
        {{{"/fragments/0/m", 32}},
         "fragments[0]: fragment \"fa\" is shape m32n16k16 (fragments are m16n16k16 or m16n16k8)"},
        {{{"/fragments/2/type", "bf16"}},
         "fragments[2]: fragment \"acc\" is an accumulator of bf16 at m16n16k16 "
         "(accumulators are f32, or f16 at m16n16k16)"},
        {{{"/fragments/3/type", "f16"}},
         "fragments[3]: fragment \"acc8\" is an accumulator of f16 at m16n16k8"},
        {{{"/fragments/0/type", "f32"}},
         "fragments[0]: fragment \"fa\" is an A or B fragment of f32 at m16n16k16 "
         "(A and B are f16 or bf16 at m16n16k16, tf32 as f32 at m16n16k8)"},
        {{{"/fragments/2/layout", "row"}},
         "fragments[2].layout: an accumulator has no declared layout"},
        {{{"/fragments/0/layout", "diagonal"}}, "fragments[0].layout: unknown layout \"diagonal\""},
        {{{"/fragments/0/use", "c"}},
         "fragments[0].use: unknown fragment use \"c\" (expected a, b or acc)"},
        {{{"/fragments/0/type", "f16x2"}},
         "fragments[0].type: a fragment of f16x2 (fragments hold numbers)"},
        {{{"/fragments/1/name", "fa"}}, "fragments[1].name: the name \"fa\" is declared twice"},
        {{{"/fragments/0/name", "p"}}, "fragments[0].name: the name \"p\" is declared twice"},
        {{{"/body/body/4/fragment", "fa"}},
         "body.body[4].fragment: store of fragment \"fa\": only accumulators are stored"},
        {{{"/body/body/4/array", "c"}},
         "body.body[4].array: \"c\" is a read-only buffer (access read)"},
        {{{"/body/body/1/layout", "col"}},
         "body.body[1].layout: load of fragment \"fa\" reads col-major memory, the "
         "fragment is declared row-major"},
        {{{"/body/body/1/array", "c"}},
         "body.body[1].array: load of fragment \"fa\": \"c\" holds f32, the fragment f16"},
        {{{"/body/body/1/array", "p"}, {"/body/body/1/space", "private"}},
         "body.body[1].space: fragment \"fa\": a fragment loads from and stores to a buffer or a "
         "shared array, not "
         "the private array \"p\""},
        {{{"/body/body/3/a", "fb"}, {"/body/body/3/b", "fa"}},
         "body.body[3]: mma takes an A, a B and an accumulator into an accumulator"},
        {{{"/body/body/3/c", "acc8"}},
         "body.body[3]: mma of fragments of different shapes (m16n16k16, m16n16k16, "
         "m16n16k8 into m16n16k16)"},
        {{{"/body/body/3/b", "fbb"}}, "body.body[3]: mma of A of f16 and B of bf16"},
        {{{"/body/body/3/fragment", "acch"}},
         "body.body[3]: mma adds an accumulator of f32 into one of f16"},
        {{{"/body/body/3", f16_mma}},
         "body.body[3]: an f16 accumulator takes f16 products, not bf16"},
        {{{"/body/body/3/c", "nope"}}, "body.body[3].c: \"nope\" is not a declared fragment"},
        {{{"/body/body/0/op", "transpose"}}, "body.body[0].op: unknown matrix op \"transpose\""},
        {{{"/body/body/0/value", bool_const}}, "body.body[0].value: must be a number, not bool"},
        {{{"/body/body/1/index", f32_const}}, "body.body[1].index: must be an integer, not f32"},
        {{{"/body/body/0/index", f32_const}}, "body.body[0].index: unknown key \"index\""},
        {{{"/body/body/0",
           {{"stmt", "Let"}, {"name", "acc"}, {"type", "f32"}, {"init", f32_const}}}},
         "body.body[0].name: \"acc\" is declared again while an earlier one is visible"},
    };
    for (const Mutation& mutation : mutations) {
        json j = good;
        for (auto& [pointer, value] : mutation.edits)
            j[json::json_pointer(pointer)] = value;
        CAPTURE(mutation.message);
        CHECK_THROWS(ir::validate(ir::from_json(j.dump())));
        Module m(j.dump());
        CHECK(m.status() == PLX_ERROR_COMPILE);
        CHECK(contains(m.error(),
                       "interp: module_load: kernel \"frags\": " + std::string(mutation.message)));
    }
    // Fragments and private arrays share the per-work-item limit: 513 KiB of tiles is refused.
    json many = good;
    for (int i = 0; i < 513; ++i) {
        std::string name = "x"; // appended: GCC 12 warns falsely (-Wrestrict) on "x" + ...
        name += std::to_string(i);
        many["fragments"].push_back(
            {{"name", name}, {"use", "acc"}, {"m", 16}, {"n", 16}, {"k", 16}, {"type", "f32"}});
    }
    Module m(many.dump());
    CHECK(m.status() == PLX_ERROR_COMPILE);
    CHECK(contains(m.error(), "fragments: fragments and private arrays of "));
    check_vector_add_works();
}

} // namespace interp_test
