// px::lib::matmul: checks its arguments, launches the GEMM family of the inputs' type (with
// transposed copies where the family's choice cannot take transposed operands), then the
// epilogue; and the GEMM families' shared rules (lib/gemm.hpp).
#include "lib/gemm.hpp"

#include "lib/args.hpp"

#include <climits>
#include <optional>

namespace plexus::lib {

namespace detail {

std::string gemm_reject(const Tuning& v, const FamilyContext& c,
                        const std::vector<std::pair<std::string, std::vector<int64_t>>>& space,
                        const plexus::detail::FamilyDef::Check& kernels) {
    if (c.shape.size() != 5)
        return "a GEMM family's shape is {m, n, k, trans_a, trans_b}, this one has " +
               std::to_string(c.shape.size()) + " sizes";
    if (v["vendor"] == 1) {
        for (const auto& [param, values] : space)
            if (v[param] != values.front())
                return "the library routine takes " + param + " " + std::to_string(values.front()) +
                       " only (" + param + " tunes plexus's kernels)";
        return "";
    }
    if (c.shape.at(3) != 0 || c.shape.at(4) != 0)
        return "plexus's kernels take a and b as stored, not transposed";
    Shape mnk;
    return kernels ? kernels(v, kernel_context(c, mnk)) : "";
}

Tuning routine_variant(const std::vector<std::pair<std::string, std::vector<int64_t>>>& space) {
    std::map<std::string, int64_t> values{{"vendor", 1}};
    for (const auto& [param, options] : space)
        values[param] = options.front();
    return Tuning(std::move(values));
}

FamilyContext kernel_context(const FamilyContext& c, Shape& mnk) {
    mnk.assign(c.shape.begin(), c.shape.begin() + 3);
    return {c.backend, c.device, mnk};
}

} // namespace detail

namespace {

namespace px = plexus;

template <class T> const char* type_name() {
    if constexpr (std::same_as<T, half>)
        return "f16";
    else if constexpr (std::same_as<T, bf16>)
        return "bf16";
    else
        return "f32";
}

// out (cols x rows) = the transpose of in (rows x cols): a transposed operand's copy.
template <class T> const Kernel<In<T>, Out<T>, Int, Int>& transpose_kernel() {
    static const auto k = px::kernel(
        std::string("lib_transpose_") + type_name<T>(), {"in", "out", "rows", "cols"},
        [](px::In<T> in, px::Out<T> out, px::Int rows, px::Int cols) {
            px::Int col = px::global_id(0), row = px::global_id(1);
            px::If(row < rows && col < cols, [&] { out[col * rows + row] = in[row * cols + col]; });
        });
    return k;
}

// c[row][col] = act(c[row][col] + bias[col]): with_bias 0 reads no bias, act 0 none, 1 relu,
// 2 gelu (tanh form).
const Kernel<InOut<float>, In<float>, Int, Int, Int, Int>& epilogue_kernel() {
    static const auto k =
        px::kernel("lib_matmul_epilogue", {"c", "bias", "rows", "cols", "with_bias", "act"},
                   [](px::InOut<float> c, px::In<float> bias, px::Int rows, px::Int cols,
                      px::Int with_bias, px::Int act) {
                       px::Int col = px::global_id(0), row = px::global_id(1);
                       px::If(row < rows && col < cols, [&] {
                           px::Int at = row * cols + col;
                           px::Float x = c[at];
                           px::If(with_bias != 0, [&] { x = x + bias[col]; });
                           px::If(act == 1, [&] { x = px::max(x, 0.0f); });
                           px::If(act == 2, [&] {
                               px::Float inner = 0.7978845608f * (x + 0.044715f * x * x * x);
                               x = 0.5f * x * (1.0f + px::tanh(inner));
                           });
                           c[at] = x;
                       });
                   });
    return k;
}

Grid grid_2d(int64_t cols, int64_t rows) {
    return Grid(size_t(cols), size_t(rows)).local_size(16, 16);
}

template <class T>
Event matmul_of(const GemmFamily<T>& family, Runtime& rt, Buffer<T>& a, Buffer<T>& b,
                Buffer<float>& c, const Matmul& p, const Target& target) {
    using detail::need;
    if (p.m < 0 || p.n < 0 || p.k < 0 || p.m > INT_MAX || p.n > INT_MAX || p.k > INT_MAX)
        throw Error(ErrorCode::InvalidArgument,
                    "px::lib::matmul: m, n and k must be 0 to 2^31 - 1, got " +
                        std::to_string(p.m) + ", " + std::to_string(p.n) + ", " +
                        std::to_string(p.k));
    need("matmul", "a", a.size(), size_t(p.m) * size_t(p.k));
    need("matmul", "b", b.size(), size_t(p.k) * size_t(p.n));
    need("matmul", "c", c.size(), size_t(p.m) * size_t(p.n));
    if (p.bias) need("matmul", "bias", p.bias->size(), size_t(p.n));
    const int m = int(p.m), n = int(p.n), k = int(p.k);
    if (m == 0 || n == 0) return Event();
    const int ta = p.transpose_a ? 1 : 0, tb = p.transpose_b ? 1 : 0;
    std::optional<Event> done;
    if (ta || tb) {
        // A backend's routine takes the transposes as they are; where none does (no device
        // offers one: NoBackend; the chosen one does not after all: Unsupported, where the
        // config's fallback does not choose again), plexus's kernels get transposed copies.
        try {
            done = rt.launch(target, family, Shape{m, n, k, ta, tb}, a, b, c, m, n, k, ta, tb);
        } catch (const Error& e) {
            if (e.code() != ErrorCode::NoBackend && e.code() != ErrorCode::Unsupported) throw;
        }
    }
    if (!done) {
        std::optional<Buffer<T>> at, bt;
        if (ta) {
            at.emplace(rt, size_t(m) * size_t(k));
            rt.launch(target, transpose_kernel<T>(), grid_2d(m, k), a, *at, k, m);
        }
        if (tb) {
            bt.emplace(rt, size_t(k) * size_t(n));
            rt.launch(target, transpose_kernel<T>(), grid_2d(k, n), b, *bt, n, k);
        }
        done = rt.launch(target, family, Shape{m, n, k, 0, 0}, at ? *at : a, bt ? *bt : b, c, m, n,
                         k, 0, 0);
    }
    if (!p.bias && p.activation == Activation::None) return *done;
    // Without a bias, c stands in for it: the kernel reads no bias then.
    Buffer<float>& bias = p.bias ? *p.bias : c;
    return rt.launch(target, epilogue_kernel(), grid_2d(n, m), c, bias, m, n, p.bias ? 1 : 0,
                     int(p.activation));
}

} // namespace

Event matmul(Runtime& rt, Buffer<float>& a, Buffer<float>& b, Buffer<float>& c, const Matmul& p,
             const Target& target) {
    return matmul_of(p.tf32 ? gemm_tf32() : gemm_f32(), rt, a, b, c, p, target);
}
Event matmul(Runtime& rt, Buffer<half>& a, Buffer<half>& b, Buffer<float>& c, const Matmul& p,
             const Target& target) {
    return matmul_of(gemm_f16(), rt, a, b, c, p, target);
}
Event matmul(Runtime& rt, Buffer<bf16>& a, Buffer<bf16>& b, Buffer<float>& c, const Matmul& p,
             const Target& target) {
    return matmul_of(gemm_bf16(), rt, a, b, c, p, target);
}

} // namespace plexus::lib
