// Kernel families: the space of variants, lazy tracing, checks and buckets.
#include "plexus/family.hpp"

#include "cache/disk_cache.hpp"

#include <algorithm>
#include <bit>

namespace plexus {

int64_t Tuning::operator[](const std::string& name) const {
    auto it = values_.find(name);
    if (it == values_.end())
        throw Error(ErrorCode::InvalidKernel,
                    "variant {" + text() + "} has no tuning parameter '" + name + "'");
    return it->second;
}

std::string Tuning::text() const {
    std::string out;
    for (const auto& [name, value] : values_) {
        if (!out.empty()) out += ' ';
        out += name;
        out += '=';
        out += std::to_string(value);
    }
    return out;
}

std::string shape_text(const Shape& s) {
    std::string out;
    for (int64_t size : s) {
        if (!out.empty()) out += ',';
        out += std::to_string(size);
    }
    return out;
}

namespace detail {

void FamilyDef::add_param(std::string name, std::vector<int64_t> values) {
    auto where = [&] { return "family '" + name_ + "', tuning parameter '" + name + "': "; };
    bool identifier = !name.empty() && !std::isdigit(static_cast<unsigned char>(name[0]));
    for (char c : name)
        identifier = identifier && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
    if (!identifier)
        throw Error(ErrorCode::InvalidKernel, where() + "the name must be an identifier");
    if (values.empty()) throw Error(ErrorCode::InvalidKernel, where() + "no values");
    for (const auto& [seen, _] : space_)
        if (seen == name) throw Error(ErrorCode::InvalidKernel, where() + "declared twice");
    std::vector<int64_t> sorted = values;
    std::sort(sorted.begin(), sorted.end());
    if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
        throw Error(ErrorCode::InvalidKernel, where() + "a value is listed twice");
    space_.emplace_back(std::move(name), std::move(values));
}

std::vector<Tuning> FamilyDef::variants() const {
    std::vector<std::map<std::string, int64_t>> out(1);
    for (const auto& [name, values] : space_) {
        std::vector<std::map<std::string, int64_t>> next;
        for (const auto& partial : out)
            for (int64_t v : values) {
                next.push_back(partial);
                next.back()[name] = v;
            }
        out = std::move(next);
    }
    std::vector<Tuning> variants;
    for (auto& values : out)
        variants.emplace_back(std::move(values));
    return variants;
}

std::string FamilyDef::variant_name(const Tuning& v) const {
    std::string out = name_ + "_";
    for (const auto& [name, _] : space_) {
        const int64_t value = v[name];
        out += '_';
        out += name;
        if (value < 0) out += 'm';
        out += std::to_string(value < 0 ? -value : value);
    }
    return out;
}

std::string FamilyDef::reject(const Tuning& v, const FamilyContext& c) const {
    if (v.values().size() != space_.size())
        return "variant {" + v.text() + "} does not give every parameter of the family a value";
    for (const auto& [name, values] : space_) {
        auto it = v.values().find(name);
        if (it == v.values().end()) return "variant {" + v.text() + "} has no '" + name + "'";
        if (std::find(values.begin(), values.end(), it->second) == values.end())
            return "variant {" + v.text() + "}: " + name + "=" + std::to_string(it->second) +
                   " is not among the values the family declares";
    }
    return check_ ? check_(v, c) : std::string();
}

std::shared_ptr<const ir::Kernel> FamilyDef::kernel(const Tuning& v) const {
    {
        std::lock_guard lock(mutex_);
        if (auto it = traced_.find(v); it != traced_.end()) return it->second;
    }
    if (v.values().size() != space_.size())
        throw Error(ErrorCode::InvalidKernel, "family '" + name_ + "': variant {" + v.text() +
                                                  "} does not give every parameter a value");
    // Traced outside the lock (a trace may take a while); the first one stored wins.
    std::shared_ptr<const ir::Kernel> k = trace_(v, variant_name(v));
    std::lock_guard lock(mutex_);
    return traced_.emplace(v, std::move(k)).first->second;
}

Tuning FamilyDef::heuristic(const FamilyContext& c) const {
    if (heuristic_) return heuristic_(c);
    std::map<std::string, int64_t> first;
    for (const auto& [name, values] : space_)
        first[name] = values.front();
    return Tuning(std::move(first));
}

Shape FamilyDef::bucket(const Shape& s) const {
    if (bucket_) return bucket_(s);
    // Each size rounded up to a power of two, then each size's alignment (the largest power of
    // two up to 16 that divides it): variants often need sizes that are multiples of 8, and
    // 4096 and 4100 must not share a choice that only one of them can run.
    Shape out;
    for (int64_t size : s)
        out.push_back(size <= 1 ? size : int64_t(std::bit_ceil(uint64_t(size))));
    for (int64_t size : s)
        out.push_back(size == 0 ? 16 : std::min<int64_t>(16, size & -size));
    return out;
}

uint64_t FamilyDef::hash() const {
    std::string text = name_;
    for (const auto& [name, values] : space_) {
        text += '|';
        text += name;
        for (int64_t v : values) {
            text += ',';
            text += std::to_string(v);
        }
    }
    return fnv1a64(text.data(), text.size());
}

} // namespace detail
} // namespace plexus
