// Fuzz target: the configuration reader. Any input must end in a Config or a plexus::Error
// (InvalidConfig), never a crash or another exception.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "plexus/config.hpp"
#include "plexus/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    try {
        plexus::Config::parse(text, "/fuzz/config.json");
    } catch (const plexus::Error& e) {
        if (e.code() != plexus::ErrorCode::InvalidConfig) throw;
    }
    return 0;
}
