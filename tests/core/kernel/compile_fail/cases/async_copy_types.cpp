// expect: px::copy_async copies between a shared array and a buffer of one element type
// An f32 buffer into an f16 shared array would need a conversion, which a copy does not do.
#include "plexus/async_copy.hpp"
namespace px = plexus;
void f() {
    px::kernel("k", [](px::In<float> in) {
        auto t = px::shared<px::half>(64);
        px::copy_async<8>(t, 0, in, 0, 8);
    });
}
