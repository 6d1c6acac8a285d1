#pragma once
#include <cstdint>

#include "gpuprims/core/config.hpp"

namespace gpuprims {

template <class T> GPUPRIMS_HD constexpr T ceil_div(T a, T b) { return (a + b - 1) / b; }
template <class T> GPUPRIMS_HD constexpr T min_of(T a, T b) { return b < a ? b : a; }
template <class T> GPUPRIMS_HD constexpr T max_of(T a, T b) { return a < b ? b : a; }

}  // namespace gpuprims
