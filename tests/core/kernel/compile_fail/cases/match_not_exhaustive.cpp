// expect: every case of the variant needs exactly one
// A match must handle every case (or have an otherwise).
#include "plexus/kernel.hpp"
namespace px = plexus;
using Kind = px::Variant<"Kind", px::Case<"free">, px::Case<"charged", float>>;
void f() {
    px::kernel("k", [](px::In<Kind> in) { px::Match(in[0], px::on<"free">([] {})); });
}
