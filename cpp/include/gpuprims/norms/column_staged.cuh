#pragma once
// Rows side by side (column_rows.cuh), staged through shared memory: element i of a group's 32
// adjacent rows is 32 consecutive values, so the group's rows are n runs of 32 * sizeof(T) bytes,
// one row stride apart, which cp.async copies into a tile in 16-byte pieces. The register-held
// kernels keep in flight what their registers hold (16 values a thread at 1024 threads an SM: 64 KiB
// of float32, 32 KiB of a 2-byte type) and nothing between a group's last load and the next group's
// first; here a block issues its next step's copies before this step's statistics, exchanges and
// writes, and the copies hold no registers. The statistics and outputs are the register kernels'
// (column_rows_group, column_softmax_backward_group, column_norm_backward_group) with the held
// values read from the tiles. The norm kind's backward launches them in the register kernel's block
// shape (its column sums are kept per held slot): the same values in the same order, so dx is
// bitwise the register kernel's. The forward and the softmax kind's backward split a row among
// fewer warps than their register kernels (kColumnStagedShare, cpp/src/norms/column_launch.cuh,
// says why), so their row sums are rounded in another order.
//
// Needs (rows_side_by_side_staged, layout.cpp): each array 16-byte aligned, its row stride, plane
// strides and the width multiples of 16 bytes, so every piece is whole and inside its plane; and two
// stages of tiles in shared memory (column_staged_bytes).
#include <cstdint>

#include "gpuprims/norms/column_backward.cuh"
#include "gpuprims/norms/column_rows.cuh"
#include "gpuprims/util/ptx_sm80.cuh"

namespace gpuprims {
namespace norms {

// A thread's row in staged tiles: get(i) its element i (tile[i * kColumnLanes] of each array).
template <int kSlices, class Get>
struct ColumnTileSlice {
  static constexpr bool kHolds = true;
  Get get;

  template <class Load, class F>
  __device__ __forceinline__ void for_each(int64_t n, bool active, Load, F f) const {
    if (!active) return;
    const int len = static_cast<int>(n);
#pragma unroll 4
    for (int i = threadIdx.y; i < len; i += kSlices) f(int64_t(i), get(i));
  }
};
template <int kSlices, class Get>
__device__ __forceinline__ ColumnTileSlice<kSlices, Get> column_tile_slice(Get get) {
  return {get};
}

// Issues (does not commit) the copies of x's kGroups tiles of the block step that starts at group
// `first` into `stage` (tile z: n x kColumnLanes values at z * n * kColumnLanes). Pieces past the
// plane's last row or of groups past the last are not copied: their lanes are not valid and read
// nothing.
template <class T, int kGroups, int kThreads>
__device__ __forceinline__ void column_tile_copy(const T* x, const RowLayout& layout, const ColumnShape& shape,
                                                 int64_t first, T* stage, int n, int tid) {
  constexpr int kPieceValues = 16 / static_cast<int>(sizeof(T));
  constexpr int kPieces = kColumnLanes / kPieceValues;  // per element of a group
  static_assert(kThreads % kPieces == 0, "a thread copies one piece position");
  const int piece = tid % kPieces;
  const int64_t xs = layout.x_elem_stride;
#pragma unroll
  for (int z = 0; z < kGroups; ++z) {
    const int64_t g = first + z;
    if (g >= shape.groups) break;
    const int64_t plane = shape.plane_of.div(g);
    const int64_t column = (g - plane * shape.groups_per_plane) * kColumnLanes + piece * kPieceValues;
    if (column >= shape.width) continue;
    const T* src = x + layout.x_row_offset(plane * shape.width + column);
    T* dst = stage + (z * n) * kColumnLanes + piece * kPieceValues;
    for (int i = tid / kPieces; i < n; i += kThreads / kPieces) {
      ptx::cp_async_16(ptx::shared_address(dst + i * kColumnLanes), src + i * xs);
    }
  }
}

// Dynamic shared memory of a launch: two stages of kArrays x kGroups tiles of n x kColumnLanes values.
template <class T, int kGroups, int kArrays>
constexpr int64_t column_staged_bytes(int64_t n) {
  return 2 * int64_t(kArrays) * kGroups * n * kColumnLanes * int64_t(sizeof(T));
}

// The block's loop over its steps (kGroups groups each, grid-stride) with two stages of
// `stage_values` values: copy(first, stage) issues a step's copies, work(first, stage) runs it once
// they have landed. Step k + 1's copy is issued before step k is waited for.
template <class T, int kGroups, class Copy, class Work>
__device__ __forceinline__ void column_staged_steps(const ColumnShape& shape, T* stages, int stage_values, Copy copy,
                                                    Work work) {
  const int64_t step = int64_t(gridDim.x) * kGroups;
  int64_t first = int64_t(blockIdx.x) * kGroups;
  if (first < shape.groups) copy(first, stages);
  ptx::cp_async_commit();
  for (int s = 0; first < shape.groups; first += step, s ^= 1) {
    // The other stage was last read in the previous step, which ended at a barrier.
    if (first + step < shape.groups) copy(first + step, stages + (s ^ 1) * stage_values);
    ptx::cp_async_commit();
    ptx::cp_async_wait<1>();  // this thread's pieces of step `first` have landed
    __syncthreads();          // and every other thread's
    work(first, stages + s * stage_values);
    __syncthreads();  // every read of this stage done before the next step's copy into it
  }
}

template <class T, RowKind kKind, int kSlices, int kGroups>
__global__ void __launch_bounds__(kColumnLanes * kSlices * kGroups,
                                  column_min_blocks<T, kColumnLanes * kSlices * kGroups>())
column_staged_kernel(NormParams p, ColumnShape shape) {
  using Acc = acc_t<T>;
  constexpr int kThreads = kColumnLanes * kSlices * kGroups;
  __shared__ Acc exchange[column_exchange_values<kSlices, kGroups>()];
  extern __shared__ __align__(16) unsigned char column_stages[];
  const int n = static_cast<int>(p.layout.row_len);
  const int tid = threadIdx.x + kColumnLanes * (threadIdx.y + kSlices * threadIdx.z);
  const auto copy = [&](int64_t first, T* stage) {
    column_tile_copy<T, kGroups, kThreads>(static_cast<const T*>(p.x), p.layout, shape, first, stage, n, tid);
  };
  const auto work = [&](int64_t first, const T* stage) {
    const ColumnRow mine = column_row(shape, first);
    const T* tile = stage + threadIdx.z * n * kColumnLanes + threadIdx.x;
    const auto x_at = [=](int64_t i) { return cast_value<Acc>(tile[i * kColumnLanes]); };
    column_rows_group<T, kKind, kSlices>(p, mine.row, mine.valid, tile, column_tile_slice<kSlices>(x_at), x_at,
                                         exchange);
  };
  column_staged_steps<T, kGroups>(shape, reinterpret_cast<T*>(column_stages), kGroups * n * kColumnLanes, copy, work);
}

// The backward of either kind (column_backward.cuh): a stage holds dy's kGroups tiles, then the
// saved row's (y or x). The norm kind's column sums stay in registers over the block's steps.
template <class T, RowKind kKind, int kSlices, int kGroups, int kHeld>
__global__ void __launch_bounds__(kColumnLanes * kSlices * kGroups,
                                  column_min_blocks<T, kColumnLanes * kSlices * kGroups>())
column_backward_staged_kernel(NormBackwardParams p, ColumnShape shape) {
  using Acc = acc_t<T>;
  constexpr int kThreads = kColumnLanes * kSlices * kGroups;
  __shared__ ColumnBackwardExchange<Acc, kKind> exchange[column_exchange_values<kSlices, kGroups>()];
  extern __shared__ __align__(16) unsigned char column_stages[];
  const int n = static_cast<int>(p.dy_layout.row_len);
  const int tiles = kGroups * n * kColumnLanes;  // values of one array's tiles in a stage
  const int tid = threadIdx.x + kColumnLanes * (threadIdx.y + kSlices * threadIdx.z);
  ColumnNormSums<Acc, kKind == RowKind::kNorm ? kHeld : 1> sums;
  const auto copy = [&](int64_t first, T* stage) {
    column_tile_copy<T, kGroups, kThreads>(static_cast<const T*>(p.dy), p.dy_layout, shape, first, stage, n, tid);
    column_tile_copy<T, kGroups, kThreads>(static_cast<const T*>(p.saved), p.saved_layout, shape, first, stage + tiles,
                                           n, tid);
  };
  const auto work = [&](int64_t first, const T* stage) {
    const ColumnRow mine = column_row(shape, first);
    const T* dy_tile = stage + threadIdx.z * n * kColumnLanes + threadIdx.x;
    const T* saved_tile = dy_tile + tiles;
    const auto at = [=](int64_t i) {
      return ColumnGradient<Acc>{cast_value<Acc>(saved_tile[i * kColumnLanes]), cast_value<Acc>(dy_tile[i * kColumnLanes])};
    };
    if constexpr (kKind == RowKind::kSoftmax) {
      column_softmax_backward_group<T, kSlices>(p, mine.row, mine.valid, column_tile_slice<kSlices>(at), at, exchange);
    } else {
      column_norm_backward_group<T, kSlices, kHeld>(
          p, mine.row, mine.valid, [&](int j) { return at(threadIdx.y + int64_t(j) * kSlices); }, sums, exchange);
    }
  };
  column_staged_steps<T, kGroups>(shape, reinterpret_cast<T*>(column_stages), 2 * tiles, copy, work);
  if constexpr (kKind == RowKind::kNorm) write_column_norm_partials<kSlices, kGroups>(p, sums);
}

}  // namespace norms
}  // namespace gpuprims
