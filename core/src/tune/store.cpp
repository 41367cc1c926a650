// Stored tuning choices: one JSON file per (family, device, bucket) key under
// cache_dir/tuning, written to a temporary file and renamed; the tuning file that carries them
// between machines.
#include "tune/tuner.hpp"

#include "cache/disk_cache.hpp"
#include "cache/json_file.hpp"
#include "config/log.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>

namespace plexus {
namespace fs = std::filesystem;
namespace detail {

namespace {
using nlohmann::json;

json variant_json(const Tuning& v) {
    json out = json::object();
    for (const auto& [name, value] : v.values())
        out[name] = value;
    return out;
}

// Reads a tuning record, naming the file and the JSON path of anything wrong.
class RecordReader {
public:
    RecordReader(std::string file, std::string path)
        : file_(std::move(file)), at_(std::move(path)) {}
    [[noreturn]] void fail(const std::string& key, const std::string& message) const {
        ErrorContext ctx;
        ctx.file = file_;
        ctx.json_path = key.empty() ? at_ : at_ + "." + key;
        throw Error(ErrorCode::InvalidConfig, message, ctx);
    }
    const json& field(const json& o, const std::string& key) const {
        if (!o.is_object()) fail("", "expected an object");
        auto it = o.find(key);
        if (it == o.end()) fail(key, "missing");
        return *it;
    }
    std::string string(const json& o, const std::string& key) const {
        const json& v = field(o, key);
        if (!v.is_string()) fail(key, "expected a string, found " + v.dump());
        return v.get<std::string>();
    }
    uint64_t hex(const json& o, const std::string& key) const {
        const std::string s = string(o, key);
        if (s.size() != 16 || s.find_first_not_of("0123456789abcdef") != std::string::npos)
            fail(key, "expected 16 lower-case hex digits, found \"" + s + "\"");
        return std::stoull(s, nullptr, 16);
    }
    Tuning variant(const json& v, const std::string& key) const {
        if (!v.is_object()) fail(key, "expected an object of tuning parameters");
        std::map<std::string, int64_t> values;
        for (const auto& [name, value] : v.items()) {
            if (!value.is_number_integer()) fail(key + "." + name, "expected an integer");
            values[name] = value.get<int64_t>();
        }
        return Tuning(std::move(values));
    }
    Shape shape(const json& o, const std::string& key) const {
        const json& v = field(o, key);
        if (!v.is_array()) fail(key, "expected an array of sizes");
        Shape out;
        for (size_t i = 0; i < v.size(); ++i) {
            if (!v[i].is_number_integer())
                fail(key + "[" + std::to_string(i) + "]", "expected an integer");
            out.push_back(v[i].get<int64_t>());
        }
        return out;
    }

private:
    std::string file_, at_;
};

TuningRecord record_from_json(const json& r, const std::string& file, const std::string& at) {
    RecordReader rd(file, at);
    TuningRecord t;
    t.family = rd.string(r, "family");
    t.family_hash = rd.hex(r, "family_hash");
    t.backend = rd.string(r, "backend");
    t.backend_version = rd.string(r, "backend_version");
    t.device = rd.string(r, "device");
    t.arch = rd.string(r, "arch");
    t.bucket = rd.shape(r, "bucket");
    t.variant = rd.variant(rd.field(r, "variant"), "variant");
    t.kernel_hash = rd.hex(r, "kernel_hash");
    if (auto it = r.find("candidates"); it != r.end()) {
        if (!it->is_array()) rd.fail("candidates", "expected an array");
        for (size_t i = 0; i < it->size(); ++i) {
            const json& c = (*it)[i];
            const std::string key = "candidates[" + std::to_string(i) + "]";
            RecordReader cr(file, at + "." + key);
            TuningCandidate tc;
            tc.variant = cr.variant(cr.field(c, "variant"), "variant");
            tc.kernel = cr.string(c, "kernel");
            const json& s = cr.field(c, "seconds");
            if (!s.is_number() || s.get<double>() < 0)
                cr.fail("seconds", "expected a non-negative number");
            tc.seconds = s.get<double>();
            if (c.contains("dropped")) tc.dropped = cr.string(c, "dropped");
            t.candidates.push_back(std::move(tc));
        }
    }
    return t;
}

std::string tuning_dir(const std::string& cache_dir) {
    return (fs::path(cache_dir) / "tuning").string();
}

// The key's fields in the disk cache's canonical form (each escaped and length-prefixed): the
// family's hash as the IR hash, "tuning" as the language, the family's name and the bucket as
// the options.
std::string tuning_key_text(const TuningRecord& r) {
    CacheKey key;
    key.ir_hash = r.family_hash;
    key.language = "tuning";
    key.plugin = r.backend;
    key.plugin_version = r.backend_version;
    key.device = r.device;
    key.arch = r.arch;
    key.options = r.family;
    for (int64_t s : r.bucket) {
        key.options += ',';
        key.options += std::to_string(s);
    }
    return key.text();
}

std::string record_path(const std::string& cache_dir, const TuningRecord& key) {
    const std::string text = tuning_key_text(key);
    return (fs::path(tuning_dir(cache_dir)) / (hex16(fnv1a64(text.data(), text.size())) + ".json"))
        .string();
}

} // namespace

nlohmann::json tuning_json(const TuningRecord& r) {
    json candidates = json::array();
    for (const TuningCandidate& c : r.candidates) {
        json one = {
            {"variant", variant_json(c.variant)}, {"kernel", c.kernel}, {"seconds", c.seconds}};
        if (!c.dropped.empty()) one["dropped"] = c.dropped;
        candidates.push_back(std::move(one));
    }
    return {{"family", r.family},
            {"family_hash", hex16(r.family_hash)},
            {"backend", r.backend},
            {"backend_version", r.backend_version},
            {"device", r.device},
            {"arch", r.arch},
            {"bucket", r.bucket},
            {"variant", variant_json(r.variant)},
            {"kernel_hash", hex16(r.kernel_hash)},
            {"candidates", std::move(candidates)}};
}

std::optional<TuningRecord> load_tuning(const std::string& cache_dir, const TuningRecord& key) {
    if (cache_dir.empty()) return std::nullopt;
    const std::string path = record_path(cache_dir, key);
    std::optional<json> doc = read_json_file(path);
    if (!doc) return std::nullopt;
    try {
        TuningRecord r = record_from_json(*doc, path, "(top level)");
        // Another key whose text hashed alike is a miss, not a choice.
        if (tuning_key_text(r) != tuning_key_text(key)) return std::nullopt;
        return r;
    } catch (const Error& e) {
        log().warn("ignoring a stored tuning choice: {}", e.what());
        return std::nullopt;
    }
}

void store_tuning(const std::string& cache_dir, const TuningRecord& r) {
    if (cache_dir.empty()) return;
    try {
        fs::create_directories(tuning_dir(cache_dir));
        write_atomically(record_path(cache_dir, r), tuning_json(r).dump(1) + "\n");
    } catch (const std::exception& e) {
        log().warn("the tuning choice of '{}' on {} was not stored: {}", r.family, r.device,
                   e.what());
    }
}

} // namespace detail

std::vector<TuningRecord> stored_tunings(const std::string& cache_dir) {
    std::vector<TuningRecord> out;
    if (cache_dir.empty()) return out;
    for (const std::string& f : detail::json_files(detail::tuning_dir(cache_dir))) {
        std::optional<nlohmann::json> doc = detail::read_json_file(f);
        try {
            if (!doc) throw Error(ErrorCode::InvalidConfig, f + ": not readable JSON");
            out.push_back(detail::record_from_json(*doc, f, "(top level)"));
        } catch (const Error& e) {
            detail::log().warn("skipping a stored tuning choice: {}", e.what());
        }
    }
    return out;
}

size_t export_tunings(const std::string& cache_dir, const std::string& path) {
    nlohmann::json records = nlohmann::json::array();
    std::vector<TuningRecord> all = stored_tunings(cache_dir);
    for (const TuningRecord& r : all)
        records.push_back(detail::tuning_json(r));
    detail::write_atomically(
        path, nlohmann::json{{"plexus_tuning", 1}, {"records", records}}.dump(1) + "\n");
    return all.size();
}

size_t import_tunings(const std::string& cache_dir, const std::string& path) {
    ErrorContext ctx;
    ctx.file = path;
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error(ErrorCode::InvalidConfig, "cannot read the tuning file", ctx);
    nlohmann::json doc;
    try {
        doc = nlohmann::json::parse(in);
    } catch (const nlohmann::json::exception& e) {
        throw Error(ErrorCode::InvalidConfig, std::string("not JSON: ") + e.what(), ctx);
    }
    ctx.json_path = "plexus_tuning";
    if (!doc.is_object() || doc.value("plexus_tuning", 0) != 1)
        throw Error(ErrorCode::InvalidConfig, "expected 1 (the tuning file's version)", ctx);
    ctx.json_path = "records";
    if (!doc.contains("records") || !doc["records"].is_array())
        throw Error(ErrorCode::InvalidConfig, "expected an array of tuning records", ctx);
    // Every record is read before any is stored: a bad file stores nothing.
    std::vector<TuningRecord> records;
    for (size_t i = 0; i < doc["records"].size(); ++i)
        records.push_back(detail::record_from_json(doc["records"][i], path,
                                                   "records[" + std::to_string(i) + "]"));
    if (cache_dir.empty())
        throw Error(ErrorCode::InvalidConfig, "there is no cache directory to import into", ctx);
    fs::create_directories(detail::tuning_dir(cache_dir));
    for (const TuningRecord& r : records)
        detail::write_atomically(detail::record_path(cache_dir, r),
                                 detail::tuning_json(r).dump(1) + "\n");
    return records.size();
}

} // namespace plexus
