// RouteHistory: timed launches and links in memory, stored as one JSON file per kernel under
// cache_dir/routing and one per device under cache_dir/routing/links.
#include "router/history.hpp"

#include "cache/disk_cache.hpp"
#include "cache/json_file.hpp"
#include "config/log.hpp"

#include <algorithm>
#include <bit>
#include <filesystem>

namespace plexus {
namespace fs = std::filesystem;
using nlohmann::json;

double RouteRecord::median_seconds() const {
    return detail::median(seconds);
}

std::string to_string(const LaunchBucket& b) {
    return "under 2^" + std::to_string(b.items_bits) + " items, under 2^" +
           std::to_string(b.bytes_bits) + " bytes";
}

namespace detail {

namespace {

// The timed launches an entry keeps: the latest ones.
constexpr size_t kKeptSamples = kRouteCloseSamples;

// A prediction's samples, median and range from its kept launches.
void describe(RoutePrediction& p, const std::vector<double>& seconds) {
    p.samples = uint32_t(seconds.size());
    p.kernel_seconds = median(seconds);
    auto [lo, hi] = std::minmax_element(seconds.begin(), seconds.end());
    p.fastest_seconds = seconds.empty() ? 0 : *lo;
    p.slowest_seconds = seconds.empty() ? 0 : *hi;
}

// What a measurement holds for: the backend and its version, the device and its architecture.
std::string identity(const std::string& backend, const std::string& version,
                     const std::string& device, const std::string& arch) {
    return backend + '\n' + version + '\n' + device + '\n' + arch;
}
std::string identity(const DeviceTarget& d) {
    return identity(d.backend->name(), d.backend->version(), d.info->name, d.info->arch);
}

std::string routing_dir(const std::string& cache_dir) {
    return (fs::path(cache_dir) / "routing").string();
}

std::string kernel_file(const std::string& cache_dir, uint64_t hash) {
    return (fs::path(routing_dir(cache_dir)) / (hex16(hash) + ".json")).string();
}

std::string link_file(const std::string& cache_dir, const std::string& id) {
    return (fs::path(routing_dir(cache_dir)) / "links" /
            (hex16(fnv1a64(id.data(), id.size())) + ".json"))
        .string();
}

// The entries of one kernel's file; throws a message naming the JSON path of what is wrong.
std::vector<RouteRecord> read_kernel_file(const json& doc, const std::string& file) {
    auto fail = [&](const std::string& at, const std::string& what) {
        ErrorContext ctx;
        ctx.file = file;
        ctx.json_path = at;
        throw Error(ErrorCode::InvalidConfig, what, ctx);
    };
    if (!doc.is_object() || doc.value("plexus_routes", 0) != 1)
        fail("plexus_routes", "expected 1 (the routing history's version)");
    auto text = [&](const json& o, const std::string& key, const std::string& at) {
        if (!o.contains(key) || !o[key].is_string()) fail(at + "." + key, "expected a string");
        return o[key].get<std::string>();
    };
    RouteRecord base;
    base.kernel = text(doc, "kernel", "(top level)");
    const std::string hash = text(doc, "kernel_hash", "(top level)");
    if (hash.size() != 16 || hash.find_first_not_of("0123456789abcdef") != std::string::npos)
        fail("kernel_hash", "expected 16 lower-case hex digits");
    base.kernel_hash = std::stoull(hash, nullptr, 16);
    if (!doc.contains("entries") || !doc["entries"].is_array())
        fail("entries", "expected an array");
    std::vector<RouteRecord> out;
    for (size_t i = 0; i < doc["entries"].size(); ++i) {
        const json& e = doc["entries"][i];
        const std::string at = "entries[" + std::to_string(i) + "]";
        if (!e.is_object()) fail(at, "expected an object");
        RouteRecord r = base;
        r.backend = text(e, "backend", at);
        r.backend_version = text(e, "backend_version", at);
        r.device = text(e, "device", at);
        r.arch = text(e, "arch", at);
        const json* b = e.contains("bucket") ? &e["bucket"] : nullptr;
        if (!b || !b->is_array() || b->size() != 2 || !(*b)[0].is_number_unsigned() ||
            !(*b)[1].is_number_unsigned() || (*b)[0].get<unsigned>() > 64 ||
            (*b)[1].get<unsigned>() > 64)
            fail(at + ".bucket", "expected [items bits, bytes bits], each 0 to 64");
        r.bucket = {uint8_t((*b)[0].get<unsigned>()), uint8_t((*b)[1].get<unsigned>())};
        if (!e.contains("seconds") || !e["seconds"].is_array())
            fail(at + ".seconds", "expected an array of times");
        for (size_t j = 0; j < e["seconds"].size(); ++j) {
            const json& s = e["seconds"][j];
            if (!s.is_number() || s.get<double>() < 0)
                fail(at + ".seconds[" + std::to_string(j) + "]", "expected a time >= 0");
            r.seconds.push_back(s.get<double>());
        }
        out.push_back(std::move(r));
    }
    return out;
}

} // namespace

LaunchBucket launch_bucket(uint64_t items, uint64_t bytes) {
    return {uint8_t(std::bit_width(items)), uint8_t(std::bit_width(bytes))};
}

double median(std::vector<double> s) {
    if (s.empty()) return 0;
    const size_t mid = s.size() / 2;
    std::nth_element(s.begin(), s.begin() + mid, s.end());
    if (s.size() % 2) return s[mid];
    return (s[mid] + *std::max_element(s.begin(), s.begin() + mid)) / 2;
}

size_t choose_route(std::vector<RoutePrediction>& c, uint64_t launch, bool& exploring) {
    for (RoutePrediction& p : c)
        p.predicted_seconds =
            p.kernel_seconds + p.transfer_seconds / double(std::max<uint64_t>(launch, 1));
    double fastest = 0;
    for (const RoutePrediction& p : c)
        if (p.samples > 0 && (fastest == 0 || p.kernel_seconds < fastest))
            fastest = p.kernel_seconds;
    for (size_t i = 0; i < c.size(); ++i)
        if (c[i].samples < kRouteSamples &&
            !(c[i].samples > 0 && c[i].kernel_seconds > kRouteSettled * fastest)) {
            exploring = true;
            return i;
        }
    size_t best = 0;
    for (size_t i = 1; i < c.size(); ++i)
        if (c[i].predicted_seconds < c[best].predicted_seconds) best = i;
    // Close calls: a candidate not settled as slow whose range overlaps the best one's.
    const double launches = double(std::max<uint64_t>(launch, 1));
    auto low = [&](const RoutePrediction& p) {
        return p.fastest_seconds + p.transfer_seconds / launches;
    };
    auto high = [&](const RoutePrediction& p) {
        return p.slowest_seconds + p.transfer_seconds / launches;
    };
    // A best settled as slow (chosen for another's transfer) is no call to time more.
    for (size_t i = 0; i < c.size() && c[best].samples >= kRouteSamples; ++i) {
        if (i == best || c[i].samples < kRouteSamples) continue; // settled as slow
        if (low(c[i]) > high(c[best]) || low(c[best]) > high(c[i])) continue;
        if (c[i].samples >= kRouteCloseSamples && c[best].samples >= kRouteCloseSamples) continue;
        // The earlier of the two first, until it has its launches: one device's launches
        // back to back, where alternating would time each right after the other device's
        // (a CPU's worker threads of one backend still spinning while the other's run).
        exploring = true;
        const size_t first = std::min(i, best), second = std::max(i, best);
        return c[first].samples < kRouteCloseSamples ? first : second;
    }
    exploring = false;
    return best;
}

RouteHistory::KernelHistory& RouteHistory::kernel_history(uint64_t hash,
                                                          const std::string& kernel) {
    auto [it, fresh] = kernels_.try_emplace(hash);
    KernelHistory& h = it->second;
    if (!fresh) return h;
    h.kernel = kernel;
    if (dir_.empty()) return h;
    const std::string file = kernel_file(dir_, hash);
    std::optional<json> doc = read_json_file(file);
    if (!doc) return h;
    try {
        for (RouteRecord& r : read_kernel_file(*doc, file)) {
            if (r.kernel_hash != hash) continue;
            const std::string id = identity(r.backend, r.backend_version, r.device, r.arch);
            h.entries[{id, r.bucket}] = std::move(r);
        }
    } catch (const Error& e) {
        log().warn("ignoring the stored routing history of kernel '{}': {}", kernel, e.what());
        h.entries.clear();
    }
    return h;
}

void RouteHistory::store(uint64_t hash, const KernelHistory& h) const {
    if (dir_.empty()) return;
    json entries = json::array();
    for (const auto& [key, r] : h.entries)
        if (!r.seconds.empty())
            entries.push_back({{"backend", r.backend},
                               {"backend_version", r.backend_version},
                               {"device", r.device},
                               {"arch", r.arch},
                               {"bucket", {r.bucket.items_bits, r.bucket.bytes_bits}},
                               {"seconds", r.seconds}});
    const json doc = {{"plexus_routes", 1},
                      {"kernel", h.kernel},
                      {"kernel_hash", hex16(hash)},
                      {"entries", std::move(entries)}};
    try {
        fs::create_directories(routing_dir(dir_));
        write_atomically(kernel_file(dir_, hash), doc.dump(1) + "\n");
    } catch (const std::exception& e) {
        log().warn("the routing history of kernel '{}' was not stored: {}", h.kernel, e.what());
    }
}

RouteRecord& RouteHistory::entry(KernelHistory& h, uint64_t hash, LaunchBucket bucket,
                                 const DeviceTarget& device) {
    RouteRecord& r = h.entries[{identity(device), bucket}];
    if (r.backend.empty()) {
        r.kernel = h.kernel;
        r.kernel_hash = hash;
        r.backend = device.backend->name();
        r.backend_version = device.backend->version();
        r.device = device.info->name;
        r.arch = device.info->arch;
        r.bucket = bucket;
    }
    return r;
}

RouteHistory::Choice RouteHistory::decide(uint64_t hash, const std::string& kernel,
                                          LaunchBucket bucket,
                                          std::span<const RouteCost> candidates) {
    std::lock_guard lock(mutex_);
    if (routes_.size() >= 4096 && !routes_.contains({hash, bucket})) routes_.clear();
    Route& route = routes_[{hash, bucket}];
    const bool same =
        route.devices.size() == candidates.size() &&
        std::equal(candidates.begin(), candidates.end(), route.devices.begin(),
                   [](const RouteCost& c, const DeviceTarget* d) { return c.device == d; });
    if (!same) { // the first launch, or a candidate failed since
        KernelHistory& h = kernel_history(hash, kernel);
        route.devices.clear();
        route.records.clear();
        route.warmups.assign(candidates.size(), 0);
        route.decision.kernel = kernel;
        route.decision.kernel_hash = hash;
        route.decision.bucket = bucket;
        route.decision.candidates.clear();
        for (const RouteCost& c : candidates) {
            RouteRecord& r = entry(h, hash, bucket, *c.device);
            route.devices.push_back(c.device);
            route.records.push_back(&r);
            RoutePrediction p;
            p.backend = c.device->backend->name();
            p.device = c.device->info->name;
            p.device_index = c.device->index;
            describe(p, r.seconds);
            route.decision.candidates.push_back(std::move(p));
        }
    }
    RoutingDecision& d = route.decision;
    for (size_t i = 0; i < candidates.size(); ++i) {
        d.candidates[i].moved_bytes = candidates[i].moved_bytes;
        d.candidates[i].transfer_seconds = candidates[i].transfer_seconds;
    }
    Choice choice;
    choice.index = choose_route(d.candidates, ++d.launches, choice.exploring);
    d.backend = d.candidates[choice.index].backend;
    d.device_index = d.candidates[choice.index].device_index;
    d.source = choice.exploring ? "exploring" : "measured";
    return choice;
}

void RouteHistory::add(uint64_t hash, LaunchBucket bucket, const DeviceTarget& device,
                       double seconds) {
    std::lock_guard lock(mutex_);
    ++timed_;
    auto route = routes_.find({hash, bucket});
    if (route == routes_.end()) return; // decide() made it for the launch
    Route& r = route->second;
    const size_t i =
        size_t(std::find(r.devices.begin(), r.devices.end(), &device) - r.devices.begin());
    if (i == r.devices.size()) return;
    if (r.warmups[i] < kRouteWarmups) {
        ++r.warmups[i];
        return;
    }
    std::vector<double>& s = r.records[i]->seconds;
    s.push_back(seconds);
    if (s.size() > kKeptSamples) s.erase(s.begin());
    describe(r.decision.candidates[i], s);
    if (s.size() % kRouteSamples == 0 || s.size() == kKeptSamples) store(hash, kernels_.at(hash));
}

std::optional<Link> RouteHistory::load_link(const DeviceTarget& device) const {
    if (dir_.empty()) return std::nullopt;
    const std::string id = identity(device);
    std::optional<json> doc = read_json_file(link_file(dir_, id));
    if (!doc || !doc->is_object() || doc->value("identity", "") != id) return std::nullopt;
    const double w = doc->value("write_bytes_per_s", 0.0), r = doc->value("read_bytes_per_s", 0.0);
    if (!(w > 0) || !(r > 0)) return std::nullopt;
    return Link{w, r};
}

void RouteHistory::store_link(const DeviceTarget& device, const Link& link) const {
    if (dir_.empty()) return;
    const std::string id = identity(device);
    try {
        const std::string file = link_file(dir_, id);
        fs::create_directories(fs::path(file).parent_path());
        write_atomically(file, json{{"identity", id},
                                    {"write_bytes_per_s", link.write_bytes_per_s},
                                    {"read_bytes_per_s", link.read_bytes_per_s}}
                                       .dump(1) +
                                   "\n");
    } catch (const std::exception& e) {
        log().warn("the link bandwidth of {} was not stored: {}", device.label, e.what());
    }
}

std::vector<RoutingDecision> RouteHistory::decisions() const {
    std::lock_guard lock(mutex_);
    std::vector<RoutingDecision> out;
    for (const auto& [key, r] : routes_)
        out.push_back(r.decision);
    return out;
}

uint64_t RouteHistory::timed_launches() const {
    std::lock_guard lock(mutex_);
    return timed_;
}

} // namespace detail

std::vector<RouteRecord> stored_routes(const std::string& cache_dir) {
    std::vector<RouteRecord> out;
    if (cache_dir.empty()) return out;
    for (const std::string& f : detail::json_files(detail::routing_dir(cache_dir))) {
        try {
            std::optional<json> doc = detail::read_json_file(f);
            if (!doc) throw Error(ErrorCode::InvalidConfig, f + ": not readable JSON");
            for (RouteRecord& r : detail::read_kernel_file(*doc, f))
                out.push_back(std::move(r));
        } catch (const Error& e) {
            detail::log().warn("skipping a stored routing history: {}", e.what());
        }
    }
    return out;
}

} // namespace plexus
