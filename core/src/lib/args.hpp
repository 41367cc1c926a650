// Checks of px::lib functions' arguments, shared by their files. Internal to libplexus.
#pragma once

#include "plexus/error.hpp"

#include <cstddef>
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

} // namespace plexus::lib::detail
