// lower_matrix: fragments as private arrays of the whole tile, Matrix statements as loops.
#include "rewrite.hpp"

#include <functional>

namespace plexus::ir {
namespace {

using namespace build;

class Lowerer {
public:
    Lowerer(const Kernel& k, bool only_warpgroup)
        : k_(k), only_warpgroup_(only_warpgroup), fresh(k, "mx") {}

    Kernel run() {
        Kernel out = k_;
        out.fragments.clear();
        for (const FragmentDecl& f : k_.fragments) {
            if (only_warpgroup_ && !f.warpgroup())
                out.fragments.push_back(f);
            else
                out.privates.push_back(
                    ArrayDecl{f.name, f.type, f.subgroup_rows() * f.cols(), {}, 0});
        }
        out.body = replace_stmts(k_.body, StmtKind::Matrix, [&](const StmtNode& s) -> Stmt {
            const auto& m = static_cast<const Matrix&>(s);
            if (only_warpgroup_ && !frag(m.frag).warpgroup()) return std::make_shared<Matrix>(m);
            return matrix(m);
        });
        return out;
    }

private:
    const Kernel& k_;
    const bool only_warpgroup_;
    FreshNames fresh;
    // The first row of the subgroup's part of a warpgroup tile: 16 * (subgroup_id % 4).
    static Expr quarter_row() {
        Expr sg = Cast::make(Scalar::I32, Call::make("subgroup_id", {}));
        return mul(Binary::make(BinaryOp::Rem, sg, i32(4)), i32(16));
    }
    // Element [row][col] of a swizzled shared array.
    Expr swizzled(const std::string& array, const Expr& row, const Expr& col) const {
        const ArrayDecl& a = *k_.shared_array(array);
        return Load::make(array, Space::Local, a.type,
                          swizzled_index(a.dims[0], size_of(a.type.scalar()), row, col));
    }
    // for (i32 v = 0; v < n; v += 1) body(v), a loop the compiler decides how to unroll
    // (or with that hint, For::unroll)
    Stmt loop(uint32_t n, const char* what, const std::function<Stmt(const Expr&)>& body,
              uint32_t unroll = 0) {
        std::string v = fresh(what);
        return For::make(v, i32(0), i32(n), i32(1), body(var(v)), unroll);
    }
    // The same, kept rolled (For::unroll 1): an outer loop of a tile. Unrolled, a kernel's few
    // mma statements became tens of thousands of instructions that LLVM then took tens of
    // seconds to optimize on a CPU (docs/benchmarks.md, "Compile times"); rolled, the inner
    // loop over a row still vectorizes.
    Stmt rolled(uint32_t n, const char* what, const std::function<Stmt(const Expr&)>& body) {
        return loop(n, what, body, 1);
    }
    const FragmentDecl& frag(const std::string& name) const { return *k_.fragment(name); }
    static Expr element(const FragmentDecl& f, const Expr& flat) {
        return Load::make(f.name, Space::Private, f.type, flat);
    }
    static Stmt set(const FragmentDecl& f, const Expr& flat, const Expr& v) {
        return Store::make(f.name, Space::Private, flat, v);
    }
    static Expr f32(const Expr& e) {
        return e->type == Scalar::F32 ? e : Cast::make(Scalar::F32, e);
    }

    // Element (r, c) of the tile in memory: index + r * stride + c, or + c * stride + r.
    static Expr address(const Matrix& n, MatrixLayout layout, const Expr& r, const Expr& c) {
        const Expr& major = layout == MatrixLayout::Row ? r : c;
        const Expr& minor = layout == MatrixLayout::Row ? c : r;
        return add(i64(n.index), add(mul(i64(major), i64(n.stride)), i64(minor)));
    }

    Stmt matrix(const Matrix& n) {
        const FragmentDecl& f = frag(n.frag);
        const uint32_t cols = f.cols();
        auto flat = [&](const Expr& r, const Expr& c) { return add(mul(r, i32(cols)), c); };
        switch (n.op) {
        case MatrixOp::Fill: {
            std::string v = fresh("fill");
            Stmt init =
                Let::make(v, n.value->type == f.type ? n.value : Cast::make(f.type, n.value));
            return Block::make({init, loop(f.subgroup_rows() * cols, "e", [&](const Expr& e) {
                                    return set(f, e, var(v, f.type));
                                })});
        }
        case MatrixOp::Store:
            if (f.warpgroup()) return warpgroup_store(n, f);
            [[fallthrough]];
        case MatrixOp::Load: {
            const MatrixLayout layout = f.use == MatrixUse::Acc ? n.layout : f.layout;
            return rolled(f.rows(), "r", [&](const Expr& r) {
                return loop(cols, "c", [&](const Expr& c) {
                    Expr at = address(n, layout, r, c);
                    if (n.op == MatrixOp::Load)
                        return set(f, flat(r, c), Load::make(n.array, n.space, f.type, at));
                    return Store::make(n.array, n.space, at, element(f, flat(r, c)));
                });
            });
        }
        case MatrixOp::Mma: return mma(n, f);
        case MatrixOp::MmaShared: return mma_shared(n, f);
        }
        return nullptr;
    }

    // The subgroup's 16 rows of the 64 x N tile at array[index], rows `stride` apart: element
    // (r, c) of the tile, r = 16 * (subgroup % 4) + i, where r < rows and c < cols if bounded.
    Stmt warpgroup_store(const Matrix& n, const FragmentDecl& f) {
        const std::string q = fresh("row0");
        Stmt let = Let::make(q, quarter_row());
        Stmt body = rolled(16, "r", [&](const Expr& i) {
            Expr r = add(var(q), i);
            return loop(f.n, "c", [&](const Expr& c) {
                Expr at = add(i64(n.index), add(mul(i64(r), i64(n.stride)), i64(c)));
                Stmt st = Store::make(n.array, n.space, at, element(f, add(mul(i, i32(f.n)), c)));
                if (!n.rows) return st;
                Expr inside = Binary::make(BinaryOp::LogicalAnd,
                                           Binary::make(BinaryOp::Lt, i64(r), i64(n.rows)),
                                           Binary::make(BinaryOp::Lt, i64(c), i64(n.cols)));
                return If::make(inside, st);
            });
        });
        return Block::make({let, body});
    }

    // d[i][j] += A[row_a + 16 * (subgroup % 4) + i][col_a + kk] * B[row_b + kk][col_b + j], in
    // f32, kk = 0 .. 16 * steps - 1 in order, j innermost. The swizzle keeps each 16 bytes of
    // a row together, so where col_b is a constant (the validator has checked that it is a
    // multiple of 64) j goes over runs of v elements, each run addressed once: the loop over a
    // run reads consecutive elements, which a CPU loads as one vector (with the swizzled
    // address per element it stayed scalar). A col_b computed at run time is addressed element
    // by element, right whatever its value.
    Stmt mma_shared(const Matrix& n, const FragmentDecl& d) {
        const ArrayDecl& bd = *k_.shared_array(n.array_b);
        const uint32_t run = 16 / size_of(bd.type.scalar()); // elements in 16 bytes
        const uint32_t v = as<Const>(n.col_b) && d.n % run == 0 ? run : 1;
        const std::string q = fresh("row0");
        Stmt let = Let::make(q, add(i32v(n.row_a), quarter_row()));
        Stmt body = rolled(16, "i", [&](const Expr& i) {
            return rolled(16 * n.steps, "k", [&](const Expr& kk) {
                std::string av = fresh("a");
                Stmt a =
                    Let::make(av, f32(swizzled(n.array, add(var(q), i), add(i32v(n.col_a), kk))));
                Stmt row = loop(d.n / v, "run", [&](const Expr& r) {
                    Expr first = mul(r, i32(v));
                    std::string b0 = fresh("b0");
                    Stmt at_run = Let::make(
                        b0, swizzled_index(bd.dims[0], size_of(bd.type.scalar()),
                                           add(i32v(n.row_b), kk), add(i32v(n.col_b), first)));
                    Stmt elements = loop(v, "j", [&](const Expr& j) {
                        Expr b =
                            f32(Load::make(n.array_b, Space::Local, bd.type,
                                           add(var(b0, Scalar::U32), Cast::make(Scalar::U32, j))));
                        Expr at = add(mul(i, i32(d.n)), add(first, j));
                        return set(d, at, add(element(d, at), mul(var(av, Scalar::F32), b)));
                    });
                    return Block::make({at_run, elements});
                });
                return Block::make({a, row});
            });
        });
        return Block::make({let, body});
    }
    static Expr i32v(const Expr& e) {
        return e->type == Scalar::I32 ? e : Cast::make(Scalar::I32, e);
    }

    // d = a x b + c in f32, in the order kk = 0 .. K-1 for every element. An f32 accumulator
    // sums in place with j innermost, so the loop over a row vectorizes; an f16 one sums each
    // element in an f32 variable and rounds once.
    Stmt mma(const Matrix& n, const FragmentDecl& d) {
        const FragmentDecl &a = frag(n.a), &b = frag(n.b), &c = frag(n.c);
        const uint32_t M = d.m, N = d.n, K = d.k;
        auto at = [](const Expr& row, uint32_t width, const Expr& col) {
            return add(mul(row, i32(width)), col);
        };
        std::vector<Stmt> out;
        if (d.type == Scalar::F32) {
            if (n.c != n.frag)
                out.push_back(
                    loop(M * N, "e", [&](const Expr& e) { return set(d, e, element(c, e)); }));
            out.push_back(rolled(M, "i", [&](const Expr& i) {
                return rolled(K, "k", [&](const Expr& kk) {
                    std::string av = fresh("a");
                    Stmt let = Let::make(av, f32(element(a, at(i, K, kk))));
                    Stmt row = loop(N, "j", [&](const Expr& j) {
                        Expr prod = mul(var(av, Scalar::F32), f32(element(b, at(kk, N, j))));
                        return set(d, at(i, N, j), add(element(d, at(i, N, j)), prod));
                    });
                    return Block::make({let, row});
                });
            }));
            return Block::make(std::move(out));
        }
        return rolled(M, "i", [&](const Expr& i) {
            return loop(N, "j", [&](const Expr& j) {
                std::string s = fresh("sum");
                Stmt let = Let::make(s, f32(element(c, at(i, N, j))));
                Stmt sum = loop(K, "k", [&](const Expr& kk) {
                    Expr prod = mul(f32(element(a, at(i, K, kk))), f32(element(b, at(kk, N, j))));
                    return Assign::make(s, add(var(s, Scalar::F32), prod));
                });
                return Block::make(
                    {let, sum, set(d, at(i, N, j), Cast::make(d.type, var(s, Scalar::F32)))});
            });
        });
    }
};

} // namespace

Kernel lower_matrix(const Kernel& k, bool only_warpgroup) {
    if (k.fragments.empty()) return k;
    if (only_warpgroup && !k.has_warpgroup()) return k;
    return Lowerer(k, only_warpgroup).run();
}

} // namespace plexus::ir
