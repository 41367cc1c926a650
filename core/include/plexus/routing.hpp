// Routing by measured cost (config `routing: "measured"`): what a launch's choice of device
// predicted and measured, and the history stored under the cache directory. See
// docs/routing.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace plexus {

// A launch's size class: the number of bits of its work-items (the grid's product) and of the
// bytes of its buffers (each once). A launch of 1000 work-items over 12 KB is {10, 14}: the
// history of one bucket predicts launches of about the same size.
struct LaunchBucket {
    uint8_t items_bits = 0, bytes_bits = 0;
    auto operator<=>(const LaunchBucket&) const = default;
};
std::string to_string(const LaunchBucket& b); // "under 2^10 items, under 2^14 bytes"

// One candidate of a measured routing decision.
struct RoutePrediction {
    std::string backend, device;
    uint32_t device_index = 0;
    // Timed launches of the kernel in this bucket on the device (this process's and stored).
    uint32_t samples = 0;
    double kernel_seconds = 0; // the median of those launches (launch to completion, wall)
    double fastest_seconds = 0, slowest_seconds = 0; // the quickest and the slowest of them
    // The launch's buffer bytes that are not current on the device, and the time to move them
    // there at the links' measured bandwidth (through the host when they are on another
    // device).
    uint64_t moved_bytes = 0;
    double transfer_seconds = 0;
    // What the choice compared: kernel_seconds + transfer_seconds / the launches of this
    // (kernel, bucket) so far, this one included. A move is paid once and the kernel's time at
    // every launch: the longer a kernel has run, the likelier it runs on, and the less a move
    // to a faster device weighs against it.
    double predicted_seconds = 0;
};

// The latest decision for one (kernel, bucket): where the launch went and why.
struct RoutingDecision {
    std::string kernel;
    uint64_t kernel_hash = 0;
    LaunchBucket bucket;
    std::string backend; // the choice
    uint32_t device_index = 0;
    // "measured" (the smallest prediction), "exploring" (a candidate still had fewer than
    // kRouteSamples timed launches: the launch went there and was timed)
    std::string source;
    std::vector<RoutePrediction> candidates; // in the router's priority order
    uint64_t launches = 0;                   // launches of this (kernel, bucket) decided so far
};

// Timed launches per (kernel, bucket, device) before predictions are trusted, after this many
// more in each process that are timed and not kept: a first launch on a device pays one-time
// costs (pages of new buffer copies, worker threads waking, lazy module loads).
inline constexpr uint32_t kRouteSamples = 3;
inline constexpr uint32_t kRouteWarmups = 1;
// Where the predicted fastest candidate and another one are close (each one's quickest launch
// is no slower than the other's slowest, transfers included), both are timed until each has
// this many launches: three are too few to tell devices apart that are within their noise.
inline constexpr uint32_t kRouteCloseSamples = 8;

// One stored history entry: the kernel's timed launches on one device in one bucket.
struct RouteRecord {
    std::string kernel;
    uint64_t kernel_hash = 0;
    std::string backend, backend_version, device, arch;
    LaunchBucket bucket;
    std::vector<double> seconds; // the latest timed launches, oldest first
    // Their median: what measured routing predicts from (the mean of the middle two for an
    // even count).
    double median_seconds() const;
};

// Every history entry stored under `cache_dir`/routing, by kernel then device; unreadable files
// are skipped with a warning.
std::vector<RouteRecord> stored_routes(const std::string& cache_dir);

} // namespace plexus
