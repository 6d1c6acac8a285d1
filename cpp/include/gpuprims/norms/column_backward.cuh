#pragma once
// The backward passes on rows that lie side by side (column_rows.cuh says which rows and why), with
// the forward's block shapes -- 32 adjacent rows a group, a lane each, kSlices warps splitting every
// row, the row sums exchanged through shared memory in warp order (deterministic).
//
// Softmax kind: dx = y * (dy - sum(dy * y)), log_softmax dx = dy - exp(y) * sum(dy). Rows of up to
// kSlices * kHeld elements keep y and dy in registers (one read of each, one write of dx); longer
// rows read both twice.
//
// Norm kind: dx = rstd * ((g - mean(g)) - xhat * mean(g * xhat)), g = dy * weight, xhat = (x - mean)
// * rstd from the saved statistics (row_math.hpp's norm_backward_out). Rows of up to kSlices * kHeld
// elements only (the host's backward_rows_side_by_side): a thread's elements are its kHeld slots
// (element slice + j * kSlices), and it keeps the column sums of dy * xhat and dy at those elements
// in registers over every row of the block's steps (ColumnNormSums). After its last step each group
// folds its 32 rows' sums by a butterfly and writes one partial row, which backward_column_sums adds
// up in a fixed order. The grid is the blocks resident at once, so there are at most a few thousand
// partial rows whatever the batch; the results are run-to-run reproducible on one device (the grid,
// and with it the order of the column sums, depends on the device only).
#include <cstdint>
#include <type_traits>

#include "gpuprims/norms/column_rows.cuh"
#include "gpuprims/warp/warp_reduce.cuh"

namespace gpuprims {
namespace norms {

// One element of the saved row (y for the softmax kind, x for the norm kind) and of dy at the same
// position.
template <class Acc>
struct ColumnGradient {
  Acc saved = Acc(0);
  Acc dy = Acc(0);
};

// What a backward kernel's row sums are exchanged as: the softmax kind's one sum, the norm kind's
// pair (g, g * xhat).
template <class Acc, RowKind kKind>
using ColumnBackwardExchange = std::conditional_t<kKind == RowKind::kSoftmax, Acc, SumPair<Acc>>;

// One group's pass over this thread's row (column_rows_group's conventions): the row sum, then dx.
template <class T, int kSlices, class Slice, class At>
__device__ __forceinline__ void column_softmax_backward_group(const NormBackwardParams& p, int64_t row, bool valid,
                                                              const Slice& slice, At at, acc_t<T>* exchange) {
  using Acc = acc_t<T>;
  const RowLayout& dl = p.dy_layout;  // dy, with dx as its output
  const int64_t n = dl.row_len;
  Acc part = Acc(0);
  slice.for_each(n, valid, at, [&](int64_t, ColumnGradient<Acc> e) { part = softmax_backward_add(part, e.saved, e.dy, p.log); });
  const Acc sum = column_all<kSlices>(part, SumOp{}, exchange);
  T* dxr = static_cast<T*>(p.dx) + dl.y_row_offset(row);
  const int64_t dxs = dl.y_elem_stride;
  slice.for_each(n, valid, at, [&](int64_t i, ColumnGradient<Acc> e) {
    dxr[i * dxs] = cast_value<T>(softmax_backward_out(e.saved, e.dy, sum, p.log));
  });
}

// The norm kind's column sums of dy * xhat (a) and dy (b) at a thread's kHeld slots.
template <class Acc, int kHeld>
struct ColumnNormSums {
  SumPair<Acc> at[kHeld] = {};
};

// One group's pass over this thread's row of the norm kind: the row sums of g and g * xhat, then dx;
// the column sums added to `sums`. slot(j) gives element threadIdx.y + j * kSlices (a compile-time
// j: the sums stay in registers). Nothing read or written where `valid` is false, but the exchange
// joined.
template <class T, int kSlices, int kHeld, class Slot>
__device__ __forceinline__ void column_norm_backward_group(const NormBackwardParams& p, int64_t row, bool valid,
                                                           Slot slot, ColumnNormSums<acc_t<T>, kHeld>& sums,
                                                           SumPair<acc_t<T>>* exchange) {
  using Acc = acc_t<T>;
  const RowLayout& dl = p.dy_layout;  // dy, with dx as its output
  const int64_t n = dl.row_len;
  const T* w = static_cast<const T*>(p.weight);
  const Acc mean = valid && p.center ? static_cast<const Acc*>(p.mean)[row] : Acc(0);
  const Acc rstd = valid ? static_cast<const Acc*>(p.rstd)[row] : Acc(0);
  // f(j, dy, xhat, g) for each of this thread's slots in the row (element i: dx's position too)
  const auto each = [&](auto f) {
#pragma unroll
    for (int j = 0; j < kHeld; ++j) {
      const int64_t i = threadIdx.y + int64_t(j) * kSlices;
      if (valid && i < n) {
        const ColumnGradient<Acc> e = slot(j);
        const Acc wi = w != nullptr ? cast_value<Acc>(w[i * p.weight_stride]) : Acc(1);
        f(j, i, e.dy, (e.saved - mean) * rstd, e.dy * wi);
      }
    }
  };
  // Explicit fmas: the staged and register kernels give the same bits whatever the compiler
  // contracts in either context.
  SumPair<Acc> part = {Acc(0), Acc(0)};
  each([&](int j, int64_t, Acc dy, Acc xhat, Acc g) {
    part.a += g;
    part.b = fma(g, xhat, part.b);
    sums.at[j].a = fma(dy, xhat, sums.at[j].a);
    sums.at[j].b += dy;
  });
  const SumPair<Acc> total = column_all<kSlices>(part, PairSumOp{}, exchange);
  const Acc mean_g = p.center ? mean_of(total.a, n) : Acc(0);
  const Acc mean_gx = mean_of(total.b, n);
  T* dxr = static_cast<T*>(p.dx) + dl.y_row_offset(row);
  const int64_t dxs = dl.y_elem_stride;
  each([&](int, int64_t i, Acc, Acc xhat, Acc g) {
    dxr[i * dxs] = cast_value<T>(norm_backward_out(g, xhat, rstd, mean_g, mean_gx));
  });
}

// After a block's last step: group threadIdx.z's partial row (row blockIdx.x * kGroups + z of the
// partial buffers), its 32 rows folded by a butterfly. Every element of the row is written, zeros
// where the group had no rows: backward_column_sums reads them all.
template <int kSlices, int kGroups, class Acc, int kHeld>
__device__ __forceinline__ void write_column_norm_partials(const NormBackwardParams& p,
                                                           const ColumnNormSums<Acc, kHeld>& sums) {
  const int64_t n = p.dy_layout.row_len;
  Acc* pw = static_cast<Acc*>(p.dweight_partial);
  Acc* pb = static_cast<Acc*>(p.dbias_partial);
  const int64_t at = (int64_t(blockIdx.x) * kGroups + threadIdx.z) * n;
#pragma unroll
  for (int j = 0; j < kHeld; ++j) {
    const int64_t i = threadIdx.y + int64_t(j) * kSlices;  // one warp's slot: the same for all its lanes
    if (i >= n) break;
    const SumPair<Acc> s = warp_reduce(sums.at[j], PairSumOp{});
    if (threadIdx.x == 0) {
      if (pw != nullptr) pw[at + i] = s.a;
      if (pb != nullptr) pb[at + i] = s.b;
    }
  }
}

template <class T, RowKind kKind, int kSlices, int kGroups, int kHeld>
__global__ void __launch_bounds__(kColumnLanes * kSlices * kGroups,
                                  column_min_blocks<T, kColumnLanes * kSlices * kGroups>())
column_backward_kernel(NormBackwardParams p, ColumnShape shape) {
  using Acc = acc_t<T>;
  static_assert(kKind == RowKind::kSoftmax || kHeld > 0, "the norm kind's column sums need held slots");
  __shared__ ColumnBackwardExchange<Acc, kKind> exchange[column_exchange_values<kSlices, kGroups>()];
  const RowLayout& dl = p.dy_layout;
  const RowLayout& sl = p.saved_layout;
  ColumnNormSums<Acc, kKind == RowKind::kNorm ? kHeld : 1> sums;
  for (int64_t first = int64_t(blockIdx.x) * kGroups; first < shape.groups; first += int64_t(gridDim.x) * kGroups) {
    const ColumnRow mine = column_row(shape, first);
    const T* dyr = static_cast<const T*>(p.dy) + dl.x_row_offset(mine.row);
    const T* sr = static_cast<const T*>(p.saved) + sl.x_row_offset(mine.row);
    const int64_t dys = dl.x_elem_stride, ss = sl.x_elem_stride;
    const auto at = [=](int64_t i) {
      return ColumnGradient<Acc>{cast_value<Acc>(sr[i * ss]), cast_value<Acc>(dyr[i * dys])};
    };
    ColumnSlice<kSlices, kHeld, ColumnGradient<Acc>> slice;
    slice.load(dl.row_len, mine.valid, at);
    if constexpr (kKind == RowKind::kSoftmax) {
      column_softmax_backward_group<T, kSlices>(p, mine.row, mine.valid, slice, at, exchange);
    } else {
      column_norm_backward_group<T, kSlices, kHeld>(
          p, mine.row, mine.valid, [&](int j) { return slice.v[j]; }, sums, exchange);
    }
  }
  if constexpr (kKind == RowKind::kNorm) write_column_norm_partials<kSlices, kGroups>(p, sums);
}

}  // namespace norms
}  // namespace gpuprims
