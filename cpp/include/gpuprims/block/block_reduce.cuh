#pragma once
// Block-wide reduction: warp shuffles, one shared-memory slot per warp, then warp 0 folds the warp
// partials with a butterfly over the first kWarps lanes. Valid in thread 0; deterministic order.
#include "gpuprims/warp/warp_reduce.cuh"

namespace gpuprims {

template <class T, int kThreads>
struct BlockReduce {
  static constexpr int kWarps = kThreads / kWarpSize;
  static_assert(kThreads % kWarpSize == 0 && kThreads <= 1024 && (kWarps & (kWarps - 1)) == 0,
                "BlockReduce: kThreads must be 32 times a power of two, at most 1024");
  struct TempStorage { T warp_partials[kWarps]; };

  // Call with all kThreads threads. Reusing `temp` afterwards needs a __syncthreads() first.
  template <class Op>
  __device__ __forceinline__ static T reduce(T v, Op op, TempStorage& temp) {
    const int lane = threadIdx.x % kWarpSize, warp = threadIdx.x / kWarpSize;
    v = warp_reduce(v, op);
    if (lane == 0) temp.warp_partials[warp] = v;
    __syncthreads();
    if (warp == 0) {
      // Lanes >= kWarps load a copy of partial 0; the xor masks below kWarps never pair them with
      // lane 0, so lane 0 combines exactly the kWarps partials.
      v = temp.warp_partials[lane < kWarps ? lane : 0];
#pragma unroll
      for (int mask = kWarps / 2; mask > 0; mask >>= 1) v = op(v, shfl_xor(v, mask));
    }
    return v;
  }

  // Like reduce(), but every thread gets the result, and `temp` may be reused right away. Each
  // warp folds the partials itself, in the same order, so all threads hold identical bits.
  template <class Op>
  __device__ __forceinline__ static T allreduce(T v, Op op, TempStorage& temp) {
    v = allreduce_unsynced(v, op, temp);
    __syncthreads();                     // every warp has read temp before anyone rewrites it
    return v;
  }

  // allreduce() without its trailing barrier: `temp` may be rewritten only after the block has
  // passed another barrier. A caller that alternates between two TempStorage gets that barrier
  // from the next reduction (every thread reads this one's slots before arriving there), so each
  // reduction costs one barrier instead of two.
  template <class Op>
  __device__ __forceinline__ static T allreduce_unsynced(T v, Op op, TempStorage& temp) {
    const int lane = threadIdx.x % kWarpSize, warp = threadIdx.x / kWarpSize;
    v = warp_reduce(v, op);
    if (lane == 0) temp.warp_partials[warp] = v;
    __syncthreads();
    v = temp.warp_partials[lane < kWarps ? lane : 0];
#pragma unroll
    for (int mask = kWarps / 2; mask > 0; mask >>= 1) v = op(v, shfl_xor(v, mask));
    return shfl_idx(v, 0);               // lane 0 combined exactly the kWarps partials (see above)
  }
};

}  // namespace gpuprims
