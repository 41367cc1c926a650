// Plugin manifests (NAME.json beside a library): what they declare, read strictly so that a
// broken manifest is reported with its reason instead of being half-used.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace plexus::detail {

struct Manifest {
    std::string file;
    std::string name;
    std::string library; // absolute
    unsigned abi_major = 0, abi_minor = 0;
    std::optional<int> priority;
    std::string error; // why the manifest is unusable, "" when it is fine
};

// Parses the text of the manifest `file`; a relative `library` is relative to its folder.
// Never throws: a bad manifest comes back with `error` set.
Manifest parse_manifest(std::string_view text, const std::filesystem::path& file);

// Reads and parses the manifest `file`.
Manifest read_manifest(const std::filesystem::path& file);

} // namespace plexus::detail
