#pragma once
#include "gpuprims/core/error.hpp"
#include "gpuprims/core/tensor_view.hpp"
#include "gpuprims/norms/norm_params.hpp"
#include "gpuprims/norms/column_shape.hpp"

namespace gpuprims {
namespace norms {

// Rows of x and y along `axis` (already in [0, ndim)), the other dimensions merged where both
// arrays allow. x and y must have the same shape (checked by the caller). ValueError when more
// than kMaxDims other dimensions remain after merging.
Status make_row_layout(const TensorView& x, const TensorView& y, int axis, const char* op, RowLayout* out);

// Whether every row of x and y starts 16-byte aligned, is contiguous and is a whole number of
// 16-byte vectors long (of x's dtype), so kernels may use 16-byte accesses only. Where y_dtype
// differs from x's (the softmax kind's dtype=), y's rows hold the outputs of x's 16-byte slots, 8
// bytes (float32 -> fp16) or 32 (fp16 -> float32) each, aligned to that size up to 16.
// x and y must be element-aligned (as for rows_ragged_vectors, which this is with x's rows aligned).
bool rows_vector_aligned(const RowLayout& layout, const void* x, const void* y, DType dtype, DType y_dtype);

// Whether every row of x and y is contiguous and misaligned alike: wherever x's row reaches its
// first 16-byte boundary, y's row, as many elements in, is as aligned as rows_vector_aligned asks
// (its unit: the outputs of one 16-byte vector of x, up to 16 bytes). Then a kernel can walk both
// rows as whole vectors from there, and the rest element by element (row_on_chip's and the
// softmax kind's cluster_row's ragged kernels, RaggedRow). x and y must be element-aligned.
bool rows_ragged_vectors(const RowLayout& layout, const void* x, const void* y, DType dtype, DType y_dtype);

// Whether x's rows, and y's, lie back to back: unit element stride, each row starting where the
// previous one ends (one contiguous run of num_rows * row_len elements), rows not empty.
// row_on_chip's kStaged kernels copy runs of such rows through shared memory (row_staged.cuh).
bool rows_back_to_back(const RowLayout& layout);

// Whether the rows lie side by side -- the row axis strided, the innermost other dimension of unit
// stride in x and y, at least kColumnMinWidth rows long -- and if so their shape for
// column_rows_kernel (column_rows.cuh): `width` adjacent rows a plane, groups of kColumnLanes.
// Narrower, most of a warp's lanes would idle: 16 rows wide read 22.3 % of copy against
// row_on_chip's 19.8 % (session 48 run 5, softmax 8192 x 64 x 16 float32, axis 1); narrower not measured.
constexpr int64_t kColumnMinWidth = 16;
bool rows_side_by_side(const RowLayout& layout, ColumnShape* shape = nullptr);

// Whether such rows of x can be staged by column_staged_kernel (column_staged.cuh): every run of a
// group's elements (32 adjacent rows at one position) starts 16-byte aligned and every 16-byte
// piece of it lies inside its plane -- x aligned, and the row stride, the plane strides and the
// width multiples of 16 bytes.
bool rows_side_by_side_staged(const RowLayout& layout, const void* x, DType dtype);

}  // namespace norms
}  // namespace gpuprims
