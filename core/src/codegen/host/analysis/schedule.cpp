// The order of a block's straight-line statements for a CPU (schedule.hpp, schedule_by_output):
// runs of Lets and Assigns reordered so that a few outputs at a time are computed from start to
// finish, which keeps the values live at once within the vector registers.
#include "codegen/host/analysis/schedule.hpp"
#include "codegen/host/analysis/layout.hpp"
#include "ir/rewrite.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <span>

namespace plexus::codegen::host {

using namespace ir;

namespace {

// Outputs computed together: half the vector registers, so that the accumulators of a block
// and the values they read fit. With 32 (AVX-512) that is matmul_tiled's 4 x 4 blocks; with 16
// (AVX2) 2 x 4 blocks: 4 x 4 blocks leave 16 accumulators for 16 registers and spill
// (docs/benchmarks.md, "What the figures taught": matmul_tiled).
struct Shape {
    size_t block_outputs;
    // Whether a block after the first computes again the shared Lets it reads (see emit in
    // schedule_run). With 32 registers a value is shared by two 4 x 4 blocks at most, and a
    // fresh load beats keeping it live; with 16 a value is shared by up to four blocks and,
    // when the load transposes (a strided read across work-items), doing it again four times
    // costs more than the spill reload that LLVM folds into the FMA.
    bool read_again;
};

// A set of statements of a run, as bits.
struct Bits {
    std::vector<uint64_t> w;
    explicit Bits(size_t n = 0) : w((n + 63) / 64, 0) {}
    void set(size_t i) { w[i / 64] |= uint64_t(1) << (i % 64); }
    bool has(size_t i) const { return (w[i / 64] >> (i % 64)) & 1; }
    bool empty() const {
        for (uint64_t x : w)
            if (x) return false;
        return true;
    }
    void add(const Bits& o) {
        for (size_t i = 0; i < w.size(); ++i)
            w[i] |= o.w[i];
    }
    size_t count_new(const Bits& o) const { // bits of o not in this
        size_t n = 0;
        for (size_t i = 0; i < w.size(); ++i)
            n += size_t(__builtin_popcountll(o.w[i] & ~w[i]));
        return n;
    }
};

bool has_atomic(const Expr& e) {
    bool found = e->kind == ExprKind::Atomic;
    for_each_child(*e, [&](const Expr& c) { found = found || has_atomic(c); });
    return found;
}

// A statement the run may move: a Let or Assign without side effects. Loads move too: a run
// holds no store, so nothing it reads changes while it runs.
bool movable(const Stmt& s) {
    if (auto* n = as<Let>(s)) return !has_atomic(n->init);
    if (auto* n = as<Assign>(s)) return !has_atomic(n->value);
    return false;
}

const std::string& defined(const Stmt& s) {
    if (auto* n = as<Let>(s)) return n->name;
    return static_cast<const Assign&>(*s).name;
}

// The names read anywhere in s, into `out` (a part of a variable assigned reads the rest).
void read_names(const Stmt& s, std::set<std::string>& out) {
    std::function<void(const Expr&)> expr = [&](const Expr& e) {
        if (auto* v = as<Var>(e)) out.insert(v->name);
        for_each_child(*e, expr);
    };
    std::function<void(const Stmt&)> stmt = [&](const Stmt& x) {
        if (auto* a = as<Assign>(x); a && !a->path.empty()) out.insert(a->name);
        for_each_part(*x, expr, stmt);
    };
    stmt(s);
}

// The run reordered; `after` is what follows it in its block (its Lets' readers).
std::vector<Stmt> schedule_run(std::span<const Stmt> run, std::span<const Stmt> after,
                               const Shape& shape) {
    const size_t n = run.size();
    // The names the run defines, how often, and whether first by a Let. Outputs are some of
    // those names: with few of them there is nothing to gain, and most runs end here.
    std::map<std::string, size_t> definitions;
    std::map<std::string, bool> let_first;
    for (const Stmt& x : run) {
        if (!definitions[defined(x)]++) let_first[defined(x)] = x->kind == StmtKind::Let;
    }
    if (definitions.size() <= shape.block_outputs) return {run.begin(), run.end()};
    std::vector<std::set<std::string>> reads(n);
    for (size_t i = 0; i < n; ++i)
        read_names(run[i], reads[i]);
    // Dependences: a read after the write it reads (the run's last definition before it), a
    // write after the previous write of the name and after every read of it in between.
    std::vector<std::vector<size_t>> deps(n);
    std::map<std::string, size_t> last_def;
    std::map<std::string, std::vector<size_t>> readers; // since the last definition
    for (size_t i = 0; i < n; ++i) {
        for (const std::string& v : reads[i]) {
            if (auto it = last_def.find(v); it != last_def.end()) deps[i].push_back(it->second);
            readers[v].push_back(i);
        }
        const std::string& d = defined(run[i]);
        if (auto it = last_def.find(d); it != last_def.end()) deps[i].push_back(it->second);
        for (size_t r : readers[d])
            if (r != i) deps[i].push_back(r);
        readers[d].clear();
        last_def[d] = i;
    }
    // stable[i]: a Let of a name nothing else in the run defines, reading only such names or
    // names the run does not define: evaluated again anywhere in the run, it gives its value.
    std::vector<bool> stable(n, false);
    for (size_t i = 0; i < n; ++i) {
        auto* l = as<Let>(run[i]);
        if (!l || definitions[l->name] != 1) continue;
        bool ok = true;
        for (const std::string& v : reads[i]) {
            auto it = definitions.find(v);
            ok = ok && (it == definitions.end() || (it->second == 1 && let_first[v]));
        }
        stable[i] = ok;
    }
    // The outputs: each name's last definition where something after the run may read it (a
    // variable declared before the run, or a Let of the run read after it).
    std::set<std::string> read_later;
    for (const Stmt& x : after)
        read_names(x, read_later);
    std::vector<size_t> outputs;
    for (auto& [name, i] : last_def)
        if (!let_first[name] || read_later.count(name)) outputs.push_back(i);
    std::sort(outputs.begin(), outputs.end());
    std::vector<bool> is_output(n, false);
    for (size_t i : outputs)
        is_output[i] = true;
    // Few outputs: nothing to gain. Very long runs: left as written, to bound the cost of the
    // greedy choice below (outputs^3 x run length / 64 word operations).
    if (outputs.size() <= shape.block_outputs || outputs.size() > 256 || n > 8192)
        return {run.begin(), run.end()};

    // What each output needs (its statement and their dependences, transitively), and of that
    // what it shares with another output: the inputs a block of outputs keeps live together.
    std::vector<Bits> needs(outputs.size(), Bits(n));
    for (size_t o = 0; o < outputs.size(); ++o) {
        std::vector<size_t> todo = {outputs[o]};
        while (!todo.empty()) {
            size_t i = todo.back();
            todo.pop_back();
            if (needs[o].has(i)) continue;
            needs[o].set(i);
            for (size_t d : deps[i])
                todo.push_back(d);
        }
    }
    std::vector<size_t> users(n, 0);
    for (const Bits& b : needs)
        for (size_t i = 0; i < n; ++i)
            users[i] += b.has(i);
    std::vector<Bits> shared(outputs.size(), Bits(n));
    for (size_t o = 0; o < outputs.size(); ++o)
        for (size_t i = 0; i < n; ++i)
            if (needs[o].has(i) && users[i] > 1) shared[o].set(i);

    // Blocks, greedily: start from the first output left, then add the one that brings the
    // fewest new shared inputs, on a tie the one after which the most outputs left need no
    // input outside the block (4 x 4 rather than 2 x 8 of an 8 x 8 tile), then the first.
    // An output that shares nothing (a prefetch into its own variable) stays out of the blocks
    // and comes after them; one that is its own statement and shared inputs (the index of
    // the store after matmul's step) joins a block without counting toward its size.
    std::vector<bool> taken(outputs.size(), false);
    std::vector<size_t> weight(outputs.size(), 0);
    for (size_t o = 0; o < outputs.size(); ++o) {
        taken[o] = shared[o].empty();
        weight[o] = shared[o].count_new(needs[o]) > 1; // more of its own than the output itself
    }
    std::vector<Stmt> out;
    Bits emitted(n);
    // A block after the first computes again the shared Lets it reads that an earlier block
    // computed (`x = init` where the Let was), when nothing in the run writes what they read:
    // the same value, and a fresh load rather than a value kept live across the blocks before
    // (where LLVM cannot merge the loads again: the accumulator stores in between may alias).
    // Not an output: a Let read after the run stays assigned once (another region may read
    // it, and the host code recomputes such a Let only when nothing assigns it).
    auto emit = [&](const Bits& want, bool again) {
        for (size_t i = 0; i < n; ++i) {
            if (!want.has(i)) continue;
            if (!emitted.has(i)) {
                emitted.set(i);
                out.push_back(run[i]);
            } else if (again && stable[i] && users[i] > 1 && !is_output[i]) {
                auto& l = static_cast<const Let&>(*run[i]);
                out.push_back(Assign::make(l.name, l.init));
            }
        }
    };
    for (size_t first = 0; first < outputs.size(); ++first) {
        if (taken[first]) continue;
        taken[first] = true;
        std::vector<size_t> block = {first};
        size_t size = weight[first];
        Bits inputs = shared[first];
        while (size < shape.block_outputs) {
            size_t best = outputs.size(), best_new = 0, best_covered = 0;
            for (size_t c = 0; c < outputs.size(); ++c) {
                if (taken[c]) continue;
                const size_t added = inputs.count_new(shared[c]);
                if (best != outputs.size() && added > best_new) continue;
                Bits grown = inputs;
                grown.add(shared[c]);
                size_t covered = 0;
                for (size_t o = 0; o < outputs.size(); ++o)
                    covered += !taken[o] && grown.count_new(shared[o]) == 0;
                if (best == outputs.size() || added < best_new || covered > best_covered)
                    best = c, best_new = added, best_covered = covered;
            }
            if (best == outputs.size()) break;
            taken[best] = true;
            block.push_back(best);
            size += weight[best];
            inputs.add(shared[best]);
        }
        Bits want(n);
        for (size_t o : block)
            want.add(needs[o]);
        emit(want, shape.read_again);
    }
    Bits rest(n);
    for (size_t i = 0; i < n; ++i)
        rest.set(i);
    emit(rest, false);
    return out;
}

// `leave`: statements left as they are, with what they hold (those of regions run per
// work-item: there SLP makes vectors of a work-item's values, 8 accumulators of matmul's 8 x 8
// micro-tile in one, and blocks of outputs would split those vectors).
Stmt schedule(const Stmt& s, const Shape& shape, const std::set<const StmtNode*>& leave) {
    if (!s) return s;
    if (s->kind != StmtKind::Block)
        return with_children(s, [&](const Stmt& x) { return schedule(x, shape, leave); });
    std::vector<Stmt> body;
    std::vector<bool> kept;
    for (auto& x : static_cast<const Block&>(*s).body) {
        kept.push_back(leave.count(x.get()) != 0);
        body.push_back(kept.back() ? x : schedule(x, shape, leave));
    }
    std::vector<Stmt> out;
    for (size_t i = 0; i < body.size();) {
        size_t j = i;
        while (j < body.size() && !kept[j] && movable(body[j]))
            ++j;
        if (j == i) {
            out.push_back(body[i++]);
            continue;
        }
        const std::span<const Stmt> all(body);
        for (Stmt& x : schedule_run(all.subspan(i, j - i), all.subspan(j), shape))
            out.push_back(std::move(x));
        i = j;
    }
    return Block::make(std::move(out));
}

} // namespace

ir::Kernel schedule_by_output(const ir::Kernel& kernel, unsigned vector_registers, unsigned lanes,
                              unsigned full_rate_lanes) {
    const Shape shape{std::max<size_t>(4, vector_registers / 2), vector_registers >= 32};
    ir::Kernel k = kernel;
    k.body = schedule(kernel.body, shape, per_item_statements(kernel, lanes, full_rate_lanes));
    return k;
}

} // namespace plexus::codegen::host
