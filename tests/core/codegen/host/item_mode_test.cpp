// Regions run one work-item at a time (host::per_item_region): which regions the rule picks
// from how their indices move between the lanes of a chunk, where their per-item variables
// live (records), and kernels that use them checked against a host reference, bit for bit, at
// 512, 256 and 128 bits and with group-local memory from the heap.
#include "host_test.hpp"

#include <cmath>

using namespace host_test;
using plexus::codegen::host::NameForm;
using plexus::codegen::host::per_item_region;

namespace {

std::string indexed(const char* prefix, int i) {
    std::string s = prefix;
    s += std::to_string(i);
    return s;
}

Expr x() {
    return cast(Scalar::I32, lid());
}

// The classification of a region of `stmts` for chunks of `lanes`; `tx` is a name declared
// outside the region as `local_id_x % 16` (Storage::Recompute), `n` a scalar parameter.
bool per_item(std::vector<Stmt> stmts, unsigned lanes, unsigned full_rate_lanes = 0) {
    std::vector<const Stmt*> region;
    for (auto& s : stmts)
        region.push_back(&s);
    const Expr tx_init = bin(BinaryOp::Rem, x(), ci(16));
    return per_item_region(
        region, lanes,
        [&](const std::string& name) {
            if (name == "tx") return NameForm{NameForm::Defined, tx_init};
            if (name == "n") return NameForm{NameForm::Uniform, nullptr};
            return NameForm{};
        },
        full_rate_lanes);
}

// Four stores out[base * 4 + j]: a quad of the work-item's own.
std::vector<Stmt> quad_stores(const Expr& base) {
    std::vector<Stmt> out;
    for (int j = 0; j < 4; ++j)
        out.push_back(store("out", add(mul(base, ci(4)), ci(j)), cf(1.0)));
    return out;
}

} // namespace

TEST_CASE(
    "per_item_region: a work-item's own quads run per work-item where they fill half a vector") {
    // Quads 4 apart between neighbouring work-items: half an AVX2 vector (W = 8), a whole SSE
    // or NEON one (W = 4), a quarter of an AVX-512 one (W = 16: chunks stay).
    CHECK(per_item(quad_stores(x()), 8));
    CHECK(per_item(quad_stores(x()), 4));
    CHECK_FALSE(per_item(quad_stores(x()), 16));
    // Zen 4: W = 16, but 512-bit operations cost two of 256 bits: the quad is half of a vector
    // of the full rate's 8 lanes.
    CHECK(per_item(quad_stores(x()), 16, 8));
    CHECK_FALSE(per_item(quad_stores(x()), 0)); // no vector width known
    // Through a name declared outside the region, and through a Let of the region.
    CHECK(per_item(quad_stores(var("tx")), 8));
    std::vector<Stmt> with_let = {let("c", add(var("tx"), var("n")))};
    for (auto& s : quad_stores(var("c")))
        with_let.push_back(s);
    CHECK(per_item(with_let, 8));
    // x % 16 is the lane plus a multiple of 8 only for an x whose chunk starts at a multiple of
    // 8; (x + 1) % 16 is not: no known pattern, so nothing counts for running per work-item.
    CHECK_FALSE(per_item(quad_stores(bin(BinaryOp::Rem, add(x(), ci(1)), ci(16))), 8));
    // x / 16 is the same in every lane of a chunk: uniform, no reason to leave the chunks.
    CHECK_FALSE(per_item(quad_stores(bin(BinaryOp::Div, x(), ci(16))), 8));
    // Consecutive elements in consecutive lanes as often as quads: chunks stay.
    std::vector<Stmt> mixed = quad_stores(x());
    for (int j = 0; j < 4; ++j)
        mixed.push_back(store("out", add(gid(), ci(1000 * j)), cf(2.0)));
    CHECK_FALSE(per_item(mixed, 8));
    mixed.pop_back();
    CHECK(per_item(mixed, 8));
    // A region holding a loop stays with the chunks (lock step or LoopVectorize).
    CHECK_FALSE(per_item({for_("i", ci(0), ci(4), ci(1), block(quad_stores(x())))}, 8));
}

namespace {

constexpr int L = 64, Q = 4; // work-items per group, accumulators per work-item

// Each work-item keeps Q accumulators across barriers. Per step t: the work-item writes its
// quad of the step's input to shared memory (s[lid * 4 + j]), then after a barrier adds the
// product of its quad and the quad of the work-item at the other end of the group into its
// accumulators. The quads are 4 apart between neighbouring work-items: the regions run per
// work-item at 256 and 128 bits, in chunks at 512.
ir::Kernel quad_kernel() {
    Scalar F = Scalar::F32;
    auto I = [](const char* n) { return var(n); };
    std::vector<Stmt> body;
    for (int j = 0; j < Q; ++j)
        body.push_back(let(indexed("acc", j), cf(0.0)));
    std::vector<Stmt> step;
    for (int j = 0; j < Q; ++j)
        step.push_back(
            lstore("s", add(mul(cast(Scalar::I32, lid()), ci(Q)), ci(j)),
                   load("in", F, add(mul(add(mul(I("t"), I("total")), gid()), ci(Q)), ci(j)))));
    step.push_back(barrier());
    for (int j = 0; j < Q; ++j)
        step.push_back(assign(
            indexed("acc", j),
            call("fma_f32",
                 {lload("s", F, add(mul(cast(Scalar::I32, lid()), ci(Q)), ci(j))),
                  lload("s", F, add(mul(sub(ci(L - 1), cast(Scalar::I32, lid())), ci(Q)), ci(j))),
                  var(indexed("acc", j), F)})));
    step.push_back(barrier());
    body.push_back(for_("t", ci(0), I("steps"), ci(1), block(step)));
    for (int j = 0; j < Q; ++j)
        body.push_back(store("out", add(mul(gid(), ci(Q)), ci(j)), var(indexed("acc", j), F)));
    ir::Kernel k = kernel("quads",
                          {buf("in", F), buf("out", F, ir::Access::Write),
                           scalar("steps", Scalar::I32), scalar("total", Scalar::I32)},
                          body, {{"s", F, L * Q}});
    k.work_group.required = {L, 1, 1};
    return k;
}

} // namespace

TEST_CASE("regions run per work-item: their accumulators in records, the results bit for bit") {
    const ir::Kernel k = quad_kernel();
    // For chunks of 8: every region touching the accumulators runs per work-item and the
    // accumulators sit side by side in the work-item's record; local memory holds the shared
    // array, the (empty) per-item arrays and one record per work-item.
    const auto layout = plexus::codegen::host::analyze(k, 8);
    REQUIRE(layout.item_region.size() ==
            4); // the Lets, the stores to s, the FMAs, the stores to out
    CHECK(layout.item_region[1]);
    CHECK(layout.item_region[2]);
    CHECK(layout.item_region[3]);
    CHECK(layout.record_bytes == 16);
    for (size_t d = 0; d < layout.decls.size(); ++d)
        if (layout.decls[d] == plexus::codegen::host::Storage::PerItem) CHECK(layout.in_record[d]);
    CHECK(layout.local_bytes(L) == layout.shared_bytes + L * 16);
    // For chunks of 16 (AVX-512) the same kernel keeps the chunks and arrays per variable,
    // unless the CPU computes only 8 lanes at full rate (Zen 4): then as for 8.
    const auto wide = plexus::codegen::host::analyze(k, 16);
    for (bool r : wide.item_region)
        CHECK_FALSE(r);
    CHECK(wide.record_bytes == 0);
    const auto zen4 = plexus::codegen::host::analyze(k, 16, 8);
    CHECK(zen4.item_region == layout.item_region);
    CHECK(zen4.record_bytes == 16);

    const int groups = 5, steps = 7, total = groups * L;
    auto in = random_vec<float>(size_t(steps * total * Q), -1.f, 1.f);
    std::vector<float> want(size_t(total * Q));
    for (int g = 0; g < groups; ++g)
        for (int l = 0; l < L; ++l)
            for (int j = 0; j < Q; ++j) {
                float acc = 0;
                for (int t = 0; t < steps; ++t) {
                    auto x = [&](int item) {
                        return in[size_t(((t * total) + g * L + item) * Q + j)];
                    };
                    acc = std::fma(x(l), x(L - 1 - l), acc);
                }
                want[size_t((g * L + l) * Q + j)] = acc;
            }
    for (const std::string& features : feature_sets())
        for (LocalMem mem : {LocalMem::AsTheRuleSays, LocalMem::None}) {
            CAPTURE(features);
            CAPTURE(mem == LocalMem::None);
            const plexus::codegen::Options o = native_options(features);
            auto hk = plexus::codegen::host::compile_with_features(k, o, {});
            std::vector<float> out(size_t(total * Q), NAN);
            int32_t s = steps, n = total;
            run(*hk, k, {in.data(), out.data(), &s, &n}, grid1(uint64_t(total), L), mem);
            int bad = 0;
            for (size_t i = 0; i < out.size(); ++i)
                bad += std::memcmp(&out[i], &want[i], sizeof(float)) != 0;
            CHECK(bad == 0);
        }
}
