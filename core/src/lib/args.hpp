// Checks of px::lib functions' arguments, shared by their files. Internal to libplexus.
#pragma once

#include "plexus/error.hpp"

#include <climits>
#include <cstddef>
#include <cstdint>
#include <string>

namespace plexus::lib::detail {

// Throws InvalidArgument when a buffer holds fewer than `need` elements.
inline void need(const char* function, const char* argument, size_t have, size_t need) {
    if (have < need)
        throw Error(ErrorCode::InvalidArgument, std::string("px::lib::") + function + ": " +
                                                    argument + " has " + std::to_string(have) +
                                                    " elements, the shape needs " +
                                                    std::to_string(need));
}

// n as an int (kernels take Int sizes); InvalidArgument outside 0 .. 2^31 - 1.
inline int count_arg(const char* function, int64_t n) {
    if (n < 0 || n > INT_MAX)
        throw Error(ErrorCode::InvalidArgument, std::string("px::lib::") + function +
                                                    ": n must be 0 to 2^31 - 1, got " +
                                                    std::to_string(n));
    return int(n);
}

} // namespace plexus::lib::detail
