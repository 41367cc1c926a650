// The IR's types: the layout rules against the C++ types that mirror them, f16 / bf16
// rounding, exact widening, the JSON form of every new node, and one rejected kernel per new
// validator rule.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include "plexus/error.hpp"
#include "plexus/half.hpp"
#include "plexus/ir.hpp"
#include "plexus/kernel.hpp"

#include <cmath>
#include <cstring>
#include <functional>
#include <nlohmann/json.hpp>
#include <random>

namespace px = plexus;
namespace ir = plexus::ir;
using ir::Scalar;

namespace layout_check {
struct Particle {
    px::Vec<float, 3> pos, vel;
    float mass;
    px::bf16 charge;
};
PLEXUS_RECORD(Particle, pos, vel, mass, charge);
using Kind = px::Variant<"Kind", px::Case<"free">, px::Case<"charged", float>,
                         px::Case<"anchored", px::Vec<float, 3>>>;
struct Body {
    int8_t flag;
    Kind kind;
    px::half h;
    Particle p;
};
PLEXUS_RECORD(Body, flag, kind, h, p);
using Small = px::Variant<"Small", px::Case<"none">, px::Case<"byte", uint8_t>>;
using Empty = px::Variant<"Empty", px::Case<"a">, px::Case<"b">>;
} // namespace layout_check
using namespace layout_check;

namespace {

// The IR's layout of a C++ kernel type, computed by the IR from the declaration alone.
template <class T> void check_layout() {
    ir::Type t = px::type_of<T>();
    INFO(t.name());
    CHECK(ir::size_of(t) == sizeof(T));
    CHECK(ir::align_of(t) == alignof(T));
}

ir::Kernel kernel_of(std::string name, std::vector<ir::Param> params, std::vector<ir::Stmt> body) {
    ir::Kernel k;
    k.name = std::move(name);
    k.params = std::move(params);
    k.body = ir::Block::make(std::move(body));
    ir::collect_types(k);
    return k;
}

void expect_invalid(const ir::Kernel& k, std::initializer_list<std::string> fragments) {
    try {
        ir::validate(k);
    } catch (const px::Error& e) {
        INFO("message: " << std::string(e.what()));
        CHECK(e.code() == px::ErrorCode::InvalidKernel);
        CHECK(e.context().kernel == k.name);
        for (const std::string& f : fragments)
            CHECK_MESSAGE(e.message().find(f) != std::string::npos, "missing: " << f);
        return;
    }
    FAIL("kernel '" << k.name << "' was accepted:\n" << ir::print(k));
}

template <class F>
void expect_error(px::ErrorCode code, F&& f, std::initializer_list<std::string> fragments) {
    try {
        f();
    } catch (const px::Error& e) {
        INFO("message: " << std::string(e.what()));
        CHECK(e.code() == code);
        for (const std::string& s : fragments)
            CHECK_MESSAGE(std::string(e.what()).find(s) != std::string::npos, "missing: " << s);
        return;
    }
    FAIL("no error");
}

// The nearest of all finite values of a 16-bit format to x, ties to the even pattern: a
// brute-force reference independent of the bit tricks of half.hpp.
template <class Decode> uint16_t nearest(float x, Decode decode) {
    uint16_t best = 0;
    double best_err = INFINITY;
    for (uint32_t b = 0; b < 65536; ++b) {
        float v = decode(uint16_t(b));
        if (!std::isfinite(v)) continue;
        double err = std::fabs(double(v) - double(x));
        bool tie_even = err == best_err && (b & 1) == 0;
        if (err < best_err || tie_even) best = uint16_t(b), best_err = err;
    }
    return best;
}

} // namespace

TEST_CASE("the IR lays out scalars, vectors, records and variants as the C++ types are laid out") {
    check_layout<int8_t>();
    check_layout<px::half>();
    check_layout<px::bf16>();
    check_layout<double>();
    check_layout<px::Vec<float, 3>>();
    check_layout<px::Vec<px::half, 3>>();
    check_layout<px::Vec<uint8_t, 8>>();
    check_layout<px::Vec<double, 4>>();
    check_layout<Particle>();
    check_layout<Kind>();
    check_layout<Body>();
    check_layout<Small>();
    check_layout<Empty>();
    // The numbers docs/ir.md states.
    CHECK(sizeof(px::Vec<float, 3>) == 16);
    CHECK(sizeof(Particle) == 48);
    ir::Type p = px::type_of<Particle>();
    CHECK(p.decl()->offsets == std::vector<uint64_t>{0, 16, 32, 36});
    ir::Type k = px::type_of<Kind>();
    CHECK(k.decl()->payload_offset == 16);
    CHECK(ir::size_of(k) == 32);
    CHECK(px::type_of<Small>().decl()->payload_offset == 4);
    CHECK(sizeof(Small) == 8);
    CHECK(sizeof(Empty) == 4);
    ir::Type b = px::type_of<Body>();
    CHECK(b.decl()->offsets == std::vector<uint64_t>{offsetof(Body, flag), offsetof(Body, kind),
                                                     offsetof(Body, h), offsetof(Body, p)});
}

TEST_CASE("host variants keep their case and payload") {
    Kind k = Kind::make<"anchored">(px::Vec<float, 3>{{1, 2, 3}});
    CHECK(k.tag == 2);
    CHECK(k.holds<"anchored">());
    CHECK(k.get<"anchored">()[2] == 3.0f);
    CHECK(Kind::make<"free">().tag == 0);
}

TEST_CASE("f16 and bf16 round to nearest, ties to even, like a brute-force search") {
    std::mt19937 g(7);
    std::uniform_real_distribution<float> mag(-20, 17); // beyond the half range at both ends
    for (int i = 0; i < 300; ++i) {
        float x = std::ldexp(std::uniform_real_distribution<float>(1, 2)(g), int(mag(g))) *
                  (i % 2 ? -1 : 1);
        INFO("x = " << x);
        uint16_t h = px::detail::f32_to_f16_bits(x);
        if (std::fabs(x) < 65520.0f)
            CHECK(h == nearest(x, px::detail::f16_bits_to_f32));
        else
            CHECK((h & 0x7fff) == 0x7c00);
        CHECK(px::detail::f32_to_bf16_bits(x) == nearest(x, px::detail::bf16_bits_to_f32));
    }
    // Every pattern converts to float and back unchanged (NaNs stay NaN).
    for (uint32_t b = 0; b < 65536; ++b) {
        float f = px::detail::f16_bits_to_f32(uint16_t(b));
        if (std::isnan(f))
            CHECK(std::isnan(px::detail::f16_bits_to_f32(px::detail::f32_to_f16_bits(f))));
        else
            CHECK(px::detail::f32_to_f16_bits(f) == b);
        float g2 = px::detail::bf16_bits_to_f32(uint16_t(b));
        if (std::isnan(g2))
            CHECK(std::isnan(px::detail::bf16_bits_to_f32(px::detail::f32_to_bf16_bits(g2))));
        else
            CHECK(px::detail::f32_to_bf16_bits(g2) == b);
    }
    // Ties: 1 + 2^-11 is halfway between 1 and the next half; it rounds to the even 1.
    CHECK(px::round_to_f16(1.0f + std::ldexp(1.0f, -11)) == 1.0f);
    CHECK(px::round_to_f16(1.0f + 3 * std::ldexp(1.0f, -11)) == 1.0f + std::ldexp(1.0f, -9));
    CHECK(px::round_to_bf16(1.0f + std::ldexp(1.0f, -8)) == 1.0f);
}

TEST_CASE("exact widening: what the kernel language converts without px::cast") {
    CHECK(ir::widens_exactly(Scalar::I8, Scalar::I32));
    CHECK(ir::widens_exactly(Scalar::U8, Scalar::I16));
    CHECK(ir::widens_exactly(Scalar::U16, Scalar::F32));
    CHECK(ir::widens_exactly(Scalar::I8, Scalar::F16));
    CHECK(ir::widens_exactly(Scalar::F16, Scalar::F32));
    CHECK(ir::widens_exactly(Scalar::BF16, Scalar::F64));
    CHECK(ir::widens_exactly(Scalar::I32, Scalar::F64));
    CHECK_FALSE(ir::widens_exactly(Scalar::I32, Scalar::F32));
    CHECK_FALSE(ir::widens_exactly(Scalar::U32, Scalar::I32));
    CHECK_FALSE(ir::widens_exactly(Scalar::I8, Scalar::U16));
    CHECK_FALSE(ir::widens_exactly(Scalar::F16, Scalar::BF16));
    CHECK_FALSE(ir::widens_exactly(Scalar::BF16, Scalar::F16));
    CHECK_FALSE(ir::widens_exactly(Scalar::I16, Scalar::BF16));
    CHECK_FALSE(ir::widens_exactly(Scalar::F32, Scalar::F16));
}

TEST_CASE("type names read back") {
    for (const char* name : {"i8", "u16", "bf16", "f32x3", "u8x8", "f16x4"}) {
        auto t = ir::type_from_string(name);
        REQUIRE(t);
        CHECK(t->name() == name);
    }
    CHECK_FALSE(ir::type_from_string("boolx4"));
    CHECK_FALSE(ir::type_from_string("f32x5"));
    CHECK_FALSE(ir::type_from_string("Particle"));
    auto p = ir::type_from_string("Particle", {px::type_of<Particle>().decl_ptr()});
    REQUIRE(p);
    CHECK(p->is_record());
}

namespace {
// A kernel with every new node: records, variants with match, vectors, f16, private arrays
// and a shaped shared array.
const auto& everything() {
    static const auto k = px::kernel(
        "everything", {"bodies", "h", "out", "n"},
        [](px::InOut<Body> bodies, px::In<px::half> h, px::Out<px::Vec<float, 4>> out, px::Int n) {
            px::Int i = px::global_id(0);
            auto tile = px::shared<float>(4, 8, px::Pad{1});
            auto priv = px::private_array<px::Vec<float, 4>>(2);
            px::If(i < n, [&] {
                px::Var<Body> b = bodies[i];
                px::Var<px::Vec<float, 3>> acc = 0.0f;
                px::Match(b[&Body::kind], px::on<"charged">([&](px::Var<float> q) {
                              acc = b[&Body::p][&Particle::vel] * q;
                          }),
                          px::otherwise([&] { acc = b[&Body::p][&Particle::pos].zyx(); }));
                b[&Body::p][&Particle::pos].y() = acc.x() + px::cast<float>(h[i]);
                px::Var<px::half> hh = h[i] * 2.0f;
                priv[1] =
                    px::make<px::Vec<float, 4>>(px::cast<float>(hh), acc.x(), acc.y(), acc.z());
                tile[0][px::local_id(0) % 8] = priv[1].w();
                out[i] = priv[1] + px::broadcast<4>(tile[0][0]);
                bodies[i] = b;
                bodies[i][&Body::kind] = px::make_variant<Kind, "anchored">(acc);
            });
        });
    return k;
}
} // namespace

TEST_CASE("JSON plexus-ir/2 carries every type and node, and reads back to the same kernel") {
    const ir::Kernel& k = everything().ir();
    std::string text = ir::to_json(k);
    CHECK(text.find("\"plexus-ir/2\"") != std::string::npos);
    ir::Kernel back = ir::from_json(text, "everything.json");
    ir::validate(back);
    CHECK(ir::to_json(back) == text);
    CHECK(back.hash() == k.hash());
    CHECK(back.types.size() == 3);
    REQUIRE(back.shared.size() == 1);
    CHECK(back.shared[0].dims == std::vector<uint32_t>{4, 8});
    CHECK(back.shared[0].count == 36);
    CHECK(back.privates.size() == 1);
    std::string printed = ir::print(k);
    for (const char* s : {"record Particle", "variant Kind", "match", "otherwise",
                          ".pos.y = ", "private f32x4", "[4][8] pad 1"})
        CHECK_MESSAGE(printed.find(s) != std::string::npos, "print lacks " << s);
}

TEST_CASE("a plexus-ir/1 document still reads, and cannot use what /2 added") {
    const char* v1 = R"({"schema": "plexus-ir/1", "name": "k", "shared": [],
      "params": [{"name": "o", "kind": "buffer", "type": "f32", "access": "write"}],
      "body": {"stmt": "Block", "body": [{"stmt": "Store", "array": "o", "space": "global",
        "index": {"expr": "Const", "type": "i32", "value": 0},
        "value": {"expr": "Const", "type": "f32", "value": 1.5}}]}})";
    ir::Kernel k = ir::from_json(v1);
    ir::validate(k);
    CHECK(k.params[0].type == Scalar::F32);
    std::string with_vector = v1;
    with_vector.replace(with_vector.find("\"f32\", \"access\""), 5, "\"f32x4\"");
    expect_error(px::ErrorCode::InvalidIR, [&] { ir::from_json(with_vector); },
                 {"unknown type \"f32x4\""});
}

TEST_CASE("JSON errors name the path: unknown type, layout mismatch, unknown field or case") {
    const nlohmann::json doc = nlohmann::json::parse(ir::to_json(everything().ir()));
    auto json_error = [&](const std::function<void(nlohmann::json&)>& edit, const std::string& path,
                          const std::string& what) {
        nlohmann::json d = doc;
        edit(d);
        try {
            ir::from_json(d.dump(), "bad.json");
            FAIL("accepted");
        } catch (const px::Error& e) {
            INFO(std::string(e.what()));
            CHECK(e.code() == px::ErrorCode::InvalidIR);
            CHECK(e.context().json_path == path);
            CHECK(e.context().file == "bad.json");
            CHECK(e.message().find(what) != std::string::npos);
        }
    };
    // Body's fields are flag, kind, h, p: types[0] is Kind, types[1] Particle, types[2] Body.
    json_error([](auto& d) { d["types"][1]["offsets"][1] = 20; }, "types[1].offsets[1]",
               "layout mismatch: plexus puts field \"vel\" at byte 16");
    json_error([](auto& d) { d["types"][1]["size"] = 44; }, "types[1].size",
               "layout mismatch: plexus computes size 48");
    json_error([](auto& d) { d["types"][0]["payload_offset"] = 4; }, "types[0].payload_offset",
               "layout mismatch");
    json_error([](auto& d) { d["types"][0]["offsets"] = {0}; }, "types[0].offsets",
               "unknown key \"offsets\"");
    json_error([](auto& d) { d["types"][1]["fields"][0]["type"] = "f32x5"; },
               "types[1].fields[0].type", "unknown type \"f32x5\"");
    json_error([](auto& d) { d["params"][0]["type"] = "Bodies"; }, "params[0].type",
               "unknown type \"Bodies\"");
    // The match is the third statement of the if's body.
    json_error(
        [](auto& d) { d["body"]["body"][1]["then"]["body"][2]["cases"][0]["case"] = "charged_"; },
        "body.body[1].then.body[2].cases[0].case", "has no case named \"charged_\"");
}

TEST_CASE("the validator rejects each misuse of the new constructs") {
    ir::Type kind = px::type_of<Kind>(), particle = px::type_of<Particle>();
    auto buf = [](std::string n, ir::Type t, ir::Access a = ir::Access::ReadWrite) {
        return ir::Param{std::move(n), ir::Param::Kind::Buffer, std::move(t), a};
    };
    auto load = [](const std::string& a, ir::Type t) {
        return ir::Load::make(a, ir::Space::Global, std::move(t),
                              ir::Const::make_int(Scalar::I32, 0));
    };
    auto empty = [] { return ir::Block::make({}); };

    SUBCASE("a match that leaves out a case") {
        expect_invalid(
            kernel_of("m1", {buf("v", kind)},
                      {ir::Match::make(load("v", kind), {{0, "", empty()}, {1, "", empty()}})}),
            {"not exhaustive", "anchored", "otherwise"});
    }
    SUBCASE("a case matched twice") {
        expect_invalid(kernel_of("m2", {buf("v", kind)},
                                 {ir::Match::make(load("v", kind),
                                                  {{0, "", empty()}, {0, "", empty()}}, empty())}),
                       {"'free'", "matched twice"});
    }
    SUBCASE("a barrier under a match on a work-item-dependent value") {
        ir::Expr lid = ir::Cast::make(Scalar::U32, ir::Call::make("local_id_x", {}));
        auto body = ir::Block::make({ir::Barrier::make()});
        expect_invalid(kernel_of("m3", {buf("v", kind)},
                                 {ir::Match::make(ir::Load::make("v", ir::Space::Global, kind, lid),
                                                  {}, body)}),
                       {"barrier in divergent control flow", "match"});
    }
    SUBCASE("a field of a record other than the declared one (the same name, other fields)") {
        auto other =
            ir::Type::aggregate(ir::TypeDecl::make_record("Particle", {{"mass", Scalar::F32}}));
        ir::Kernel k;
        k.name = "f1";
        k.params = {buf("p", particle), buf("q", other)};
        k.body = ir::Block::make({});
        expect_error(px::ErrorCode::InvalidKernel, [&] { ir::collect_types(k); },
                     {"two different types are named 'Particle'"});
        k.types = {particle.decl_ptr()};
        expect_invalid(k, {"does not match the declaration"});
    }
    SUBCASE("a type the kernel does not declare") {
        ir::Kernel k = kernel_of("t1", {buf("p", particle)}, {});
        k.types.clear();
        expect_invalid(k, {"'Particle' is not declared"});
    }
    SUBCASE("a path that does not fit, and a value of the wrong type for its end") {
        expect_invalid(
            kernel_of("p1", {buf("p", particle)},
                      {ir::Store::make("p", ir::Space::Global, ir::Const::make_int(Scalar::I32, 0),
                                       ir::Const::make_float(Scalar::F32, 1), {0, 7})}),
            {"path into 'p'", "does not fit"});
        expect_invalid(
            kernel_of("p2", {buf("p", particle)},
                      {ir::Store::make("p", ir::Space::Global, ir::Const::make_int(Scalar::I32, 0),
                                       ir::Const::make_float(Scalar::F32, 1), {3})}),
            {"assignment of f32", "of bf16", "cast it"});
    }
    SUBCASE("an f32 stored into an f16 buffer") {
        expect_invalid(
            kernel_of("h1", {buf("h", Scalar::F16)},
                      {ir::Store::make("h", ir::Space::Global, ir::Const::make_int(Scalar::I32, 0),
                                       ir::Const::make_float(Scalar::F32, 1))}),
            {"assignment of f32", "of f16"});
    }
    SUBCASE("a barrier under a condition read from a private array (each work-item's own value)") {
        ir::Kernel k = kernel_of("pv", {}, {});
        k.privates.push_back({"mine", Scalar::I32, 4, {}, 0});
        ir::Expr first = ir::Load::make("mine", ir::Space::Private, Scalar::I32,
                                        ir::Const::make_int(Scalar::I32, 0));
        k.body = ir::Block::make({ir::If::make(
            ir::Binary::make(ir::BinaryOp::Gt, first, ir::Const::make_int(Scalar::I32, 0)),
            ir::Block::make({ir::Barrier::make()}))});
        expect_invalid(k, {"barrier in divergent control flow"});
    }
    SUBCASE("a shaped array whose count is not its shape") {
        ir::Kernel k = kernel_of("s1", {}, {});
        k.shared.push_back({"tile", Scalar::F32, 256, {16, 16}, 1});
        expect_invalid(k, {"holds 256 elements, its shape 272"});
    }
}

TEST_CASE("factories reject what no backend could run") {
    expect_error(px::ErrorCode::InvalidKernel,
                 [] { ir::TypeDecl::make_record("R", {{"flag", Scalar::Bool}}); },
                 {"record 'R', field 'flag'", "cannot live in memory"});
    expect_error(px::ErrorCode::InvalidKernel, [] { ir::Type::vector(Scalar::F32, 5); },
                 {"5 lanes"});
    ir::Expr v = ir::Var::make("v", ir::Type::vector(Scalar::F32, 4));
    expect_error(px::ErrorCode::InvalidKernel, [&] { ir::Binary::make(ir::BinaryOp::Lt, v, v); },
                 {"lt of f32x4"});
    expect_error(px::ErrorCode::InvalidKernel, [&] { ir::Swizzle::make(v, {4}); },
                 {"lane 4 of f32x4"});
    expect_error(px::ErrorCode::InvalidKernel,
                 [&] {
                     ir::Atomic::make(ir::AtomicOp::Add, "p", ir::Space::Private, Scalar::I32,
                                      ir::Const::make_int(Scalar::I32, 0),
                                      ir::Const::make_int(Scalar::I32, 1));
                 },
                 {"private array 'p'"});
    ir::Type kind = px::type_of<Kind>();
    expect_error(px::ErrorCode::InvalidKernel, [&] { ir::MakeVariant::make(kind, 1, nullptr); },
                 {"case 'charged'", "needs a payload of f32"});
    expect_error(px::ErrorCode::InvalidKernel,
                 [&] { ir::MakeVariant::make(kind, 0, ir::Const::make_float(Scalar::F32, 1)); },
                 {"case 'free'", "has no payload"});
}

TEST_CASE("the kernel language widens exactly, broadcasts scalars, and refuses narrowing without "
          "px::cast") {
    static const auto k = px::kernel("widen", {"a", "b", "o"},
                                     [](px::In<int8_t> a, px::In<int64_t> b, px::Out<int64_t> o) {
                                         px::Int i = px::global_id(0);
                                         o[i] = a[i] + b[i]; // i8 widens to i64
                                     });
    std::string text = ir::print(k.ir());
    CHECK(text.find("i64(a[") != std::string::npos);
    expect_error(
        px::ErrorCode::InvalidKernel,
        [] { px::kernel("narrow", {"o"}, [](px::Out<px::half> o) { o[0] = px::Float(1.5f); }); },
        {"kernel 'narrow'", "converts f32 to f16", "px::cast"});
    expect_error(px::ErrorCode::InvalidKernel,
                 [] {
                     px::kernel("narrow_int", {"o"}, [](px::Out<int8_t> o) {
                         px::Int x = 3;
                         o[0] = x;
                     });
                 },
                 {"kernel 'narrow_int'", "converts i32 to i8"});
    static const auto v =
        px::kernel("scale", {"a", "o", "s"},
                   [](px::In<px::Vec<float, 4>> a, px::Out<px::Vec<float, 4>> o, px::Float s) {
                       px::Int i = px::global_id(0);
                       o[i] = a[i] * s + 1.0f;
                   });
    CHECK(ir::print(v.ir()).find("f32x4(s)") != std::string::npos);
}

TEST_CASE("the kernel language refuses an atomic the catalog lacks, naming the kernel, the array "
          "and the types it has") {
    expect_error(px::ErrorCode::InvalidKernel,
                 [] {
                     px::kernel("float_and", {"bits"},
                                [](px::InOut<float> bits) { px::atomic_and(bits[0], 1.0f); });
                 },
                 {"kernel 'float_and'", "px::atomic_and on 'bits', an array of f32",
                  "atomic and exists on i32, u32, i64, u64 only"});
    expect_error(px::ErrorCode::InvalidKernel,
                 [] {
                     px::kernel("half_max", [](px::InOut<px::half>) {
                         auto sh = px::shared<px::half>(4);
                         px::atomic_max(sh[0], px::half(1.0f));
                     });
                 },
                 {"kernel 'half_max'", "px::atomic_max on 'shared", "an array of f16",
                  "atomic max exists on i32, u32, i64, u64, f32, f64 only"});
    expect_error(px::ErrorCode::InvalidKernel,
                 [] {
                     px::kernel("double_exchange", {"d"},
                                [](px::InOut<double> d) { px::atomic_exchange(d[0], 2.0); });
                 },
                 {"kernel 'double_exchange'", "px::atomic_exchange on 'd', an array of f64",
                  "atomic xchg exists on i32, u32, i64, u64 only"});
    // The float atomics the catalog has trace.
    static const auto ok =
        px::kernel("float_atomics", {"f", "d"}, [](px::InOut<float> f, px::InOut<double> d) {
            px::atomic_min(f[0], 1.0f);
            px::atomic_max(f[1], 2.0f);
            d[0] =
                px::atomic_add(d[1], 0.5) + px::atomic_min(d[2], 1.0) + px::atomic_max(d[3], 1.0);
        });
    const std::string text = ir::print(ok.ir());
    for (const char* name :
         {"atomic_min_f32_global", "atomic_max_f32_global", "atomic_add_f64_global",
          "atomic_min_f64_global", "atomic_max_f64_global"})
        CHECK_MESSAGE(text.find(name) != std::string::npos, name);
}

TEST_CASE("a kernel that plexus-ir/1 can express is written as plexus-ir/1; a declared work-group "
          "size is /2") {
    static const auto plain =
        px::kernel("plain", {"o"}, [](px::Out<float> o) { o[px::global_id(0)] = 1.0f; });
    std::string text = ir::to_json(plain.ir());
    CHECK(text.find("\"plexus-ir/1\"") != std::string::npos);
    CHECK(text.find("\"types\"") == std::string::npos);
    CHECK_FALSE(ir::needs_ir_v2(plain.ir()));
    static const auto bounded = px::kernel("bounded", {"o"}, [](px::Out<float> o) {
        px::require_work_group_size(16, 4);
        px::max_work_group_size(64);
        px::min_groups_per_unit(3);
        o[px::global_id(0)] = 1.0f;
    });
    CHECK(ir::needs_ir_v2(bounded.ir()));
    ir::Kernel back = ir::from_json(ir::to_json(bounded.ir()));
    CHECK(back.work_group.required == std::array<uint32_t, 3>{16, 4, 1});
    CHECK(back.work_group.max == 64);
    CHECK(back.work_group.min_groups == 3);
    CHECK(back.hash() == bounded.ir().hash());
    expect_error(px::ErrorCode::InvalidKernel,
                 [] {
                     px::kernel("groups_alone", [](px::Out<float> o) {
                         px::min_groups_per_unit(2);
                         o[0] = 1.0f;
                     });
                 },
                 {"kernel 'groups_alone'", "min_groups 2 without a declared work-group size"});
    expect_error(px::ErrorCode::InvalidKernel,
                 [] {
                     px::kernel("twice", [](px::Out<float>) {
                         px::require_work_group_size(16);
                         px::require_work_group_size(8);
                     });
                 },
                 {"kernel 'twice'", "given twice"});
    ir::Kernel k = bounded.ir();
    k.work_group.max = 32;
    expect_invalid(k, {"required work-group of 64 work-items above its own maximum of 32"});
    k = bounded.ir();
    k.work_group.min_groups = 33;
    expect_invalid(k, {"min_groups 33 is above 32"});
}
