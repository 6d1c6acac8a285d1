#pragma once
// Block-wide exclusive prefix sum: a warp scan per warp, the warp totals scanned by warp 0 in
// shared memory, each thread's prefix = its warp's offset + its exclusive warp prefix.
#include "gpuprims/warp/warp_scan.cuh"

namespace gpuprims {

template <class T, int kThreads>
struct BlockScan {
  static constexpr int kWarps = kThreads / kWarpSize;
  static_assert(kThreads % kWarpSize == 0 && kThreads <= 1024, "BlockScan: kThreads a multiple of 32, at most 1024");
  struct TempStorage { T warp_totals[kWarps]; };

  // Sum of v over the threads before this one (thread order). Call with all kThreads threads;
  // `temp` may be reused when it returns.
  __device__ __forceinline__ static T exclusive_sum(T v, TempStorage& temp) {
    const int lane = threadIdx.x % kWarpSize, warp = threadIdx.x / kWarpSize;
    const auto plus = [](T a, T b) { return a + b; };
    const T inclusive = warp_inclusive_scan(v, plus, lane);
    if (lane == kWarpSize - 1) temp.warp_totals[warp] = inclusive;
    __syncthreads();
    if (warp == 0) {
      const T total = lane < kWarps ? temp.warp_totals[lane] : T(0);
      const T scanned = warp_inclusive_scan(total, plus, lane);
      if (lane < kWarps) temp.warp_totals[lane] = scanned;  // warps 0..lane, inclusive
    }
    __syncthreads();
    const T result = inclusive - v + (warp > 0 ? temp.warp_totals[warp - 1] : T(0));
    __syncthreads();  // every thread has read warp_totals before the caller reuses it
    return result;
  }
};

}  // namespace gpuprims
