// Loop unroll hints (ir::For::unroll) in the IR: what px::For's forms record, the JSON schema
// plexus-ir/2.1 (written only for a kernel with a hint and read back with it; an `unroll` in a
// /1 or /2 document refused with its path, which still read without one), print(), hash(),
// without_loop_hints (what a Custom plugin gets) and the IR rewrites, which keep the hint.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include "plexus/async_copy.hpp"
#include "plexus/error.hpp"
#include "plexus/ir.hpp"
#include "plexus/kernel.hpp"

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace px = plexus;
namespace ir = plexus::ir;
using json = nlohmann::json;

namespace {

constexpr uint32_t kFull = ir::For::unroll_full;

// Every For of a statement, outermost first, in program order.
void loops(const ir::Stmt& s, std::vector<const ir::For*>& out) {
    if (!s) return;
    if (auto f = ir::as<ir::For>(s)) out.push_back(f);
    ir::for_each_part(*s, [](const ir::Expr&) {}, [&](const ir::Stmt& c) { loops(c, out); });
}
std::vector<uint32_t> hints(const ir::Kernel& k) {
    std::vector<const ir::For*> found;
    loops(k.body, found);
    std::vector<uint32_t> out;
    for (const ir::For* f : found)
        out.push_back(f->unroll);
    return out;
}

// Sums a[0 .. n) with each form of px::For; `hinted` false traces the same loops without
// hints (the kernel is otherwise the same, names included: the tracer counts alike).
px::Kernel<px::In<float>, px::Out<float>, px::Int> forms(bool hinted, uint32_t count = 4) {
    return px::kernel("forms", {"a", "out", "n"},
                      [hinted, count](px::In<float> a, px::Out<float> out, px::Int n) {
                          px::Float s = 0.0f;
                          auto add = [&](px::Int j) { s += a[j]; };
                          px::For(0, n, add);
                          px::For(0, n, 2, add);
                          if (hinted) {
                              px::For(0, n, add, px::unroll(count));
                              px::For(0, 16, 2, add, px::unroll_full());
                              px::For(
                                  0, n, [&](px::Int j) { px::For(j, n, 3, add, px::no_unroll()); },
                                  px::unroll(2u));
                          } else {
                              px::For(0, n, add);
                              px::For(0, 16, 2, add);
                              px::For(0, n, [&](px::Int j) { px::For(j, n, 3, add); });
                          }
                          out[px::global_id(0)] = s;
                      });
}

template <class F> px::Error expect_error(px::ErrorCode code, F&& f) {
    try {
        f();
    } catch (const px::Error& e) {
        INFO("message: " << e.what());
        CHECK(e.code() == code);
        return e;
    }
    FAIL("no plexus::Error was thrown");
    return px::Error(px::ErrorCode::Internal, "unreachable");
}
// Reading `doc` must fail at `path` with every fragment in the message.
void expect_json_error(const json& doc, const std::string& path,
                       std::initializer_list<std::string> fragments) {
    px::Error e =
        expect_error(px::ErrorCode::InvalidIR, [&] { ir::from_json(doc.dump(), "k.json"); });
    CHECK(e.context().json_path == path);
    for (const std::string& f : fragments)
        CHECK_MESSAGE(e.message().find(f) != std::string::npos, "missing: " << f);
}

} // namespace

TEST_CASE("px::For records each hint on its own loop; the forms without a hint record none") {
    const auto k = forms(true);
    CHECK(hints(k.ir()) == std::vector<uint32_t>{0, 0, 4, kFull, 2, 1});
    CHECK(ir::has_loop_hints(k.ir()));
    const auto plain = forms(false);
    CHECK(hints(plain.ir()) == std::vector<uint32_t>(6, 0));
    CHECK_FALSE(ir::has_loop_hints(plain.ir()));
    // The largest count is accepted.
    CHECK(hints(forms(true, ir::For::max_unroll).ir())[2] == ir::For::max_unroll);
}

TEST_CASE("a kernel with a hint is written as plexus-ir/2.1 and reads back with it") {
    const auto traced = forms(true);
    const ir::Kernel& k = traced.ir();
    const std::string text = ir::to_json(k);
    INFO(text);
    const json doc = json::parse(text);
    CHECK(doc["schema"] == "plexus-ir/2.1");
    // /2's keys, which a /1 document lacks, are written too.
    CHECK(doc.contains("types"));
    CHECK(doc.contains("private"));
    const json& body = doc["body"]["body"];
    CHECK_FALSE(body[1].contains("unroll")); // For(0, n, add)
    CHECK_FALSE(body[2].contains("unroll")); // For(0, n, 2, add)
    CHECK(body[3]["unroll"] == 4);
    CHECK(body[4]["unroll"] == "full");
    CHECK(body[5]["unroll"] == 2);
    CHECK(body[5]["body"]["body"][0]["unroll"] == 1);

    const ir::Kernel back = ir::from_json(text, "forms.json");
    CHECK(hints(back) == hints(k));
    CHECK(ir::to_json(back) == text);
    CHECK(ir::print(back) == ir::print(k));
    CHECK(back.hash() == k.hash());
    CHECK_NOTHROW(ir::validate(back));

    // Without a hint the same kernel is the oldest schema that holds it.
    CHECK(json::parse(ir::to_json(forms(false).ir()))["schema"] == "plexus-ir/1");
}

TEST_CASE("an unroll key in a plexus-ir/2 or /1 document is refused with its path; without one "
          "they still read") {
    const auto traced = forms(true);
    const ir::Kernel& k = traced.ir();
    const json doc = json::parse(ir::to_json(k));
    json v2 = doc;
    v2["schema"] = "plexus-ir/2";
    expect_json_error(v2, "body.body[3].unroll", {"plexus-ir/2.1", "plexus-ir/2"});
    json v1 = doc;
    v1["schema"] = "plexus-ir/1";
    v1.erase("types");
    v1.erase("private");
    expect_json_error(v1, "body.body[3].unroll", {"plexus-ir/2.1", "plexus-ir/1"});

    // The same documents without hints: what a reader of /2 (or /1) was always given.
    const std::function<void(json&)> strip = [&](json& j) {
        if (!j.is_structured()) return;
        if (j.is_object()) j.erase("unroll");
        for (auto& [key, value] : j.items())
            strip(value);
    };
    for (json* old : {&v2, &v1}) {
        strip(*old);
        const ir::Kernel back = ir::from_json(old->dump());
        CHECK_FALSE(ir::has_loop_hints(back));
        CHECK(ir::canonical_json(back) == ir::canonical_json(ir::without_loop_hints(k)));
    }

    // What an unroll may hold: a count from 1 to max_unroll, or "full".
    for (const json& bad :
         {json(0), json(ir::For::max_unroll + 1), json(-2), json(2.5), json("fast"), json(true)}) {
        INFO("unroll " << bad.dump());
        json d = doc;
        d["body"]["body"][3]["unroll"] = bad;
        expect_json_error(d, "body.body[3].unroll", {"expected an unroll count from 1 to 1024"});
    }
}

TEST_CASE("print shows the hint on the for line") {
    const std::string text = ir::print(forms(true).ir());
    INFO(text);
    CHECK(text.find(" += 1) {") != std::string::npos); // For(0, n, add)
    CHECK(text.find(" += 2) {") != std::string::npos); // For(0, n, 2, add)
    CHECK(text.find(" += 1) unroll(4) {") != std::string::npos);
    CHECK(text.find(" < 16; ") != std::string::npos);
    CHECK(text.find(" += 2) unroll_full {") != std::string::npos);
    CHECK(text.find(" += 1) unroll(2) {") != std::string::npos);
    CHECK(text.find(" += 3) no_unroll {") != std::string::npos);
}

TEST_CASE("kernels that differ only in a hint have different hashes (and so cache keys)") {
    const uint64_t plain = forms(false).ir().hash(), by4 = forms(true, 4).ir().hash(),
                   by8 = forms(true, 8).ir().hash();
    CHECK(plain != by4);
    CHECK(by4 != by8);
    CHECK(plain != by8);
    CHECK(forms(true, 4).ir().hash() == by4);
}

TEST_CASE("without_loop_hints drops every hint, nested ones too, and nothing else") {
    const auto traced = forms(true);
    const ir::Kernel& k = traced.ir();
    const ir::Kernel plain = ir::without_loop_hints(k);
    CHECK(hints(plain) == std::vector<uint32_t>(6, 0));
    CHECK(ir::canonical_json(plain) == ir::canonical_json(forms(false).ir()));
    CHECK(json::parse(ir::to_json(plain))["schema"] == "plexus-ir/1");
    // The kernel it was given keeps its hints.
    CHECK(hints(k) == std::vector<uint32_t>{0, 0, 4, kFull, 2, 1});
}

TEST_CASE("the IR rewrites keep the hint of the loops they copy") {
    // lower_async_copy rebuilds the loop around the copy it replaces (rewrite.cpp).
    const auto k = px::kernel("copies", {"a", "out"}, [](px::In<float> a, px::Out<float> out) {
        auto tile = px::shared<float>(64);
        px::Int lid = px::local_id(0);
        px::For(
            0, 4,
            [&](px::Int j) {
                px::copy_async<4>(tile, lid * 4, a, (j * 64 + lid) * 4, 4);
                px::copy_async_commit();
                px::copy_async_wait(0);
            },
            px::unroll(3));
        px::barrier();
        out[px::global_id(0)] = tile[lid];
    });
    const ir::Kernel lowered = ir::lower_async_copy(k.ir());
    CHECK(lowered.body != k.ir().body); // rewritten
    CHECK(hints(lowered) == std::vector<uint32_t>{3});
    CHECK(ir::print(lowered).find("unroll(3) {") != std::string::npos);
}
