#pragma once
// Warp-wide reduction with butterfly shuffles: every lane ends with the result, combined in the
// same order on every run (deterministic for floats).
#include <cstdint>
#include <type_traits>

namespace gpuprims {

constexpr int kWarpSize = 32;

template <class T>
__device__ __forceinline__ T shfl_xor(T v, int lane_mask) {
  if constexpr (std::is_same<T, int64_t>::value) {
    return static_cast<int64_t>(__shfl_xor_sync(0xffffffffu, static_cast<long long>(v), lane_mask));
  } else if constexpr (std::is_same<T, uint64_t>::value) {
    return static_cast<uint64_t>(
        __shfl_xor_sync(0xffffffffu, static_cast<unsigned long long>(v), lane_mask));
  } else {
    return __shfl_xor_sync(0xffffffffu, v, lane_mask);
  }
}

template <class T, class Op>
__device__ __forceinline__ T warp_reduce(T v, Op op) {
#pragma unroll
  for (int mask = kWarpSize / 2; mask > 0; mask >>= 1) v = op(v, shfl_xor(v, mask));
  return v;
}

}  // namespace gpuprims
