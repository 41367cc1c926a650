// Manifest reading: JSON parsing and the checks of every field, with a reason for the first
// field that is wrong.
#include "loader/manifest.hpp"

#include <cstdio>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "config/json_error.hpp"

namespace fs = std::filesystem;

namespace plexus::detail {

Manifest parse_manifest(std::string_view text, const fs::path& file) {
    Manifest m;
    m.file = file.string();
    nlohmann::json doc;
    try {
        doc = nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception& e) { // parse_error, or out_of_range for "1e999"
        m.error = detail::json_error_text(e);
        return m;
    }
    if (!doc.is_object()) {
        m.error = "expected a JSON object at the top level";
        return m;
    }
    auto string_field = [&](const char* key) -> std::optional<std::string> {
        auto it = doc.find(key);
        if (it == doc.end()) {
            m.error = std::string("the key '") + key + "' is missing";
            return std::nullopt;
        }
        if (!it->is_string() || it->get<std::string>().empty()) {
            m.error = std::string("'") + key + "' must be a non-empty string, found " + it->dump();
            return std::nullopt;
        }
        return it->get<std::string>();
    };
    auto version = doc.find("file_format_version");
    if (version == doc.end() || !version->is_number_integer() || version->get<long long>() != 1) {
        m.error = "'file_format_version' must be 1, found " +
                  (version == doc.end() ? std::string("nothing") : version->dump());
        return m;
    }
    auto name = string_field("name");
    if (!name) return m;
    m.name = *name;
    auto library = string_field("library");
    if (!library) return m;
    fs::path lib = *library;
    m.library = (lib.is_absolute() ? lib : file.parent_path() / lib).lexically_normal().string();
    auto abi = string_field("abi");
    if (!abi) return m;
    unsigned major = 0, minor = 0;
    char extra = 0;
    if (std::sscanf(abi->c_str(), "%u.%u%c", &major, &minor, &extra) != 2) {
        m.error = "'abi' must be \"MAJOR.MINOR\", found \"" + *abi + "\"";
        return m;
    }
    m.abi_major = major;
    m.abi_minor = minor;
    if (auto p = doc.find("priority"); p != doc.end()) {
        // The configuration's range; a larger value would wrap around in an int.
        const bool in_range =
            p->is_number_integer() &&
            !(p->is_number_unsigned() && p->get<unsigned long long>() > 1'000'000) &&
            p->get<long long>() >= -1'000'000 && p->get<long long>() <= 1'000'000;
        if (!in_range) {
            m.error =
                "'priority' must be an integer between -1000000 and 1000000, found " + p->dump();
            return m;
        }
        m.priority = static_cast<int>(p->get<long long>());
    }
    return m;
}

Manifest read_manifest(const fs::path& file) {
    std::ifstream in(file, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return parse_manifest(text.str(), file);
}

} // namespace plexus::detail
