// Asynchronous copies on the lockstep machine, done at once (which the semantics allow), after
// checking what cp.async requires and other backends cannot see: `valid` within 0 .. count,
// both addresses aligned to the copy's size, and every element read or written in bounds.
#include "machine.hpp"
#include "ops.hpp"

#include <cstring>

namespace plx_interp {

void Machine::async_copy(const StmtNode& s, uint32_t si, const uint8_t* m) {
    const AsyncCopyStmt& c = p_.async_copies[s.first];
    const uint64_t* dst = eval(s.e0, m);
    const uint64_t* src = eval(s.e1, m);
    const uint64_t* valid = eval(s.e2, m);
    const Bound &to = arrays_[c.array], &from = arrays_[c.buffer];
    const int64_t bytes = int64_t(c.count) * c.size;
    for (uint32_t l = 0; l < n_; ++l) {
        if (!m[l]) continue;
        const __int128 d = wide_integer(p_.exprs[s.e0].type, dst[l]);
        const __int128 from_index = wide_integer(p_.exprs[s.e1].type, src[l]);
        const __int128 v = wide_integer(p_.exprs[s.e2].type, valid[l]);
        // What an error names, spelled only when one is raised: this runs for every lane.
        auto where = [&] {
            return "async copy of " + std::to_string(c.count) + " elements from \"" +
                   p_.arrays[c.buffer].name + "\"[" + wide_text(from_index) + "] into \"" +
                   p_.arrays[c.array].name + "\"[" + wide_text(d) + "], valid " + wide_text(v);
        };
        if (v < 0 || v > c.count)
            error(si, l,
                  where() + ": valid must be from 0 to " + std::to_string(c.count) +
                      " (the elements read; the rest of the copy is zero)");
        auto aligned = [&](__int128 index, const char* side, const char* array) {
            if (index * c.size % bytes == 0) return;
            error(si, l,
                  where() + ": the " + side + " starts at byte " + wide_text(index * c.size) +
                      " of the " + array + ", not a multiple of " + std::to_string(bytes) +
                      " (cp.async's alignment: the " + side + " index must be a multiple of " +
                      std::to_string(c.count) + ")");
        };
        aligned(d, "destination", "shared array");
        aligned(from_index, "source", "buffer");
        for (uint32_t i = 0; i < c.count; ++i)
            if (d + i < 0 || d + i >= __int128(to.count))
                out_of_bounds(si, c.array, wide_text(d + i), l, "async copy into",
                              ": element " + std::to_string(i) + " of the " + where());
        for (uint32_t i = 0; i < v; ++i)
            if (from_index + i < 0 || from_index + i >= __int128(from.count))
                out_of_bounds(si, c.buffer, wide_text(from_index + i), l, "async copy from",
                              ": element " + std::to_string(i) + " of the " + where());
        for (uint32_t i = 0; i < c.count; ++i) {
            std::byte* q = element(to, l, uint64_t(d + i));
            if (i < v)
                std::memcpy(q, element(from, l, uint64_t(from_index + i)), c.size);
            else
                std::memset(q, 0, c.size);
        }
    }
}

} // namespace plx_interp
