// The text of a JSON reader's error without nlohmann's "[json.exception.parse_error.101] ", for
// the messages of every reader of JSON files (configuration, manifests).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace plexus::detail {

// "not valid JSON: parse error at line 3, column 1: ..."; a number too large for a double
// ("1e999") is reported the same way, never as an exception of another type.
inline std::string json_error_text(const nlohmann::json::exception& e) {
    std::string what = e.what();
    if (auto pos = what.find("] ");
        what.rfind("[json.exception", 0) == 0 && pos != std::string::npos)
        what = what.substr(pos + 2);
    return "not valid JSON: " + what;
}

} // namespace plexus::detail
