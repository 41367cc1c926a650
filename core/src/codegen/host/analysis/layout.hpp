// The layout of a work-group function, decided on the IR alone (layout.cpp): which statements
// are group control, where each variable lives, and the group-local memory rule for the runtime.
#pragma once

#include "plexus/ir.hpp"

#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <vector>

namespace plexus::codegen {

// The bytes of group-local memory (plx_launch_dims::dynamic_local_bytes, ctx->local_mem) that
// the work-group function of `kernel` wants for a group of `work_group_size` work-items: the
// shared arrays, each at a 64-byte-aligned offset, then the per-work-item copies of variables
// and private arrays that live across a barrier. When ctx->local_mem_bytes is smaller, the
// function takes the memory from the heap for each group instead (correct, but slower), so this
// is a performance rule, never a safety one. 0 for a kernel without shared arrays or barriers.
uint64_t host_local_bytes(const ir::Kernel& kernel, uint32_t work_group_size);

namespace host {

// Where a variable lives in the work-group function.
enum class Storage : uint8_t {
    Value,   // a scalar parameter that is never assigned: loaded once per group
    Private, // one stack slot, reused by each work-item in turn (promoted to registers)
    PerItem, // an array with one element per work-item, in group-local memory
    Group,   // one slot per group: the variable of a loop that contains a barrier
    // A variable that lives across a barrier but is a cheap pure function of the work-item's
    // indices, the unassigned scalar parameters and other such variables (`tid / 16`, `row0 +
    // tid % 2`): evaluated again where it is read instead of stored per work-item, so that in
    // each region LLVM sees how it depends on the work-item (a contiguous or uniform access
    // rather than a gather through a reloaded index) and group-local memory holds less.
    Recompute,
};

struct Layout {
    bool barrier = false;
    // One entry per declaration: the kernel's parameters in order (buffers are Value), then
    // each Let and For in pre-order, the order in which the lowering meets them.
    std::vector<Storage> decls;
    std::vector<ir::Type> decl_types;
    // Per declaration: a Private variable that several regions touch, each assigning it before
    // reading it (a temporary declared outside a loop with a barrier and set inside it). Each
    // region's writes are its own: the lowering gives it a new home in every region after the
    // one declaring it, so that what that region made of its Let (one value for a lock-stepped
    // chunk, or the Let recomputed per lane) does not reach a region that assigns it.
    std::vector<bool> region_local;
    // Per declaration: for a Recompute variable, the expression its Let initializes it with.
    std::vector<ir::Expr> recompute;
    // PerItem declarations: the offset of the variable's array is prefix * padded group size;
    // for one in the item records (`in_record`), its offset within a work-item's record.
    std::vector<uint64_t> per_item_prefix;
    // Per declaration: a PerItem variable that a region run per work-item touches lives in
    // the work-item's record (all such variables of one work-item side by side, the records
    // one after another), so that the work-item's accesses to them are contiguous; the other
    // PerItem variables have an array each, the work-items' copies side by side, so that W
    // work-items' copies are one vector.
    std::vector<bool> in_record;
    uint64_t record_bytes = 0; // one work-item's record, a multiple of 16
    // Per region (maximal run of statements between group control, in the lowering's order;
    // the body of a kernel without barriers is region 0): run one work-item at a time
    // (per_item_region) rather than in chunks of W work-items.
    std::vector<bool> item_region;
    // Per private array (kernel.privates): Private (one stack array that each work-item uses
    // in turn: it is used within one region) or PerItem (one copy per work-item), and for
    // PerItem its prefix, as for variables.
    std::vector<Storage> privates;
    std::vector<uint64_t> private_prefix;
    uint64_t per_item_bytes =
        0; // one work-item's share of the arrays: PerItem variables and private arrays
    std::vector<uint64_t> shared_offset; // per shared array, 64-byte aligned
    uint64_t shared_bytes = 0;           // end of the shared arrays, rounded up to 64

    // Each PerItem array has an odd multiple of 16 entries: 64 bytes of f32 (one AVX-512
    // vector, one cache line), so vectorized work-item loops start aligned, without making the
    // frame of a small group (8 work-items holding matrix fragments) 8 times its size. Odd, so
    // that consecutive arrays do not start a power of two apart: with 256 work-items each f32
    // array would be 1 KiB from the next and a region reading 64 of them (matmul_tiled's
    // accumulators) would use 4 of the 64 sets of a 32 KiB, 8-way L1 cache.
    static constexpr uint64_t item_padding = 16;
    static uint64_t padded_group(uint64_t work_group_size) {
        return ((work_group_size + item_padding - 1) & ~(item_padding - 1)) | item_padding;
    }
    // Where the records start: after the shared arrays and the per-item arrays.
    uint64_t records_offset(uint64_t work_group_size) const {
        return shared_bytes + padded_group(work_group_size) * per_item_bytes;
    }
    uint64_t local_bytes(uint64_t work_group_size) const {
        return records_offset(work_group_size) + work_group_size * record_bytes;
    }
};

// `lanes`: the W of the chunks the work-item loops run in (the target's vector bits / 32);
// below 2, no region runs per work-item. `full_rate_lanes`: the lanes of the widest vector
// the CPU computes at full rate (HostTarget::full_rate_bits / 32; 0: `lanes`).
Layout analyze(const ir::Kernel& kernel, unsigned lanes = 0, unsigned full_rate_lanes = 0);

// The statements of the regions of `kernel` that run per work-item (Layout::item_region) for
// chunks of `lanes` work-items, as the nodes of their blocks' bodies.
std::set<const ir::StmtNode*> per_item_statements(const ir::Kernel& kernel, unsigned lanes,
                                                  unsigned full_rate_lanes = 0);

// Whether an intrinsic is one of the work-item and group indices and sizes ("local_id_x",
// "num_groups_y", ...): a pure function of where the work-item is.
bool is_index_call(const std::string& name);

// Whether `pred` holds for the statement or any statement nested in it (blocks, branches,
// loops, match arms, native fallbacks).
bool any_nested(const ir::Stmt& s, const std::function<bool(const ir::StmtNode&)>& pred);

// Whether the statement has a barrier anywhere inside it (native fallbacks included).
bool contains_barrier(const ir::Stmt& s);

// Whether the statement is group control: it runs once per group, its conditions and bounds
// evaluated with work-item 0's values (uniform, by the validator's guarantee). That is a
// barrier, a statement holding one, or a break / continue of a loop holding one
// (`in_barrier_loop`: the innermost enclosing loop holds a barrier).
bool is_group_stmt(const ir::Stmt& s, bool in_barrier_loop);

} // namespace host
} // namespace plexus::codegen
