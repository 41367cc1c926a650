// The host side of the test kernels' records and variant: plain structs with the IR's layout
// (unit_types_test checks them against the IR's declarations), and plexus::Variant, as a
// program using plexus would pass them.
#pragma once

#include "plexus/half.hpp"
#include "plexus/kernel_types.hpp"

#include <cstdint>
#include <cstring>

namespace codegen_test {

using plexus::bf16;
using plexus::half;
using F3 = plexus::Vec<float, 3>;

struct Particle {
    F3 pos, vel;
    float mass;
    bf16 charge;
};
struct Cell {
    Particle p;
    uint16_t id;
    half h;
    uint8_t flag;
};
struct Pair {
    int32_t a;
    int16_t s; // named `short` in the IR, which the generators rename
};
using Kind = plexus::Variant<"Kind", plexus::Case<"free">, plexus::Case<"charged", half>,
                             plexus::Case<"anchored", F3>, plexus::Case<"boxed", Pair>>;

// The payload of case C of a Kind. (Kind::get<C>() does the same, but its memcpy into a type
// with member initializers trips GCC's -Wclass-memaccess, in kernel_types.hpp.)
template <plexus::FixedString C> Kind::payload_of<C> payload(const Kind& k) {
    Kind::payload_of<C> p;
    std::memcpy(static_cast<void*>(&p), &k.payload, sizeof p);
    return p;
}

} // namespace codegen_test
