// expect: px::copy_async<N> copies 4, 8 or 16 bytes
// 3 halves are 6 bytes, which cp.async cannot move.
#include "plexus/async_copy.hpp"
namespace px = plexus;
void f() {
    px::kernel("k", [](px::In<px::half> in) {
        auto t = px::shared<px::half>(64);
        px::copy_async<3>(t, 0, in, 0, 3);
    });
}
