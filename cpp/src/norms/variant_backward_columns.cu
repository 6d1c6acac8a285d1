// columns (backward of softmax / log_softmax): rows that lie side by side (column_backward.cuh);
// row_on_chip for every other layout.
#include "gpuprims/norms/column_staged.cuh"
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
  const bool staged = l.params.dy_layout.row_len > kColumnStagedMinLen &&
                      rows_side_by_side_staged(l.params.dy_layout, l.params.dy, l.dtype) &&
                      rows_side_by_side_staged(l.params.saved_layout, l.params.saved, l.dtype);
  return visit_float_dtype(l.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    // y and dy held: half the forward's elements a thread (the same registers). The staged kernel
    // takes the same shapes, so that its results are bitwise the register kernel's.
    constexpr int kHeld = sizeof(T) == 8 ? 4 : 8;
    const int64_t n = l.params.dy_layout.row_len;
    return run_column_block<T, kHeld>(n, [&](auto block) {
      using B = decltype(block);
      const void* staged_kernel = nullptr;
      if constexpr (column_block_staged<B>()) {
        if (staged) {
          staged_kernel = reinterpret_cast<const void*>(&column_softmax_backward_staged_kernel<T, B::kSlices, B::kGroups>);
        }
      }
      return launch_column_block<B>(
          l, shape, staged_kernel, column_staged_bytes<T, B::kGroups, 2>(n),
          reinterpret_cast<const void*>(&column_softmax_backward_kernel<T, B::kSlices, B::kGroups, B::kHeld>));
    });
  });
}

}  // namespace norms
}  // namespace gpuprims
