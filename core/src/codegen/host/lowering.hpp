// The host target of the shared LLVM lowering: a work-group function that reads the launch
// context, runs the statements between barriers as loops over the group's work-items and keeps
// each variable and private array where the Layout puts it. work_group.cpp builds that
// structure, hooks.cpp holds the hooks.
#pragma once

#include "codegen/host/lower.hpp"
#include "codegen/llvm/lowering.hpp"

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace plexus::codegen::host {

class HostLowering final : public LlvmLowering {
public:
    HostLowering(const ir::Kernel& k, const Options& o, const Layout& l, const Target& t,
                 llvm::Module& m);
    void run();

private:
    // The work-item being lowered: its local ids (i32), its index in the group (i64), and
    // where a Return continues. Group control uses work-item 0.
    struct Item {
        llvm::Value* lid[3];
        llvm::Value* linear;
        llvm::BasicBlock* next;
    };

    const Layout& layout_;
    const Target& target_;
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
    // Per private array kept per work-item: the first byte of its copies in group-local memory.
    std::vector<llvm::Value*> private_copies_;

    // ---- hooks (hooks.cpp) ----
    size_t new_variable(const std::string& name, const ir::Type& t) override;
    llvm::Value* read_variable(size_t id) override;
    void write_variable(size_t id, llvm::Value* v) override;
    llvm::Value* per_item_address(size_t id);
    llvm::Value* local_id(unsigned d) override;
    llvm::Value* local_size(unsigned d) override;
    llvm::Value* group_id(unsigned d) override;
    llvm::Value* num_groups(unsigned d) override;
    void barrier() override;
    void fence(const ir::Fence& n) override;
    void return_from_item() override;
    llvm::Value* transcendental(const std::string& base, ir::Scalar t,
                                const std::vector<llvm::Value*>& args) override;
    llvm::Value* int_divide(llvm::Value* a, llvm::Value* b, const ir::Type& t, bool remainder) override;
    void check_native(const ir::Native& n) override;
    llvm::Value* half_from_f32(llvm::Value* f, ir::Scalar t) override;
    llvm::Value* half_to_f32(llvm::Value* bits, ir::Scalar t) override;
    llvm::Value* private_array(size_t i) override;
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
    void item_loops(const std::function<void()>& body);
    // The x loop of every work-item (no vector width known), a chunk of W, or the rest after
    // the chunks.
    enum class XLoop { Whole, Chunk, Rest };
    void mark_parallel(llvm::BasicBlock* after, llvm::BasicBlock* latch, XLoop kind, unsigned lanes);
    void group_body(const ir::Stmt& s, bool in_barrier_loop);
    void group_stmt(const ir::Stmt& s, bool in_barrier_loop);
};

} // namespace plexus::codegen::host
