#pragma once
// Pieces every matmul kernel shares: the walk over output tiles and the strided tile loader.
#include <cstdint>

#include "gpuprims/core/numeric.hpp"
#include "gpuprims/gemm/gemm_params.hpp"

namespace gpuprims {
namespace gemm {

// Calls body(z, m0, n0) for every kTileM x kTileN output tile this block owns. The tiles of all
// batches are numbered in one int64 sequence (column tiles fastest, so blocks that run together
// share A's row panel in L2) and a 1-D grid strides through it: any size fits the grid, and one
// loop counter stays live instead of three. The trip count is uniform across the block, so bodies
// may synchronize.
template <int kTileM, int kTileN, class Body>
__device__ __forceinline__ void for_each_tile(const GemmParams& p, Body&& body) {
  const int64_t n_tiles = (p.n + kTileN - 1) / kTileN;
  const int64_t tiles_per_batch = (p.m + kTileM - 1) / kTileM * n_tiles;
  const int64_t tiles = tiles_per_batch * p.batch;
  for (int64_t i = blockIdx.x; i < tiles; i += gridDim.x) {
    const int64_t z = i / tiles_per_batch, in_batch = i - z * tiles_per_batch;
    const int64_t tm = in_batch / n_tiles, tn = in_batch - tm * n_tiles;
    body(z, tm * kTileM, tn * kTileN);
  }
}

// A kRows x kCols tile of a strided matrix staged through registers into shared memory, zero
// outside the matrix, converted to the accumulator type on the way. Threads walk the matrix's
// contiguous dimension fastest (rows when the row stride is 1 and the column stride is not,
// columns otherwise) so that a warp's loads coalesce for row-major and column-major operands
// alike. fetch() and store() are split so that double-buffered kernels can keep the global loads
// of the next tile in flight while they multiply the current one.
template <class Acc, int kRows, int kCols, int kThreads>
struct StridedTile {
  static_assert(kRows * kCols % kThreads == 0, "the tile must divide evenly among the threads");
  static constexpr int kPerThread = kRows * kCols / kThreads;
  Acc v[kPerThread];

  __device__ __forceinline__ static void coords(int idx, bool rows_fastest, int* r, int* c) {
    if (rows_fastest) {
      *r = idx % kRows;
      *c = idx / kRows;
    } else {
      *r = idx / kCols;
      *c = idx % kCols;
    }
  }

  // origin: element (0, 0) of the tile; rows_left / cols_left: how many of its rows / columns lie
  // inside the matrix (at most kRows / kCols).
  template <class T>
  __device__ __forceinline__ void fetch(const T* origin, int64_t row_stride, int64_t col_stride, int rows_left,
                                        int cols_left, int t, bool rows_fastest) {
#pragma unroll
    for (int i = 0; i < kPerThread; ++i) {
      int r, c;
      coords(t + i * kThreads, rows_fastest, &r, &c);
      v[i] = r < rows_left && c < cols_left ? cast_value<Acc>(origin[r * row_stride + c * col_stride]) : Acc(0);
    }
  }

  // Writes element (r, c) to dst[r * dst_row + c * dst_col].
  __device__ __forceinline__ void store(Acc* dst, int dst_row, int dst_col, int t, bool rows_fastest) const {
#pragma unroll
    for (int i = 0; i < kPerThread; ++i) {
      int r, c;
      coords(t + i * kThreads, rows_fastest, &r, &c);
      dst[r * dst_row + c * dst_col] = v[i];
    }
  }
};

// Whether an operand is read along rows (row stride 1, column stride not 1: a column-major or
// transposed view).
__device__ __forceinline__ bool rows_contiguous(const MatrixStrides& s) { return s.row == 1 && s.col != 1; }

__device__ __forceinline__ int clamp_left(int64_t size, int64_t start, int tile) {
  const int64_t left = size - start;
  return left < tile ? static_cast<int>(left) : tile;
}

}  // namespace gemm
}  // namespace gpuprims
