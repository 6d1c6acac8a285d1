#pragma once
// Scans for layouts where a tile per block idles: many short rows (one warp per row) and strided
// axes with many rows (one thread per row, neighbouring threads on neighbouring rows, so each step
// along the axis is one coalesced access across the warp).
#include <cstdint>

#include "gpuprims/core/numeric.hpp"
#include "gpuprims/scan/scan_layout.hpp"
#include "gpuprims/scan/scan_ops.hpp"
#include "gpuprims/warp/warp_scan.cuh"

namespace gpuprims {
namespace scan_detail {

constexpr int kRowScanThreads = 256;
constexpr int kWarpRowItems = 4;  // consecutive items per lane per step: 128 items per warp step

template <class In, class Out, class Op>
__global__ void __launch_bounds__(kRowScanThreads)
warp_per_row_kernel(const storage_t<In>* __restrict__ in, Out* __restrict__ out, ScanLayout layout, bool exclusive) {
  using Acc = scan_acc_t<Out>;
  const ScanOperator<Op> op;
  const Acc identity = ScanOperator<Op>::template identity<Acc>();
  const int lane = threadIdx.x % kWarpSize;
  const int64_t warps = int64_t(gridDim.x) * (kRowScanThreads / kWarpSize);
  for (int64_t row = int64_t(blockIdx.x) * (kRowScanThreads / kWarpSize) + threadIdx.x / kWarpSize; row < layout.rows;
       row += warps) {
    int64_t in_offset, out_offset;
    layout.row_offsets(row, &in_offset, &out_offset);
    const storage_t<In>* x = in + in_offset;
    Out* y = out + out_offset;
    Acc carry = identity;
    for (int64_t begin = 0; begin < layout.len; begin += kWarpSize * kWarpRowItems) {
      const int64_t first = begin + int64_t(lane) * kWarpRowItems;
      Acc item[kWarpRowItems];
#pragma unroll
      for (int j = 0; j < kWarpRowItems; ++j)
        item[j] = first + j < layout.len ? cast_value<Acc>(x[(first + j) * layout.in_step]) : identity;
#pragma unroll
      for (int j = 1; j < kWarpRowItems; ++j) item[j] = op(item[j - 1], item[j]);
      const Acc inclusive = warp_inclusive_scan(item[kWarpRowItems - 1], op, lane);
      Acc before = shfl_up(inclusive, 1);
      before = op(carry, lane == 0 ? identity : before);
#pragma unroll
      for (int j = 0; j < kWarpRowItems; ++j) {
        const int64_t i = first + j;
        if (i >= layout.len) break;
        Acc v = exclusive ? (j == 0 ? before : op(before, item[j - 1])) : op(before, item[j]);
        if (exclusive && i == 0) v = ScanOperator<Op>::template public_identity<Acc>();
        y[i * layout.out_step] = cast_value<Out>(v);
      }
      carry = op(carry, shfl_idx(inclusive, kWarpSize - 1));
    }
  }
}

template <class In, class Out, class Op>
__global__ void __launch_bounds__(kRowScanThreads)
columns_kernel(const storage_t<In>* __restrict__ in, Out* __restrict__ out, ScanLayout layout, bool exclusive) {
  using Acc = scan_acc_t<Out>;
  const ScanOperator<Op> op;
  const int64_t threads = int64_t(gridDim.x) * kRowScanThreads;
  for (int64_t row = int64_t(blockIdx.x) * kRowScanThreads + threadIdx.x; row < layout.rows; row += threads) {
    int64_t in_offset, out_offset;
    layout.row_offsets(row, &in_offset, &out_offset);
    const storage_t<In>* x = in + in_offset;
    Out* y = out + out_offset;
    Acc carry = ScanOperator<Op>::template identity<Acc>();
    for (int64_t i = 0; i < layout.len; ++i) {
      // Read before writing the same item: in-place scans (out is x) stay correct.
      const Acc next = op(carry, cast_value<Acc>(x[i * layout.in_step]));
      const Acc v = !exclusive ? next : (i == 0 ? ScanOperator<Op>::template public_identity<Acc>() : carry);
      y[i * layout.out_step] = cast_value<Out>(v);
      carry = next;
    }
  }
}

}  // namespace scan_detail
}  // namespace gpuprims
