#pragma once
// Warp-wide reduction with butterfly shuffles: every lane ends with the result, combined in the
// same order on every run (deterministic for floats).
#include <cstdint>
#include <type_traits>

namespace gpuprims {

constexpr int kWarpSize = 32;

// __shfl_*_sync for every accumulator type: 64-bit integers travel as (unsigned) long long.
template <class T>
__device__ __forceinline__ auto as_shfl_type(T v) {
  if constexpr (std::is_same<T, int64_t>::value) return static_cast<long long>(v);
  else if constexpr (std::is_same<T, uint64_t>::value) return static_cast<unsigned long long>(v);
  else return v;
}

template <class T>
__device__ __forceinline__ T shfl_xor(T v, int lane_mask) {
  return static_cast<T>(__shfl_xor_sync(0xffffffffu, as_shfl_type(v), lane_mask));
}
template <class T>
__device__ __forceinline__ T shfl_up(T v, unsigned delta) {
  return static_cast<T>(__shfl_up_sync(0xffffffffu, as_shfl_type(v), delta));
}
template <class T>
__device__ __forceinline__ T shfl_idx(T v, int src_lane) {
  return static_cast<T>(__shfl_sync(0xffffffffu, as_shfl_type(v), src_lane));
}

template <class T, class Op>
__device__ __forceinline__ T warp_reduce(T v, Op op) {
#pragma unroll
  for (int mask = kWarpSize / 2; mask > 0; mask >>= 1) v = op(v, shfl_xor(v, mask));
  return v;
}

}  // namespace gpuprims
