// A bounded pool of threads for compiles ahead of launches (Runtime::prepare): at most
// `threads` compile at once, started as jobs arrive and stopped with the pool.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace plexus::detail {

class CompilePool {
public:
    // A job runs once: with `cancelled` false on a pool thread, or with true on the thread
    // that stops the pool when the pool stops before it started (the job then only reports).
    using Job = std::function<void(bool cancelled)>;
    explicit CompilePool(unsigned threads);
    ~CompilePool();
    CompilePool(const CompilePool&) = delete;
    CompilePool& operator=(const CompilePool&) = delete;

    void submit(Job job);
    // Runs every queued job as cancelled and waits for the running ones; later submits are
    // cancelled at once. The owner calls it before what the jobs use goes away.
    void stop();

private:
    void work();
    const unsigned max_threads_;
    std::mutex mutex_;
    std::condition_variable wake_;
    std::deque<Job> jobs_;
    std::vector<std::thread> threads_;
    unsigned idle_ = 0;
    bool stopping_ = false;
};

} // namespace plexus::detail
