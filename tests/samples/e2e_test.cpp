// The e2e suite: every sample problem on every backend and device found, on random inputs at
// several sizes (including ones that are not multiples of the work-group size), each output
// element checked against a host reference (the tolerance of each is in samples/problems.cpp).
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include "every_device.hpp"
#include "problems.hpp"

#include <algorithm>
#include <cstdio>

namespace px = plexus;

namespace {

px::Runtime& runtime() {
    return px::test::hermetic_runtime();
}
using px::test::every_device;

void run_problem(const std::string& name) {
    for (const px::test::TestDevice& dev : every_device()) {
        bool slow = dev.target.backend == "interp";
        for (size_t size : px::samples::test_sizes(name, slow)) {
            auto p = px::samples::make_problem(name, size, runtime(), unsigned(size) * 7 + 1);
            INFO(dev.label << " " << name << " " << p->size_text() << ", tolerance "
                           << p->tolerance());
            try {
                p->run(runtime(), dev.target);
            } catch (const px::Error& e) {
                // A device the router drops for a capability it lacks (an OpenCL device without
                // cl_khr_subgroups for the subgroup samples) is skipped, saying why.
                const std::string why = px::samples::drop_reason(e, dev.target);
                INFO(e.what());
                REQUIRE(why.rfind("the device lacks", 0) == 0);
                MESSAGE(name << " skipped on " << dev.label << ": " << why);
                break;
            }
            px::samples::CheckResult r = p->check();
            INFO("checked " << r.checked << " elements, " << r.bad << " outside the tolerance; "
                            << r.first_bad);
            CHECK(r.ok());
        }
    }
}

} // namespace

TEST_CASE("the native and interpreter backends are found") {
    std::vector<std::string> names;
    for (auto& d : every_device())
        names.push_back(d.target.backend);
    CHECK(std::find(names.begin(), names.end(), "interp") != names.end());
#if PLEXUS_TEST_EXPECT_NATIVE
    CHECK(std::find(names.begin(), names.end(), "native") != names.end());
#endif
}

TEST_CASE("vector_add") {
    run_problem("vector_add");
}
TEST_CASE("reduce") {
    run_problem("reduce");
}
TEST_CASE("warp_reduce") {
    run_problem("warp_reduce");
}
TEST_CASE("matmul_naive") {
    run_problem("matmul_naive");
}
TEST_CASE("matmul_tiled") {
    run_problem("matmul_tiled");
}
TEST_CASE("transpose") {
    run_problem("transpose");
}
TEST_CASE("scan") {
    run_problem("scan");
}
TEST_CASE("histogram") {
    run_problem("histogram");
}
TEST_CASE("histogram_wide") {
    run_problem("histogram_wide");
}
TEST_CASE("vector_add_float4") {
    run_problem("vector_add_float4");
}
TEST_CASE("saxpy_f16") {
    run_problem("saxpy_f16");
}
TEST_CASE("gelu_f32") {
    run_problem("gelu_f32");
}
TEST_CASE("dequant_int8") {
    run_problem("dequant_int8");
}
TEST_CASE("softmax_bf16") {
    run_problem("softmax_bf16");
}
TEST_CASE("softmax_f32") {
    run_problem("softmax_f32");
}
TEST_CASE("layernorm_f32") {
    run_problem("layernorm_f32");
}
TEST_CASE("layernorm_bf16") {
    run_problem("layernorm_bf16");
}
TEST_CASE("particles") {
    run_problem("particles");
}
TEST_CASE("math_catalog") {
    run_problem("math_catalog");
}

// The default 1-D work-group is 256 (wider only on a CPU for kernels with no barrier and no
// shared array): a kernel that sizes its shared array for it must run with the default grid.
TEST_CASE("a kernel sized for the default work-group runs with the default grid") {
    static const auto rotate = px::kernel(
        "rotate_in_group", {"in", "out", "n"}, [](px::In<float> in, px::Out<float> out, px::Int n) {
            auto tile = px::shared<float>(256);
            px::Int lid = px::local_id(0);
            px::Int i = px::global_id(0);
            tile[lid] = px::select(i < n, in[px::min(i, n - 1)], 0.0f);
            px::barrier();
            px::If(i < n, [&] { out[i] = tile[(lid + 1) % px::local_size(0)]; });
        });
    const int n = 1000;
    std::vector<float> x(n);
    for (int i = 0; i < n; ++i)
        x[i] = float(i) * 0.5f;
    for (const px::test::TestDevice& dev : every_device()) {
        INFO(dev.label);
        px::Buffer<float> in(runtime(), x), out(runtime(), size_t(n));
        runtime().launch(dev.target, rotate, px::Grid(n), in, out, n).wait();
        std::vector<float> got = out.to_vector();
        int bad = 0;
        for (int i = 0; i < n; ++i) {
            int next = (i / 256) * 256 + (i % 256 + 1) % 256; // the neighbour in a group of 256
            float want = next < n ? x[next] : 0.0f;
            bad += got[i] != want;
        }
        CHECK(bad == 0);
    }
}

int main(int argc, char** argv) {
    std::printf("e2e: backends under test:");
    for (auto& d : every_device())
        std::printf(" %s", d.label.c_str());
    std::printf("\n");
    for (auto& e : runtime().load_report())
        std::printf("e2e: plugin %s: %s %s\n", e.name.c_str(), px::to_string(e.outcome),
                    e.message.c_str());
    doctest::Context ctx(argc, argv);
    return ctx.run();
}
