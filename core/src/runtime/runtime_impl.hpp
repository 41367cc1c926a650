// Runtime::Impl: the state behind a plexus::Runtime. Internal to libplexus.
#pragma once

#include <memory>
#include <vector>

#include "plexus/backend.hpp"
#include "plexus/config.hpp"
#include "plexus/runtime.hpp"
#include "runtime/executor.hpp"
#include "trace/trace.hpp"
#include "tune/tuner.hpp"

namespace plexus {

struct Runtime::Impl {
    explicit Impl(Config c);

    // Members are destroyed in reverse order: anything holding plugin handles (buffers,
    // queues, modules) must be declared after `backends`, so it is released while the
    // plugins are still loaded.
    Config config;
    std::unique_ptr<detail::Trace> trace; // written when destroyed: after everything it times
    std::vector<LoadReportEntry> report;
    std::vector<std::unique_ptr<Backend>> backends; // discovery order; keep the plugins loaded
    std::unique_ptr<detail::Executor> exec;         // queues, caches: released before plugins
    std::unique_ptr<detail::Tuner> tuner;           // family choices (kernels, no handles)

    detail::Executor& executor() { return *exec; }
};

} // namespace plexus
