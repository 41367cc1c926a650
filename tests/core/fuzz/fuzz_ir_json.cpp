// Fuzz target: the JSON IR reader and the validator (the public plexus::ir::from_json and
// plexus::ir::validate). Any input must end in a kernel or a plexus::Error, never a crash, a
// hang or another exception.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "plexus/error.hpp"
#include "plexus/ir.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    try {
        plexus::ir::Kernel k = plexus::ir::from_json(text, "fuzz.json");
        plexus::ir::validate(k);
    } catch (const plexus::Error&) {
    }
    return 0;
}
