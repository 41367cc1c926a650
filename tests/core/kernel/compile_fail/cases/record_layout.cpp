// expect: differ from the IR's layout
// A packed struct cannot be a record: its fields are not where the IR puts them.
#include "plexus/kernel.hpp"
#pragma pack(push, 1)
struct Packed {
    uint8_t flag;
    float value;
};
#pragma pack(pop)
PLEXUS_RECORD(Packed, flag, value);
