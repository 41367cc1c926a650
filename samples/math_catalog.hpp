// The math_catalog sample (math_catalog.cpp): every math function of the kernel language on a
// range of inputs, checked on the host against long double within each function's bound.
#pragma once

#include "problems.hpp"

#include <random>

namespace plexus::samples {

// out[j * n + i] = function j of the math table (math_functions.hpp) in T at x, y, z[j * n + i];
// iout[m * n + i] = int function m at x[(J + m) * n + i], J the number of functions in T.
template <class T> using MathCatalogKernel = Kernel<In<T>, In<T>, In<T>, Out<T>, Out<int32_t>, Int>;
template <class T>
const MathCatalogKernel<T>& math_catalog(); // float: math_catalog_f32, double: _f64

std::unique_ptr<Problem> make_math_catalog(size_t size, Runtime& rt, std::mt19937& g);

} // namespace plexus::samples
