#pragma once
// Warp-wide inclusive scan (Kogge-Stone over shuffles): log2(32) steps, every lane ends with the
// combination of lanes 0..lane, combined in the same order on every run.
#include "gpuprims/warp/warp_reduce.cuh"

namespace gpuprims {

template <class T, class Op>
__device__ __forceinline__ T warp_inclusive_scan(T v, Op op, int lane) {
#pragma unroll
  for (int delta = 1; delta < kWarpSize; delta <<= 1) {
    const T lower = shfl_up(v, delta);
    if (lane >= delta) v = op(lower, v);
  }
  return v;
}

}  // namespace gpuprims
