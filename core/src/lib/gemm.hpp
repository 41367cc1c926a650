// The GEMM families of px::lib (plexus/lib.hpp): plexus's kernels of a type and the backend's
// library routine of it as variants of one family, so that tuning and measured routing choose
// among them. Internal to libplexus.
#pragma once

#include "plexus/kernel.hpp"
#include "plexus/lib.hpp"

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace plexus::lib::detail {

// What plexus's kernels of one type bring to a GEMM family: their trace and tuning space, and
// their check, grid and heuristic (FamilyDef's), for launches of shape {m, n, k}.
template <class T> struct GemmKernels {
    std::function<void(const Tuning&, const In<T>&, const In<T>&, const Out<float>&, const Int&,
                       const Int&, const Int&)>
        trace;
    std::vector<std::pair<std::string, std::vector<int64_t>>> space;
    plexus::detail::FamilyDef::Check check;
    plexus::detail::FamilyDef::GridOf grid;
    plexus::detail::FamilyDef::Heuristic heuristic;
};

// Why a variant of a GEMM family cannot run (shape {m, n, k, trans_a, trans_b}): the routine
// (`vendor` 1) takes the other parameters at their first values only (they tune plexus's
// kernels), and plexus's kernels read a and b as stored.
std::string gemm_reject(const Tuning& v, const FamilyContext& c,
                        const std::vector<std::pair<std::string, std::vector<int64_t>>>& space,
                        const plexus::detail::FamilyDef::Check& kernels);
// The routine's variant: `vendor` 1, every other parameter at its first value.
Tuning routine_variant(const std::vector<std::pair<std::string, std::vector<int64_t>>>& space);
// {m, n, k} of a GEMM family's shape, for plexus's kernels' functions.
FamilyContext kernel_context(const FamilyContext& c, Shape& mnk);

// The family `name`: `vendor` 1 is the routine `routine` (ir::routines()), 0 plexus's kernels.
// Tuning times plexus's heuristic choice first, the routine second, then the rest of the space.
template <class T>
GemmFamily<T> make_gemm(const char* name, const char* routine, GemmKernels<T> kernels) {
    auto f = plexus::family(name, {"a", "b", "c", "m", "n", "k", "trans_a", "trans_b"},
                            [routine, trace = kernels.trace](const Tuning& v, In<T> a, In<T> b,
                                                             Out<float> c, Int m, Int n, Int k, Int,
                                                             Int) {
                                if (v["vendor"] == 1)
                                    plexus::routine(routine);
                                else
                                    trace(v, a, b, c, m, n, k);
                            });
    f.tune("vendor", {1, 0});
    for (const auto& [param, values] : kernels.space)
        f.tune(param, values);
    f.check(
        [space = kernels.space, check = kernels.check](const Tuning& v, const FamilyContext& c) {
            return gemm_reject(v, c, space, check);
        });
    f.grid([grid = kernels.grid](const Tuning& v, const FamilyContext& c) {
        if (v["vendor"] == 1) return Grid(1);
        Shape mnk;
        return grid(v, kernel_context(c, mnk));
    });
    f.heuristic([space = kernels.space, heuristic = kernels.heuristic](const FamilyContext& c) {
        // A shape of another length fits no variant (gemm_reject says why): any will do.
        if (c.shape.size() != 5 || c.shape[3] != 0 || c.shape[4] != 0)
            return routine_variant(space);
        Shape mnk;
        std::map<std::string, int64_t> values = heuristic(kernel_context(c, mnk)).values();
        values["vendor"] = 0;
        return Tuning(std::move(values));
    });
    return f;
}

} // namespace plexus::lib::detail
