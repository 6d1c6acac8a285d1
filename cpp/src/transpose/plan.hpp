#pragma once
// The copy behind transpose() reduced to the fewest dimensions: size-1 dimensions dropped and
// neighbours that are contiguous on both sides merged, then cut into the launch parameters of the
// chosen kernel shape (transpose_params.hpp).
#include <cstdint>

#include "gpuprims/core/error.hpp"
#include "gpuprims/core/tensor_view.hpp"
#include "gpuprims/transpose/transpose_params.hpp"

namespace gpuprims {
namespace transpose_detail {

// The merged dimensions in the output's order, outermost first (element strides).
struct MergedDims {
  int ndim = 0;
  int64_t extent[kMaxArrayDims];
  int64_t src[kMaxArrayDims];
  int64_t dst[kMaxArrayDims];
  bool empty = false;  // some extent is 0: nothing to copy
};

// Dimension k of the output has extent out.shape[k], source stride x.strides[axes[k]] and
// destination stride out.strides[k]; axes already validated and non-negative.
MergedDims merge_dims(const TensorView& x, const int64_t* axes, const TensorView& out);

// The two fast axes of a merged copy: i, the source's densest (smallest |stride|; the
// destination's own on a tie, then the innermost), and j, the destination's.
struct FastAxes {
  int i, j;
};
FastAxes fast_axes(const MergedDims& m);

// Launch parameters of each kernel shape, for tiles of tile_i x tile_j elements. ValueError (naming
// op) when more than kMaxCopyDims dimensions are left for the kernel to decode.
Status elementwise_params(const MergedDims& m, const void* src, void* dst, const char* op, ElementwiseParams* p);
Status tile_params(const MergedDims& m, FastAxes axes, int64_t tile_i, int64_t tile_j, const void* src, void* dst,
                   const char* op, TileParams* p);
Status row_params(const MergedDims& m, int axis, size_t elem_size, const void* src, void* dst, const char* op,
                  RowParams* p);

}  // namespace transpose_detail
}  // namespace gpuprims
