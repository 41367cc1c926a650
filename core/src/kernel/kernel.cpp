// The tracer behind the kernel language: a stack of open blocks per thread, and the
// statements that control flow, synchronization and native code record.
#include "plexus/kernel.hpp"

namespace plexus {
namespace detail {

static thread_local Tracer* active = nullptr;

Tracer::Tracer(ir::Kernel& k) : kernel_(k), previous_(active) { active = this; }
Tracer::~Tracer() { active = previous_; }

Tracer& Tracer::current() {
    if (!active)
        throw Error(ErrorCode::InvalidKernel,
                    "a kernel-language operation ran outside plexus::kernel(): kernel values "
                    "exist only while a kernel is being traced");
    return *active;
}

std::string Tracer::fresh(const char* prefix) { return prefix + std::to_string(next_++); }

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

std::shared_ptr<const ir::Kernel> finish_kernel(ir::Kernel k) {
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
    for (size_t i = arms_.size(); i-- > 0;) s = ir::If::make(arms_[i].first, arms_[i].second, s);
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

void Break() { detail::Tracer::current().emit(ir::Break::make()); }
void Continue() { detail::Tracer::current().emit(ir::Continue::make()); }
void Return() { detail::Tracer::current().emit(ir::Return::make()); }
void barrier() { detail::Tracer::current().emit(ir::Barrier::make()); }
void fence_workgroup() { detail::Tracer::current().emit(ir::Fence::make(ir::FenceScope::WorkGroup)); }
void fence_device() { detail::Tracer::current().emit(ir::Fence::make(ir::FenceScope::Device)); }

void native(std::map<std::string, std::string> code, const std::function<void()>& fallback) {
    auto& t = detail::Tracer::current();
    ir::Stmt f = fallback ? t.trace_block(fallback) : nullptr;
    t.emit(ir::Native::make(std::move(code), f));
}

} // namespace plexus
