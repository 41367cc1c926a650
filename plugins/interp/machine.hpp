// The SIMT machine: one lane per work-item of a group, an 8-byte register per scalar node and a
// slot per variable leaf per lane. Statements in exec.cpp, expressions in eval.cpp.
#pragma once

#include "interp_plugin.hpp"

#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace plx_interp {

class Machine {
public:
    Machine(const Program& p, const LaunchShape& s, const std::vector<BoundParam>& params);
    void run();

private:
    // Where an array's elements are: a private array's lane l starts `lane_stride` * l further.
    struct Bound {
        std::byte* base;
        uint64_t count;
        uint64_t stride;
        uint64_t lane_stride = 0;
    };

    const Program& p_;
    const LaunchShape& s_;
    const uint32_t n_; // work-items per group: one lane each
    std::vector<uint64_t> regs_, vars_, scratch_;
    std::vector<uint8_t> masks_, returned_, top_;
    std::vector<uint64_t> lid_[3], gid_[3];
    uint64_t group_[3] = {0, 0, 0};
    std::vector<std::byte> local_, private_;
    std::vector<Bound> arrays_;
    std::vector<std::pair<uint32_t, uint64_t>> scalars_; // slot, argument
    // Nodes with several parents are evaluated once per statement: `epoch_` counts statement
    // executions, and such a node keeps the epoch and result of its last evaluation.
    uint64_t epoch_ = 0;
    std::vector<uint64_t> evaluated_;
    std::vector<const uint64_t*> results_;
    std::vector<const uint64_t*> leaves_; // a Store's computed leaves
    // Fragments: per subgroup, Program::fragment_elements values (f16 and bf16 as the f32 of
    // their value) and, per fragment, whether a fill, load or mma has given it values.
    static constexpr uint32_t kMaxTile = 16 * 16; // the most values of a fragment's tile
    std::vector<float> tiles_, scratch_tile_;     // scratch_tile_: an mma's result
    std::vector<uint8_t> tile_set_;

    uint64_t* reg(uint32_t r) { return regs_.data() + size_t(r) * n_; }
    uint64_t* var(uint32_t slot) { return vars_.data() + size_t(slot) * n_; }
    uint8_t* mask(uint32_t m) { return masks_.data() + size_t(m) * n_; }
    bool any(const uint8_t* m) const { return std::memchr(m, 1, n_) != nullptr; }
    static std::byte* element(const Bound& b, uint32_t lane, uint64_t i) {
        return b.base + lane * b.lane_stride + i * b.stride;
    }

    void run_group();
    std::string work_item(uint32_t l) const;
    // "kernel "k": <what> at <statement path> by work-item global id (..), local id (..), ..."
    [[noreturn]] void error(uint32_t stmt, uint32_t lane, const std::string& what) const;
    // "out-of-bounds <access> "a"[<index>] (<space> of N <type> elements)<detail>"
    [[noreturn]] void out_of_bounds(uint32_t stmt, uint32_t array, const std::string& index,
                                    uint32_t lane, const std::string& access,
                                    const std::string& detail = "") const;
    // The element an index names, after the bounds check.
    uint64_t index(Ty t, uint64_t raw, uint32_t array, uint32_t stmt, uint32_t lane,
                   const char* access) const;

    // eval.cpp
    const uint64_t* eval(uint32_t ei, const uint8_t* m);
    const uint64_t* compute(uint32_t ei, const uint8_t* m);
    void unary(const ExprNode& e, const uint8_t* m, uint64_t* out);
    void binary(const ExprNode& e, const uint8_t* m, uint64_t* out);
    // Out of line: its error message would otherwise enlarge the frame of every recursion.
    [[gnu::noinline]] void divide(const ExprNode& e, const uint64_t* a, const uint64_t* b,
                                  uint64_t* out, const uint8_t* m);
    const uint64_t* call(const ExprNode& e, const uint8_t* m, uint64_t* out);
    void atomic(const ExprNode& e, const uint8_t* m, uint64_t* out);

    // subgroup.cpp
    const uint64_t* subgroup(const ExprNode& e, const uint8_t* m, uint64_t* out);
    // Throws unless every work-item of each subgroup that `m` reaches is in `m`; `what` names
    // the operation of statement `stmt`.
    void whole_subgroups(uint32_t stmt, const std::string& what, const uint8_t* m) const;
    // The lane that a shuffle on lane `l` reads: the checked source of shuffle / shuffle_xor,
    // or l itself where shuffle_up / _down name no lane.
    uint32_t source_lane(const ExprNode& e, uint32_t l, uint64_t arg) const;
    void load(const ExprNode& e, const uint8_t* m, uint64_t* out);
    [[gnu::noinline]] void invalid_tag(const ExprNode& e, uint64_t i, uint64_t tag,
                                       uint32_t lane) const;

    // matrix.cpp
    void matrix(const StmtNode& s, uint32_t si, const uint8_t* m);
    float* tile(uint32_t fragment, uint32_t subgroup) {
        return tiles_.data() + size_t(subgroup) * p_.fragment_elements +
               p_.fragments[fragment].offset;
    }
    void uniform(const MatrixStmt& ms, uint32_t si, const char* role, uint32_t e, const uint64_t* v,
                 uint32_t first, uint32_t end) const;
    void defined(const MatrixStmt& ms, uint32_t si, uint32_t fragment, uint32_t first) const;
    void memory(const StmtNode& s, uint32_t si, const uint64_t* index, const uint64_t* stride,
                uint32_t first);
    void mma(const MatrixStmt& ms, uint32_t subgroup);

    // async_copy.cpp
    void async_copy(const StmtNode& s, uint32_t si, const uint8_t* m);

    // exec.cpp
    void exec(uint32_t si, uint8_t* m);
    void copy(const StmtNode& s, const uint8_t* m);
    void store(const StmtNode& s, uint32_t si, const uint8_t* m);
    void loop(const StmtNode& s, uint8_t* m);
    void match(const StmtNode& s, uint8_t* m);
    void barrier(uint32_t si, const uint8_t* m) const;
};

} // namespace plx_interp
