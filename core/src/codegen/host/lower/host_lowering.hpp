// The host target of the shared LLVM lowering: a work-group function that reads the launch
// context, runs the statements between barriers as loops over the group's work-items and keeps
// each variable and private array where the Layout puts it. work_group.cpp builds that
// structure, hooks.cpp holds the hooks.
#pragma once

#include "codegen/host/lower/work_group.hpp"
#include "codegen/llvm/lowering.hpp"

#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace plexus::codegen::host {

class HostLowering final : public LlvmLowering {
public:
    HostLowering(const ir::Kernel& k, const Options& o, const Layout& l, const HostTarget& t,
                 llvm::Module& m);
    void run();

private:
    // The work-item being lowered: its local ids (i32), its index in the group (i64), and
    // where a Return continues. Group control uses work-item 0.
    struct Item {
        llvm::Value* lid[3];
        llvm::Value* linear;
        llvm::BasicBlock* next;
        llvm::Value* lane = nullptr; // i32, in a chunk run in lock step (lockstep.cpp)
    };
    // A chunk of W work-items run in lock step: its first x, and y, z and the row's first
    // linear index.
    struct Lanes {
        llvm::Value* first;
        llvm::Value* y;
        llvm::Value* z;
        llvm::Value* row;
        unsigned w;
    };

    const Layout& layout_;
    const HostTarget& target_;
    // Per declaration, in Layout order (its index is the variable's id): where it lives.
    // variables_[id].home is the alloca, the per-item array, or the value itself.
    std::vector<Storage> storage_;
    size_t next_decl_ = 0;
    llvm::Value* group_id_[3] = {};   // i64
    llvm::Value* num_groups_[3] = {}; // i64
    llvm::Value* local_size_[3] = {}; // i32
    Item group_item_{};
    const Item* item_ = nullptr;
    std::vector<std::pair<size_t, llvm::Value*>> params_init_; // assigned parameters
    llvm::BasicBlock* ret_ = nullptr;
    llvm::Value* on_heap_ = nullptr; // i1: group-local memory came from aligned_alloc
    llvm::Value* local_base_ = nullptr;
    llvm::Value* records_ =
        nullptr; // i64: where the work-items' records start (Layout::records_offset)
    llvm::Value* padded_ = nullptr; // i64: the group size padded as the Layout pads it
    size_t next_region_ = 0;        // regions lowered so far (Layout::item_region)
    // Per private array kept per work-item: the first byte of its copies in group-local memory.
    std::vector<llvm::Value*> private_copies_;
    const Lanes* lanes_ = nullptr;             // set while a chunk is lowered in lock step
    std::vector<bool> lane_frame_;             // per declaration: its home is a [W x T] array
    std::set<const llvm::Value*> lane_arrays_; // allocas indexed by the lane (mark_parallel)
    std::set<size_t> uniform_vars_;            // lock step: variables every lane shares
    bool uniform_decl_ = false;                // the next declaration is one of them
    // The lane loop being lowered: its entry block (ends in the mask's branch) and the scalar
    // copies of the lane frames it reads or writes.
    struct LaneCache {
        llvm::BasicBlock* entry = nullptr;
        std::map<size_t, llvm::AllocaInst*> copies;
    };
    LaneCache* lane_cache_ = nullptr;

    // ---- hooks (hooks.cpp) ----
    size_t new_variable(const std::string& name, const ir::Type& t) override;
    // Gives the Layout's region-local variables in scope (declared before the region about to
    // be lowered) a home of their own there: a lane frame in lock step, else a stack slot.
    void rehome_region_locals();
    llvm::Value* read_variable(size_t id) override;
    void write_variable(size_t id, llvm::Value* v) override;
    llvm::Value* per_item_address(size_t id);
    // A vector PerItem variable outside the records: one array per lane of the vector.
    bool per_item_split(size_t id) const;
    llvm::Value* per_item_lane(size_t id, unsigned lane);
    llvm::Value* read_per_item(size_t id);
    void write_per_item(size_t id, llvm::Value* v);
    llvm::Value* local_id(unsigned d) override;
    llvm::Value* local_size(unsigned d) override;
    llvm::Value* group_id(unsigned d) override;
    llvm::Value* num_groups(unsigned d) override;
    void barrier() override;
    void fence(const ir::Fence& n) override;
    void return_from_item() override;
    llvm::Value* transcendental(const std::string& base, ir::Scalar t,
                                const std::vector<llvm::Value*>& args) override;
    llvm::Value* int_divide(llvm::Value* a, llvm::Value* b, const ir::Type& t,
                            bool remainder) override;
    void check_native(const ir::Native& n) override;
    llvm::Value* half_from_f32(llvm::Value* f, ir::Scalar t) override;
    llvm::Value* half_to_f32(llvm::Value* bits, ir::Scalar t) override;
    llvm::Value* private_element(size_t i, llvm::Value* index) override;
    unsigned subgroup_width() const override { return 1; }
    llvm::Value* shuffle32(Shuffle kind, llvm::Value* v, llvm::Value* arg) override;
    llvm::Value* vote(Vote kind, llvm::Value* pred) override;

    // ---- structure (work_group.cpp) ----
    void prologue();
    llvm::Value* group_local_memory(llvm::Value* ctx, llvm::Value* group_size);
    void bind_params(llvm::Value* args, llvm::Value* group_size);
    // A field of a struct the runtime passes (plx_workgroup_ctx, HostArgs).
    llvm::Value* field(llvm::Value* base, size_t offset, llvm::Type* t, const char* name);
    // A loop of an i32 counter from `from` (nullptr: 0) while below n.
    void counted_loop(llvm::Value* n, const char* name,
                      const std::function<void(llvm::Value*, llvm::BasicBlock*)>& body,
                      llvm::Value* from = nullptr);
    // `stmts`: the region's statements, when it may run in lock step (body lowers them).
    // `per_item`: the region runs one work-item at a time (Layout::item_region).
    void item_loops(const std::function<void()>& body,
                    const std::vector<const ir::Stmt*>* stmts = nullptr, bool per_item = false);
    // The x loop of every work-item (no vector width known), a chunk of W, the rest after
    // the chunks, or every work-item of a region run per work-item (not vectorized: SLP makes
    // vectors within each work-item).
    enum class XLoop { Whole, Chunk, Rest, Item };
    void guarded_chunk(const ir::If& guard, const std::vector<const ir::Stmt*>& lets, size_t decls,
                       size_t scope,
                       const std::function<void(const char*, const std::function<void()>&)>& loop,
                       const std::function<void()>& body);
    // A region was lowered as guarded chunks (they want the function's vectors split), and one
    // whose vectors split would gather (a vector region masked otherwise, or run per work-item).
    bool split_guards_ = false;
    bool split_veto_ = false;
    void mark_parallel(llvm::BasicBlock* after, llvm::BasicBlock* latch, XLoop kind,
                       unsigned lanes);
    void group_body(const ir::Stmt& s, bool in_barrier_loop);

    // ---- lock step (lockstep.cpp) ----
    bool lockstep_fits(const std::vector<const ir::Stmt*>& stmts) const;
    static bool lockstep_vectors(const std::vector<const ir::Stmt*>& stmts);
    llvm::AllocaInst* lane_array(llvm::Type* t, const char* name);
    llvm::Value* lane_slot(llvm::Value* array, llvm::Type* t);
    // A variable's lane frame (a vector's lanes one array each), and its value for `lane`.
    llvm::Type* frame_type(const ir::Type& t) const;
    llvm::AllocaInst* lane_frame(const ir::Type& t, const char* name);
    llvm::Value* frame_slot(llvm::IRBuilder<>& at, size_t id, llvm::Value* lane, unsigned part);
    llvm::Value* frame_load(llvm::IRBuilder<>& at, size_t id, llvm::Value* lane);
    void frame_store(llvm::IRBuilder<>& at, size_t id, llvm::Value* lane, llvm::Value* v);
    void lane_loop(llvm::Value* mask, const std::function<void()>& f);
    llvm::AllocaInst* lane_copy(size_t id);
    llvm::Value* read_lane_frame(size_t id);
    void write_lane_frame(size_t id, llvm::Value* v);
    Item chunk_item() const;
    bool uniform(const ir::Expr& e) const;
    static bool reads_run(const ir::Stmt& s, const std::vector<const ir::Stmt*>& run);
    bool uniform_let(const ir::Stmt& s) const;
    size_t recompute_cost(const ir::Expr& e, bool& ok) const;
    void lane_recompute(const ir::Stmt& s);
    // Lock step: a variable evaluated again where it is read (a Let's expression, a For's
    // begin + trips x step), and what that costs in IR nodes; by declaration, and by name
    // until it is declared (an empty one: not after all).
    struct Recomputed {
        std::function<llvm::Value*()> value;
        size_t cost = 0;
    };
    std::map<size_t, Recomputed> lane_recomputed_;
    std::map<std::string, Recomputed> pending_recompute_;
    const std::vector<const ir::Stmt*>* region_ =
        nullptr; // the statements of the region in lock step
    llvm::Value* lane_if(llvm::Value* on, const std::function<llvm::Value*()>& f,
                         llvm::Value* otherwise);
    llvm::Value* lane_bit(llvm::Value* mask);
    void uniform_control(const std::function<void(const Body&)>& lower, llvm::Value* mask);
    void split_mask(llvm::Value* mask, const std::function<llvm::Value*()>& cond, llvm::Value* yes,
                    llvm::Value* no);
    void lockstep_loop(llvm::Value* mask, const std::function<llvm::Value*()>& cond,
                       const ir::Stmt& body, const std::function<void()>& step,
                       const std::function<void()>& chunk_step, uint32_t unroll);
    void lockstep(const ir::Stmt& s, llvm::Value* mask);
    void group_stmt(const ir::Stmt& s, bool in_barrier_loop);
};

} // namespace plexus::codegen::host
