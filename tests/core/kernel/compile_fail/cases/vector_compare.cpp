// expect: operator<
// Vectors do not compare: a comparison takes scalars (compare lane by lane).
#include "plexus/kernel.hpp"
namespace px = plexus;
void f() {
    px::kernel("k", [](px::In<px::Vec<float, 4>> in, px::Out<int32_t> out) {
        px::If(in[0] < in[1], [&] { out[0] = 1; });
    });
}
