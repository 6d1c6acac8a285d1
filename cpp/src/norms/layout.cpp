#include "layout.hpp"

#include <algorithm>
#include <cstdint>
#include <string>

namespace gpuprims {
namespace norms {

Status make_row_layout(const TensorView& x, const TensorView& y, int axis, const char* op, RowLayout* out) {
  RowLayout& l = *out;
  l = RowLayout{};
  l.row_len = x.shape[axis];
  l.x_elem_stride = x.strides[axis];
  l.y_elem_stride = y.strides[axis];
  l.num_rows = 1;
  // Outer dimensions in order; size-1 dimensions dropped; a dimension folds into the previous one
  // when stepping the previous once equals stepping it `size` times, in x and in y alike.
  int n = 0;
  int64_t sizes[kMaxArrayDims], xs[kMaxArrayDims], ys[kMaxArrayDims];
  for (int d = 0; d < x.ndim; ++d) {
    if (d == axis) continue;
    l.num_rows *= x.shape[d];
    if (x.shape[d] == 1) continue;
    if (n > 0 && xs[n - 1] == x.shape[d] * x.strides[d] && ys[n - 1] == x.shape[d] * y.strides[d]) {
      sizes[n - 1] *= x.shape[d];
      xs[n - 1] = x.strides[d];
      ys[n - 1] = y.strides[d];
      continue;
    }
    sizes[n] = x.shape[d];
    xs[n] = x.strides[d];
    ys[n] = y.strides[d];
    ++n;
  }
  if (n > kMaxDims) {
    return value_error(std::string(op) + ": arguments 'x' and 'out': expected at most " + std::to_string(kMaxDims) +
                       " dimensions besides the row axis after merging contiguous ones, got " + std::to_string(n) +
                       " (make the array contiguous first)");
  }
  l.outer_ndim = n;
  for (int i = 0; i < n; ++i) {
    l.outer_sizes[i] = sizes[i];
    l.x_outer_strides[i] = xs[i];
    l.y_outer_strides[i] = ys[i];
    l.outer_divmod[i] = FastDivmod64(sizes[i] > 0 ? sizes[i] : 1);  // no rows at all when a size is 0
  }
  return Status::ok();
}

bool rows_side_by_side(const RowLayout& l, ColumnShape* shape) {
  if (l.outer_ndim < 1 || l.x_elem_stride == 1) return false;
  const int inner = l.outer_ndim - 1;
  if (l.x_outer_strides[inner] != 1 || l.y_outer_strides[inner] != 1) return false;
  const int64_t width = l.outer_sizes[inner];
  if (width < kColumnMinWidth) return false;
  if (shape != nullptr) {
    shape->width = width;
    shape->groups_per_plane = (width + kColumnLanes - 1) / kColumnLanes;
    shape->plane_of = FastDivmod64(shape->groups_per_plane);
    shape->groups = l.num_rows / width * shape->groups_per_plane;
  }
  return true;
}

bool rows_side_by_side_staged(const RowLayout& l, const void* x, DType dtype) {
  const int64_t lanes = 16 / static_cast<int64_t>(dtype_size(dtype));
  if (!rows_side_by_side(l) || reinterpret_cast<uintptr_t>(x) % 16 != 0 || l.x_elem_stride % lanes != 0) return false;
  for (int d = 0; d < l.outer_ndim; ++d) {  // the innermost: the width, for unit stride
    if ((d == l.outer_ndim - 1 ? l.outer_sizes[d] : l.x_outer_strides[d]) % lanes != 0) return false;
  }
  return true;
}

bool rows_vector_aligned(const RowLayout& l, const void* x, const void* y, DType dtype, DType y_dtype) {
  // x's rows whole aligned 16-byte vectors (every slot of a row full or empty), and y's rows
  // misaligned as x's, i.e. aligned too: its unit, the outputs of one 16-byte slot of x (8, 16 or
  // 32 bytes), aligned to its size up to 16 (rows_ragged_vectors).
  const int64_t lanes = 16 / static_cast<int64_t>(dtype_size(dtype));
  if (l.row_len % lanes != 0 || reinterpret_cast<uintptr_t>(x) % 16 != 0) return false;
  for (int d = 0; d < l.outer_ndim; ++d) {
    if (l.x_outer_strides[d] % lanes != 0) return false;
  }
  return rows_ragged_vectors(l, x, y, dtype, y_dtype);
}

bool rows_ragged_vectors(const RowLayout& l, const void* x, const void* y, DType dtype, DType y_dtype) {
  if ((l.x_elem_stride != 1 || l.y_elem_stride != 1) && l.row_len > 1) return false;
  const int64_t elem = static_cast<int64_t>(dtype_size(dtype));
  const int64_t y_elem = static_cast<int64_t>(dtype_size(y_dtype));
  // x's row reaches a 16-byte boundary after r elements (x's element index + r = 0 modulo
  // 16 / elem); y's aligned unit holds g elements, a divisor of 16 / elem, so y's row + r is
  // aligned exactly when y's element index = x's modulo g, for every row.
  const int64_t g = std::min<int64_t>(16 / elem, 16 / y_elem);
  const auto residue = [g](int64_t v) { return ((v % g) + g) % g; };
  const auto x_index = static_cast<int64_t>(reinterpret_cast<uintptr_t>(x) / elem);
  const auto y_index = static_cast<int64_t>(reinterpret_cast<uintptr_t>(y) / y_elem);
  if (residue(x_index) != residue(y_index)) return false;
  for (int d = 0; d < l.outer_ndim; ++d) {
    if (residue(l.x_outer_strides[d]) != residue(l.y_outer_strides[d])) return false;
  }
  return true;
}

bool rows_back_to_back(const RowLayout& l) {
  if (l.row_len < 1 || l.x_elem_stride != 1 || l.y_elem_stride != 1 || l.outer_ndim > 1) return false;
  return l.outer_ndim == 0 || (l.x_outer_strides[0] == l.row_len && l.y_outer_strides[0] == l.row_len);
}

}  // namespace norms
}  // namespace gpuprims
