#pragma once
// How a scan along one axis sees its arrays: `rows` independent rows of `len` items. Item i of a
// row lives at row_offset + i * step (step may be any nonzero or negative stride); the row offsets
// come from the other dimensions, merged where both arrays allow it. Plain struct, passed by value
// to kernels.
//
// In place: scan() accepts out = x, so no scan kernel marks its input and output __restrict__. An
// exclusive scan stores item i's value before item i is needed (it depends on the items before),
// so with the two pointers declared disjoint the compiler may issue that store ahead of the load of
// item i from the same address, which then reads the stored value: session 20's fuzzer caught the
// column scan doing so (uint64 min, exclusive, out = x: the first item's identity read back as the
// first item).
#include <cstdint>

#include "gpuprims/core/config.hpp"

namespace gpuprims {
namespace scan_detail {

// Where tile `tile` of a row-major tiling (tiles_per_row tiles of tile_items items per row) lies.
struct TileCoords {
  int64_t chunk;       // the tile's index within its row
  int64_t begin;       // its first item within the row
  int64_t in_offset;   // element offsets of its row
  int64_t out_offset;
};

struct ScanLayout {
  int64_t len = 0;       // items per row (the scanned axis)
  int64_t in_step = 1;   // element stride along the axis, input
  int64_t out_step = 1;  // element stride along the axis, output
  int64_t rows = 1;      // product of the other dimensions
  int row_ndim = 0;      // merged other dimensions, outermost first
  int64_t row_shape[kMaxDims];
  int64_t row_in_strides[kMaxDims];
  int64_t row_out_strides[kMaxDims];

  // Element offsets of row `row` in the input and the output.
  GPUPRIMS_HD void row_offsets(int64_t row, int64_t* in_off, int64_t* out_off) const {
    int64_t i = 0, o = 0;
    for (int d = row_ndim - 1; d >= 0; --d) {
      const int64_t size = row_shape[d];
      const int64_t index = row % size;
      row /= size;
      i += index * row_in_strides[d];
      o += index * row_out_strides[d];
    }
    *in_off = i;
    *out_off = o;
  }

  GPUPRIMS_HD TileCoords tile_coords(int64_t tile, int64_t tiles_per_row, int64_t tile_items) const {
    const int64_t row = tile / tiles_per_row;
    TileCoords c;
    c.chunk = tile - row * tiles_per_row;
    c.begin = c.chunk * tile_items;
    row_offsets(row, &c.in_offset, &c.out_offset);
    return c;
  }

  // Whether every row of an array starts at a multiple of `align_elems` from the base.
  bool rows_aligned(const int64_t* strides, int64_t align_elems) const {
    for (int d = 0; d < row_ndim; ++d)
      if (strides[d] % align_elems != 0) return false;
    return true;
  }
};

}  // namespace scan_detail
}  // namespace gpuprims
