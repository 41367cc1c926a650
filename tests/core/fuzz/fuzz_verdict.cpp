// Fuzz target: the verdict cache's file reader, which reads files from disk that may be
// corrupt: it never throws, and accepts only a verdict of exactly the key it was asked for.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "isolation/verdict.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    const std::string key =
        "plexus 0.1.0 abi 1.0 size 1 mtime_ns 1 content 0000000000000001 options "
        "0000000000000001 path /fuzz/libplexus-acme.so";
    std::optional<plexus::detail::Verdict> v = plexus::detail::parse_verdict(text, key);
    if (v && (v->result == plexus::detail::VerdictResult::Unchecked || !v->from_cache))
        std::abort();
    plexus::detail::verdict_path(text);
    return 0;
}
