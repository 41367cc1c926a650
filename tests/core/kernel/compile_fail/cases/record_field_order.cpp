// expect: differ from the IR's layout
// PLEXUS_RECORD must list the fields in declaration order.
#include "plexus/kernel.hpp"
struct Pair {
    float a;
    double b;
};
PLEXUS_RECORD(Pair, b, a);
