// Loads the interpreter plugin straight from its build path with a small test host, and gives
// the tests short helpers: IR builders over the core's make() factories, buffers, launches.
#pragma once

#include <plexus/ir.hpp>
#include <plexus/plugin.h>

#include <dlfcn.h>
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#ifndef INTERP_PLUGIN_PATH
#error "INTERP_PLUGIN_PATH must name the built libplexus-interp.so"
#endif

namespace interp_test {

namespace ir = plexus::ir;
using ir::Scalar;
using ir::Space;

// dlopen + plx_plugin_init once for the whole test program; the plugin keeps global state.
class Plugin {
public:
    static Plugin& get() {
        static Plugin plugin;
        return plugin;
    }
    plx_plugin desc{};
    plx_device device = nullptr;
    plx_queue queue = nullptr;
    std::vector<std::string> log;

    std::string last_error() const { return desc.last_error(); }

private:
    Plugin() {
        handle_ = dlopen(INTERP_PLUGIN_PATH, RTLD_NOW | RTLD_LOCAL);
        if (!handle_) throw std::runtime_error(std::string("dlopen: ") + dlerror());
        auto init = reinterpret_cast<plx_plugin_init_fn>(dlsym(handle_, PLX_PLUGIN_INIT_SYMBOL));
        if (!init) throw std::runtime_error("dlsym: no " PLX_PLUGIN_INIT_SYMBOL);
        host_.struct_size = sizeof host_;
        host_.host_ctx = this;
        host_.log = [](void* ctx, plx_log_level, const char* msg) {
            static_cast<Plugin*>(ctx)->log.emplace_back(msg);
        };
        host_.options_json = "{}";
        desc.struct_size = sizeof desc;
        // A refused init fills no descriptor, so last_error may be NULL then.
        if (const plx_status s = init(PLX_ABI_VERSION, &host_, &desc); s != PLX_OK)
            throw std::runtime_error("plx_plugin_init: status " + std::to_string(s) + ": " +
                                     (desc.last_error ? desc.last_error() : "(no descriptor)"));
        if (desc.device_get(0, &device) != PLX_OK) throw std::runtime_error("device_get");
        if (desc.queue_create(device, PLX_QUEUE_PROFILING, &queue) != PLX_OK)
            throw std::runtime_error("queue_create");
    }
    ~Plugin() {
        desc.queue_destroy(queue);
        desc.shutdown();
        dlclose(handle_);
    }
    plx_host_api host_{};
    void* handle_ = nullptr;
};

inline plx_plugin& api() {
    return Plugin::get().desc;
}
inline std::string last_error() {
    return Plugin::get().last_error();
}
inline bool contains(const std::string& s, const std::string& part) {
    return s.find(part) != std::string::npos;
}

// ---- IR building -----------------------------------------------------------------------

inline ir::Expr i32(int32_t v) {
    return ir::Const::make_int(Scalar::I32, v);
}
inline ir::Expr u32(uint32_t v) {
    return ir::Const::make_int(Scalar::U32, v);
}
inline ir::Expr f32(float v) {
    return ir::Const::make_float(Scalar::F32, v);
}
inline ir::Expr var(const std::string& n, Scalar t) {
    return ir::Var::make(n, t);
}
inline ir::Expr bin(ir::BinaryOp op, ir::Expr a, ir::Expr b) {
    return ir::Binary::make(op, std::move(a), std::move(b));
}
inline ir::Expr call(const std::string& n, std::vector<ir::Expr> args = {}) {
    return ir::Call::make(n, std::move(args));
}
inline ir::Expr cast(Scalar t, ir::Expr a) {
    return ir::Cast::make(t, std::move(a));
}
inline ir::Expr load(const std::string& a, Scalar t, ir::Expr i, Space s = Space::Global) {
    return ir::Load::make(a, s, t, std::move(i));
}
inline ir::Stmt let(const std::string& n, ir::Expr e) {
    return ir::Let::make(n, std::move(e));
}
inline ir::Stmt assign(const std::string& n, ir::Expr e) {
    return ir::Assign::make(n, std::move(e));
}
inline ir::Stmt store(const std::string& a, ir::Expr i, ir::Expr v, Space s = Space::Global) {
    return ir::Store::make(a, s, std::move(i), std::move(v));
}
inline ir::Stmt block(std::vector<ir::Stmt> body) {
    return ir::Block::make(std::move(body));
}
inline ir::Stmt if_(ir::Expr c, std::vector<ir::Stmt> then, std::vector<ir::Stmt> otherwise = {}) {
    return ir::If::make(std::move(c), block(std::move(then)),
                        otherwise.empty() ? nullptr : block(std::move(otherwise)));
}
// `let gid = i32(global_id_x())`, the usual first line.
inline ir::Stmt let_gid(const std::string& n = "gid") {
    return let(n, cast(Scalar::I32, call("global_id_x")));
}

inline ir::Param buffer(const std::string& n, Scalar t, ir::Access a = ir::Access::Read) {
    return {n, ir::Param::Kind::Buffer, t, a};
}
inline ir::Param scalar(const std::string& n, Scalar t) {
    return {n, ir::Param::Kind::Scalar, t, ir::Access::Read};
}
inline ir::Kernel kernel(std::string name, std::vector<ir::Param> params,
                         std::vector<ir::Stmt> body, std::vector<ir::SharedArray> shared = {}) {
    ir::Kernel k;
    k.name = std::move(name);
    k.params = std::move(params);
    k.shared = std::move(shared);
    k.body = block(std::move(body));
    return k;
}

// ---- plugin objects ----------------------------------------------------------------------

class Module {
public:
    // Loads JSON text; status() says how it went, error() the message.
    explicit Module(const std::string& json) {
        status_ = api().module_load(Plugin::get().device, PLX_LANG_PLEXUS_IR_JSON, json.data(),
                                    json.size(), "", &module_);
        if (status_ != PLX_OK) error_ = last_error();
    }
    explicit Module(const ir::Kernel& k) : Module(ir::to_json(k)) { name_ = k.name; }
    Module(const Module&) = delete;
    Module& operator=(const Module&) = delete;
    ~Module() { api().module_unload(module_); }

    plx_status status() const { return status_; }
    const std::string& error() const { return error_; }
    plx_kernel kernel(const std::string& name = "") {
        plx_kernel k = nullptr;
        const plx_status s = api().kernel_get(module_, (name.empty() ? name_ : name).c_str(), &k);
        if (s != PLX_OK) throw std::runtime_error("kernel_get: " + last_error());
        return k;
    }
    plx_module handle() const { return module_; }

private:
    plx_module module_ = nullptr;
    plx_status status_ = PLX_ERROR_INTERNAL;
    std::string error_;
    std::string name_;
};

class Buffer {
public:
    template <class T>
    explicit Buffer(const std::vector<T>& data) : bytes_(data.size() * sizeof(T)) {
        alloc();
        write(data);
    }
    explicit Buffer(size_t bytes) : bytes_(bytes) { alloc(); }
    Buffer(const Buffer&) = delete;
    Buffer& operator=(const Buffer&) = delete;
    ~Buffer() { api().buffer_free(buffer_); }

    template <class T> void write(const std::vector<T>& data) {
        REQUIRE(api().buffer_write(Plugin::get().queue, buffer_, 0, data.data(),
                                   data.size() * sizeof(T)) == PLX_OK);
    }
    template <class T> std::vector<T> read() const {
        std::vector<T> out(bytes_ / sizeof(T));
        REQUIRE(api().buffer_read(Plugin::get().queue, buffer_, 0, out.data(),
                                  out.size() * sizeof(T)) == PLX_OK);
        return out;
    }
    plx_buffer handle() const { return buffer_; }
    size_t bytes() const { return bytes_; }

private:
    void alloc() {
        if (api().buffer_alloc(Plugin::get().device, bytes_, &buffer_) != PLX_OK)
            throw std::runtime_error("buffer_alloc: " + last_error());
    }
    size_t bytes_;
    plx_buffer buffer_ = nullptr;
};

// One launch argument: a buffer or a scalar value copied into the arg.
struct Arg {
    plx_arg arg{};
    uint64_t storage = 0;
    Arg(const Buffer& b) { // NOLINT: implicit by design, as in launch({a, b, n})
        arg.struct_size = sizeof arg;
        arg.kind = PLX_ARG_BUFFER;
        arg.buffer = b.handle();
    }
    // Numbers, and the kernel language's 2-byte px::half and px::bf16.
    template <class T>
        requires(std::is_arithmetic_v<T> || std::is_trivially_copyable_v<T>) && (sizeof(T) <= 8)
    Arg(T v) { // NOLINT
        arg.struct_size = sizeof arg;
        arg.kind = PLX_ARG_SCALAR;
        std::memcpy(&storage, &v, sizeof v);
        arg.size = sizeof v;
    }
    Arg(const Arg& o) : arg(o.arg), storage(o.storage) {}
};

struct Dims {
    uint32_t dims = 1;
    uint64_t global[3] = {1, 1, 1};
    uint32_t local[3] = {1, 1, 1};
};
inline Dims dims1(uint64_t global, uint32_t local) {
    return {1, {global, 1, 1}, {local, 1, 1}};
}

// Launches and returns the status; the last error is in last_error().
inline plx_status launch(plx_kernel k, const Dims& d, std::vector<Arg> args,
                         plx_event* event = nullptr) {
    plx_launch_dims ld{};
    ld.struct_size = sizeof ld;
    ld.dims = d.dims;
    for (int i = 0; i < 3; ++i) {
        ld.global_size[i] = d.global[i];
        ld.local_size[i] = d.local[i];
    }
    std::vector<plx_arg> raw;
    for (auto& a : args) {
        raw.push_back(a.arg);
        if (a.arg.kind == PLX_ARG_SCALAR) raw.back().value = &a.storage;
    }
    return api().launch(Plugin::get().queue, k, &ld, raw.data(), static_cast<uint32_t>(raw.size()),
                        event);
}

inline std::mt19937_64& rng() {
    static std::mt19937_64 r(20240611);
    return r;
}
template <class T> std::vector<T> random_vector(size_t n, T lo, T hi) {
    std::vector<T> v(n);
    if constexpr (std::is_floating_point_v<T>) {
        std::uniform_real_distribution<T> d(lo, hi);
        for (auto& x : v)
            x = d(rng());
    } else {
        // The distribution is not defined for char types: draw i8 / u8 as 32-bit integers.
        using D = std::conditional_t<(sizeof(T) < 2),
                                     std::conditional_t<std::is_signed_v<T>, int32_t, uint32_t>, T>;
        std::uniform_int_distribution<D> d(lo, hi);
        for (auto& x : v)
            x = static_cast<T>(d(rng()));
    }
    return v;
}

// Replaces every value of `good` (leaves and containers), one at a time, by each replacement
// and loads the result: each load must end in OK or PLX_ERROR_COMPILE with a message, never a
// crash. The modules are not launched (a mutated loop step may loop forever). Returns how many
// loads were refused.
inline int load_every_mutation(const nlohmann::json& good,
                               const std::vector<nlohmann::json>& replacements) {
    using pointer = nlohmann::json::json_pointer;
    const nlohmann::json flat = good.flatten(); // leaves only; their parents are added below
    std::vector<pointer> pointers;
    for (auto& [key, value] : flat.items())
        for (pointer p(key); !p.empty(); p = p.parent_pointer())
            pointers.push_back(p);
    std::sort(pointers.begin(), pointers.end());
    pointers.erase(std::unique(pointers.begin(), pointers.end()), pointers.end());
    int refused = 0;
    for (auto& p : pointers)
        for (auto& r : replacements) {
            nlohmann::json j = good;
            j[p] = r;
            Module m(j.dump());
            REQUIRE((m.status() == PLX_OK || m.status() == PLX_ERROR_COMPILE));
            if (m.status() == PLX_ERROR_COMPILE) {
                REQUIRE(contains(m.error(), "interp: module_load: "));
                ++refused;
            }
        }
    return refused;
}

// The simple kernel run after every failure to show the plugin still works.
ir::Kernel vector_add_kernel(const std::string& name = "vector_add");
void check_vector_add_works();

} // namespace interp_test
