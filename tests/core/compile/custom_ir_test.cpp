// What the core hands a Custom plugin (core/src/compile/build_custom.cpp), read back through a
// fake third-party plugin that keeps each document (fake_ir_reader.c): the kernel as JSON IR in
// the oldest schema that holds it, without loop unroll hints. A kernel with hints, which the
// core itself writes as "plexus-ir/2.1", reaches the plugin as a "plexus-ir/1" or "/2" document
// under that schema's language and reads back to the kernel without its hints.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include "plexus/plexus.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

namespace px = plexus;
namespace ir = plexus::ir;
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

// The folder the fake plugin writes into, made once and set before any Runtime exists.
const fs::path& documents() {
    static const fs::path dir = [] {
        std::string name = (fs::temp_directory_path() / "plexus-custom-ir-XXXXXX").string();
        REQUIRE(mkdtemp(name.data()) != nullptr);
        setenv("FAKE_IR_DIR", name.c_str(), 1);
        return fs::path(name);
    }();
    return dir;
}

px::Runtime& runtime() {
    documents();
    static px::Runtime rt([] {
        px::Config c;
        c.plugin_dirs = {FAKE_PLUGIN_DIR};
        c.use_env_plugin_path = false;
        c.use_install_dir = false;
        c.fallback = false;
        c.cache_dir = "";
        return c;
    }());
    return rt;
}

// The document the plugin got for kernel `name` under `language`.
std::string received(const std::string& name, plx_language language) {
    const fs::path path = documents() / (name + "." + std::to_string(int(language)) + ".json");
    std::ifstream in(path);
    REQUIRE_MESSAGE(in, "the plugin got no document " << path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

// Sums a[0 .. n) through loops with each hint; `private_array` makes it a "plexus-ir/2" kernel.
px::Kernel<px::In<float>, px::Out<float>, px::Int> hinted(const std::string& name,
                                                          bool private_array) {
    return px::kernel(
        name, {"a", "out", "n"}, [private_array](px::In<float> a, px::Out<float> out, px::Int n) {
            px::Float s = 0.0f;
            px::For(0, n, [&](px::Int j) { s += a[j]; }, px::unroll(4));
            px::For(0, 8, 2, [&](px::Int j) { s += a[j]; }, px::unroll_full());
            px::For(
                0, 3,
                [&](px::Int q) { px::For(q, n, [&](px::Int j) { s += a[j]; }, px::unroll(2)); },
                px::no_unroll());
            if (private_array) {
                auto p = px::private_array<float>(2);
                p[0] = s;
                s = p[0];
            }
            out[px::global_id(0)] = s;
        });
}

void check_document(const px::Kernel<px::In<float>, px::Out<float>, px::Int>& k,
                    plx_language language, const char* schema) {
    // The core's own JSON of the kernel needs the schema with hints.
    REQUIRE(json::parse(ir::to_json(k.ir()))["schema"] == "plexus-ir/2.1");
    px::Buffer<float> a(runtime(), 64), out(runtime(), 64);
    runtime().launch(px::Target{"fakeir", 0}, k, px::Grid(64), a, out, 16).wait();
    const std::string text = received(k.name(), language);
    INFO(text);
    CHECK(json::parse(text)["schema"] == schema);
    CHECK(text.find("unroll") == std::string::npos);
    const ir::Kernel back = ir::from_json(text);
    CHECK_FALSE(ir::has_loop_hints(back));
    CHECK(ir::canonical_json(back) == ir::canonical_json(ir::without_loop_hints(k.ir())));
}

} // namespace

TEST_CASE("a Custom plugin gets a kernel with loop hints as plexus-ir/1 without them") {
    check_document(hinted("hinted_v1", false), PLX_LANG_PLEXUS_IR_JSON, "plexus-ir/1");
}

TEST_CASE("a Custom plugin gets a plexus-ir/2 kernel with loop hints as plexus-ir/2 without them") {
    check_document(hinted("hinted_v2", true), PLX_LANG_PLEXUS_IR2_JSON, "plexus-ir/2");
}

TEST_CASE("the documents' folder is removed") {
    CHECK(fs::remove_all(documents()) >= 2);
}
