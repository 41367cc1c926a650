// Kernel families: one kernel source whose trace takes tuning parameters (tile sizes, stages,
// copy strategies ...). plexus traces a variant only when it is considered, drops per device
// the variants the device cannot run (the family's own checks, then the router's), and picks
// one per (device, shape bucket): the fastest measured where tuning is on, the family's
// heuristic otherwise. See docs/kernel-language.md, "Kernel families", and docs/tuning.md.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "plexus/backend.hpp"
#include "plexus/kernel.hpp"
#include "plexus/launch.hpp"

namespace plexus {

// One variant: a value for every tuning parameter of its family, by name.
class Tuning {
public:
    Tuning() = default;
    Tuning(std::initializer_list<std::pair<const std::string, int64_t>> values) : values_(values) {}
    explicit Tuning(std::map<std::string, int64_t> values) : values_(std::move(values)) {}
    // The parameter's value; a name the family does not declare is an InvalidKernel error.
    int64_t operator[](const std::string& name) const;
    const std::map<std::string, int64_t>& values() const { return values_; }
    // "stages=3 path=1", in name order ("" without parameters).
    std::string text() const;
    auto operator<=>(const Tuning&) const = default;

private:
    std::map<std::string, int64_t> values_;
};

// The sizes a launch's choice depends on (m, n, k of a matmul), given with the launch.
using Shape = std::vector<int64_t>;
// "4096,4100,4096".
std::string shape_text(const Shape& s);

// What a family's checks, grid and heuristic see: the device a variant would run on, its
// backend and the launch's shape.
struct FamilyContext {
    const std::string& backend;
    const DeviceInfo& device;
    const Shape& shape;
};

namespace detail {

// A family without its parameter types: what the runtime's tuner works with.
class FamilyDef {
public:
    // Traces the variant into a kernel of that name (variant_name).
    using Trace =
        std::function<std::shared_ptr<const ir::Kernel>(const Tuning&, const std::string&)>;
    using Check = std::function<std::string(const Tuning&, const FamilyContext&)>;
    using GridOf = std::function<Grid(const Tuning&, const FamilyContext&)>;
    using Heuristic = std::function<Tuning(const FamilyContext&)>;
    using Bucket = std::function<Shape(const Shape&)>;

    FamilyDef(std::string name, Trace trace) : name_(std::move(name)), trace_(std::move(trace)) {}

    const std::string& name() const { return name_; }
    // Parameters in declaration order, each with the values it may take.
    const std::vector<std::pair<std::string, std::vector<int64_t>>>& space() const {
        return space_;
    }
    // Every variant of the space, the first parameter's values outermost.
    std::vector<Tuning> variants() const;
    // The variant traced (once; later calls return the same kernel). Its IR name is
    // `name__p1v1_p2v2` (an identifier: a negative value is written `m` + digits).
    std::shared_ptr<const ir::Kernel> kernel(const Tuning& v) const;
    std::string variant_name(const Tuning& v) const;
    // Why the variant cannot run on the context's device and shape ("" when it may); a value
    // outside the space is a reason too.
    std::string reject(const Tuning& v, const FamilyContext& c) const;
    Grid grid(const Tuning& v, const FamilyContext& c) const { return grid_(v, c); }
    // The family's choice without measuring: its heuristic, else the first variant.
    Tuning heuristic(const FamilyContext& c) const;
    // The bucket a shape falls in: the family's function, else each size rounded up to a
    // power of two followed by each size's alignment (its largest power-of-two divisor, at most
    // 16): {4096, 4100} -> {4096, 8192, 16, 4}.
    Shape bucket(const Shape& s) const;
    // FNV-1a of the name and the space: part of every stored tuning choice's key.
    uint64_t hash() const;

    void add_param(std::string name, std::vector<int64_t> values);
    void set_check(Check f) { check_ = std::move(f); }
    void set_grid(GridOf f) { grid_ = std::move(f); }
    void set_heuristic(Heuristic f) { heuristic_ = std::move(f); }
    void set_bucket(Bucket f) { bucket_ = std::move(f); }
    bool has_grid() const { return static_cast<bool>(grid_); }

private:
    std::string name_;
    Trace trace_;
    std::vector<std::pair<std::string, std::vector<int64_t>>> space_;
    Check check_;
    GridOf grid_;
    Heuristic heuristic_;
    Bucket bucket_;
    mutable std::mutex mutex_;
    mutable std::map<Tuning, std::shared_ptr<const ir::Kernel>> traced_;
};

template <class T> struct drop_tuning;
template <class V, class... P> struct drop_tuning<std::tuple<V, P...>> {
    using type = std::tuple<P...>;
};
} // namespace detail

// A family of kernels with parameters P...: built with px::family(...), then .tune(...) for
// each parameter, .grid(...) (required), and optionally .check(...), .heuristic(...) and
// .bucket(...). Launch it with Runtime::launch(family, shape, args...). Copies share the
// family (and its traced variants).
template <class... P> class Family {
public:
    explicit Family(std::shared_ptr<detail::FamilyDef> def) : def_(std::move(def)) {}

    const std::string& name() const { return def_->name(); }
    // A parameter and the values tuning may give it; the first is the default's.
    Family& tune(std::string param, std::vector<int64_t> values) {
        def_->add_param(std::move(param), std::move(values));
        return *this;
    }
    // Why a variant cannot run on a device or shape ("" when it may): shared memory it would
    // declare, the subgroup width it assumes, divisibility of the shape. Checked before the
    // variant is traced; the router's own checks follow on the traced kernel.
    Family& check(detail::FamilyDef::Check f) {
        def_->set_check(std::move(f));
        return *this;
    }
    // The grid of a launch of the variant on the context's device and shape.
    Family& grid(detail::FamilyDef::GridOf f) {
        def_->set_grid(std::move(f));
        return *this;
    }
    // The variant to use where nothing was measured (tuning off, or before it).
    Family& heuristic(detail::FamilyDef::Heuristic f) {
        def_->set_heuristic(std::move(f));
        return *this;
    }
    Family& bucket(detail::FamilyDef::Bucket f) {
        def_->set_bucket(std::move(f));
        return *this;
    }
    // The variant as a kernel of its own: launched, prepared or printed like any kernel.
    Kernel<P...> variant(const Tuning& v) const { return Kernel<P...>(def_->kernel(v)); }
    const detail::FamilyDef& def() const { return *def_; }
    const std::shared_ptr<detail::FamilyDef>& def_ptr() const { return def_; }

private:
    std::shared_ptr<detail::FamilyDef> def_;
};

namespace detail {
template <class F, class... P>
Family<P...> make_family(std::string name, std::vector<std::string> names, F f, std::tuple<P...>*) {
    // The body sees the variant first.
    auto trace_one = [names, f](const Tuning& v, const std::string& kernel_name) {
        auto body = [&v, &f](P... args) { f(v, std::move(args)...); };
        return trace(kernel_name, names, body, static_cast<std::tuple<P...>*>(nullptr)).ir_ptr();
    };
    return Family<P...>(std::make_shared<FamilyDef>(std::move(name), std::move(trace_one)));
}
} // namespace detail

// A family named `name` whose body `f(const px::Tuning&, params...)` traces one variant;
// `param_names` name the kernel parameters as px::kernel's do.
template <class F> auto family(std::string name, std::vector<std::string> param_names, F f) {
    using All = typename detail::lambda_params<F>::type;
    using Params = typename detail::drop_tuning<All>::type;
    return detail::make_family(std::move(name), std::move(param_names), std::move(f),
                               static_cast<Params*>(nullptr));
}

} // namespace plexus
