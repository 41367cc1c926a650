// Config::parse / from_file / load: a strict reader of the JSON configuration. Every error
// names the file, the JSON path and what was expected versus found.
#include "plexus/config.hpp"

#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <limits>
#include <sstream>

#include "config/env.hpp"
#include "config/json_error.hpp"
#include "config/log.hpp"
#include "plexus/error.hpp"

namespace plexus {

namespace {

using nlohmann::json;

// What a value is, for "found ..." in messages: its kind and, when short, its text.
std::string describe(const json& v) {
    auto with_text = [&](const char* kind) {
        std::string text = v.dump();
        if (text.size() > 40) text = text.substr(0, 37) + "...";
        return std::string(kind) + " (" + text + ")";
    };
    switch (v.type()) {
    case json::value_t::null: return "null";
    case json::value_t::boolean: return with_text("a boolean");
    case json::value_t::string: return with_text("a string");
    case json::value_t::number_integer:
    case json::value_t::number_unsigned: return with_text("an integer");
    case json::value_t::number_float: return with_text("a number");
    case json::value_t::array: return "an array";
    case json::value_t::object: return "an object";
    default: return "an unsupported value";
    }
}

class Reader {
public:
    explicit Reader(std::string file) : file_(std::move(file)) {}

    [[noreturn]] void fail(const std::string& path, const std::string& message) const {
        ErrorContext ctx;
        ctx.file = file_.empty() ? "<config>" : file_;
        ctx.json_path = path;
        throw Error(ErrorCode::InvalidConfig, message, ctx);
    }
    [[noreturn]] void expected(const std::string& path, const std::string& what,
                               const json& found) const {
        fail(path, "expected " + what + ", found " + describe(found));
    }

    void check_keys(const json& obj, const std::string& path,
                    std::initializer_list<const char*> known) const {
        for (const auto& [key, value] : obj.items()) {
            bool ok = false;
            std::string list;
            for (const char* k : known) {
                ok = ok || key == k;
                list += list.empty() ? k : std::string(", ") + k;
            }
            if (!ok) fail(join(path, key), "unknown key '" + key + "'; expected one of: " + list);
        }
    }

    const json& object(const json& v, const std::string& path) const {
        if (!v.is_object()) expected(path, "an object", v);
        return v;
    }
    bool boolean(const json& v, const std::string& path) const {
        if (!v.is_boolean()) expected(path, "a boolean (true or false)", v);
        return v.get<bool>();
    }
    std::string string(const json& v, const std::string& path) const {
        if (!v.is_string()) expected(path, "a string", v);
        return v.get<std::string>();
    }
    long long integer(const json& v, const std::string& path, long long lo, long long hi,
                      const std::string& what) const {
        if (!v.is_number_integer()) expected(path, what, v);
        if (v.is_number_unsigned() &&
            v.get<unsigned long long>() > static_cast<unsigned long long>(hi))
            expected(path, what, v);
        long long x = v.get<long long>();
        if (x < lo || x > hi) expected(path, what, v);
        return x;
    }
    std::string one_of(const json& v, const std::string& path,
                       std::initializer_list<const char*> values) const {
        std::string list;
        for (const char* s : values)
            list += list.empty() ? std::string("\"") + s + "\"" : std::string(", \"") + s + "\"";
        if (!v.is_string()) expected(path, "one of " + list, v);
        std::string s = v.get<std::string>();
        for (const char* candidate : values)
            if (s == candidate) return s;
        expected(path, "one of " + list, v);
    }
    std::vector<std::string> strings(const json& v, const std::string& path) const {
        if (!v.is_array()) expected(path, "an array of strings", v);
        std::vector<std::string> out;
        for (size_t i = 0; i < v.size(); ++i)
            out.push_back(string(v[i], path + "[" + std::to_string(i) + "]"));
        return out;
    }

    static std::string join(const std::string& path, const std::string& key) {
        return path.empty() ? key : path + "." + key;
    }

private:
    std::string file_;
};

BackendConfig parse_backend(const Reader& r, const json& v, const std::string& path) {
    r.object(v, path);
    r.check_keys(v, path,
                 {"enabled", "priority", "devices", "threads", "compiler", "cpu", "features",
                  "streaming_stores", "options"});
    BackendConfig b;
    b.section = v;
    for (const auto& [key, value] : v.items()) {
        const std::string at = Reader::join(path, key);
        if (key == "enabled") {
            b.enabled = r.boolean(value, at);
        } else if (key == "priority") {
            b.priority = static_cast<int>(r.integer(value, at, -1'000'000, 1'000'000,
                                                    "an integer between -1000000 and 1000000"));
        } else if (key == "devices") {
            b.devices = r.string(value, at);
            if (b.devices->empty())
                r.fail(at, "expected \"all\", \"gpu\", \"cpu\", \"accelerator\" or a device "
                           "name substring, found an empty string");
        } else if (key == "threads") {
            b.threads = static_cast<unsigned>(
                r.integer(value, at, 1, 65536, "an integer between 1 and 65536"));
        } else if (key == "compiler") {
            b.compiler = r.one_of(value, at, {"llvm", "nvrtc"});
        } else if (key == "cpu" || key == "features") {
            (key == "cpu" ? b.cpu : b.features) = r.string(value, at);
        } else if (key == "streaming_stores") {
            const char* what = "a byte count (an integer >= 0) or false";
            if (value.is_boolean() && !value.get<bool>())
                b.streaming_stores = BackendConfig::never;
            else
                b.streaming_stores = static_cast<uint64_t>(
                    r.integer(value, at, 0, std::numeric_limits<long long>::max(), what));
        } else if (key == "options") {
            r.object(value, at);
        }
    }
    return b;
}

std::string absolute_dir(const std::string& dir, const std::string& origin) {
    std::filesystem::path p = detail::expand_tilde(dir);
    if (p.is_relative() && !origin.empty()) {
        std::filesystem::path base = std::filesystem::path(origin).parent_path();
        if (base.empty()) base = ".";
        p = base / p;
    }
    if (p.is_relative()) p = std::filesystem::absolute(p);
    return p.lexically_normal().string();
}

} // namespace

const char* to_string(PluginValidation v) {
    switch (v) {
    case PluginValidation::FirstLoad: return "first_load";
    case PluginValidation::Always: return "always";
    case PluginValidation::Never: return "never";
    }
    return "unknown";
}

const char* to_string(Routing r) {
    return r == Routing::Measured ? "measured" : "priority";
}

std::string Config::default_cache_dir() {
    // A privileged process must not write where the user who ran it can plant links.
    if (detail::privileged_process()) return {};
    if (auto xdg = detail::get_env("XDG_CACHE_HOME")) return *xdg + "/plexus";
    return detail::home_dir() + "/.cache/plexus";
}

Config Config::parse(std::string_view json_text, const std::string& origin) {
    Reader r(origin);
    json doc;
    try {
        doc = json::parse(json_text);
    } catch (const json::parse_error& e) {
        // nlohmann's text already says "at line L, column C"; add the byte for editors.
        r.fail("", detail::json_error_text(e) + " (byte " + std::to_string(e.byte) + ")");
    } catch (const json::exception& e) { // out_of_range: a number too large ("1e999")
        r.fail("", detail::json_error_text(e));
    }
    r.object(doc, "(top level)");
    r.check_keys(doc, "",
                 {"plugin_dirs", "backends", "kernels", "fallback", "profiling", "cache_dir",
                  "log_level", "validate_plugins", "plugin_init_timeout_ms", "trace",
                  "compile_threads", "tuning", "tuning_budget_ms", "routing"});

    Config c;
    c.source = origin;
    for (const auto& [key, value] : doc.items()) {
        if (key == "plugin_dirs") {
            for (const std::string& dir : r.strings(value, key)) {
                if (dir.empty()) r.fail(key, "expected a directory, found an empty string");
                c.plugin_dirs.push_back(absolute_dir(dir, origin));
            }
        } else if (key == "backends") {
            r.object(value, key);
            for (const auto& [name, section] : value.items()) {
                if (name.empty()) r.fail(key, "a backend name must not be empty");
                c.backends[name] = parse_backend(r, section, key + "." + name);
            }
        } else if (key == "kernels") {
            r.object(value, key);
            for (const auto& [name, section] : value.items()) {
                const std::string at = key + "." + name;
                r.object(section, at);
                r.check_keys(section, at, {"prefer"});
                KernelConfig k;
                if (section.contains("prefer"))
                    k.prefer = r.strings(section["prefer"], at + ".prefer");
                c.kernels[name] = std::move(k);
            }
        } else if (key == "fallback") {
            c.fallback = r.boolean(value, key);
        } else if (key == "profiling") {
            c.profiling = r.boolean(value, key);
        } else if (key == "cache_dir") {
            // null: no disk cache (no compiled modules, tuning choices, routing history or
            // plugin verdicts kept), as an empty cache_dir in C++.
            if (value.is_null()) {
                c.cache_dir.clear();
                continue;
            }
            c.cache_dir = r.string(value, key);
            if (c.cache_dir.empty())
                r.fail(key, "expected a directory, found an empty string (null turns the disk "
                            "cache off)");
            c.cache_dir = detail::expand_tilde(c.cache_dir);
        } else if (key == "trace") {
            c.trace = r.string(value, key);
            if (c.trace.empty()) r.fail(key, "expected a file name, found an empty string");
            c.trace = detail::expand_tilde(c.trace);
        } else if (key == "log_level") {
            c.log_level = r.one_of(value, key, {"trace", "debug", "info", "warn", "error", "off"});
        } else if (key == "validate_plugins") {
            const std::string v = r.one_of(value, key, {"first_load", "always", "never"});
            c.validate_plugins = v == "always"  ? PluginValidation::Always
                                 : v == "never" ? PluginValidation::Never
                                                : PluginValidation::FirstLoad;
        } else if (key == "compile_threads") {
            c.compile_threads = static_cast<unsigned>(
                r.integer(value, key, 1, 256, "an integer between 1 and 256 (threads)"));
        } else if (key == "tuning") {
            c.tuning = r.one_of(value, key, {"auto", "off"}) == "auto";
        } else if (key == "routing") {
            c.routing = r.one_of(value, key, {"priority", "measured"}) == "measured"
                            ? Routing::Measured
                            : Routing::Priority;
        } else if (key == "tuning_budget_ms") {
            c.tuning_budget_ms = static_cast<unsigned>(r.integer(
                value, key, 0, 3'600'000, "an integer between 0 and 3600000 (milliseconds)"));
        } else if (key == "plugin_init_timeout_ms") {
            c.plugin_init_timeout_ms = static_cast<unsigned>(r.integer(
                value, key, 100, 3'600'000, "an integer between 100 and 3600000 (milliseconds)"));
        }
    }
    return c;
}

Config Config::from_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        ErrorContext ctx;
        ctx.file = path;
        throw Error(ErrorCode::InvalidConfig,
                    std::string("cannot read the configuration file: ") +
                        (std::filesystem::exists(path) ? "permission denied or not a file"
                                                       : "no such file"),
                    ctx);
    }
    std::ostringstream text;
    text << in.rdbuf();
    return parse(text.str(), path);
}

Config Config::load() {
    Config c;
    if (detail::privileged_process()) {
        c.use_env_plugin_path = false;
        return c;
    }
    if (auto explicit_path = detail::get_env("PLEXUS_CONFIG")) {
        c = from_file(*explicit_path);
    } else {
        std::string base =
            detail::get_env("XDG_CONFIG_HOME").value_or(detail::home_dir() + "/.config");
        std::string path = base + "/plexus/config.json";
        std::error_code ec;
        if (std::filesystem::exists(path, ec)) c = from_file(path);
    }
    if (auto level = detail::get_env("PLEXUS_LOG")) {
        static const char* const levels[] = {"trace", "debug", "info", "warn", "error", "off"};
        bool ok = false;
        for (const char* l : levels)
            ok = ok || *level == l;
        if (!ok) {
            ErrorContext ctx;
            ctx.file = "environment";
            ctx.json_path = "PLEXUS_LOG";
            throw Error(ErrorCode::InvalidConfig,
                        "expected one of \"trace\", \"debug\", \"info\", \"warn\", \"error\", "
                        "\"off\", found \"" +
                            *level + "\"",
                        ctx);
        }
        c.log_level = *level;
    }
    if (auto trace = detail::get_env("PLEXUS_TRACE"); trace && !trace->empty()) c.trace = *trace;
    return c;
}

} // namespace plexus
