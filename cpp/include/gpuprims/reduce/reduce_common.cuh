#pragma once
// Pieces every reduce kernel shares: the parameter block and the per-thread accumulation loop over
// a strided (or contiguous) row.
#include <cstdint>
#include <cstring>

#include "gpuprims/block/block_reduce.cuh"
#include "gpuprims/core/numeric.hpp"
#include "gpuprims/reduce/reduce_layout.hpp"
#include "gpuprims/reduce/reduce_ops.hpp"

namespace gpuprims {
namespace reduce_detail {

constexpr int kReduceThreads = 256;

template <class T>
struct ReduceKernelParams {
  const T* in;          // element (0, ..., 0), negative strides already flipped
  ReduceLayout layout;
  void* out;            // final results, written with store_as(out, layout.out_offset(row), ...)
  DType out_dtype;
};

// acc ∘= row[i] for i = begin, begin + step, ... < end. Scalar loads, coalesced when the row is
// contiguous and consecutive threads take consecutive i.
template <class Acc, class T, class Op>
__device__ __forceinline__ Acc accumulate_scalar(const T* row, const ReduceLayout& layout, int64_t begin,
                                                 int64_t end, int64_t step, Op op, Acc acc) {
  if (layout.row_contiguous) {
    for (int64_t i = begin; i < end; i += step) acc = op(acc, cast_value<Acc>(row[i]));
  } else {
    for (int64_t i = begin; i < end; i += step) acc = op(acc, cast_value<Acc>(row[layout.elem_offset(i)]));
  }
  return acc;
}

// Reads a value another block published before its __threadfence(): ld.global.cg caches in L2
// only (L1 is not coherent across SMs). Unlike a volatile load it may be batched with its
// neighbours, so a block combining many partials keeps several loads in flight.
template <class T>
__device__ __forceinline__ T load_published(const T* p) {
  if constexpr (sizeof(T) == 8) {
    const unsigned long long bits = __ldcg(reinterpret_cast<const unsigned long long*>(p));
    T v;
    memcpy(&v, &bits, sizeof(T));
    return v;
  } else {
    static_assert(sizeof(T) == 4, "load_published: 4- or 8-byte values");
    const unsigned int bits = __ldcg(reinterpret_cast<const unsigned int*>(p));
    T v;
    memcpy(&v, &bits, sizeof(T));
    return v;
  }
}

// Combines the `count` partials of a row that other blocks published, in index order per thread,
// then across the block. Result valid in thread 0. (Unrolling the loop to batch the loads made ptxas
// spill in the int64 kernels, which cost more than the tail it saves.)
template <int kThreads, class Acc, class Op, class TempStorage>
__device__ __forceinline__ Acc combine_published(const Acc* partials, int64_t count, Op op, TempStorage& temp) {
  Acc acc = Op::template identity<Acc>();
  for (int64_t i = threadIdx.x; i < count; i += kThreads) acc = op(acc, load_published(&partials[i]));
  return BlockReduce<Acc, kThreads>::reduce(acc, op, temp);
}

}  // namespace reduce_detail
}  // namespace gpuprims
