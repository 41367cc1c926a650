// The sample problems of the IR's types (typed_problems.cpp), reached through make_problem.
#pragma once

#include "problems.hpp"

#include <memory>
#include <random>
#include <string>
#include <vector>

namespace plexus::samples {

// nullptr for a name that is not one of typed_problem_names().
std::unique_ptr<Problem> make_typed_problem(const std::string& name, size_t size, Runtime& rt,
                                            std::mt19937& g);
const std::vector<std::string>& typed_problem_names();

} // namespace plexus::samples
