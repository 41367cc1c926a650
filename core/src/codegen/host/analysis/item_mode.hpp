// Which regions of a work-group function run one work-item at a time rather than in chunks of
// W work-items (item_mode.cpp), decided on the IR alone.
#pragma once

#include "plexus/ir.hpp"

#include <functional>
#include <string>
#include <vector>

namespace plexus::codegen::host {

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

} // namespace plexus::codegen::host
