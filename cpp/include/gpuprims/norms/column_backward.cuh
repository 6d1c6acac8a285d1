#pragma once
// The softmax kind's backward on rows that lie side by side (column_rows.cuh says which rows and
// why): dx = y * (dy - sum(dy * y)), log_softmax dx = dy - exp(y) * sum(dy), with the forward's
// block shapes -- 32 adjacent rows a group, a lane each, kSlices warps splitting every row, the row
// sum exchanged through shared memory in warp order (deterministic). Rows of up to kSlices * kHeld
// elements keep y and dy in registers (one read of each, one write of dx); longer rows read both
// twice. The norm kind's backward (dweight / dbias partial sums) keeps the block-per-row kernels.
#include <cstdint>

#include "gpuprims/norms/column_rows.cuh"

namespace gpuprims {
namespace norms {

// One element of y and of dy at the same position.
template <class Acc>
struct ColumnGradient {
  Acc y = Acc(0);
  Acc dy = Acc(0);
};

// One group's pass over this thread's row (column_rows_group's conventions): the row sum, then dx.
template <class T, int kSlices, class Slice, class At>
__device__ __forceinline__ void column_softmax_backward_group(const NormBackwardParams& p, int64_t row, bool valid,
                                                              const Slice& slice, At at, acc_t<T>* exchange) {
  using Acc = acc_t<T>;
  const RowLayout& dl = p.dy_layout;  // dy, with dx as its output
  const int64_t n = dl.row_len;
  Acc part = Acc(0);
  slice.for_each(n, valid, at, [&](int64_t, ColumnGradient<Acc> e) { part = softmax_backward_add(part, e.y, e.dy, p.log); });
  const Acc sum = column_all<kSlices>(part, SumOp{}, exchange);
  T* dxr = static_cast<T*>(p.dx) + dl.y_row_offset(row);
  const int64_t dxs = dl.y_elem_stride;
  slice.for_each(n, valid, at, [&](int64_t i, ColumnGradient<Acc> e) {
    dxr[i * dxs] = cast_value<T>(softmax_backward_out(e.y, e.dy, sum, p.log));
  });
}

template <class T, int kSlices, int kGroups, int kHeld>
__global__ void __launch_bounds__(kColumnLanes * kSlices * kGroups,
                                  column_min_blocks<T, kColumnLanes * kSlices * kGroups>())
column_softmax_backward_kernel(NormBackwardParams p, ColumnShape shape) {
  using Acc = acc_t<T>;
  __shared__ Acc exchange[kGroups * kSlices * kColumnLanes];
  const RowLayout& dl = p.dy_layout;
  const RowLayout& sl = p.saved_layout;  // y
  for (int64_t first = int64_t(blockIdx.x) * kGroups; first < shape.groups; first += int64_t(gridDim.x) * kGroups) {
    const ColumnRow mine = column_row(shape, first);
    const T* dyr = static_cast<const T*>(p.dy) + dl.x_row_offset(mine.row);
    const T* yr = static_cast<const T*>(p.saved) + sl.x_row_offset(mine.row);
    const int64_t dys = dl.x_elem_stride, ys = sl.x_elem_stride;
    const auto at = [=](int64_t i) {
      return ColumnGradient<Acc>{cast_value<Acc>(yr[i * ys]), cast_value<Acc>(dyr[i * dys])};
    };
    ColumnSlice<kSlices, kHeld, ColumnGradient<Acc>> slice;
    slice.load(dl.row_len, mine.valid, at);
    column_softmax_backward_group<T, kSlices>(p, mine.row, mine.valid, slice, at, exchange);
  }
}

}  // namespace norms
}  // namespace gpuprims
