// lower_matrix: fragments as private arrays of the whole tile, Matrix statements as loops.
#include "rewrite.hpp"

#include <functional>

namespace plexus::ir {
namespace {

using namespace build;

class Lowerer {
public:
    explicit Lowerer(const Kernel& k) : k_(k), fresh(k, "mx") {}

    Kernel run() {
        Kernel out = k_;
        out.fragments.clear();
        for (const FragmentDecl& f : k_.fragments)
            out.privates.push_back(ArrayDecl{f.name, f.type, f.elements(), {}, 0});
        out.body = replace_stmts(k_.body, StmtKind::Matrix, [&](const StmtNode& s) {
            return matrix(static_cast<const Matrix&>(s));
        });
        return out;
    }

private:
    const Kernel& k_;
    FreshNames fresh;
    // for (i32 v = 0; v < n; v += 1) body(v)
    Stmt loop(uint32_t n, const char* what, const std::function<Stmt(const Expr&)>& body) {
        std::string v = fresh(what);
        return For::make(v, i32(0), i32(n), i32(1), body(var(v)));
    }
    const FragmentDecl& frag(const std::string& name) const { return *k_.fragment(name); }
    static Expr element(const FragmentDecl& f, const Expr& flat) { return Load::make(f.name, Space::Private, f.type, flat); }
    static Stmt set(const FragmentDecl& f, const Expr& flat, const Expr& v) {
        return Store::make(f.name, Space::Private, flat, v);
    }
    static Expr f32(const Expr& e) { return e->type == Scalar::F32 ? e : Cast::make(Scalar::F32, e); }

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
            Stmt init = Let::make(v, n.value->type == f.type ? n.value : Cast::make(f.type, n.value));
            return Block::make({init, loop(f.elements(), "e", [&](const Expr& e) { return set(f, e, var(v, f.type)); })});
        }
        case MatrixOp::Load:
        case MatrixOp::Store: {
            const MatrixLayout layout = f.use == MatrixUse::Acc ? n.layout : f.layout;
            return loop(f.rows(), "r", [&](const Expr& r) {
                return loop(cols, "c", [&](const Expr& c) {
                    Expr at = address(n, layout, r, c);
                    if (n.op == MatrixOp::Load) return set(f, flat(r, c), Load::make(n.array, n.space, f.type, at));
                    return Store::make(n.array, n.space, at, element(f, flat(r, c)));
                });
            });
        }
        case MatrixOp::Mma: return mma(n, f);
        }
        return nullptr;
    }

    // d = a x b + c in f32, in the order kk = 0 .. K-1 for every element. An f32 accumulator
    // sums in place with j innermost, so the loop over a row vectorizes; an f16 one sums each
    // element in an f32 variable and rounds once.
    Stmt mma(const Matrix& n, const FragmentDecl& d) {
        const FragmentDecl &a = frag(n.a), &b = frag(n.b), &c = frag(n.c);
        const uint32_t M = d.m, N = d.n, K = d.k;
        auto at = [](const Expr& row, uint32_t width, const Expr& col) { return add(mul(row, i32(width)), col); };
        std::vector<Stmt> out;
        if (d.type == Scalar::F32) {
            if (n.c != n.frag)
                out.push_back(loop(M * N, "e", [&](const Expr& e) { return set(d, e, element(c, e)); }));
            out.push_back(loop(M, "i", [&](const Expr& i) {
                return loop(K, "k", [&](const Expr& kk) {
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
        return loop(M, "i", [&](const Expr& i) {
            return loop(N, "j", [&](const Expr& j) {
                std::string s = fresh("sum");
                Stmt let = Let::make(s, f32(element(c, at(i, N, j))));
                Stmt sum = loop(K, "k", [&](const Expr& kk) {
                    Expr prod = mul(f32(element(a, at(i, K, kk))), f32(element(b, at(kk, N, j))));
                    return Assign::make(s, add(var(s, Scalar::F32), prod));
                });
                return Block::make({let, sum, set(d, at(i, N, j), Cast::make(d.type, var(s, Scalar::F32)))});
            });
        });
    }
};

} // namespace

Kernel lower_matrix(const Kernel& k) {
    if (k.fragments.empty()) return k;
    return Lowerer(k).run();
}

} // namespace plexus::ir
