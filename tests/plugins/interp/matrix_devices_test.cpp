// The interpreter's fragments against the backends that run the core's lower_matrix (every
// device of this build tree whose matrix_ops say PLX_MATRIX_EMULATED, or CPUs whose plugin
// leaves them unset): the same kernels on the same random inputs give the same bits on each,
// and the host reference's. A separate program from test-interp-plugin, which holds the
// interpreter plugin through its own test host.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include "every_device.hpp"
#include "matrix_reference.hpp"

namespace matrix_test {
namespace {

template <class TA, class TC, uint32_t K, class LA, class LB, class LC, class LD>
void on_every_device(const std::string& name) {
    const auto k = global_kernel<TA, TC, K, LA, LB, LC, LD>(name);
    std::mt19937_64 g(77);
    const auto p = make_problem<TA, TC, K, LA, LB, LC, LD>(g);
    int interp = 0, compared = 0;
    for (const px::test::TestDevice& d : px::test::every_device()) {
        // Tensor cores round tf32 inputs and sum in their own order: only emulation compares.
        const auto& ops = d.info->matrix_ops;
        if (ops ? !(*ops & PLX_MATRIX_EMULATED) : d.info->type != px::DeviceType::CPU) continue;
        INFO(name << " on " << d.label);
        px::Runtime& rt = px::test::hermetic_runtime();
        px::Buffer<TA> ba(rt, p.a), bb(rt, p.b);
        px::Buffer<TC> bc(rt, p.c), bd(rt, p.d0);
        try {
            rt.launch(d.target, k, px::Grid(size_t(kGroups * kLocal)).local_size(size_t(kLocal)),
                      ba, bb, bc, bd, p.lda, p.ldc, kTiles)
                .wait();
        } catch (const px::Error& e) {
            // The kernel's tile index needs subgroup_id: a device without subgroups is dropped.
            CHECK(e.code() == px::ErrorCode::NoBackend);
            CHECK(std::string(e.what()).find("the device lacks subgroups") != std::string::npos);
            continue;
        }
        ++compared;
        interp += d.target.backend == "interp";
        std::string first;
        const size_t bad = mismatches(bd.to_vector(), p.want, first);
        INFO(bad << " wrong elements, the first: " << first);
        CHECK(bad == 0);
    }
    CHECK(interp == 1);
    CHECK(compared >= 2); // the interpreter and the host backend at least
    MESSAGE(name << ": " << compared << " devices compared");
}

} // namespace

TEST_CASE("every emulating device gives the interpreter's bits: f16, f16 into f16, bf16, tf32") {
    using px::ColMajor;
    using px::RowMajor;
    on_every_device<px::half, float, 16, RowMajor, ColMajor, ColMajor, RowMajor>("dev_f16");
    on_every_device<px::half, px::half, 16, ColMajor, RowMajor, RowMajor, ColMajor>("dev_f16_f16");
    on_every_device<px::bf16, float, 16, RowMajor, RowMajor, RowMajor, RowMajor>("dev_bf16");
    on_every_device<float, float, 8, ColMajor, ColMajor, RowMajor, RowMajor>("dev_tf32");
}

} // namespace matrix_test
