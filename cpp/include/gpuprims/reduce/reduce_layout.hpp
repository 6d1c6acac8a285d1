#pragma once
// ReduceLayout: any reduction as `num_rows` independent reductions of `row_len` elements each.
// Row r reads from in + in_row_offset(r) + elem_offset(i), i < row_len, and writes its result at
// out + out_offset(r). Dimensions are merged where memory allows, so the common cases (a contiguous
// array, rows of a matrix) reach kernels as one flat, contiguous run per row.
#include <cstdint>

#include "gpuprims/core/config.hpp"

namespace gpuprims {

struct ReduceLayout {
  int64_t num_rows = 1;
  int64_t row_len = 0;
  bool row_contiguous = true;  // elem_offset(i) == i

  // Reduced dimensions, outermost first (elements of one row). Strides are in elements, >= 0.
  int red_ndim = 0;
  int64_t red_sizes[kMaxDims] = {};
  int64_t red_strides[kMaxDims] = {};

  // Kept dimensions, outermost first (which row), with input and output strides in elements.
  int keep_ndim = 0;
  int64_t keep_sizes[kMaxDims] = {};
  int64_t keep_in_strides[kMaxDims] = {};
  int64_t keep_out_strides[kMaxDims] = {};

  GPUPRIMS_HD int64_t elem_offset(int64_t i) const {
    return row_contiguous ? i : offset_of(i, red_ndim, red_sizes, red_strides);
  }
  GPUPRIMS_HD int64_t in_row_offset(int64_t row) const {
    return offset_of(row, keep_ndim, keep_sizes, keep_in_strides);
  }
  GPUPRIMS_HD int64_t out_offset(int64_t row) const {
    return offset_of(row, keep_ndim, keep_sizes, keep_out_strides);
  }

 private:
  // Linear index -> memory offset. The outermost dimension needs no modulo (the index is in range),
  // so a single dimension costs one multiply and no 64-bit division.
  GPUPRIMS_HD static int64_t offset_of(int64_t index, int ndim, const int64_t* sizes, const int64_t* strides) {
    int64_t off = 0;
    for (int d = ndim - 1; d > 0; --d) {
      off += (index % sizes[d]) * strides[d];
      index /= sizes[d];
    }
    return ndim > 0 ? off + index * strides[0] : 0;
  }
};

}  // namespace gpuprims
