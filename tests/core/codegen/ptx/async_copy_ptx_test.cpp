// The PTX of asynchronous copies: cp.async (.ca for 4 and 8 bytes, .cg for 16) with commit and
// wait groups for sm_80 and sm_90a, the copy done with plain loads and stores for sm_75; ptxas
// assembles each.
#include <doctest/doctest.h>

#include "core/kernel/async_copy/async_copy_kernel.hpp"
#include "ptx_check.hpp"

#include <regex>

using ptxtest::check_assembles;
using ptxtest::count;
using ptxtest::generate;
using ptxtest::has;

#if PLEXUS_TEST_HAVE_LLVM

TEST_CASE("async copies: cp.async with a src-size from sm_80, plain loads and stores below, and "
          "ptxas accepts both") {
    const std::regex copy(R"(cp\.async\.c[ag]\.shared\.global)");
    for (const auto* k : {&async_copy_test::tiles_kernel<plexus::half, 8>().ir(),
                          &async_copy_test::tiles_kernel<float, 1>().ir(),
                          &async_copy_test::tiles_kernel<int64_t, 1>().ir()}) {
        for (const char* arch : {"sm_80", "sm_90a"}) {
            const std::string ptx = generate(*k, arch);
            INFO(k->name, " ", arch);
            // The prologue and the copy in the loop, each one instruction of the whole size.
            CHECK(count(ptx, copy) >= 2);
            CHECK(has(ptx, "cp.async.commit_group"));
            CHECK(has(ptx, "cp.async.wait_group 1"));
            CHECK(has(ptx, "cp.async.wait_group 0"));
            check_assembles(k->name, ptx, arch);
        }
        const std::string old = generate(*k, "sm_75");
        CHECK(!has(old, "cp.async"));
        check_assembles(k->name, old, "sm_75");
    }
    CHECK(has(generate(async_copy_test::tiles_kernel<plexus::half, 8>().ir(), "sm_80"),
              "cp.async.cg.shared.global"));
    CHECK(has(generate(async_copy_test::tiles_kernel<float, 1>().ir(), "sm_80"),
              "cp.async.ca.shared.global"));
}

#endif
