// The compile pool: threads are made on demand, up to the bound, and wait for more jobs.
#include "compile_pool.hpp"

#include <algorithm>

namespace plexus::detail {

CompilePool::CompilePool(unsigned threads) : max_threads_(std::max(1u, threads)) {}

CompilePool::~CompilePool() {
    stop();
}

void CompilePool::submit(Job job) {
    {
        std::lock_guard lock(mutex_);
        if (!stopping_) {
            jobs_.push_back(std::move(job));
            if (idle_ == 0 && threads_.size() < max_threads_)
                threads_.emplace_back([this] { work(); });
            else
                wake_.notify_one();
            return;
        }
    }
    job(true);
}

void CompilePool::stop() {
    std::deque<Job> dropped;
    std::vector<std::thread> threads;
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
        dropped.swap(jobs_);
        threads.swap(threads_);
    }
    wake_.notify_all();
    for (Job& job : dropped)
        job(true);
    for (std::thread& t : threads)
        t.join();
}

void CompilePool::work() {
    std::unique_lock lock(mutex_);
    for (;;) {
        ++idle_;
        wake_.wait(lock, [&] { return stopping_ || !jobs_.empty(); });
        --idle_;
        if (jobs_.empty()) return; // stopping, nothing left
        Job job = std::move(jobs_.front());
        jobs_.pop_front();
        lock.unlock();
        job(false);
        lock.lock();
    }
}

} // namespace plexus::detail
