#pragma once
// One thread per output element, looping over its row. The right shape for reductions along an
// outer axis (rows far apart in memory, neighbouring outputs adjacent): consecutive threads read
// consecutive addresses at every step, so loads coalesce although each row is strided.
#include <cstdint>

#include "gpuprims/reduce/reduce_common.cuh"

namespace gpuprims {
namespace reduce_detail {

template <class T, class Acc, class Op>
__global__ void __launch_bounds__(kReduceThreads) reduce_thread_per_output_kernel(ReduceKernelParams<T> p) {
  const Op op;
  for (int64_t row = blockIdx.x * int64_t(kReduceThreads) + threadIdx.x; row < p.layout.num_rows;
       row += int64_t(gridDim.x) * kReduceThreads) {
    const Acc v = accumulate_scalar(p.in + p.layout.in_row_offset(row), p.layout, 0, p.layout.row_len, 1, op,
                                    Op::template identity<Acc>());
    store_as(p.out, p.layout.out_offset(row), p.out_dtype, v);
  }
}

}  // namespace reduce_detail
}  // namespace gpuprims
