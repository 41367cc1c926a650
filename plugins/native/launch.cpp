// The native plugin's thread pool and launch_host: runs a work-group function once per group,
// in parallel, with the calling thread taking part; and launch, which runs a library routine
// (routines.cpp). A launch of either kind completes before it returns.
#include "native_plugin.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace plx_native {
namespace {

inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    _mm_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
}

// How long an idle worker or a waiting caller spins before it blocks: long enough to catch
// the next launch of a tight loop without a futex round trip, short enough not to steal much
// from other processes.
constexpr uint64_t kSpinNs = 20'000;
constexpr uint64_t kNoGroup = ~uint64_t{0};

// Set while this thread runs a work-group: a launch from inside one would wait on the pool
// it occupies, so it is refused.
thread_local bool tl_in_group = false;

// One launch. It lives on the launching thread's stack, so nothing is allocated per launch;
// the protocol below guarantees no pool thread touches it once the launch returns.
struct Job {
    plx_workgroup_fn fn = nullptr;
    void* user = nullptr;
    uint32_t dims = 1;
    uint64_t num_groups[3] = {1, 1, 1};
    uint64_t global_size[3] = {1, 1, 1};
    uint32_t local_size[3] = {1, 1, 1};
    size_t local_bytes = 0;
    uint64_t total = 0; // groups
    uint64_t chunk = 1; // groups claimed at a time

    alignas(64) std::atomic<uint64_t> next{0}; // first unclaimed group
    alignas(64) std::atomic<uint64_t> done{0}; // groups finished
    std::atomic<bool> finished{false};         // set by a pool thread that finished it last
    std::atomic<bool> failed{false};
    std::string failure; // written only by the thread that set `failed`

    // Guarded by Pool::mutex_.
    bool in_list = false;
    bool caller_waiting = false;
    Job* list_prev = nullptr;
    Job* list_next = nullptr;
};

uint64_t div_up(uint64_t a, uint64_t b) noexcept {
    return a / b + (a % b != 0);
}

// Claims the next chunk; never moves `next` past `total`, so it cannot wrap.
uint64_t claim(Job& job) noexcept {
    uint64_t cur = job.next.load(std::memory_order_relaxed);
    do {
        if (cur >= job.total) return kNoGroup;
    } while (!job.next.compare_exchange_weak(cur, cur + std::min(job.chunk, job.total - cur),
                                             std::memory_order_relaxed));
    return cur;
}

class Pool {
public:
    explicit Pool(uint32_t threads)
        : threads_(threads), local_(threads), local_capacity_(threads, kLocalMemoryBytes) {}
    ~Pool() { stop(); }

    bool start() {
        for (auto& block : local_) {
            block = static_cast<std::byte*>(std::aligned_alloc(kAlignment, kLocalMemoryBytes));
            if (!block) return false;
        }
        try {
            for (uint32_t i = 1; i < threads_; ++i)
                workers_.emplace_back([this, i] { worker(i); });
        } catch (const std::system_error&) {
            return false;
        }
        return true;
    }

    void stop() noexcept {
        {
            std::lock_guard lock(mutex_);
            stop_.store(true);
        }
        work_cv_.notify_all();
        for (auto& t : workers_)
            t.join();
        workers_.clear();
        for (auto& block : local_)
            std::free(block);
        local_.clear();
    }

    uint32_t threads() const noexcept { return threads_; }

    // Runs every group of `job` and returns once no pool thread will touch it again.
    void run(Job& job) {
        bool published = false;
        for (;;) {
            const bool have_slot = !caller_slot_busy_.exchange(true, std::memory_order_acquire);
            // Share the job when there is more than one chunk and someone to share it with, or
            // when this thread cannot run it itself.
            if (!published && (!have_slot || (!workers_.empty() && job.total > job.chunk))) {
                publish(job, have_slot);
                published = true;
            }
            if (have_slot) {
                const bool last = participate(job);
                release_caller_slot();
                if (last) {
                    if (published) unpublish(job);
                    return;
                }
                wait_finished(job, false);
                return;
            }
            // Pool threads run the job meanwhile; should the caller slot come free first, take
            // it and help (with no pool thread, that is the only way the job runs).
            if (wait_finished(job, true)) return;
        }
    }

private:
    // Worker index 0 belongs to whichever launching thread holds the caller slot; pool
    // threads are 1..threads-1. So at most `threads` groups run at once, each index unique.
    bool participate(Job& job) {
        bool last = false;
        for (uint64_t start; (start = claim(job)) != kNoGroup;) {
            const uint64_t end = std::min(start + job.chunk, job.total);
            run_groups(job, start, end, 0);
            if (job.done.fetch_add(end - start, std::memory_order_acq_rel) + (end - start) ==
                job.total)
                last = true;
        }
        return last;
    }

    void release_caller_slot() {
        caller_slot_busy_.store(false, std::memory_order_seq_cst);
        if (slot_waiters_.load(std::memory_order_seq_cst) > 0) {
            {
                std::lock_guard lock(mutex_);
            }
            done_cv_.notify_all();
        }
    }

    void publish(Job& job, bool caller_helps) {
        uint64_t wake = 0;
        bool wake_all = false;
        {
            std::lock_guard lock(mutex_);
            job.in_list = true;
            job.list_prev = tail_;
            job.list_next = nullptr;
            (tail_ ? tail_->list_next : head_) = &job;
            tail_ = &job;
            pending_.fetch_add(1, std::memory_order_release);
            // Wake only as many sleepers as there are chunks the caller will not run itself;
            // spinning workers see `pending_` without a wake-up.
            const uint64_t chunks = div_up(job.total, job.chunk) - (caller_helps ? 1 : 0);
            wake = std::min<uint64_t>(sleepers_, chunks);
            wake_all = wake != 0 && wake == sleepers_;
        }
        if (wake_all)
            work_cv_.notify_all();
        else
            for (uint64_t i = 0; i < wake; ++i)
                work_cv_.notify_one();
    }

    void unlink(Job& job) {
        if (!job.in_list) return;
        (job.list_prev ? job.list_prev->list_next : head_) = job.list_next;
        (job.list_next ? job.list_next->list_prev : tail_) = job.list_prev;
        job.in_list = false;
        pending_.fetch_sub(1, std::memory_order_relaxed);
    }

    void unpublish(Job& job) {
        std::lock_guard lock(mutex_);
        unlink(job);
    }

    // Waits until a pool thread has finished the job (true), or, when `or_slot`, until the
    // caller slot looks free (false: the caller should try to take it).
    bool wait_finished(Job& job, bool or_slot) {
        const uint64_t deadline = plx_support::now_ns() + kSpinNs;
        for (uint32_t i = 0;; ++i) {
            if (job.finished.load(std::memory_order_acquire)) return true;
            if (or_slot && !caller_slot_busy_.load(std::memory_order_relaxed)) return false;
            if ((i & 63) == 63 && plx_support::now_ns() > deadline) break;
            cpu_relax();
        }
        std::unique_lock lock(mutex_);
        job.caller_waiting = true;
        if (or_slot) slot_waiters_.fetch_add(1, std::memory_order_seq_cst);
        bool result = true;
        for (;;) {
            if (job.finished.load(std::memory_order_acquire)) break;
            if (or_slot && !caller_slot_busy_.load(std::memory_order_seq_cst)) {
                result = false;
                break;
            }
            done_cv_.wait(lock);
        }
        if (or_slot) slot_waiters_.fetch_sub(1, std::memory_order_relaxed);
        job.caller_waiting = false;
        return result;
    }

    // Runs groups [begin, end): x varies fastest, as the linear order of CUDA blocks.
    void run_groups(Job& job, uint64_t begin, uint64_t end, uint32_t worker) noexcept {
        if (job.failed.load(std::memory_order_relaxed)) return;
        plx_workgroup_ctx ctx{};
        ctx.struct_size = sizeof ctx;
        ctx.dims = job.dims;
        for (int d = 0; d < 3; ++d) {
            ctx.num_groups[d] = job.num_groups[d];
            ctx.global_size[d] = job.global_size[d];
            ctx.local_size[d] = job.local_size[d];
        }
        ctx.local_mem_bytes = job.local_bytes;
        ctx.worker = worker;
        const uint64_t nx = job.num_groups[0], ny = job.num_groups[1];
        uint64_t gx = begin % nx, gy = (begin / nx) % ny, gz = begin / nx / ny;
        tl_in_group = true;
        try {
            ctx.local_mem = local_memory(worker, job.local_bytes);
            for (uint64_t g = begin; g < end; ++g) {
                ctx.group_id[0] = gx;
                ctx.group_id[1] = gy;
                ctx.group_id[2] = gz;
                job.fn(&ctx, job.user);
                if (++gx == nx) {
                    gx = 0;
                    if (++gy == ny) {
                        gy = 0;
                        ++gz;
                    }
                }
            }
        } catch (...) {
            // A host function is C and does not throw; a C++ one that does must not take the
            // pool thread down. The first failure wins, the other groups are skipped.
            if (!job.failed.exchange(true)) {
                try {
                    std::rethrow_exception(std::current_exception());
                } catch (const std::exception& e) {
                    job.failure = e.what();
                } catch (...) {
                    job.failure = "an exception that is not a std::exception";
                }
            }
        }
        tl_in_group = false;
    }

    // The worker's local-memory block, grown to `bytes` when a job needs more than it holds:
    // the generated code's per-work-item frames come on top of the kernel's shared arrays,
    // which local_memory_bytes bounds. Only the thread running as `worker` touches its block.
    std::byte* local_memory(uint32_t worker, size_t bytes) {
        if (bytes > local_capacity_[worker]) {
            const size_t size = (bytes + kAlignment - 1) / kAlignment * kAlignment;
            auto* bigger = static_cast<std::byte*>(std::aligned_alloc(kAlignment, size));
            if (!bigger)
                throw std::runtime_error("native: no memory for a work-group's " +
                                         std::to_string(bytes) + " bytes of local memory");
            std::free(local_[worker]);
            local_[worker] = bigger;
            local_capacity_[worker] = size;
        }
        return local_[worker];
    }

    // Finds a job with work left, claims a chunk of it and returns it; drops exhausted jobs.
    Job* pick(uint64_t& start) {
        while (head_) {
            Job* job = head_;
            start = claim(*job);
            if (start != kNoGroup) return job;
            unlink(*job);
        }
        return nullptr;
    }

    void worker(uint32_t index) {
        for (;;) {
            const uint64_t deadline = plx_support::now_ns() + kSpinNs;
            for (uint32_t i = 0; pending_.load(std::memory_order_acquire) == 0 &&
                                 !stop_.load(std::memory_order_relaxed);
                 ++i) {
                if ((i & 63) == 63 && plx_support::now_ns() > deadline) break;
                cpu_relax();
            }
            Job* job = nullptr;
            uint64_t start = 0;
            {
                std::unique_lock lock(mutex_);
                for (;;) {
                    if (stop_.load(std::memory_order_relaxed)) return;
                    // Claiming under the lock keeps the job alive: it cannot finish while
                    // this thread holds unreported groups of it.
                    if ((job = pick(start))) break;
                    ++sleepers_;
                    work_cv_.wait(lock);
                    --sleepers_;
                }
            }
            work_on(*job, start, index);
        }
    }

    // Runs claimed chunks until the job is exhausted. The next chunk is claimed before the
    // current one is reported done, so the job cannot finish (and its launching thread
    // cannot return) while this thread may still read it.
    void work_on(Job& job, uint64_t start, uint32_t index) {
        // Copied, because after a report that is not the last one `job` may be gone.
        const uint64_t total = job.total, chunk = job.chunk;
        for (;;) {
            const uint64_t end = std::min(start + chunk, total);
            run_groups(job, start, end, index);
            const uint64_t next = claim(job);
            if (job.done.fetch_add(end - start, std::memory_order_acq_rel) + (end - start) ==
                total) {
                finish(job);
                return;
            }
            if (next == kNoGroup) return;
            start = next;
        }
    }

    void finish(Job& job) {
        std::lock_guard lock(mutex_);
        unlink(job);
        const bool notify = job.caller_waiting;
        job.finished.store(true, std::memory_order_release);
        // After the store the job may be gone; only the pool's own members are used below.
        if (notify) done_cv_.notify_all();
    }

    const uint32_t threads_;
    std::vector<std::byte*> local_; // one local-memory block per worker index
    std::vector<size_t> local_capacity_;
    std::vector<std::thread> workers_;

    std::mutex mutex_;
    std::condition_variable work_cv_; // pool threads wait here for jobs
    std::condition_variable done_cv_; // launching threads wait here for their job or the slot
    Job* head_ = nullptr;             // published jobs with groups possibly unclaimed
    Job* tail_ = nullptr;
    uint32_t sleepers_ = 0;
    std::atomic<uint32_t> pending_{0}; // jobs in the list, read by spinning workers
    std::atomic<bool> stop_{false};

    std::atomic<bool> caller_slot_busy_{false};
    std::atomic<uint32_t> slot_waiters_{0};
};

std::unique_ptr<Pool> g_pool;

} // namespace

bool pool_start(uint32_t threads) {
    g_pool = std::make_unique<Pool>(threads);
    if (g_pool->start()) return true;
    g_pool.reset();
    fail(PLX_ERROR_OUT_OF_RESOURCES,
         "native: init: could not start " + std::to_string(threads) + " threads");
    return false;
}

void pool_stop() noexcept {
    g_pool.reset();
}

uint32_t pool_threads() noexcept {
    return g_pool ? g_pool->threads() : 0;
}

plx_status launch_host(plx_queue queue, plx_workgroup_fn fn, void* user,
                       const plx_launch_dims* dims, plx_event* event) {
    if (plx_status s = Host::check_queue("launch_host", queue); s != PLX_OK) return s;
    if (!fn) return fail(PLX_ERROR_INVALID_ARGUMENT, "native: launch_host: fn is NULL");
    if (plx_status s = Host::check_dims("launch_host", dims); s != PLX_OK) return s;
    const uint32_t local_bytes = plx_support::dynamic_local_bytes(dims);
    if (tl_in_group)
        return fail(PLX_ERROR_UNSUPPORTED,
                    "native: launch_host: called from inside a work-group of this plugin");

    Job job;
    job.fn = fn;
    job.user = user;
    job.dims = dims->dims;
    job.local_bytes = local_bytes;
    job.total = 1;
    // Unused dimensions are 1 whatever the struct holds, so a zeroed tail means "unused".
    for (uint32_t d = 0; d < dims->dims; ++d) {
        job.global_size[d] = dims->global_size[d];
        job.local_size[d] = dims->local_size[d];
        job.num_groups[d] = div_up(dims->global_size[d], dims->local_size[d]);
        if (__builtin_mul_overflow(job.total, job.num_groups[d], &job.total))
            return fail(PLX_ERROR_OUT_OF_RESOURCES,
                        "native: launch_host: the grid has more than 2^64 work-groups");
    }
    // About four chunks per thread: few enough that claiming costs little against even tiny
    // groups, enough that uneven groups still balance.
    const uint64_t threads = g_pool->threads();
    job.chunk = std::max<uint64_t>(1, job.total / (4 * threads));

    const bool profiling = event && plx_support::queue_profiles(queue);
    const uint64_t start = profiling ? plx_support::now_ns() : 0;
    // A grid with a zero global size has no group to run; that is an empty launch, not an error.
    if (job.total != 0) g_pool->run(job);
    const uint64_t end = profiling ? plx_support::now_ns() : 0;

    if (job.failed.load(std::memory_order_acquire)) {
        const std::string message =
            "native: launch_host: a work-group function threw: " + job.failure;
        if (event) *event = nullptr;
        return fail(PLX_ERROR_LAUNCH, message);
    }
    if (event) return Host::event_create("launch_host", queue, PLX_OK, start, end, event);
    return PLX_OK;
}

// As launch_host: every earlier command of the queue has completed when this is called, and
// the routine completes before it returns, so the queue stays in order and the event is
// complete when made. The routine runs on the calling thread (the library may use threads of
// its own); dims are ignored (plugin.h).
plx_status launch(plx_queue queue, plx_kernel kernel, const plx_launch_dims* /*dims*/,
                  const plx_arg* args, uint32_t num_args, plx_event* event) {
    if (plx_status s = Host::check_queue("launch", queue); s != PLX_OK) return s;
    if (!live(kernel))
        return fail(PLX_ERROR_INVALID_ARGUMENT, "native: launch: not a native kernel (the "
                                                "routine of a PLX_LANG_ROUTINE module)");
    const bool profiling = event && plx_support::queue_profiles(queue);
    const uint64_t start = profiling ? plx_support::now_ns() : 0;
    if (plx_status s = routine_run(kernel->routine, args, num_args); s != PLX_OK) {
        if (event) *event = nullptr;
        return s;
    }
    const uint64_t end = profiling ? plx_support::now_ns() : 0;
    if (event) return Host::event_create("launch", queue, PLX_OK, start, end, event);
    return PLX_OK;
}

} // namespace plx_native
