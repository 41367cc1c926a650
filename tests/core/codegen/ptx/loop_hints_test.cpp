// Loop unroll hints on the PTX path: the NVPTX module as lowered carries each For's hint as the
// !llvm.loop of its back edge, and the PTX shows LLVM took it: a constant loop unrolled fully
// has no backward branch left (without the hint it keeps one), a loop kept rolled keeps its
// backward branch and one copy of its body (without the hint LLVM unrolls it), and a run-time
// loop unrolled by 8 holds 8 copies of its load. Never timed.
#include <doctest/doctest.h>

#include "ptx_check.hpp"

#include "codegen/ptx/ptx_target.hpp"
#include "plexus/kernel.hpp"

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/raw_ostream.h>

#include <optional>
#include <regex>
#include <set>
#include <sstream>

namespace px = plexus;
namespace ir = plexus::ir;

namespace {

using Hint = std::optional<px::Unroll>;

// out[g] = sum over j in [0, end) of a[g * 64 + j] * j, by a loop with `hint`; end is the
// constant `trips`, or the parameter n when trips is 0.
px::Kernel<px::In<float>, px::Out<float>, px::Int> sum_kernel(int trips, Hint hint) {
    return px::kernel("sum", {"a", "out", "n"},
                      [trips, hint](px::In<float> a, px::Out<float> out, px::Int n) {
                          px::Int g = px::global_id(0);
                          px::Float acc = 0.0f;
                          auto body = [&](px::Int j) { acc += a[g * 64 + j] * px::cast<float>(j); };
                          if (trips && hint)
                              px::For(0, trips, body, *hint);
                          else if (trips)
                              px::For(0, trips, body);
                          else if (hint)
                              px::For(0, n, body, *hint);
                          else
                              px::For(0, n, body);
                          out[g] = acc;
                      });
}

// Whether some bra of the PTX jumps to a label defined above it: a loop.
bool backward_branch(const std::string& ptx) {
    std::set<std::string> seen;
    std::istringstream lines(ptx);
    const std::regex label(R"(^\s*(\$L__\w+):)"), bra(R"(\bbra(\.uni)?\s+(\$L__\w+);)");
    for (std::string line; std::getline(lines, line);) {
        std::smatch m;
        if (std::regex_search(line, m, label)) seen.insert(m[1]);
        if (std::regex_search(line, m, bra) && seen.count(m[2])) return true;
    }
    return false;
}

// The f32 elements the PTX loads from global memory (a vector load counts its lanes).
size_t loads(const std::string& ptx) {
    size_t n = 0;
    const std::regex load(R"(ld\.global(\.nc)?(\.v([24]))?\.f32)");
    for (std::sregex_iterator it(ptx.begin(), ptx.end(), load), end; it != end; ++it)
        n += (*it)[3].matched ? size_t(std::stoi((*it)[3])) : 1;
    return n;
}

// The NVPTX module as lowered, before LLVM's passes.
std::string nvptx_ir(const ir::Kernel& k) {
    llvm::LLVMContext context;
    llvm::Module module(k.name, context);
    plexus::codegen::ptx::PtxTarget& target = plexus::codegen::ptx::PtxTarget::get("sm_80");
    module.setTargetTriple(plexus::codegen::ptx::nvptx_triple);
    module.setDataLayout(target.data_layout());
    plexus::codegen::Options options;
    options.backend = "cuda";
    options.arch = "sm_80";
    plexus::codegen::ptx::lower_kernel(k, options, module, false, 80, false);
    std::string text;
    llvm::raw_string_ostream out(text);
    module.print(out, nullptr);
    return out.str();
}

} // namespace

TEST_CASE("NVPTX module: the hint is a self-referential loop ID on the for loop's back edge") {
    const struct {
        Hint hint;
        const char* metadata;
    } cases[] = {{px::unroll(4), R"(!\{!"llvm\.loop\.unroll\.count", i32 4\})"},
                 {px::unroll_full(), R"(!\{!"llvm\.loop\.unroll\.full"\})"},
                 {px::no_unroll(), R"(!\{!"llvm\.loop\.unroll\.disable"\})"}};
    for (const auto& c : cases) {
        const std::string text = nvptx_ir(sum_kernel(64, c.hint).ir());
        INFO(text);
        std::smatch m;
        REQUIRE(std::regex_search(
            text, m, std::regex(R"(br label %for\.head[0-9]*, !llvm\.loop (![0-9]+))")));
        const std::string id = m[1];
        std::smatch node;
        REQUIRE(std::regex_search(text, node,
                                  std::regex(id + R"( = distinct !\{)" + id + R"(, (![0-9]+)\})")));
        CHECK(std::regex_search(text, std::regex(node[1].str() + " = " + c.metadata)));
    }
    const std::string plain = nvptx_ir(sum_kernel(64, std::nullopt).ir());
    CHECK(plain.find("!llvm.loop") == std::string::npos);
}

TEST_CASE(
    "PTX: a constant loop unrolled fully has no backward branch; without the hint it has one") {
    const std::string full = ptxtest::generate(sum_kernel(64, px::unroll_full()).ir(), "sm_80");
    const std::string plain = ptxtest::generate(sum_kernel(64, std::nullopt).ir(), "sm_80");
    {
        INFO(full);
        CHECK_FALSE(backward_branch(full));
        CHECK(loads(full) == 64);
    }
    INFO(plain);
    CHECK(backward_branch(plain));
    ptxtest::check_assembles("sum", full, "sm_80");
}

TEST_CASE("PTX: a loop kept rolled keeps its branch and one body; LLVM would unroll it otherwise") {
    const std::string rolled = ptxtest::generate(sum_kernel(4, px::no_unroll()).ir(), "sm_80");
    const std::string plain = ptxtest::generate(sum_kernel(4, std::nullopt).ir(), "sm_80");
    {
        INFO(rolled);
        CHECK(backward_branch(rolled));
        CHECK(loads(rolled) == 1);
    }
    INFO(plain);
    CHECK_FALSE(backward_branch(plain));
    CHECK(loads(plain) == 4);
}

TEST_CASE("PTX: a run-time loop unrolled by 8 holds 8 copies of its load, kept rolled 1") {
    const std::string by8 = ptxtest::generate(sum_kernel(0, px::unroll(8)).ir(), "sm_80");
    const std::string rolled = ptxtest::generate(sum_kernel(0, px::no_unroll()).ir(), "sm_80");
    {
        INFO(by8);
        CHECK(backward_branch(by8));
        CHECK(loads(by8) >= 8);
    }
    INFO(rolled);
    CHECK(backward_branch(rolled));
    CHECK(loads(rolled) == 1);
    ptxtest::check_assembles("sum", by8, "sm_80");
}
