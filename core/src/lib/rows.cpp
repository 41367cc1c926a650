// px::lib's row kernels (plexus/lib.hpp): softmax and layer normalization as kernel families.
// A group of width x (256 / width) work-items handles 256 / width rows; the work-items of a row
// stride along it. A row is either held in registers (`per` values a work-item, read once) or
// read in passes (per 0), and its reductions go through subgroup operations or a barrier tree
// in shared memory.
#include "plexus/lib.hpp"

#include "lib/args.hpp"

#include "plexus/kernel.hpp"
#include "plexus/subgroup.hpp"

#include <functional>
#include <limits>
#include <string>
#include <vector>

namespace plexus::lib {

namespace {

namespace px = plexus;

constexpr int kGroup = 256; // work-items of a group, width x rows

struct RowShape {
    int W, R, per;
    bool subgroups;
    explicit RowShape(const px::Tuning& v)
        : W(int(v["width"])), R(kGroup / int(v["width"])), per(int(v["per"])),
          subgroups(v["subgroups"] == 1) {}
};

// One row's reduction across its W work-items. With subgroups: each subgroup reduces its part,
// and where a row has several (width 256; the family's check: whole subgroups, 32 at most)
// their results meet in shared memory. Without: a barrier tree over a row of W in shared memory.
class RowReduce {
public:
    RowReduce(const RowShape& s, const px::Int& lx, const px::Int& ly)
        : s_(s), lx_(lx), ly_(ly), partial_(px::shared<float>(s.R, s.subgroups ? 32 : s.W)) {}

    template <class Combine, class SubgroupCombine>
    px::Float operator()(const px::Float& value, Combine combine, SubgroupCombine subgroup) {
        px::Float total = value;
        if (s_.subgroups) {
            total = subgroup(value);
            if (s_.W == 32) return total; // the check: one subgroup of 32 a row
            px::Int width = px::subgroup_size();
            px::If(px::lane_id() == 0, [&] { partial_[ly_][lx_ / width] = total; });
            px::barrier();
            total = partial_[ly_][0];
            px::For(1, s_.W / width, [&](px::Int i) { total = combine(total, partial_[ly_][i]); });
            px::barrier(); // everyone has read the total before the array is reused
            return total;
        }
        partial_[ly_][lx_] = value;
        px::barrier();
        for (int step = s_.W / 2; step > 0; step /= 2) {
            px::If(lx_ < step, [&] {
                partial_[ly_][lx_] = combine(partial_[ly_][lx_], partial_[ly_][lx_ + step]);
            });
            px::barrier();
        }
        total = partial_[ly_][0];
        px::barrier();
        return total;
    }
    px::Float sum(const px::Float& v) {
        return (*this)(
            v, [](const auto& a, const auto& b) { return a + b; },
            [](const px::Float& a) { return px::subgroup_reduce_add(a); });
    }
    px::Float max(const px::Float& v) {
        return (*this)(
            v, [](const auto& a, const auto& b) { return px::max(a, b); },
            [](const px::Float& a) { return px::subgroup_reduce_max(a); });
    }

private:
    const RowShape& s_;
    const px::Int& lx_;
    const px::Int& ly_;
    px::LocalArray<float, 2> partial_;
};

// The row of this work-item and its first element; work-items past the last row work on it
// too (every one must reach the barriers) but write nothing.
struct RowPlace {
    px::Int lx = px::local_id(0);
    px::Int ly = px::local_id(1);
    px::Int row;
    px::Int base;
    RowPlace(const RowShape& s, const px::Int& rows, const px::Int& cols)
        : row(px::group_id(1) * s.R + ly), base(px::min(row, rows - 1) * cols) {}
};

// body(j) for j = 0 .. per - 1: an IR loop the backends unroll, so that an array indexed by j
// has constant indices there and stays in registers (and the kernel is written once, not per
// times).
void each(const RowShape& s, const std::function<void(const px::Int&)>& body) {
    px::For(0, s.per, [&](px::Int j) { body(j); }, px::unroll_full());
}

// `per` values of the row in registers: column lx + j * W, or `past` beyond the row (its
// index clamped to the row's last, so that every load is unconditional).
template <class T>
px::LocalArray<float, 1> row_values(const RowShape& s, const RowPlace& p, px::In<T>& x,
                                    const px::Int& cols, float past) {
    auto values = px::private_array<float>(uint32_t(s.per));
    each(s, [&](const px::Int& j) {
        px::Int c = p.lx + j * s.W;
        values[j] =
            px::select(c < cols, px::Float(x[p.base + px::min(c, cols - 1)]), px::Float(past));
    });
    return values;
}

template <class T> SoftmaxFamily<T> make_softmax(const char* name) {
    return px::family(
        name, {"x", "y", "rows", "cols"},
        [](const px::Tuning& v, px::In<T> x, px::Out<T> y, px::Int rows, px::Int cols) {
            const RowShape s(v);
            px::require_work_group_size(s.W, s.R);
            RowPlace p(s, rows, cols);
            RowReduce reduce(s, p.lx, p.ly);
            constexpr float inf = std::numeric_limits<float>::infinity();
            if (s.per == 0) {
                // Three passes over x: its maximum, the sum of exponentials, the
                // output.
                px::Float m = -inf;
                px::For(p.lx, cols, s.W, [&](px::Int c) { m = px::max(m, x[p.base + c]); });
                px::Float row_max = reduce.max(m);
                px::Float sum = 0.0f;
                px::For(p.lx, cols, s.W,
                        [&](px::Int c) { sum += px::exp(x[p.base + c] - row_max); });
                px::Float inv = 1.0f / reduce.sum(sum);
                px::If(p.row < rows, [&] {
                    px::For(p.lx, cols, s.W, [&](px::Int c) {
                        y[p.base + c] = px::cast<T>(px::exp(x[p.base + c] - row_max) * inv);
                    });
                });
                return;
            }
            auto values = row_values(s, p, x, cols, -inf);
            px::Float m = -inf;
            each(s, [&](const px::Int& j) { m = px::max(m, values[j]); });
            px::Float row_max = reduce.max(m);
            px::Float sum = 0.0f;
            each(s, [&](const px::Int& j) {
                px::Float e = px::exp(values[j] - row_max); // exp(-inf) = 0 past the row
                values[j] = e;
                sum += e;
            });
            px::Float inv = 1.0f / reduce.sum(sum);
            px::If(p.row < rows, [&] {
                each(s, [&](const px::Int& j) {
                    px::Int c = p.lx + j * s.W;
                    px::If(c < cols, [&] { y[p.base + c] = px::cast<T>(values[j] * inv); });
                });
            });
        });
}

template <class T> LayerNormFamily<T> make_layernorm(const char* name) {
    return px::family(
        name, {"x", "gamma", "beta", "y", "rows", "cols", "eps"},
        [](const px::Tuning& v, px::In<T> x, px::In<float> gamma, px::In<float> beta, px::Out<T> y,
           px::Int rows, px::Int cols, px::Float eps) {
            const RowShape s(v);
            px::require_work_group_size(s.W, s.R);
            RowPlace p(s, rows, cols);
            RowReduce reduce(s, p.lx, p.ly);
            px::Float n = px::cast<float>(cols);
            if (s.per == 0) {
                // Three passes over x: the mean, the variance around it, the output.
                px::Float sum = 0.0f;
                px::For(p.lx, cols, s.W, [&](px::Int c) { sum += x[p.base + c]; });
                px::Float mean = reduce.sum(sum) / n;
                px::Float squares = 0.0f;
                px::For(p.lx, cols, s.W, [&](px::Int c) {
                    px::Float d = x[p.base + c] - mean;
                    squares += d * d;
                });
                px::Float inv = 1.0f / px::sqrt(reduce.sum(squares) / n + eps);
                px::If(p.row < rows, [&] {
                    px::For(p.lx, cols, s.W, [&](px::Int c) {
                        y[p.base + c] =
                            px::cast<T>((x[p.base + c] - mean) * inv * gamma[c] + beta[c]);
                    });
                });
                return;
            }
            auto values = row_values(s, p, x, cols, 0.0f);
            px::Float sum = 0.0f;
            each(s, [&](const px::Int& j) { sum += values[j]; });
            px::Float mean = reduce.sum(sum) / n;
            px::Float squares = 0.0f;
            each(s, [&](const px::Int& j) {
                px::Float d = px::select(p.lx + j * s.W < cols, values[j] - mean, px::Float(0.0f));
                squares += d * d;
            });
            px::Float inv = 1.0f / px::sqrt(reduce.sum(squares) / n + eps);
            px::If(p.row < rows, [&] {
                each(s, [&](const px::Int& j) {
                    px::Int c = p.lx + j * s.W;
                    px::If(c < cols, [&] {
                        y[p.base + c] = px::cast<T>((values[j] - mean) * inv * gamma[c] + beta[c]);
                    });
                });
            });
        });
}

// The space, checks, grid and heuristic every row family shares.
template <class F> F with_row_space(F f) {
    f.tune("per", {0, 8, 32}).tune("width", {32, 256}).tune("subgroups", {0, 1});
    f.check([](const px::Tuning& v, const px::FamilyContext& c) -> std::string {
        const int64_t cols = c.shape.at(1), W = v["width"], per = v["per"];
        if (per > 0 && cols > per * W)
            return "a row of " + std::to_string(cols) + " does not fit " + std::to_string(per) +
                   " values on each of " + std::to_string(W) + " work-items";
        // Only the width the row needs: a row of 1000 on 256 work-items of 32 is left to 32 x 32.
        if (per > 0 && per * W >= 4 * cols && per > 8)
            return "a row of " + std::to_string(cols) + " needs fewer than " +
                   std::to_string(per * W) + " places";
        if (v["subgroups"] == 1) {
            const uint32_t sg = c.device.subgroup_size;
            if (W == 32 && sg != 32)
                return "subgroups 1 at width 32 needs subgroups of 32 (the device's have " +
                       std::to_string(sg) + " work-items)";
            if (sg == 0 || W % sg != 0 || W / sg > 32)
                return "subgroups 1 needs whole subgroups in a row of " + std::to_string(W) +
                       ", at most 32 of them (the device's subgroups have " + std::to_string(sg) +
                       " work-items)";
        }
        return "";
    });
    f.grid([](const px::Tuning& v, const px::FamilyContext& c) {
        const uint64_t W = uint64_t(v["width"]), R = kGroup / W;
        const uint64_t rows = uint64_t(c.shape.at(0));
        return Grid(W, (rows + R - 1) / R * R).local_size(uint32_t(W), uint32_t(R));
    });
    // A GPU with subgroups of 32: the row in registers, one subgroup a row up to 1024 columns,
    // a group a row up to 8192; beyond, passes. Elsewhere the portable variant.
    f.heuristic([](const px::FamilyContext& c) {
        const int64_t cols = c.shape.at(1);
        if (c.device.type != DeviceType::GPU || c.device.subgroup_size != 32 ||
            !c.device.subgroup_ops || (*c.device.subgroup_ops & PLX_SUBGROUP_BASIC) == 0)
            return px::Tuning{{"per", 0}, {"width", 32}, {"subgroups", 0}};
        const int64_t width = cols <= 1024 ? 32 : 256;
        const int64_t per = cols <= 8 * width ? 8 : cols <= 32 * width ? 32 : 0;
        return px::Tuning{{"per", per}, {"width", width}, {"subgroups", 1}};
    });
    return f;
}

using detail::need;

size_t elements(const char* function, int rows, int cols) {
    if (rows < 1 || cols < 1)
        throw Error(ErrorCode::InvalidArgument,
                    std::string("px::lib::") + function + ": rows and cols must be positive, got " +
                        std::to_string(rows) + " x " + std::to_string(cols));
    return size_t(rows) * size_t(cols);
}

template <class T>
Event softmax_of(const SoftmaxFamily<T>& family, Runtime& rt, Buffer<T>& x, Buffer<T>& y, int rows,
                 int cols, const Target& target) {
    const size_t n = elements("softmax", rows, cols);
    need("softmax", "x", x.size(), n);
    need("softmax", "y", y.size(), n);
    return rt.launch(target, family, Shape{rows, cols}, x, y, rows, cols);
}

template <class T>
Event layernorm_of(const LayerNormFamily<T>& family, Runtime& rt, Buffer<T>& x,
                   Buffer<float>& gamma, Buffer<float>& beta, Buffer<T>& y, int rows, int cols,
                   float eps, const Target& target) {
    const size_t n = elements("layernorm", rows, cols);
    need("layernorm", "x", x.size(), n);
    need("layernorm", "y", y.size(), n);
    need("layernorm", "gamma", gamma.size(), size_t(cols));
    need("layernorm", "beta", beta.size(), size_t(cols));
    return rt.launch(target, family, Shape{rows, cols}, x, gamma, beta, y, rows, cols, eps);
}

} // namespace

const SoftmaxFamily<float>& softmax_f32() {
    static const auto f = with_row_space(make_softmax<float>("softmax_f32"));
    return f;
}
const SoftmaxFamily<bf16>& softmax_bf16() {
    static const auto f = with_row_space(make_softmax<bf16>("softmax_bf16"));
    return f;
}
const LayerNormFamily<float>& layernorm_f32() {
    static const auto f = with_row_space(make_layernorm<float>("layernorm_f32"));
    return f;
}
const LayerNormFamily<bf16>& layernorm_bf16() {
    static const auto f = with_row_space(make_layernorm<bf16>("layernorm_bf16"));
    return f;
}

Event softmax(Runtime& rt, Buffer<float>& x, Buffer<float>& y, int rows, int cols,
              const Target& target) {
    return softmax_of(softmax_f32(), rt, x, y, rows, cols, target);
}
Event softmax(Runtime& rt, Buffer<bf16>& x, Buffer<bf16>& y, int rows, int cols,
              const Target& target) {
    return softmax_of(softmax_bf16(), rt, x, y, rows, cols, target);
}
Event layernorm(Runtime& rt, Buffer<float>& x, Buffer<float>& gamma, Buffer<float>& beta,
                Buffer<float>& y, int rows, int cols, float eps, const Target& target) {
    return layernorm_of(layernorm_f32(), rt, x, gamma, beta, y, rows, cols, eps, target);
}
Event layernorm(Runtime& rt, Buffer<bf16>& x, Buffer<float>& gamma, Buffer<float>& beta,
                Buffer<bf16>& y, int rows, int cols, float eps, const Target& target) {
    return layernorm_of(layernorm_bf16(), rt, x, gamma, beta, y, rows, cols, eps, target);
}

} // namespace plexus::lib
