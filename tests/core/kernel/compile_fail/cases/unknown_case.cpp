// expect: not a case of this variant
// A case name that the variant does not have does not compile.
#include "plexus/kernel.hpp"
namespace px = plexus;
using Kind = px::Variant<"Kind", px::Case<"free">, px::Case<"charged", float>>;
void f() {
    px::kernel("k", [](px::Out<Kind> out) { out[0] = px::make_variant<Kind, "nope">(); });
}
