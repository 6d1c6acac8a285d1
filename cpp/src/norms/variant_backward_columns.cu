// columns (backward of every op): rows that lie side by side (column_backward.cuh); row_on_chip for
// every other layout, and for norm-kind rows longer than the held slots.
#include "gpuprims/norms/column_staged.cuh"
#include "backward_launch.hpp"
#include "column_launch.cuh"
#include "layout.hpp"

namespace gpuprims {
namespace norms {
namespace {

// y (or x) and dy held: half the forward's elements a thread (the same registers).
template <class T>
constexpr int kBackwardHeld = sizeof(T) == 8 ? 4 : 8;

// The norm kind's longest rows: those of the held shapes, since its column sums are kept per held slot.
int64_t norm_rows_max_len(DType dtype) {
  return visit_float_dtype(dtype, [](auto tag) {
    using T = typename decltype(tag)::type;
    return kColumnHeldLen<T, kBackwardHeld<T>>;
  });
}

// The softmax kind: staged (the staged shapes' share of a row a thread) or in registers.
template <class T>
Status launch_softmax_columns(const NormBackwardLaunch& l, const ColumnShape& shape, bool staged) {
  const int64_t n = l.params.dy_layout.row_len;
  if (staged) {
    bool launched = false;
    const Status status = launch_column_staged<T, kColumnHeldLen<T, kBackwardHeld<T>>, 2>(
        l, shape, n,
        [](auto block) {
          using B = decltype(block);
          return reinterpret_cast<const void*>(
              &column_backward_staged_kernel<T, RowKind::kSoftmax, B::kSlices, B::kGroups, kBackwardHeld<T>>);
        },
        &launched);
    if (!status.is_ok() || launched) return status;
  }
  return run_column_block<T, kBackwardHeld<T>>(n, [&](auto block) {
    using B = decltype(block);
    return launch_column_registers<B>(
        l, shape,
        reinterpret_cast<const void*>(&column_backward_kernel<T, RowKind::kSoftmax, B::kSlices, B::kGroups, B::kHeld>));
  });
}

// The norm kind: its column sums are kept per held slot, so the staged kernel takes the register
// kernel's shape (B), and the grid is resident either way: one partial row of column sums per group.
template <class T, class B>
Status launch_norm_columns(const NormBackwardLaunch& l, const ColumnShape& shape, bool staged) {
  const int64_t n = l.params.dy_layout.row_len;
  const void* staged_kernel = nullptr;
  if constexpr (column_block_staged<B>()) {
    if (staged) {
      staged_kernel =
          reinterpret_cast<const void*>(&column_backward_staged_kernel<T, RowKind::kNorm, B::kSlices, B::kGroups, B::kHeld>);
    }
  }
  const void* register_kernel =
      reinterpret_cast<const void*>(&column_backward_kernel<T, RowKind::kNorm, B::kSlices, B::kGroups, B::kHeld>);
  ColumnLaunchPlan plan;
  GPUPRIMS_TRY(plan_column_block<B>(l, shape, staged_kernel, column_staged_bytes<T, B::kGroups, 2>(n), register_kernel,
                                    &plan));
  const int64_t groups = plan.blocks * B::kGroups;
  NormBackwardParams params = l.params;
  StreamScratch scratch;
  GPUPRIMS_TRY(allocate_backward_partials(l, groups, &params, &scratch));
  GPUPRIMS_TRY(launch_column_plan<B>(l, params, shape, plan));
  return backward_column_sums(l, params.dweight_partial, params.dbias_partial, groups);
}

}  // namespace

bool backward_rows_side_by_side(const NormBackwardLaunch& l, ColumnShape* shape) {
  ColumnShape saved;
  if (!rows_side_by_side(l.params.dy_layout, shape) || !rows_side_by_side(l.params.saved_layout, &saved)) return false;
  return row_kind(l.op) == RowKind::kSoftmax || l.params.dy_layout.row_len <= norm_rows_max_len(l.dtype);
}

Status norms_backward_columns(const NormBackwardLaunch& l) {
  ColumnShape shape;
  if (!backward_rows_side_by_side(l, &shape)) return norms_backward_row_on_chip(l);
  const bool staged = l.params.dy_layout.row_len > kColumnStagedMinLen &&
                      rows_side_by_side_staged(l.params.dy_layout, l.params.dy, l.dtype) &&
                      rows_side_by_side_staged(l.params.saved_layout, l.params.saved, l.dtype);
  return visit_float_dtype(l.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (row_kind(l.op) == RowKind::kSoftmax) return launch_softmax_columns<T>(l, shape, staged);
    return run_column_block<T, kBackwardHeld<T>>(l.params.dy_layout.row_len, [&](auto block) -> Status {
      using B = decltype(block);
      if constexpr (B::kHeld > 0) {
        return launch_norm_columns<T, B>(l, shape, staged);
      } else {
        return norms_backward_row_on_chip(l);  // not reached: backward_rows_side_by_side bounds the rows
      }
    });
  });
}

}  // namespace norms
}  // namespace gpuprims
