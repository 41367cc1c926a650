// expect: px::fast::exp takes float or a vector of float: the fast functions exist in f32 only
// The fast functions are f32 only: a double argument does not compile.
#include "plexus/kernel.hpp"
namespace px = plexus;
void f() {
    px::kernel("k", [](px::In<double> x, px::Out<double> y) {
        y[0] = px::fast::exp(px::Value<double>(x[0]));
    });
}
