// Parallel host memcpy for the staging path of buffer_read / buffer_write. One thread copies
// into page-locked memory several times slower than the copy engine moves it on to the GPU
// (docs/benchmarks.md, "What the figures taught": transfers), so large transfers split each
// staging chunk across a few helper threads.
#include "cuda_plugin.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <thread>

namespace plx_cuda {
namespace {

constexpr size_t kPartBytes = size_t(512) << 10;
// That memcpy keeps scaling up to about 16 threads on the GPU machines' hosts.
constexpr unsigned kMaxThreads = 16;

class CopyPool {
public:
    explicit CopyPool(unsigned helpers) {
        for (unsigned i = 0; i < helpers; ++i)
            workers_.emplace_back([this] { work(); });
    }
    ~CopyPool() {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            stop_ = true;
        }
        wake_.notify_all();
        for (std::thread& t : workers_)
            t.join();
    }

    // Returns false when another caller holds the pool; that caller copies alone then.
    bool copy(void* dst, const void* src, size_t bytes) {
        std::unique_lock<std::mutex> job(job_mutex_, std::try_to_lock);
        if (!job.owns_lock()) return false;
        {
            // Helpers still inside the previous job read its fields without the lock; the
            // fields change only once none is.
            std::unique_lock<std::mutex> lock(mutex_);
            idle_.wait(lock, [this] { return active_ == 0; });
            dst_ = static_cast<char*>(dst);
            src_ = static_cast<const char*>(src);
            bytes_ = bytes;
            parts_ = (bytes + kPartBytes - 1) / kPartBytes;
            next_.store(0);
            remaining_ = parts_;
            ++generation_;
        }
        wake_.notify_all();
        run_parts();
        std::unique_lock<std::mutex> lock(mutex_);
        done_.wait(lock, [this] { return remaining_ == 0; });
        return true;
    }

private:
    void run_parts() {
        size_t finished = 0;
        for (size_t p; (p = next_.fetch_add(1)) < parts_; ++finished) {
            const size_t at = p * kPartBytes;
            std::memcpy(dst_ + at, src_ + at, std::min(kPartBytes, bytes_ - at));
        }
        if (finished == 0) return;
        std::lock_guard<std::mutex> lock(mutex_);
        remaining_ -= finished;
        if (remaining_ == 0) done_.notify_all();
    }

    void work() {
        uint64_t seen = 0;
        for (;;) {
            // A transfer posts one job per staging chunk, about every 100 us: a helper that
            // spins briefly takes the next one at once instead of paying a futex wake-up.
            const auto spin_until =
                std::chrono::steady_clock::now() + std::chrono::microseconds(300);
            while (generation_.load(std::memory_order_acquire) == seen &&
                   std::chrono::steady_clock::now() < spin_until)
                std::this_thread::yield();
            {
                std::unique_lock<std::mutex> lock(mutex_);
                wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
                if (stop_) return;
                seen = generation_;
                ++active_;
            }
            run_parts();
            std::lock_guard<std::mutex> lock(mutex_);
            if (--active_ == 0) idle_.notify_all();
        }
    }

    std::mutex job_mutex_; // one parallel copy at a time
    std::mutex mutex_;
    std::condition_variable wake_, done_, idle_;
    std::vector<std::thread> workers_;
    bool stop_ = false;
    std::atomic<uint64_t> generation_{0};
    char* dst_ = nullptr;
    const char* src_ = nullptr;
    size_t bytes_ = 0, parts_ = 0, remaining_ = 0;
    unsigned active_ = 0; // helpers between taking a job and leaving run_parts
    std::atomic<size_t> next_{0};
};

std::mutex g_pool_mutex;
std::unique_ptr<CopyPool> g_pool;

CopyPool* pool() {
    std::lock_guard<std::mutex> lock(g_pool_mutex);
    if (g_pool == nullptr) {
        const unsigned threads = std::clamp(std::thread::hardware_concurrency(), 1u, kMaxThreads);
        if (threads < 2) return nullptr;
        g_pool = std::make_unique<CopyPool>(threads - 1); // the caller is one of the copiers
    }
    return g_pool.get();
}

} // namespace

void host_copy(void* dst, const void* src, size_t bytes) {
    if (bytes >= 2 * kPartBytes)
        if (CopyPool* p = pool(); p != nullptr && p->copy(dst, src, bytes)) return;
    std::memcpy(dst, src, bytes);
}

void stop_copy_pool() {
    std::lock_guard<std::mutex> lock(g_pool_mutex);
    g_pool.reset();
}

} // namespace plx_cuda
