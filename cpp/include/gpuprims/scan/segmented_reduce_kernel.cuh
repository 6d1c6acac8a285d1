#pragma once
// Segmented reduction over CSR offsets, a group of threads per segment (one warp or one block),
// and group_partial(), the strided 16-byte read loop that the library's merge-path kernels
// (segmented_reduce_ranges.cuh) share. The per-segment kernel was the library's until one huge
// segment among small ones proved it reads that segment with a single group; it stays as the
// tuning harness's baseline (bench/tune/segmented_reduce_tune.cu, docs/scan.md). Offsets are
// clamped into [0, n] and an inverted segment is empty, so bad offsets never read out of bounds.
#include <cstdint>

#include "gpuprims/block/block_reduce.cuh"
#include "gpuprims/core/numeric.hpp"
#include "gpuprims/reduce/reduce_ops.hpp"
#include "gpuprims/util/vec.cuh"
#include "gpuprims/warp/warp_reduce.cuh"

namespace gpuprims {
namespace scan_detail {

constexpr int kSegmentUnroll = 4;

struct Segments {
  const void* offsets;
  bool offsets_64;
  int64_t offset_step;  // element stride of the offsets
  int64_t count;        // number of segments
  int64_t n;            // items in x
  int64_t step;         // element stride of x
  void* out;
  int64_t out_step;
  DType out_dtype;

  __device__ int64_t offset(int64_t i) const {
    const int64_t v = offsets_64 ? static_cast<const int64_t*>(offsets)[i * offset_step]
                                 : int64_t(static_cast<const int32_t*>(offsets)[i * offset_step]);
    return v < 0 ? 0 : (v > n ? n : v);
  }
};

// This thread's share of op over x[begin, end) when kGroup threads (rank = this thread's place
// among them) read the range together: kUnroll independent loads in flight per thread, 16-byte
// vectors (read-only or streaming past L1, kPolicy) on the aligned body when `vector_ok` (unit
// stride, 16-byte aligned base); the kUnroll
// accumulators are folded in a fixed order. The caller combines the kGroup shares (warp or block
// tree), so the result depends only on (begin, end, kGroup, kUnroll): deterministic.
template <class T, class Acc, class Op, int kGroup, int kUnroll, LoadPolicy kPolicy = LoadPolicy::kReadOnly>
__device__ __forceinline__ Acc group_partial(const T* __restrict__ x, int64_t begin, int64_t end, int64_t step,
                                             bool vector_ok, int rank) {
  const Op op;
  Acc acc[kUnroll];
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) acc[u] = Op::template identity<Acc>();
  if (vector_ok) {
    // The items before the first aligned vector and after the last one go one by one.
    constexpr int kVec = Vec16<T>::kLanes;
    const int64_t body_begin = (begin + kVec - 1) / kVec * kVec, body_end = end / kVec * kVec;
    if (body_begin < body_end) {
      constexpr int kHead = 1 % kUnroll, kTail = 2 % kUnroll;
      for (int64_t i = begin + rank; i < body_begin; i += kGroup) acc[kHead] = op(acc[kHead], cast_value<Acc>(x[i]));
      for (int64_t i = body_end + rank; i < end; i += kGroup) acc[kTail] = op(acc[kTail], cast_value<Acc>(x[i]));
      int64_t v = body_begin / kVec + rank;
      const int64_t vend = body_end / kVec;
      for (; v + (kUnroll - 1) * kGroup < vend; v += kUnroll * kGroup) {
        Vec16<T> vec[kUnroll];
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) vec[u] = load_vec16<T, kPolicy>(x + (v + u * kGroup) * kVec);
#pragma unroll
        for (int u = 0; u < kUnroll; ++u)
#pragma unroll
          for (int j = 0; j < kVec; ++j) acc[u] = op(acc[u], cast_value<Acc>(vec[u].lane[j]));
      }
      for (; v < vend; v += kGroup) {
        const Vec16<T> vec = load_vec16<T, kPolicy>(x + v * kVec);
#pragma unroll
        for (int j = 0; j < kVec; ++j) acc[kUnroll - 1] = op(acc[kUnroll - 1], cast_value<Acc>(vec.lane[j]));
      }
      begin = end;  // done
    }
  }
  int64_t i = begin + rank;
  for (; i + (kUnroll - 1) * kGroup < end; i += kUnroll * kGroup) {
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) acc[u] = op(acc[u], cast_value<Acc>(x[(i + u * kGroup) * step]));
  }
  for (; i < end; i += kGroup) acc[0] = op(acc[0], cast_value<Acc>(x[i * step]));
#pragma unroll
  for (int u = 1; u < kUnroll; ++u) acc[0] = op(acc[0], acc[u]);
  return acc[0];
}

// kGroup threads reduce one segment: 32 (a warp) or kThreads (the block); kUnroll loads in flight
// per thread (the library's shapes: cpp/src/scan/segmented_reduce.cu).
template <class T, class Acc, class Op, int kGroup, int kThreads, int kUnroll = kSegmentUnroll>
__global__ void __launch_bounds__(kThreads)
segmented_reduce_kernel(const T* __restrict__ x, Segments seg, bool vector_ok) {
  constexpr int kGroupsPerBlock = kThreads / kGroup;
  const Op op;
  __shared__ typename BlockReduce<Acc, kThreads>::TempStorage temp;
  const int rank = threadIdx.x % kGroup;
  const int64_t groups = int64_t(gridDim.x) * kGroupsPerBlock;
  for (int64_t s = int64_t(blockIdx.x) * kGroupsPerBlock + threadIdx.x / kGroup; s - threadIdx.x / kGroup < seg.count;
       s += groups) {
    Acc part = Op::template identity<Acc>();
    if (s < seg.count) {
      const int64_t begin = seg.offset(s), end = seg.offset(s + 1);
      part = group_partial<T, Acc, Op, kGroup, kUnroll>(x, begin, end < begin ? begin : end, seg.step, vector_ok, rank);
    }
    Acc total;
    if constexpr (kGroup == kWarpSize) {
      total = warp_reduce(part, op);
    } else {
      total = BlockReduce<Acc, kThreads>::reduce(part, op, temp);
      __syncthreads();  // temp is reused by the next segment
    }
    if (rank == 0 && s < seg.count) store_as(seg.out, s * seg.out_step, seg.out_dtype, total);
  }
}

}  // namespace scan_detail
}  // namespace gpuprims
