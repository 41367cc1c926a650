// The loader: IR JSON (docs/ir.md) to a Program, checked as the core's make() and validator
// check, aggregates scalarized into leaves; errors name the JSON path. Parts: load_*.cpp.
#pragma once

#include "interp_plugin.hpp"
#include "layout.hpp"

#include <nlohmann/json.hpp>

#include <initializer_list>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace plx_interp {

using json = nlohmann::json;

// Private arrays above this per work-item are refused: CUDA's local memory per thread, so a
// kernel that runs here fits there as well. Fragments count too: where no matrix unit runs
// them, each work-item holds every tile whole in private memory (the core's lower_matrix).
constexpr uint64_t kPrivateBytes = 512 * 1024;

// A value at load time: its type, and the node computing each of its leaves (in the order of
// TypeInfo::leaves). Field, Swizzle, Broadcast, Construct and MakeVariant only rearrange these
// lists, so they leave no node of their own.
struct Val {
    TypeId type;
    std::vector<uint32_t> leaves;
};

class Loader {
public:
    explicit Loader(Program& p) : p_(p) {}

    void kernel(const json& j);
    void work_group(const json& j);

private:
    // Statements and expressions nested deeper than this are refused: the loader and the
    // interpreter recurse once per level (about 1 KiB of stack each), and a host may call from
    // a thread with a small stack. Written kernels nest a few dozen levels at most.
    static constexpr int kMaxDepth = 256;

    struct Scope {
        std::string name;
        TypeId type;
        uint32_t slot; // the first of its leaves' slots
        bool read_only;
    };
    struct Depth {
        Loader& l;
        Depth(Loader& loader, const std::string& path) : l(loader) {
            if (++l.depth_ > kMaxDepth)
                l.fail(path, "nesting is deeper than " + std::to_string(kMaxDepth) + " levels");
        }
        ~Depth() { --l.depth_; }
    };
    // The part of a value a path names: its first leaf, byte offset and type.
    struct Part {
        uint32_t leaf = 0;
        uint64_t offset = 0;
        TypeId type;
    };

    Program& p_;
    Types types_;
    std::vector<Scope> scopes_;
    std::vector<uint32_t> loops_;
    std::vector<TypeId> array_types_; // per entry of p_.arrays: its element type
    std::vector<uint32_t> var_nodes_; // per slot: the Var node reading it
    std::map<std::pair<Ty, uint64_t>, uint32_t> consts_;
    uint32_t stmt_ = 0; // the statement whose expressions are being read
    int depth_ = 0;
    bool v2_ = false;   // schema plexus-ir/2 (or /2.1)
    bool v2_1_ = false; // schema plexus-ir/2.1: loops may carry an unroll hint, which is ignored

    // ---- JSON access (load_kernel.cpp) ----
    [[noreturn]] void fail(const std::string& path, const std::string& what) const;
    const json& field(const json& obj, const std::string& path, const char* key) const;
    std::string str(const json& obj, const std::string& path, const char* key) const;
    const json& list(const json& obj, const std::string& path, const char* key) const;
    uint32_t count(const json& v, const std::string& path) const; // 0 .. 2^32 - 1
    void keys(const json& obj, const std::string& path,
              std::initializer_list<const char*> allowed) const;
    static std::string at(const std::string& path, size_t i) {
        return path + "[" + std::to_string(i) + "]";
    }
    TypeId type(const json& obj, const std::string& path, const char* key = "type");
    const std::string& name_of(TypeId t) const { return types_[t].name; }
    const char* name_of(Ty t) const { return ty_name(t); }

    // ---- names ----
    const Scope* lookup(const std::string& name) const;
    const Array* array_named(const std::string& name) const;
    const Fragment* fragment_named(const std::string& name) const;
    // A new variable of `t`; bind() gives it existing slots (a match's payload).
    void declare(const std::string& name, TypeId t, bool read_only, const std::string& path);
    void bind(const std::string& name, TypeId t, uint32_t slot, bool read_only,
              const std::string& path);

    // ---- declarations and finishing (load_kernel.cpp) ----
    void type_decl(const json& j, const std::string& path);
    void params(const json& j);
    void arrays(const json& j, const char* key, Space space);
    void finish();

    // ---- expressions (load_expr.cpp) ----
    uint32_t push(ExprNode n);
    uint32_t constant_node(Ty t, uint64_t bits);
    uint32_t var_node(uint32_t slot, Ty t);
    Val expr(const json& j, const std::string& path);
    Val constant(const json& j, const std::string& path, TypeId t);
    Val arithmetic(const std::string& kind, const json& j, const std::string& path);
    Val access(const std::string& kind, const json& j, const std::string& path);
    Val aggregate(const std::string& kind, const json& j, const std::string& path, TypeId declared);
    Val load(const json& j, const std::string& path);
    Val atomic(const json& j, const std::string& path);
    Val call(const json& j, const std::string& path);
    Val make_variant(const json& j, const std::string& path, TypeId t);
    // A scalar operand: `what` names the rule it breaks ("an integer", "bool").
    uint32_t scalar(const json& j, const std::string& path, const char* key, bool (*ok)(Ty),
                    const char* what);
    uint32_t array(const json& j, const std::string& path, bool store) const;
    Part part(TypeId root, const json& j, const std::string& path, const std::string& target);

    // ---- statements (load_stmt.cpp) ----
    uint32_t stmt(const json& j, const std::string& jp, const std::string& sp);
    uint32_t body(const json& j, const std::string& jp, const std::string& sp) {
        const size_t mark = scopes_.size();
        const uint32_t s = stmt(j, jp, sp);
        scopes_.resize(mark);
        return s;
    }
    void assign(StmtNode& n, const json& j, const std::string& jp);
    void store(StmtNode& n, const json& j, const std::string& jp);
    void loop(StmtNode& n, uint32_t id, bool is_for, const json& j, const std::string& jp,
              const std::string& sp);
    void match(StmtNode& n, const json& j, const std::string& jp, const std::string& sp);

    // ---- matrix fragments (load_matrix.cpp) ----
    void fragments(const json& j);
    void matrix(StmtNode& n, const json& j, const std::string& jp);
    uint32_t fragment(const json& j, const std::string& path, const char* key) const;
    uint32_t leaves(const Val& v); // appends v's leaves to p_.values, returns the first

    // ---- asynchronous copies (load_async_copy.cpp) ----
    void async_copy(StmtNode& n, const json& j, const std::string& jp);
};

} // namespace plx_interp
