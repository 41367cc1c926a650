// `plexus bench --routing`: measured routing's choice per sample, beside each device's own time.
// Per sample problem, in a Runtime with routing "measured" and an empty cache directory of its
// own: the problem runs until every one of its launches is decided by measurement and four runs
// more (at most 24), its result is checked, and then it runs pinned to each candidate device, timed
// apart from the routing's own measurements. The row says where routing sent it and whether that
// device was the fastest pinned one (within 10 %).
#include "app.hpp"
#include "bench.hpp"

#include "problems.hpp"

#include <cstdio>
#include <set>

namespace plexus::app {

namespace {

// A choice within this factor of the fastest pinned time agrees with it.
constexpr double kWithin = 1.10;

// Where the problem's launches went: the measured decisions' devices, or a family's tuning
// choice; and the candidates measured routing compared ("backend:device").
void choices(Runtime& rt, std::set<std::string>& chosen, std::set<std::string>& candidates,
             bool& settled) {
    settled = true;
    for (const RoutingDecision& d : rt.routing_decisions()) {
        chosen.insert(d.backend + ":" + std::to_string(d.device_index));
        settled = settled && d.source == "measured";
        for (const RoutePrediction& p : d.candidates)
            candidates.insert(p.backend + ":" + std::to_string(p.device_index));
    }
    for (const TuningReport& r : rt.tuning_reports()) {
        for (const RoutePrediction& p : r.routes) {
            candidates.insert(p.backend + ":" + std::to_string(p.device_index));
            if (p.backend == r.backend && p.device == r.device)
                chosen.insert(p.backend + ":" + std::to_string(p.device_index));
        }
    }
}

nlohmann::json routing_row(const std::string& name, size_t size, int reps) {
    TempDir cache;
    Config config = load_config();
    config.routing = Routing::Measured;
    config.cache_dir = cache.path;
    Runtime rt(config);
    auto p = samples::make_problem(name, size ? size : samples::run_size(name, false), rt, 42);
    bool settled = false;
    int runs = 0, after = 0;
    std::set<std::string> chosen, candidates;
    // Until every launch is decided by measurement, then a few runs more: a move to the
    // faster device weighs less at each launch (docs/routing.md).
    while (after < 4 && runs < 24) {
        p->run(rt, Target{});
        ++runs;
        chosen.clear();
        candidates.clear();
        choices(rt, chosen, candidates, settled);
        after += settled;
    }
    const samples::CheckResult check = p->check();
    if (!settled) std::printf("  not settled after %d runs\n", runs);
    nlohmann::json row = {{"kernel", name},     {"size", p->size_text()},
                          {"mode", "routing"},  {"runs_to_settle", runs},
                          {"settled", settled}, {"verified", check.ok()}};
    std::string chosen_text;
    for (const std::string& c : chosen)
        chosen_text += (chosen_text.empty() ? "" : "+") + c;
    row["chosen"] = chosen_text;
    // The problem routed as it settled, then each candidate pinned, timed the same way (routed
    // first: a pinned run leaves its outputs on its device, where routing would then find them).
    const double routed_s = median_seconds(reps, [&] { p->run(rt, Target{}); });
    row["routed_seconds"] = routed_s;
    std::string fastest;
    double fastest_s = 0;
    nlohmann::json times = nlohmann::json::object();
    std::string times_text;
    for (const std::string& c : candidates) {
        const size_t colon = c.rfind(':');
        const Target target{c.substr(0, colon), std::stoi(c.substr(colon + 1))};
        double s = 0;
        try {
            s = median_seconds(reps, [&] { p->run(rt, target); });
        } catch (const Error& e) {
            // A candidate of one of the problem's kernels that cannot run another of them.
            times[c] = e.what();
            times_text += "  " + c + " cannot run it";
            continue;
        }
        times[c] = s;
        char text[64];
        std::snprintf(text, sizeof text, "  %s %.4g ms", c.c_str(), s * 1e3);
        times_text += text;
        if (fastest.empty() || s < fastest_s) fastest = c, fastest_s = s;
    }
    row["pinned_seconds"] = times;
    row["fastest_pinned"] = fastest;

    // The choice agrees when the device chosen runs the problem pinned within 10 % of the
    // fastest (two devices closer than that trade places run to run); a problem split across
    // devices has no pinned time of its choice, so its routed time is compared instead. The
    // routed time itself is the first runs' on fresh buffers, noisier than a choice.
    const bool one =
        chosen.size() == 1 && times.contains(*chosen.begin()) && times[*chosen.begin()].is_number();
    const double chosen_s = one ? times[*chosen.begin()].get<double>() : routed_s;
    const bool agrees = candidates.size() < 2 || chosen_s <= kWithin * fastest_s;
    row["agrees"] = agrees;
    std::printf("%-17s %-18s routed %.4g ms on %-16s pinned:%s  %s%s\n", name.c_str(),
                p->size_text().c_str(), routed_s * 1e3,
                chosen_text.empty() ? "(one device)" : chosen_text.c_str(), times_text.c_str(),
                candidates.size() < 2           ? "one candidate"
                : !agrees                       ? "chose a SLOWER device than the fastest"
                : one && chosen_text == fastest ? "chose the fastest device"
                : one                           ? "chose a device within 10 % of the fastest"
                                                : "as fast as the fastest (within 10 %)",
                check.ok() ? "" : "  (result WRONG)");
    return row;
}

} // namespace

int run_routing_bench(const std::string& only_kernel, size_t size, int reps,
                      const std::string& json_path) {
    std::printf("measured routing (routing \"measured\", a fresh cache directory per sample): "
                "the choice, and each candidate pinned (median of %d runs)\n",
                reps);
    nlohmann::json results = nlohmann::json::array();
    int disagreements = 0;
    for (const std::string& name : samples::problem_names()) {
        if (!only_kernel.empty() && name != only_kernel) continue;
        try {
            results.push_back(routing_row(name, size, reps));
            disagreements += !results.back().value("agrees", true);
        } catch (const std::exception& e) {
            // A problem that sizes its launches for the device it is given (reduce's groups
            // for the device's subgroups) runs only pinned.
            std::printf("%-17s skipped: %s\n", name.c_str(), e.what());
            results.push_back({{"kernel", name}, {"mode", "routing"}, {"skipped", e.what()}});
        }
        std::fflush(stdout);
    }
    std::printf("%d sample(s) chose a device more than 10 %% slower pinned than the fastest\n",
                disagreements);
    if (!json_path.empty()) {
        write_json(json_path, {{"results", results}});
    }
    return 0;
}

} // namespace plexus::app
