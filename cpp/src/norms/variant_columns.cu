// columns: rows that lie side by side (column_rows.cuh), staged through shared memory where the
// layout allows (column_staged.cuh); row_on_chip for every other layout.
#include "gpuprims/norms/column_staged.cuh"
#include "column_launch.cuh"
#include "launch.hpp"
#include "layout.hpp"

namespace gpuprims {
namespace norms {

namespace {

// Elements a thread holds (float64 8: 16 held spilled 600 bytes at 128 registers).
template <class T>
constexpr int kColumnHeld = sizeof(T) == 8 ? 8 : 16;

template <class T, RowKind kKind>
Status launch_columns(const NormLaunch& l, const ColumnShape& shape) {
  const bool staged = l.params.layout.row_len > kColumnStagedMinLen &&
                      rows_side_by_side_staged(l.params.layout, l.params.x, l.dtype);
  return run_column_block<T, kColumnHeld<T>>(l.params.layout.row_len, [&](auto block) {
    using B = decltype(block);
    // Rows that the registers would hold: staged where aligned and two stages fit (no staged kernel
    // for shapes whose rows are all within kColumnStagedMinLen: never launched).
    if constexpr (B::kHeld > 0 && B::kSlices * B::kHeld > kColumnStagedMinLen) {
      bool launched = false;
      if (staged) {
        const void* kernel = reinterpret_cast<const void*>(&column_staged_kernel<T, kKind, B::kSlices, B::kGroups>);
        GPUPRIMS_TRY(launch_column_staged<B>(kernel, l.params, shape,
                                             column_staged_bytes<T, B::kGroups, 1>(l.params.layout.row_len),
                                             norm_op_name(l.op), l.device, l.sm_count, l.stream, &launched));
      }
      if (launched) return Status::ok();
    }
    const void* kernel = reinterpret_cast<const void*>(&column_rows_kernel<T, kKind, B::kSlices, B::kGroups, B::kHeld>);
    return launch_column_kernel<B>(kernel, l.params, shape, norm_op_name(l.op),
                                   l.stream);
  });
}

}  // namespace

Status norms_columns(const NormLaunch& l) {
  ColumnShape shape;
  if (!rows_side_by_side(l.params.layout, &shape)) return norms_row_on_chip(l);
  return visit_float_dtype(l.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (row_kind(l.op) == RowKind::kSoftmax) return launch_columns<T, RowKind::kSoftmax>(l, shape);
    return launch_columns<T, RowKind::kNorm>(l, shape);
  });
}

}  // namespace norms
}  // namespace gpuprims
