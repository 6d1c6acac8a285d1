#pragma once
// Division of non-negative int64 values by a fixed divisor with a multiply-high and a shift
// (Granlund & Montgomery), for index arithmetic in kernels: a 64-bit `/` is a called subroutine
// on the GPU, whose register saves show up as spills. Plain C++, usable on host and device.
#include <cstdint>

#include "gpuprims/core/config.hpp"

namespace gpuprims {

struct FastDivmod64 {
  uint64_t divisor = 1;
  uint64_t multiplier = 0;  // floor(2^64 * (2^shift - divisor) / divisor) + 1
  int shift = 0;            // ceil(log2(divisor))

  FastDivmod64() = default;
  // divisor >= 1. Host only (128-bit arithmetic of the compiler).
  explicit FastDivmod64(int64_t d) : divisor(uint64_t(d)) {
    while (shift < 64 && (uint64_t(1) << shift) < divisor) ++shift;
    const unsigned __int128 two_s = static_cast<unsigned __int128>(1) << shift;
    multiplier = uint64_t(((two_s - divisor) << 64) / divisor) + 1;
  }

  // n / divisor for 0 <= n < 2^63 (so mulhi(n, m) + n, below 2n, fits in 64 bits).
  GPUPRIMS_HD int64_t div(int64_t n) const {
    const uint64_t u = uint64_t(n);
#if defined(__CUDA_ARCH__)
    const uint64_t hi = __umul64hi(u, multiplier);
#else
    const uint64_t hi = uint64_t((static_cast<unsigned __int128>(u) * multiplier) >> 64);
#endif
    return shift == 64 ? 0 : int64_t((hi + u) >> shift);
  }
};

}  // namespace gpuprims
