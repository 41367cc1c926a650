// Fuzz target: the plugin manifest reader, which never throws: every input is a manifest or
// a manifest with its error set. Also checks that a usable manifest says what it promises.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "loader/manifest.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    const plexus::detail::Manifest m =
        plexus::detail::parse_manifest(text, "/fuzz/plugins/acme.json");
    if (m.error.empty() && (m.name.empty() || m.library.empty() || m.library[0] != '/'))
        std::abort();
    if (m.error.empty() && m.priority && (*m.priority < -1'000'000 || *m.priority > 1'000'000))
        std::abort();
    return 0;
}
