// Times consecutive phases of a compile for codegen::Phases.
#pragma once

#include <chrono>

namespace plexus::codegen {

class Stopwatch {
public:
    // Adds the seconds since the previous lap (or since construction) to *into, when given,
    // and starts the next lap.
    void lap(double* into) {
        auto now = std::chrono::steady_clock::now();
        if (into) *into += std::chrono::duration<double>(now - start_).count();
        start_ = now;
    }

private:
    std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

} // namespace plexus::codegen
