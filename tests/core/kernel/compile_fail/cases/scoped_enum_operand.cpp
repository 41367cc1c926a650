// expect: no match for
// A scoped enum does not convert to a number implicitly, in a kernel as in C++: static_cast it.
#include "plexus/kernel.hpp"
namespace px = plexus;
enum class Op { Add, Mul };
void f() {
    px::kernel("k", [](px::Out<int> out) {
        px::Int i = px::global_id(0);
        out[i] = i + Op::Mul;
    });
}
