// The tuner: picks a kernel family's variant for a launch (stored choice, measurement, or
// heuristic), remembers it per shape, and stores what it measured. Internal to libplexus.
#pragma once

#include "plexus/runtime.hpp"
#include "plexus/tuning.hpp"

#include <nlohmann/json.hpp>

#include <map>
#include <mutex>
#include <optional>
#include <span>
#include <tuple>

namespace plexus::detail {

// store.cpp: stored choices, one file per key under cache_dir/tuning.
nlohmann::json tuning_json(const TuningRecord& r);
std::optional<TuningRecord> load_tuning(const std::string& cache_dir, const TuningRecord& key);
void store_tuning(const std::string& cache_dir, const TuningRecord& r); // logs failures

class Tuner {
public:
    explicit Tuner(Runtime& rt) : rt_(rt) {}

    Event launch(const Target& target, const std::shared_ptr<FamilyDef>& family, const Shape& shape,
                 std::span<const LaunchArg> args);
    // The variant for a launch, tuning (with `args`) where nothing is stored; `retune`
    // measures even when a choice is stored.
    TuningReport choose(const Target& target, const FamilyDef& family, const Shape& shape,
                        std::span<const LaunchArg> args, bool retune);
    std::vector<TuningReport> reports() const;
    // How many variant launches tuning has timed in this Runtime (tests count them).
    size_t timed_launches() const;

private:
    // A variant ready to launch on one device.
    struct Choice {
        Target target;
        std::shared_ptr<const ir::Kernel> kernel;
        Grid grid{1};
    };
    struct Device {
        const Backend* backend;
        uint32_t index;
        int priority; // the router's
    };
    std::vector<Device> devices(const FamilyDef& family, const Target& target) const;
    // The variant's kernel and grid on the device, or why it cannot run there.
    std::optional<Choice> fit(const FamilyDef& family, const Tuning& v, const Device& d,
                              const Shape& shape, std::string& why) const;
    Choice resolve(const Target& target, const FamilyDef& family, const Shape& shape,
                   std::span<const LaunchArg> args, TuningReport& report, bool retune);
    // The variant for one device: stored, measured or the heuristic's; `seconds` its time
    // where one is known (else -1). std::nullopt, with `tried` extended, when none runs there.
    std::optional<Choice> tune_on(const Device& d, const FamilyDef& family, const Shape& shape,
                                  std::span<const LaunchArg> args, TuningReport& report,
                                  bool retune, double& seconds, std::string& tried);
    double time_variant(const Choice& c, std::span<const LaunchArg> args);

    Runtime& rt_;
    mutable std::mutex mutex_; // one tuning at a time; guards everything below
    std::map<std::tuple<const FamilyDef*, std::string, int, Shape>,
             std::pair<std::shared_ptr<FamilyDef>, Choice>>
        chosen_;
    std::vector<TuningReport> reports_;
    size_t timed_ = 0;
};

} // namespace plexus::detail
