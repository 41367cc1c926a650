// The library routines a kernel may be (Kernel::routine), as plugin.h lists them.
#include "plexus/ir.hpp"

namespace plexus::ir {

namespace {

Routine gemm(const char* name, Scalar inputs) {
    auto buffer = [](const char* n, Scalar t, Access a) {
        return Param{n, Param::Kind::Buffer, Type(t), a};
    };
    auto scalar = [](const char* n) { return Param{n, Param::Kind::Scalar, Type(Scalar::I32)}; };
    return {name,
            {buffer("a", inputs, Access::Read), buffer("b", inputs, Access::Read),
             buffer("c", Scalar::F32, Access::Write), scalar("m"), scalar("n"), scalar("k"),
             scalar("trans_a"), scalar("trans_b")}};
}

} // namespace

const std::vector<Routine>& routines() {
    static const std::vector<Routine> all = {
        gemm("gemm_f32", Scalar::F32), gemm("gemm_tf32", Scalar::F32),
        gemm("gemm_f16", Scalar::F16), gemm("gemm_bf16", Scalar::BF16)};
    return all;
}

const Routine* find_routine(std::string_view name) {
    for (const Routine& r : routines())
        if (r.name == name) return &r;
    return nullptr;
}

} // namespace plexus::ir
