// columns (backward of softmax / log_softmax): rows that lie side by side (column_backward.cuh);
// row_on_chip for every other layout.
#include "gpuprims/norms/column_backward.cuh"
#include "backward_launch.hpp"
#include "column_launch.cuh"
#include "layout.hpp"

namespace gpuprims {
namespace norms {

bool backward_rows_side_by_side(const NormBackwardLaunch& l, ColumnShape* shape) {
  ColumnShape saved;
  return row_kind(l.op) == RowKind::kSoftmax && rows_side_by_side(l.params.dy_layout, shape) &&
         rows_side_by_side(l.params.saved_layout, &saved);
}

Status norms_backward_columns(const NormBackwardLaunch& l) {
  ColumnShape shape;
  if (!backward_rows_side_by_side(l, &shape)) return norms_backward_row_on_chip(l);
  return visit_float_dtype(l.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    // y and dy held: half the forward's elements a thread (the same registers).
    constexpr int kHeld = sizeof(T) == 8 ? 4 : 8;
    return run_column_block<T, kHeld>(l.params.dy_layout.row_len, [&](auto block) {
      using B = decltype(block);
      const void* kernel = reinterpret_cast<const void*>(&column_softmax_backward_kernel<T, B::kSlices, B::kGroups, B::kHeld>);
      return launch_column_kernel<B>(kernel, l.params, shape, norm_op_name(l.op),
                                     l.stream);
    });
  });
}

}  // namespace norms
}  // namespace gpuprims
