// Scan layout: the scanned axis and the other dimensions merged into as few as possible.
#include <string>

#include "layout.hpp"

namespace gpuprims {
namespace scan_detail {

Status make_scan_layout(const TensorView& in, const TensorView& out, int axis, ScanLayout* layout) {
  ScanLayout t;
  t.len = in.shape[axis];
  t.in_step = in.strides[axis];
  t.out_step = out.strides[axis];
  t.rows = 1;
  t.row_ndim = 0;
  for (int d = 0; d < in.ndim; ++d) {
    if (d == axis || in.shape[d] == 1) continue;
    t.rows *= in.shape[d];
    const int last = t.row_ndim - 1;
    // Merge into the previous kept dimension when both arrays step over it contiguously.
    if (last >= 0 && t.row_in_strides[last] == in.shape[d] * in.strides[d] &&
        t.row_out_strides[last] == in.shape[d] * out.strides[d]) {
      t.row_shape[last] *= in.shape[d];
      t.row_in_strides[last] = in.strides[d];
      t.row_out_strides[last] = out.strides[d];
      continue;
    }
    if (t.row_ndim == kMaxDims) {
      return value_error("scan: argument 'x': expected at most " + std::to_string(kMaxDims) +
                         " dimensions besides the axis after merging contiguous ones, got an array of shape " +
                         shape_string(in) + " with more (copy it to a contiguous layout first)");
    }
    t.row_shape[t.row_ndim] = in.shape[d];
    t.row_in_strides[t.row_ndim] = in.strides[d];
    t.row_out_strides[t.row_ndim] = out.strides[d];
    ++t.row_ndim;
  }
  *layout = t;
  return Status::ok();
}

}  // namespace scan_detail
}  // namespace gpuprims
