// Host code: vector_add (results, aliasing, vectorization, compile time), 2-D and 3-D index
// intrinsics, the local-memory rule, and the errors compile_host reports.
#include "host_test.hpp"

#include "plexus/error.hpp"

#include <chrono>
#include <cstdio>
#include <regex>
#include <thread>

using namespace host_test;

namespace {

ir::Kernel vector_add() {
    return kernel("vector_add",
                  {buf("a", Scalar::F32), buf("b", Scalar::F32),
                   buf("c", Scalar::F32, ir::Access::Write), scalar("n", Scalar::I32)},
                  {let("i", gid()),
                   if_(lt(var("i"), var("n")), store("c", var("i"),
                                                     add(load("a", Scalar::F32, var("i")),
                                                         load("b", Scalar::F32, var("i")))))});
}

} // namespace

TEST_CASE("vector_add: every element, sizes that are not multiples of the group") {
    auto k = vector_add();
    auto hk = compile(k);
    for (int n : {1, 255, 1000, 10007}) {
        for (uint32_t local : {1u, 64u, 256u}) {
            auto a = random_vec<float>(n, -100.f, 100.f), b = random_vec<float>(n, -100.f, 100.f);
            std::vector<float> c(n + 1, -7.f); // one guard element past the end
            int32_t nn = n;
            run(*hk, k, {a.data(), b.data(), c.data(), &nn}, grid1(n, local));
            for (int i = 0; i < n; ++i)
                REQUIRE(c[i] == a[i] + b[i]); // exact: one IEEE add
            CHECK(c[n] == -7.f);
        }
    }
}

TEST_CASE("vector_add: the same buffer passed as input and output") {
    auto k = vector_add();
    auto hk = compile(k);
    const int n = 5003;
    auto a = random_vec<float>(n, -1.f, 1.f), b = random_vec<float>(n, -1.f, 1.f);
    auto want = a;
    for (int i = 0; i < n; ++i)
        want[i] = a[i] + b[i];
    int32_t nn = n;
    run(*hk, k, {a.data(), b.data(), a.data(), &nn}, grid1(n, 128));
    for (int i = 0; i < n; ++i)
        REQUIRE(a[i] == want[i]);
}

TEST_CASE("vector_add: the work-item loop vectorizes, and compiling is quick") {
    auto k = vector_add();
    std::unique_ptr<plexus::codegen::HostKernel> hk;
    for (int i = 0; i < 3; ++i) {
        auto t0 = std::chrono::steady_clock::now();
        hk = compile(k);
        double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                        .count();
        std::printf("compile_host(vector_add) #%d: %.1f ms\n", i + 1, ms);
    }
    const std::string& text = hk->llvm_ir();
    std::smatch m;
    bool vector = std::regex_search(text, m, std::regex(R"(<(4|8|16|32) x float>)"));
    CHECK_MESSAGE(vector, "no vector float type in the optimized IR:\n" << text);
    if (vector) std::printf("vector type in the optimized IR: %s\n", m.str().c_str());
    CHECK(text.find("define void @plx_wg_vector_add(") != std::string::npos);
}

TEST_CASE("2-D and 3-D launches: every index intrinsic of every work-item") {
    // out[linear global index] packs the indices; every field is checked separately.
    auto idx = [](const char* name, char axis) {
        return cast(Scalar::U64, call(std::string(name) + "_" + axis));
    };
    for (uint32_t dims : {2u, 3u}) {
        Grid g = dims == 2 ? Grid{2, {37, 21, 1}, {8, 4, 1}} : Grid{3, {11, 6, 5}, {4, 2, 3}};
        std::vector<Stmt> body;
        Expr gx = call("global_id_x"), gy = call("global_id_y"), gz = call("global_id_z");
        Expr W = call("global_size_x"), H = call("global_size_y");
        // The padded index space is written whole, so global_size is checked as well.
        body.push_back(let("at", add(mul(add(mul(gz, H), gy), W), gx)));
        const char* names[] = {"global_id",  "local_id",   "group_id",
                               "local_size", "num_groups", "global_size"};
        for (int f = 0; f < 6; ++f)
            for (int d = 0; d < 3; ++d) {
                char axis = char('x' + d);
                Expr v = std::string(names[f]).rfind("global_", 0) == 0
                             ? call(std::string(names[f]) + "_" + axis)
                             : idx(names[f], axis);
                body.push_back(store("out",
                                     add(mul(var("at", Scalar::U64), ci(18, Scalar::U64)),
                                         ci(f * 3 + d, Scalar::U64)),
                                     v));
            }
        auto k = kernel(dims == 2 ? "grid2d" : "grid3d",
                        {buf("out", Scalar::U64, ir::Access::Write)}, body);
        auto hk = compile(k);
        uint64_t groups[3], padded[3];
        for (int d = 0; d < 3; ++d) {
            groups[d] = (g.global[d] + g.local[d] - 1) / g.local[d];
            padded[d] = groups[d] * g.local[d];
        }
        std::vector<uint64_t> out(padded[0] * padded[1] * padded[2] * 18, ~0ull);
        run(*hk, k, {out.data()}, g);
        for (uint64_t z = 0; z < padded[2]; ++z)
            for (uint64_t y = 0; y < padded[1]; ++y)
                for (uint64_t x = 0; x < padded[0]; ++x) {
                    uint64_t id[3] = {x, y, z};
                    const uint64_t* o = &out[((z * padded[1] + y) * padded[0] + x) * 18];
                    for (int d = 0; d < 3; ++d) {
                        REQUIRE(o[0 + d] == id[d]);
                        REQUIRE(o[3 + d] == id[d] % g.local[d]);
                        REQUIRE(o[6 + d] == id[d] / g.local[d]);
                        REQUIRE(o[9 + d] == g.local[d]);
                        REQUIRE(o[12 + d] == groups[d]);
                        REQUIRE(o[15 + d] == padded[d]);
                    }
                }
    }
}

TEST_CASE("host_local_bytes: shared arrays 64-byte aligned, plus per-work-item copies") {
    CHECK(plexus::codegen::host_local_bytes(vector_add(), 256) == 0);
    // Two shared arrays of 10 and 3 floats: 64 + 64 bytes; `v` (i32, assigned again) and `w`
    // (f64, a load) cross the barrier, `t` does not; `r` crosses it but is a pure function of
    // the local id, evaluated again after the barrier instead of stored.
    using plexus::codegen::host::Storage;
    auto k = kernel(
        "local_rule", {buf("out", Scalar::F64, ir::Access::Write)},
        {let("v", cast(Scalar::I32, lid())), assign("v", add(var("v"), ci(1))),
         let("w", cast(Scalar::F64, lload("s2", Scalar::F32, ci(1)))), let("t", ci(1)),
         let("r", mul(cast(Scalar::I32, lid()), ci(2))), lstore("s1", ci(0), cf(1.0)), barrier(),
         store("out", add(var("v"), var("r")),
               add(var("w", Scalar::F64), cast(Scalar::F64, lload("s2", Scalar::F32, ci(0)))))},
        {{"s1", Scalar::F32, 10}, {"s2", Scalar::F32, 3}});
    auto layout = plexus::codegen::host::analyze(k);
    CHECK(layout.shared_offset == std::vector<uint64_t>{0, 64});
    CHECK(layout.decls == std::vector<Storage>{Storage::Value, Storage::PerItem, Storage::PerItem,
                                               Storage::Private, Storage::Recompute});
    CHECK(layout.per_item_bytes == 12);
    // Per-item copies come in odd multiples of 16 work-items (Layout::item_padding).
    CHECK(plexus::codegen::host_local_bytes(k, 100) == 128 + 112 * 12);
    CHECK(plexus::codegen::host_local_bytes(k, 8) == 128 + 16 * 12);
    CHECK(plexus::codegen::host_local_bytes(k, 256) == 128 + 272 * 12);
    CHECK(plexus::codegen::host_local_bytes(k, 1024) == 128 + 1040 * 12);
}

TEST_CASE("errors: native code for this backend, no fallback, an invalid kernel") {
    auto native = [](std::map<std::string, std::string> code, Stmt fallback) {
        return kernel("nat", {buf("o", Scalar::I32, ir::Access::Write)},
                      {ir::Native::make(std::move(code), std::move(fallback))});
    };
    auto fallback = store("o", gid(), ci(5));
    auto expect = [](const ir::Kernel& k, plexus::ErrorCode code, const char* words) {
        try {
            compile(k);
            FAIL("compile_host accepted kernel " << k.name);
        } catch (const plexus::Error& e) {
            CHECK(e.code() == code);
            CHECK_MESSAGE(std::string(e.what()).find(words) != std::string::npos, e.what());
        }
    };
    expect(native({{"native", "x = 1;"}}, fallback), plexus::ErrorCode::InvalidKernel,
           "backend 'native'");
    expect(native({{"cuda", "x = 1;"}}, nullptr), plexus::ErrorCode::InvalidKernel,
           "no portable fallback");
    expect(kernel("bad", {buf("o", Scalar::I32, ir::Access::Read)}, {store("o", ci(0), ci(1))}),
           plexus::ErrorCode::InvalidKernel, "read-only");

    // Another backend's code is ignored and the fallback runs.
    auto k = native({{"cuda", "o[threadIdx.x] = 5;"}}, fallback);
    auto hk = compile(k);
    std::vector<int32_t> o(64, 0);
    run(*hk, k, {o.data()}, grid1(64, 16));
    for (int v : o)
        REQUIRE(v == 5);
}

TEST_CASE("compile_host from several threads at once") {
    auto k = vector_add();
    std::vector<std::unique_ptr<plexus::codegen::HostKernel>> kernels(4);
    std::vector<std::thread> threads;
    for (auto& slot : kernels)
        threads.emplace_back([&] { slot = compile(k); });
    for (auto& t : threads)
        t.join();
    const int n = 999;
    auto a = random_vec<float>(n, -1.f, 1.f), b = random_vec<float>(n, -1.f, 1.f);
    for (auto& hk : kernels) {
        std::vector<float> c(n);
        int32_t nn = n;
        run(*hk, k, {a.data(), b.data(), c.data(), &nn}, grid1(n, 32));
        for (int i = 0; i < n; ++i)
            REQUIRE(c[i] == a[i] + b[i]);
    }
}

TEST_CASE("an assigned scalar parameter is each work-item's own variable") {
    auto k =
        kernel("param_var", {buf("out", Scalar::I32, ir::Access::Write), scalar("p", Scalar::I32)},
               {assign("p", add(var("p"), gid())), assign("p", mul(var("p"), ci(3))),
                store("out", gid(), var("p"))});
    auto hk = compile(k);
    std::vector<int32_t> out(300);
    int32_t p = 11;
    run(*hk, k, {out.data(), &p}, grid1(out.size(), 50));
    CHECK(p == 11); // the argument itself is never written
    for (int i = 0; i < 300; ++i)
        REQUIRE(out[i] == (11 + i) * 3);
}
