// The timeline of one Runtime as a Chrome/Perfetto trace (PLEXUS_TRACE=file.json or the
// configuration's "trace"): plugin loads, code generation phases, module loads, transfers and
// launches, one track per backend and device. Off, each hook is one test of a null pointer.
#pragma once

#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace plexus::detail {

class Trace {
public:
    using Clock = std::chrono::steady_clock;

    explicit Trace(std::string path);
    ~Trace(); // writes the file; a failure is logged, never thrown
    Trace(const Trace&) = delete;
    Trace& operator=(const Trace&) = delete;

    // One complete event on `track` (created on first use, named in the file).
    void span(const std::string& track, const std::string& name, const char* category,
              Clock::time_point start, Clock::time_point end,
              nlohmann::json args = nlohmann::json::object());

    // Writes every event so far; called by the destructor.
    void write() const;

private:
    double micros(Clock::time_point t) const;

    std::string path_;
    Clock::time_point origin_ = Clock::now();
    mutable std::mutex mutex_;
    std::vector<nlohmann::json> events_;
    std::map<std::string, int> tracks_;
};

// Times a scope onto a trace when there is one: `TraceSpan s(trace, track, name, category);`
// then, optionally, s.args["bytes"] = n.
class TraceSpan {
public:
    TraceSpan(Trace* trace, std::string track, std::string name, const char* category)
        : trace_(trace), category_(category) {
        if (!trace_) return;
        track_ = std::move(track);
        name_ = std::move(name);
        start_ = Trace::Clock::now();
    }
    ~TraceSpan() {
        if (trace_)
            trace_->span(track_, name_, category_, start_, Trace::Clock::now(), std::move(args));
    }
    TraceSpan(const TraceSpan&) = delete;
    TraceSpan& operator=(const TraceSpan&) = delete;

    nlohmann::json args = nlohmann::json::object();

private:
    Trace* trace_;
    const char* category_;
    std::string track_, name_;
    Trace::Clock::time_point start_{};
};

} // namespace plexus::detail
