// host::schedule_by_output: a long run of Lets and Assigns computed in blocks of outputs. The
// kernel is an 8 x 8 outer-product micro-kernel written in p, i, j order (matmul_tiled's step),
// with a snapshot of one accumulator taken halfway (a read the reordering must keep in place
// against the writes around it). Checked: at most 16 accumulators are open at once in the
// scheduled IR (64 as written), and every output is bit for bit the same FMA chain as a host
// reference, at 512, 256 and 128 bits.
#include "host_test.hpp"

#include <cmath>
#include <map>

using namespace host_test;

namespace {

constexpr int T = 8, P = 4; // an 8 x 8 tile, four steps of k

// "<prefix><x>_<y>", appended piece by piece (GCC 12 warns falsely on `+` chains here).
std::string name(const char* prefix, int x, int y) {
    std::string s = prefix;
    s += std::to_string(x);
    s += '_';
    s += std::to_string(y);
    return s;
}
std::string acc(int i, int j) {
    return name("acc", i, j);
}

// out[g * 65 + i * 8 + j] = sum over p of a[g][p][i] * b[g][p][j] (FMAs in p order), and
// out[g * 65 + 64] = acc(0, 0) after p = 1.
ir::Kernel micro_kernel() {
    Scalar F = Scalar::F32;
    Expr g = gid();
    std::vector<Stmt> body = {let("g", g)};
    for (int i = 0; i < T; ++i)
        for (int j = 0; j < T; ++j)
            body.push_back(let(acc(i, j), cf(0.0)));
    for (int p = 0; p < P; ++p) {
        for (int i = 0; i < T; ++i)
            body.push_back(
                let(name("a", p, i), load("a", F, add(mul(var("g"), ci(P * T)), ci(p * T + i)))));
        for (int j = 0; j < T; ++j)
            body.push_back(
                let(name("b", p, j), load("b", F, add(mul(var("g"), ci(P * T)), ci(p * T + j)))));
        for (int i = 0; i < T; ++i)
            for (int j = 0; j < T; ++j)
                body.push_back(assign(
                    acc(i, j), call("fma_f32", {var(name("a", p, i), F), var(name("b", p, j), F),
                                                var(acc(i, j), F)})));
        if (p == 1) body.push_back(let("snap", var(acc(0, 0), F)));
    }
    for (int i = 0; i < T; ++i)
        for (int j = 0; j < T; ++j)
            body.push_back(
                store("out", add(mul(var("g"), ci(T * T + 1)), ci(i * T + j)), var(acc(i, j), F)));
    body.push_back(store("out", add(mul(var("g"), ci(T * T + 1)), ci(T * T)), var("snap", F)));
    return kernel(
        "micro",
        {buf("a", F), buf("b", F), buf("out", F, ir::Access::Write), scalar("n", Scalar::I32)},
        {if_(lt(gid(), var("n")), block(body))});
}

// The most accumulators between their first and last Assign at any point of `list` (the
// other Assigns there are loads computed again in a later block).
size_t most_open(const std::vector<Stmt>& list) {
    std::map<std::string, std::pair<size_t, size_t>> span;
    for (size_t k = 0; k < list.size(); ++k)
        if (auto* a = ir::as<ir::Assign>(list[k]); a && a->name.rfind("acc", 0) == 0) {
            auto [it, added] = span.emplace(a->name, std::make_pair(k, k));
            it->second.second = k;
        }
    size_t most = 0;
    for (size_t k = 0; k < list.size(); ++k) {
        size_t open = 0;
        for (auto& [name, s] : span)
            open += s.first <= k && k <= s.second;
        most = std::max(most, open);
    }
    return most;
}

} // namespace

TEST_CASE("schedule by output: an 8 x 8 micro-kernel in p, i, j order runs in blocks of half the "
          "vector registers, bit for bit") {
    const ir::Kernel k = micro_kernel();
    auto inner = [](const ir::Kernel& x) -> const std::vector<Stmt>& {
        auto& top = static_cast<const ir::Block&>(*x.body);
        return static_cast<const ir::Block&>(*static_cast<const ir::If&>(*top.body[0]).then_body)
            .body;
    };
    CHECK(most_open(inner(k)) == T * T);
    // 32 vector registers (AVX-512): blocks of 16, shared Lets read again in later blocks.
    const ir::Kernel scheduled = plexus::codegen::host::schedule_by_output(k, 32, 0);
    CHECK(most_open(inner(scheduled)) <= 16);
    CHECK(inner(scheduled).size() > inner(k).size()); // every statement kept, Lets read again added
    // 16 (AVX2): blocks of 8, every statement once.
    const ir::Kernel narrow = plexus::codegen::host::schedule_by_output(k, 16, 0);
    CHECK(most_open(inner(narrow)) <= 8);
    CHECK(inner(narrow).size() == inner(k).size());

    const int n = 37;
    auto a = random_vec<float>(size_t(n * P * T), -1.f, 1.f),
         b = random_vec<float>(size_t(n * P * T), -1.f, 1.f);
    for (const std::string& features : feature_sets()) {
        CAPTURE(features);
        const plexus::codegen::Options o = native_options(features);
        auto hk = plexus::codegen::host::compile_with_features(k, o, {});
        std::vector<float> out(size_t(n * (T * T + 1)), -9.f);
        int nn = n;
        run(*hk, k, {a.data(), b.data(), out.data(), &nn}, grid1(uint64_t(n), 8));
        int bad = 0;
        for (int g = 0; g < n; ++g) {
            float want[T][T] = {}, snap = 0;
            for (int p = 0; p < P; ++p) {
                for (int i = 0; i < T; ++i)
                    for (int j = 0; j < T; ++j)
                        want[i][j] = std::fma(a[size_t(g * P * T + p * T + i)],
                                              b[size_t(g * P * T + p * T + j)], want[i][j]);
                if (p == 1) snap = want[0][0];
            }
            for (int i = 0; i < T; ++i)
                for (int j = 0; j < T; ++j)
                    if (out[size_t(g * (T * T + 1) + i * T + j)] != want[i][j] && ++bad <= 5)
                        FAIL_CHECK("g " << g << " (" << i << ", " << j
                                        << "): " << out[size_t(g * (T * T + 1) + i * T + j)]
                                        << ", want " << want[i][j]);
            if (out[size_t(g * (T * T + 1) + T * T)] != snap && ++bad <= 5)
                FAIL_CHECK("g " << g << " snapshot");
        }
        CHECK(bad == 0);
    }
}
