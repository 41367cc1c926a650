// Shared pieces of the host code tests: short IR builders over the make() factories, and a
// runner that calls a work-group function for every group of a launch, as a Direct plugin would.
#pragma once

#include "codegen/host/analysis/item_mode.hpp"
#include "codegen/host/analysis/layout.hpp"
#include "codegen/host/analysis/schedule.hpp"
#include "codegen/host/jit/host_kernel.hpp"
#include "plexus/codegen.hpp"
#include "plexus/ir.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace host_test {

namespace ir = plexus::ir;
using ir::BinaryOp;
using ir::Expr;
using ir::Scalar;
using ir::Space;
using ir::Stmt;

// ---- IR shorthand ------------------------------------------------------------------------------
inline Expr ci(int64_t v, Scalar t = Scalar::I32) {
    return ir::Const::make_int(t, v);
}
inline Expr cf(double v, Scalar t = Scalar::F32) {
    return ir::Const::make_float(t, v);
}
inline Expr cb(bool v) {
    return ir::Const::make_bool(v);
}
inline Expr var(const std::string& n, Scalar t = Scalar::I32) {
    return ir::Var::make(n, t);
}
inline Expr bin(BinaryOp op, Expr a, Expr b) {
    return ir::Binary::make(op, std::move(a), std::move(b));
}
inline Expr add(Expr a, Expr b) {
    return bin(BinaryOp::Add, std::move(a), std::move(b));
}
inline Expr sub(Expr a, Expr b) {
    return bin(BinaryOp::Sub, std::move(a), std::move(b));
}
inline Expr mul(Expr a, Expr b) {
    return bin(BinaryOp::Mul, std::move(a), std::move(b));
}
inline Expr lt(Expr a, Expr b) {
    return bin(BinaryOp::Lt, std::move(a), std::move(b));
}
inline Expr eq(Expr a, Expr b) {
    return bin(BinaryOp::Eq, std::move(a), std::move(b));
}
inline Expr land(Expr a, Expr b) {
    return bin(BinaryOp::LogicalAnd, std::move(a), std::move(b));
}
inline Expr cast(Scalar t, Expr a) {
    return ir::Cast::make(t, std::move(a));
}
inline Expr sel(Expr c, Expr a, Expr b) {
    return ir::Select::make(std::move(c), std::move(a), std::move(b));
}
inline Expr call(const std::string& n, std::vector<Expr> args = {}) {
    return ir::Call::make(n, std::move(args));
}
inline Expr load(const std::string& a, Scalar t, Expr i) {
    return ir::Load::make(a, Space::Global, t, std::move(i));
}
inline Expr lload(const std::string& a, Scalar t, Expr i) {
    return ir::Load::make(a, Space::Local, t, std::move(i));
}
inline Expr gid(char axis = 'x') {
    return cast(Scalar::I32, call(std::string("global_id_") + axis));
}
inline Expr lid(char axis = 'x') {
    return call(std::string("local_id_") + axis);
}

inline Stmt let(const std::string& n, Expr init) {
    return ir::Let::make(n, std::move(init));
}
inline Stmt assign(const std::string& n, Expr v) {
    return ir::Assign::make(n, std::move(v));
}
inline Stmt store(const std::string& a, Expr i, Expr v) {
    return ir::Store::make(a, Space::Global, std::move(i), std::move(v));
}
inline Stmt lstore(const std::string& a, Expr i, Expr v) {
    return ir::Store::make(a, Space::Local, std::move(i), std::move(v));
}
inline Stmt block(std::vector<Stmt> b) {
    return ir::Block::make(std::move(b));
}
inline Stmt if_(Expr c, Stmt t, Stmt e = nullptr) {
    return ir::If::make(std::move(c), std::move(t), std::move(e));
}
inline Stmt for_(const std::string& v, Expr b, Expr e, Expr s, Stmt body) {
    return ir::For::make(v, std::move(b), std::move(e), std::move(s), std::move(body));
}
inline Stmt while_(Expr c, Stmt body) {
    return ir::While::make(std::move(c), std::move(body));
}
inline Stmt barrier() {
    return ir::Barrier::make();
}
inline Stmt eval(Expr e) {
    return ir::Eval::make(std::move(e));
}

inline ir::Param buf(const std::string& n, Scalar t, ir::Access a = ir::Access::Read) {
    return {n, ir::Param::Kind::Buffer, t, a};
}
inline ir::Param scalar(const std::string& n, Scalar t) {
    return {n, ir::Param::Kind::Scalar, t, ir::Access::Read};
}

inline ir::Kernel kernel(std::string name, std::vector<ir::Param> params, std::vector<Stmt> body,
                         std::vector<ir::SharedArray> shared = {}) {
    ir::Kernel k;
    k.name = std::move(name);
    k.params = std::move(params);
    k.shared = std::move(shared);
    k.body = block(std::move(body));
    return k;
}

// ---- running ---------------------------------------------------------------------------------
struct Grid {
    uint32_t dims = 1;
    uint64_t global[3] = {1, 1, 1};
    uint32_t local[3] = {1, 1, 1};
};
inline Grid grid1(uint64_t g, uint32_t l) {
    return {1, {g, 1, 1}, {l, 1, 1}};
}

enum class LocalMem { AsTheRuleSays, None };

// Calls the work-group function once per group, in order, with the group-local memory its
// layout asks for (HostKernel::local_bytes, as the native plugin gives it) filled with garbage
// (as uninitialized local memory may be).
// `streaming`: the kernel's streaming twin (HostKernel::streaming_function) instead.
inline void run(const plexus::codegen::HostKernel& hk, const ir::Kernel& /*kernel*/,
                std::vector<void*> args, const Grid& g, LocalMem mem = LocalMem::AsTheRuleSays,
                bool streaming = false) {
    plexus::codegen::HostArgs host_args{args.data()};
    plx_workgroup_ctx ctx{};
    ctx.struct_size = sizeof ctx;
    ctx.dims = g.dims;
    uint64_t group_size = 1;
    for (int d = 0; d < 3; ++d) {
        ctx.num_groups[d] = (g.global[d] + g.local[d] - 1) / g.local[d];
        ctx.global_size[d] = g.global[d];
        ctx.local_size[d] = g.local[d];
        group_size *= g.local[d];
    }
    size_t bytes = mem == LocalMem::None ? 0 : size_t(hk.local_bytes(uint32_t(group_size)));
    std::unique_ptr<void, decltype(&std::free)> local(
        bytes ? std::aligned_alloc(64, (bytes + 63) & ~size_t(63)) : nullptr, &std::free);
    ctx.local_mem = local.get();
    ctx.local_mem_bytes = bytes;
    plx_workgroup_fn fn = streaming ? hk.streaming_function() : hk.function();
    REQUIRE(static_cast<bool>(fn));
    for (uint64_t z = 0; z < ctx.num_groups[2]; ++z)
        for (uint64_t y = 0; y < ctx.num_groups[1]; ++y)
            for (uint64_t x = 0; x < ctx.num_groups[0]; ++x) {
                if (bytes) std::memset(local.get(), 0xa5, bytes);
                ctx.group_id[0] = x;
                ctx.group_id[1] = y;
                ctx.group_id[2] = z;
                fn(&ctx, &host_args);
            }
}

// The options of the native backend with these host features ("" for the host's own).
inline plexus::codegen::Options native_options(const std::string& features = "") {
    plexus::codegen::Options o;
    o.backend = "native";
    o.host_features = features;
    return o;
}

// k compiled for the native backend with these host features.
inline std::unique_ptr<plexus::codegen::HostKernel> compile(const ir::Kernel& k,
                                                            const std::string& features = "") {
    return plexus::codegen::compile_host(k, native_options(features));
}

// min / max of floats as the IR has them: a NaN operand, signaling or quiet, yields the other
// (libm's fmin turns a signaling NaN into NaN).
inline float ir_min(float x, float y) {
    return std::isnan(x) ? y : std::isnan(y) ? x : std::fmin(x, y);
}
inline float ir_max(float x, float y) {
    return std::isnan(x) ? y : std::isnan(y) ? x : std::fmax(x, y);
}

// The host's own CPU features, and on x86 the same host with 256-bit and 128-bit vectors
// (AVX-512 off; then AVX, FMA and F16C off too).
inline std::vector<std::string> feature_sets() {
    std::vector<std::string> sets = {""};
#if defined(__x86_64__)
    sets.push_back("-avx512f");
    sets.push_back("-avx512f,-avx,-avx2,-fma,-f16c");
#endif
    return sets;
}

inline std::mt19937_64& rng() {
    static std::mt19937_64 r(20240601);
    return r;
}
template <class T> std::vector<T> random_vec(size_t n, T lo, T hi) {
    std::vector<T> v(n);
    if constexpr (std::is_floating_point_v<T>) {
        std::uniform_real_distribution<T> d(lo, hi);
        for (auto& x : v)
            x = d(rng());
    } else {
        // The distribution is not defined for 8-bit types: draw in 32 bits.
        using Draw =
            std::conditional_t<(sizeof(T) < 4),
                               std::conditional_t<std::is_signed_v<T>, int32_t, uint32_t>, T>;
        std::uniform_int_distribution<Draw> d(lo, hi);
        for (auto& x : v)
            x = T(d(rng()));
    }
    return v;
}

} // namespace host_test
