// Matrix fragments on the lockstep machine: each subgroup holds every fragment's tile once, and
// a Matrix statement runs once per subgroup that reaches it, after checking what tensor cores
// require and other backends cannot see: the whole subgroup is there, its work-items give the
// same operands, the tiles read have values, wmma's alignment, and every element in bounds.
// The arithmetic is the core's lower_matrix, so results match the backends that run it.
#include "machine.hpp"
#include "ops.hpp"

#include <algorithm>

namespace plx_interp {
namespace {

// wmma.load / wmma.store (PTX ISA): the tile's first element 32-byte aligned, the stride a
// multiple of 16 bytes.
constexpr int64_t kFirstAlign = 32, kStrideAlign = 16;

// A register with the bits its type ignores cleared, so equal values compare equal.
uint64_t canonical(Ty t, uint64_t raw) {
    uint64_t v = 0;
    with_any(t, [&]<class C>(Tag<C>) { v = put<C>(get<C>(raw)); });
    return v;
}

// "matrix load of fragment "acc"", for messages.
std::string describe(const Program& p, const MatrixStmt& ms) {
    return std::string("matrix ") + kMatrixOpNames[size_t(ms.op)] + " of fragment \"" +
           p.fragments[ms.frag].name + "\"";
}

} // namespace

// Every work-item of the subgroup at first .. end must give the same operand: tensor cores
// take it once per subgroup.
void Machine::uniform(const MatrixStmt& ms, uint32_t si, const char* role, uint32_t e,
                      const uint64_t* v, uint32_t first, uint32_t end) const {
    const Ty t = p_.exprs[e].type;
    for (uint32_t l = first + 1; l < end; ++l)
        if (canonical(t, v[l]) != canonical(t, v[first]))
            error(si, l,
                  std::string("the ") + role + " of the " + describe(p_, ms) + " is " +
                      scalar_text(t, v[l]) + " here but " + scalar_text(t, v[first]) +
                      " on lane 0 of subgroup " + std::to_string(first / kSubgroupWidth) +
                      " (every work-item of a subgroup must give the same operands)");
}

// A fragment read before a fill, load or mma gave it values holds whatever the registers held.
void Machine::defined(const MatrixStmt& ms, uint32_t si, uint32_t fragment, uint32_t first) const {
    const uint32_t subgroup = first / kSubgroupWidth;
    if (!tile_set_[size_t(subgroup) * p_.fragments.size() + fragment])
        error(si, first,
              describe(p_, ms) + " reads fragment \"" + p_.fragments[fragment].name +
                  "\", which no fill, load or mma has given values in subgroup " +
                  std::to_string(subgroup) + " (a fragment starts undefined)");
}

// Load or store: element (r, c) of the tile is array[index + r * stride + c] (row layout) or
// array[index + c * stride + r] (col), with the operands of the subgroup's lane 0.
void Machine::memory(const StmtNode& s, uint32_t si, const uint64_t* index, const uint64_t* stride,
                     uint32_t first) {
    const MatrixStmt& ms = p_.matrices[s.first];
    const Fragment& f = p_.fragments[ms.frag];
    const bool load = ms.op == MatrixOp::Load;
    const __int128 at = wide_integer(p_.exprs[s.e0].type, index[first]);
    const __int128 step = wide_integer(p_.exprs[s.e1].type, stride[first]);
    const int64_t size = ty_size(f.type);
    const std::string where = describe(p_, ms) + (load ? " from \"" : " to \"") +
                              p_.arrays[ms.array].name + "\"[" + wide_text(at) + "], stride " +
                              wide_text(step) + ", " + (ms.col ? "col" : "row") + " layout";
    if (step < 0) error(si, first, where + ": a negative stride (wmma's stride is unsigned)");
    if (at * size % kFirstAlign != 0)
        error(si, first,
              where + ": the tile starts at byte " + wide_text(at * size) +
                  " of the array, not a multiple of " + std::to_string(kFirstAlign) +
                  " (wmma needs its first element " + std::to_string(kFirstAlign) +
                  "-byte aligned: an index that is a multiple of " +
                  std::to_string(kFirstAlign / size) + ")");
    if (step * size % kStrideAlign != 0)
        error(si, first,
              where + ": a stride of " + wide_text(step * size) + " bytes, not a multiple of " +
                  std::to_string(kStrideAlign) + " (wmma's rule: a multiple of " +
                  std::to_string(kStrideAlign / size) + " elements)");
    const uint32_t minor = ms.col ? f.rows : f.cols;
    if (!load && step < minor)
        error(si, first,
              where + ": the stride is below the tile's " + std::to_string(minor) +
                  (ms.col ? " rows" : " columns") + ", so the stored " +
                  (ms.col ? "columns" : "rows") +
                  " overlap (which write lands is undefined on tensor cores)");
    auto address = [&](uint32_t r, uint32_t c) {
        return at + (ms.col ? c * step + r : r * step + c);
    };
    const Bound& arr = arrays_[ms.array];
    for (uint32_t r = 0; r < f.rows; ++r)
        for (uint32_t c = 0; c < f.cols; ++c)
            if (const __int128 i = address(r, c); i < 0 || i >= __int128(arr.count))
                out_of_bounds(si, ms.array, wide_text(i), first,
                              load ? "matrix load from" : "matrix store to",
                              ": element (" + std::to_string(r) + ", " + std::to_string(c) +
                                  ") of the " + std::to_string(f.rows) + " x " +
                                  std::to_string(f.cols) + " tile of the " + where);
    float* t = tile(ms.frag, first / kSubgroupWidth);
    for (uint32_t r = 0; r < f.rows; ++r)
        for (uint32_t c = 0; c < f.cols; ++c) {
            std::byte* p = element(arr, first, uint64_t(address(r, c)));
            if (load)
                t[r * f.cols + c] = get<float>(read_scalar(p, f.type));
            else
                write_scalar(p, f.type, put(t[r * f.cols + c]));
        }
}

// d = a x b + c as lower_matrix computes it: per element, from c, the f32 products added in
// the order kk = 0 .. K-1, each sum rounded to f32 (the plugin is built without contraction
// into fma); an f16 accumulator is rounded once at the end. tf32 inputs are used whole.
void Machine::mma(const MatrixStmt& ms, uint32_t subgroup) {
    const Fragment& d = p_.fragments[ms.frag];
    const float* a = tile(ms.a, subgroup);
    const float* b = tile(ms.b, subgroup);
    const float* c = tile(ms.c, subgroup);
    float* out = scratch_tile_.data();
    const uint32_t M = d.m, N = d.n, K = d.k;
    for (uint32_t i = 0; i < M; ++i)
        for (uint32_t j = 0; j < N; ++j) {
            float sum = c[i * N + j];
            for (uint32_t kk = 0; kk < K; ++kk)
                sum = sum + a[i * K + kk] * b[kk * N + j];
            out[i * N + j] = d.type == Ty::F16 ? round_f16(sum) : sum;
        }
    std::copy_n(out, M * N, tile(ms.frag, subgroup)); // d may be c
}

void Machine::matrix(const StmtNode& s, uint32_t si, const uint8_t* m) {
    const MatrixStmt& ms = p_.matrices[s.first];
    const Fragment& f = p_.fragments[ms.frag];
    const uint64_t* v0 = s.e0 != kNone ? eval(s.e0, m) : nullptr;
    const uint64_t* v1 = s.e1 != kNone ? eval(s.e1, m) : nullptr;
    whole_subgroups(si, describe(p_, ms), m);
    for (uint32_t first = 0; first < n_; first += kSubgroupWidth) {
        if (!m[first]) continue; // not reached: whole_subgroups saw to the rest
        const uint32_t end = std::min(n_, first + kSubgroupWidth),
                       subgroup = first / kSubgroupWidth;
        switch (ms.op) {
        case MatrixOp::Fill: {
            uniform(ms, si, "value", s.e0, v0, first, end);
            // Converted as a cast is: through f32, then rounded to f16 or bf16.
            float x = 0;
            with_arithmetic(p_.exprs[s.e0].type,
                            [&]<class C>(Tag<C>) { x = convert<float>(get<C>(v0[first])); });
            if (ty_half(f.type)) x = get<float>(round_to(f.type, put(x)));
            std::fill_n(tile(ms.frag, subgroup), f.rows * f.cols, x);
            break;
        }
        case MatrixOp::Load:
        case MatrixOp::Store:
            uniform(ms, si, "index", s.e0, v0, first, end);
            uniform(ms, si, "stride", s.e1, v1, first, end);
            if (ms.op == MatrixOp::Store) defined(ms, si, ms.frag, first);
            memory(s, si, v0, v1, first);
            break;
        case MatrixOp::Mma:
            for (uint32_t operand : {ms.a, ms.b, ms.c})
                defined(ms, si, operand, first);
            mma(ms, subgroup);
            break;
        }
        tile_set_[size_t(subgroup) * p_.fragments.size() + ms.frag] = 1;
    }
}

} // namespace plx_interp
