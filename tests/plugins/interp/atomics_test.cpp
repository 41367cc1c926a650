// Every atomic of the catalog, on global and on local memory: each work-item updates its own
// element, so the returned old value and the new value are exact against the host.
#include "fixture.hpp"

#include <plexus/catalog.hpp>

namespace interp_test {
namespace {

using B = ir::BinaryOp;

template <class T> T update(ir::AtomicOp op, T old, T v, T compare) {
    if constexpr (std::is_integral_v<T>) {
        using U = std::make_unsigned_t<T>;
        switch (op) {
        case ir::AtomicOp::Add: return T(U(old) + U(v));
        case ir::AtomicOp::Sub: return T(U(old) - U(v));
        case ir::AtomicOp::Min: return std::min(old, v);
        case ir::AtomicOp::Max: return std::max(old, v);
        case ir::AtomicOp::And: return old & v;
        case ir::AtomicOp::Or: return old | v;
        case ir::AtomicOp::Xor: return old ^ v;
        case ir::AtomicOp::Xchg: return v;
        case ir::AtomicOp::CmpXchg: return old == compare ? v : old;
        }
    }
    REQUIRE((op == ir::AtomicOp::Add || op == ir::AtomicOp::Min || op == ir::AtomicOp::Max));
    return op == ir::AtomicOp::Add   ? old + v
           : op == ir::AtomicOp::Min ? std::fmin(old, v)
                                     : std::fmax(old, v);
}

template <class T> void check_atomic(ir::AtomicOp op, Scalar t, Space space) {
    const bool local = space == Space::Local;
    const std::string name = std::string("atomic_") + ir::to_string(op) + "_" + ir::to_string(t) +
                             "_" + ir::to_string(space);
    CAPTURE(name);
    auto gid = var("gid", Scalar::I32), lid = var("lid", Scalar::I32);
    auto in_range = bin(B::Lt, gid, var("n", Scalar::I32));
    auto target = local ? lid : gid;
    auto atomic = ir::Atomic::make(op, local ? "sh" : "mem", space, t, target, load("val", t, gid),
                                   op == ir::AtomicOp::CmpXchg ? load("cmp", t, gid) : nullptr);
    std::vector<ir::Stmt> body = {let_gid(), let("lid", cast(Scalar::I32, call("local_id_x")))};
    if (local)
        body.insert(body.end(), {if_(in_range, {store("sh", lid, load("mem", t, gid), space)}),
                                 ir::Barrier::make()});
    body.push_back(if_(in_range, {store("old", gid, atomic)}));
    if (local)
        body.insert(body.end(), {ir::Barrier::make(),
                                 if_(in_range, {store("mem", gid, load("sh", t, lid, space))})});
    const ir::Kernel k = kernel(
        name,
        {buffer("mem", t, ir::Access::ReadWrite), buffer("val", t), buffer("cmp", t),
         buffer("old", t, ir::Access::Write), scalar("n", Scalar::I32)},
        body,
        local ? std::vector<ir::SharedArray>{{"sh", t, 128}} : std::vector<ir::SharedArray>{});
    ir::validate(k);
    const int n = 300;
    std::vector<T> mem, val;
    if constexpr (std::is_integral_v<T>) {
        mem = random_vector<T>(n, std::numeric_limits<T>::min(), std::numeric_limits<T>::max());
        val = random_vector<T>(n, std::numeric_limits<T>::min(), std::numeric_limits<T>::max());
    } else {
        mem = random_vector<T>(n, T(-100), T(100));
        val = random_vector<T>(n, T(-100), T(100));
    }
    std::vector<T> cmp = val;
    for (int i = 0; i < n; i += 2)
        cmp[i] = mem[i]; // half of the compare-exchanges succeed
    Buffer bmem(mem), bval(val), bcmp(cmp), bold(std::vector<T>(n, T(0)));
    Module m(k);
    REQUIRE(m.status() == PLX_OK);
    REQUIRE(launch(m.kernel(), dims1(n, 128), {bmem, bval, bcmp, bold, n}) == PLX_OK);
    const auto got_mem = bmem.read<T>(), got_old = bold.read<T>();
    for (int i = 0; i < n; ++i) {
        CAPTURE(i);
        REQUIRE(got_old[i] == mem[i]);
        REQUIRE(got_mem[i] == update<T>(op, mem[i], val[i], cmp[i]));
    }
}

} // namespace

TEST_CASE("atomics: every catalog atomic on global and local memory returns the old value") {
    int tested = 0, catalog_atomics = 0;
    for (auto& info : plexus::intrinsic_catalog()) {
        if (info.name.rfind("atomic_", 0) != 0) continue;
        ++catalog_atomics;
        for (int o = 0; o <= int(ir::AtomicOp::CmpXchg); ++o)
            for (Scalar t :
                 {Scalar::I32, Scalar::U32, Scalar::I64, Scalar::U64, Scalar::F32, Scalar::F64})
                for (Space s : {Space::Global, Space::Local}) {
                    const auto op = static_cast<ir::AtomicOp>(o);
                    if (info.name != std::string("atomic_") + ir::to_string(op) + "_" +
                                         ir::to_string(t) + "_" + ir::to_string(s))
                        continue;
                    ++tested;
                    switch (t) {
                    case Scalar::I32: check_atomic<int32_t>(op, t, s); break;
                    case Scalar::U32: check_atomic<uint32_t>(op, t, s); break;
                    case Scalar::I64: check_atomic<int64_t>(op, t, s); break;
                    case Scalar::U64: check_atomic<uint64_t>(op, t, s); break;
                    case Scalar::F64: check_atomic<double>(op, t, s); break;
                    default: check_atomic<float>(op, t, s); break;
                    }
                }
    }
    // Each catalog atomic was matched by exactly one (op, type, space): none is left untested.
    CHECK(tested == catalog_atomics);
    // 9 ops x 4 integer types x 2 spaces, plus add, min and max on f32 and f64 in both spaces
    CHECK(tested == 84);
}

} // namespace interp_test
