// make_rows: the row layout of a top-k call.
#include <string>

#include "launch.hpp"

namespace gpuprims {
namespace topk_detail {

Status make_rows(const TensorView& x, const TensorView& values, const TensorView& indices, int axis, int64_t k,
                 TopkRows* rows) {
  TopkRows& l = *rows;
  l = TopkRows{};
  l.row_len = x.shape[axis];
  l.k = k;
  l.x_stride = x.strides[axis];
  l.values_stride = values.strides[axis];
  l.indices_stride = indices.strides[axis];
  l.num_rows = 1;
  // Outer dimensions in C order, size-1 ones dropped; one folds into the previous one when
  // stepping the previous once is stepping it `size` times, in all three arrays.
  int n = 0;
  for (int d = 0; d < x.ndim; ++d) {
    if (d == axis) continue;
    const int64_t size = x.shape[d];
    l.num_rows *= size;
    if (size == 1) continue;
    if (n > 0 && l.x_outer[n - 1] == size * x.strides[d] &&
        l.values_outer[n - 1] == size * values.strides[d] && l.indices_outer[n - 1] == size * indices.strides[d]) {
      l.outer_sizes[n - 1] *= size;
      l.x_outer[n - 1] = x.strides[d];
      l.values_outer[n - 1] = values.strides[d];
      l.indices_outer[n - 1] = indices.strides[d];
      continue;
    }
    if (n == kMaxDims) {
      return value_error("topk: argument 'x': expected at most " + std::to_string(kMaxDims) +
                         " dimensions besides the axis after merging contiguous ones, got more (make the array "
                         "contiguous first)");
    }
    l.outer_sizes[n] = size;
    l.x_outer[n] = x.strides[d];
    l.values_outer[n] = values.strides[d];
    l.indices_outer[n] = indices.strides[d];
    ++n;
  }
  l.outer_ndim = n;
  for (int i = 0; i < n; ++i) l.outer_divmod[i] = FastDivmod64(l.outer_sizes[i] > 0 ? l.outer_sizes[i] : 1);
  return Status::ok();
}

}  // namespace topk_detail
}  // namespace gpuprims
