// The tracer behind the kernel language: a stack of open blocks per thread, and the
// statements that control flow, synchronization and native code record.
#include "plexus/kernel.hpp"
#include "plexus/catalog.hpp"

namespace plexus {
namespace detail {

static thread_local Tracer* active = nullptr;

Tracer::Tracer(ir::Kernel& k) : kernel_(k), previous_(active) {
    active = this;
}
Tracer::~Tracer() {
    active = previous_;
}

Tracer& Tracer::current() {
    if (!active)
        throw Error(ErrorCode::InvalidKernel,
                    "a kernel-language operation ran outside plexus::kernel(): kernel values "
                    "exist only while a kernel is being traced");
    return *active;
}

std::string Tracer::fresh(const char* prefix) {
    return prefix + std::to_string(next_++);
}

void Tracer::fail(const std::string& what) const {
    ErrorContext ctx;
    ctx.kernel = kernel_.name;
    throw Error(ErrorCode::InvalidKernel, "kernel '" + kernel_.name + "': " + what, ctx);
}

void Tracer::emit(ir::Stmt s) {
    if (blocks_.empty())
        throw Error(ErrorCode::Internal, "kernel tracer: a statement outside any block");
    blocks_.back().push_back(std::move(s));
}

ir::Stmt Tracer::trace_block(const std::function<void()>& f) {
    blocks_.emplace_back();
    try {
        f();
    } catch (...) {
        blocks_.pop_back();
        throw;
    }
    std::vector<ir::Stmt> body = std::move(blocks_.back());
    blocks_.pop_back();
    return ir::Block::make(std::move(body));
}

void Tracer::replace(size_t depth, size_t index, ir::Stmt s) {
    if (depth != blocks_.size() || index >= blocks_.back().size())
        throw Error(ErrorCode::InvalidKernel,
                    "Else / ElseIf must directly follow its If, in the same block");
    blocks_.back()[index] = std::move(s);
}

ir::Expr index_call(const char* base, int dim) {
    if (dim < 0 || dim > 2)
        throw Error(ErrorCode::InvalidKernel, std::string(base) + "(" + std::to_string(dim) +
                                                  "): the dimension must be 0, 1 or 2");
    static const char axes[] = "xyz";
    return ir::Call::make(std::string(base) + "_" + axes[dim], {});
}

ir::Expr convert(const ir::Expr& e, const ir::Type& to, const char* what) {
    if (e->type == to) return e;
    if (e->type.is_scalar() && to.is_scalar() && ir::widens_exactly(e->type.scalar(), to.scalar()))
        return ir::Cast::make(to, e);
    Tracer::current().fail(std::string(what) + " converts " + to_string(e->type) + " to " +
                           to_string(to) +
                           ", which may lose range or precision: convert explicitly with px::cast");
}

ir::Expr zero(const ir::Type& t) {
    if (t.is_vector()) return ir::Broadcast::make(zero(t.scalar()), t.lanes());
    if (t.is_record()) {
        std::vector<ir::Expr> fields;
        for (auto& m : t.decl()->members)
            fields.push_back(zero(m.type));
        return ir::Construct::make(t, std::move(fields));
    }
    if (t.is_variant()) {
        const ir::Member& first = t.decl()->members[0];
        return ir::MakeVariant::make(t, 0, first.type.is_void() ? nullptr : zero(first.type));
    }
    if (t == ir::Scalar::Bool) return ir::Const::make_bool(false);
    if (ir::is_float(t)) return ir::Const::make_float(t.scalar(), 0.0);
    return ir::Const::make_int(t.scalar(), 0);
}

ir::Expr flat_index(const ir::Expr& row, uint64_t pitch, const ir::Expr& col) {
    // A constant index (a C++ integer is an i64 constant) does not make the arithmetic wide.
    auto wide_operand = [](const ir::Expr& e) {
        auto c = ir::as<ir::Const>(e);
        return ir::size_of(e->type) == 8 && !(c && c->i >= INT32_MIN && c->i <= INT32_MAX);
    };
    const bool wide = wide_operand(row) || wide_operand(col) || pitch > INT32_MAX;
    const ir::Scalar t = wide ? ir::Scalar::I64 : ir::Scalar::I32;
    auto as_t = [&](const ir::Expr& e) { return e->type == t ? e : ir::Cast::make(t, e); };
    return ir::Binary::make(
        ir::BinaryOp::Add,
        ir::Binary::make(ir::BinaryOp::Mul, as_t(row), ir::Const::make_int(t, int64_t(pitch))),
        as_t(col));
}

Place element_place(std::string array, ir::Space space, ir::Type elem, ir::Expr index) {
    Place p;
    p.array = true;
    p.name = std::move(array);
    p.space = space;
    p.index = std::move(index);
    p.root = std::move(elem);
    return p;
}

ir::Expr Place::read() const {
    ir::Expr e = array ? ir::Load::make(name, space, root, index) : ir::Var::make(name, root);
    ir::Type t = root;
    for (uint32_t step : path) {
        e = t.is_record() ? ir::Field::make(e, step) : ir::Swizzle::make(e, {uint8_t(step)});
        t = e->type;
    }
    return e;
}

void Place::write(const ir::Expr& value) const {
    auto& t = Tracer::current();
    t.emit(array ? ir::Store::make(name, space, index, value, path)
                 : ir::Assign::make(name, value, path));
}

const Place& atomic_place(const Place& p, ir::AtomicOp op, ir::Scalar type) {
    if (!p.array || !p.path.empty() || p.space == ir::Space::Private)
        Tracer::current().fail(
            "an atomic needs a whole element of a buffer or shared array, not " +
            (p.array ? "a part of '" + p.name + "'" : "the variable '" + p.name + "'"));
    // The catalog says which types each atomic exists on; name them rather than the intrinsic.
    auto intrinsic = [&](ir::Scalar t) {
        return std::string("atomic_") + ir::to_string(op) + "_" + ir::to_string(t) + "_" +
               ir::to_string(p.space);
    };
    if (find_intrinsic(intrinsic(type))) return p;
    std::string types;
    for (int t = int(ir::Scalar::Bool); t <= int(ir::Scalar::F64); ++t)
        if (find_intrinsic(intrinsic(ir::Scalar(t))))
            types += (types.empty() ? "" : ", ") + std::string(ir::to_string(ir::Scalar(t)));
    const std::string fn = op == ir::AtomicOp::Xchg      ? "exchange"
                           : op == ir::AtomicOp::CmpXchg ? "compare_exchange"
                                                         : ir::to_string(op);
    Tracer::current().fail("px::atomic_" + fn + " on '" + p.name + "', an array of " +
                           ir::to_string(type) + ": atomic " + ir::to_string(op) + " exists on " +
                           types + " only");
}

std::string declare_fragment(ir::FragmentDecl f) {
    auto& tr = Tracer::current();
    f.name = tr.fresh("frag");
    if (std::string bad = f.check(); !bad.empty()) tr.fail("px::Fragment: " + bad);
    tr.kernel().fragments.push_back(f);
    return f.name;
}

std::string declare_array(ir::Space space, const ir::Type& t, std::vector<uint32_t> dims,
                          uint32_t pad, bool swizzle) {
    auto& tr = Tracer::current();
    ir::ArrayDecl a;
    a.name = tr.fresh(space == ir::Space::Local ? "shared" : "priv");
    a.type = t;
    a.pad = pad;
    a.swizzle = swizzle;
    uint64_t count = uint64_t(dims.back()) + pad;
    for (size_t d = 0; d + 1 < dims.size(); ++d)
        count *= dims[d];
    if (count == 0 || count > UINT32_MAX)
        tr.fail("an array of " + std::to_string(count) + " elements (between 1 and 2^32 - 1)");
    a.count = uint32_t(count);
    if (dims.size() > 1) a.dims = std::move(dims);
    (space == ir::Space::Local ? tr.kernel().shared : tr.kernel().privates).push_back(a);
    return a.name;
}

ir::Type record_type(std::string_view text, std::vector<ir::Member> fields, uint64_t size,
                     const std::vector<uint64_t>& offsets) {
    // text is "ns::Name:f1, f2, f3" (PLEXUS_RECORD's stringified arguments).
    std::string_view type = text.substr(
        0, text.find(':', text.rfind("::") == std::string_view::npos ? 0 : text.rfind("::") + 2));
    std::string_view list = text.substr(type.size() + 1);
    if (auto colons = type.rfind("::"); colons != std::string_view::npos)
        type = type.substr(colons + 2);
    for (auto& f : fields) {
        size_t comma = list.find(',');
        std::string_view name = list.substr(0, comma);
        while (!name.empty() && name.front() == ' ')
            name.remove_prefix(1);
        while (!name.empty() && name.back() == ' ')
            name.remove_suffix(1);
        f.name = std::string(name);
        list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
    }
    auto decl = ir::TypeDecl::make_record(std::string(type), std::move(fields));
    if (decl->size != size || decl->offsets != offsets)
        throw Error(ErrorCode::Internal,
                    "record '" + decl->name +
                        "': the IR's layout differs from the C++ "
                        "struct although PLEXUS_RECORD checked it (a bug in plexus)");
    return ir::Type::aggregate(decl);
}

ir::Type variant_type(std::string_view name, std::vector<ir::Member> cases, uint64_t size) {
    auto decl = ir::TypeDecl::make_variant(std::string(name), std::move(cases));
    if (decl->size != size)
        throw Error(ErrorCode::Internal, "variant '" + decl->name +
                                             "': the IR's size differs from the C++ "
                                             "px::Variant's (a bug in plexus)");
    return ir::Type::aggregate(decl);
}

std::shared_ptr<const ir::Kernel> finish_kernel(ir::Kernel k) {
    ir::collect_types(k);
    ir::validate(k);
    return std::make_shared<const ir::Kernel>(std::move(k));
}

} // namespace detail

IfChain::IfChain(Value<bool> cond, ir::Stmt then_body) {
    auto& t = detail::Tracer::current();
    arms_.emplace_back(cond.expr(), std::move(then_body));
    depth_ = t.depth();
    index_ = t.size();
    t.emit(ir::If::make(arms_[0].first, arms_[0].second));
}

void IfChain::rebuild() {
    ir::Stmt s = else_;
    for (size_t i = arms_.size(); i-- > 0;)
        s = ir::If::make(arms_[i].first, arms_[i].second, s);
    detail::Tracer::current().replace(depth_, index_, s);
}

IfChain& IfChain::ElseIf(const Value<bool>& cond, const std::function<void()>& body) {
    if (else_) throw Error(ErrorCode::InvalidKernel, "ElseIf after Else");
    arms_.emplace_back(cond.expr(), detail::Tracer::current().trace_block(body));
    rebuild();
    return *this;
}

void IfChain::Else(const std::function<void()>& body) {
    if (else_) throw Error(ErrorCode::InvalidKernel, "a second Else");
    else_ = detail::Tracer::current().trace_block(body);
    rebuild();
}

IfChain If(const Value<bool>& cond, const std::function<void()>& body) {
    ir::Stmt b = detail::Tracer::current().trace_block(body);
    return IfChain(cond, std::move(b));
}

void While(const Value<bool>& cond, const std::function<void()>& body) {
    auto& t = detail::Tracer::current();
    ir::Stmt b = t.trace_block(body);
    t.emit(ir::While::make(cond.expr(), b));
}

void Break() {
    detail::Tracer::current().emit(ir::Break::make());
}
void Continue() {
    detail::Tracer::current().emit(ir::Continue::make());
}
void Return() {
    detail::Tracer::current().emit(ir::Return::make());
}
void barrier() {
    detail::Tracer::current().emit(ir::Barrier::make());
}
void fence_workgroup() {
    detail::Tracer::current().emit(ir::Fence::make(ir::FenceScope::WorkGroup));
}
void fence_device() {
    detail::Tracer::current().emit(ir::Fence::make(ir::FenceScope::Device));
}

namespace detail {
uint32_t unroll_hint(const Unroll& hint) {
    if (hint.full) return ir::For::unroll_full;
    if (hint.count < 1 || hint.count > int64_t(ir::For::max_unroll))
        Tracer::current().fail("px::unroll(" + std::to_string(hint.count) +
                               "): an unroll count is from 1 to " +
                               std::to_string(ir::For::max_unroll) +
                               " (px::no_unroll() keeps a loop rolled, px::unroll_full() unrolls "
                               "it completely)");
    return uint32_t(hint.count);
}
} // namespace detail

void require_work_group_size(uint32_t x, uint32_t y, uint32_t z) {
    auto& t = detail::Tracer::current();
    ir::WorkGroupBound& w = t.kernel().work_group;
    if (w.required[0]) t.fail("px::require_work_group_size is given twice");
    if (!x || !y || !z) t.fail("px::require_work_group_size with a size of 0");
    w.required = {x, y, z};
}

void routine(const std::string& name) {
    auto& t = detail::Tracer::current();
    if (!t.kernel().routine.empty()) t.fail("px::routine is given twice");
    t.kernel().routine = name;
}

// A count of the kernel's work_group, declared once and not 0.
static void declare_once(uint32_t ir::WorkGroupBound::* field, uint32_t value, const char* what) {
    auto& t = detail::Tracer::current();
    uint32_t& slot = t.kernel().work_group.*field;
    if (slot) t.fail(std::string(what) + " is given twice");
    if (!value) t.fail(std::string(what) + " of 0");
    slot = value;
}

void max_work_group_size(uint32_t items) {
    declare_once(&ir::WorkGroupBound::max, items, "px::max_work_group_size");
}

void min_groups_per_unit(uint32_t groups) {
    declare_once(&ir::WorkGroupBound::min_groups, groups, "px::min_groups_per_unit");
}

void native(std::map<std::string, std::string> code, const std::function<void()>& fallback) {
    auto& t = detail::Tracer::current();
    ir::Stmt f = fallback ? t.trace_block(fallback) : nullptr;
    t.emit(ir::Native::make(std::move(code), f));
}

} // namespace plexus
