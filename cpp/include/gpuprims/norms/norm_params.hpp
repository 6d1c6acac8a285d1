#pragma once
// What every norms kernel (and the CPU reference) receives: the rows of x and y, the optional
// affine vectors and statistics outputs, and the op. Plain C++, shared by host and device code.
#include <cstdint>

#include "gpuprims/core/config.hpp"
#include "gpuprims/core/dtype.hpp"
#include "gpuprims/core/fast_divmod.hpp"
#include "gpuprims/norms.hpp"

namespace gpuprims {
namespace norms {

// `num_rows` rows of `row_len` elements. Row r of x starts at x + x_row_offset(r) and its element
// i is at + i * x_elem_stride (likewise y). Rows are numbered in C order over the dimensions other
// than the row axis, which is also the order of the compact statistics outputs.
struct RowLayout {
  int64_t num_rows = 0;
  int64_t row_len = 0;
  int64_t x_elem_stride = 1;
  int64_t y_elem_stride = 1;
  int outer_ndim = 0;  // the other dimensions after merging, outermost first
  int64_t outer_sizes[kMaxDims] = {};
  int64_t x_outer_strides[kMaxDims] = {};
  int64_t y_outer_strides[kMaxDims] = {};
  FastDivmod64 outer_divmod[kMaxDims];  // by outer_sizes[d], for d >= 1

  GPUPRIMS_HD int64_t x_row_offset(int64_t row) const { return offset_of(row, x_outer_strides); }
  GPUPRIMS_HD int64_t y_row_offset(int64_t row) const { return offset_of(row, y_outer_strides); }

 private:
  // The outermost dimension needs no division: the index is in range.
  GPUPRIMS_HD int64_t offset_of(int64_t index, const int64_t* strides) const {
    int64_t off = 0;
#if defined(__CUDA_ARCH__)
#pragma unroll 1
#endif
    for (int d = outer_ndim - 1; d > 0; --d) {
      const int64_t q = outer_divmod[d].div(index);
      off += (index - q * outer_sizes[d]) * strides[d];
      index = q;
    }
    return outer_ndim > 0 ? off + index * strides[0] : 0;
  }
};

// The two families of row computation: softmax-like (max, then sum of exp) and norm-like (mean,
// then centered second moment). log_softmax and rms_norm are runtime flags of these, so each
// kernel is instantiated per (dtype, kind) rather than per op.
enum class RowKind { kSoftmax, kNorm };

constexpr RowKind row_kind(NormOp op) {
  return (op == NormOp::kSoftmax || op == NormOp::kLogSoftmax) ? RowKind::kSoftmax : RowKind::kNorm;
}

struct NormParams {
  const void* x = nullptr;
  void* y = nullptr;
  const void* weight = nullptr;  // row_len elements of x's dtype, or null
  const void* bias = nullptr;
  int64_t weight_stride = 1;
  int64_t bias_stride = 1;
  // Statistics outputs, or null: compact, one value per row in the statistics type (float, or
  // double for float64 inputs), row r at index r.
  void* mean = nullptr;
  void* rstd = nullptr;
  RowLayout layout;
  double eps = 0.0;
  bool log = false;     // softmax kind: log_softmax
  bool center = true;   // norm kind: layer_norm (false: rms_norm, the mean is taken as 0)
  // add_layer_norm / add_rms_norm (row_on_chip kernels only): the row normalized is x + residual,
  // rounded to x's dtype and written to `sum`; residual_layout lays out (residual, sum).
  const void* residual = nullptr;
  void* sum = nullptr;
  RowLayout residual_layout;
  // Every row of x and y (and residual, sum) starts 16-byte aligned with unit element stride, and
  // the affine vectors are contiguous and aligned: the kernels may use 16-byte vector accesses.
  bool vec_ok = false;
  // Rows not vec_ok: every row of x and y has unit element stride, y's row
  // starts as far into its aligned unit as x's row into its 16-byte vector (rows_ragged_vectors),
  // and the affine vectors are contiguous and 16-byte aligned: row_on_chip's ragged kernels (and
  // the softmax kind's in cluster_row; not the add-norms') may read and write the whole vectors
  // inside each row and its ends element by element (RaggedRow, row_tile.cuh).
  bool ragged = false;
};

// What the backward kernels (and the CPU reference) receive. Rows are numbered as in RowLayout;
// dy_layout lays out (dy, dx) and saved_layout (saved, dx): two layouts because the dimensions
// that merge can differ between the pairs, while the row numbering (C order) is the same.
struct NormBackwardParams {
  const void* dy = nullptr;
  const void* saved = nullptr;  // y for the softmax kind, x for the norm kind
  void* dx = nullptr;
  const void* weight = nullptr;  // or null (weight 1)
  int64_t weight_stride = 1;
  const void* mean = nullptr;  // compact statistics as the forward writes them; null for rms_norm
  const void* rstd = nullptr;
  RowLayout dy_layout;
  RowLayout saved_layout;
  // Per-group partial sums of dy * xhat and dy (the statistics type), `row_len` values per group,
  // group g at g * row_len; null when the gradient is not wanted.
  void* dweight_partial = nullptr;
  void* dbias_partial = nullptr;
  bool log = false;     // softmax kind: log_softmax
  bool center = true;   // norm kind: layer_norm (false: rms_norm)
  // dy, saved and dx rows 16-byte aligned, contiguous, whole vectors; weight contiguous, aligned.
  bool vec_ok = false;
};

}  // namespace norms
}  // namespace gpuprims
