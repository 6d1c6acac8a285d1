#pragma once
// What the top-k kernels (and the CPU reference) receive: the rows of x, of the values and of the
// indices, and the ranking. Plain C++, shared by host and device code.
#include <cstdint>

#include "gpuprims/core/config.hpp"
#include "gpuprims/core/fast_divmod.hpp"

namespace gpuprims {
namespace topk_detail {

// `num_rows` rows: row r of x has `row_len` elements, element i at x + x_offset(r) + i * x_stride;
// row r of the values and of the indices has k elements likewise. Rows are numbered in C order
// over the dimensions other than the axis, merged where all three arrays allow.
struct TopkRows {
  int64_t num_rows = 0;
  int64_t row_len = 0;
  int64_t k = 0;
  int64_t x_stride = 1, values_stride = 1, indices_stride = 1;
  int outer_ndim = 0;  // the other dimensions after merging, outermost first
  int64_t outer_sizes[kMaxDims] = {};
  int64_t x_outer[kMaxDims] = {}, values_outer[kMaxDims] = {}, indices_outer[kMaxDims] = {};
  FastDivmod64 outer_divmod[kMaxDims];  // by outer_sizes[d], for d >= 1

  struct Offsets { int64_t x, values, indices; };

  GPUPRIMS_HD Offsets offsets(int64_t row) const {
    Offsets o{0, 0, 0};
#if defined(__CUDA_ARCH__)
#pragma unroll 1
#endif
    for (int d = outer_ndim - 1; d > 0; --d) {  // the outermost needs no division: in range
      const int64_t q = outer_divmod[d].div(row);
      const int64_t i = row - q * outer_sizes[d];
      o.x += i * x_outer[d];
      o.values += i * values_outer[d];
      o.indices += i * indices_outer[d];
      row = q;
    }
    if (outer_ndim > 0) {
      o.x += row * x_outer[0];
      o.values += row * values_outer[0];
      o.indices += row * indices_outer[0];
    }
    return o;
  }
};

struct TopkParams {
  const void* x = nullptr;
  void* values = nullptr;   // x's dtype
  int64_t* indices = nullptr;
  TopkRows rows;
  bool largest = true;
};

}  // namespace topk_detail
}  // namespace gpuprims
