// Test kernels for the PTX generator, written with the IR factories the kernel language uses.
#include "kernels.hpp"

#include "plexus/catalog.hpp"
#include <cstdlib>
#include <set>
#include <string>

namespace ptxtest {
namespace {

using namespace plexus::ir;

Expr i32(int32_t v) {
    return Const::make_int(Scalar::I32, v);
}
Expr u32(uint32_t v) {
    return Const::make_int(Scalar::U32, v);
}
Expr f32(double v) {
    return Const::make_float(Scalar::F32, v);
}
Expr num(Scalar t, double v) {
    return is_float(t) ? Const::make_float(t, v) : Const::make_int(t, int64_t(v));
}
Expr var(const std::string& n, Scalar t) {
    return Var::make(n, t);
}
Expr bin(BinaryOp op, Expr a, Expr b) {
    return Binary::make(op, std::move(a), std::move(b));
}
Expr add(Expr a, Expr b) {
    return bin(BinaryOp::Add, std::move(a), std::move(b));
}
Expr mul(Expr a, Expr b) {
    return bin(BinaryOp::Mul, std::move(a), std::move(b));
}
Expr lt(Expr a, Expr b) {
    return bin(BinaryOp::Lt, std::move(a), std::move(b));
}
Expr land(Expr a, Expr b) {
    return bin(BinaryOp::LogicalAnd, std::move(a), std::move(b));
}
Expr call(const std::string& n, std::vector<Expr> args = {}) {
    return Call::make(n, std::move(args));
}
Expr cast(Scalar t, Expr a) {
    return Cast::make(t, std::move(a));
}
Expr gload(const std::string& a, Scalar t, Expr i) {
    return Load::make(a, Space::Global, t, std::move(i));
}
Expr sload(const std::string& a, Scalar t, Expr i) {
    return Load::make(a, Space::Local, t, std::move(i));
}
Stmt let(const std::string& n, Expr e) {
    return Let::make(n, std::move(e));
}
Stmt assign(const std::string& n, Expr e) {
    return Assign::make(n, std::move(e));
}
Stmt gstore(const std::string& a, Expr i, Expr v) {
    return Store::make(a, Space::Global, std::move(i), std::move(v));
}
Stmt sstore(const std::string& a, Expr i, Expr v) {
    return Store::make(a, Space::Local, std::move(i), std::move(v));
}
Stmt block(std::vector<Stmt> b) {
    return Block::make(std::move(b));
}
Stmt when(Expr c, Stmt t, Stmt e = nullptr) {
    return If::make(std::move(c), std::move(t), std::move(e));
}
Param buffer(const std::string& n, Scalar t, Access a) {
    return {n, Param::Kind::Buffer, t, a};
}
Param scalar(const std::string& n, Scalar t) {
    return {n, Param::Kind::Scalar, t, Access::Read};
}

// let gid = i32(global_id_x)
Stmt let_gid() {
    return let("gid", cast(Scalar::I32, call("global_id_x")));
}
Expr gid() {
    return var("gid", Scalar::I32);
}

Kernel make_kernel(std::string name, std::vector<Param> params, std::vector<SharedArray> shared,
                   std::vector<Stmt> body) {
    Kernel k{std::move(name), std::move(params), std::move(shared), block(std::move(body)), {}, {}};
    validate(k);
    return k;
}

} // namespace

Kernel vector_add() {
    return make_kernel(
        "vector_add",
        {buffer("a", Scalar::F32, Access::Read), buffer("b", Scalar::F32, Access::Read),
         buffer("c", Scalar::F32, Access::Write), scalar("n", Scalar::I32)},
        {},
        {let_gid(),
         when(lt(gid(), var("n", Scalar::I32)),
              gstore("c", gid(),
                     add(gload("a", Scalar::F32, gid()), gload("b", Scalar::F32, gid()))))});
}

Kernel reduce_sum() {
    const Expr lid = var("lid", Scalar::U32), s = var("s", Scalar::U32);
    return make_kernel(
        "reduce_sum",
        {buffer("in", Scalar::F32, Access::Read), buffer("out", Scalar::F32, Access::ReadWrite),
         scalar("n", Scalar::I32)},
        {{"partial", Scalar::F32, 256}},
        {let("lid", call("local_id_x")), let_gid(), let("v", f32(0)),
         when(lt(gid(), var("n", Scalar::I32)), assign("v", gload("in", Scalar::F32, gid()))),
         sstore("partial", lid, var("v", Scalar::F32)), Barrier::make(),
         let("s", bin(BinaryOp::Shr, call("local_size_x"), u32(1))),
         While::make(
             bin(BinaryOp::Gt, s, u32(0)),
             block({when(lt(lid, s), sstore("partial", lid,
                                            add(sload("partial", Scalar::F32, lid),
                                                sload("partial", Scalar::F32, add(lid, s))))),
                    Barrier::make(), assign("s", bin(BinaryOp::Shr, s, u32(1)))})),
         when(bin(BinaryOp::Eq, lid, u32(0)),
              Eval::make(Atomic::make(AtomicOp::Add, "out", Space::Global, Scalar::F32, i32(0),
                                      sload("partial", Scalar::F32, i32(0)))))});
}

Kernel matmul_tiled() {
    const Scalar I = Scalar::I32, F = Scalar::F32;
    const Expr n = var("n", I), row = var("row", I), col = var("col", I), tx = var("tx", I),
               ty = var("ty", I), t = var("t", I), k = var("k", I);
    const Expr tile_index = add(mul(ty, i32(16)), tx);
    const Expr a_col = add(mul(t, i32(16)), tx), b_row = add(mul(t, i32(16)), ty);
    return make_kernel(
        "matmul_tiled",
        {buffer("a", F, Access::Read), buffer("b", F, Access::Read), buffer("c", F, Access::Write),
         scalar("n", I)},
        {{"ta", F, 256}, {"tb", F, 256}},
        {let("row", cast(I, call("global_id_y"))), let("col", cast(I, call("global_id_x"))),
         let("tx", cast(I, call("local_id_x"))), let("ty", cast(I, call("local_id_y"))),
         let("acc", f32(0)),
         For::make(
             "t", i32(0), bin(BinaryOp::Div, add(n, i32(15)), i32(16)), i32(1),
             block({when(land(lt(row, n), lt(a_col, n)),
                         sstore("ta", tile_index, gload("a", F, add(mul(row, n), a_col))),
                         sstore("ta", tile_index, f32(0))),
                    when(land(lt(b_row, n), lt(col, n)),
                         sstore("tb", tile_index, gload("b", F, add(mul(b_row, n), col))),
                         sstore("tb", tile_index, f32(0))),
                    Barrier::make(),
                    For::make("k", i32(0), i32(16), i32(1),
                              assign("acc", add(var("acc", F),
                                                mul(sload("ta", F, add(mul(ty, i32(16)), k)),
                                                    sload("tb", F, add(mul(k, i32(16)), tx)))))),
                    Barrier::make()})),
         when(land(lt(row, n), lt(col, n)), gstore("c", add(mul(row, n), col), var("acc", F)))});
}

Kernel histogram() {
    const Scalar U = Scalar::U32;
    return make_kernel(
        "histogram",
        {buffer("data", U, Access::Read), buffer("bins", U, Access::ReadWrite),
         scalar("n", Scalar::I32), scalar("nbins", U)},
        {},
        {let_gid(),
         when(lt(gid(), var("n", Scalar::I32)),
              Eval::make(Atomic::make(AtomicOp::Add, "bins", Space::Global, U,
                                      bin(BinaryOp::Rem, gload("data", U, gid()), var("nbins", U)),
                                      u32(1))))});
}

Kernel atomics64() {
    const Scalar I = Scalar::I64, U = Scalar::U64;
    const Expr v = var("v", I), lid = var("lid", Scalar::U32);
    auto global = [](AtomicOp op, const char* a, Scalar t, Expr i, Expr val, Expr cmp = nullptr) {
        return Atomic::make(op, a, Space::Global, t, std::move(i), std::move(val), std::move(cmp));
    };
    return make_kernel(
        "atomics64",
        {buffer("vals", I, Access::Read), buffer("mins", I, Access::ReadWrite),
         buffer("sums", U, Access::ReadWrite), buffer("flags", U, Access::ReadWrite),
         buffer("olds", U, Access::Write), scalar("n", Scalar::I32)},
        {{"local_sum", I, 1}},
        {let_gid(), let("lid", call("local_id_x")),
         when(bin(BinaryOp::Eq, lid, u32(0)), sstore("local_sum", i32(0), Const::make_int(I, 0))),
         Barrier::make(),
         when(lt(gid(), var("n", Scalar::I32)),
              block({let("v", gload("vals", I, gid())),
                     Eval::make(global(AtomicOp::Min, "mins", I, i32(0), v)),
                     Eval::make(global(AtomicOp::Max, "mins", I, i32(1), v)),
                     Eval::make(global(AtomicOp::Add, "sums", U, i32(0), cast(U, v))),
                     Eval::make(global(AtomicOp::Xor, "sums", U, i32(1), cast(U, v))),
                     let("old", global(AtomicOp::CmpXchg, "flags", U, gid(), Const::make_int(U, 1),
                                       Const::make_int(U, 0))),
                     gstore("olds", gid(),
                            add(var("old", U),
                                global(AtomicOp::Xchg, "flags", U,
                                       add(gid(), var("n", Scalar::I32)), Const::make_int(U, 7)))),
                     Eval::make(
                         Atomic::make(AtomicOp::Add, "local_sum", Space::Local, I, i32(0), v))})),
         Barrier::make(),
         when(bin(BinaryOp::Eq, lid, u32(0)), Eval::make(global(AtomicOp::Add, "mins", I, i32(2),
                                                                sload("local_sum", I, i32(0)))))});
}

Kernel atomics_all() {
    // One buffer and one shared array per element type; every catalog atomic hits one of them.
    const Scalar types[] = {Scalar::I32, Scalar::U32, Scalar::I64,
                            Scalar::U64, Scalar::F32, Scalar::F64};
    std::vector<Param> params;
    std::vector<SharedArray> shared;
    for (Scalar t : types) {
        params.push_back(buffer(std::string("g_") + to_string(t), t, Access::ReadWrite));
        shared.push_back({std::string("s_") + to_string(t), t, 64});
    }
    std::vector<Stmt> body = {let("lid", call("local_id_x"))};
    const Expr slot = bin(BinaryOp::Rem, var("lid", Scalar::U32), u32(64));
    for (const auto& info : plexus::intrinsic_catalog()) {
        if (info.name.rfind("atomic_", 0) != 0) continue;
        const std::string op_name = info.name.substr(7, info.name.find('_', 7) - 7);
        AtomicOp op = AtomicOp::Add;
        for (int i = 0; i <= int(AtomicOp::CmpXchg); ++i)
            if (op_name == to_string(AtomicOp(i))) op = AtomicOp(i);
        const Scalar t = info.result;
        const bool local = info.name.find("_local") != std::string::npos;
        const std::string array = std::string(local ? "s_" : "g_") + to_string(t);
        Expr compare = op == AtomicOp::CmpXchg ? num(t, 3) : nullptr;
        Expr atomic = Atomic::make(op, array, local ? Space::Local : Space::Global, t, slot,
                                   num(t, 5), compare);
        // Keep the old value alive so no atomic is optimized into a reduction.
        body.push_back(local ? sstore(array, slot, atomic)
                             : gstore(array, add(slot, u32(64)), atomic));
    }
    body.push_back(Barrier::make());
    for (Scalar t : types)
        body.push_back(gstore(std::string("g_") + to_string(t), add(slot, u32(128)),
                              sload(std::string("s_") + to_string(t), t, slot)));
    return make_kernel("atomics_all", params, shared, body);
}

Kernel float_atomics() {
    const Scalar F = Scalar::F32, D = Scalar::F64;
    auto at = [](AtomicOp op, const char* a, Space s, Scalar t, int slot, Expr v) {
        return Atomic::make(op, a, s, t, i32(slot), std::move(v));
    };
    auto out = [](int j, Expr v) {
        return gstore("out", add(mul(gid(), i32(8)), i32(j)), std::move(v));
    };
    const Expr x = gload("x", F, gid()), y = gload("y", D, gid());
    return make_kernel("float_atomics",
                       {buffer("x", F, Access::Read), buffer("y", D, Access::Read),
                        buffer("f", F, Access::ReadWrite), buffer("d", D, Access::ReadWrite),
                        buffer("out", D, Access::Write)},
                       {{"sf", F, 2}, {"sd", D, 3}},
                       {let_gid(), Eval::make(at(AtomicOp::Add, "d", Space::Global, D, 0, y)),
                        out(0, at(AtomicOp::Add, "d", Space::Global, D, 1, y)),
                        out(1, cast(D, at(AtomicOp::Min, "f", Space::Global, F, 0, x))),
                        out(2, cast(D, at(AtomicOp::Max, "f", Space::Global, F, 1, x))),
                        out(3, at(AtomicOp::Min, "d", Space::Global, D, 2, y)),
                        out(4, at(AtomicOp::Max, "d", Space::Global, D, 3, y)),
                        Eval::make(at(AtomicOp::Min, "sf", Space::Local, F, 0, x)),
                        Eval::make(at(AtomicOp::Max, "sf", Space::Local, F, 1, x)),
                        Eval::make(at(AtomicOp::Min, "sd", Space::Local, D, 0, y)),
                        out(5, at(AtomicOp::Max, "sd", Space::Local, D, 1, y)),
                        out(6, at(AtomicOp::Add, "sd", Space::Local, D, 2, y)), Barrier::make(),
                        out(7, add(add(cast(D, add(sload("sf", F, i32(0)), sload("sf", F, i32(1)))),
                                       sload("sd", D, i32(0))),
                                   sload("sd", D, i32(1))))});
}

namespace {

// The catalog's precise math intrinsics of this precision that take only values of it (not
// ldexp, whose exponent is an i32, nor the fast_ ones: fast_math below). Without libdevice
// (PLEXUS_LIBDEVICE=none) the libm.def functions have no PTX and are left out: the PTX
// generator refuses them (tested below).
bool math_of(const plexus::IntrinsicInfo& info, Scalar type) {
    if (info.result != type || info.args.empty() || info.arg_is_pointer[0]) return false;
    if (info.convergence == plexus::Convergence::Subgroup)
        return false; // not math: tests/core/kernel/subgroups
    if (info.name.rfind("fast_", 0) == 0) return false;
    for (const auto& a : info.args)
        if (a != type) return false;
    const char* v = std::getenv("PLEXUS_LIBDEVICE");
    if (v && std::string(v) == "none") {
        static const std::set<std::string> libm = {
#define PLX_LIBM1(fn) #fn,
#define PLX_LIBM2(fn) #fn,
#include <plexus/libm.def>
#undef PLX_LIBM1
#undef PLX_LIBM2
        };
        if (libm.count(info.name.substr(0, info.name.rfind('_')))) return false;
    }
    return true;
}

} // namespace

Kernel math(Scalar type) {
    // acc += f(x, x + 1, x + 2) for every math intrinsic of this precision.
    const Expr x = var("x", type);
    std::vector<Stmt> guarded = {let("x", gload("in", type, gid())), let("acc", num(type, 0))};
    for (const auto& info : plexus::intrinsic_catalog()) {
        if (!math_of(info, type)) continue;
        std::vector<Expr> args;
        for (size_t i = 0; i < info.args.size(); ++i)
            args.push_back(add(x, num(type, double(i))));
        guarded.push_back(assign("acc", add(var("acc", type), call(info.name, args))));
    }
    guarded.push_back(gstore("out", gid(), var("acc", type)));
    return make_kernel(
        std::string("math_") + to_string(type),
        {buffer("in", type, Access::Read), buffer("out", type, Access::Write),
         scalar("n", Scalar::I32)},
        {}, {let_gid(), when(lt(gid(), var("n", Scalar::I32)), block(std::move(guarded)))});
}

Kernel one_call_f32(const std::string& intrinsic) {
    const Scalar F = Scalar::F32;
    return make_kernel("one_" + intrinsic,
                       {buffer("in", F, Access::Read), buffer("out", F, Access::Write)}, {},
                       {let_gid(), gstore("out", gid(), call(intrinsic, {gload("in", F, gid())}))});
}

Kernel math_each(Scalar type) {
    // out[j * n + gid] = f_j(x, x + 1, x + 2): one column per function gpu_check.py's MATH lists
    // (the catalog's first math rows, in its order), so that its output buffer holds them all;
    // the rest of the library is checked in ulp by tests/core/kernel/math on every backend.
    static const std::set<std::string> checked = {"sqrt", "rsqrt", "exp", "exp2", "log",  "log2",
                                                  "sin",  "cos",   "tan", "pow",  "fabs", "floor",
                                                  "ceil", "fma",   "min", "max",  "clamp"};
    std::vector<Stmt> guarded = {let("x", gload("in", type, gid()))};
    const Expr x = var("x", type);
    int column = 0;
    for (const auto& info : plexus::intrinsic_catalog()) {
        if (!math_of(info, type) || !checked.count(info.name.substr(0, info.name.rfind('_'))))
            continue;
        std::vector<Expr> args;
        for (size_t i = 0; i < info.args.size(); ++i)
            args.push_back(add(x, num(type, double(i))));
        guarded.push_back(gstore("out", add(mul(i32(column++), var("n", Scalar::I32)), gid()),
                                 call(info.name, args)));
    }
    return make_kernel(
        std::string("math_each_") + to_string(type),
        {buffer("in", type, Access::Read), buffer("out", type, Access::Write),
         scalar("n", Scalar::I32)},
        {}, {let_gid(), when(lt(gid(), var("n", Scalar::I32)), block(std::move(guarded)))});
}

Kernel fast_math() {
    // acc += fast_f(x, x + 1) for every fast intrinsic (f32 only).
    const Scalar F = Scalar::F32;
    const Expr x = var("x", F);
    std::vector<Stmt> guarded = {let("x", gload("in", F, gid())), let("acc", num(F, 0))};
    for (const auto& info : plexus::intrinsic_catalog()) {
        if (info.name.rfind("fast_", 0) != 0) continue;
        std::vector<Expr> args;
        for (size_t i = 0; i < info.args.size(); ++i)
            args.push_back(add(x, num(F, double(i))));
        guarded.push_back(assign("acc", add(var("acc", F), call(info.name, args))));
    }
    guarded.push_back(gstore("out", gid(), var("acc", F)));
    return make_kernel(
        "fast_math",
        {buffer("in", F, Access::Read), buffer("out", F, Access::Write), scalar("n", Scalar::I32)},
        {}, {let_gid(), when(lt(gid(), var("n", Scalar::I32)), block(std::move(guarded)))});
}

Kernel ilogb() {
    const Expr x = gload("in", Scalar::F32, gid());
    return make_kernel(
        "ilogb",
        {buffer("in", Scalar::F32, Access::Read), buffer("out", Scalar::I32, Access::Write)}, {},
        {let_gid(),
         gstore("out", gid(),
                add(call("ilogb_f32", {x}), call("ilogb_f64", {cast(Scalar::F64, x)})))});
}

Kernel int_ops() {
    const Scalar ints[] = {Scalar::I32, Scalar::U32, Scalar::I64, Scalar::U64};
    const Scalar all[] = {Scalar::Bool, Scalar::I32, Scalar::U32, Scalar::I64,
                          Scalar::U64,  Scalar::F32, Scalar::F64};
    std::vector<Param> params = {buffer("out", Scalar::I64, Access::Write)};
    std::vector<Stmt> body = {let_gid(), let("acc", Const::make_int(Scalar::I64, 0))};
    auto fold = [&](Expr e) { // acc = acc ^ i64(e)
        body.push_back(assign("acc", bin(BinaryOp::BitXor, var("acc", Scalar::I64),
                                         cast(Scalar::I64, std::move(e)))));
    };
    for (Scalar t : ints) {
        const std::string a = std::string("a_") + to_string(t),
                          b = std::string("b_") + to_string(t);
        params.push_back(scalar(a, t));
        params.push_back(scalar(b, t));
        const Expr x = add(var(a, t), cast(t, gid())), y = var(b, t);
        for (int op = 0; op <= int(BinaryOp::Ge); ++op)
            if (BinaryOp(op) != BinaryOp::LogicalAnd && BinaryOp(op) != BinaryOp::LogicalOr)
                fold(bin(BinaryOp(op), x, y));
        fold(Unary::make(UnaryOp::Neg, x));
        fold(Unary::make(UnaryOp::BitNot, x));
        fold(Select::make(lt(x, y), x, y));
        fold(bin(BinaryOp::LogicalOr, land(lt(x, y), bin(BinaryOp::Ne, x, num(t, 0))),
                 Unary::make(UnaryOp::Not, bin(BinaryOp::Eq, y, num(t, 3)))));
    }
    params.push_back(scalar("fa", Scalar::F32));
    params.push_back(scalar("da", Scalar::F64));
    const Expr sources[] = {lt(gid(), i32(5)),        gid(),
                            cast(Scalar::U32, gid()), cast(Scalar::I64, gid()),
                            cast(Scalar::U64, gid()), var("fa", Scalar::F32),
                            var("da", Scalar::F64)};
    // Every cast from every type to every other, then back to a number.
    for (const Expr& from : sources)
        for (Scalar to : all)
            fold(cast(Scalar::F64, cast(to, from)));
    body.push_back(gstore("out", gid(), var("acc", Scalar::I64)));
    return make_kernel("int_ops", params, {}, body);
}

Kernel indices_2d() {
    const Scalar U = Scalar::U64;
    std::vector<Stmt> body = {let("acc", Const::make_int(U, 0))};
    for (const auto& info : plexus::intrinsic_catalog()) {
        if (!info.args.empty() || info.result == Scalar::Void || is_float(info.result)) continue;
        if (info.name.rfind("subgroup_", 0) == 0)
            continue; // positions in a subgroup: tests/core/kernel/subgroups
        body.push_back(assign(
            "acc", add(mul(var("acc", U), Const::make_int(U, 31)), cast(U, call(info.name)))));
    }
    const Expr index = add(mul(call("global_id_y"), call("global_size_x")), call("global_id_x"));
    body.push_back(gstore("out", index, var("acc", U)));
    return make_kernel("indices_2d", {buffer("out", U, Access::Write)}, {}, body);
}

Kernel control_flow() {
    const Scalar I = Scalar::I32;
    const Expr i = var("i", I), acc = var("acc", I);
    return make_kernel(
        "control_flow", {buffer("out", I, Access::Write), scalar("n", I), scalar("limit", I)}, {},
        {let_gid(), when(bin(BinaryOp::Ge, gid(), var("n", I)), Return::make()), let("acc", i32(0)),
         For::make("i", i32(0), var("limit", I), i32(1),
                   block({when(bin(BinaryOp::Eq, bin(BinaryOp::Rem, i, i32(3)), i32(0)),
                               Continue::make()),
                          when(bin(BinaryOp::Gt, add(i, gid()), i32(100)), Break::make()),
                          assign("acc", add(acc, i))})),
         While::make(Const::make_bool(true),
                     block({assign("acc", bin(BinaryOp::Shr, acc, i32(1))),
                            when(lt(acc, i32(10)), Break::make(), Continue::make())})),
         Fence::make(FenceScope::WorkGroup), Fence::make(FenceScope::Device),
         gstore("out", gid(), acc)});
}

Kernel native_with_fallback() {
    return make_kernel("native_fallback", {buffer("out", Scalar::I32, Access::Write)}, {},
                       {let_gid(), Native::make({{"cuda", "out[gid] = __popc(gid);"}},
                                                gstore("out", gid(), i32(7)))});
}

Kernel native_without_fallback() {
    return make_kernel("native_only", {buffer("out", Scalar::I32, Access::Write)}, {},
                       {let_gid(), Native::make({{"cuda", "out[gid] = __popc(gid);"}}, nullptr)});
}

std::vector<Named> all_kernels() {
    std::vector<Named> out;
    for (Kernel k : {vector_add(), reduce_sum(), matmul_tiled(), histogram(), atomics64(),
                     atomics_all(), float_atomics(), math(Scalar::F32), math(Scalar::F64),
                     math_each(Scalar::F32), math_each(Scalar::F64), fast_math(), ilogb(),
                     int_ops(), indices_2d(), control_flow(), native_with_fallback()})
        out.push_back({k.name, k});
    return out;
}

} // namespace ptxtest
