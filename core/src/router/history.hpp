// The measured side of routing (config `routing: "measured"`): timed launches per (kernel,
// launch bucket, device), the links' bandwidth, the latest decision per (kernel, bucket), and
// the choice among predictions. History and links are stored under cache_dir/routing, so a
// later process predicts at once. Internal to libplexus.
#pragma once

#include "compile/compiler.hpp"
#include "plexus/routing.hpp"

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace plexus::detail {

LaunchBucket launch_bucket(uint64_t items, uint64_t bytes);

// The median of the samples; 0 for none.
double median(std::vector<double> samples);

// A candidate whose timed launches so far take more than this many times the fastest
// candidate's needs no more: one slow launch of a slow device is enough to pass it over.
inline constexpr double kRouteSettled = 4;

// Which candidate the launch-th launch of a (kernel, bucket) goes to: the first (in the
// router's order) that has fewer than kRouteSamples timed launches and is not settled as slow,
// with `exploring` set; else, where a candidate is close to the smallest prediction (their
// ranges of launches overlap) and either has fewer than kRouteCloseSamples, the earlier of the
// two that has fewer, `exploring` set; else the smallest prediction (the
// earlier on a tie). Sets each candidate's predicted_seconds. `candidates` is not empty;
// `launch` counts from 1.
size_t choose_route(std::vector<RoutePrediction>& candidates, uint64_t launch, bool& exploring);

// Bytes per second between host memory and a device's memory, each way.
struct Link {
    double write_bytes_per_s = 0; // host to device
    double read_bytes_per_s = 0;  // device to host
};

// What launching on one candidate would cost before its kernel runs.
struct RouteCost {
    DeviceTarget* device = nullptr;
    uint64_t moved_bytes = 0;
    double transfer_seconds = 0;
};

class RouteHistory {
public:
    // "" keeps everything in memory.
    explicit RouteHistory(std::string cache_dir) : dir_(std::move(cache_dir)) {}

    struct Choice {
        size_t index = 0; // into the candidates
        bool exploring = false;
    };
    // Where the next launch of the kernel in the bucket goes among `candidates` (the router's
    // order), recorded as the (kernel, bucket)'s latest decision. The kernel's stored history
    // is read at its first use; a launch whose candidates are those of the last one allocates
    // nothing.
    Choice decide(uint64_t hash, const std::string& kernel, LaunchBucket bucket,
                  std::span<const RouteCost> candidates);
    // One more timed launch: the first kRouteWarmups of each candidate in the process are not
    // kept; the kernel's history is stored each time an entry has gained kRouteSamples more.
    void add(uint64_t hash, LaunchBucket bucket, const DeviceTarget& device, double seconds);

    // The device's link as stored in the cache directory; std::nullopt when none is. The
    // Executor keeps the link it uses in the device's context.
    std::optional<Link> load_link(const DeviceTarget& device) const;
    void store_link(const DeviceTarget& device, const Link& link) const;

    std::vector<RoutingDecision> decisions() const;
    uint64_t timed_launches() const;

private:
    struct KernelHistory {
        std::string kernel;
        // Per (device identity, bucket).
        std::map<std::pair<std::string, LaunchBucket>, RouteRecord> entries;
    };
    // One (kernel, bucket): its latest decision, whose candidates' samples are kept current by
    // add(), and each candidate's history entry.
    struct Route {
        RoutingDecision decision;
        std::vector<const DeviceTarget*> devices;
        std::vector<RouteRecord*> records; // into kernels_ (map nodes stay put)
        std::vector<uint32_t> warmups;     // timed launches not kept, per candidate
    };
    KernelHistory& kernel_history(uint64_t hash, const std::string& kernel); // lock held
    void store(uint64_t hash, const KernelHistory& h) const;                 // lock held
    RouteRecord& entry(KernelHistory& h, uint64_t hash, LaunchBucket bucket,
                       const DeviceTarget& device); // lock held

    std::string dir_;
    mutable std::mutex mutex_;
    std::map<uint64_t, KernelHistory> kernels_;
    std::map<std::pair<uint64_t, LaunchBucket>, Route> routes_;
    uint64_t timed_ = 0;
};

} // namespace plexus::detail
