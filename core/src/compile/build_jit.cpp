// JIT backends (cuda, opencl, a third party's): source in the first of the plugin's languages
// that plexus generates, compiled by the plugin; the plugin's binary of it, or the source,
// kept in the disk cache.
#include "compile/compiler.hpp"
#include "config/log.hpp"

#include <algorithm>

namespace plexus::detail {

namespace {

// The language plexus generates for a JIT backend: its first accepted language that plexus
// has a generator for; CUDA C first where the config asks for NVRTC.
const codegen::Language* pick_language(const Backend& b, const Config& config) {
    auto it = config.backends.find(b.name());
    const bool nvrtc = it != config.backends.end() && it->second.compiler == "nvrtc";
    std::vector<plx_language> order = b.languages();
    if (nvrtc)
        std::stable_partition(order.begin(), order.end(),
                              [](plx_language l) { return l == PLX_LANG_CUDA_C; });
    for (plx_language l : order)
        if (const codegen::Language* row = codegen::find_language(l); row && row->make) return row;
    return nullptr;
}

// A cache entry is one byte naming the plx_language of what follows (a binary the plugin can
// load again, or the generated source when it returns none), then that text or binary.
plx_module load_module(const ir::Kernel& k, uint64_t hash, const DeviceTarget& d,
                       const codegen::Language& lang, const codegen::SourceGenerator& gen,
                       const Config& config, DiskCache& disk, CompileReport& report) {
    const Backend& b = *d.backend;
    CacheKey key{hash,         lang.name,    b.name(),       b.version(),
                 d.info->name, d.info->arch, core_build_id()};
    plx_module module = nullptr;
    auto t_cache = std::chrono::steady_clock::now();
    if (auto entry = disk.load(key); entry && entry->size() > 1) {
        report.cache_ms = ms_since(t_cache);
        auto stored = static_cast<plx_language>((*entry)[0]);
        const char* data = reinterpret_cast<const char*>(entry->data() + 1);
        auto t_load = std::chrono::steady_clock::now();
        if (b.api().module_load(d.device, stored, data, entry->size() - 1, "", &module) == PLX_OK) {
            report.load_ms = ms_since(t_load);
            report.language = to_string(stored);
            report.from_disk_cache = true;
            report.code_bytes = entry->size() - 1;
            log().debug("kernel '{}' for {} from the disk cache ({})", k.name, d.label,
                        to_string(stored));
            return module;
        }
        log().warn("the cached {} of kernel '{}' did not load on {} ({}); compiling it again",
                   to_string(stored), k.name, d.label, b.last_error());
    } else {
        report.cache_ms = ms_since(t_cache);
    }
    codegen::Phases phases;
    codegen::Options options = codegen_options(b, *d.info, config);
    options.phases = &phases;
    auto t_gen = std::chrono::steady_clock::now();
    std::string source = gen.generate(k, options);
    double gen_ms = ms_since(t_gen);
    report.language = lang.name;
    report.code_bytes = source.size();
    report.setup_ms = phases.setup * 1e3;
    report.optimize_ms = phases.optimize * 1e3;
    report.emit_ms = phases.emit * 1e3;
    // A generator without phases (the C-like ones) counts wholly as lowering.
    report.lower_ms = gen_ms - report.setup_ms - report.optimize_ms - report.emit_ms;
    auto t_load = std::chrono::steady_clock::now();
    plx_status s =
        b.api().module_load(d.device, lang.id, source.data(), source.size(), "", &module);
    report.load_ms = ms_since(t_load);
    b.check(s, (std::string("module_load of the ") + lang.name).c_str(), d.label, k.name);
    if (disk.enabled()) {
        auto t_store = std::chrono::steady_clock::now();
        std::vector<unsigned char> entry(1, static_cast<unsigned char>(lang.id));
        entry.insert(entry.end(), source.begin(), source.end());
        plx_language binary_lang = PLX_LANG_UNSET;
        size_t bytes = 0;
        if (b.api().module_get_binary &&
            b.api().module_get_binary(module, &binary_lang, nullptr, &bytes) == PLX_OK &&
            bytes > 0) {
            std::vector<unsigned char> binary(bytes + 1);
            if (b.api().module_get_binary(module, &binary_lang, binary.data() + 1, &bytes) ==
                PLX_OK) {
                binary[0] = static_cast<unsigned char>(binary_lang);
                binary.resize(bytes + 1);
                entry = std::move(binary);
            }
        }
        disk.store(key, entry.data(), entry.size());
        report.cache_ms += ms_since(t_store);
    }
    return module;
}

} // namespace

void build_jit(Compiled& c, const ir::Kernel& k, uint64_t hash, const DeviceTarget& d,
               const Config& config, DiskCache& disk, CompileReport& report) {
    const codegen::Language* lang = pick_language(*d.backend, config);
    if (!lang)
        throw Error(ErrorCode::Unsupported, "plexus generates none of the backend's languages",
                    {d.backend->name(), d.info->name, k.name, "", "", ""});
    const std::unique_ptr<codegen::SourceGenerator> gen = lang->make();
    c.module = load_module(k, hash, d, *lang, *gen, config, disk, report);
    c.dynamic_local_bytes = gen->dynamic_local_bytes(k);
    d.backend->check(d.backend->api().kernel_get(c.module, k.name.c_str(), &c.kernel), "kernel_get",
                     d.label, k.name);
}

} // namespace plexus::detail
