#pragma once
// One thread per output element, looping over its row. The right shape for reductions along an
// outer axis (rows far apart in memory, neighbouring outputs adjacent): consecutive threads read
// consecutive addresses at every step, so loads coalesce although each row is strided.
//
// Where rows outnumber the threads of a full GPU fourfold, each thread takes kRowsInFlight = 4
// rows at once (rows first, first + S, ..., S the grid's thread count, so the warps' loads stay
// coalesced) and steps through them together, so it has four independent loads outstanding. With
// one row a thread, a row of one element (a reduction over no axes: scan's dtype conversions,
// cpp/src/scan/dispatch.cpp) had a single 4-byte load in flight per thread and converted 2^28
// int32 into float32 at about half the copy rate (that converted cumsum: 0.86x torch.cumsum in
// session 37, 0.98x since). Fewer rows run one a thread, as before. Where the switch belongs is
// not tuned: on an H100, 262144 rows of 1024 float32 took 1.17 ms four a thread and 1.48 ms one
// a thread, 16384 rows of 8192 1.31 and 1.25 ms (session 38 runs 3 and 4, two machines).
#include <cstdint>

#include "gpuprims/reduce/reduce_common.cuh"

namespace gpuprims {
namespace reduce_detail {

template <class T, class Acc, class Op, int kRowsInFlight>
__global__ void __launch_bounds__(kReduceThreads) reduce_thread_per_output_kernel(ReduceKernelParams<T> p) {
  const Op op;
  const ReduceLayout& layout = p.layout;
  const int64_t threads = int64_t(gridDim.x) * kReduceThreads;
  for (int64_t first = blockIdx.x * int64_t(kReduceThreads) + threadIdx.x; first < layout.num_rows;
       first += threads * kRowsInFlight) {
    // Rows past the end are marked by `live`, not by a null pointer: an empty x may have none.
    const T* rows[kRowsInFlight];
    bool live[kRowsInFlight];
    Acc acc[kRowsInFlight];
#pragma unroll
    for (int u = 0; u < kRowsInFlight; ++u) {
      const int64_t row = first + u * threads;
      live[u] = row < layout.num_rows;
      rows[u] = p.in + (live[u] ? layout.in_row_offset(row) : 0);
      acc[u] = Op::template identity<Acc>();
    }
    for (int64_t i = 0; i < layout.row_len; ++i) {
      const int64_t offset = layout.elem_offset(i);
#pragma unroll
      for (int u = 0; u < kRowsInFlight; ++u) {
        if (live[u]) acc[u] = op(acc[u], cast_value<Acc>(rows[u][offset]));
      }
    }
#pragma unroll
    for (int u = 0; u < kRowsInFlight; ++u) {
      if (live[u]) store_as(p.out, layout.out_offset(first + u * threads), p.out_dtype, acc[u]);
    }
  }
}

}  // namespace reduce_detail
}  // namespace gpuprims
