#pragma once
// What the transpose kernels receive: the copy out[...] = x[...] reduced to its merged dimensions
// (cpp/src/transpose/plan.cpp builds it). Plain C++, shared by host and device code.
#include <cstdint>

#include "gpuprims/core/config.hpp"
#include "gpuprims/core/fast_divmod.hpp"

namespace gpuprims {
namespace transpose_detail {

// Dimensions a kernel decodes, left after size-1 dimensions are dropped and neighbours that are
// contiguous on both sides are merged (twice the other families' kMaxDims: a permutation keeps
// more dimensions apart than a reduction or a scan does). More is a ValueError; numpy allows 64.
constexpr int kMaxCopyDims = 16;

// Dimensions walked by a decoded index, outermost first: extent, the divisor of the index by the
// extent, and the element strides of the source and the destination.
struct DimWalk {
  int ndim = 0;
  int64_t extent[kMaxCopyDims];
  FastDivmod64 divide[kMaxCopyDims];
  int64_t src_stride[kMaxCopyDims];
  int64_t dst_stride[kMaxCopyDims];

  // Element offsets (source, destination) of flat index `index` in [0, product of extents), the
  // last dimension fastest.
  GPUPRIMS_HD void offsets(int64_t index, int64_t* src, int64_t* dst) const {
    int64_t s = 0, d = 0;
    for (int k = ndim - 1; k >= 0; --k) {
      const int64_t q = divide[k].div(index);
      const int64_t r = index - q * extent[k];
      s += r * src_stride[k];
      d += r * dst_stride[k];
      index = q;
    }
    *src = s;
    *dst = d;
  }
};

// The element-wise copy of every merged dimension (naive): dims ordered so that the destination's
// fastest dimension is last.
struct ElementwiseParams {
  const void* src;
  void* dst;
  int64_t count;  // elements
  DimWalk dims;
};

// A tiled copy between two fast axes: i, along which the source is densest (its smallest stride),
// and j, along which the destination is. Tiles cover i x j; the other dimensions form the batch.
struct TileParams {
  const void* src;
  void* dst;
  int64_t ni, nj;             // extents of the two tile axes
  int64_t src_i, src_j;       // source strides along i and j (elements)
  int64_t dst_i, dst_j;       // destination strides along i and j
  int64_t tiles_i, tiles_j;   // tiles along each axis (of the kernel's tile size)
  int64_t tiles;              // tiles_i * tiles_j * batch count
  FastDivmod64 div_tiles_i;   // by tiles_i
  FastDivmod64 div_tile_rows; // by tiles_i * tiles_j (tiles per batch entry)
  DimWalk batch;              // the other dimensions
};

// Rows along one axis that is the fastest on both sides (a permutation of outer axes only, or an
// out= whose strides follow x's): each row is a contiguous or strided run copied as is.
struct RowParams {
  const void* src;
  void* dst;
  int64_t row_len;           // elements of a row
  int64_t src_step, dst_step;  // element strides along the row
  int64_t rows;              // rows (the batch count)
  DimWalk batch;
  bool vectors;              // unit steps, every row start and row_len a whole number of 16-byte vectors
};

}  // namespace transpose_detail
}  // namespace gpuprims
