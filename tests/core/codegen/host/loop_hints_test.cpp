// Loop unroll hints in the host code: each For's hint is the !llvm.loop of the branch that
// closes its loop, a distinct self-referential loop ID holding llvm.loop.unroll.count N or
// .disable (a full loop is written out before, ir::unroll_full_loops), wherever the For becomes an
// LLVM loop: a work-item's own loop (LlvmLowering::for_stmt, work-item by work-item and as scalar
// control of a lock-stepped chunk), a loop whose bounds differ per work-item run in lock step
// (lockstep_loop) and a loop holding barriers (group control). Read from the LLVM IR as lowered,
// before LLVM's passes consume the hints; the results are the every-backend test's
// (tests/core/kernel/loops).
#include "host_test.hpp"

#include <map>
#include <regex>
#include <set>
#include <utility>

using namespace host_test;

namespace {

constexpr uint32_t kFull = ir::For::unroll_full;

Stmt for_hint(const std::string& v, Expr b, Expr e, Expr s, Stmt body, uint32_t unroll) {
    return ir::For::make(v, std::move(b), std::move(e), std::move(s), std::move(body), unroll);
}
Stmt add_to_acc(Expr x) {
    return assign("acc", add(var("acc", Scalar::F32), std::move(x)));
}
Expr in_at(Expr i) {
    return load("in", Scalar::F32, bin(BinaryOp::Rem, std::move(i), ci(64)));
}

// One loop of each kind, `hinted` or not:
//   for t in [0, 3) unroll(5): { barrier; out[g] += in[t] }    group control
//   for j in [0, n) unroll(4): acc += in[g + j]                  uniform bounds
//   for q in [0, 8) step 2 unroll_full: acc += in[q]
//   for r in [0, 4) no_unroll: acc += in[r]
//   for s in [g % 3, n) unroll(3): acc += in[s]                  per work-item: lock step
//   for u in [0, n) step g % 2 + 1 unroll(6): acc += in[u]       its step too
ir::Kernel hinted_loops(bool hinted) {
    auto h = [&](uint32_t u) { return hinted ? u : 0; };
    Expr g = var("g"), n = var("n");
    Stmt group = for_hint(
        "t", ci(0), ci(3), ci(1),
        block({barrier(), store("out", g, add(load("out", Scalar::F32, g), in_at(var("t"))))}),
        h(5));
    return kernel(
        "hinted_loops",
        {buf("in", Scalar::F32), buf("out", Scalar::F32, ir::Access::ReadWrite),
         scalar("n", Scalar::I32)},
        {let("g", gid()), let("acc", cf(0.0)),
         for_hint("j", ci(0), n, ci(1), block({add_to_acc(in_at(add(g, var("j"))))}), h(4)),
         for_hint("q", ci(0), ci(8), ci(2), block({add_to_acc(in_at(var("q")))}), h(kFull)),
         for_hint("r", ci(0), ci(4), ci(1), block({add_to_acc(in_at(var("r")))}), h(1)),
         for_hint("s", bin(BinaryOp::Rem, g, ci(3)), n, ci(1), block({add_to_acc(in_at(var("s")))}),
                  h(3)),
         for_hint("u", ci(0), n, add(bin(BinaryOp::Rem, g, ci(2)), ci(1)),
                  block({add_to_acc(in_at(var("u")))}), h(6)),
         store("out", g, var("acc", Scalar::F32)), group});
}

// The unroll hint of each loop ID that closes a loop whose header is named `header` (LLVM
// numbers repeated names: for.head, for.head12): "count N", "full", "disable", or "" when the
// ID has no unroll hint; a loop ID that is not distinct and self-referential is reported as
// "malformed".
std::multiset<std::string> hints_of(const std::string& module, const std::string& header) {
    std::map<std::string, std::string> nodes; // "!12" -> its operands' text
    const std::regex node(R"((![0-9]+) = (distinct )?!\{(.*)\})");
    for (std::sregex_iterator it(module.begin(), module.end(), node), end; it != end; ++it)
        nodes[(*it)[1]] = std::string((*it)[2].matched ? "distinct " : "") + (*it)[3].str();
    std::multiset<std::string> out;
    const std::regex branch("br label %" + header + R"([0-9]*, !llvm\.loop (![0-9]+))");
    for (std::sregex_iterator it(module.begin(), module.end(), branch), end; it != end; ++it) {
        const std::string id = (*it)[1];
        const std::string& ops = nodes[id];
        if (ops.rfind("distinct " + id + ", ", 0) != 0 && ops != "distinct " + id) {
            out.insert("malformed");
            continue;
        }
        std::string hint;
        const std::regex operand("![0-9]+");
        for (std::sregex_iterator o(ops.begin(), ops.end(), operand), oe; o != oe; ++o) {
            const std::string& text = nodes[o->str()];
            std::smatch m;
            if (std::regex_match(text, m,
                                 std::regex(R"(!"llvm\.loop\.unroll\.count", i32 ([0-9]+))")))
                hint = "count " + m[1].str();
            else if (text == R"(!"llvm.loop.unroll.full")")
                hint = "full";
            else if (text == R"(!"llvm.loop.unroll.disable")")
                hint = "disable";
        }
        out.insert(hint);
    }
    return out;
}

} // namespace

TEST_CASE("host code: each For's hint is the loop metadata of its back edge, in every lowering") {
    for (const std::string& features : feature_sets()) {
        INFO("features '" << features << "'");
        const plexus::codegen::Options o = native_options(features);
        const std::string lowered = plexus::codegen::host_llvm_ir(hinted_loops(true), o, false);
        const std::multiset<std::string> fors = hints_of(lowered, "for\\.head");
        INFO(lowered);
        // A region is lowered twice when it runs in chunks (the chunks and the rest), so each
        // For appears once or more; every loop ID is well formed and every hint is there.
        CHECK(fors.count("malformed") == 0);
        CHECK(fors.count("count 5") >= 1); // group control
        for (const char* hint : {"count 4", "disable"})
            CHECK_MESSAGE(fors.count(hint) >= 1, hint);
        // The host writes a full loop out in the IR, before its own passes
        // (ir::unroll_full_loops): no loop of it is left for LLVM to unroll.
        CHECK(fors.count("full") == 0);
        if (plexus::codegen::host::vector_bits(o) >= 64) {
            // The loops whose bounds differ per work-item run in lock step in the chunks ...
            const std::multiset<std::string> lockstep = hints_of(lowered, "lockstep\\.head");
            CHECK(lockstep.count("count 3") == 1);
            CHECK(lockstep.count("count 6") == 1);
            CHECK(lockstep.size() == 2);
        }
        // ... and as plain loops for the work-items one at a time.
        CHECK(fors.count("count 3") >= 1);
        CHECK(fors.count("count 6") >= 1);

        // Without hints no loop of the kernel carries one.
        const std::string plain = plexus::codegen::host_llvm_ir(hinted_loops(false), o, false);
        CHECK(hints_of(plain, "(for|lockstep)\\.head").empty());
        CHECK(plain.find("llvm.loop.unroll.count") == std::string::npos);
        CHECK(plain.find("llvm.loop.unroll.full") == std::string::npos);
    }
}

TEST_CASE("host code: a hinted kernel computes what the kernel without hints does") {
    const std::vector<float> in = random_vec<float>(64, -4.0f, 4.0f);
    const int n = 13;
    const Grid g = grid1(100, 16);
    std::vector<std::vector<float>> outs;
    for (bool hinted : {true, false}) {
        const ir::Kernel k = hinted_loops(hinted);
        auto hk = compile(k);
        std::vector<float> out(112, 1.0f);
        int n_arg = n;
        run(*hk, k, {const_cast<float*>(in.data()), out.data(), &n_arg}, g);
        outs.push_back(out);
    }
    CHECK(outs[0] == outs[1]);
}
