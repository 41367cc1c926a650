// A chunk of W work-items run in lock step through the For loops of a region: each statement
// that holds no loop is a loop over the W lanes (one vector iteration once LoopVectorize has
// run), under the mask of the lanes that reach it; a loop whose bounds may differ between
// lanes runs while any lane is active, narrowing each lane's mask; a loop or branch on values
// every lane shares stays scalar control. A region's variables live in lane frames ([W x T] stack
// arrays), read once at the start of each lane loop and written back whole at its end, so
// that after vectorization LLVM forwards them from one lane loop to the next as vector values.
// This is how a per-work-item loop is vectorized across work-items (ISPC's and whole-function
// vectorizers' technique), with LLVM's own LoopVectorize doing the widening.
#include "codegen/host/lower/host_lowering.hpp"

#include <algorithm>

namespace plexus::codegen::host {

using namespace ir;
using llvm::BasicBlock;
using llvm::Value;

namespace {

// Whether a statement holds a loop; `ok` is cleared by what lock step does not handle: a
// While loop (see lockstep_fits), a statement that leaves a lane's flow (return, break,
// continue), a match or native block.
bool holds_loop(const Stmt& s, bool& ok) {
    if (!s) return false;
    switch (s->kind) {
    case StmtKind::While: ok = false; return true;
    case StmtKind::For: holds_loop(static_cast<const For&>(*s).body, ok); return true;
    case StmtKind::Block: {
        bool any = false;
        for (auto& x : static_cast<const Block&>(*s).body)
            any = holds_loop(x, ok) || any;
        return any;
    }
    case StmtKind::If: {
        auto& n = static_cast<const If&>(*s);
        bool a = holds_loop(n.then_body, ok);
        return holds_loop(n.else_body, ok) || a;
    }
    case StmtKind::Return:
    case StmtKind::Break:
    case StmtKind::Continue:
    case StmtKind::Match:
    case StmtKind::Native:
    case StmtKind::Barrier: ok = false; return false;
    default: return false;
    }
}

bool holds_vector(const Expr& e) {
    bool found = e->type.is_vector();
    for_each_child(*e, [&](const Expr& c) { found = found || holds_vector(c); });
    return found;
}

// An assignment to a lane or field of a variable (`v.x = 1`) counts whatever its value's
// type: the lowering rebuilds the whole variable, which may be a vector.
bool holds_vector(const Stmt& s) {
    if (s->kind == StmtKind::Assign && !static_cast<const Assign&>(*s).path.empty()) return true;
    bool found = false;
    for_each_part(
        *s, [&](const Expr& e) { found = found || holds_vector(e); },
        [&](const Stmt& c) { found = found || holds_vector(c); });
    return found;
}

bool assigns(const Stmt& s, const std::string& name) {
    return any_nested(s, [&](const StmtNode& x) {
        return x.kind == StmtKind::Assign && static_cast<const Assign&>(x).name == name;
    });
}

} // namespace

// Whether a region run in lock step computes vector values: then its lane loops, whose
// vectors LoopVectorize cannot widen, need them split into lanes first (split_vectors_attribute).
bool HostLowering::lockstep_vectors(const std::vector<const Stmt*>& stmts) {
    for (const Stmt* s : stmts)
        if (holds_vector(*s)) return true;
    return false;
}

// A region runs in lock step when it holds loops, all of them For loops. A For's variable is
// an induction the lowering keeps visible (begin + trips x step), so consecutive lanes still
// read consecutive elements; a While loop's variables are the kernel's own, updated by
// assignments, which live in lane frames and turn every access through them into a gather:
// reduce's partial sums ran at 0.35 of the C++ loop in lock step, 1.0 - 1.2 per work-item.
bool HostLowering::lockstep_fits(const std::vector<const Stmt*>& stmts) const {
    // Private arrays are one stack array the work-items use in turn; W of them at once would
    // need W copies. An assigned parameter is set before the region by each work-item.
    if (!k_.privates.empty() || !params_init_.empty()) return false;
    bool ok = true, loop = false;
    for (const Stmt* s : stmts)
        loop = holds_loop(*s, ok) || loop;
    return ok && loop;
}

// Whether every lane of a chunk computes the same value: no x index or subgroup position, no
// load (another lane may have stored in between), and only variables that are the same for
// every lane.
bool HostLowering::uniform(const Expr& e) const {
    switch (e->kind) {
    case ExprKind::Load:
    case ExprKind::Atomic: return false;
    case ExprKind::Call: {
        const std::string& n = static_cast<const Call&>(*e).name;
        // x varies along a chunk, y and z do not; a subgroup of one work-item is the lane itself.
        if (n == "local_id_x" || n == "global_id_x" || n.rfind("subgroup", 0) == 0) return false;
        break;
    }
    case ExprKind::Var: {
        const size_t id = lookup(static_cast<const ir::Var&>(*e).name);
        switch (storage_[id]) {
        case Storage::Value:
        case Storage::Group: return true;
        case Storage::Recompute: return uniform(layout_.recompute.at(id));
        case Storage::PerItem: return false;
        case Storage::Private: return uniform_vars_.count(id) > 0;
        }
        return false;
    }
    default: break;
    }
    bool all = true;
    for_each_child(*e, [&](const Expr& c) { all = all && uniform(c); });
    return all;
}

// The size of e in nodes, counting what the lane-recomputed variables it reads cost; `ok`
// cleared by a load, an atomic, a call other than an index, or a variable held per lane.
size_t HostLowering::recompute_cost(const Expr& e, bool& ok) const {
    size_t n = 1;
    switch (e->kind) {
    case ExprKind::Load:
    case ExprKind::Atomic: ok = false; return n;
    case ExprKind::Call:
        if (!is_index_call(static_cast<const Call&>(*e).name)) ok = false;
        return n;
    case ExprKind::Var: {
        const size_t id = lookup(static_cast<const ir::Var&>(*e).name);
        if (auto it = lane_recomputed_.find(id); it != lane_recomputed_.end())
            return n + it->second.cost;
        if (storage_[id] == Storage::Private && !uniform_vars_.count(id)) ok = false;
        if (storage_[id] == Storage::PerItem) ok = false;
        return n;
    }
    default: break;
    }
    for_each_child(*e, [&](const Expr& c) { n += recompute_cost(c, ok); });
    return n;
}

// A Let of the region that nobody assigns again, whose expression is a small pure function of
// the indices and of values every lane can get again (`i = base + local_id(0)`), is evaluated
// again in each lane loop that reads it instead of going through a lane frame: a frame would
// hide from LLVM that consecutive lanes read consecutive elements.
void HostLowering::lane_recompute(const Stmt& s) {
    if (s->kind != StmtKind::Let) return;
    auto& n = static_cast<const Let&>(*s);
    if (!n.type.is_scalar()) return;
    for (const Stmt* x : *region_)
        if (assigns(*x, n.name)) return;
    bool ok = true;
    const size_t cost = recompute_cost(n.init, ok);
    if (cost > 48 || !ok) return;
    const Expr init = n.init;
    Recomputed r{[this, init] { return expr(init); }, cost};
    // Two pending Lets of one name (a shadowing one in the same run): neither, to be safe.
    if (!pending_recompute_.emplace(n.name, r).second) pending_recompute_[n.name] = Recomputed{};
}

// Whether the Let s reads a variable that a Let of `run` declares: one not lowered yet, which
// will hold one value per lane.
bool HostLowering::reads_run(const Stmt& s, const std::vector<const Stmt*>& run) {
    if (s->kind != StmtKind::Let) return false;
    std::vector<std::string> declared;
    for (const Stmt* x : run)
        if ((*x)->kind == StmtKind::Let) declared.push_back(static_cast<const Let&>(**x).name);
    bool found = false;
    auto walk = [&](const Expr& e, auto& self) -> void {
        if (e->kind == ExprKind::Var)
            found = found || std::count(declared.begin(), declared.end(),
                                        static_cast<const ir::Var&>(*e).name);
        for_each_child(*e, [&](const Expr& c) { self(c, self); });
    };
    walk(static_cast<const Let&>(*s).init, walk);
    return found;
}

bool HostLowering::uniform_let(const Stmt& s) const {
    if (s->kind != StmtKind::Let) return false;
    auto& n = static_cast<const Let&>(*s);
    if (!n.type.is_scalar() || !uniform(n.init)) return false;
    for (const Stmt* x : *region_)
        if (assigns(*x, n.name)) return false;
    return true;
}

llvm::AllocaInst* HostLowering::lane_array(llvm::Type* t, const char* name) {
    llvm::AllocaInst* a = entry_alloca(llvm::ArrayType::get(t, lanes_->w), name);
    lane_arrays_.insert(a);
    return a;
}

Value* HostLowering::lane_slot(Value* array, llvm::Type* t) {
    return b_.CreateInBoundsGEP(llvm::ArrayType::get(t, lanes_->w), array,
                                {b_.getInt32(0), item_->lane});
}

// A variable's lane frame: [W x T], but for a vector one [W x E] array per lane of the vector
// (structure of arrays), so that the chunk's lanes read and write one lane of the vector side by
// side and LoopVectorize makes one vector of it; [W x <3 x float>] would be a strided group,
// which keeps the whole lane loop scalar on x86.
llvm::Type* HostLowering::frame_type(const Type& t) const {
    if (!t.is_vector()) return llvm::ArrayType::get(reg_type(t), lanes_->w);
    return llvm::ArrayType::get(llvm::ArrayType::get(reg_type(t.element()), lanes_->w), t.lanes());
}

llvm::AllocaInst* HostLowering::lane_frame(const Type& t, const char* name) {
    llvm::AllocaInst* a = entry_alloca(frame_type(t), name);
    lane_arrays_.insert(a);
    return a;
}

// Where `lane` keeps variable `id` in its frame: the value, or for a vector its lane `part`.
Value* HostLowering::frame_slot(llvm::IRBuilder<>& at, size_t id, Value* lane, unsigned part) {
    const Type& t = variables_[id].type;
    std::vector<Value*> index = {at.getInt32(0), lane};
    if (t.is_vector()) index.insert(index.begin() + 1, at.getInt32(part));
    return at.CreateInBoundsGEP(frame_type(t), variables_[id].home, index);
}

Value* HostLowering::frame_load(llvm::IRBuilder<>& at, size_t id, Value* lane) {
    const Type& t = variables_[id].type;
    if (!t.is_vector()) return at.CreateLoad(reg_type(t), frame_slot(at, id, lane, 0));
    Value* v = llvm::PoisonValue::get(reg_type(t));
    for (unsigned i = 0; i < t.lanes(); ++i)
        v = at.CreateInsertElement(
            v, at.CreateLoad(reg_type(t.element()), frame_slot(at, id, lane, i)), i);
    return v;
}

void HostLowering::frame_store(llvm::IRBuilder<>& at, size_t id, Value* lane, Value* v) {
    const Type& t = variables_[id].type;
    if (!t.is_vector()) {
        at.CreateStore(v, frame_slot(at, id, lane, 0));
        return;
    }
    for (unsigned i = 0; i < t.lanes(); ++i)
        at.CreateStore(at.CreateExtractElement(v, i), frame_slot(at, id, lane, i));
}

// A lane frame's value inside the current lane loop: a scalar copy loaded at the loop's start
// and stored back at its end, for every lane (the masked-off ones store what they loaded), so
// the frame is read and written whole.
llvm::AllocaInst* HostLowering::lane_copy(size_t id) {
    auto [it, added] = lane_cache_->copies.emplace(id, nullptr);
    if (!added) return it->second;
    llvm::Type* t = reg_type(variables_[id].type);
    it->second = entry_alloca(t, "lane.copy");
    llvm::IRBuilder<> at(lane_cache_->entry->getTerminator());
    at.CreateStore(frame_load(at, id, item_->lane), it->second);
    return it->second;
}

Value* HostLowering::read_lane_frame(size_t id) {
    llvm::Type* t = reg_type(variables_[id].type);
    return b_.CreateLoad(t, lane_copy(id));
}

void HostLowering::write_lane_frame(size_t id, Value* v) {
    b_.CreateStore(v, lane_copy(id));
}

// The item of the chunk as a whole, for uniform expressions: x is the chunk's first.
HostLowering::Item HostLowering::chunk_item() const {
    return {{lanes_->first, lanes_->y, lanes_->z}, lanes_->row, nullptr};
}

// For each lane: f() as that lane's work-item, only where mask[lane] (null: every lane).
void HostLowering::lane_loop(Value* mask, const std::function<void()>& f) {
    llvm::Type* i64 = b_.getInt64Ty();
    BasicBlock* before = &f_->back();
    BasicBlock* x_latch = nullptr;
    LaneCache cache;
    LaneCache* saved_cache = lane_cache_;
    counted_loop(b_.getInt32(lanes_->w), "wi.lane", [&](Value* lane, BasicBlock* latch) {
        Value* x = b_.CreateAdd(lanes_->first, lane, "wi.xl", true, true);
        Value* linear = b_.CreateAdd(lanes_->row, b_.CreateZExt(x, i64), "wi", true, true);
        Item it{{x, lanes_->y, lanes_->z}, linear, latch, lane};
        const Item* saved = item_;
        item_ = &it;
        BasicBlock* on = new_block("lane.on");
        if (mask)
            b_.CreateCondBr(
                b_.CreateTrunc(b_.CreateLoad(b_.getInt8Ty(), lane_slot(mask, b_.getInt8Ty())),
                               b_.getInt1Ty()),
                on, latch);
        else
            b_.CreateBr(on);
        cache.entry = b_.GetInsertBlock();
        lane_cache_ = &cache;
        b_.SetInsertPoint(on);
        loops_.push_back({nullptr, nullptr});
        f();
        loops_.pop_back();
        // The copies go back at the top of the latch, which every lane reaches.
        if (!terminated()) b_.CreateBr(latch);
        llvm::IRBuilder<> back(latch, latch->getFirstInsertionPt());
        for (auto& [id, copy] : cache.copies)
            frame_store(back, id, lane, back.CreateLoad(reg_type(variables_[id].type), copy));
        lane_cache_ = saved_cache;
        item_ = saved;
        x_latch = latch;
    });
    mark_parallel(before, x_latch, XLoop::Chunk, lanes_->w);
}

// On the current lane: f() where `on` (i1) holds, else `otherwise`; f's value either way.
Value* HostLowering::lane_if(Value* on, const std::function<Value*()>& f, Value* otherwise) {
    BasicBlock* from = b_.GetInsertBlock();
    BasicBlock* within = new_block("lane.within");
    BasicBlock* done = new_block("lane.done");
    b_.CreateCondBr(on, within, done);
    b_.SetInsertPoint(within);
    Value* v = f();
    BasicBlock* end = b_.GetInsertBlock();
    b_.CreateBr(done);
    b_.SetInsertPoint(done);
    llvm::PHINode* phi = b_.CreatePHI(v->getType(), 2);
    phi->addIncoming(otherwise, from);
    phi->addIncoming(v, end);
    return phi;
}

Value* HostLowering::lane_bit(Value* mask) {
    return b_.CreateTrunc(b_.CreateLoad(b_.getInt8Ty(), lane_slot(mask, b_.getInt8Ty())),
                          b_.getInt1Ty());
}

// For each lane within `mask` (null: every lane): yes[lane] = cond(), and no[lane] (when not
// null) its negation; both 0 for the other lanes, where cond is not evaluated. One store of
// each per lane, so the arrays are written whole.
void HostLowering::split_mask(Value* mask, const std::function<Value*()>& cond, Value* yes,
                              Value* no) {
    llvm::Type* i8 = b_.getInt8Ty();
    lane_loop(nullptr, [&] {
        // Both bits from one evaluation: (cond, not cond) as two bits of an i8.
        auto both = [&] {
            Value* c = b_.CreateZExt(cond(), i8);
            return b_.CreateOr(c, b_.CreateShl(b_.CreateXor(c, b_.getInt8(1)), 1));
        };
        Value* bits = mask ? lane_if(lane_bit(mask), both, b_.getInt8(0)) : both();
        b_.CreateStore(b_.CreateAnd(bits, b_.getInt8(1)), lane_slot(yes, i8));
        if (no) b_.CreateStore(b_.CreateLShr(bits, 1), lane_slot(no, i8));
    });
}

// A loop in lock step: `cond` (evaluated for lanes still active) narrows the mask before each
// trip; the loop ends when no lane is active. `step` runs after the body for active lanes.
// `unroll`, the For's hint, goes on this loop, whose trips are the For's trips of the chunk's
// lanes; the lane loops inside it keep their own metadata (mark_parallel). A full unroll never
// gets here: its constant bounds are uniform, so the For is scalar control (for_stmt).
void HostLowering::lockstep_loop(Value* mask, const std::function<Value*()>& cond, const Stmt& body,
                                 const std::function<void()>& step,
                                 const std::function<void()>& chunk_step, uint32_t unroll) {
    llvm::Type* i8 = b_.getInt8Ty();
    llvm::AllocaInst* active = lane_array(i8, "lane.active");
    split_mask(mask, [&] { return b_.getTrue(); }, active, nullptr);
    llvm::AllocaInst* any = entry_alloca(i8, "lane.any");
    BasicBlock* head = new_block("lockstep.head");
    BasicBlock* inside = new_block("lockstep.body");
    BasicBlock* exit = new_block("lockstep.end");
    b_.CreateBr(head);
    b_.SetInsertPoint(head);
    b_.CreateStore(b_.getInt8(0), any);
    lane_loop(nullptr, [&] {
        Value* still = b_.CreateZExt(lane_if(lane_bit(active), cond, b_.getFalse()), i8);
        b_.CreateStore(still, lane_slot(active, i8));
        b_.CreateStore(b_.CreateOr(b_.CreateLoad(i8, any), still), any);
    });
    b_.CreateCondBr(b_.CreateICmpNE(b_.CreateLoad(i8, any), b_.getInt8(0)), inside, exit);
    b_.SetInsertPoint(inside);
    lockstep(body, active);
    if (step) lane_loop(active, step);
    if (chunk_step) chunk_step();
    mark_unroll(b_.CreateBr(head), unroll);
    b_.SetInsertPoint(exit);
}

// Scalar control on uniform values, its bodies in lock step under the same mask: what
// for_stmt and if_stmt evaluate outside the bodies is evaluated once for the
// chunk.
void HostLowering::uniform_control(const std::function<void(const Body&)>& lower, Value* mask) {
    const Item whole = chunk_item();
    const Item* saved = item_;
    item_ = &whole;
    lower([&](const Stmt& body) {
        const Item* inner = item_;
        item_ = saved;
        lockstep(body, mask);
        item_ = inner;
    });
    item_ = saved;
}

void HostLowering::lockstep(const Stmt& s, Value* mask) {
    if (!s) return;
    bool ok = true;
    if (!holds_loop(s, ok)) {
        lane_loop(mask, [&] {
            lane_recompute(s);
            stmt(s);
        });
        return;
    }
    switch (s->kind) {
    case StmtKind::Block: {
        size_t mark = scope_.size();
        std::vector<const Stmt*> run;
        auto flush = [&] {
            if (run.empty()) return;
            lane_loop(mask, [&] {
                for (const Stmt* x : run) {
                    lane_recompute(*x);
                    stmt(*x);
                }
            });
            run.clear();
        };
        for (auto& x : static_cast<const Block&>(*s).body) {
            if (holds_loop(x, ok)) {
                flush();
                lockstep(x, mask);
            } else if (!mask && !reads_run(x, run) && uniform_let(x)) {
                // Under no mask, a Let every lane computes alike and nobody assigns again is
                // one scalar for the chunk (`base` and `s` in vector_add): its branches and
                // loops stay scalar control.
                flush();
                const Item whole = chunk_item();
                const Item* saved = item_;
                item_ = &whole;
                uniform_decl_ = true;
                stmt(x);
                item_ = saved;
            } else {
                run.push_back(&x);
            }
        }
        flush();
        scope_.resize(mark);
        return;
    }
    case StmtKind::If: {
        auto& n = static_cast<const If&>(*s);
        if (uniform(n.cond)) { // scalar control, its arms in lock step
            uniform_control([&](const Body& arm) { if_stmt(n, arm); }, mask);
            return;
        }
        llvm::AllocaInst* yes = lane_array(b_.getInt8Ty(), "lane.then");
        llvm::AllocaInst* no = n.else_body ? lane_array(b_.getInt8Ty(), "lane.else") : nullptr;
        split_mask(mask, [&] { return expr(n.cond); }, yes, no);
        lockstep(n.then_body, yes);
        lockstep(n.else_body, no);
        return;
    }
    case StmtKind::For: {
        auto& n = static_cast<const For&>(*s);
        if (uniform(n.begin) && uniform(n.end) && uniform(n.step) && !assigns(n.body, n.var)) {
            // Every lane counts alike: one scalar counter (a uniform variable) for the chunk.
            uniform_decl_ = true;
            uniform_control([&](const Body& body) { for_stmt(n, body); }, mask);
            return;
        }
        llvm::Type* t = reg_type(n.type);
        bool begin_ok = true;
        const size_t begin_cost = recompute_cost(n.begin, begin_ok);
        if (uniform(n.step) && !assigns(n.body, n.var) && begin_ok && begin_cost <= 32) {
            // A counter every lane shares, the trips made; each lane's variable is begin + trips
            // x step, evaluated where it is read (the wrapping sum of `step` added `trips` times),
            // so `x[base + c]` with c = local_id + trips x 32 stays a contiguous load.
            llvm::AllocaInst* trips = entry_alloca(t, "for.trips");
            b_.CreateStore(llvm::ConstantInt::get(t, 0), trips);
            llvm::AllocaInst* end = lane_array(t, "for.end.lanes");
            size_t mark = scope_.size();
            size_t var = 0;
            const Expr begin = n.begin, step = n.step;
            lane_loop(mask, [&] {
                b_.CreateStore(expr(n.end), lane_slot(end, t));
                pending_recompute_[n.var] = Recomputed{
                    [this, begin, step, trips, t] {
                        return b_.CreateAdd(expr(begin),
                                            b_.CreateMul(b_.CreateLoad(t, trips), expr(step)));
                    },
                    begin_cost + 8};
                declare(n.var, n.type, expr(n.begin));
                var = scope_.back().second;
            });
            lockstep_loop(
                mask,
                [&] {
                    return compare(BinaryOp::Lt, read_variable(var),
                                   b_.CreateLoad(t, lane_slot(end, t)), n.type);
                },
                n.body, nullptr,
                [&] {
                    b_.CreateStore(
                        b_.CreateAdd(b_.CreateLoad(t, trips), llvm::ConstantInt::get(t, 1)), trips);
                },
                n.unroll);
            scope_.resize(mark);
            return;
        }
        // begin, end and step once per lane, before the loop, as for_stmt does.
        llvm::AllocaInst* end = lane_array(t, "for.end.lanes");
        llvm::AllocaInst* step = lane_array(t, "for.step.lanes");
        size_t mark = scope_.size();
        size_t var = 0;
        lane_loop(mask, [&] {
            Value* begin = expr(n.begin);
            b_.CreateStore(expr(n.end), lane_slot(end, t));
            b_.CreateStore(expr(n.step), lane_slot(step, t));
            declare(n.var, n.type, begin);
            var = scope_.back().second;
        });
        lockstep_loop(
            mask,
            [&] {
                return compare(BinaryOp::Lt, read_variable(var),
                               b_.CreateLoad(t, lane_slot(end, t)), n.type);
            },
            n.body,
            [&] {
                write_variable(
                    var, b_.CreateAdd(read_variable(var), b_.CreateLoad(t, lane_slot(step, t))));
            },
            nullptr, n.unroll);
        scope_.resize(mark);
        return;
    }
    // While loops keep a region out of lock step (lockstep_fits).
    default:
        internal(std::string("a ") + to_string(s->kind) + " statement holding a loop in lock step");
    }
}

} // namespace plexus::codegen::host
