#pragma once
// Pieces every reduce kernel shares: the parameter block and the per-thread accumulation loop over
// a strided (or contiguous) row.
#include <cstdint>

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

// Reads a value another block published before its __threadfence(); volatile keeps the load out of
// the (non-coherent) L1.
template <class T>
__device__ __forceinline__ T load_volatile(const T* p) {
  return *const_cast<const volatile T*>(p);
}

}  // namespace reduce_detail
}  // namespace gpuprims
