#pragma once
// gemv kernels: y = A x. Memory bound (one read of A), so the ladder is about how A is read:
//   naive          a thread per row: a warp reads 32 rows at once, coalesced only when A is
//                  column-major (rows adjacent in memory).
//   warp_per_row   a warp per row, lanes striding along K: 128 consecutive bytes per load on a
//                  row-major A, then a butterfly shuffle reduction.
//   vectorized     warp_per_row with 16-byte loads (A streamed past L1, x through the read-only
//                  path, where every warp of the SM re-reads it) and four independent loads in
//                  flight per lane; the K % (16 / sizeof(T)) tail is read by scalar loads.
// Every lane sums its elements in a fixed order and the reduction tree is fixed: deterministic.
#include <cstdint>

#include "gpuprims/core/numeric.hpp"
#include "gpuprims/gemm/gemm_params.hpp"
#include "gpuprims/util/vec.cuh"
#include "gpuprims/warp/warp_reduce.cuh"

namespace gpuprims {
namespace gemm {

constexpr int kGemvThreads = 256;
constexpr int kGemvWarps = kGemvThreads / kWarpSize;
constexpr int kGemvLoadsInFlight = 4;

template <class T>
__global__ void __launch_bounds__(kGemvThreads) gemv_thread_per_row_kernel(GemvParams p) {
  using Acc = acc_t<T>;
  const T* a = static_cast<const T*>(p.a);
  const T* x = static_cast<const T*>(p.x);
  T* y = static_cast<T*>(p.y);
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t row = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; row < p.m; row += stride) {
    const T* a_row = a + row * p.a_row;
    Acc sum = 0;
    for (int64_t k = 0; k < p.k; ++k) sum += cast_value<Acc>(a_row[k * p.a_col]) * cast_value<Acc>(x[k * p.x_stride]);
    y[row * p.y_stride] = cast_value<T>(sum);
  }
}

template <class Acc>
__device__ __forceinline__ Acc warp_sum(Acc v) {
  return warp_reduce(v, [](Acc l, Acc r) { return l + r; });
}

// sum + the dot product of two 16-byte vectors, lane by lane in the accumulator type.
template <class T, class Acc>
__device__ __forceinline__ Acc dot_add(const Vec16<T>& a, const Vec16<T>& x, Acc sum) {
#pragma unroll
  for (int e = 0; e < Vec16<T>::kLanes; ++e) sum += cast_value<Acc>(a.lane[e]) * cast_value<Acc>(x.lane[e]);
  return sum;
}

// The rows of warp `warp` of `warps` in the grid: row = warp, warp + warps, ...
template <class T, bool kVector>
__global__ void __launch_bounds__(kGemvThreads, 1) gemv_warp_per_row_kernel(GemvParams p) {
  using Acc = acc_t<T>;
  constexpr int kLanes = Vec16<T>::kLanes;
  const T* a = static_cast<const T*>(p.a);
  const T* x = static_cast<const T*>(p.x);
  T* y = static_cast<T*>(p.y);
  const int lane = threadIdx.x % kWarpSize;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * kGemvWarps;
  for (int64_t row = static_cast<int64_t>(blockIdx.x) * kGemvWarps + threadIdx.x / kWarpSize; row < p.m;
       row += warps) {
    const T* a_row = a + row * p.a_row;
    Acc sum = 0;
    int64_t tail_start = 0;
    if constexpr (kVector) {
      // Dispatch proved a_row and x 16-byte aligned with unit stride along K.
      const int64_t vecs = p.k / kLanes;
      constexpr int64_t kStep = int64_t(kWarpSize) * kGemvLoadsInFlight;
      int64_t v = lane;
      for (; v + kWarpSize * (kGemvLoadsInFlight - 1) < vecs; v += kStep) {
        Vec16<T> av[kGemvLoadsInFlight], xv[kGemvLoadsInFlight];
#pragma unroll
        for (int u = 0; u < kGemvLoadsInFlight; ++u) {
          av[u] = load_vec16<T, LoadPolicy::kStreaming>(a_row + (v + u * kWarpSize) * kLanes);
          xv[u] = load_vec16<T>(x + (v + u * kWarpSize) * kLanes);
        }
#pragma unroll
        for (int u = 0; u < kGemvLoadsInFlight; ++u) sum = dot_add(av[u], xv[u], sum);
      }
      for (; v < vecs; v += kWarpSize) {
        sum = dot_add(load_vec16<T, LoadPolicy::kStreaming>(a_row + v * kLanes), load_vec16<T>(x + v * kLanes), sum);
      }
      tail_start = vecs * kLanes;
    }
    for (int64_t k = tail_start + lane; k < p.k; k += kWarpSize) {
      sum += cast_value<Acc>(a_row[k * p.a_col]) * cast_value<Acc>(x[k * p.x_stride]);
    }
    sum = warp_sum(sum);
    if (lane == 0) y[row * p.y_stride] = cast_value<T>(sum);
  }
}

}  // namespace gemm
}  // namespace gpuprims
