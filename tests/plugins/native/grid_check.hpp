// A host work-group function that records which work-items and groups ran, and checks the
// context it is given; used by the native plugin's launch tests.
#pragma once

#include <plexus/plugin.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>

namespace native_test {

struct Grid {
    uint32_t dims = 1;
    uint64_t global[3] = {1, 1, 1};
    uint32_t local[3] = {1, 1, 1};
    uint32_t local_bytes = 0;

    uint64_t groups(int d) const { return (global[d] + local[d] - 1) / local[d]; }
    uint64_t total_groups() const { return groups(0) * groups(1) * groups(2); }
    uint64_t items() const { return global[0] * global[1] * global[2]; }
    uint64_t padded_items() const {
        return total_groups() * uint64_t(local[0]) * local[1] * local[2];
    }
    plx_launch_dims launch_dims() const {
        plx_launch_dims d{};
        d.struct_size = sizeof d;
        d.dims = dims;
        for (int i = 0; i < 3; ++i) {
            d.global_size[i] = global[i];
            d.local_size[i] = local[i];
        }
        d.dynamic_local_bytes = local_bytes;
        return d;
    }
    std::string str() const {
        std::ostringstream s;
        s << dims << "-D global " << global[0] << "x" << global[1] << "x" << global[2] << " local "
          << local[0] << "x" << local[1] << "x" << local[2] << " local_bytes " << local_bytes;
        return s.str();
    }
};

class GridCheck {
public:
    GridCheck(const Grid& grid, uint32_t compute_units)
        : grid_(grid), compute_units_(compute_units),
          item_hits_(new std::atomic<uint32_t>[grid.items()]()),
          group_hits_(new std::atomic<uint32_t>[grid.total_groups()]()),
          worker_busy_(new std::atomic<bool>[compute_units]()) {}

    static void run(const plx_workgroup_ctx* ctx, void* user) {
        static_cast<GridCheck*>(user)->group(*ctx);
    }

    // Empty string when every work-item inside the grid ran exactly once, no group ran twice
    // and every context was right; otherwise the first problem found.
    std::string verify() {
        if (!first_error_.empty()) return first_error_;
        for (uint64_t i = 0; i < grid_.items(); ++i)
            if (item_hits_[i].load() != 1)
                return "work-item " + std::to_string(i) + " ran " +
                       std::to_string(item_hits_[i].load()) + " times";
        for (uint64_t g = 0; g < grid_.total_groups(); ++g)
            if (group_hits_[g].load() != 1)
                return "group " + std::to_string(g) + " ran " +
                       std::to_string(group_hits_[g].load()) + " times";
        const uint64_t outside = grid_.padded_items() - grid_.items();
        if (outside_.load() != outside)
            return "work-items outside the global size: " + std::to_string(outside_.load()) +
                   ", expected " + std::to_string(outside);
        return {};
    }

private:
    void note(const std::string& what) {
        std::lock_guard lock(mutex_);
        if (first_error_.empty()) first_error_ = what;
    }

    void group(const plx_workgroup_ctx& ctx) {
        if (ctx.struct_size < sizeof(plx_workgroup_ctx)) return note("ctx.struct_size too small");
        if (ctx.worker >= compute_units_) return note("worker index out of range");
        // Two groups running at once must never share a worker index (or its local memory).
        if (worker_busy_[ctx.worker].exchange(true)) note("worker index used by two groups");
        if (ctx.dims != grid_.dims) note("ctx.dims");
        uint64_t linear = 0;
        for (int d = 2; d >= 0; --d) {
            if (ctx.num_groups[d] != grid_.groups(d)) note("ctx.num_groups");
            if (ctx.global_size[d] != grid_.global[d]) note("ctx.global_size");
            if (ctx.local_size[d] != grid_.local[d]) note("ctx.local_size");
            if (ctx.group_id[d] >= grid_.groups(d)) return note("group id out of range");
            linear = linear * grid_.groups(d) + ctx.group_id[d];
        }
        group_hits_[linear].fetch_add(1);
        if (ctx.local_mem_bytes != grid_.local_bytes) note("ctx.local_mem_bytes");
        if (reinterpret_cast<uintptr_t>(ctx.local_mem) % 64 != 0) note("local_mem not aligned");

        // Stamp the whole local memory with this group's id, run the items, then check that
        // no other group wrote into it meanwhile.
        auto* words = static_cast<uint64_t*>(ctx.local_mem);
        const size_t nwords = grid_.local_bytes / sizeof(uint64_t);
        const uint64_t stamp = linear * 0x9e3779b97f4a7c15ull + 1;
        for (size_t i = 0; i < nwords; ++i)
            words[i] = stamp + i;
        if (grid_.local_bytes % sizeof(uint64_t))
            static_cast<unsigned char*>(ctx.local_mem)[grid_.local_bytes - 1] = 0x5A;

        for (uint32_t lz = 0; lz < ctx.local_size[2]; ++lz)
            for (uint32_t ly = 0; ly < ctx.local_size[1]; ++ly)
                for (uint32_t lx = 0; lx < ctx.local_size[0]; ++lx) {
                    const uint64_t gx = ctx.group_id[0] * ctx.local_size[0] + lx;
                    const uint64_t gy = ctx.group_id[1] * ctx.local_size[1] + ly;
                    const uint64_t gz = ctx.group_id[2] * ctx.local_size[2] + lz;
                    if (gx < ctx.global_size[0] && gy < ctx.global_size[1] &&
                        gz < ctx.global_size[2])
                        item_hits_[(gz * grid_.global[1] + gy) * grid_.global[0] + gx].fetch_add(
                            1, std::memory_order_relaxed);
                    else
                        outside_.fetch_add(1, std::memory_order_relaxed);
                }
        if (linear % 7 == 0) std::this_thread::yield(); // give other groups a chance to overlap

        for (size_t i = 0; i < nwords; ++i)
            if (words[i] != stamp + i) {
                note("local_mem of group " + std::to_string(linear) + " was overwritten");
                break;
            }
        if (grid_.local_bytes % sizeof(uint64_t) &&
            static_cast<unsigned char*>(ctx.local_mem)[grid_.local_bytes - 1] != 0x5A)
            note("last byte of local_mem overwritten");
        worker_busy_[ctx.worker].store(false);
    }

    Grid grid_;
    uint32_t compute_units_;
    std::unique_ptr<std::atomic<uint32_t>[]> item_hits_;
    std::unique_ptr<std::atomic<uint32_t>[]> group_hits_;
    std::unique_ptr<std::atomic<bool>[]> worker_busy_;
    std::atomic<uint64_t> outside_{0};
    std::mutex mutex_;
    std::string first_error_;
};

} // namespace native_test
