// expect: subgroup operations take numbers and vectors of numbers
// A record has no subgroup operation: it goes field by field.
#include "plexus/subgroup.hpp"
namespace px = plexus;
struct P {
    float x;
    int32_t n;
};
PLEXUS_RECORD(P, x, n);
void f() {
    px::kernel("k",
               [](px::In<P> in, px::Out<P> out) { out[0] = px::shuffle(px::Var<P>(in[0]), 1); });
}
