// Asynchronous copies that must fail on the interpreter, at launch, naming the rule cp.async
// would break: a source or destination index off the copy's alignment, valid outside 0 .. N,
// an element read past the buffer or written past the shared array. And one that reads
// nothing past `valid` must run.
#include "fixture.hpp"

#include <plexus/plexus.hpp>

namespace interp_test {
namespace {

namespace px = plexus;

// Work-item 0 copies 8 f16 (16 bytes) from a[src] into the shared array ("shared0") at [dst] with
// `valid`, then writes t out.
std::string copy_error(int32_t dst, int32_t src, int32_t valid, size_t a_elements = 64) {
    static const auto k = px::kernel(
        "copies", {"a", "d", "dst", "src", "valid"},
        [](px::In<px::half> a, px::Out<px::half> d, px::Int dst, px::Int src, px::Int valid) {
            auto t = px::shared<px::half>(32);
            px::If(px::local_id(0) == 0, [&] {
                px::copy_async<8>(t, dst, a, src, valid);
                px::copy_async_commit();
                px::copy_async_wait(0);
                px::For(0, 32, [&](px::Int i) { d[i] = t[i]; });
            });
        });
    Buffer ba(std::vector<px::half>(a_elements, px::half(1.0f))), bd(32 * sizeof(px::half));
    Module m(k.ir());
    REQUIRE(m.status() == PLX_OK);
    const plx_status s = launch(m.kernel(), dims1(8, 8), {ba, bd, dst, src, valid});
    CHECK(api().queue_sync(Plugin::get().queue) == PLX_OK);
    return s == PLX_OK ? "" : last_error();
}

} // namespace

TEST_CASE("async copies: cp.async's alignment, valid within 0 .. N, and bounds stop the launch") {
    CHECK(copy_error(8, 16, 8).empty());
    // Reading nothing, a source index past the buffer is fine; a tail reads only valid elements.
    CHECK(copy_error(8, 1024, 0).empty());
    CHECK(copy_error(8, 56, 8).empty());
    CHECK(copy_error(8, 64, 0, 68).empty());
    CHECK(copy_error(8, 64, 4, 68).empty());
    const std::string src = copy_error(8, 4, 8);
    INFO(src);
    CHECK(contains(src, "kernel \"copies\": async copy of 8 elements from \"a\"[4] into "
                        "\"shared0\"[8], valid 8: the source "
                        "starts at byte 8 of the buffer, not a multiple of 16 (cp.async's "
                        "alignment: the source index "
                        "must be a multiple of 8)"));
    CHECK(contains(src, "work-item global id (0)"));
    CHECK(contains(copy_error(4, 0, 8),
                   "the destination starts at byte 8 of the shared array, not a multiple of 16"));
    CHECK(contains(copy_error(8, 0, 9), "valid 9: valid must be from 0 to 8"));
    CHECK(contains(copy_error(8, 0, -1), "valid -1: valid must be from 0 to 8"));
    CHECK(contains(copy_error(8, 64, 5, 68), "out-of-bounds async copy from \"a\"[68]"));
    const std::string into = copy_error(32, 0, 8);
    INFO(into);
    CHECK(contains(into, "out-of-bounds async copy into \"shared0\"[32]"));
    check_vector_add_works();
}

} // namespace interp_test
