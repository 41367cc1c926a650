// What tuning a kernel family measured and chose, and the tuning file: the stored choices of
// a cache directory exported to one JSON file, shipped with an application and imported.
// See docs/tuning.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "plexus/family.hpp"
#include "plexus/routing.hpp"

namespace plexus {

struct TuningCandidate {
    Tuning variant;
    std::string kernel;  // the variant's kernel name
    double seconds = 0;  // the fastest of its timed launches (wall time of launch + wait)
    std::string dropped; // "" when timed; else why not (rejected, compile failure, budget)
};

// One choice of a variant for a (family, device, shape bucket).
struct TuningReport {
    std::string family, backend, device;
    Shape shape, bucket;
    Tuning chosen;
    std::string kernel; // the chosen variant's kernel name
    // "measured" (this process timed the candidates), "stored" (a choice in the cache
    // directory or an imported file), "heuristic" (tuning off, or one candidate only).
    std::string source;
    std::vector<TuningCandidate> candidates; // in the order they were considered
    double tuning_ms = 0;                    // wall time of the tuning, compiles included
    // With routing "measured" and no backend named: each device's best variant's time (its
    // tuning's, or one timing of the heuristic's), the smallest of which chose the device.
    std::vector<RoutePrediction> routes;
};

// One stored choice, as the tuning file and the cache directory hold it.
struct TuningRecord {
    std::string family;
    uint64_t family_hash = 0; // FamilyDef::hash(): name and space
    std::string backend, backend_version, device, arch;
    Shape bucket;
    Tuning variant;
    uint64_t kernel_hash = 0; // the variant's IR hash: a changed kernel source is retuned
    std::vector<TuningCandidate> candidates;
};

// Every choice stored under `cache_dir`/tuning, in file-name order; unreadable files are
// skipped with a warning.
std::vector<TuningRecord> stored_tunings(const std::string& cache_dir);
// Writes them all to `path` as one JSON document ({"plexus_tuning": 1, "records": [...]}):
// returns how many. Throws Error(InvalidArgument) when the file cannot be written.
size_t export_tunings(const std::string& cache_dir, const std::string& path);
// Stores every record of a tuning file under `cache_dir`, replacing choices of the same key;
// returns how many. Throws Error(InvalidConfig) naming the file and JSON path of what is wrong,
// having stored nothing.
size_t import_tunings(const std::string& cache_dir, const std::string& path);

} // namespace plexus
