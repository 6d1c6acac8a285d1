#pragma once
#include "gpuprims/core/error.hpp"
#include "gpuprims/core/tensor_view.hpp"
#include "gpuprims/norms/norm_params.hpp"

namespace gpuprims {
namespace norms {

// Rows of x and y along `axis` (already in [0, ndim)), the other dimensions merged where both
// arrays allow. x and y must have the same shape (checked by the caller). ValueError when more
// than kMaxDims other dimensions remain after merging.
Status make_row_layout(const TensorView& x, const TensorView& y, int axis, const char* op, RowLayout* out);

// Whether every row of x and y starts 16-byte aligned, is contiguous and is a whole number of
// 16-byte vectors long, so kernels may use 16-byte accesses only.
bool rows_vector_aligned(const RowLayout& layout, const void* x, const void* y, DType dtype);

}  // namespace norms
}  // namespace gpuprims
