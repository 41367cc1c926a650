// Trace: events kept in memory under a lock and written once, as the Trace Event Format's JSON
// object form ({"traceEvents": [...]}), which chrome://tracing and ui.perfetto.dev open.
#include "trace/trace.hpp"

#include <fstream>
#include <unistd.h>

#include "config/log.hpp"

namespace plexus::detail {

Trace::Trace(std::string path) : path_(std::move(path)) {}

Trace::~Trace() {
    write();
}

double Trace::micros(Clock::time_point t) const {
    return std::chrono::duration<double, std::micro>(t - origin_).count();
}

void Trace::span(const std::string& track, const std::string& name, const char* category,
                 Clock::time_point start, Clock::time_point end, nlohmann::json args) {
    std::lock_guard lock(mutex_);
    auto [it, added] = tracks_.try_emplace(track, static_cast<int>(tracks_.size()) + 1);
    nlohmann::json e = {{"name", name},
                        {"cat", category},
                        {"ph", "X"},
                        {"pid", ::getpid()},
                        {"tid", it->second},
                        {"ts", micros(start)},
                        {"dur", micros(end) - micros(start)}};
    if (!args.empty()) e["args"] = std::move(args);
    events_.push_back(std::move(e));
}

void Trace::write() const {
    std::lock_guard lock(mutex_);
    nlohmann::json events = nlohmann::json::array();
    const int pid = ::getpid();
    events.push_back(
        {{"name", "process_name"}, {"ph", "M"}, {"pid", pid}, {"args", {{"name", "plexus"}}}});
    for (const auto& [track, tid] : tracks_) {
        events.push_back({{"name", "thread_name"},
                          {"ph", "M"},
                          {"pid", pid},
                          {"tid", tid},
                          {"args", {{"name", track}}}});
        events.push_back({{"name", "thread_sort_index"},
                          {"ph", "M"},
                          {"pid", pid},
                          {"tid", tid},
                          {"args", {{"sort_index", tid}}}});
    }
    for (const auto& e : events_)
        events.push_back(e);
    std::ofstream out(path_, std::ios::trunc);
    out << nlohmann::json{{"traceEvents", std::move(events)}, {"displayTimeUnit", "ms"}}.dump()
        << '\n';
    out.close();
    if (!out) log().warn("trace: cannot write '{}'", path_);
}

} // namespace plexus::detail
