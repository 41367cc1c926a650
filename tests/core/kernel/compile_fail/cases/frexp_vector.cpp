// expect: frexp(plexus::Value<plexus::Vec<float, 4> >)
// frexp takes a float or a double: a vector (whose exponent would be a vector too) does not
// compile.
#include "plexus/kernel.hpp"
namespace px = plexus;
void f() {
    px::kernel("k", [](px::In<px::Vec<float, 4>> x, px::Out<float> y) {
        y[0] = px::frexp(px::Value<px::Vec<float, 4>>(x[0])).mantissa.x();
    });
}
