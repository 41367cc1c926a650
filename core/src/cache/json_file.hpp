// Small JSON documents beside the compiled modules (tuning choices, routing history): read
// whole, written to a temporary file and renamed, so a reader sees the old file or the new one.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace plexus::detail {

// The document, or std::nullopt when the file is absent, unreadable or not JSON.
std::optional<nlohmann::json> read_json_file(const std::string& path);

// The paths of the .json files in `dir`, sorted; none when it is not a directory.
std::vector<std::string> json_files(const std::string& dir);

// A temporary file beside `path` (temp_name, write_all), renamed over it; on any failure the
// temporary file is removed and Error(InvalidArgument) names the file and the cause.
void write_atomically(const std::string& path, const std::string& text);

} // namespace plexus::detail
