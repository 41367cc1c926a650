// Launch arguments as the plugin ABI takes them, for the plugin tests that drive a plugin
// through its descriptor: a buffer, or a scalar whose bytes stay where `value` is.
#pragma once

#include "plexus/plugin.h"

namespace plexus::test {

inline plx_arg buffer_arg(plx_buffer b) {
    plx_arg a{};
    a.struct_size = sizeof a;
    a.kind = PLX_ARG_BUFFER;
    a.buffer = b;
    return a;
}

template <class T> plx_arg scalar_arg(const T& value) {
    plx_arg a{};
    a.struct_size = sizeof a;
    a.kind = PLX_ARG_SCALAR;
    a.value = &value;
    a.size = sizeof value;
    return a;
}

} // namespace plexus::test
