// What the stress and queue suites share: an integer axpy kernel with its host reference (exact
// in wrapping 32-bit arithmetic, as the IR defines it), and the configuration of a test that runs
// every plugin of this build tree with no disk cache and no fallback.
#pragma once

#include "build_tree_config.hpp"
#include "plexus/plexus.hpp"

namespace plexus::test {

// c = a * s + b.
inline const auto& int_axpy() {
    static const auto k =
        plexus::kernel("int_axpy", {"a", "b", "c", "s", "n"},
                       [](In<int32_t> a, In<int32_t> b, Out<int32_t> c, Int s, Int n) {
                           Int i = global_id(0);
                           If(i < n, [&] { c[i] = a[i] * s + b[i]; });
                       });
    return k;
}

inline int32_t host_int_axpy(int32_t a, int32_t s, int32_t b) {
    return int32_t(uint32_t(a) * uint32_t(s) + uint32_t(b));
}

inline Config strict_build_tree_config() {
    Config c = build_tree_config();
    c.cache_dir = "";
    c.fallback = false;
    return c;
}

} // namespace plexus::test
