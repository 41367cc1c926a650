// The validator: the second line of defence after make(). Every rejection is a user error that
// names the kernel, the construct and where it is (a path such as body[3].then[0]).
#include "plexus/catalog.hpp"
#include "plexus/error.hpp"
#include "plexus/ir.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <vector>

namespace plexus::ir {
namespace {

// Names that would collide with a keyword or builtin of a generated language.
bool is_reserved(const std::string& s) {
    static const std::set<std::string> words = {
        "auto",     "bool",     "break",     "case",     "char",    "const",     "constant",
        "continue", "default",  "do",        "double",   "else",    "enum",      "extern",
        "float",    "for",      "global",    "goto",     "half",    "if",        "inline",
        "int",      "kernel",   "local",     "long",     "private", "register",  "restrict",
        "return",   "short",    "signed",    "sizeof",   "static",  "struct",    "switch",
        "typedef",  "uchar",    "uint",      "ulong",    "union",   "unsigned",  "ushort",
        "void",     "volatile", "while",     "true",     "false",   "threadIdx", "blockIdx",
        "blockDim", "gridDim",  "warpSize",  "size_t",   "this",    "new",       "delete",
        "class",    "template", "namespace", "operator", "private", "public",    "asm"};
    return words.count(s) || s.rfind("plx_", 0) == 0 || s.rfind("__", 0) == 0;
}

// How much a value may differ between the work-items of a group: not at all, only between
// subgroups (the same on every lane of one: a subgroup's index, a reduction), or from one
// work-item to the next. A barrier needs control flow of the first kind, a subgroup operation
// of the first two.
using Level = int;
constexpr Level kUniform = 0, kSubgroupUniform = 1, kVarying = 2;

struct Scope {
    std::string name;
    Type type;
    bool read_only;
};

class Validator {
public:
    Validator(const Kernel& k, const ValidateLimits& limits) : k_(k), limits_(limits) {}

    void run() {
        if (!is_identifier(k_.name) || is_reserved(k_.name))
            fail("", "the kernel name '" + k_.name + "' is not a usable identifier");
        check_type_list();
        std::set<std::string> names;
        for (size_t i = 0; i < k_.params.size(); ++i) {
            const Param& p = k_.params[i];
            const std::string where = "params[" + std::to_string(i) + "]";
            check_name(p.name, "parameter", where);
            if (!names.insert(p.name).second) fail(where, "two parameters named '" + p.name + "'");
            check_type(p.type, where);
            if (p.kind == Param::Kind::Buffer && !is_storable(p.type))
                fail(where,
                     "buffer parameter '" + p.name + "' of " + to_string(p.type) + " elements");
            if (p.kind == Param::Kind::Scalar && (!p.type.is_scalar() || p.type == Scalar::Bool))
                fail(where,
                     "scalar parameter '" + p.name + "' has type " + to_string(p.type) +
                         " (scalar parameters are numbers; pass vectors and records in a buffer)");
        }
        if (!k_.routine.empty()) return check_routine();
        check_arrays(k_.shared, "shared", names);
        check_arrays(k_.privates, "private", names);
        check_fragments(names);
        check_work_group();
        if (limits_.local_memory_bytes && k_.shared_bytes() > limits_.local_memory_bytes)
            fail("", "shared memory of " + std::to_string(k_.shared_bytes()) +
                         " bytes is over the device's limit of " +
                         std::to_string(limits_.local_memory_bytes) + " bytes");
        if (!as<Block>(k_.body)) fail("body", "the kernel body must be a block");
        const KernelUses uses = collect_uses(k_);
        has_barrier_ = uses.barrier;
        has_subgroup_ = uses.subgroup || uses.matrix;
        for (auto& p : k_.params)
            if (p.kind == Param::Kind::Scalar) scopes_.push_back({p.name, p.type, false});
        // Which variables hold work-item-dependent values: iterate to a fixed point, since a
        // loop can carry a varying value back into an earlier assignment.
        const size_t base = scopes_.size();
        do {
            changed_ = false;
            scopes_.resize(base);
            loop_depth_ = 0;
            divergent_ = lane_divergent_ = 0;
            barrier_check_ = false;
            stmt(k_.body, "body");
        } while (changed_);
        scopes_.resize(base);
        barrier_check_ = true;
        stmt(k_.body, "body");
    }

private:
    // A routine kernel: parameters of the routine's kinds, types and accesses, nothing else.
    void check_routine() const {
        const Routine* r = find_routine(k_.routine);
        if (!r) {
            std::string known;
            for (const Routine& each : routines())
                known += (known.empty() ? "" : ", ") + each.name;
            fail("routine",
                 "unknown library routine '" + k_.routine + "' (plexus knows " + known + ")");
        }
        if (k_.params.size() != r->params.size())
            fail("params", "routine " + r->name + " takes " + std::to_string(r->params.size()) +
                               " parameters, the kernel has " + std::to_string(k_.params.size()));
        for (size_t i = 0; i < k_.params.size(); ++i) {
            const Param &p = k_.params[i], &want = r->params[i];
            const bool buffer = want.kind == Param::Kind::Buffer;
            if (p.kind != want.kind || p.type != want.type || (buffer && p.access != want.access))
                fail("params[" + std::to_string(i) + "]",
                     "parameter '" + p.name + "' of routine " + r->name + " must be " +
                         (buffer ? std::string(to_string(want.access)) + " buffer of " +
                                       to_string(want.type)
                                 : std::string("a scalar ") + to_string(want.type)) +
                         " (its '" + want.name + "')");
        }
        const Block* body = as<Block>(k_.body);
        if (!body || !body->body.empty() || !k_.shared.empty() || !k_.privates.empty() ||
            !k_.fragments.empty())
            fail("body", "routine kernel '" + k_.name +
                             "' has code of its own (a routine's body is the backend's)");
    }

    const Kernel& k_;
    ValidateLimits limits_;
    std::vector<Scope> scopes_;
    // How much each variable's value may vary (Level): a variable missing is uniform.
    std::map<std::string, Level> varying_;
    bool changed_ = false;
    bool barrier_check_ = false;
    bool has_barrier_ = false;
    bool has_subgroup_ = false;
    int loop_depth_ = 0;
    int divergent_ = 0;      // > 0 inside control flow that is not uniform over the group
    int lane_divergent_ = 0; // > 0 inside control flow that may differ within a subgroup
    std::string divergence_reason_, lane_divergence_reason_;
    // The level of the control flow here: a value assigned under it varies at least as much.
    Level control() const {
        return lane_divergent_ ? kVarying : divergent_ ? kSubgroupUniform : kUniform;
    }

    // A full unroll needs a trip count every compiler can count: constant begin, end and step.
    void unroll_hint(const For& n, const std::string& where) const {
        if (n.unroll != For::unroll_full) {
            if (n.unroll > For::max_unroll)
                fail(where, "the loop over '" + n.var + "' is unrolled by " +
                                std::to_string(n.unroll) + " (at most " +
                                std::to_string(For::max_unroll) + ")");
            return;
        }
        std::vector<std::string> bounds;
        for (auto [e, name] : {std::pair{&n.begin, "begin"}, {&n.end, "end"}, {&n.step, "step"}})
            if (!as<Const>(*e)) bounds.push_back(name);
        if (bounds.empty()) return;
        std::string list = bounds[0];
        for (size_t i = 1; i < bounds.size(); ++i)
            list += (i + 1 == bounds.size() ? " and " : ", ") + bounds[i];
        fail(where, "the loop over '" + n.var + "' is unrolled fully, but its " + list +
                        (bounds.size() == 1 ? " is not a constant" : " are not constants") +
                        " (a full unroll needs a constant trip count; px::unroll(k) unrolls any "
                        "loop)");
    }

    [[noreturn]] void fail(const std::string& where, const std::string& what) const {
        ErrorContext ctx;
        ctx.kernel = k_.name;
        throw Error(ErrorCode::InvalidKernel,
                    "kernel '" + k_.name + "': " + what +
                        (where.empty() ? "" : " (at " + where + ")"),
                    ctx);
    }
    void check_name(const std::string& n, const char* what, const std::string& where) const {
        if (!is_identifier(n))
            fail(where, std::string(what) + " name '" + n + "' is not an identifier");
        if (is_reserved(n))
            fail(where, std::string(what) + " name '" + n +
                            "' is reserved (a keyword of a generated language, or plx_ / __)");
    }

    // Records and variants: each declared once, after the types it contains.
    void check_type_list() const {
        for (size_t i = 0; i < k_.types.size(); ++i) {
            const TypeDecl& d = *k_.types[i];
            const std::string where = "types[" + std::to_string(i) + "]";
            check_name(d.name, d.kind == TypeDecl::Kind::Record ? "record" : "variant", where);
            for (size_t j = 0; j < i; ++j)
                if (k_.types[j]->name == d.name)
                    fail(where, "the type '" + d.name + "' is declared twice");
            for (auto& m : d.members) {
                if (!m.type.is_aggregate()) continue;
                const TypeDecl* inner = nullptr;
                for (size_t j = 0; j < i; ++j)
                    if (k_.types[j]->name == m.type.decl()->name) inner = k_.types[j].get();
                if (!inner)
                    fail(where, "'" + d.name + "." + m.name + "' is a " + m.type.decl()->name +
                                    ", which is not declared before '" + d.name + "'");
                if (!(*inner == *m.type.decl()))
                    fail(where, "'" + d.name + "." + m.name + "' is a " + inner->name +
                                    " that differs from the declared one");
            }
        }
    }
    // A record or variant must be the one the kernel declares under its name.
    void check_type(const Type& t, const std::string& where) const {
        if (!t.is_aggregate()) return;
        const TypeDecl* d = k_.type_decl(t.decl()->name);
        if (!d)
            fail(where, "the type '" + t.decl()->name + "' is not declared in the kernel's types");
        if (!(*d == *t.decl()))
            fail(where, "a value of type '" + t.decl()->name +
                            "' does not match the declaration of that name "
                            "(another record or variant with the same name)");
    }

    void check_arrays(const std::vector<ArrayDecl>& arrays, const char* space,
                      std::set<std::string>& names) const {
        for (size_t i = 0; i < arrays.size(); ++i) {
            const ArrayDecl& a = arrays[i];
            const std::string where = std::string(space) + "[" + std::to_string(i) + "]";
            check_name(a.name, (std::string(space) + " array").c_str(), where);
            if (!names.insert(a.name).second)
                fail(where, "the name '" + a.name + "' is declared twice");
            check_type(a.type, where);
            if (a.count == 0 || !is_storable(a.type))
                fail(where, std::string(space) + " array '" + a.name +
                                "' must have a positive count of " +
                                "values that can live in memory, not " + std::to_string(a.count) +
                                " of " + to_string(a.type));
            if (a.dims.empty()) {
                if (a.pad) fail(where, "array '" + a.name + "' has row padding but no shape");
                if (a.swizzle)
                    fail(where, "array '" + a.name +
                                    "' is swizzled but has no shape (only 2-D shared arrays are)");
                continue;
            }
            if (std::string(space) == "private")
                fail(where,
                     "private array '" + a.name + "' has a shape (only shared arrays have one)");
            if (a.dims.size() < 2 || a.dims.size() > 3 ||
                std::count(a.dims.begin(), a.dims.end(), 0u))
                fail(where, "array '" + a.name + "' must have 2 or 3 positive dimensions");
            uint64_t count = uint64_t(a.dims.back()) + a.pad;
            for (size_t d = 0; d + 1 < a.dims.size(); ++d)
                count *= a.dims[d];
            if (count != a.count)
                fail(where, "array '" + a.name + "' holds " + std::to_string(a.count) +
                                " elements, its shape " + std::to_string(count));
            if (a.swizzle) {
                const uint32_t size = a.type.is_scalar() ? size_of(a.type.scalar()) : 0;
                if (a.dims.size() != 2 || a.pad || (size != 2 && size != 4) ||
                    a.dims[1] * size % 128 || a.dims[0] % 8)
                    fail(where,
                         "swizzled array '" + a.name +
                             "' must be 2-D, unpadded, of 2- or 4-byte elements, "
                             "with rows a multiple of 128 bytes and a multiple of 8 rows (it is " +
                             std::to_string(a.dims[0]) + " x " + std::to_string(a.dims.back()) +
                             " of " + to_string(a.type) + (a.pad ? ", padded)" : ")"));
            }
        }
    }

    void check_fragments(std::set<std::string>& names) const {
        for (size_t i = 0; i < k_.fragments.size(); ++i) {
            const FragmentDecl& f = k_.fragments[i];
            const std::string where = "fragments[" + std::to_string(i) + "]";
            check_name(f.name, "fragment", where);
            if (!names.insert(f.name).second)
                fail(where, "the name '" + f.name + "' is declared twice");
            if (std::string bad = f.check(); !bad.empty())
                fail(where, "fragment '" + f.name + "' is " + bad);
        }
    }
    const FragmentDecl& fragment(const std::string& name, const std::string& where) const {
        const FragmentDecl* f = k_.fragment(name);
        if (!f) fail(where, "'" + name + "' is not a declared fragment");
        return *f;
    }

    // A collective fragment operation: every lane of the subgroup reaches it, with operands
    // that are the same on every lane.
    void matrix(const Matrix& n, const std::string& where) {
        const FragmentDecl& f = fragment(n.frag, where);
        const std::string what = std::string(to_string(n.op)) + " of fragment '" + n.frag + "'";
        if (barrier_check_ && lane_divergent_)
            fail(where, "matrix " + what +
                            " in divergent control flow: " + lane_divergence_reason_ +
                            ", so not every work-item of its subgroup reaches it");
        auto operand = [&](const Expr& e, const char* role) {
            if (expr(e, where + "." + role) == kVarying)
                fail(where, "the " + std::string(role) + " of the " + what +
                                " depends on the work-item (every work-item of the subgroup must "
                                "give the same)");
        };
        switch (n.op) {
        case MatrixOp::Fill: operand(n.value, "value"); return;
        case MatrixOp::Load:
        case MatrixOp::Store: {
            const Type t = array_type(n.array, n.space, where);
            if (!(t == f.type))
                fail(where, what + ": '" + n.array + "' holds " + to_string(t) + ", the fragment " +
                                to_string(f.type));
            if (f.use != MatrixUse::Acc && n.layout != f.layout)
                fail(where, what + " reads " + to_string(n.layout) +
                                "-major memory, the fragment is declared " + to_string(f.layout) +
                                "-major");
            if (const ArrayDecl* a = n.space == Space::Local ? k_.shared_array(n.array) : nullptr;
                a && a->swizzle)
                fail(where,
                     what + ": '" + n.array +
                         "' is swizzled, and fragments load and store rows one stride apart");
            if (n.op == MatrixOp::Load && f.warpgroup())
                fail(where, what + ": warpgroup accumulators are filled and stored, not loaded");
            if (n.op == MatrixOp::Store) {
                if (f.use != MatrixUse::Acc) fail(where, what + ": only accumulators are stored");
                if (read_only(n.array, n.space))
                    fail(where, what + " to '" + n.array + "', which is read-only (In<T>)");
                if (n.rows && !f.warpgroup())
                    fail(where, what + ": a bounded store needs a warpgroup accumulator (m64), '" +
                                    n.frag + "' is " + f.shape());
                if (f.warpgroup() && n.layout != MatrixLayout::Row)
                    fail(where, what + ": warpgroup accumulators store row-major");
                if (n.rows) operand(n.rows, "row bound"), operand(n.cols, "column bound");
            }
            operand(n.index, "index");
            operand(n.stride, "stride");
            return;
        }
        case MatrixOp::Mma: {
            const FragmentDecl &a = fragment(n.a, where), &b = fragment(n.b, where),
                               &c = fragment(n.c, where);
            if (a.use != MatrixUse::A || b.use != MatrixUse::B || c.use != MatrixUse::Acc ||
                f.use != MatrixUse::Acc)
                fail(where, "mma takes an A, a B and an accumulator into an accumulator ('" +
                                n.frag + "' = '" + n.a + "' x '" + n.b + "' + '" + n.c + "')");
            if (f.warpgroup() || c.warpgroup())
                fail(where,
                     "mma into the warpgroup accumulator '" + (f.warpgroup() ? n.frag : n.c) +
                         "': warpgroup accumulators take mma_shared, from swizzled shared arrays");
            if (a.shape() != f.shape() || b.shape() != f.shape() || c.shape() != f.shape())
                fail(where, "mma of fragments of different shapes (" + a.shape() + ", " +
                                b.shape() + ", " + c.shape() + " into " + f.shape() + ")");
            if (a.type != b.type)
                fail(where, "mma of A of " + std::string(to_string(a.type)) + " and B of " +
                                to_string(b.type));
            if (c.type != f.type)
                fail(where, "mma adds an accumulator of " + std::string(to_string(c.type)) +
                                " into one of " + to_string(f.type));
            if (f.type == Scalar::F16 && a.type != Scalar::F16)
                fail(where, "an f16 accumulator takes f16 products, not " +
                                std::string(to_string(a.type)));
            return;
        }
        case MatrixOp::MmaShared: mma_shared(n, f, what, where, operand); return;
        }
    }

    // d += A x B from two swizzled shared arrays into a warpgroup accumulator.
    template <class Operand>
    void mma_shared(const Matrix& n, const FragmentDecl& f, const std::string& what,
                    const std::string& where, const Operand& operand) const {
        if (!f.warpgroup())
            fail(where, what + ": mma_shared accumulates into a warpgroup accumulator (m64), not " +
                            f.shape());
        auto tile_array = [&](const std::string& name, const char* role) -> const ArrayDecl& {
            const ArrayDecl* a = k_.shared_array(name);
            if (!a) fail(where, what + ": its " + role + " '" + name + "' is not a shared array");
            if (!a->swizzle)
                fail(where, what + ": its " + role + " '" + name +
                                "' is not swizzled (declare it with px::Swizzle128)");
            if (!(a->type == Scalar::F16) && !(a->type == Scalar::BF16))
                fail(where, what + ": its " + role + " '" + name + "' holds " + to_string(a->type) +
                                " (f16 or bf16)");
            return *a;
        };
        const ArrayDecl &a = tile_array(n.array, "A"), &b = tile_array(n.array_b, "B");
        if (!(a.type == b.type))
            fail(where, what + ": A holds " + to_string(a.type) + ", B " + to_string(b.type));
        operand(n.row_a, "A row"), operand(n.col_a, "A column"), operand(n.row_b, "B row"),
            operand(n.col_b, "B column");
        // Constant corners: the alignment the descriptors need, and the tiles inside the arrays.
        auto check = [&](const Expr& e, const char* role, int64_t multiple, int64_t extent,
                         uint32_t size) {
            auto c = as<Const>(e);
            if (!c) return;
            if (c->i % multiple)
                fail(where, what + ": its " + role + " is " + std::to_string(c->i) +
                                ", not a multiple of " + std::to_string(multiple));
            if (c->i < 0 || c->i + extent > int64_t(size))
                fail(where, what + ": its " + role + " " + std::to_string(c->i) +
                                " puts the tile's " + std::to_string(extent) +
                                " past the array's " + std::to_string(size));
        };
        const int64_t depth = 16 * int64_t(n.steps);
        // Whatever the corners, the tiles must fit the arrays.
        auto fits = [&](const char* role, int64_t extent, uint32_t size, const char* dim) {
            if (extent > int64_t(size))
                fail(where, what + ": its " + role + " tile has " + std::to_string(extent) + " " +
                                dim + ", the array " + std::to_string(size));
        };
        fits("A", 64, a.dims[0], "rows");
        fits("A", depth, a.dims[1], "columns");
        fits("B", depth, b.dims[0], "rows");
        fits("B", f.n, b.dims[1], "columns");
        check(n.row_a, "A row", 8, 64, a.dims[0]);
        check(n.col_a, "A column", 16, depth, a.dims[1]);
        check(n.row_b, "B row", 8, depth, b.dims[0]);
        check(n.col_b, "B column", 64, f.n, b.dims[1]);
    }

    // An asynchronous copy: per work-item, so no uniformity rule; what cp.async can copy.
    void async_copy(const AsyncCopy& n, const std::string& where) {
        if (n.op != AsyncCopyOp::Copy) return; // Wait's pending is a constant by construction
        const std::string what = "copy_async<" + std::to_string(n.count) + "> from '" + n.buffer +
                                 "' into '" + n.array + "'";
        if (!k_.shared_array(n.array))
            fail(where, what + ": the destination must be a shared array" +
                            (k_.private_array(n.array) ? std::string(", not a private one")
                             : k_.param(n.array)
                                 ? std::string(", not a buffer")
                                 : std::string(", and '" + n.array + "' is not declared")));
        const Type dst = array_type(n.array, Space::Local, where);
        const Type src = array_type(n.buffer, Space::Global, where);
        if (!(dst == src))
            fail(where, what + ": the shared array holds " + to_string(dst) + ", the buffer " +
                            to_string(src) + " (an async copy moves elements of one type)");
        const uint64_t size = dst.is_scalar() ? size_of(dst) : 0;
        if (size != 2 && size != 4 && size != 8)
            fail(where, what + ": elements of " + to_string(dst) +
                            " (async copies move scalars of 2, 4 or 8 bytes)");
        const uint64_t bytes = size * n.count;
        if (bytes != 4 && bytes != 8 && bytes != 16)
            fail(where, what + ": " + std::to_string(n.count) + " elements of " + to_string(dst) +
                            " are " + std::to_string(bytes) +
                            " bytes (an async copy moves 4, 8 or 16 bytes)");
        expr(n.index, where + ".index");
        expr(n.src_index, where + ".src_index");
        expr(n.valid, where + ".valid");
        for (const auto& [e, role] : {std::pair{n.index, "destination index"},
                                      {n.src_index, "source index"},
                                      {n.valid, "valid count"}})
            if (!is_integer(e->type))
                fail(where,
                     what + ": the " + role + " is " + to_string(e->type) + ", not an integer");
    }

    void check_work_group() const {
        const WorkGroupBound& w = k_.work_group;
        if (w.min_groups && !w.declared())
            fail("work_group",
                 "min_groups " + std::to_string(w.min_groups) +
                     " without a declared work-group size (required or max) to count them by");
        if (w.min_groups > 32)
            fail("work_group", "min_groups " + std::to_string(w.min_groups) +
                                   " is above 32, more than a compute unit holds");
        const bool some = w.required[0] || w.required[1] || w.required[2];
        if (!some) return;
        uint64_t items = 1;
        for (uint32_t d : w.required) {
            if (d == 0) fail("work_group", "a required work-group size with a dimension of 0");
            items *= d;
        }
        if (w.max && items > w.max)
            fail("work_group", "a required work-group of " + std::to_string(items) +
                                   " work-items above its own maximum of " + std::to_string(w.max));
    }

    const Scope* lookup(const std::string& n) const {
        for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it)
            if (it->name == n) return &*it;
        return nullptr;
    }
    void declare(const std::string& n, const Type& t, bool read_only, const std::string& where) {
        check_name(n, "variable", where);
        if (lookup(n) || k_.param(n) || k_.shared_array(n) || k_.private_array(n) || k_.fragment(n))
            fail(where, "'" + n + "' is declared again while an earlier one is visible");
        check_type(t, where);
        scopes_.push_back({n, t, read_only});
    }
    void mark_varying(const std::string& n, Level level) {
        level = std::max(level, control());
        if (level == kUniform) return;
        Level& known = varying_[n];
        if (level > known) known = level, changed_ = true;
    }
    Level level_of(const std::string& n) const {
        auto it = varying_.find(n);
        return it == varying_.end() ? kUniform : it->second;
    }

    // The element type of an array access, after checking the array exists in that space.
    Type array_type(const std::string& array, Space space, const std::string& where) const {
        if (space == Space::Global) {
            const Param* p = k_.param(array);
            if (!p || p->kind != Param::Kind::Buffer)
                fail(where, "'" + array + "' is not a buffer parameter");
            return p->type;
        }
        const ArrayDecl* a =
            space == Space::Local ? k_.shared_array(array) : k_.private_array(array);
        if (!a) fail(where, "'" + array + "' is not a declared " + to_string(space) + " array");
        return a->type;
    }
    bool read_only(const std::string& array, Space space) const {
        return space == Space::Global && k_.param(array)->access == Access::Read;
    }
    void check_path(const Type& root, const Path& path, const Expr& value,
                    const std::string& target, const std::string& where) const {
        auto t = path_type(root, path);
        if (!t)
            fail(where,
                 "the path into '" + target + "' (" + to_string(root) + ") does not fit its type");
        if (!(*t == value->type))
            fail(where, "assignment of " + to_string(value->type) + " to '" + target + "'" +
                            (path.empty() ? "" : " (a part of it)") + " of " + to_string(*t) +
                            " (cast it)");
    }

    // Returns how much the expression's value may differ between the work-items of a group.
    Level expr(const Expr& e, const std::string& where) {
        check_type(e->type, where);
        switch (e->kind) {
        case ExprKind::Var: {
            auto& n = static_cast<const Var&>(*e);
            const Scope* s = lookup(n.name);
            if (!s) fail(where, "'" + n.name + "' is not declared here");
            if (!(s->type == n.type))
                fail(where, "'" + n.name + "' is " + to_string(s->type) + ", used as " +
                                to_string(n.type));
            return level_of(n.name);
        }
        case ExprKind::Load: {
            auto& n = static_cast<const Load&>(*e);
            Type t = array_type(n.array, n.space, where);
            if (!(t == n.type))
                fail(where,
                     "load of " + to_string(n.type) + " from '" + n.array + "' of " + to_string(t));
            // A private array holds each work-item's own values, whatever the index.
            return std::max(expr(n.index, where), n.space == Space::Private ? kVarying : kUniform);
        }
        case ExprKind::Call: {
            auto& n = static_cast<const Call&>(*e);
            const IntrinsicInfo* info = find_intrinsic(n.name);
            if (!info) fail(where, "unknown intrinsic '" + n.name + "'");
            const bool collective = info->convergence == Convergence::Subgroup;
            if (collective && barrier_check_ && lane_divergent_)
                fail(where, "subgroup operation '" + n.name +
                                "' in divergent control flow: " + lane_divergence_reason_ +
                                ", so not every work-item of its subgroup reaches it");
            Level v = kUniform;
            for (auto& a : n.args)
                v = std::max(expr(a, where), v);
            return call_level(n.name, *info, v);
        }
        case ExprKind::Binary: {
            auto& n = static_cast<const Binary&>(*e);
            if (n.op != BinaryOp::LogicalAnd && n.op != BinaryOp::LogicalOr)
                return children(*e, where);
            // The right operand runs only where the left one decides nothing: a subgroup
            // operation there is reached by some work-items only.
            const Level v = expr(n.a, where);
            enter_divergence(v, std::string("the left operand of ") + c_symbol(n.op) + " at " +
                                    where + depends(v));
            const Level vb = expr(n.b, where);
            leave_divergence(v);
            return std::max(v, vb);
        }
        case ExprKind::Atomic: {
            auto& n = static_cast<const Atomic&>(*e);
            Type t = array_type(n.array, n.space, where);
            if (!(t == n.type))
                fail(where, "atomic on '" + n.array + "' of " + to_string(t) + " with " +
                                to_string(n.type));
            if (read_only(n.array, n.space))
                fail(where, "atomic update of '" + n.array + "', which is read-only (In<T>)");
            children(*e, where);
            return kVarying;
        }
        default: return children(*e, where);
        }
    }
    Level children(const ExprNode& e, const std::string& where) {
        Level v = kUniform;
        for_each_child(e, [&](const Expr& c) { v = std::max(expr(c, where), v); });
        return v;
    }
    // A call's level: the subgroup's index and size are the same within a subgroup, and so is
    // a reduction, a vote or a ballot whatever its operand; other subgroup operations and the
    // work-item indices vary; anything else varies as its arguments.
    static Level call_level(const std::string& name, const IntrinsicInfo& info, Level args) {
        if (name == "subgroup_id" || name == "subgroup_size" || name == "subgroup_ballot" ||
            name == "subgroup_any" || name == "subgroup_all" ||
            name.rfind("subgroup_reduce_", 0) == 0)
            return kSubgroupUniform;
        if (info.convergence == Convergence::Varying || info.convergence == Convergence::Subgroup)
            return kVarying;
        return args;
    }
    static const char* depends(Level v) {
        return v == kVarying ? " depends on the work-item" : " depends on the work-item's subgroup";
    }

    void body(const Stmt& s, const std::string& where) {
        size_t mark = scopes_.size();
        stmt(s, where);
        scopes_.resize(mark);
    }

    // True when a Break / Continue / Return sits under work-item-dependent control in s,
    // outside any nested loop: such a loop leaves some work-items behind.
    Level exits_divergently(const Stmt& s, Level under) {
        switch (s->kind) {
        case StmtKind::Break:
        case StmtKind::Continue:
        case StmtKind::Return: return under;
        case StmtKind::For:
        case StmtKind::While: return kUniform;
        default: break;
        }
        Level v = under;
        if (auto n = as<If>(s)) v = std::max(v, cond_varying(n->cond));
        if (auto n = as<Match>(s)) v = std::max(v, cond_varying(n->value));
        Level exits = kUniform;
        for_each_part(
            *s, [](const Expr&) {},
            [&](const Stmt& c) { exits = std::max(exits, exits_divergently(c, v)); });
        return exits;
    }
    // A syntactic check of whether a value may vary, without scope checks (those happen when
    // the statement itself is validated).
    Level cond_varying(const Expr& e) {
        Level v = kUniform;
        for_each_child(*e, [&](const Expr& c) { v = std::max(v, cond_varying(c)); });
        switch (e->kind) {
        case ExprKind::Var: return level_of(static_cast<const Var&>(*e).name);
        case ExprKind::Atomic: return kVarying;
        case ExprKind::Load:
            if (static_cast<const Load&>(*e).space == Space::Private) return kVarying;
            return v;
        case ExprKind::Call: {
            const std::string& name = static_cast<const Call&>(*e).name;
            const IntrinsicInfo* info = find_intrinsic(name);
            return info ? call_level(name, *info, v) : kVarying;
        }
        default: return v;
        }
    }

    void enter_divergence(Level v, const std::string& why) {
        if (v >= kSubgroupUniform && divergent_++ == 0) divergence_reason_ = why;
        if (v >= kVarying && lane_divergent_++ == 0) lane_divergence_reason_ = why;
    }
    void leave_divergence(Level v) {
        if (v >= kSubgroupUniform) --divergent_;
        if (v >= kVarying) --lane_divergent_;
    }

    void stmt(const Stmt& s, const std::string& where) {
        switch (s->kind) {
        case StmtKind::Block: {
            auto& n = static_cast<const Block&>(*s);
            size_t mark = scopes_.size();
            for (size_t i = 0; i < n.body.size(); ++i)
                stmt(n.body[i], where + "[" + std::to_string(i) + "]");
            scopes_.resize(mark);
            return;
        }
        case StmtKind::Let: {
            auto& n = static_cast<const Let&>(*s);
            const Level v = expr(n.init, where + ".init");
            if (!(n.init->type == n.type))
                fail(where, "'" + n.name + "' declared with another type than its value");
            declare(n.name, n.type, false, where);
            mark_varying(n.name, v);
            return;
        }
        case StmtKind::Assign: {
            auto& n = static_cast<const Assign&>(*s);
            const Level v = expr(n.value, where + ".value");
            const Scope* sc = lookup(n.name);
            if (!sc) fail(where, "assignment to '" + n.name + "', which is not declared here");
            if (sc->read_only) fail(where, "assignment to the loop variable '" + n.name + "'");
            check_path(sc->type, n.path, n.value, n.name, where);
            mark_varying(n.name, v);
            return;
        }
        case StmtKind::Store: {
            auto& n = static_cast<const Store&>(*s);
            Type t = array_type(n.array, n.space, where);
            if (read_only(n.array, n.space))
                fail(where, "store to '" + n.array + "', which is read-only (In<T>)");
            expr(n.index, where + ".index");
            expr(n.value, where + ".value");
            check_path(t, n.path, n.value, n.array, where);
            return;
        }
        case StmtKind::If: {
            auto& n = static_cast<const If&>(*s);
            const Level v = expr(n.cond, where + ".cond");
            enter_divergence(v, "the if at " + where + depends(v));
            body(n.then_body, where + ".then");
            if (n.else_body) body(n.else_body, where + ".else");
            leave_divergence(v);
            return;
        }
        case StmtKind::For: {
            auto& n = static_cast<const For&>(*s);
            unroll_hint(n, where);
            Level v = expr(n.begin, where + ".begin");
            v = std::max(expr(n.end, where + ".end"), v);
            v = std::max(expr(n.step, where + ".step"), v);
            v = std::max(v, exits_divergently(n.body, kUniform));
            size_t mark = scopes_.size();
            declare(n.var, n.type, true, where);
            mark_varying(n.var, v);
            loop(n.body, v, where);
            scopes_.resize(mark);
            return;
        }
        case StmtKind::While: {
            auto& n = static_cast<const While&>(*s);
            const Level v =
                std::max(expr(n.cond, where + ".cond"), exits_divergently(n.body, kUniform));
            loop(n.body, v, where);
            return;
        }
        case StmtKind::Match: match(static_cast<const Match&>(*s), where); return;
        case StmtKind::Break:
        case StmtKind::Continue:
            if (!loop_depth_)
                fail(where, std::string(s->kind == StmtKind::Break ? "break" : "continue") +
                                " outside a loop");
            return;
        case StmtKind::Return:
            if (has_barrier_)
                fail(where, "return in a kernel with a barrier: the work-item would leave its "
                            "group behind");
            if (has_subgroup_)
                fail(where,
                     "return in a kernel with a subgroup operation: the work-item would leave its "
                     "subgroup behind");
            return;
        case StmtKind::Barrier:
            if (barrier_check_ && divergent_)
                fail(where, "barrier in divergent control flow: " + divergence_reason_ +
                                ", so not every work-item of the group reaches it");
            return;
        case StmtKind::Fence: return;
        case StmtKind::Matrix: matrix(static_cast<const Matrix&>(*s), where); return;
        case StmtKind::AsyncCopy: async_copy(static_cast<const AsyncCopy&>(*s), where); return;
        case StmtKind::Eval: expr(static_cast<const Eval&>(*s).value, where + ".value"); return;
        case StmtKind::Native: {
            auto& n = static_cast<const Native&>(*s);
            if (n.fallback) body(n.fallback, where + ".fallback");
            return;
        }
        }
    }

    void loop(const Stmt& b, Level varying, const std::string& where) {
        enter_divergence(varying, "the loop at " + where + " runs a " +
                                      (varying == kVarying ? "work-item" : "subgroup") +
                                      "-dependent number of times");
        ++loop_depth_;
        body(b, where + ".body");
        --loop_depth_;
        leave_divergence(varying);
    }

    void match(const Match& n, const std::string& where) {
        const Level v = expr(n.value, where + ".value");
        const TypeDecl& d = *n.value->type.decl();
        std::vector<bool> seen(d.members.size(), false);
        for (size_t i = 0; i < n.cases.size(); ++i) {
            const MatchCase& c = n.cases[i];
            if (seen[c.index])
                fail(where + ".cases[" + std::to_string(i) + "]",
                     "case '" + d.members[c.index].name + "' of '" + d.name + "' is matched twice");
            seen[c.index] = true;
        }
        if (!n.otherwise) {
            std::string missing;
            for (size_t i = 0; i < seen.size(); ++i)
                if (!seen[i]) missing += (missing.empty() ? "" : ", ") + d.members[i].name;
            if (!missing.empty())
                fail(where, "the match on '" + d.name + "' is not exhaustive: no case for " +
                                missing + " (add them, or an otherwise)");
        }
        enter_divergence(v, "the match at " + where + depends(v));
        for (size_t i = 0; i < n.cases.size(); ++i) {
            const MatchCase& c = n.cases[i];
            const std::string at = where + ".cases[" + std::to_string(i) + "]";
            size_t mark = scopes_.size();
            if (!c.var.empty()) {
                declare(c.var, d.members[c.index].type, false, at);
                mark_varying(c.var, v);
            }
            body(c.body, at + ".body");
            scopes_.resize(mark);
        }
        if (n.otherwise) body(n.otherwise, where + ".otherwise");
        leave_divergence(v);
    }
};

} // namespace

void validate(const Kernel& k, const ValidateLimits& limits) {
    Validator(k, limits).run();
}

void validate_for_codegen(const Kernel& k) {
    validate(k);
    if (!k.routine.empty()) {
        ErrorContext ctx;
        ctx.kernel = k.name;
        throw Error(ErrorCode::Unsupported,
                    "kernel '" + k.name + "' is the library routine " + k.routine +
                        ": a backend offering it runs it, and no code is generated for it",
                    ctx);
    }
}

} // namespace plexus::ir
