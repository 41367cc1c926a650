// Config: every kind of bad file gives an InvalidConfig error naming file and JSON path;
// good files round-trip; the environment's precedence (PLEXUS_CONFIG, XDG_CONFIG_HOME, PLEXUS_LOG).
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "plexus/config.hpp"
#include "plexus/error.hpp"

namespace fs = std::filesystem;
using plexus::Config;
using plexus::Error;
using plexus::ErrorCode;

namespace {

// A fresh directory under the system temp dir, removed at scope exit.
struct TempDir {
    fs::path path;
    TempDir() {
        std::string tmpl = (fs::temp_directory_path() / "plexus-config-XXXXXX").string();
        REQUIRE(mkdtemp(tmpl.data()) != nullptr);
        path = tmpl;
    }
    ~TempDir() { fs::remove_all(path); }
    std::string write(const std::string& name, const std::string& text) const {
        fs::path p = path / name;
        fs::create_directories(p.parent_path());
        std::ofstream(p) << text;
        return p.string();
    }
};

// Parses `text` as "cfg.json" and returns the error it must raise.
Error parse_error(const std::string& text) {
    try {
        Config::parse(text, "/etc/cfg.json");
    } catch (const Error& e) {
        return e;
    }
    FAIL("no error for: " << text);
    throw std::logic_error("unreachable");
}

void expect_error(const std::string& text, const std::string& path, const std::string& expected,
                  const std::string& found = {}) {
    CAPTURE(text);
    Error e = parse_error(text);
    CHECK(e.code() == ErrorCode::InvalidConfig);
    CHECK(e.context().file == "/etc/cfg.json");
    CHECK(e.context().json_path == path);
    CHECK_MESSAGE(e.message().find(expected) != std::string::npos, e.message());
    CHECK_MESSAGE(e.message().find(found) != std::string::npos, e.message());
    // what() carries file and path too, so a printed error is complete.
    CHECK(std::string(e.what()).find("/etc/cfg.json") != std::string::npos);
    CHECK(std::string(e.what()).find(path) != std::string::npos);
}

struct EnvGuard {
    std::vector<std::pair<std::string, std::optional<std::string>>> saved;
    void set(const char* name, const std::string* value) {
        const char* old = std::getenv(name);
        saved.emplace_back(name, old ? std::optional<std::string>(old) : std::nullopt);
        if (value)
            setenv(name, value->c_str(), 1);
        else
            unsetenv(name);
    }
    ~EnvGuard() {
        for (auto it = saved.rbegin(); it != saved.rend(); ++it) {
            if (it->second)
                setenv(it->first.c_str(), it->second->c_str(), 1);
            else
                unsetenv(it->first.c_str());
        }
    }
};

} // namespace

TEST_CASE("defaults") {
    Config c;
    CHECK(c.plugin_dirs.empty());
    CHECK(c.use_env_plugin_path);
    CHECK(c.use_install_dir);
    CHECK(c.fallback);
    CHECK(c.log_level == "warn");
    CHECK(c.source.empty());
    CHECK(!c.cache_dir.empty());
    CHECK(c.cache_dir.find('~') == std::string::npos);
    CHECK(c.validate_plugins == plexus::PluginValidation::FirstLoad);
    CHECK(c.plugin_init_timeout_ms == 10000u);
    CHECK(Config::parse("{}", "x.json").backends.empty());
}

TEST_CASE("compile_threads") {
    CHECK(Config::parse("{}", "x.json").compile_threads == 0u); // the hardware's, at most 8
    CHECK(Config::parse(R"({"compile_threads": 3})", "x.json").compile_threads == 3u);
    expect_error(R"({"compile_threads": 0})", "compile_threads",
                 "expected an integer between 1 and 256 (threads)", "an integer (0)");
    expect_error(R"({"compile_threads": "all"})", "compile_threads", "expected an integer",
                 "a string (\"all\")");
}

TEST_CASE("routing") {
    using plexus::Routing;
    CHECK(Config::parse("{}", "x.json").routing == Routing::Priority);
    CHECK(Config::parse(R"({"routing": "measured"})", "x.json").routing == Routing::Measured);
    CHECK(Config::parse(R"({"routing": "priority"})", "x.json").routing == Routing::Priority);
    CHECK(std::string(plexus::to_string(Routing::Measured)) == "measured");
    CHECK(std::string(plexus::to_string(Routing::Priority)) == "priority");
    expect_error(R"({"routing": "fastest"})", "routing",
                 "expected one of \"priority\", \"measured\"", "\"fastest\"");
    expect_error(R"({"routing": true})", "routing", "expected one of", "a boolean (true)");
}

TEST_CASE("plugin validation keys") {
    using plexus::PluginValidation;
    CHECK(Config::parse(R"({"validate_plugins": "always"})", "x.json").validate_plugins ==
          PluginValidation::Always);
    CHECK(Config::parse(R"({"validate_plugins": "never"})", "x.json").validate_plugins ==
          PluginValidation::Never);
    CHECK(Config::parse(R"({"validate_plugins": "first_load"})", "x.json").validate_plugins ==
          PluginValidation::FirstLoad);
    CHECK(std::string(plexus::to_string(PluginValidation::FirstLoad)) == "first_load");
    CHECK(Config::parse(R"({"plugin_init_timeout_ms": 2000})", "x.json").plugin_init_timeout_ms ==
          2000u);
    CHECK(Config::parse(R"({"plugin_init_timeout_ms": 100})", "x.json").plugin_init_timeout_ms ==
          100u);
    expect_error(R"({"validate_plugins": "sometimes"})", "validate_plugins",
                 "expected one of \"first_load\", \"always\", \"never\"", "\"sometimes\"");
    expect_error(R"({"validate_plugins": true})", "validate_plugins", "expected one of",
                 "a boolean (true)");
    expect_error(R"({"plugin_init_timeout_ms": "10s"})", "plugin_init_timeout_ms",
                 "expected an integer between 100", "a string (\"10s\")");
    expect_error(R"({"plugin_init_timeout_ms": 99})", "plugin_init_timeout_ms", "(milliseconds)",
                 "an integer (99)");
    expect_error(R"({"plugin_init_timeout_ms": 2.5})", "plugin_init_timeout_ms",
                 "expected an integer", "a number (2.5)");
    expect_error(R"({"plugin_init_timeout_ms": 3600001})", "plugin_init_timeout_ms", "3600000",
                 "3600001");
    CHECK(Config::parse(R"({"trace": "/tmp/t.json"})", "x.json").trace == "/tmp/t.json");
    CHECK(Config::parse(R"({"trace": "~/t.json"})", "x.json").trace.find('~') == std::string::npos);
    expect_error(R"({"trace": ""})", "trace", "expected a file name, found an empty string");
    expect_error(R"({"trace": 3})", "trace", "expected a string", "an integer (3)");
    expect_error(R"({"validate_plugin": "never"})", "validate_plugin",
                 "unknown key 'validate_plugin'", "validate_plugins");
}

TEST_CASE("a complete file round-trips") {
    TempDir dir;
    const std::string path = dir.write("conf/config.json", R"({
        "plugin_dirs": ["/opt/vendor/plugins", "local/plugins", "~/p"],
        "backends": {
            "cuda":   {"enabled": true, "priority": 120, "compiler": "nvrtc"},
            "opencl": {"devices": "gpu", "streaming_stores": false},
            "native": {"threads": 8, "streaming_stores": 67108864, "priority": -3, "cpu": "x86-64-v3", "features": "-fma"},
            "interp": {"enabled": false},
            "acme":   {"options": {"queue_depth": 4, "mode": "fast"}}
        },
        "kernels": {"matmul": {"prefer": ["cuda", "opencl"]}, "empty": {}},
        "fallback": false,
        "cache_dir": "~/.cache/px",
        "log_level": "info"
    })");
    Config c = Config::from_file(path);
    CHECK(c.source == path);
    REQUIRE(c.plugin_dirs.size() == 3);
    CHECK(c.plugin_dirs[0] == "/opt/vendor/plugins");
    CHECK(c.plugin_dirs[1] == (dir.path / "conf/local/plugins").string()); // relative to the file
    CHECK(c.plugin_dirs[2].find('~') == std::string::npos);
    CHECK(c.plugin_dirs[2].size() > 2);
    REQUIRE(c.backends.size() == 5);
    CHECK(c.backends["cuda"].enabled == true);
    CHECK(c.backends["cuda"].priority == 120);
    CHECK(c.backends["cuda"].compiler == "nvrtc");
    CHECK(!c.backends["cuda"].devices);
    CHECK(c.backends["opencl"].devices == "gpu");
    CHECK(!c.backends["opencl"].enabled);
    CHECK(c.backends["native"].cpu == "x86-64-v3");
    CHECK(c.backends["native"].features == "-fma");
    CHECK(!c.backends["opencl"].cpu);
    CHECK(c.backends["native"].threads == 8u);
    CHECK(c.backends["native"].streaming_stores == uint64_t(67108864));
    CHECK(c.backends["opencl"].streaming_stores == plexus::BackendConfig::never);
    CHECK(!c.backends["interp"].streaming_stores);
    CHECK(c.backends["native"].priority == -3);
    CHECK(c.backends["interp"].enabled == false);
    CHECK(c.backends["acme"].section["options"]["queue_depth"] == 4);
    CHECK(c.backends["native"].section == nlohmann::json{{"threads", 8},
                                                         {"streaming_stores", 67108864},
                                                         {"priority", -3},
                                                         {"cpu", "x86-64-v3"},
                                                         {"features", "-fma"}});
    REQUIRE(c.kernels.size() == 2);
    CHECK(c.kernels["matmul"].prefer == std::vector<std::string>{"cuda", "opencl"});
    CHECK(c.kernels["empty"].prefer.empty());
    CHECK(c.fallback == false);
    CHECK(c.cache_dir.find('~') == std::string::npos);
    CHECK(c.cache_dir.size() > std::string("/.cache/px").size());
    CHECK(c.cache_dir.substr(c.cache_dir.size() - 10) == "/.cache/px");
    CHECK(c.log_level == "info");
}

TEST_CASE("syntax errors name the file and the position") {
    Error e = parse_error("{\n  \"fallback\": true,\n}");
    CHECK(e.code() == ErrorCode::InvalidConfig);
    CHECK(e.context().file == "/etc/cfg.json");
    CHECK_MESSAGE(e.message().find("line 3") != std::string::npos, e.message());
    CHECK_MESSAGE(e.message().find("byte") != std::string::npos, e.message());
    CHECK(parse_error("").message().find("not valid JSON") != std::string::npos);
    CHECK(parse_error("{\"a\": ").message().find("not valid JSON") != std::string::npos);
    // A number too large for a double is nlohmann's out_of_range, not a parse_error (found by
    // tests/core/fuzz/fuzz_config.cpp): still an InvalidConfig error naming the file.
    Error big = parse_error(R"({"plugin_init_timeout_ms": 1e999})");
    CHECK(big.code() == ErrorCode::InvalidConfig);
    CHECK(big.context().file == "/etc/cfg.json");
    CHECK_MESSAGE(big.message().find("not valid JSON: number overflow parsing '1e999'") !=
                      std::string::npos,
                  big.message());
}

TEST_CASE("wrong types at every key") {
    expect_error("[]", "(top level)", "expected an object", "an array");
    expect_error(R"({"plugin_dirs": "/opt"})", "plugin_dirs", "expected an array of strings",
                 "a string");
    expect_error(R"({"plugin_dirs": ["/a", 3]})", "plugin_dirs[1]", "expected a string",
                 "an integer (3)");
    expect_error(R"({"backends": []})", "backends", "expected an object", "an array");
    expect_error(R"({"backends": {"cuda": true}})", "backends.cuda", "expected an object",
                 "a boolean");
    expect_error(R"({"backends": {"cuda": {"enabled": "yes"}}})", "backends.cuda.enabled",
                 "expected a boolean", "a string (\"yes\")");
    expect_error(R"({"backends": {"native": {"priority": "high"}}})", "backends.native.priority",
                 "expected an integer", "a string (\"high\")");
    expect_error(R"({"backends": {"native": {"priority": 1.5}}})", "backends.native.priority",
                 "expected an integer", "a number (1.5)");
    expect_error(R"({"backends": {"native": {"priority": 99999999999}}})",
                 "backends.native.priority", "expected an integer between", "99999999999");
    expect_error(R"({"backends": {"opencl": {"devices": 1}}})", "backends.opencl.devices",
                 "expected a string", "an integer (1)");
    expect_error(R"({"backends": {"opencl": {"devices": ""}}})", "backends.opencl.devices",
                 "expected \"all\"", "empty string");
    expect_error(R"({"backends": {"native": {"threads": -2}}})", "backends.native.threads",
                 "expected an integer between 1 and", "an integer (-2)");
    expect_error(R"({"backends": {"native": {"threads": 0}}})", "backends.native.threads",
                 "expected an integer between 1 and", "an integer (0)");
    expect_error(R"({"backends": {"native": {"threads": "8"}}})", "backends.native.threads",
                 "expected an integer", "a string");
    expect_error(R"({"backends": {"native": {"streaming_stores": -1}}})",
                 "backends.native.streaming_stores",
                 "expected a byte count (an integer >= 0) or false", "an integer (-1)");
    expect_error(R"({"backends": {"native": {"streaming_stores": true}}})",
                 "backends.native.streaming_stores", "expected a byte count", "a boolean");
    expect_error(R"({"backends": {"native": {"streaming_stores": "64M"}}})",
                 "backends.native.streaming_stores", "expected a byte count", "a string");
    expect_error(R"({"backends": {"acme": {"options": [1]}}})", "backends.acme.options",
                 "expected an object", "an array");
    expect_error(R"({"kernels": {"matmul": []}})", "kernels.matmul", "expected an object",
                 "an array");
    expect_error(R"({"kernels": {"matmul": {"prefer": "cuda"}}})", "kernels.matmul.prefer",
                 "expected an array of strings", "a string");
    expect_error(R"({"kernels": {"matmul": {"prefer": ["cuda", null]}}})",
                 "kernels.matmul.prefer[1]", "expected a string", "null");
    expect_error(R"({"fallback": 1})", "fallback", "expected a boolean", "an integer (1)");
    expect_error(R"({"cache_dir": false})", "cache_dir", "expected a string", "a boolean (false)");
    expect_error(R"({"cache_dir": ""})", "cache_dir", "an empty string", "null turns");
    expect_error(R"({"backends": {"native": {"features": ["+avx2"]}}})", "backends.native.features",
                 "expected a string", "an array");
    expect_error(R"({"log_level": 3})", "log_level", "expected one of", "an integer (3)");
}

TEST_CASE("bad enumeration values") {
    expect_error(R"({"log_level": "verbose"})", "log_level", "expected one of \"trace\"",
                 "\"verbose\"");
    expect_error(R"({"backends": {"cuda": {"compiler": "gcc"}}})", "backends.cuda.compiler",
                 "expected one of \"llvm\", \"nvrtc\"", "\"gcc\"");
}

TEST_CASE("unknown keys") {
    expect_error(R"({"plugins_dir": []})", "plugins_dir", "unknown key 'plugins_dir'",
                 "plugin_dirs");
    expect_error(R"({"backends": {"native": {"thread": 4}}})", "backends.native.thread",
                 "unknown key 'thread'", "threads");
    expect_error(R"({"kernels": {"k": {"prefers": []}}})", "kernels.k.prefers", "unknown key",
                 "prefer");
}

TEST_CASE("missing file") {
    TempDir dir;
    const std::string path = (dir.path / "nope.json").string();
    try {
        Config::from_file(path);
        FAIL("no error");
    } catch (const Error& e) {
        CHECK(e.code() == ErrorCode::InvalidConfig);
        CHECK(e.context().file == path);
        CHECK(e.message().find("no such file") != std::string::npos);
    }
    // An error inside a real file names that file.
    const std::string bad = dir.write("bad.json", R"({"fallback": "no"})");
    try {
        Config::from_file(bad);
        FAIL("no error");
    } catch (const Error& e) {
        CHECK(e.context().file == bad);
        CHECK(e.context().json_path == "fallback");
    }
}

TEST_CASE("environment precedence") {
    TempDir dir;
    const std::string xdg_file =
        dir.write("xdg/plexus/config.json", R"({"log_level": "error", "fallback": false})");
    const std::string explicit_file = dir.write("explicit.json", R"({"log_level": "debug"})");
    const std::string xdg = (dir.path / "xdg").string();
    const std::string empty_home = (dir.path / "home").string();
    fs::create_directories(empty_home);

    SUBCASE("no file anywhere: defaults") {
        EnvGuard env;
        env.set("PLEXUS_CONFIG", nullptr);
        env.set("PLEXUS_LOG", nullptr);
        env.set("XDG_CONFIG_HOME", nullptr);
        env.set("HOME", &empty_home);
        Config c = Config::load();
        CHECK(c.source.empty());
        CHECK(c.log_level == "warn");
    }
    SUBCASE("~/.config/plexus/config.json when XDG_CONFIG_HOME is unset") {
        const std::string home = (dir.path / "home2").string();
        dir.write("home2/.config/plexus/config.json", R"({"log_level": "trace"})");
        EnvGuard env;
        env.set("PLEXUS_CONFIG", nullptr);
        env.set("PLEXUS_LOG", nullptr);
        env.set("XDG_CONFIG_HOME", nullptr);
        env.set("HOME", &home);
        Config c = Config::load();
        CHECK(c.source == home + "/.config/plexus/config.json");
        CHECK(c.log_level == "trace");
    }
    SUBCASE("XDG_CONFIG_HOME") {
        EnvGuard env;
        env.set("PLEXUS_CONFIG", nullptr);
        env.set("PLEXUS_LOG", nullptr);
        env.set("XDG_CONFIG_HOME", &xdg);
        Config c = Config::load();
        CHECK(c.source == xdg_file);
        CHECK(c.log_level == "error");
        CHECK(c.fallback == false);
    }
    SUBCASE("PLEXUS_CONFIG wins over XDG_CONFIG_HOME") {
        EnvGuard env;
        env.set("PLEXUS_CONFIG", &explicit_file);
        env.set("PLEXUS_LOG", nullptr);
        env.set("XDG_CONFIG_HOME", &xdg);
        Config c = Config::load();
        CHECK(c.source == explicit_file);
        CHECK(c.log_level == "debug");
        CHECK(c.fallback == true);
    }
    SUBCASE("PLEXUS_LOG overrides the file's log_level") {
        const std::string level = "off";
        EnvGuard env;
        env.set("PLEXUS_CONFIG", &explicit_file);
        env.set("PLEXUS_LOG", &level);
        CHECK(Config::load().log_level == "off");
    }
    SUBCASE("a bad PLEXUS_LOG is an error naming the variable") {
        const std::string level = "loud";
        EnvGuard env;
        env.set("PLEXUS_CONFIG", &explicit_file);
        env.set("PLEXUS_LOG", &level);
        try {
            Config::load();
            FAIL("no error");
        } catch (const Error& e) {
            CHECK(e.context().json_path == "PLEXUS_LOG");
            CHECK(e.message().find("\"loud\"") != std::string::npos);
        }
    }
    SUBCASE("PLEXUS_CONFIG naming a missing file is an error, not a silent default") {
        const std::string missing = (dir.path / "missing.json").string();
        EnvGuard env;
        env.set("PLEXUS_CONFIG", &missing);
        CHECK_THROWS_AS(Config::load(), Error);
    }
    SUBCASE("cache_dir null turns the disk cache off") {
        CHECK(Config::parse(R"({"cache_dir": null})", "").cache_dir.empty());
    }
    SUBCASE("XDG_CACHE_HOME sets the default cache_dir") {
        const std::string cache = (dir.path / "cache").string();
        EnvGuard env;
        env.set("XDG_CACHE_HOME", &cache);
        CHECK(Config().cache_dir == cache + "/plexus");
        CHECK(Config::parse("{}", "").cache_dir == cache + "/plexus");
    }
}

TEST_CASE("set_log_level accepts the six names and rejects others") {
    for (const char* l : {"trace", "debug", "info", "warn", "error", "off"})
        CHECK_NOTHROW(plexus::set_log_level(l));
    CHECK_THROWS_AS(plexus::set_log_level("chatty"), Error);
    plexus::set_log_level("warn");
}
