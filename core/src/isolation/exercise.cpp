// `plexus-plugin-check exercise` for plexus doctor: one device of one plugin is made to
// allocate, write, read back, copy, fill, compile and launch a vector addition, each result
// compared, each step announced on fd 3 before it runs so that a crash names it.
#include <cstdlib>
#include <cstring>
#include <vector>

#include <nlohmann/json.hpp>

#include "isolation/probe.hpp"
#include "plexus/plexus.hpp"

namespace plexus::detail {

namespace {

const auto& doctor_vadd() {
    static const auto k = kernel("plexus_doctor_vadd", {"a", "b", "c", "n"},
                                 [](In<float> a, In<float> b, Out<float> c, Int n) {
                                     Int i = global_id(0);
                                     If(i < n, [&] { c[i] = a[i] + b[i]; });
                                 });
    return k;
}

// Runs the plugin's own buffer functions on one device; false once a step failed.
bool exercise_memory(const Backend& b, uint32_t device) {
    const plx_plugin& api = b.api();
    const plx_device dev = b.device(device);
    auto said = [&](plx_status s) { return std::string(status_name(s)) + ": " + b.last_error(); };
    constexpr size_t kWords = 4096;
    std::vector<uint32_t> pattern(kWords), back(kWords);
    for (size_t i = 0; i < kWords; ++i)
        pattern[i] = uint32_t(i * 2654435761u);

    report_stage("queue");
    plx_queue q = nullptr;
    if (plx_status s = api.queue_create(dev, 0, &q); s != PLX_OK)
        return report_step("queue", false, "queue_create: " + said(s)), false;
    report_step("queue", true, "queue_create");
    report_stage("allocate");
    plx_buffer x = nullptr, y = nullptr;
    plx_status s = api.buffer_alloc(dev, kWords * 4, &x);
    if (s == PLX_OK) s = api.buffer_alloc(dev, kWords * 4, &y);
    if (s != PLX_OK)
        return report_step("allocate", false, "buffer_alloc of 16 KiB: " + said(s)), false;
    report_step("allocate", true, "two buffers of 16 KiB");
    auto read_back = [&](plx_buffer buf, const char* what, const std::vector<uint32_t>& want) {
        std::fill(back.begin(), back.end(), 0u);
        plx_status r = api.buffer_read(q, buf, 0, back.data(), kWords * 4);
        if (r != PLX_OK)
            return report_step("read", false,
                               std::string("buffer_read after ") + what + ": " + said(r)),
                   false;
        for (size_t i = 0; i < kWords; ++i)
            if (back[i] != want[i])
                return report_step(what, false,
                                   "word " + std::to_string(i) + " reads " +
                                       std::to_string(back[i]) + " after " + what + ", expected " +
                                       std::to_string(want[i])),
                       false;
        return true;
    };
    report_stage("write");
    if (s = api.buffer_write(q, x, 0, pattern.data(), kWords * 4); s != PLX_OK)
        return report_step("write", false, "buffer_write: " + said(s)), false;
    report_step("write", true, "buffer_write of 16 KiB");
    report_stage("read");
    if (!read_back(x, "write", pattern)) return false;
    report_step("read", true, "buffer_read returned what was written");
    report_stage("copy");
    if (api.buffer_copy == nullptr) {
        report_step("copy", true,
                    "buffer_copy is not provided (optional: plexus copies through the host)");
    } else if (s = api.buffer_copy(q, y, 0, x, 0, kWords * 4); s != PLX_OK) {
        return report_step("copy", false, "buffer_copy: " + said(s)), false;
    } else if (s = api.queue_sync(q); s != PLX_OK) {
        return report_step("copy", false, "queue_sync after buffer_copy: " + said(s)), false;
    } else if (!read_back(y, "copy", pattern)) {
        return false;
    } else {
        report_step("copy", true, "buffer_copy copied 16 KiB");
    }
    report_stage("fill");
    const uint32_t word = 0x3f800000u; // 1.0f
    if (api.buffer_fill == nullptr) {
        report_step("fill", true,
                    "buffer_fill is not provided (optional: plexus writes zeros from the host)");
    } else if (s = api.buffer_fill(q, y, 0, &word, 4, kWords * 4); s != PLX_OK) {
        return report_step("fill", false, "buffer_fill: " + said(s)), false;
    } else if (s = api.queue_sync(q); s != PLX_OK) {
        return report_step("fill", false, "queue_sync after buffer_fill: " + said(s)), false;
    } else if (!read_back(y, "fill", std::vector<uint32_t>(kWords, word))) {
        return false;
    } else {
        report_step("fill", true, "buffer_fill filled 16 KiB");
    }
    report_stage("free");
    api.buffer_free(x);
    api.buffer_free(y);
    api.queue_destroy(q);
    report_step("free", true, "buffer_free, queue_destroy");
    return true;
}

// Compiles and launches a vector addition through the runtime, as an application would.
void exercise_kernel(Runtime& rt, const std::string& name, uint32_t device) {
    report_stage("kernel");
    const int n = 10007; // not a multiple of any work-group size
    std::vector<float> a(n), b(n);
    for (int i = 0; i < n; ++i)
        a[i] = float(i) * 0.5f, b[i] = 1000.0f - float(i);
    try {
        Buffer<float> da(rt, a), db(rt, b), dc(rt, size_t(n));
        rt.launch(Target{name, int(device)}, doctor_vadd(), Grid(size_t(n)), da, db, dc, n).wait();
        std::vector<float> c = dc.to_vector();
        for (int i = 0; i < n; ++i)
            if (c[i] != a[i] + b[i])
                return report_step("kernel", false,
                                   "element " + std::to_string(i) + " of a vector addition is " +
                                       std::to_string(c[i]) + ", expected " +
                                       std::to_string(a[i] + b[i]));
        report_step("kernel", true,
                    "compiled and launched a vector addition of " + std::to_string(n) +
                        " floats: correct");
    } catch (const Error& e) {
        std::string message = e.what();
        if (!e.context().build_log.empty())
            message += "\nbuild log:\n" + e.context().build_log.substr(0, 4000);
        report_step("kernel", false, message);
    }
}

} // namespace

int exercise_main(const std::map<std::string, std::string>& args) {
    UnderTest t = load_under_test(args, "exercise");
    if (t.status) return *t.status;
    if (t.backend && exercise_memory(*t.backend, t.device))
        exercise_kernel(*t.rt, t.backend->name(), t.device);
    report_line(R"({"done": true})");
    std::fflush(nullptr);
    std::_Exit(0);
}

UnderTest load_under_test(const std::map<std::string, std::string>& args, const char* mode) {
    UnderTest t;
    for (const char* key : {"plugin-dir", "name", "device"})
        if (args.count(key) == 0) {
            std::fprintf(stderr, "plexus-plugin-check: %s needs --%s\n", mode, key);
            t.status = 2;
            return t;
        }
    const std::string name = args.at("name");
    t.device = uint32_t(std::strtoul(args.at("device").c_str(), nullptr, 10));
    report_stage("start");
    report_stage("load");
    // Only the plugin under test, with its options, already validated by the parent; the
    // kernels are compiled afresh (no disk cache), since the compiler is what is checked.
    nlohmann::json doc = {
        {"plugin_dirs", {args.at("plugin-dir")}},
        {"validate_plugins", "never"},
        {"fallback", false},
        {"backends",
         {{name, nlohmann::json::parse(args.count("options") ? args.at("options") : "{}")}}}};
    Config config = Config::parse(doc.dump(), "");
    config.use_env_plugin_path = false;
    config.use_install_dir = false;
    config.cache_dir = "";
    t.rt = std::make_unique<Runtime>(config);
    for (const Backend* b : t.rt->backends())
        if (b->name() == name) t.backend = b;
    if (t.backend == nullptr || t.device >= t.backend->devices().size()) {
        std::string why = t.rt->load_report().empty()
                              ? "no plugin file found"
                              : std::string(to_string(t.rt->load_report()[0].outcome)) + ": " +
                                    t.rt->load_report()[0].message;
        report_step("load", false,
                    "the plugin did not load again in the child process (" + why + ")");
        t.backend = nullptr;
    } else {
        report_step("load", true, "loaded");
    }
    return t;
}

} // namespace plexus::detail
