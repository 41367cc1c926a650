// Streaming twins (codegen/host/passes/streaming.cpp): which work-group functions get one, that its
// contiguous vector stores into buffers are non-temporal and it ends in sfence, and that it
// computes every element exactly as the plain function does, at each vector width.
#include "host_test.hpp"
#include "kernels.hpp"

#include "plexus/codegen.hpp"

#include <llvm/AsmParser/Parser.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/raw_ostream.h>

#include <regex>
#include <string>

using namespace host_test;
namespace px = plexus;

namespace {

// The text of one function of a module printed by host_llvm_ir.
std::string function_text(const std::string& module, const std::string& name) {
    const size_t at = module.find("define void @" + name + "(");
    if (at == std::string::npos) return {};
    return module.substr(at, module.find("\n}\n", at) - at);
}

// The optimized module, which LLVM's verifier accepts (the twin's branches included).
std::string optimized_ir(const ir::Kernel& k, const std::string& features) {
    std::string text = plexus::codegen::host_llvm_ir(k, native_options(features), true);
    llvm::LLVMContext context;
    llvm::SMDiagnostic error;
    std::unique_ptr<llvm::Module> m = llvm::parseAssemblyString(text, error, context);
    REQUIRE(m != nullptr);
    std::string problems;
    llvm::raw_string_ostream out(problems);
    CHECK_MESSAGE(!llvm::verifyModule(*m, &out), problems);
    return text;
}

size_t count(const std::string& text, const std::regex& what) {
    return size_t(std::distance(std::sregex_iterator(text.begin(), text.end(), what),
                                std::sregex_iterator()));
}

// n floats at a 64-byte boundary (as the native plugin's buffers are), filled with `fill`.
struct Aligned {
    explicit Aligned(size_t n, float fill = 0)
        : n(n), p(static_cast<float*>(std::aligned_alloc(64, (n * 4 + 63) / 64 * 64))) {
        REQUIRE(p != nullptr);
        std::fill(p, p + n, fill);
    }
    ~Aligned() { std::free(p); }
    Aligned(const Aligned&) = delete;
    Aligned& operator=(const Aligned&) = delete;
    size_t n;
    float* p;
};

// Random floats in [-100, 100].
std::vector<float> random_floats(size_t n, std::mt19937& g) {
    std::uniform_real_distribution<float> u(-100, 100);
    std::vector<float> v(n);
    for (float& x : v)
        x = u(g);
    return v;
}

} // namespace

TEST_CASE("streaming twin: vector_add, vector_add_float4 and dequant_int8 store non-temporally, "
          "and compute every element") {
#if !defined(__x86_64__)
    MESSAGE("SKIP: streaming twins are made for x86-64 only");
#else
    const ir::Kernel& add = px::samples::vector_add_float4().ir();
    const ir::Kernel& dequant = px::samples::dequant_int8().ir();
    const ir::Kernel& add1 = px::samples::vector_add().ir();
    std::mt19937 g(7);
    for (const std::string& features : feature_sets()) {
        CAPTURE(features);
        for (const ir::Kernel* k : {&add, &dequant, &add1}) {
            CAPTURE(k->name);
            const std::string module = optimized_ir(*k, features);
            const std::string plain = function_text(module, "plx_wg_" + k->name);
            const std::string twin = function_text(module, "plx_wg_" + k->name + ".stream");
            REQUIRE_FALSE(plain.empty());
            REQUIRE_FALSE(twin.empty());
            // Every full-vector store of the output in the twin's loops streams; none in the plain
            // one.
            CHECK(plain.find("!nontemporal") == std::string::npos);
            // The output's stores of whole vectors stream (the output is the only buffer
            // written): vector_add's W floats and the float4 kernels' full chunks (W float4s as
            // one vector), which LLVM knows 4-byte aligned: they stream where the address is
            // aligned, else stay as they were (a branch). The float4 kernels' other chunks store
            // work-item by work-item, masked (no run to stream where the target has no masked
            // store or scatter), and their last work-items one float4 at a time.
            if (k == &add1) {
                CHECK(std::regex_search(twin,
                                        std::regex(R"(store <\d+ x float> [^\n]*!nontemporal)")));
            } else {
                const std::regex wide(R"(store <(16|32|64) x float> )");
                const size_t stores = count(plain, wide);
                CHECK(stores > 0);
                CHECK(count(twin,
                            std::regex(
                                R"(store <(16|32|64) x float> [^\n]*align 64, !nontemporal)")) ==
                      stores);
            }
            CHECK(twin.find("call void @llvm.x86.sse.sfence()") != std::string::npos);
            CHECK(plain.find("sfence") == std::string::npos);
        }
        auto hk_add = compile(add, features), hk_dequant = compile(dequant, features),
             hk_add1 = compile(add1, features);
        REQUIRE(static_cast<bool>(hk_add->streaming_function()));
        REQUIRE(static_cast<bool>(hk_dequant->streaming_function()));
        REQUIRE(static_cast<bool>(hk_add1->streaming_function()));
        // vector_add: whole blocks and the last one, the output aligned (streams) or one float
        // off (the twin's other branch).
        for (int n : {5, 1000, 4099, 65536 + 77}) {
            for (size_t off : {0, 1}) {
                CAPTURE(n);
                CAPTURE(off);
                const std::vector<float> a = random_floats(size_t(n), g),
                                         b = random_floats(size_t(n), g);
                for (bool streaming : {false, true}) {
                    CAPTURE(streaming);
                    Aligned c(size_t(n) + 1 + off, -1.0f);
                    const uint32_t local = 64;
                    const uint64_t items = (uint64_t(n) + 4 * local - 1) / (4 * local) * local;
                    run(*hk_add1, add1, {(void*)a.data(), (void*)b.data(), c.p + off, &n},
                        grid1(items, local), LocalMem::AsTheRuleSays, streaming);
                    int bad = 0;
                    for (size_t i = 0; i < size_t(n); ++i)
                        bad += c.p[off + i] != a[i] + b[i];
                    bad += c.p[off + size_t(n)] != -1.0f;
                    if (off) bad += c.p[0] != -1.0f;
                    CHECK(bad == 0);
                }
            }
        }
        // Sizes with partial groups and partial vectors; both functions, every element exact.
        for (int n : {1, 37, 1000, 4099}) {
            CAPTURE(n);
            const std::vector<float> a = random_floats(4 * size_t(n), g),
                                     b = random_floats(4 * size_t(n), g);
            for (bool streaming : {false, true}) {
                CAPTURE(streaming);
                std::vector<float> c(4 * size_t(n) + 4,
                                     -1.0f); // one float4 past the end, untouched
                int n4 = n;
                run(*hk_add, add, {(void*)a.data(), (void*)b.data(), c.data(), &n4},
                    grid1(uint64_t(n), 64), LocalMem::AsTheRuleSays, streaming);
                int bad = 0;
                for (size_t i = 0; i < 4 * size_t(n); ++i)
                    bad += c[i] != a[i] + b[i];
                for (size_t i = 4 * size_t(n); i < c.size(); ++i)
                    bad += c[i] != -1.0f;
                CHECK(bad == 0);
            }
        }
        for (auto [rows, cols4] : {std::pair{3, 5}, {37, 7}, {64, 16}}) {
            CAPTURE(rows);
            CAPTURE(cols4);
            const size_t n = size_t(rows) * size_t(cols4);
            std::vector<int8_t> w(4 * n);
            std::uniform_int_distribution<int> byte(-128, 127);
            for (int8_t& x : w)
                x = int8_t(byte(g));
            const std::vector<float> scale = random_floats(size_t(rows), g);
            for (bool streaming : {false, true}) {
                CAPTURE(streaming);
                std::vector<float> out(4 * n + 4, -1.0f);
                run(*hk_dequant, dequant,
                    {w.data(), (void*)scale.data(), out.data(), &rows, &cols4}, grid1(n, 32),
                    LocalMem::AsTheRuleSays, streaming);
                int bad = 0;
                for (size_t i = 0; i < 4 * n; ++i)
                    bad += out[i] != float(w[i]) * scale[i / 4 / size_t(cols4)];
                for (size_t i = 4 * n; i < out.size(); ++i)
                    bad += out[i] != -1.0f;
                CHECK(bad == 0);
            }
        }
    }
#endif
}

TEST_CASE(
    "streaming twin: a masked store streams where every lane is on, and stays masked elsewhere") {
#if !defined(__x86_64__)
    MESSAGE("SKIP: streaming twins are made for x86-64 only");
#else
    // One float per work-item under `if (i < n)`: LoopVectorize masks the store of each chunk.
    static const auto add_one =
        px::kernel("add_one", {"a", "c", "n"}, [](px::In<float> a, px::Out<float> c, px::Int n) {
            px::Int i = px::global_id(0);
            px::If(i < n, [&] { c[i] = a[i] + 1.0f; });
        });
    std::mt19937 g(3);
    for (const std::string& features : feature_sets()) {
        CAPTURE(features);
        const std::string module = optimized_ir(add_one.ir(), features);
        const std::string twin = function_text(module, "plx_wg_add_one.stream");
        // SSE has no masked store: LoopVectorize branches around scalar stores, and nothing
        // streams.
        if (features.find("-avx,") != std::string::npos) {
            CHECK(twin.empty());
            continue;
        }
        REQUIRE_FALSE(twin.empty());
        CHECK(twin.find("@llvm.vector.reduce.and") != std::string::npos);
        CHECK(std::regex_search(twin, std::regex(R"(store <\d+ x float> [^\n]*!nontemporal)")));
        CHECK(twin.find("@llvm.masked.store") != std::string::npos);
        auto hk = compile(add_one.ir(), features);
        // Tails of every length against a 64-lane group: partial chunks take the masked store.
        for (int n : {1, 15, 16, 17, 1000, 4099}) {
            for (size_t off : {0, 3}) {
                CAPTURE(n);
                CAPTURE(off);
                const std::vector<float> a = random_floats(size_t(n), g);
                Aligned c(size_t(n) + 1 + off, -1.0f);
                run(*hk, add_one.ir(), {(void*)a.data(), c.p + off, &n}, grid1(uint64_t(n), 64),
                    LocalMem::AsTheRuleSays, true);
                int bad = 0;
                for (size_t i = 0; i < size_t(n); ++i)
                    bad += c.p[off + i] != a[i] + 1.0f;
                for (size_t i = 0; i < off; ++i)
                    bad += c.p[i] != -1.0f;
                bad += c.p[off + size_t(n)] != -1.0f;
                CHECK(bad == 0);
            }
        }
    }
#endif
}

TEST_CASE("streaming twin: none for atomics, scattered stores or f16 vectors") {
    // reduce ends in an atomic add (groups meet during the launch); a float4 store to a
    // scattered index is not a contiguous run; warp_reduce has atomics too; saxpy_f16's
    // stores are f16 vectors, whose hint LLVM 19's x86 lowering drops (streaming.cpp).
    static const auto scatter =
        px::kernel("scatter_float4", {"a", "c", "n"},
                   [](px::In<px::samples::Vec4> a, px::Out<px::samples::Vec4> c, px::Int n) {
                       px::Int i = px::global_id(0);
                       px::If(i < n, [&] { c[(i * 7) % n] = a[i]; });
                   });
    for (const ir::Kernel* k : {&px::samples::reduce().ir(), &px::samples::warp_reduce().ir(),
                                &scatter.ir(), &px::samples::saxpy_f16().ir()}) {
        CAPTURE(k->name);
        CHECK_FALSE(static_cast<bool>(compile(*k)->streaming_function()));
        CHECK(optimized_ir(*k, "").find(".stream(") == std::string::npos);
    }
}
