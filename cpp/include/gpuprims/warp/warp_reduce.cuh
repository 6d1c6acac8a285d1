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

// members: the lanes taking part (all of them, or one group of group_reduce).
template <class T>
__device__ __forceinline__ T shfl_xor(T v, int lane_mask, unsigned members = 0xffffffffu) {
  return static_cast<T>(__shfl_xor_sync(members, as_shfl_type(v), lane_mask));
}
template <class T>
__device__ __forceinline__ T shfl_up(T v, unsigned delta) {
  return static_cast<T>(__shfl_up_sync(0xffffffffu, as_shfl_type(v), delta));
}
template <class T>
__device__ __forceinline__ T shfl_idx(T v, int src_lane) {
  return static_cast<T>(__shfl_sync(0xffffffffu, as_shfl_type(v), src_lane));
}

// The butterfly over each aligned group of kWidth lanes (a power of two up to the warp): every
// lane gets its group's result. Only the group's own lanes take part in its shuffles, so the
// groups of one warp may run different numbers of reductions (row_on_chip's rows of 4, 8 or 16
// threads: a warp's last rows where the row count is not a multiple of its groups).
template <int kWidth, class T, class Op>
__device__ __forceinline__ T group_reduce(T v, Op op) {
  static_assert(kWidth > 0 && kWidth <= kWarpSize && (kWidth & (kWidth - 1)) == 0, "group_reduce: a power of two");
  unsigned members = 0xffffffffu;
  if constexpr (kWidth < kWarpSize) {
    unsigned lane;
    asm("mov.u32 %0, %%laneid;" : "=r"(lane));
    members = ((1u << kWidth) - 1) << (lane & ~unsigned(kWidth - 1));
  }
#pragma unroll
  for (int mask = kWidth / 2; mask > 0; mask >>= 1) v = op(v, shfl_xor(v, mask, members));
  return v;
}

template <class T, class Op>
__device__ __forceinline__ T warp_reduce(T v, Op op) {
  return group_reduce<kWarpSize>(v, op);
}

}  // namespace gpuprims
