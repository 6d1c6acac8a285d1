#pragma once
// A warp per row, or a group of 4, 8 or 16 lanes per row for rows under 2 KiB: for many contiguous
// rows of a few KiB (x.sum(-1) over rows of 1024 floats, the first step of a two-step reduction).
// `vectorized` gives such a row one block, whose threads hold one or two 16-byte loads each before
// a block-wide reduction and its barriers; here each lane keeps up to kUnroll loads in flight (a
// 4 KiB row is read by one warp in two batches of 2 KiB), the row is combined with shuffles only,
// and the group's first lane stores the result. No workspace, no barrier, and the same order of
// adds on every run (deterministic for floats). The group is sized so that each lane has about 4
// vectors of its row (kLanesPerRow, the runner's choice): rows of 192 bytes are read by 4 lanes,
// where a whole warp would leave 20 of its 32 lanes idle.
//
// Strided rows are read element by element (correct, not fast: "auto" sends them elsewhere).
#include <cstdint>

#include "gpuprims/reduce/reduce_common.cuh"
#include "gpuprims/reduce/reduce_vectorized.cuh"
#include "gpuprims/warp/warp_reduce.cuh"

namespace gpuprims {
namespace reduce_detail {

constexpr int kWarpPerRowThreads = 256;

// At least 3 blocks an SM (at most 80 registers): ptxas's own choice (44-64 registers) spilled a
// few bytes in 10-14 of the instantiations with 64-bit accumulators; 24 warps an SM still keep
// 48 KiB of loads in flight.
template <class T, class Acc, class Op, int kLanesPerRow>
__global__ void __launch_bounds__(kWarpPerRowThreads, 3) reduce_warp_per_row_kernel(ReduceKernelParams<T> p) {
  using Shape = VectorizedShape<Acc>;
  constexpr int kRowsPerBlock = kWarpPerRowThreads / kLanesPerRow;
  const Op op;
  const ReduceLayout& layout = p.layout;
  const int lane = threadIdx.x % kLanesPerRow;
  // The groups of one warp may leave the loop at different rows (the last ones): group_reduce's
  // shuffles name only the group's own lanes, so that is safe.
  for (int64_t row = int64_t(blockIdx.x) * kRowsPerBlock + threadIdx.x / kLanesPerRow; row < layout.num_rows;
       row += int64_t(gridDim.x) * kRowsPerBlock) {
    const T* in_row = p.in + layout.in_row_offset(row);
    Acc acc = layout.row_contiguous
                  ? accumulate_vectorized<kLanesPerRow, Shape::kUnroll, kVectorizedLoads, Partition::kChunks,
                                          Shape::kSplit, Acc>(in_row, layout.row_len, 0, 1, lane, op)
                  : accumulate_scalar(in_row, layout, lane, layout.row_len, kLanesPerRow, op,
                                      Op::template identity<Acc>());
    acc = group_reduce<kLanesPerRow>(acc, op);
    if (lane == 0) store_as(p.out, layout.out_offset(row), p.out_dtype, acc);
  }
}

}  // namespace reduce_detail
}  // namespace gpuprims
