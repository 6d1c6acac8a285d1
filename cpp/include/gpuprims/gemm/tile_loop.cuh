#pragma once
// Pieces every matmul kernel shares: the walk over output tiles and the strided tile loader.
#include <cstdint>
#include <type_traits>

#include "gpuprims/core/numeric.hpp"
#include "gpuprims/gemm/gemm_params.hpp"

namespace gpuprims {
namespace gemm {

// The output tile with sequence number i: tiles of all batches are numbered in one int64
// sequence (batch-major).
//
// Order within a batch (rasterization): tiles come in bands of kGroupM tile rows; inside a band
// the row index runs fastest, then the column. Blocks that run together then cover a roughly
// square patch of C (kGroupM rows by resident_blocks / kGroupM columns) and share both A's row
// panels and B's column panels in L2, where a row-by-row order (kGroupM = 1: column tiles
// fastest) shares A's panel but streams all of B through L2 once per row of tiles. The last band
// may hold fewer rows.
struct TileOrigin {
  int64_t z, m0, n0;
};
template <int kTileM, int kTileN, int kGroupM = 1>
struct TileOrder {
  static_assert(kGroupM >= 1, "a band holds at least one row of tiles");
  int64_t m_tiles, n_tiles, tiles_per_batch, tiles;
  __device__ __forceinline__ explicit TileOrder(const GemmParams& p)
      : m_tiles((p.m + kTileM - 1) / kTileM),
        n_tiles((p.n + kTileN - 1) / kTileN),
        tiles_per_batch(m_tiles * n_tiles),
        tiles(tiles_per_batch * p.batch) {}
  __device__ __forceinline__ TileOrigin origin(int64_t i) const {
    const int64_t z = i / tiles_per_batch, in_batch = i - z * tiles_per_batch;
    int64_t tm, tn;
    if constexpr (kGroupM == 1) {
      tm = in_batch / n_tiles;
      tn = in_batch - tm * n_tiles;
    } else {
      const int64_t band_tiles = kGroupM * n_tiles;
      const int64_t band = in_batch / band_tiles, in_band = in_batch - band * band_tiles;
      const int64_t first_row = band * kGroupM;
      const int64_t band_rows = m_tiles - first_row < kGroupM ? m_tiles - first_row : kGroupM;
      tn = in_band / band_rows;
      tm = first_row + (in_band - tn * band_rows);
    }
    return {z, tm * kTileM, tn * kTileN};
  }
};

// Calls body(z, m0, n0) for every kTileM x kTileN output tile this block owns, in TileOrder: a 1-D
// grid strides through the sequence, so any size fits the grid and one loop counter stays live
// instead of three. The trip count is uniform across the block, so bodies may synchronize.
// tile_end: only the tiles before it (a Stream-K launch runs the rest: warptile_streamk.cuh).
template <int kTileM, int kTileN, int kGroupM = 1, class Body>
__device__ __forceinline__ void for_each_tile(const GemmParams& p, Body&& body, int64_t tile_end = INT64_MAX) {
  const TileOrder<kTileM, kTileN, kGroupM> order(p);
  const int64_t end = tile_end < order.tiles ? tile_end : order.tiles;
  for (int64_t i = blockIdx.x; i < end; i += gridDim.x) {
    const TileOrigin o = order.origin(i);
    body(o.z, o.m0, o.n0);
  }
}

// A kRows x kCols tile of a strided matrix staged through registers into shared memory, zero
// outside the matrix, converted to the type of the shared tile (the accumulator type for the SIMT
// kernels, the element type itself for the tensor-core kernel) on the way. Threads walk the matrix's
// contiguous dimension fastest (rows when the row stride is 1 and the column stride is not,
// columns otherwise) so that a warp's loads coalesce for row-major and column-major operands
// alike. fetch() and store() are split so that double-buffered kernels can keep the global loads
// of the next tile in flight while they multiply the current one.
template <class Acc, int kRows, int kCols, int kThreads>
struct StridedTile {
  static_assert(kThreads % kRows == 0 && kThreads % kCols == 0 && kRows * kCols % kThreads == 0,
                "the threads must cover whole rows and whole columns of the tile");
  static constexpr int kPerThread = kRows * kCols / kThreads;
  Acc v[kPerThread];

  // Element i of thread t is element t + i * kThreads of the tile in walk order, which (kThreads
  // being a multiple of both extents) is (r0 + i * dr, c0 + i * dc): one pointer and one stride per
  // thread instead of kPerThread 64-bit offsets.
  struct Walk {
    int r0, c0, dr, dc;
  };
  __device__ __forceinline__ static Walk walk(int t, bool rows_fastest) {
    if (rows_fastest) return {t % kRows, t / kRows, 0, kThreads / kRows};
    return {t / kCols, t % kCols, kThreads / kCols, 0};
  }

  // origin: element (0, 0) of the tile; rows_left / cols_left: how many of its rows / columns lie
  // inside the matrix (at most kRows / kCols).
  template <class T>
  __device__ __forceinline__ void fetch(const T* origin, int64_t row_stride, int64_t col_stride, int rows_left,
                                        int cols_left, int t, bool rows_fastest) {
    const Walk w = walk(t, rows_fastest);
    const T* src = origin + w.r0 * row_stride + w.c0 * col_stride;
    const int64_t step = w.dr * row_stride + w.dc * col_stride;
#pragma unroll
    for (int i = 0; i < kPerThread; ++i) {
      if (w.r0 + i * w.dr < rows_left && w.c0 + i * w.dc < cols_left) {
        const T x = src[i * step];
        if constexpr (std::is_same<Acc, T>::value) v[i] = x;
        else v[i] = cast_value<Acc>(x);
      } else {
        v[i] = cast_value<Acc>(0.0f);
      }
    }
  }

  // Writes element (r, c) to dst[r * dst_row + c * dst_col].
  __device__ __forceinline__ void store(Acc* dst, int dst_row, int dst_col, int t, bool rows_fastest) const {
    const Walk w = walk(t, rows_fastest);
    Acc* d = dst + w.r0 * dst_row + w.c0 * dst_col;
    const int step = w.dr * dst_row + w.dc * dst_col;
#pragma unroll
    for (int i = 0; i < kPerThread; ++i) d[i * step] = v[i];
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
