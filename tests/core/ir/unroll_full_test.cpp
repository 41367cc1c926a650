// ir::unroll_full_loops (core/src/ir/rewrite.hpp), the host backend's first step with loop
// hints: each loop hinted unroll_full with constant bounds becomes one copy of its body per
// trip, its variable the trip's constant and the variables its body declares renamed; every
// other loop stays, with its hint. What the copies compute is checked on every backend by
// tests/core/kernel/loops (native runs this rewrite); here, the shape of the result.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include "ir/rewrite.hpp"
#include "plexus/kernel.hpp"
#include "plexus/matrix.hpp"

#include <set>
#include <string>
#include <vector>

namespace px = plexus;
namespace ir = plexus::ir;

namespace {

void walk(const ir::Stmt& s, std::vector<const ir::For*>& fors, std::vector<std::string>& lets) {
    if (!s) return;
    if (auto f = ir::as<ir::For>(s)) fors.push_back(f);
    if (auto l = ir::as<ir::Let>(s)) lets.push_back(l->name);
    ir::for_each_part(*s, [](const ir::Expr&) {}, [&](const ir::Stmt& c) { walk(c, fors, lets); });
}

// out[g] = sum over i in [0, 3), j in [0, 4) step 2 of a[(g + i * j + t) % n] for t in
// [0, min(i + 1, n)): two full loops, one inside the other, a variable declared in each body
// and a loop with a run-time bound (hinted unroll(2)) inside.
px::Kernel<px::In<float>, px::Out<float>, px::Int> nested() {
    return px::kernel(
        "nested", {"a", "out", "n"}, [](px::In<float> a, px::Out<float> out, px::Int n) {
            px::Int g = px::global_id(0);
            px::Float s = 0.0f;
            px::For(
                0, 3,
                [&](px::Int i) {
                    px::Int base = g + i;
                    px::For(
                        0, 4, 2,
                        [&](px::Int j) {
                            px::Int first = base + i * j;
                            px::For(
                                0, px::min(i + 1, n), [&](px::Int t) { s += a[(first + t) % n]; },
                                px::unroll(2u));
                        },
                        px::unroll_full());
                },
                px::unroll_full());
            out[g] = s;
        });
}

} // namespace

TEST_CASE("full loops are written out, each copy's variables renamed; other loops stay") {
    const auto k = nested();
    const ir::Kernel out = ir::unroll_full_loops(k.ir());
    ir::validate(out); // every name declared before use, none declared twice where visible
    std::vector<const ir::For*> fors;
    std::vector<std::string> lets;
    walk(out.body, fors, lets);
    // 3 copies of the outer body, each with 2 copies of the inner one, each holding the
    // run-time loop with its hint.
    REQUIRE(fors.size() == 6);
    std::set<std::string> vars;
    for (const ir::For* f : fors) {
        CHECK(f->unroll == 2);
        vars.insert(f->var);
    }
    CHECK(vars.size() == 6); // each copy's loop variable is its own
    // g and s, then per outer copy `base` and per inner copy `first`: 2 + 3 + 6, all distinct.
    CHECK(lets.size() == 11);
    CHECK(std::set<std::string>(lets.begin(), lets.end()).size() == lets.size());
    // The written-out loops' variables are gone: only constants stand for them.
    std::vector<const ir::For*> before;
    std::vector<std::string> unused;
    walk(k.ir().body, before, unused);
    REQUIRE(before.size() == 3);
    const std::string text = ir::print(out);
    for (const ir::For* f : {before[0], before[1]})
        CHECK(text.find(f->var + " ") == std::string::npos);
}

TEST_CASE("a kernel without full loops comes back as it was") {
    const auto k = px::kernel("rolled", {"a", "n"}, [](px::Out<float> a, px::Int n) {
        px::For(0, n, [&](px::Int i) { a[i] = 1.0f; }, px::unroll(4u));
        px::For(0, 8, [&](px::Int i) { a[i] = 2.0f; }, px::no_unroll());
    });
    const ir::Kernel out = ir::unroll_full_loops(k.ir());
    CHECK(ir::print(out) == ir::print(k.ir()));
    CHECK(out.hash() == k.ir().hash());
}

// ir::matrix_loops_unhinted: a full loop around matrix operations loses its hint (the host
// keeps it a loop), a full loop without them keeps it.
TEST_CASE("a full loop around matrix operations loses its hint; others keep theirs") {
    const auto k = px::kernel("mma_steps", {"a", "c"}, [](px::In<px::half> a, px::Out<float> c) {
        auto as = px::shared<px::half>(16, 32);
        px::For(0, 512, [&](px::Int e) { as[e / 32][e % 32] = a[e]; });
        px::barrier();
        px::Fragment<float, 16, 16, 16, px::Accumulator> acc;
        px::fill_fragment(acc, 0.0f);
        px::Fragment<px::half, 16, 16, 16, px::MatrixA> fa;
        px::Fragment<px::half, 16, 16, 16, px::MatrixB> fb;
        px::For(
            0, 2,
            [&](px::Int step) {
                px::load_fragment(fa, as, 0, step * 16);
                px::load_fragment(fb, as, 0, step * 16);
                px::mma(acc, fa, fb);
            },
            px::unroll_full());
        px::Float s = 0.0f;
        px::For(0, 4, [&](px::Int i) { s += a[i]; }, px::unroll_full());
        c[0] = s;
        px::store_fragment(acc, c, 0, 16);
    });
    const ir::Kernel out = ir::matrix_loops_unhinted(k.ir());
    std::vector<const ir::For*> fors;
    std::vector<std::string> lets;
    walk(out.body, fors, lets);
    std::vector<uint32_t> hints;
    for (const ir::For* f : fors)
        hints.push_back(f->unroll);
    CHECK(hints == std::vector<uint32_t>{0, 0, ir::For::unroll_full});
}
