// Host code for Direct backends: how a kernel's work-group function is laid out (which statements
// run once per group, where each variable lives) and the group-local memory rule for the runtime.
#pragma once

#include "plexus/codegen.hpp"
#include "plexus/ir.hpp"

#include <cstdint>
#include <functional>
#include <memory>
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
    uint64_t per_item_bytes = 0; // one work-item's share of the arrays: PerItem variables and private arrays
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
// the CPU computes at full rate (Target::full_rate_bits / 32; 0: `lanes`).
Layout analyze(const ir::Kernel& kernel, unsigned lanes = 0, unsigned full_rate_lanes = 0);

// The statements of the regions of `kernel` that run per work-item (Layout::item_region) for
// chunks of `lanes` work-items, as the nodes of their blocks' bodies.
std::set<const ir::StmtNode*> per_item_statements(const ir::Kernel& kernel, unsigned lanes,
                                                  unsigned full_rate_lanes = 0);

// What a name outside a region is to per_item_region: the same in every work-item (a scalar
// parameter, a group loop's counter), a pure expression of the indices evaluated where it is
// read (Storage::Recompute; `init`), or something else.
struct NameForm {
    enum Kind { Unknown, Uniform, Defined } kind = Unknown;
    ir::Expr init;
};

// Whether a region (its statements) should run one work-item at a time, with the x loop left
// scalar so that LLVM's SLP vectorizer makes vectors of each work-item's straight-line code,
// rather than in chunks of W work-items that LoopVectorize makes one vector iteration of. Each
// access to a buffer or shared array is classed by how its index moves from one work-item of a
// chunk to the next: by 1 (consecutive lanes read consecutive elements: one vector access), by
// a constant s whose run of s elements fills at least half a vector the CPU computes at full
// rate (a work-item reading a quad of its own, as matmul_tiled's `b` values are: across
// work-items a shuffle of several vectors or a gather, within one a vector load), or
// otherwise. A region without loops runs per work-item when the second kind outnumbers the
// first. `lanes` is W (below 2: false); `full_rate_lanes` the lanes of a full-rate vector (0:
// W; 8 on Zen 4, where W = 16); `outer` says what names declared outside the region are.
bool per_item_region(const std::vector<const ir::Stmt*>& region, unsigned lanes,
                     const std::function<NameForm(const std::string&)>& outer,
                     unsigned full_rate_lanes = 0);

// The kernel with each run of Lets and Assigns (no store, atomic or control flow between
// them) that computes more than B values read after it reordered so that the values are
// computed in blocks of B, each from start to finish before the next, a block being outputs
// that share inputs; B is half the target's `vector_registers` (with 32, matmul's 8 x 8
// micro-tile in p, i, j order becomes four 4 x 4 blocks; with 16, eight 2 x 4 blocks).
// The same statements in an order their dependences allow: the same results, bit for bit.
// A CPU runs W work-items as one vector per value; written in p, i, j order all 64
// accumulators would be live at once, twice AVX-512's 32 registers.
// Regions run per work-item (per_item_region, for chunks of `lanes`) keep their order: there
// SLP makes vectors of a work-item's values (8 accumulators of matmul's 8 x 8 micro-tile are
// one vector) and blocks of outputs would split those vectors.
ir::Kernel schedule_by_output(const ir::Kernel& kernel, unsigned vector_registers, unsigned lanes,
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

// The width in bits of the vectors the work-item loops are vectorized for: the CPU's widest
// registers (512 with AVX-512, 256 with AVX, 128 with SSE or NEON), or 0 where LLVM chooses.
unsigned vector_bits(const Options& options);
// The widest vectors the CPU computes at full rate, in bits: vector_bits, but 256 on Zen 4
// (`znver4`), which runs each 512-bit operation through 256-bit units in two passes.
unsigned full_rate_bits(const Options& options);

// compile_host with host CPU features switched on or off ("-f16c"): how the tests reach the
// code that a CPU without them gets. Throws as compile_host does.
std::unique_ptr<HostKernel> compile_with_features(const ir::Kernel& kernel, const Options& options,
                                                  const std::vector<std::string>& feature_changes);

} // namespace host
} // namespace plexus::codegen
