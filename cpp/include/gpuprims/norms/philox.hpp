#pragma once
// Philox4x32-10 (Salmon, Moraes, Dror, Shaw, "Parallel random numbers: as easy as 1, 2, 3", SC'11):
// a counter-based generator. Four 32-bit outputs are a bijective function of a 128-bit counter
// under a 64-bit key, so any element's random bits are computed directly from its index, on the
// host and the device alike (the CPU reference draws the same bits as the kernels).
#include <cstdint>

#include "gpuprims/core/config.hpp"

namespace gpuprims {
namespace norms {

struct Philox4x32 {
  uint32_t v[4];
};

GPUPRIMS_HD void mul_hi_lo(uint32_t a, uint32_t b, uint32_t* hi, uint32_t* lo) {
#if defined(__CUDA_ARCH__)
  *hi = __umulhi(a, b);
  *lo = a * b;
#else
  const uint64_t p = uint64_t(a) * b;
  *hi = uint32_t(p >> 32);
  *lo = uint32_t(p);
#endif
}

// The ten rounds: each multiplies two words by the Philox constants and mixes the halves with the
// other words and the key; the key is bumped by the Weyl constants between rounds.
GPUPRIMS_HD Philox4x32 philox4x32_10(Philox4x32 counter, uint32_t key0, uint32_t key1) {
  constexpr uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u;
  constexpr uint32_t kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;
  uint32_t c0 = counter.v[0], c1 = counter.v[1], c2 = counter.v[2], c3 = counter.v[3];
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (int round = 0; round < 10; ++round) {
    uint32_t hi0, lo0, hi1, lo1;
    mul_hi_lo(kM0, c0, &hi0, &lo0);
    mul_hi_lo(kM1, c2, &hi1, &lo1);
    c0 = hi1 ^ c1 ^ key0;
    c1 = lo1;
    c2 = hi0 ^ c3 ^ key1;
    c3 = lo0;
    key0 += kW0;
    key1 += kW1;
  }
  return {{c0, c1, c2, c3}};
}

// The dropout stream of bias_dropout_add: element i (its index in C order over the whole array,
// whatever the strides) takes output lane i % 4 of Philox4x32-10 at
//   counter = (lo32(i / 4), hi32(i / 4), lo32(offset), hi32(offset)),  key = (lo32(seed), hi32(seed)).
// The element is kept iff that 32-bit value r >= threshold, threshold = floor(p * 2^32) (p < 1),
// so P(keep) = 1 - threshold / 2^32, within 2^-32 of 1 - p.
GPUPRIMS_HD Philox4x32 dropout_bits(uint64_t group, uint64_t seed, uint64_t offset) {
  return philox4x32_10({{uint32_t(group), uint32_t(group >> 32), uint32_t(offset), uint32_t(offset >> 32)}},
                       uint32_t(seed), uint32_t(seed >> 32));
}

// One output element of bias_dropout_add from its keep factor f (1 / (1 - p) or 0): as torch's
// unfused sequence, a dropped NaN or inf stays NaN ((x + b) * 0), in the statistics type, rounded once.
template <class Acc>
GPUPRIMS_HD Acc dropout_add(Acc x, Acc b, Acc r, Acc f) {
  return r + (x + b) * f;
}

}  // namespace norms
}  // namespace gpuprims
